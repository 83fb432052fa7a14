//! Inverse trigonometric ops (ONNX Asin, Acos, Atan); the runtime runs them
//! in its fused elementwise loops.

use crate::infer::same_as_first;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{OpDef, Trait};
use ge_ir::tensor::Tensor;

use super::elementwise::{unary_f, COMPUTE_FORMAT};

const TRAITS: &[Trait] = &[
    Trait::Pure,
    Trait::Elementwise,
    Trait::SameOperandsAndResultType,
];

fn sem_asin(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::asin)
}

fn sem_acos(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::acos)
}

fn sem_atan(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::atan)
}

/// The three ops differ only in name, docs and semantics.
macro_rules! trig_op {
    ($ty:ident, $name:literal, $summary:literal, $desc:literal, $sem:expr) => {
        def_op! {
            #[doc = $summary]
            #[doc = ""]
            #[doc = $desc]
            pub $ty = $name {
                operands { input: FloatTensor },
                results { output: FloatTensor },
                traits: TRAITS,
                format: COMPUTE_FORMAT,
                infer: same_as_first,
                semantics: $sem,
                interfaces [
                    Cost::TRANSCENDENTAL,
                    FusionPattern::Elementwise,
                    CPU_ENGINES,
                    PrecisionClass::Gray,
                    Layout::FollowsInputs,
                    KernelFamily::Elementwise,
                ],
                es,
            }
        }
    };
}

trig_op!(
    Asin,
    "graph.asin",
    "Arcsine elementwise",
    "ONNX Asin on floating-point tensors: in [-pi/2, pi/2]; NaN outside [-1, 1].",
    sem_asin
);
trig_op!(
    Acos,
    "graph.acos",
    "Arccosine elementwise",
    "ONNX Acos on floating-point tensors: in [0, pi]; NaN outside [-1, 1].",
    sem_acos
);
trig_op!(
    Atan,
    "graph.atan",
    "Arctangent elementwise",
    "ONNX Atan on floating-point tensors: in (-pi/2, pi/2).",
    sem_atan
);

pub static OPS: &[&OpDef] = &[&ASIN, &ACOS, &ATAN];
