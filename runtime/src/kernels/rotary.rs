//! Native kernel of `graph.rotary_embedding`: the op's own rotation
//! (`ge_dialects::graph::rotary::rotate`) in f32 on the model's buffers.

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f32, load_i64, store_f32};
use ge_dialects::graph::rotary::{geometry, rotate, Rotary as Attrs};
use ge_ir::body::{Body, OpId};

/// A rotary embedding.
#[derive(Clone, Debug)]
pub struct Rotary {
    attrs: Attrs,
}

impl Rotary {
    pub fn from_op(b: &Body, o: OpId) -> Option<Rotary> {
        Some(Rotary {
            attrs: Attrs::of(b.op(o)).ok()?,
        })
    }
}

fn f32s(s: &Slot) -> Vec<f32> {
    let mut v = vec![0f32; s.numel()];
    load_f32(s.dtype, s.ptr, 0, &mut v);
    v
}

impl Kernel for Rotary {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let (x, c, s, out) = match (ins, outs) {
            ([x, c, s], [o]) | ([x, c, s, _], [o]) => (*x, *c, *s, *o),
            _ => return Err("rotary_embedding: expects 3 or 4 operands and 1 result".into()),
        };
        let pos = ins.get(3);
        let g = geometry(
            &self.attrs,
            &x.shape,
            &c.shape,
            &s.shape,
            pos.map(|p| &p.shape[..]),
        )?;
        if out.shape != x.shape {
            return Err(format!(
                "result shape {:?} is not the input's {:?}",
                out.shape, x.shape
            ));
        }
        let p = pos.map(|p| {
            let mut v = vec![0i64; p.numel()];
            load_i64(p.dtype, p.ptr, 0, &mut v);
            v
        });
        let (xv, cv, sv) = (f32s(x), f32s(c), f32s(s));
        let mut y = vec![0f32; xv.len()];
        rotate(&self.attrs, &g, &xv, &cv, &sv, p.as_deref(), &mut y)?;
        store_f32(out.dtype, out.ptr, 0, &y);
        Ok(())
    }

    fn float_only(&self) -> bool {
        true
    }
}
