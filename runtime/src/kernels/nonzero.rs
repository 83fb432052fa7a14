//! `data.nonzero` (ONNX NonZero): the coordinates of the non-zero elements,
//! written `[rank, count]` row-major at the start of the indices buffer
//! (planned at the size symbol's bound, `[rank, bound]`), and the count as
//! the second result, which the executor reads after the launch to bind the
//! size symbol (`exec.rs`, size binders).

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f64, store_i64};

#[derive(Clone, Debug)]
pub struct NonZero;

impl Kernel for NonZero {
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], _par: &Par) -> Result<(), String> {
        let (&[x], &[idx, size]) = (ins, outs) else {
            return Err("nonzero takes 1 operand and gives 2 results".into());
        };
        let rank = x.shape.len();
        if idx.shape.len() != 2
            || idx.shape[0] != rank
            || idx.dtype != ge_ir::DType::I64
            || size.numel() != 1
            || !size.dtype.is_int()
        {
            return Err(format!(
                "nonzero of a rank-{rank} tensor cannot fill {:?} {} and {:?} {}",
                idx.shape, idx.dtype, size.shape, size.dtype
            ));
        }
        let mut vals = vec![0f64; x.numel()];
        load_f64(x.dtype, x.ptr, 0, &mut vals);
        let hits: Vec<usize> = (0..vals.len()).filter(|&i| vals[i] != 0.0).collect();
        let count = hits.len();
        // The indices buffer holds `[rank, planned]` elements; the result is
        // the first `rank * count` of them.
        if count > idx.shape[1] {
            return Err(format!(
                "nonzero found {count} elements, more than the {} planned",
                idx.shape[1]
            ));
        }
        let mut out = vec![0i64; rank * count];
        let mut coord = vec![0usize; rank];
        for (j, &i) in hits.iter().enumerate() {
            ge_dialects::data::unravel(i, &x.shape, &mut coord);
            for (k, &c) in coord.iter().enumerate() {
                out[k * count + j] = c as i64;
            }
        }
        store_i64(idx.dtype, idx.ptr, 0, &out);
        store_i64(size.dtype, size.ptr, 0, &[count as i64]);
        Ok(())
    }
}
