//! `graph.argmax` / `graph.argmin` (one declaration, `arg_op!`): the i64
//! index of the largest (smallest) element along an axis, as numpy: the
//! first NaN wins, ties go to the first index (the last with
//! `select_last_index`). Floats are compared as f32 (f16/bf16 convert
//! exactly), integers as i64.
//!
//! Contiguous rows (`inner == 1`) are one scan each; otherwise the running
//! best of `inner` columns is updated row by row, so the input is read in
//! order.

use super::{F32In, Kernel, Par, Slot};
use crate::buffer::{class_of, load_i64, Class};
use crate::shared::Shared;

#[derive(Clone, Debug)]
pub struct ArgReduce {
    pub max: bool,
    pub axis: i64,
    /// On ties pick the last index.
    pub last: bool,
}

impl ArgReduce {
    /// Whether `v` replaces `best` (floats; NaN first, then the order).
    #[inline(always)]
    fn better_f(&self, v: f32, best: f32) -> bool {
        if best.is_nan() {
            false
        } else if v.is_nan() {
            true
        } else if self.max {
            v > best || (self.last && v == best)
        } else {
            v < best || (self.last && v == best)
        }
    }

    #[inline(always)]
    fn better_i(&self, v: i64, best: i64) -> bool {
        if self.max {
            v > best || (self.last && v == best)
        } else {
            v < best || (self.last && v == best)
        }
    }

    /// Arg-reduce `x` viewed as `outer x n x inner` into `out` (`outer x inner`).
    fn scan<T: Copy + Sync>(
        &self,
        x: &[T],
        (outer, n, inner): (usize, usize, usize),
        out: &mut [i64],
        better: impl Fn(T, T) -> bool + Sync,
        par: &Par,
    ) -> Result<(), String> {
        let op = Shared(out.as_mut_ptr());
        par.run(outer, outer * n * inner > 1 << 15, &|o| {
            let src = &x[o * n * inner..(o + 1) * n * inner];
            // SAFETY: row `o` of the output (`inner` elements); rows are disjoint.
            let dst = unsafe { std::slice::from_raw_parts_mut(op.p().add(o * inner), inner) };
            if inner == 1 {
                let mut best = 0;
                for (k, &v) in src.iter().enumerate().skip(1) {
                    if better(v, src[best]) {
                        best = k;
                    }
                }
                dst[0] = best as i64;
                return Ok(());
            }
            // Column bests: the values live in `src` (row dst[i] of column i).
            dst.iter_mut().for_each(|d| *d = 0);
            for k in 1..n {
                let row = &src[k * inner..(k + 1) * inner];
                for (i, (d, &v)) in dst.iter_mut().zip(row).enumerate() {
                    if better(v, src[*d as usize * inner + i]) {
                        *d = k as i64;
                    }
                }
            }
            Ok(())
        })
    }
}

impl Kernel for ArgReduce {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x], &[y]) = (ins, outs) else {
            return Err("argmax/argmin takes 1 operand and gives 1 result".into());
        };
        let ax = super::norm::norm_axis(self.axis, x.shape.len())?;
        let n = x.shape[ax];
        let outer: usize = x.shape[..ax].iter().product();
        let inner: usize = x.shape[ax + 1..].iter().product();
        if y.dtype != ge_ir::DType::I64 || y.numel() != outer * inner {
            return Err(format!(
                "argmax/argmin of {:?} into {:?} {}",
                x.shape, y.shape, y.dtype
            ));
        }
        if n == 0 {
            if y.numel() == 0 {
                return Ok(());
            }
            return Err(format!(
                "cannot take argmax/argmin along the empty axis {ax}"
            ));
        }
        // SAFETY: the output slot holds outer * inner i64 values (checked above).
        let out = unsafe { std::slice::from_raw_parts_mut(y.ptr as *mut i64, y.numel()) };
        let dims = (outer, n, inner);
        match class_of(x.dtype) {
            Some(Class::F) => {
                let xi = F32In::new(x);
                self.scan(xi.slice(), dims, out, |v, b| self.better_f(v, b), par)
            }
            Some(Class::I) => {
                let mut v = vec![0i64; x.numel()];
                load_i64(x.dtype, x.ptr, 0, &mut v);
                self.scan(&v, dims, out, |v, b| self.better_i(v, b), par)
            }
            None | Some(Class::D) => Err(format!("argmax/argmin of {}", x.dtype)),
        }
    }
}
