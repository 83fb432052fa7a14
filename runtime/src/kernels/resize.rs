//! `graph.resize` (ONNX Resize: nearest, multi-linear and multi-cubic, with
//! antialiasing, excluded outside taps and every coordinate transformation):
//! the taps of every output coordinate along every axis come from the op's
//! own [`resize_run`] (the reference uses them too), resolved for each run's
//! input shape. Output rows (the innermost axis) run in parallel: a row's
//! outer-axis taps are combined once, then each output element sums them
//! over its innermost taps (nearest: copies one element's bytes, any dtype;
//! linear and cubic: sums in f64). A coordinate outside a
//! `tf_crop_and_resize` crop gives `extrapolation_value`.
//!
//! An f32 resize of the last two axes alone ([`Planar`]: images and feature
//! maps, upsampling in segmentation heads and FPNs) runs separably in f32
//! instead, with its taps kept per input shape: the general walk cost
//! 50-67 µs for 32 channels to 16x16 in SegFormer's head, this 6-10 µs.

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f64, store_f64};
use crate::shared::Shared;
use ge_dialects::graph::index::{
    resize_modes, resize_run, Resize as ResizeOp, ResizeRun, ResizeTaps,
};
use ge_ir::attributes::AttrDict;
use ge_ir::body::{Body, OpId};
use ge_ir::DType;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug)]
pub struct Resize {
    /// The op's attributes (checked when the kernel is made).
    attrs: AttrDict,
    /// Nearest (copies elements, any dtype).
    nearest: bool,
    /// The last input shape's [`Planar`] plan (`None`: not planar), shared
    /// by the kernel's clones: a model's shapes rarely change between runs,
    /// and working out the taps allocates per coordinate.
    planar: Arc<Mutex<Option<PlanFor>>>,
}

/// An input shape and its [`Planar`] plan (`None`: not planar).
type PlanFor = (Vec<usize>, Option<Arc<Planar>>);

/// Output rows per parallel task.
const ROWS: usize = 64;

impl Resize {
    pub fn from_op(b: &Body, o: OpId) -> Option<Resize> {
        let d = b.op(o);
        let m = resize_modes(ResizeOp::attrs(d)).ok()?;
        Some(Resize {
            attrs: d.attrs,
            nearest: m.mode == "nearest",
            planar: Arc::default(),
        })
    }
}

impl Resize {
    /// The [`Planar`] plan of input `x` (from the cache when its shape is
    /// the last one's).
    fn planar_plan(&self, x: &Slot) -> Result<Option<Arc<Planar>>, String> {
        let mut cache = self
            .planar
            .lock()
            .map_err(|_| "resize: a run panicked".to_string())?;
        if let Some((shape, plan)) = &*cache {
            if *shape == x.shape {
                return Ok(plan.clone());
            }
        }
        let plan = match x.shape.is_empty() || x.dtype != DType::F32 {
            true => None,
            false => {
                let run = resize_run(ResizeOp::attrs(&self.attrs), &x.shape)?;
                Planar::of(&run, x).map(Arc::new)
            }
        };
        *cache = Some((x.shape.clone(), plan.clone()));
        Ok(plan)
    }
}

impl Kernel for Resize {
    fn float_only(&self) -> bool {
        !self.nearest
    }

    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x], &[y]) = (ins, outs) else {
            return Err("resize takes 1 operand and gives 1 result".into());
        };
        if x.dtype != y.dtype {
            return Err(format!("resize of {:?} cannot give {:?}", x.dtype, y.dtype));
        }
        if let Some(plan) = self.planar_plan(x)? {
            return plan.run(x, y, par);
        }
        let run = resize_run(ResizeOp::attrs(&self.attrs), &x.shape)?;
        if x.shape.is_empty() || run.out_shape != y.shape {
            return Err(format!("resize of {:?} cannot give {:?}", x.shape, y.shape));
        }
        let taps = &run.taps;
        let ev = run.modes.extrapolation;
        let r = x.shape.len();
        let st = ge_ir::tensor::strides(&x.shape);
        let (outer_shape, row) = (&y.shape[..r - 1], y.shape[r - 1]);
        let rows: usize = outer_shape.iter().product();
        let es = x.dtype.byte_size();
        // Linear and cubic sum in f64; so does a nearest resize that writes
        // the extrapolation value somewhere.
        let has_outside = taps.iter().flatten().any(|t| *t == ResizeTaps::Outside);
        let sums = !self.nearest || has_outside;
        let xs = if sums {
            let mut v = vec![0f64; x.numel()];
            load_f64(x.dtype, x.ptr, 0, &mut v);
            v
        } else {
            vec![]
        };
        let mut ys = vec![0f64; if sums { y.numel() } else { 0 }];
        let (yp, xp, op) = (
            Shared(ys.as_mut_ptr()),
            Shared(x.ptr as *const u8),
            Shared(y.ptr),
        );
        let last = &taps[r - 1];
        par.run(rows.div_ceil(ROWS), y.numel() > 1 << 14, &|task| {
            let mut pos = vec![0usize; r - 1];
            let first = task * ROWS;
            // The outer position of row `first`.
            let mut rem = first;
            for a in (0..r - 1).rev() {
                pos[a] = rem % outer_shape[a];
                rem /= outer_shape[a];
            }
            let mut combos: Vec<(usize, f64)> = vec![];
            for row_i in first..(first + ROWS).min(rows) {
                combos.clear();
                combos.push((0, 1.0));
                // A row outside the crop on an outer axis is all extrapolation.
                let mut outside = false;
                for a in 0..r - 1 {
                    let ResizeTaps::Taps(t) = &taps[a][pos[a]] else {
                        outside = true;
                        break;
                    };
                    let mut next = Vec::with_capacity(combos.len() * t.len());
                    for &(o, w) in &combos {
                        for &(i, wt) in t {
                            next.push((o + i * st[a], w * wt));
                        }
                    }
                    combos = next;
                }
                for (xo, t) in last.iter().enumerate() {
                    let dst = row_i * row + xo;
                    let t = match (outside, t) {
                        (false, ResizeTaps::Taps(t)) => t,
                        _ => {
                            if sums {
                                // SAFETY: dst < rows*row = the numel of `ys`;
                                // task `task` writes only its own rows.
                                unsafe { *yp.p().add(dst) = ev };
                            }
                            continue;
                        }
                    };
                    if sums {
                        let mut acc = 0.0;
                        for &(o, w) in &combos {
                            for &(i, wt) in t {
                                acc += w * wt * xs[o + i];
                            }
                        }
                        // SAFETY: dst < rows*row = the numel of `ys`; task
                        // `task` writes only its own rows.
                        unsafe { *yp.p().add(dst) = acc };
                    } else if let (Some(&(o, _)), Some(&(i, _))) = (combos.first(), t.first()) {
                        // SAFETY: source element o+i < the input's numel
                        // (taps are clamped into the input), dst < the
                        // output's numel (its shape was checked); rows are
                        // disjoint between tasks.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                xp.p().add((o + i) * es),
                                op.p().add(dst * es),
                                es,
                            )
                        };
                    }
                }
                for a in (0..r - 1).rev() {
                    pos[a] += 1;
                    if pos[a] < outer_shape[a] {
                        break;
                    }
                    pos[a] = 0;
                }
            }
            Ok(())
        })?;
        if sums {
            store_f64(y.dtype, y.ptr, 0, &ys);
        }
        Ok(())
    }
}

/// The taps of one axis, flattened: output coordinate `o`'s are
/// `(index[t], weight[t])` for `t` in `start[o]..start[o + 1]`.
#[derive(Debug)]
struct AxisTaps {
    start: Vec<usize>,
    index: Vec<usize>,
    weight: Vec<f32>,
    /// The number of taps when every coordinate has as many.
    uniform: Option<usize>,
}

impl AxisTaps {
    /// Whether every coordinate is a single tap of weight 1 (nearest modes).
    fn nearest(&self) -> bool {
        self.uniform == Some(1) && self.weight.iter().all(|&w| w == 1.0)
    }

    /// `None` when a coordinate lies outside a crop.
    fn of(taps: &[ResizeTaps]) -> Option<AxisTaps> {
        let mut a = AxisTaps {
            start: vec![0],
            index: vec![],
            weight: vec![],
            uniform: None,
        };
        for t in taps {
            let ResizeTaps::Taps(t) = t else { return None };
            for &(i, w) in t {
                a.index.push(i);
                a.weight.push(w as f32);
            }
            a.start.push(a.index.len());
        }
        let counts = a.start.windows(2).map(|w| w[1] - w[0]);
        a.uniform = counts
            .clone()
            .next()
            .filter(|&n| counts.clone().all(|m| m == n));
        Some(a)
    }

    fn at(&self, o: usize) -> (&[usize], &[f32]) {
        let r = self.start[o]..self.start[o + 1];
        (&self.index[r.clone()], &self.weight[r])
    }
}

/// An f32 resize of the last two axes alone (every outer axis keeps its
/// size with one tap of weight 1 per coordinate; no crop): images and
/// feature maps, the case that matters for speed. Separable, in f32 as
/// onnxruntime computes it: each output row first combines its input rows
/// (vectorised along the row), then each output element its columns of
/// that combination. A single tap of weight 1 copies, so nearest modes
/// give the input's bits.
#[derive(Debug)]
struct Planar {
    rows: AxisTaps,
    cols: AxisTaps,
    /// Input rows and columns of a plane.
    ih: usize,
    iw: usize,
    out_shape: Vec<usize>,
    /// Every output row is one input row (a single tap of weight 1:
    /// nearest modes), and every output column one input column.
    nearest_rows: bool,
    nearest_cols: bool,
}

/// Output rows per parallel task of [`Planar::run`].
const PLANAR_ROWS: usize = 16;

/// Output elements a task of [`Planar::run`] takes at least, in whole
/// planes, when a plane has at most [`PLANAR_ROWS`] rows.
const PLANAR_TASK: usize = 1024;

impl Planar {
    fn of(run: &ResizeRun, x: &Slot) -> Option<Planar> {
        let (taps, r) = (&run.taps, x.shape.len());
        if x.dtype != DType::F32 || r < 2 {
            return None;
        }
        let identity = taps[..r - 2].iter().enumerate().all(|(a, t)| {
            t.len() == x.shape[a]
                && t.iter().enumerate().all(|(o, t)| match t {
                    ResizeTaps::Taps(t) => t.as_slice() == [(o, 1.0)],
                    ResizeTaps::Outside => false,
                })
        });
        if !identity {
            return None;
        }
        let (rows, cols) = (AxisTaps::of(&taps[r - 2])?, AxisTaps::of(&taps[r - 1])?);
        Some(Planar {
            nearest_rows: rows.nearest(),
            nearest_cols: cols.nearest(),
            rows,
            cols,
            ih: x.shape[r - 2],
            iw: x.shape[r - 1],
            out_shape: run.out_shape.clone(),
        })
    }

    fn run(&self, x: &Slot, y: &Slot, par: &Par) -> Result<(), String> {
        if y.shape != self.out_shape {
            return Err(format!("resize of {:?} cannot give {:?}", x.shape, y.shape));
        }
        let (oh, ow) = (self.rows.start.len() - 1, self.cols.start.len() - 1);
        let planes = x.numel() / (self.ih * self.iw);
        let blocks = oh.div_ceil(PLANAR_ROWS);
        let (xp, yp) = (Shared(x.ptr as *const f32), Shared(y.ptr as *mut f32));
        // Small planes go several to a task (a task's own cost outweighed
        // a 4x4 plane's 16 copies: GhostNetV2's upsamples of 2x2 maps).
        let group = match blocks {
            1 => (PLANAR_TASK / (oh * ow).max(1)).clamp(1, planes.max(1)),
            _ => 1,
        };
        par.run(
            planes.div_ceil(group) * blocks,
            y.numel() > 1 << 14,
            &|task| {
                let (first, block) = (task / blocks * group, task % blocks);
                // Nearest rows need no combination (and no buffer for one).
                let mut mixed = match self.nearest_rows {
                    true => vec![],
                    false => vec![0f32; self.iw],
                };
                for plane in first..(first + group).min(planes) {
                    // SAFETY: the input holds `planes` planes of `ih x iw` floats
                    // and the output `planes` of `oh x ow` (its shape was checked
                    // against the taps'); every tap index lies in its axis (taps
                    // are clamped into the input); tasks write disjoint rows.
                    let (src, dst) = unsafe {
                        (
                            std::slice::from_raw_parts(
                                xp.p().add(plane * self.ih * self.iw),
                                self.ih * self.iw,
                            ),
                            std::slice::from_raw_parts_mut(yp.p().add(plane * oh * ow), oh * ow),
                        )
                    };
                    let rows = block * PLANAR_ROWS..((block + 1) * PLANAR_ROWS).min(oh);
                    for yo in rows.clone() {
                        // An output row made of the same input row as the one
                        // before (a nearest upsample's repeats) is that row again.
                        let repeat = self.nearest_rows
                            && yo > rows.start
                            && self.rows.index[yo] == self.rows.index[yo - 1];
                        if repeat {
                            dst.copy_within((yo - 1) * ow..yo * ow, yo * ow);
                            continue;
                        }
                        let row = match self.nearest_rows {
                            true => {
                                let i = self.rows.index[yo];
                                &src[i * self.iw..(i + 1) * self.iw]
                            }
                            false => self.mix_rows(src, yo, &mut mixed),
                        };
                        self.mix_columns(row, &mut dst[yo * ow..(yo + 1) * ow]);
                    }
                }
                Ok(())
            },
        )
    }

    /// Output row `out` from its input rows combined (`row`): the same
    /// sums as [`combine`], unrolled when every column has 1, 2 or 4 taps
    /// (nearest, linear, cubic without antialiasing).
    fn mix_columns(&self, row: &[f32], out: &mut [f32]) {
        let (idx, w) = (&self.cols.index, &self.cols.weight);
        match self.cols.uniform {
            Some(1) if self.nearest_cols => {
                out.iter_mut().zip(idx).for_each(|(o, &i)| *o = row[i]);
            }
            Some(2) => {
                for ((o, i), w) in out
                    .iter_mut()
                    .zip(idx.chunks_exact(2))
                    .zip(w.chunks_exact(2))
                {
                    *o = 0.0 + w[0] * row[i[0]] + w[1] * row[i[1]];
                }
            }
            Some(4) => {
                for ((o, i), w) in out
                    .iter_mut()
                    .zip(idx.chunks_exact(4))
                    .zip(w.chunks_exact(4))
                {
                    *o = 0.0
                        + w[0] * row[i[0]]
                        + w[1] * row[i[1]]
                        + w[2] * row[i[2]]
                        + w[3] * row[i[3]];
                }
            }
            _ => {
                for (xo, o) in out.iter_mut().enumerate() {
                    let (idx, w) = self.cols.at(xo);
                    *o = combine(idx, w, |i| row[i]);
                }
            }
        }
    }

    /// Input rows of output row `yo` combined: the input row itself for a
    /// single tap of weight 1, else `mixed`.
    fn mix_rows<'s>(&self, src: &'s [f32], yo: usize, mixed: &'s mut [f32]) -> &'s [f32] {
        let iw = self.iw;
        let (idx, w) = self.rows.at(yo);
        if let ([i], [1.0]) = (idx, w) {
            return &src[i * iw..(i + 1) * iw];
        }
        for (t, (&i, &w)) in idx.iter().zip(w).enumerate() {
            let input = &src[i * iw..(i + 1) * iw];
            if t == 0 {
                mixed.iter_mut().zip(input).for_each(|(m, &v)| *m = w * v);
            } else {
                mixed.iter_mut().zip(input).for_each(|(m, &v)| *m += w * v);
            }
        }
        mixed
    }
}

/// `sum w[t] * at(idx[t])`, a single tap of weight 1 as the value itself.
#[inline]
fn combine(idx: &[usize], w: &[f32], at: impl Fn(usize) -> f32) -> f32 {
    match (idx, w) {
        ([i], [1.0]) => at(*i),
        _ => idx.iter().zip(w).fold(0.0, |acc, (&i, &w)| acc + w * at(i)),
    }
}
