//! `data.iota` (ONNX Range over a symbolic length): `start, start + delta,
//! …`, as long as the result is at this run's shape.

use super::{Kernel, Par, Slot};
use crate::buffer::store_i64;

#[derive(Clone, Debug)]
pub struct Iota {
    pub start: i64,
    pub delta: i64,
}

impl Kernel for Iota {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _par: &Par) -> Result<(), String> {
        let (&[], &[y]) = (ins, outs) else {
            return Err("iota takes no operand and gives 1 result".into());
        };
        if y.shape.len() != 1 || !y.dtype.is_int() {
            return Err(format!("iota cannot fill {:?} {}", y.shape, y.dtype));
        }
        let v: Vec<i64> = (0..y.shape[0] as i64)
            .map(|i| self.start.wrapping_add(i.wrapping_mul(self.delta)))
            .collect();
        store_i64(y.dtype, y.ptr, 0, &v);
        Ok(())
    }
}
