//! `graph.pad`: pad (or crop, with negative amounts) every dim, in the four
//! ONNX modes, on any dtype (elements are moved as bytes).
//!
//! The output is walked row by row (a row: the last dim). Each row's source
//! row comes from the outer coordinates (or the row is all fill); within a
//! row the part that maps onto the input is one `memcpy`, and only the
//! padded edges are computed element by element.

use super::{Kernel, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::index::Pad as PadOp;
use ge_ir::body::{Body, OpId};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    Constant,
    Reflect,
    Edge,
    Wrap,
}

#[derive(Clone, Debug)]
pub struct Pad {
    /// Begin amounts of every dim, then end amounts.
    pads: Vec<i64>,
    mode: Mode,
    /// The fill value of constant mode in the result's dtype (little-endian bytes).
    fill: Vec<u8>,
}

impl Pad {
    pub fn from_op(b: &Body, o: OpId) -> Option<Pad> {
        let a = PadOp::attrs(b.op(o));
        let mode = match a.mode() {
            "constant" => Mode::Constant,
            "reflect" => Mode::Reflect,
            "edge" => Mode::Edge,
            "wrap" => Mode::Wrap,
            _ => return None,
        };
        let dt = b.value_type(*b.op(o).results().first()?).dtype()?;
        let fill =
            ge_dialects::data::tensor_to_bytes(&ge_ir::tensor::Tensor::scalar(dt, a.value()));
        let rank = b
            .value_type(*b.op(o).operands().first()?)
            .as_tensor()?
            .dims
            .as_ref()?
            .len();
        Some(Pad {
            pads: ge_dialects::graph::index::full_pads(a, rank).ok()?,
            mode,
            fill,
        })
    }

    /// Constant mode with zeros (every dtype's zero is all-zero bytes):
    /// graph.center_crop_pad's kernel, which computes `pads` per run.
    pub fn zeros(pads: Vec<i64>, dtype: ge_ir::DType) -> Pad {
        Pad {
            pads,
            mode: Mode::Constant,
            fill: vec![0; dtype.byte_size()],
        }
    }

    /// The input coordinate that output coordinate `o` of a dim of `n`
    /// elements (padded by `begin` in front) reads; `None`: the fill value.
    /// `n > 0` unless the mode is constant (checked by `run`).
    #[inline]
    fn src(&self, o: usize, n: usize, begin: i64) -> Option<usize> {
        let i = o as i64 - begin;
        let n = n as i64;
        if (0..n).contains(&i) {
            return Some(i as usize);
        }
        Some(match self.mode {
            Mode::Constant => return None,
            Mode::Edge => i.clamp(0, n - 1) as usize,
            Mode::Wrap => i.rem_euclid(n) as usize,
            Mode::Reflect if n == 1 => 0,
            Mode::Reflect => {
                let period = 2 * (n - 1);
                let k = i.rem_euclid(period);
                (if k >= n { period - k } else { k }) as usize
            }
        })
    }
}

impl Kernel for Pad {
    /// Copies element bytes: f64 as well.
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x], &[y]) = (ins, outs) else {
            return Err("pad takes 1 operand and gives 1 result".into());
        };
        let r = x.shape.len();
        let es = x.dtype.byte_size();
        if self.pads.len() != 2 * r || y.shape.len() != r || y.dtype != x.dtype {
            return Err(format!(
                "pad of {:?} into {:?}: {} pads",
                x.shape,
                y.shape,
                self.pads.len()
            ));
        }
        for a in 0..r {
            let want = x.shape[a] as i64 + self.pads[a] + self.pads[a + r];
            if want != y.shape[a] as i64 {
                return Err(format!(
                    "pad of {:?} by {:?} gives dim {a} of {want}, not {}",
                    x.shape, self.pads, y.shape[a]
                ));
            }
            if x.shape[a] == 0 && y.shape[a] > 0 && self.mode != Mode::Constant {
                return Err(format!(
                    "pad mode {:?} cannot pad the empty dim {a}",
                    self.mode
                ));
            }
        }
        if y.numel() == 0 {
            return Ok(());
        }
        if r == 0 {
            // SAFETY: one element in each slot.
            unsafe { std::ptr::copy_nonoverlapping(x.ptr, y.ptr, es) };
            return Ok(());
        }
        if self.fill.len() != es {
            return Err("pad fill value of another dtype".into());
        }
        let xst = ge_ir::tensor::strides(&x.shape);
        let (w, n, begin) = (y.shape[r - 1], x.shape[r - 1], self.pads[r - 1]);
        let rows = y.numel() / w;
        // The part of a row that reads the input: output [lo, hi) from input lo - begin.
        let lo = begin.clamp(0, w as i64) as usize;
        let hi = (begin + n as i64).clamp(lo as i64, w as i64) as usize;
        let (xp, yp) = (Shared(x.ptr as *const u8), Shared(y.ptr));
        let (xs, ys) = (&x.shape[..], &y.shape[..]);
        let tasks = rows.min(par.threads() * 4).max(1);
        let per = rows.div_ceil(tasks);
        par.run(tasks, rows * w * es > 1 << 16, &|t| {
            let mut pos = vec![0usize; r - 1];
            for row in t * per..((t + 1) * per).min(rows) {
                // Outer coordinates of this row, and the source row's offset.
                let mut rest = row;
                for a in (0..r - 1).rev() {
                    pos[a] = rest % ys[a];
                    rest /= ys[a];
                }
                let mut base = Some(0usize);
                for a in 0..r - 1 {
                    base = match (base, self.src(pos[a], xs[a], self.pads[a])) {
                        (Some(b), Some(i)) => Some(b + i * xst[a]),
                        _ => None,
                    };
                }
                // SAFETY: row `row` of the output (w elements) lies inside the
                // output; a source row `base` (from in-range coordinates) lies
                // inside the input; rows of different tasks are disjoint.
                unsafe {
                    let dst = yp.p().add(row * w * es);
                    let Some(base) = base else {
                        self.fill_elems(dst, w, es);
                        continue;
                    };
                    let src = xp.p().add(base * es);
                    if hi > lo {
                        std::ptr::copy_nonoverlapping(
                            src.add((lo as i64 - begin) as usize * es),
                            dst.add(lo * es),
                            (hi - lo) * es,
                        );
                    }
                    for o in (0..lo).chain(hi..w) {
                        match self.src(o, n, begin) {
                            Some(i) => {
                                std::ptr::copy_nonoverlapping(src.add(i * es), dst.add(o * es), es)
                            }
                            None => self.fill_elems(dst.add(o * es), 1, es),
                        }
                    }
                }
            }
            Ok(())
        })
    }
}

impl Pad {
    /// Write the fill value into `count` elements at `dst`.
    ///
    /// # Safety
    /// `dst` is valid for `count * es` bytes and `self.fill` has `es` bytes.
    unsafe fn fill_elems(&self, dst: *mut u8, count: usize, es: usize) {
        if self.fill.iter().all(|&b| b == 0) {
            std::ptr::write_bytes(dst, 0, count * es);
        } else {
            for k in 0..count {
                std::ptr::copy_nonoverlapping(self.fill.as_ptr(), dst.add(k * es), es);
            }
        }
    }
}
