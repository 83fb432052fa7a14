//! Fused activation epilogues (`activation` attribute of conv2d and gemm): the
//! op applies the activation to its result, so conv + bias + relu is one
//! kernel. Epilogue formation (rewrites/rules/epilogue.rr) fills it in.

use ge_ir::tensor::Tensor;

/// The values of the `activation` attribute.
pub const NAMES: &[&str] = &[
    "none",
    "relu",
    "relu6",
    "leaky_relu",
    "sigmoid",
    "tanh",
    "gelu",
    "silu",
    "hard_swish",
];

/// The activation as a function on f64 (gelu is the exact erf form).
pub fn function(name: &str, alpha: f64) -> Option<fn(f64, f64) -> f64> {
    let _ = alpha;
    Some(match name {
        "none" => |x, _| x,
        // As graph.relu: NaN stays NaN.
        "relu" => |x, _| super::elementwise::relu(x),
        // As graph.clip: NaN stays NaN.
        "relu6" => |x, _| x.clamp(0.0, 6.0),
        "leaky_relu" => |x, a| if x >= 0.0 { x } else { a * x },
        "sigmoid" => |x, _| 1.0 / (1.0 + (-x).exp()),
        "tanh" => |x, _| x.tanh(),
        "gelu" => |x, _| 0.5 * x * (1.0 + super::elementwise::erf(x / std::f64::consts::SQRT_2)),
        "silu" => |x, _| x / (1.0 + (-x).exp()),
        // As graph.hard_swish (MobileNetV3's activation).
        "hard_swish" => |x, _| super::elementwise::hard_swish(x),
        _ => return None,
    })
}

/// Apply an op's epilogue (its `activation` and `activation_alpha`
/// attributes) to its result.
pub fn apply(name: &str, alpha: f64, t: Tensor) -> Result<Tensor, String> {
    if name == "none" {
        return Ok(t);
    }
    let f = function(name, alpha).ok_or_else(|| format!("unknown activation '{name}'"))?;
    Ok(t.map_f(|x| f(x, alpha)))
}
