//! Fused activation epilogues (`activation` attribute of conv2d and gemm): the
//! op applies the activation to its result, so conv + bias + relu is one
//! kernel. Epilogue formation (rewrites/rules/epilogue.rr) fills it in.

use ge_ir::interp::SemCtx;
use ge_ir::opdef::{AttrDef, AttrKind};
use ge_ir::tensor::Tensor;

pub const NAMES: &[&str] = &[
    "none",
    "relu",
    "relu6",
    "leaky_relu",
    "sigmoid",
    "tanh",
    "gelu",
    "silu",
];

pub const ACTIVATION: AttrDef = AttrDef::with_default(
    "activation",
    AttrKind::Enum(NAMES),
    "\"none\"",
    "activation applied to the result (epilogue): none, relu, relu6 (clip to [0, 6]), leaky_relu, sigmoid, tanh, gelu, silu",
);

pub const ALPHA: AttrDef = AttrDef::with_default(
    "activation_alpha",
    AttrKind::F64,
    "0.01",
    "slope of leaky_relu when it is the epilogue",
);

/// The activation as a function on f64 (gelu is the exact erf form).
pub fn function(name: &str, alpha: f64) -> Option<fn(f64, f64) -> f64> {
    let _ = alpha;
    Some(match name {
        "none" => |x, _| x,
        "relu" => |x, _| if x > 0.0 { x } else { 0.0 },
        // As graph.clip: NaN stays NaN.
        "relu6" => |x, _| x.clamp(0.0, 6.0),
        "leaky_relu" => |x, a| if x >= 0.0 { x } else { a * x },
        "sigmoid" => |x, _| 1.0 / (1.0 + (-x).exp()),
        "tanh" => |x, _| x.tanh(),
        "gelu" => |x, _| 0.5 * x * (1.0 + super::elementwise::erf(x / std::f64::consts::SQRT_2)),
        "silu" => |x, _| x / (1.0 + (-x).exp()),
        _ => return None,
    })
}

/// Apply the op's epilogue to its result.
pub fn apply(cx: &SemCtx, t: Tensor) -> Result<Tensor, String> {
    let name = cx.str_attr("activation").unwrap_or("none");
    if name == "none" {
        return Ok(t);
    }
    let alpha = cx.f64_attr("activation_alpha").unwrap_or(0.01);
    let f = function(name, alpha).ok_or_else(|| format!("unknown activation '{name}'"))?;
    Ok(t.map_f(|x| f(x, alpha)))
}
