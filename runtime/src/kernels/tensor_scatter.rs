//! Native kernel of `graph.tensor_scatter` (ONNX TensorScatter): the cache
//! copied, then the update's rows copied to the positions the op's own
//! write plan (`ge_dialects::graph::kv_cache::scatter_rows`) gives. A byte
//! copy of any element type.

use super::{Kernel, Par, Slot};
use crate::buffer::load_i64;
use ge_dialects::graph::kv_cache::{scatter_rows, ScatterPlan};

/// A KV-cache write with its attributes.
#[derive(Clone, Debug)]
pub struct TensorScatter {
    pub axis: i64,
    pub mode: String,
}

impl Kernel for TensorScatter {
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let (past, upd, ix) = match ins {
            [p, u] => (*p, *u, None),
            [p, u, i] => (*p, *u, Some(*i)),
            _ => return Err("tensor_scatter takes 2 or 3 operands".into()),
        };
        let &[out] = outs else {
            return Err("tensor_scatter gives 1 result".into());
        };
        let plan = ScatterPlan::new(
            self.axis,
            &self.mode,
            &past.shape,
            &upd.shape,
            ix.map(|i| &i.shape[..]),
        )?;
        let es = past.dtype.byte_size();
        if out.shape != past.shape || out.dtype.byte_size() != es || upd.dtype.byte_size() != es {
            return Err(format!(
                "tensor_scatter into {:?} cannot give {:?}",
                past.shape, out.shape
            ));
        }
        let indices = ix.map(|i| {
            let mut v = vec![0i64; i.numel()];
            load_i64(i.dtype, i.ptr, 0, &mut v);
            v
        });
        if out.ptr != past.ptr {
            // SAFETY: both slots hold `past.bytes()` bytes (same shape and
            // element size, checked above); copy handles the in-place case
            // (same pointer) by being skipped, and distinct values do not
            // overlap.
            unsafe { std::ptr::copy_nonoverlapping(past.ptr, out.ptr, past.bytes()) };
        }
        let (total, upd_total) = (out.numel(), upd.numel());
        let mut bad = None;
        scatter_rows(&plan, indices.as_deref(), |d, s, n| {
            if d + n > total || s + n > upd_total {
                bad = Some((d, s, n));
                return;
            }
            // SAFETY: rows `d..d+n` of the result and `s..s+n` of the update
            // lie inside their slots (checked just above); the update is a
            // different value from the result.
            unsafe {
                std::ptr::copy_nonoverlapping(upd.ptr.add(s * es), out.ptr.add(d * es), n * es)
            };
        })?;
        match bad {
            Some((d, s, n)) => Err(format!(
                "internal: tensor_scatter row {s}+{n} -> {d} outside the buffers"
            )),
            None => Ok(()),
        }
    }
}
