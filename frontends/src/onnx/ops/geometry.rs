//! Image geometry: CenterCropPad and AffineGrid map to their graph ops
//! (dialects/src/graph/geometry.rs). ONNX gives CenterCropPad's target
//! `shape` and AffineGrid's `size` as inputs; the graph ops take them as
//! attributes: a constant input becomes the attribute, an input known only
//! at run time makes the op a `graph.specialize` that fills the attribute
//! from the value (hybrid execution, [`Cx::specialize`]).

use super::{invalid, one, run_time, Cx, Node, Res};
use ge_dialects::graph::specialize::ValueKind;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

/// The graph op `name` of `data` with `attrs`, and ONNX input `i` as its
/// integer-array attribute `attr` (constant, or read at run time).
fn with_ints_input<'a>(
    cx: &mut Cx,
    n: &Node,
    name: &str,
    data: ValueId,
    mut attrs: Vec<(&'a str, Attribute)>,
    i: usize,
    attr: &'a str,
) -> Res<Vec<ValueId>> {
    let v = n.input(i)?;
    if run_time(cx, n, i).is_some() {
        return cx.specialize(n, name, &[data], attrs, &[(v, attr, ValueKind::Ints)], 1);
    }
    let x = cx.const_i64s(v, attr)?;
    attrs.push((attr, Attribute::i64_array(&x)));
    one(cx.e.op(name, &[data], attrs)?)
}

pub fn center_crop_pad(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let mut attrs = vec![];
    if let Some(axes) = n.ints("axes") {
        attrs.push(("axes", Attribute::i64_array(&axes)));
    }
    with_ints_input(cx, n, "graph.center_crop_pad", x, attrs, 1, "shape")
}

pub fn affine_grid(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let theta = n.input(0)?;
    let align = n.i("align_corners", 0)?;
    if align != 0 && align != 1 {
        return Err(invalid(
            n,
            format!("align_corners must be 0 or 1, got {align}"),
        ));
    }
    let attrs = vec![("align_corners", Attribute::i64(align))];
    with_ints_input(cx, n, "graph.affine_grid", theta, attrs, 1, "size")
}
