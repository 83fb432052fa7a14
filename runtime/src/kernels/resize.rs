//! `graph.resize` (ONNX Resize: nearest, multi-linear and multi-cubic, with
//! antialiasing, excluded outside taps and every coordinate transformation):
//! the taps of every output coordinate along every axis come from the op's
//! own [`resize_run`] (the reference uses them too), resolved for each run's
//! input shape. Output rows (the innermost axis) run in parallel: a row's
//! outer-axis taps are combined once, then each output element sums them
//! over its innermost taps (nearest: copies one element's bytes, any dtype;
//! linear and cubic: sums in f64). A coordinate outside a
//! `tf_crop_and_resize` crop gives `extrapolation_value`.

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f64, store_f64};
use crate::shared::Shared;
use ge_dialects::graph::index::{resize_modes, resize_run, Resize as ResizeOp, ResizeTaps};
use ge_ir::attributes::AttrDict;
use ge_ir::body::{Body, OpId};

#[derive(Clone, Debug)]
pub struct Resize {
    /// The op's attributes (checked when the kernel is made).
    attrs: AttrDict,
    /// Nearest (copies elements, any dtype).
    nearest: bool,
}

/// Output rows per parallel task.
const ROWS: usize = 64;

impl Resize {
    pub fn from_op(b: &Body, o: OpId) -> Option<Resize> {
        let d = b.op(o);
        let m = resize_modes(ResizeOp::attrs(d)).ok()?;
        Some(Resize {
            attrs: d.attrs,
            nearest: m.mode == "nearest",
        })
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
        let run = resize_run(ResizeOp::attrs(&self.attrs), &x.shape)?;
        if x.shape.is_empty() || run.out_shape != y.shape || x.dtype != y.dtype {
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
