//! `data.shape_of` (ONNX Shape where the shape is used as data): the
//! operand's run-time shape written as integers. Reads no element.

use super::{Kernel, Par, Slot};
use crate::buffer::store_i64;

#[derive(Clone, Debug)]
pub struct ShapeOf;

impl Kernel for ShapeOf {
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], _par: &Par) -> Result<(), String> {
        let (&[x], &[y]) = (ins, outs) else {
            return Err("shape_of takes 1 operand and gives 1 result".into());
        };
        if y.numel() != x.shape.len() || !y.dtype.is_int() {
            return Err(format!(
                "shape_of of a rank-{} tensor cannot fill {:?} {}",
                x.shape.len(),
                y.shape,
                y.dtype
            ));
        }
        let dims: Vec<i64> = x.shape.iter().map(|&d| d as i64).collect();
        store_i64(y.dtype, y.ptr, 0, &dims);
        Ok(())
    }
}
