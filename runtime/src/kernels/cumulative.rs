//! Native kernels of `graph.cumprod` and `graph.cumsum`: the ops' own scan
//! (`ge_dialects::graph::scan::scan_lines`) on f32 (f16/bf16 through f32),
//! f64 at its own precision (`f64_ok`: ONNX's CumProd and CumSum tests are
//! f64), or i64 (every integer type, wrapping as the type does on store).
//! A cumsum's axis may be an operand read at each run (ONNX's `axis` input
//! left as a graph input); its range is checked then.

use super::{Kernel, Par, Slot};
use crate::buffer::{
    class_of, load_f32, load_f64, load_i64, store_f32, store_f64, store_i64, Class,
};
use ge_dialects::graph::opkit::{norm_axis, split_at_axis};
use ge_dialects::graph::scan::{scan_lines, Cumprod as CumprodOp, Cumsum as CumsumOp};
use ge_ir::body::{Body, OpId};

/// A cumulative product or sum (the axis is resolved against each run's
/// rank, or read from the second operand when there is one).
#[derive(Clone, Debug)]
pub struct Cumulative {
    axis: i64,
    exclusive: bool,
    reverse: bool,
    /// A sum (else a product).
    sum: bool,
}

impl Cumulative {
    pub fn cumprod(b: &Body, o: OpId) -> Cumulative {
        let a = CumprodOp::attrs(b.op(o));
        Cumulative {
            axis: a.axis(),
            exclusive: a.exclusive() != 0,
            reverse: a.reverse() != 0,
            sum: false,
        }
    }

    pub fn cumsum(b: &Body, o: OpId) -> Cumulative {
        let a = CumsumOp::attrs(b.op(o));
        Cumulative {
            axis: a.axis(),
            exclusive: a.exclusive() != 0,
            reverse: a.reverse() != 0,
            sum: true,
        }
    }

    /// The axis of this run: the axis operand's one element when given.
    fn axis(&self, axis_value: Option<&Slot>, rank: usize) -> Result<usize, String> {
        let Some(a) = axis_value else {
            return norm_axis(self.axis, rank.max(1), "axis");
        };
        if a.numel() != 1 || !a.dtype.is_int() {
            return Err(format!(
                "the axis must be one integer, got {:?} {}",
                a.shape, a.dtype
            ));
        }
        let mut v = [0i64];
        load_i64(a.dtype, a.ptr, 0, &mut v);
        norm_axis(v[0], rank.max(1), "the run-time axis")
    }
}

impl Kernel for Cumulative {
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let (x, axis_value, out) = match (ins, outs) {
            ([x], [out]) => (x, None, out),
            ([x, a], [out]) if self.sum => (x, Some(*a), out),
            _ => return Err("cumulative op: expects 1 or 2 operands and 1 result".into()),
        };
        if out.shape != x.shape || out.dtype != x.dtype {
            return Err(format!(
                "result {:?} {} is not the input's {:?} {}",
                out.shape, out.dtype, x.shape, x.dtype
            ));
        }
        let rank = x.shape.len();
        let axis = self.axis(axis_value, rank)?;
        let (exclusive, reverse) = (self.exclusive, self.reverse);
        let lines = split_at_axis(&x.shape, axis.min(rank.saturating_sub(1)));
        let n = x.numel();
        match class_of(x.dtype).ok_or("cumulative op: unsupported element type")? {
            Class::F => {
                let (mut v, mut y) = (vec![0f32; n], vec![0f32; n]);
                load_f32(x.dtype, x.ptr, 0, &mut v);
                let (id, op): (f32, fn(f32, f32) -> f32) = if self.sum {
                    (0.0, |a, b| a + b)
                } else {
                    (1.0, |a, b| a * b)
                };
                scan_lines(&v, lines, exclusive, reverse, id, op, &mut y);
                store_f32(out.dtype, out.ptr, 0, &y);
            }
            Class::D => {
                let (mut v, mut y) = (vec![0f64; n], vec![0f64; n]);
                load_f64(x.dtype, x.ptr, 0, &mut v);
                let (id, op): (f64, fn(f64, f64) -> f64) = if self.sum {
                    (0.0, |a, b| a + b)
                } else {
                    (1.0, |a, b| a * b)
                };
                scan_lines(&v, lines, exclusive, reverse, id, op, &mut y);
                store_f64(out.dtype, out.ptr, 0, &y);
            }
            Class::I => {
                let (mut v, mut y) = (vec![0i64; n], vec![0i64; n]);
                load_i64(x.dtype, x.ptr, 0, &mut v);
                let (id, op): (i64, fn(i64, i64) -> i64) = if self.sum {
                    (0, i64::wrapping_add)
                } else {
                    (1, i64::wrapping_mul)
                };
                scan_lines(&v, lines, exclusive, reverse, id, op, &mut y);
                store_i64(out.dtype, out.ptr, 0, &y);
            }
        }
        Ok(())
    }
}
