//! SwiGLU (ONNX SwiGLU, opset 28): the gated activation of Llama-style MLPs,
//! `Swish_alpha(a) · b` on two inputs of one shape.
//!
//! [`swiglu`] is the element function, shared with the runtime's native
//! kernel (runtime/src/kernels/swiglu.rs); it rounds to the element type
//! where the ONNX reference casts (the sigmoid, the swish, the product), so
//! f16 and bf16 results are the reference's.

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{round_f, Tensor};
use ge_ir::Type;

type SemResult = Result<Vec<Tensor>, String>;

/// `a · sigmoid(alpha · a) · b`, each factor rounded by `round` (to the
/// element type) as the reference rounds it.
pub fn swiglu(a: f64, b: f64, alpha: f64, round: impl Fn(f64) -> f64) -> f64 {
    let sig = round(1.0 / (1.0 + (-alpha * a).exp()));
    let swish = round(a * sig);
    round(swish * b)
}

fn infer_swiglu(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let (ta, tb) = (cx.operand_types[0], cx.operand_types[1]);
    if ta.dtype() != tb.dtype() {
        return Err(format!(
            "operands 'a' '{ta}' and 'b' '{tb}' must have one element type"
        ));
    }
    if let (Some(a), Some(b)) = (dims(ta, "a")?, dims(tb, "b")?) {
        let same = a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.compatible(*y));
        if !same {
            return Err(format!(
                "operands 'a' '{ta}' and 'b' '{tb}' must have one shape (SwiGLU does not broadcast)"
            ));
        }
    }
    Ok(vec![ta])
}

fn sem_swiglu(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let (a, b) = (t[0], t[1]);
    if a.shape != b.shape {
        return Err(format!(
            "operands 'a' {:?} and 'b' {:?} must have one shape",
            a.shape, b.shape
        ));
    }
    let alpha = Swiglu::attrs(cx).alpha();
    let dt = result_dtype(cx, 0, a.dtype);
    let y = a
        .to_f64()
        .into_iter()
        .zip(b.to_f64())
        .map(|(x, y)| swiglu(x, y, alpha, |v| round_f(dt, v)))
        .collect();
    Ok(vec![Tensor::from_f64(a.shape.clone(), dt, y)])
}

def_op! {
    /// Swish-gated linear unit (ONNX SwiGLU)
    ///
    /// `y = a · sigmoid(alpha · a) · b` elementwise, `a` the gate and `b` the value, of one
    /// shape (no broadcasting). As the ONNX reference, the sigmoid and the swish are rounded to
    /// the element type before they are multiplied.
    pub Swiglu = "graph.swiglu" {
        operands { a: FloatTensor, b: FloatTensor },
        results { y: FloatTensor },
        attrs {
            /// the gate's sigmoid slope
            alpha: F64 = 1.0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_swiglu,
        semantics: sem_swiglu,
        interfaces [
            Cost::TRANSCENDENTAL,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Elementwise,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&SWIGLU];

#[cfg(test)]
mod tests {
    use super::*;

    /// swish(0) = 0 and a large gate passes `a · b` through.
    #[test]
    fn gate_values() {
        assert_eq!(swiglu(0.0, 5.0, 1.0, |v| v), 0.0);
        assert!((swiglu(40.0, 0.5, 1.0, |v| v) - 20.0).abs() < 1e-12);
        let half = swiglu(1.0, 1.0, 0.5, |v| v);
        assert!((half - 1.0 / (1.0 + (-0.5f64).exp())).abs() < 1e-12);
    }
}
