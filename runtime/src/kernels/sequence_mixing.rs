//! Native kernels of `graph.linear_attention` and
//! `graph.causal_conv_with_state`: the ops' own computations
//! (`ge_dialects::graph::sequence_mixing::{linear_attention, causal_conv}`)
//! run in f32 — what the ONNX reference accumulates in — on the model's
//! buffers, rounded to the element type once on store (the convolution
//! also before its activation, as the reference).

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f32, store_f32};
use ge_dialects::graph::sequence_mixing::{
    causal_conv, conv_geometry, linear_attention, linear_geometry, operand_slots,
    CausalConvWithState, LinearAttn,
};
use ge_ir::body::{Body, OpId};
use ge_ir::tensor::round_f;

fn f32s(s: &Slot) -> Vec<f32> {
    let mut v = vec![0f32; s.numel()];
    load_f32(s.dtype, s.ptr, 0, &mut v);
    v
}

/// The operand of group `g` among the step's inputs (`None`: left out).
fn slot<'s>(slots: &[Option<usize>], ins: &[&'s Slot], g: usize) -> Option<&'s Slot> {
    slots
        .get(g)
        .copied()
        .flatten()
        .and_then(|i| ins.get(i).copied())
}

/// Check that result `s` has `shape`.
fn check_out(s: &Slot, shape: &[usize], what: &str) -> Result<(), String> {
    if s.shape != shape {
        return Err(format!(
            "result '{what}' has shape {:?}, expected {shape:?}",
            s.shape
        ));
    }
    Ok(())
}

/// A linear attention: its attributes and where each operand group is.
#[derive(Clone, Debug)]
pub struct LinearAttention {
    attrs: LinearAttn,
    slots: Vec<Option<usize>>,
}

impl LinearAttention {
    /// The kernel of op `o` (`None` when its attributes are invalid: the
    /// interpreter then reports the error).
    pub fn from_op(b: &Body, o: OpId) -> Option<LinearAttention> {
        Some(LinearAttention {
            attrs: LinearAttn::of(b.op(o)).ok()?,
            slots: operand_slots(b, o),
        })
    }
}

impl Kernel for LinearAttention {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let ops: [Option<&Slot>; 6] = std::array::from_fn(|g| slot(&self.slots, ins, g));
        let shapes: [Option<&[usize]>; 6] = std::array::from_fn(|g| ops[g].map(|s| &s.shape[..]));
        let g = linear_geometry(&self.attrs, shapes)?;
        let &[out, present] = outs else {
            return Err("linear_attention gives 2 results".into());
        };
        let a = &self.attrs;
        check_out(out, &[g.batch, g.steps, a.q_heads * g.dv], "output")?;
        check_out(present, &[g.batch, a.kv_heads, g.dk, g.dv], "present_state")?;
        let f = |i: usize| ops[i].map(f32s);
        let mut state = f(3).unwrap_or_else(|| vec![0.0; present.numel()]);
        let mut y = vec![0f32; out.numel()];
        linear_attention(
            a,
            &g,
            &f(0).unwrap_or_default(),
            &f(1).unwrap_or_default(),
            &f(2).unwrap_or_default(),
            f(4).as_deref(),
            f(5).as_deref(),
            &mut state,
            &mut y,
        );
        store_f32(out.dtype, out.ptr, 0, &y);
        store_f32(present.dtype, present.ptr, 0, &state);
        Ok(())
    }

    fn float_only(&self) -> bool {
        true
    }
}

/// A causal convolution with state: its activation and operand groups.
#[derive(Clone, Debug)]
pub struct CausalConv {
    silu: bool,
    slots: Vec<Option<usize>>,
}

impl CausalConv {
    pub fn from_op(b: &Body, o: OpId) -> Option<CausalConv> {
        Some(CausalConv {
            silu: CausalConvWithState::attrs(b.op(o)).activation() != "none",
            slots: operand_slots(b, o),
        })
    }
}

impl Kernel for CausalConv {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let ops: [Option<&Slot>; 4] = std::array::from_fn(|g| slot(&self.slots, ins, g));
        let shapes: [Option<&[usize]>; 4] = std::array::from_fn(|g| ops[g].map(|s| &s.shape[..]));
        let g = conv_geometry(shapes)?;
        let &[out, present] = outs else {
            return Err("causal_conv_with_state gives 2 results".into());
        };
        check_out(out, &[g.batch, g.channels, g.len], "output")?;
        check_out(present, &[g.batch, g.channels, g.k - 1], "present_state")?;
        let f = |i: usize| ops[i].map(f32s);
        let mut y = vec![0f32; out.numel()];
        let mut p = vec![0f32; present.numel()];
        let dt = out.dtype;
        causal_conv(
            &g,
            &f(0).unwrap_or_default(),
            &f(1).unwrap_or_default(),
            f(2).as_deref(),
            f(3).as_deref(),
            self.silu,
            |v| round_f(dt, v),
            &mut y,
            &mut p,
        );
        store_f32(out.dtype, out.ptr, 0, &y);
        store_f32(present.dtype, present.ptr, 0, &p);
        Ok(())
    }

    fn float_only(&self) -> bool {
        true
    }
}
