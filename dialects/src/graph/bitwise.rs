//! Bitwise ops on integer tensors (ONNX BitwiseAnd/Or/Xor/Not); the runtime
//! runs them in its fused elementwise loops.

use crate::infer::same_as_first;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::OpDef;
use ge_ir::tensor::{binary, Tensor};

use super::elementwise::{infer_binary, COMMUTATIVE_TRAITS, COMPUTE_FORMAT};

/// A bitwise binary op on the two's-complement bits (wrapped to the element
/// type afterwards, so unsigned types keep their width).
fn bits(x: &[&Tensor], f: fn(i64, i64) -> i64) -> Result<Vec<Tensor>, String> {
    let [a, b] = x else {
        return Err(format!("expects 2 operands, got {}", x.len()));
    };
    if a.dtype.is_float() || b.dtype.is_float() {
        return Err("bitwise ops take integer tensors".into());
    }
    Ok(vec![binary(a, b, a.dtype, |_, _| f64::NAN, f)?])
}

fn sem_and(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bits(x, |a, b| a & b)
}

fn sem_or(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bits(x, |a, b| a | b)
}

fn sem_xor(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bits(x, |a, b| a ^ b)
}

fn sem_not(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let [a] = x else {
        return Err(format!("expects 1 operand, got {}", x.len()));
    };
    if a.dtype.is_float() {
        return Err("bitwise ops take integer tensors".into());
    }
    Ok(vec![a.map(|_| f64::NAN, |v| !v)])
}

/// The binary bitwise ops differ only in name, docs and semantics.
macro_rules! bitwise_op {
    ($ty:ident, $name:literal, $summary:literal, $desc:literal, $sem:expr) => {
        def_op! {
            #[doc = $summary]
            #[doc = ""]
            #[doc = $desc]
            pub $ty = $name {
                operands { lhs: IntTensor, rhs: IntTensor },
                results { output: IntTensor },
                traits: COMMUTATIVE_TRAITS,
                format: COMPUTE_FORMAT,
                infer: infer_binary,
                semantics: $sem,
                interfaces [
                    Cost::ELEMENTWISE,
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

bitwise_op!(
    BitwiseAnd,
    "graph.bitwise_and",
    "Bitwise and of integer tensors, with broadcasting",
    "ONNX BitwiseAnd: `x & y` on the two's-complement bits, numpy broadcasting.",
    sem_and
);
bitwise_op!(
    BitwiseOr,
    "graph.bitwise_or",
    "Bitwise or of integer tensors, with broadcasting",
    "ONNX BitwiseOr: `x | y` on the two's-complement bits, numpy broadcasting.",
    sem_or
);
bitwise_op!(
    BitwiseXor,
    "graph.bitwise_xor",
    "Bitwise exclusive or of integer tensors, with broadcasting",
    "ONNX BitwiseXor: `x ^ y` on the two's-complement bits, numpy broadcasting.",
    sem_xor
);

def_op! {
    /// Bitwise negation of an integer tensor
    ///
    /// ONNX BitwiseNot: every bit flipped (`~x`; for unsigned types `MAX - x`).
    pub BitwiseNot = "graph.bitwise_not" {
        operands { input: IntTensor },
        results { output: IntTensor },
        traits [Pure, Elementwise, Involution, SameOperandsAndResultType],
        format: COMPUTE_FORMAT,
        infer: same_as_first,
        semantics: sem_not,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Elementwise,
            CPU_ENGINES,
            PrecisionClass::Gray,
            Layout::FollowsInputs,
            KernelFamily::Elementwise,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&BITWISE_AND, &BITWISE_OR, &BITWISE_XOR, &BITWISE_NOT];
