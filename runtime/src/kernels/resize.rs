//! `graph.resize` (ONNX Resize, nearest and multi-linear): the taps of
//! every output coordinate along every axis come from the op's own
//! [`resize_axis_taps`] (the reference uses them too). Output rows (the
//! innermost axis) run in parallel: a row's outer-axis taps are combined
//! once, then each output element sums them over its innermost taps
//! (nearest: copies one element's bytes, any dtype; linear: sums in f64).

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f64, store_f64};
use crate::shared::Shared;
use ge_dialects::graph::index::{resize_axis_taps, resize_modes, Resize as ResizeOp};
use ge_ir::body::{Body, OpId};

#[derive(Clone, Debug)]
pub struct Resize {
    /// (mode, coordinate transformation, nearest rounding)
    pub modes: (&'static str, &'static str, &'static str),
    pub scales: Option<Vec<f64>>,
    pub sizes: Option<Vec<i64>>,
}

/// Output rows per parallel task.
const ROWS: usize = 64;

impl Resize {
    pub fn from_op(b: &Body, o: OpId) -> Option<Resize> {
        let a = ResizeOp::attrs(b.op(o));
        Some(Resize {
            modes: resize_modes(a).ok()?,
            scales: a.scales(),
            sizes: a.sizes(),
        })
    }

    /// Whether `out` is the output shape of the op for an input of `inp`.
    fn fits(&self, inp: &[usize], out: &[usize]) -> bool {
        let want: Option<Vec<usize>> = match (&self.scales, &self.sizes) {
            (Some(s), None) if s.len() == inp.len() => Some(
                inp.iter()
                    .zip(s)
                    .map(|(&n, &sc)| (n as f64 * sc).floor() as usize)
                    .collect(),
            ),
            (None, Some(z)) if z.len() == inp.len() => {
                z.iter().map(|&n| usize::try_from(n).ok()).collect()
            }
            _ => None,
        };
        want.as_deref() == Some(out) && out.iter().all(|&d| d >= 1) && inp.iter().all(|&d| d >= 1)
    }
}

impl Kernel for Resize {
    fn float_only(&self) -> bool {
        self.modes.0 == "linear"
    }

    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x], &[y]) = (ins, outs) else {
            return Err("resize takes 1 operand and gives 1 result".into());
        };
        if x.shape.is_empty() || !self.fits(&x.shape, &y.shape) || x.dtype != y.dtype {
            return Err(format!("resize of {:?} cannot give {:?}", x.shape, y.shape));
        }
        let taps = resize_axis_taps(&x.shape, &y.shape, self.scales.as_deref(), self.modes);
        let linear = self.modes.0 == "linear";
        // Zero-weight taps add nothing (the reference skips them too).
        let taps: Vec<Vec<Vec<(usize, f64)>>> = taps
            .into_iter()
            .map(|axis| {
                axis.into_iter()
                    .map(|t| {
                        t.into_iter()
                            .filter(|&(_, w)| w != 0.0 || !linear)
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let r = x.shape.len();
        let st = ge_ir::tensor::strides(&x.shape);
        let (outer_shape, row) = (&y.shape[..r - 1], y.shape[r - 1]);
        let rows: usize = outer_shape.iter().product();
        let es = x.dtype.byte_size();
        let xs = if linear {
            let mut v = vec![0f64; x.numel()];
            load_f64(x.dtype, x.ptr, 0, &mut v);
            v
        } else {
            vec![]
        };
        let mut ys = vec![0f64; if linear { y.numel() } else { 0 }];
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
                for a in 0..r - 1 {
                    let mut next = Vec::with_capacity(combos.len() * 2);
                    for &(o, w) in &combos {
                        for &(i, wt) in &taps[a][pos[a]] {
                            next.push((o + i * st[a], w * wt));
                        }
                    }
                    combos = next;
                }
                for (xo, t) in last.iter().enumerate() {
                    let dst = row_i * row + xo;
                    if linear {
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
        if linear {
            store_f64(y.dtype, y.ptr, 0, &ys);
        }
        Ok(())
    }
}
