//! Native kernel of `graph.cast` to f8E8M0FNU with a `round_mode` (ONNX
//! Cast-24): each element through the op's own conversion
//! (`ge_ir::minifloat::e8m0_from_f32`, ONNX's `to_float8e8m0`), from any
//! input type read as f32 as the reference reads it. A cast to f8E8M0FNU
//! without `round_mode` is an ordinary elementwise cast (`ew.rs`).

use super::{Kernel, Par, Slot};
use crate::buffer::load_f64;
use ge_ir::minifloat::{e8m0_from_f32, E8m0Rounding};
use ge_ir::DType;

/// The rounding and saturation of the cast.
#[derive(Clone, Debug)]
pub struct CastE8m0 {
    pub mode: E8m0Rounding,
    pub saturate: bool,
}

impl Kernel for CastE8m0 {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let (&[x], &[y]) = (ins, outs) else {
            return Err("cast takes 1 operand and gives 1 result".into());
        };
        if x.shape != y.shape || y.dtype != DType::F8E8M0FNU {
            return Err(format!(
                "a rounding cast of {:?} cannot give {:?} of {}",
                x.shape, y.shape, y.dtype
            ));
        }
        let n = x.numel();
        let mut v = vec![0f64; n];
        load_f64(x.dtype, x.ptr, 0, &mut v);
        for (i, &e) in v.iter().enumerate() {
            let bits = e8m0_from_f32(e as f32, self.saturate, self.mode);
            // SAFETY: `y` holds `n` one-byte elements (same shape as `x`,
            // element type f8E8M0FNU, checked above).
            unsafe { y.ptr.add(i).write(bits) };
        }
        Ok(())
    }

    fn f64_ok(&self) -> bool {
        true
    }
}
