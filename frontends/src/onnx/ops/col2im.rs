//! Col2Im maps to `graph.col2im` (dialects/src/graph/col2im.rs). ONNX gives
//! `image_shape` and `block_shape` as inputs; the graph op takes them as
//! attributes: constant inputs become the attributes, inputs known only at
//! run time make the op a `graph.specialize` that fills them from the values
//! (hybrid execution, [`Cx::specialize`]).

use super::{one, run_time, unsupported, Cx, Node, Res};
use ge_dialects::graph::specialize::ValueKind;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

const NAME: &str = "graph.col2im";

pub fn col2im(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    if let Some(dt) = cx.e.ty(x).dtype().filter(|d| !d.is_float()) {
        return Err(unsupported(n, format!("on {dt} (only float types)")));
    }
    let mut attrs = vec![];
    for a in ["dilations", "pads", "strides"] {
        if let Some(v) = n.ints(a) {
            attrs.push((a, Attribute::i64_array(&v)));
        }
    }
    let mut values = vec![];
    for (i, attr) in [(1, "image_shape"), (2, "block_shape")] {
        let v = n.input(i)?;
        if run_time(cx, n, i).is_some() {
            values.push((v, attr, ValueKind::Ints));
        } else {
            attrs.push((attr, Attribute::i64_array(&cx.const_i64s(v, attr)?)));
        }
    }
    if !values.is_empty() {
        return cx.specialize(n, NAME, &[x], attrs, &values, 1);
    }
    one(cx.e.op(NAME, &[x], attrs)?)
}
