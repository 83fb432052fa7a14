//! Sequence mixers of linear-attention and state-space models (ai.onnx
//! opset 27): LinearAttention and CausalConvWithState map one to one to
//! `graph.linear_attention` and `graph.causal_conv_with_state`
//! (dialects/src/graph/sequence_mixing.rs), optional inputs recorded in
//! `operand_segment_sizes`.

use super::{invalid, Cx, Node, Res};
use ge_dialects::graph::sequence_mixing::{CONV_ACTIVATIONS, UPDATE_RULES};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

/// The required inputs `0..required` and the optional ones up to `total`,
/// with their segment sizes.
fn operands(n: &Node, required: usize, total: usize) -> Res<(Vec<ValueId>, Vec<i64>)> {
    if (total..n.num_inputs()).any(|i| n.opt_input(i).is_some()) {
        return Err(invalid(n, format!("takes at most {total} inputs")));
    }
    let mut ops = vec![];
    let mut seg = vec![];
    for i in 0..total {
        let v = if i < required {
            Some(n.input(i)?)
        } else {
            n.opt_input(i)
        };
        ops.extend(v);
        seg.push(v.is_some() as i64);
    }
    Ok((ops, seg))
}

/// A string attribute that must be one of `allowed`.
fn one_of(n: &Node, name: &str, default: &str, allowed: &[&str]) -> Res<String> {
    let s = n.s(name, default)?;
    if !allowed.contains(&s.as_str()) {
        return Err(invalid(
            n,
            format!(
                "attribute '{name}' must be one of {}, but is '{s}'",
                allowed.join(", ")
            ),
        ));
    }
    Ok(s)
}

pub fn linear_attention(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (ops, seg) = operands(n, 3, 6)?;
    let rule = one_of(n, "update_rule", "gated_delta", UPDATE_RULES)?;
    let (Some(q), Some(kv)) = (n.opt_i("q_num_heads")?, n.opt_i("kv_num_heads")?) else {
        return Err(invalid(
            n,
            "attributes 'q_num_heads' and 'kv_num_heads' are required",
        ));
    };
    if q <= 0 || kv <= 0 || q % kv != 0 {
        return Err(invalid(
            n,
            format!("'q_num_heads' ({q}) must be a positive multiple of 'kv_num_heads' ({kv})"),
        ));
    }
    let attrs = vec![
        ("q_num_heads", Attribute::i64(q)),
        ("kv_num_heads", Attribute::i64(kv)),
        ("update_rule", Attribute::string(&rule)),
        ("scale", Attribute::f64(n.f("scale", 0.0)? as f64)),
        ("chunk_size", Attribute::i64(n.i("chunk_size", 64)?)),
        ("operand_segment_sizes", Attribute::i64_array(&seg)),
    ];
    Ok(cx.e.op_multi("graph.linear_attention", &ops, attrs, None)?)
}

pub fn causal_conv_with_state(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (ops, seg) = operands(n, 2, 4)?;
    let act = one_of(n, "activation", "none", CONV_ACTIVATIONS)?;
    let attrs = vec![
        ("activation", Attribute::string(&act)),
        ("operand_segment_sizes", Attribute::i64_array(&seg)),
    ];
    Ok(cx
        .e
        .op_multi("graph.causal_conv_with_state", &ops, attrs, None)?)
}
