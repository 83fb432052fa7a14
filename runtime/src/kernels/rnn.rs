//! Native kernel of the recurrent layers `graph.rnn`, `graph.gru` and
//! `graph.lstm`: the op's own recurrence (`ge_dialects::graph::rnn::run`,
//! the same gate equations as the reference) run in f32 on the model's
//! buffers (sequence by sequence, on the calling thread).

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f32, load_i64, store_f32};
use ge_dialects::graph::rnn::{check_shapes, operand_slots, run_groups, spec_of, Sizes, Spec};
use ge_ir::body::{Body, OpId};

/// A recurrent layer: its spec and where each operand group is among the
/// step's inputs (`None`: an optional operand left out).
#[derive(Clone, Debug)]
pub struct Recurrent {
    spec: Spec,
    slots: Vec<Option<usize>>,
}

impl Recurrent {
    /// The kernel of op `o` (`None` when its attributes are invalid: the
    /// interpreter then reports the error).
    pub fn from_op(b: &Body, o: OpId) -> Option<Recurrent> {
        let d = b.op(o);
        let def = d.def?;
        Some(Recurrent {
            spec: spec_of(def, d).ok()?,
            slots: operand_slots(def, d),
        })
    }
}

fn f32s(s: &Slot) -> Vec<f32> {
    let mut v = vec![0f32; s.numel()];
    load_f32(s.dtype, s.ptr, 0, &mut v);
    v
}

impl Kernel for Recurrent {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let get = |g: usize| {
            self.slots
                .get(g)
                .copied()
                .flatten()
                .and_then(|i| ins.get(i).copied())
        };
        let shapes: Vec<Option<&[usize]>> =
            (0..8).map(|g| get(g).map(|s| s.shape.as_slice())).collect();
        let n: Sizes = check_shapes(&self.spec, &shapes)?;
        let lens = get(4).map(|s| {
            let mut v = vec![0i64; s.numel()];
            load_i64(s.dtype, s.ptr, 0, &mut v);
            v
        });
        let groups: Vec<Option<Vec<f32>>> = (0..8)
            .map(|g| get(g).filter(|_| g != 4).map(f32s))
            .collect();
        let out = run_groups(&self.spec, n, &groups, lens.as_deref())?;
        let dims = self
            .spec
            .result_dims(n.seq, n.batch, self.spec.dirs, self.spec.hidden);
        if outs.len() != dims.len() {
            return Err(format!(
                "expects {} results, got {}",
                dims.len(),
                outs.len()
            ));
        }
        for ((o, want), v) in outs.iter().zip(&dims).zip([out.y, out.y_h, out.y_c]) {
            if &o.shape != want {
                return Err(format!(
                    "result shape {:?} is not the layer's {want:?}",
                    o.shape
                ));
            }
            store_f32(o.dtype, o.ptr, 0, &v);
        }
        Ok(())
    }

    fn float_only(&self) -> bool {
        true
    }
}
