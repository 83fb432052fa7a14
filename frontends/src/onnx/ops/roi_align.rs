//! RoiAlign (opsets 10 and 16) maps one to one to `graph.roi_align`
//! (dialects/src/graph/roi_align.rs). Opset 10 has no
//! `coordinate_transformation_mode`: it behaves as `output_half_pixel`,
//! opset 16's default is `half_pixel`.

use super::{invalid, one, Cx, Node, Res};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

pub fn roi_align(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, rois, idx) = (n.input(0)?, n.input(1)?, n.input(2)?);
    let default_mode = if n.opset < 16 {
        "output_half_pixel"
    } else {
        "half_pixel"
    };
    let ctm = n.s("coordinate_transformation_mode", default_mode)?;
    let mode = n.s("mode", "avg")?;
    for (name, v, allowed) in [
        (
            "coordinate_transformation_mode",
            &ctm,
            ["half_pixel", "output_half_pixel"],
        ),
        ("mode", &mode, ["avg", "max"]),
    ] {
        if !allowed.contains(&v.as_str()) {
            return Err(invalid(n, format!("unknown {name} '{v}'")));
        }
    }
    one(cx.e.op(
        "graph.roi_align",
        &[x, rois, idx],
        vec![
            ("coordinate_transformation_mode", Attribute::string(&ctm)),
            ("mode", Attribute::string(&mode)),
            ("output_height", Attribute::i64(n.i("output_height", 1)?)),
            ("output_width", Attribute::i64(n.i("output_width", 1)?)),
            ("sampling_ratio", Attribute::i64(n.i("sampling_ratio", 0)?)),
            (
                "spatial_scale",
                Attribute::f64(n.f("spatial_scale", 1.0)? as f64),
            ),
        ],
    )?)
}
