//! ONNX Resize (opsets 10-19) and Upsample (7-9) as `graph.resize`
//! (dialects/src/graph/index.rs), whose attributes are ONNX's. The `roi`,
//! `scales` and `sizes` inputs become attributes when they are constants,
//! else values read at run time (`graph.specialize`, docs/architecture.md
//! "Execution modes": the concrete op is built, inferred and verified when
//! the model runs). `roi` is read only under `tf_crop_and_resize`, as ONNX
//! says.

use super::{invalid, one, unsupported, Cx, Node, Res};
use ge_dialects::graph::index::{
    ASPECT_POLICIES as POLICIES, COORD_MODES, NEAREST_MODES, RESIZE_MODES as MODES,
};
use ge_dialects::graph::specialize::ValueKind::{self, Floats, Ints};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

/// A string attribute that must be one of `all`.
fn one_of(n: &Node, name: &str, default: &str, all: &[&str]) -> Res<String> {
    let v = n.s(name, default)?;
    if !all.contains(&v.as_str()) {
        return Err(unsupported(n, format!("with {name} '{v}'")));
    }
    Ok(v)
}

/// The attributes and value operands of a `graph.resize`.
struct Parts<'a> {
    attrs: Vec<(&'a str, Attribute)>,
    values: Vec<(ValueId, &'a str, ValueKind)>,
}

impl<'a> Parts<'a> {
    /// Input `v` (absent when empty) as attribute `name`: its constant value
    /// or a value operand read at run time. Whether it was given.
    fn input(&mut self, cx: &Cx, v: Option<ValueId>, name: &'a str, kind: ValueKind) -> Res<bool> {
        let Some(v) = v else { return Ok(false) };
        let len = cx.e.ty(v).as_tensor().and_then(|t| t.num_elements());
        if len == Some(0) {
            return Ok(false);
        }
        if !cx.is_const(v) {
            self.values.push((v, name, kind));
            return Ok(true);
        }
        let attr = if kind == Ints {
            let c = cx.const_i64s(v, name)?;
            if c.is_empty() {
                return Ok(false);
            }
            Attribute::i64_array(&c)
        } else {
            let c = cx.const_f64s(v, name)?;
            if c.is_empty() {
                return Ok(false);
            }
            Attribute::array(c.iter().map(|&x| Attribute::f32(x as f32)).collect())
        };
        self.attrs.push((name, attr));
        Ok(true)
    }

    /// The op: plain when every input was a constant, else specialised.
    fn build(self, cx: &mut Cx, n: &Node, x: ValueId) -> Res<Vec<ValueId>> {
        if self.values.is_empty() {
            return one(cx.e.op("graph.resize", &[x], self.attrs)?);
        }
        cx.specialize(n, "graph.resize", &[x], self.attrs, &self.values, 1)
    }
}

pub fn resize(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let mode = one_of(n, "mode", "nearest", MODES)?;
    let mut p = Parts {
        attrs: vec![("mode", Attribute::string(&mode))],
        values: vec![],
    };
    if n.opset < 11 {
        // Resize-10: scales only, coordinates as Upsample's.
        p.attrs.push((
            "coordinate_transformation_mode",
            Attribute::string("asymmetric"),
        ));
        p.attrs.push(("nearest_mode", Attribute::string("floor")));
        if !p.input(cx, n.opt_input(1), "scales", Floats)? {
            return Err(invalid(n, "needs scales"));
        }
        return p.build(cx, n, x);
    }
    let ctm = one_of(
        n,
        "coordinate_transformation_mode",
        "half_pixel",
        COORD_MODES,
    )?;
    let nearest = one_of(n, "nearest_mode", "round_prefer_floor", NEAREST_MODES)?;
    let policy = one_of(n, "keep_aspect_ratio_policy", "stretch", POLICIES)?;
    let antialias = n.i("antialias", 0)?;
    let exclude = n.i("exclude_outside", 0)?;
    if mode == "nearest" && antialias != 0 {
        return Err(unsupported(n, "in mode 'nearest' with antialias"));
    }
    if mode == "nearest" && exclude != 0 {
        return Err(unsupported(n, "in mode 'nearest' with exclude_outside"));
    }
    p.attrs.extend([
        ("coordinate_transformation_mode", Attribute::string(&ctm)),
        ("nearest_mode", Attribute::string(&nearest)),
        ("keep_aspect_ratio_policy", Attribute::string(&policy)),
        (
            "cubic_coeff_a",
            Attribute::f64(n.f("cubic_coeff_a", -0.75)? as f64),
        ),
        ("exclude_outside", Attribute::i64(exclude)),
        ("antialias", Attribute::i64(antialias)),
        (
            "extrapolation_value",
            Attribute::f64(n.f("extrapolation_value", 0.0)? as f64),
        ),
    ]);
    if let Some(axes) = n.ints("axes") {
        p.attrs.push(("axes", Attribute::i64_array(&axes)));
    }
    if ctm == "tf_crop_and_resize" && !p.input(cx, n.opt_input(1), "roi", Floats)? {
        return Err(invalid(
            n,
            "coordinate_transformation_mode 'tf_crop_and_resize' needs roi",
        ));
    }
    let scales = p.input(cx, n.opt_input(2), "scales", Floats)?;
    let sizes = p.input(cx, n.opt_input(3), "sizes", Ints)?;
    match (scales, sizes) {
        (true, true) => Err(invalid(n, "takes scales or sizes, not both")),
        (false, false) => Err(invalid(n, "needs scales or sizes")),
        _ => p.build(cx, n, x),
    }
}

/// Upsample (deprecated since opset 10) is Resize with asymmetric
/// coordinates and floor rounding, as the onnx version converter maps it.
pub fn upsample(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let mode = match n.s("mode", "nearest")?.as_str() {
        "nearest" => "nearest",
        "linear" | "bilinear" => "linear",
        m => return Err(unsupported(n, format!("in mode '{m}'"))),
    };
    let mut p = Parts {
        attrs: vec![
            ("mode", Attribute::string(mode)),
            (
                "coordinate_transformation_mode",
                Attribute::string("asymmetric"),
            ),
            ("nearest_mode", Attribute::string("floor")),
        ],
        values: vec![],
    };
    if p.input(cx, n.opt_input(1), "scales", Floats)? {
        return p.build(cx, n, x);
    }
    let scales: Vec<f64> = match n.floats("scales") {
        Some(s) => s.iter().map(|&v| v as f64).collect(),
        // Upsample-1 (NCHW): height_scale and width_scale.
        None if n.has("height_scale") || n.has("width_scale") => vec![
            1.0,
            1.0,
            n.f("height_scale", 1.0)? as f64,
            n.f("width_scale", 1.0)? as f64,
        ],
        None => return Err(invalid(n, "requires scales")),
    };
    p.attrs.push((
        "scales",
        Attribute::array(scales.iter().map(|&v| Attribute::f32(v as f32)).collect()),
    ));
    p.build(cx, n, x)
}
