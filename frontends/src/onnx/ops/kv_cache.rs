//! KV-cache updates (ai.onnx opset 24): TensorScatter maps one to one to
//! `graph.tensor_scatter` (dialects/src/graph/kv_cache.rs).

use super::{invalid, one, Cx, Node, Res};
use ge_dialects::graph::kv_cache::MODES;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

pub fn tensor_scatter(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let mut ops = vec![n.input(0)?, n.input(1)?];
    ops.extend(n.opt_input(2));
    if (3..n.num_inputs()).any(|i| n.opt_input(i).is_some()) {
        return Err(invalid(n, "takes at most 3 inputs"));
    }
    let mode = n.s("mode", "linear")?;
    if !MODES.contains(&mode.as_str()) {
        return Err(invalid(
            n,
            format!(
                "attribute 'mode' must be one of {}, but is '{mode}'",
                MODES.join(", ")
            ),
        ));
    }
    one(cx.e.op(
        "graph.tensor_scatter",
        &ops,
        vec![
            ("mode", Attribute::string(&mode)),
            ("axis", Attribute::i64(n.i("axis", -2)?)),
        ],
    )?)
}
