//! SwiGLU (ai.onnx opset 28) maps one to one to `graph.swiglu`
//! (dialects/src/graph/swiglu.rs).

use super::{one, Cx, Node, Res};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

pub fn swiglu(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    let alpha = n.f("alpha", 1.0)? as f64;
    one(cx.e.op(
        "graph.swiglu",
        &[a, b],
        vec![("alpha", Attribute::f64(alpha))],
    )?)
}
