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
//! Its linear columns (one or two taps each) go as [`Pairs`]: a loop the
//! compiler vectorises with gathers, or with AVX-512F, where each 16 output
//! columns read within 16 inputs, 16 at a time from one load and two
//! permutes ([`Windows`]): DPT's 2x upsample of 16 channels to 64x64 (one
//! layer, `ge-run` p50, 7 interleaved rounds) 123 -> 27 µs with
//! align_corners (whose two columns of one tap had sent every column the
//! general way), 66 -> 27 with half_pixel, 110 -> 23 with asymmetric.

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
    /// The columns as two taps each, where every column has one or two
    /// (linear modes): the loop over a row's columns that vectorises.
    pairs: Option<Pairs>,
    /// A nearest resize of planes of at most [`TINY_PLANE`] outputs: each
    /// output's input in the plane. Such a plane is a few loads, and the
    /// row loop's calls cost more than they (a squeeze-excite gate's 960
    /// 1x1 planes to 2x2 in GhostNetV2 took 33 µs, 34 ns a plane).
    tiny: Option<Vec<u32>>,
}

/// Most outputs of a plane that a nearest resize gathers through
/// [`Planar::tiny`] (in at most [`PLANAR_ROWS`] rows).
const TINY_PLANE: usize = 64;

/// The columns of a linear resize as two taps each (indices `u32`, so a
/// vector gather takes 16 at a time): a column of one tap (an integer
/// source coordinate, whose other tap had weight 0 and was dropped) gets
/// its index twice with weight 0 for the second, and its own sum,
/// [`combine`]'s (`0 * inf` would be NaN): written again after the row
/// by the loop, blended in by the windows.
/// The two-tap columns sum as [`Planar::mix_columns`]' general two-tap
/// case does, so the result has the same bits.
#[derive(Debug)]
struct Pairs {
    i0: Vec<u32>,
    i1: Vec<u32>,
    w0: Vec<f32>,
    w1: Vec<f32>,
    /// The columns of one tap.
    single: Vec<usize>,
    /// With AVX-512F, where every 16 consecutive columns read within 16
    /// consecutive inputs (upsampling, mild downsampling): each 16 columns
    /// from one load of those inputs and two permutes, no gathers.
    windows: Option<Windows>,
}

/// [`Pairs`]' columns 16 at a time: chunk `c` reads the inputs from
/// `base[c]`, its columns' taps at `r0` / `r1` from there (`i32` lanes,
/// padded to whole chunks); `single[c]` marks its columns of one tap.
#[derive(Debug)]
struct Windows {
    base: Vec<usize>,
    r0: Vec<i32>,
    r1: Vec<i32>,
    single: Vec<u16>,
}

impl Windows {
    fn of(i0: &[u32], i1: &[u32], single: &[usize]) -> Option<Windows> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            let chunks = i0.len().div_ceil(16);
            let mut w = Windows {
                base: Vec::with_capacity(chunks),
                r0: vec![0; chunks * 16],
                r1: vec![0; chunks * 16],
                single: vec![0; chunks],
            };
            for &o in single {
                w.single[o / 16] |= 1 << (o % 16);
            }
            for (c, (a, b)) in i0.chunks(16).zip(i1.chunks(16)).enumerate() {
                let lo = a.iter().chain(b).min().copied().unwrap_or(0);
                let hi = a.iter().chain(b).max().copied().unwrap_or(0);
                if hi - lo >= 16 {
                    return None;
                }
                w.base.push(lo as usize);
                for (k, (&a, &b)) in a.iter().zip(b).enumerate() {
                    w.r0[c * 16 + k] = (a - lo) as i32;
                    w.r1[c * 16 + k] = (b - lo) as i32;
                }
            }
            return Some(w);
        }
        let _ = (i0, i1, single);
        None
    }
}

impl Pairs {
    fn of(cols: &AxisTaps, iw: usize) -> Option<Pairs> {
        if u32::try_from(iw).is_err() {
            return None;
        }
        let n = cols.start.len() - 1;
        let mut p = Pairs {
            i0: Vec::with_capacity(n),
            i1: Vec::with_capacity(n),
            w0: Vec::with_capacity(n),
            w1: Vec::with_capacity(n),
            single: vec![],
            windows: None,
        };
        for o in 0..n {
            let (idx, w) = cols.at(o);
            let (i0, i1, w0, w1) = match (idx, w) {
                (&[i0, i1], &[w0, w1]) => (i0, i1, w0, w1),
                (&[i], &[w]) => {
                    p.single.push(o);
                    (i, i, w, 0.0)
                }
                _ => return None,
            };
            // Taps are clamped into the row; checked again as the gather
            // reads them unchecked.
            if i0.max(i1) >= iw {
                return None;
            }
            p.i0.push(i0 as u32);
            p.i1.push(i1 as u32);
            p.w0.push(w0);
            p.w1.push(w1);
        }
        p.windows = Windows::of(&p.i0, &p.i1, &p.single);
        Some(p)
    }

    /// Output row `out` of input row `row` (combined over its input rows).
    #[inline(always)]
    fn mix(&self, row: &[f32], out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if let Some(w) = &self.windows {
            // SAFETY: windows exist only where the CPU has AVX-512F
            // (`Windows::of`).
            return unsafe { self.mix_windows(w, row, out) };
        }
        let n = out.len().min(self.i0.len());
        let (i0, i1, w0, w1) = (&self.i0[..n], &self.i1[..n], &self.w0[..n], &self.w1[..n]);
        for o in 0..n {
            // SAFETY: every index is below the input row's width, checked
            // in `Pairs::of`, and `row` is an input row (`iw` floats).
            let (a, b) = unsafe {
                (
                    *row.get_unchecked(i0[o] as usize),
                    *row.get_unchecked(i1[o] as usize),
                )
            };
            out[o] = 0.0 + w0[o] * a + w1[o] * b;
        }
        self.fix_singles(row, out);
    }

    /// The columns of one tap, by their own sum.
    #[inline(always)]
    fn fix_singles(&self, row: &[f32], out: &mut [f32]) {
        for &o in &self.single {
            out[o] = combine(&[self.i0[o] as usize], &[self.w0[o]], |i| row[i]);
        }
    }

    /// [`Pairs::mix`] 16 columns at a time: the chunk's inputs in one
    /// (masked) load, each tap's values picked by a permute, summed in the
    /// scalar loop's order; a column of one tap takes [`combine`]'s value
    /// (the value itself for weight 1, else `0 + w * value`).
    ///
    /// # Safety
    /// AVX-512F; `w` is this pairs' windows, `row` an input row (every
    /// window base lies in it: a base is a tap's index).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn mix_windows(&self, w: &Windows, row: &[f32], out: &mut [f32]) {
        use std::arch::x86_64::*;
        let n = out.len().min(self.i0.len());
        let lanes = |k: usize| -> __mmask16 {
            match k {
                16.. => !0,
                _ => (1u16 << k) - 1,
            }
        };
        for (c, &base) in w.base.iter().enumerate() {
            let o0 = c * 16;
            if o0 >= n {
                break;
            }
            let m = lanes(n - o0);
            let win = _mm512_maskz_loadu_ps(lanes(row.len() - base), row.as_ptr().add(base));
            let r0 = _mm512_loadu_si512(w.r0.as_ptr().add(o0).cast());
            let r1 = _mm512_loadu_si512(w.r1.as_ptr().add(o0).cast());
            let (a, b) = (
                _mm512_permutexvar_ps(r0, win),
                _mm512_permutexvar_ps(r1, win),
            );
            let w0 = _mm512_maskz_loadu_ps(m, self.w0.as_ptr().add(o0));
            let w1 = _mm512_maskz_loadu_ps(m, self.w1.as_ptr().add(o0));
            let t = _mm512_add_ps(_mm512_setzero_ps(), _mm512_mul_ps(w0, a));
            let pair = _mm512_add_ps(t, _mm512_mul_ps(w1, b));
            let one = _mm512_mask_blend_ps(_mm512_cmpeq_ps_mask(w0, _mm512_set1_ps(1.0)), t, a);
            let t = _mm512_mask_blend_ps(w.single[c], pair, one);
            _mm512_mask_storeu_ps(out.as_mut_ptr().add(o0), m, t);
        }
    }
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
        let iw = x.shape[r - 1];
        let (oh, ow) = (rows.start.len() - 1, cols.start.len() - 1);
        // One task a plane ([`Planar::run`]'s blocks of rows: one).
        let small = oh * ow <= TINY_PLANE && oh <= PLANAR_ROWS;
        // Nearest taps lie inside the plane (`AxisTaps::of`): every index
        // below `ih * iw`, which must fit the map's `u32`.
        let fits = x.shape[r - 2].saturating_mul(iw) <= u32::MAX as usize;
        let tiny = (rows.nearest() && cols.nearest() && small && fits).then(|| {
            let at = |y: usize, x: usize| (rows.index[y] * iw + cols.index[x]) as u32;
            (0..oh)
                .flat_map(|y| (0..ow).map(move |x| at(y, x)))
                .collect()
        });
        Some(Planar {
            tiny,
            nearest_rows: rows.nearest(),
            nearest_cols: cols.nearest(),
            pairs: match cols.nearest() {
                true => None,
                false => Pairs::of(&cols, iw),
            },
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
                if let Some(map) = &self.tiny {
                    for plane in first..(first + group).min(planes) {
                        // SAFETY: plane `plane` of the input (`ih x iw`)
                        // and of the output (`oh x ow`, the map's length);
                        // every index of the map lies in the input plane;
                        // tasks write disjoint planes.
                        unsafe {
                            let (src, dst) = (
                                xp.p().add(plane * self.ih * self.iw),
                                yp.p().add(plane * oh * ow),
                            );
                            for (o, &i) in map.iter().enumerate() {
                                *dst.add(o) = *src.add(i as usize);
                            }
                        }
                    }
                    return Ok(());
                }
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
                    plane_rows_for_cpu(self, src, dst, rows, &mut mixed);
                }
                Ok(())
            },
        )
    }

    /// Output row `out` from its input rows combined (`row`): the same
    /// sums as [`combine`], unrolled when every column has 1, 2 or 4 taps
    /// (nearest, linear, cubic without antialiasing), and as pairs when
    /// every column has 1 or 2 (linear).
    #[inline(always)]
    fn mix_columns(&self, row: &[f32], out: &mut [f32]) {
        let (idx, w) = (&self.cols.index, &self.cols.weight);
        if let Some(p) = &self.pairs {
            return p.mix(row, out);
        }
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
    #[inline(always)]
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

/// [`plane_rows`] compiled for AVX-512 and AVX2 as well, the one this CPU
/// runs: the rows' combinations and the columns' gathers vectorise.
fn plane_rows_for_cpu(
    pl: &Planar,
    src: &[f32],
    dst: &mut [f32],
    rows: std::ops::Range<usize>,
    mixed: &mut [f32],
) {
    by_cpu_features!(plane_rows(
        pl: &Planar,
        src: &[f32],
        dst: &mut [f32],
        rows: std::ops::Range<usize>,
        mixed: &mut [f32],
    ))
}

/// Output rows `rows` of one plane of [`Planar::run`]: `src` its input
/// plane, `dst` its output plane, `mixed` a row of `iw` floats.
#[inline(always)]
fn plane_rows(
    pl: &Planar,
    src: &[f32],
    dst: &mut [f32],
    rows: std::ops::Range<usize>,
    mixed: &mut [f32],
) {
    let ow = pl.cols.start.len() - 1;
    for yo in rows.clone() {
        // An output row made of the same input row as the one before (a
        // nearest upsample's repeats) is that row again.
        let repeat =
            pl.nearest_rows && yo > rows.start && pl.rows.index[yo] == pl.rows.index[yo - 1];
        if repeat {
            dst.copy_within((yo - 1) * ow..yo * ow, yo * ow);
            continue;
        }
        let row = match pl.nearest_rows {
            true => {
                let i = pl.rows.index[yo];
                &src[i * pl.iw..(i + 1) * pl.iw]
            }
            false => pl.mix_rows(src, yo, mixed),
        };
        pl.mix_columns(row, &mut dst[yo * ow..(yo + 1) * ow]);
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

#[cfg(test)]
mod tests {
    use super::{combine, AxisTaps, Pairs};
    use ge_dialects::graph::index::ResizeTaps;

    /// Linear taps of `ow` output columns from `iw` inputs, as the op's
    /// `resize_taps` makes them: two around the source coordinate,
    /// clamped into the row, a tap of weight 0 dropped (an integer source
    /// coordinate has one).
    fn linear_taps(iw: usize, ow: usize, mode: &str) -> Vec<ResizeTaps> {
        let scale = ow as f64 / iw as f64;
        (0..ow)
            .map(|o| {
                let o = o as f64;
                let src = match mode {
                    "align_corners" if ow > 1 => o * (iw - 1) as f64 / (ow - 1) as f64,
                    "asymmetric" => o / scale,
                    _ => (o + 0.5) / scale - 0.5,
                };
                let (left, ratio) = match src.fract() == 0.0 {
                    true => (src as i64 - 1, 1.0),
                    false => (src.floor() as i64, src - src.floor()),
                };
                let clamp = |v: i64| v.clamp(0, iw as i64 - 1) as usize;
                let taps = [(clamp(left), 1.0 - ratio), (clamp(left + 1), ratio)];
                ResizeTaps::Taps(taps.into_iter().filter(|&(_, w)| w != 0.0).collect())
            })
            .collect()
    }

    /// The columns of a linear resize give the same bits by the 16-column
    /// windows (AVX-512F: one load and two permutes a chunk), the
    /// two-tap loop and [`combine`] column by column: up and down,
    /// partial chunks, every coordinate mode's single-tap columns, and a
    /// row with signed zeros, infinities and a NaN (a single tap of
    /// weight 1 must give `inf`, not `0 * inf`).
    #[test]
    fn linear_columns_agree_bit_for_bit() {
        let row: Vec<f32> = (0..64)
            .map(|i| match i % 13 {
                3 => f32::INFINITY,
                5 => -0.0,
                7 if i == 20 => f32::NAN,
                9 => f32::NEG_INFINITY,
                k => (k as f32 - 6.0) * 0.37 + i as f32 * 0.01,
            })
            .collect();
        let mut windows_seen = 0;
        for (iw, ow) in [
            (32, 64),
            (16, 32),
            (9, 40),
            (20, 30),
            (64, 32),
            (40, 17),
            (5, 80),
            (3, 7),
        ] {
            for mode in ["half_pixel", "align_corners", "asymmetric"] {
                let cols = AxisTaps::of(&linear_taps(iw, ow, mode)).expect("taps");
                let pairs = Pairs::of(&cols, iw).expect("one or two taps a column");
                let row = &row[..iw];
                let want: Vec<f32> = (0..ow)
                    .map(|o| {
                        let (idx, w) = cols.at(o);
                        combine(idx, w, |i| row[i])
                    })
                    .collect();
                let mut got = vec![7.0f32; ow];
                pairs.mix(row, &mut got);
                windows_seen += usize::from(pairs.windows.is_some());
                let scalar = Pairs {
                    windows: None,
                    ..Pairs::of(&cols, iw).expect("pairs")
                };
                let mut got_scalar = vec![7.0f32; ow];
                scalar.mix(row, &mut got_scalar);
                for (o, ((a, b), c)) in got.iter().zip(&got_scalar).zip(&want).enumerate() {
                    let same =
                        |x: &f32, y: &f32| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
                    assert!(
                        same(a, c) && same(b, c),
                        "{iw} -> {ow} {mode}, column {o}: windows {a:?}, two-tap loop {b:?}, combine {c:?}"
                    );
                }
            }
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // Upsampling and mild downsampling read within 16 inputs.
            assert!(windows_seen >= 12, "windows taken {windows_seen} times");
        }
    }
}
