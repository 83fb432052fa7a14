//! Native kernel of `graph.cumprod`: the op's own scan
//! (`ge_dialects::graph::scan::cumprod_lines`) on f32 (f16/bf16 through f32),
//! f64 at its own precision (`f64_ok`: ONNX's CumProd tests are f64), or i64
//! (every integer type, wrapping as the type does on store).

use super::{Kernel, Par, Slot};
use crate::buffer::{
    class_of, load_f32, load_f64, load_i64, store_f32, store_f64, store_i64, Class,
};
use ge_dialects::graph::opkit::{norm_axis, split_at_axis};
use ge_dialects::graph::scan::{cumprod_lines, Cumprod as CumprodOp};
use ge_ir::body::{Body, OpId};

/// A cumulative product (the axis is resolved against each run's rank).
#[derive(Clone, Debug)]
pub struct Cumprod {
    axis: i64,
    exclusive: bool,
    reverse: bool,
}

impl Cumprod {
    pub fn from_op(b: &Body, o: OpId) -> Cumprod {
        let a = CumprodOp::attrs(b.op(o));
        Cumprod {
            axis: a.axis(),
            exclusive: a.exclusive() != 0,
            reverse: a.reverse() != 0,
        }
    }
}

impl Kernel for Cumprod {
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let ([x], [out]) = (ins, outs) else {
            return Err("cumprod: expects 1 operand and 1 result".into());
        };
        if out.shape != x.shape || out.dtype != x.dtype {
            return Err(format!(
                "result {:?} {} is not the input's {:?} {}",
                out.shape, out.dtype, x.shape, x.dtype
            ));
        }
        let rank = x.shape.len();
        let axis = norm_axis(self.axis, rank.max(1), "axis")?;
        let (exclusive, reverse) = (self.exclusive, self.reverse);
        let lines = split_at_axis(&x.shape, axis.min(rank.saturating_sub(1)));
        let n = x.numel();
        match class_of(x.dtype).ok_or("cumprod: unsupported element type")? {
            Class::F => {
                let (mut v, mut y) = (vec![0f32; n], vec![0f32; n]);
                load_f32(x.dtype, x.ptr, 0, &mut v);
                cumprod_lines(&v, lines, exclusive, reverse, 1.0, |a, b| a * b, &mut y);
                store_f32(out.dtype, out.ptr, 0, &y);
            }
            Class::D => {
                let (mut v, mut y) = (vec![0f64; n], vec![0f64; n]);
                load_f64(x.dtype, x.ptr, 0, &mut v);
                cumprod_lines(&v, lines, exclusive, reverse, 1.0, |a, b| a * b, &mut y);
                store_f64(out.dtype, out.ptr, 0, &y);
            }
            Class::I => {
                let (mut v, mut y) = (vec![0i64; n], vec![0i64; n]);
                load_i64(x.dtype, x.ptr, 0, &mut v);
                cumprod_lines(&v, lines, exclusive, reverse, 1, i64::wrapping_mul, &mut y);
                store_i64(out.dtype, out.ptr, 0, &y);
            }
        }
        Ok(())
    }
}
