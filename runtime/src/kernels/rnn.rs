//! Native kernel of the recurrent layers `graph.rnn`, `graph.gru` and
//! `graph.lstm`. The common cases (f32, layout 0, the standard activations,
//! no clip or peepholes, full-length sequences) take the GEMM-based path of
//! [`super::rnn_fast`]; everything else runs the op's own recurrence
//! (`ge_dialects::graph::rnn::run_groups`, the same gate equations as the
//! reference) in f32 on copies of the model's buffers (sequence by
//! sequence, on the calling thread).

use super::prepared::Prepared;
use super::rnn_fast::{Fast, PackedWeights};
use super::{Kernel, Par, Slot};
use crate::buffer::{load_f32, load_i64, store_f32};
use ge_dialects::graph::rnn::{
    check_shapes, operand_slots, run_groups, spec_of, Cell, CommonAttrs, Gru, Lstm, Rnn, Sizes,
    Spec,
};
use ge_ir::body::{Body, OpId};

/// A recurrent layer: its spec, where each operand group is among the
/// step's inputs (`None`: an optional operand left out), and its fast path
/// when its attributes allow one.
#[derive(Clone, Debug)]
pub struct Recurrent {
    spec: Spec,
    slots: Vec<Option<usize>>,
    fast: Option<Fast>,
    /// `W` and `R` packed for the fast path at load ([`Kernel::prepare`]),
    /// by address and shape.
    packed: Prepared<PackedWeights>,
}

impl Recurrent {
    /// The kernel of op `o` (`None` when its attributes are invalid: the
    /// interpreter then reports the error).
    pub fn from_op(b: &Body, o: OpId) -> Option<Recurrent> {
        let d = b.op(o);
        let def = d.def?;
        let spec = spec_of(def, d).ok()?;
        let acts: Option<Vec<&str>> = if std::ptr::eq(def, Rnn::DEF) {
            Rnn::attrs(d).activations()
        } else if std::ptr::eq(def, Gru::DEF) {
            Gru::attrs(d).activations()
        } else {
            Lstm::attrs(d).activations()
        };
        Some(Recurrent {
            fast: Fast::new(&spec, acts.as_deref()),
            packed: Prepared::default(),
            spec,
            slots: operand_slots(def, d),
        })
    }

    /// The kernel of a layer with `cell` and attributes `a` whose operand
    /// groups (X, W, R, B, sequence_lens, initial_h, initial_c, P) are
    /// given where `present` says, in that order (tests drive the kernel
    /// through this without a module).
    pub fn from_attrs(cell: Cell, a: CommonAttrs, present: &[bool]) -> Result<Recurrent, String> {
        let acts: Option<Vec<String>> = a
            .activations
            .as_ref()
            .map(|v| v.iter().map(|s| s.to_string()).collect());
        let spec = Spec::new(cell, a)?;
        let mut next = 0;
        let slots = present
            .iter()
            .map(|&p| {
                p.then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        Ok(Recurrent {
            fast: Fast::new(&spec, acts.as_deref()),
            packed: Prepared::default(),
            spec,
            slots,
        })
    }

    /// Whether the attributes allow the fast path (the operands may still
    /// send a run to the reference path: see [`super::rnn_fast`]).
    pub fn has_fast_path(&self) -> bool {
        self.fast.is_some()
    }

    /// Run on the reference recurrence even where the fast path applies.
    pub fn run_reference(&self, ins: &[&Slot], outs: &[&Slot]) -> Result<(), String> {
        self.run_with(ins, outs, false, &Par::NONE).map(|_| ())
    }

    /// Run; `Ok(true)` when the fast path computed the results.
    pub fn run_reporting(&self, ins: &[&Slot], outs: &[&Slot]) -> Result<bool, String> {
        self.run_with(ins, outs, true, &Par::NONE)
    }

    fn run_with(
        &self,
        ins: &[&Slot],
        outs: &[&Slot],
        fast: bool,
        par: &Par,
    ) -> Result<bool, String> {
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
        for (o, want) in outs.iter().zip(&dims) {
            if &o.shape != want {
                return Err(format!(
                    "result shape {:?} is not the layer's {want:?}",
                    o.shape
                ));
            }
        }
        if let Some(f) = self.fast.as_ref().filter(|_| fast) {
            let groups: [Option<&Slot>; 8] = std::array::from_fn(get);
            let packed = [1, 2].map(|g| groups[g].and_then(|s| self.packed.find(s)));
            let packed = [packed[0].as_deref(), packed[1].as_deref()];
            if f.run(&self.spec, n, &groups, packed, outs, par)? {
                return Ok(true);
            }
        }
        let lens = get(4).map(|s| {
            let mut v = vec![0i64; s.numel()];
            load_i64(s.dtype, s.ptr, 0, &mut v);
            v
        });
        let groups: Vec<Option<Vec<f32>>> = (0..8)
            .map(|g| get(g).filter(|_| g != 4).map(f32s))
            .collect();
        let out = run_groups(&self.spec, n, &groups, lens.as_deref())?;
        for (o, v) in outs.iter().zip([out.y, out.y_h, out.y_c]) {
            store_f32(o.dtype, o.ptr, 0, &v);
        }
        Ok(false)
    }
}

fn f32s(s: &Slot) -> Vec<f32> {
    let mut v = vec![0f32; s.numel()];
    load_f32(s.dtype, s.ptr, 0, &mut v);
    v
}

impl Kernel for Recurrent {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        self.run_with(ins, outs, true, par).map(|_| ())
    }

    /// A constant `W` or `R` of a layer with a fast path, packed once per
    /// direction as the packed GEMM's left operand: each run then computes
    /// `(X·Wᵀ)ᵀ = W·Xᵀ` and `(H·Rᵀ)ᵀ` without repacking them (the `gemm`
    /// crate copies its right operand, the weights, on every call: at 4 to
    /// 16 rows more work than the product).
    fn prepare(&self, operand: usize, w: &Slot, budget: usize) -> usize {
        let group = [1, 2]
            .into_iter()
            .find(|&g| self.slots.get(g).copied().flatten() == Some(operand));
        if self.fast.is_none() || group.is_none() || self.packed.find(w).is_some() {
            return 0;
        }
        let Some(packed) = PackedWeights::pack(w, budget) else {
            return 0;
        };
        let bytes = packed.bytes();
        self.packed.insert(w, packed, bytes)
    }

    fn float_only(&self) -> bool {
        true
    }
}
