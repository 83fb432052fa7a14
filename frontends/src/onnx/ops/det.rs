//! Det maps to `graph.det` (dialects/src/graph/det.rs).

use super::{one, Cx, Node, Res};
use ge_ir::body::ValueId;

pub fn det(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(cx.e.op("graph.det", &[x], vec![])?)
}
