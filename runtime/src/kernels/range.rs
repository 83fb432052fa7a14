//! `graph.range` (ONNX Range over bounds read at run time, through
//! `graph.specialize`): the elements the op's own `range_values` computes,
//! stored at the result's type.

use super::{Kernel, Par, Slot};
use crate::buffer::{store_f64, store_i64};
use ge_dialects::graph::range::range_values;

#[derive(Clone, Debug)]
pub struct Range {
    pub start: f64,
    pub limit: f64,
    pub delta: f64,
}

impl Kernel for Range {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _par: &Par) -> Result<(), String> {
        let (&[], &[y]) = (ins, outs) else {
            return Err("range takes no operand and gives 1 result".into());
        };
        let t = range_values(self.start, self.limit, self.delta, y.dtype)?;
        // The plan sized the result from the same bounds; a mismatch is a
        // broken plan, never a write past the buffer.
        if t.shape != y.shape {
            return Err(format!(
                "range of {:?} elements planned as {:?}",
                t.shape, y.shape
            ));
        }
        if y.dtype.is_float() {
            store_f64(y.dtype, y.ptr, 0, &t.to_f64());
        } else {
            store_i64(y.dtype, y.ptr, 0, &t.to_i64());
        }
        Ok(())
    }
}
