//! Native kernel of `graph.bit_shift`: numpy broadcasting of the two
//! operands, each element shifted by the op's own rule
//! (`ge_dialects::graph::bitwise::shift`), on the integer types.

use super::{Kernel, Par, Slot};
use crate::buffer::{load_i64, store_i64};
use ge_dialects::graph::bitwise::{shift, BitShift as BitShiftOp};
use ge_ir::body::{Body, OpId};
use ge_ir::tensor::broadcast_index;

/// A left or right shift.
#[derive(Clone, Debug)]
pub struct BitShift {
    left: bool,
}

impl BitShift {
    pub fn from_op(b: &Body, o: OpId) -> BitShift {
        BitShift {
            left: BitShiftOp::attrs(b.op(o)).direction() == Some("left"),
        }
    }
}

fn i64s(s: &Slot) -> Vec<i64> {
    let mut v = vec![0i64; s.numel()];
    load_i64(s.dtype, s.ptr, 0, &mut v);
    v
}

impl Kernel for BitShift {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let ([a, b], [out]) = (ins, outs) else {
            return Err("bit_shift: expects 2 operands and 1 result".into());
        };
        let ia = broadcast_index(&a.shape, &out.shape)?;
        let ib = broadcast_index(&b.shape, &out.shape)?;
        let (av, bv) = (i64s(a), i64s(b));
        let dt = a.dtype;
        let y: Vec<i64> = ia
            .iter()
            .zip(&ib)
            .map(|(&i, &j)| match (av.get(i), bv.get(j)) {
                (Some(&p), Some(&q)) => Ok(shift(p, q, dt, self.left)),
                _ => Err(format!(
                    "operand shapes {:?} and {:?} do not broadcast to {:?}",
                    a.shape, b.shape, out.shape
                )),
            })
            .collect::<Result<_, String>>()?;
        store_i64(out.dtype, out.ptr, 0, &y);
        Ok(())
    }
}
