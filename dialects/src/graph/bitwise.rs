//! Bitwise ops on integer tensors (ONNX BitwiseAnd/Or/Xor/Not, BitShift); the
//! runtime runs and/or/xor/not in its fused elementwise loops and bit_shift
//! with its own kernel (runtime/src/kernels/bit_shift.rs), on [`shift`].

use super::opkit::verify_by_infer;
use crate::infer::same_as_first;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::InferCtx;
use ge_ir::opdef::OpDef;
use ge_ir::tensor::{binary, Tensor};
use ge_ir::{DType, Type};

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

// ---- bit_shift ------------------------------------------------------------------

/// `a` of type `dt` shifted by `b` bits (ONNX BitShift, the reference's rules
/// for every case): a shift that is negative or not below the type's width
/// gives 0 (right shifts of negative signed values: -1); right shifts of
/// signed values are arithmetic, of unsigned values logical; left shifts
/// drop the bits past the width (the result wraps to the type).
pub fn shift(a: i64, b: i64, dt: DType, left: bool) -> i64 {
    let width = dt.bit_width() as i64;
    if b < 0 || b >= width {
        return if !left && dt.is_signed_int() && a < 0 {
            -1
        } else {
            0
        };
    }
    let b = b as u32;
    match (left, dt.is_signed_int()) {
        (true, _) => ((a as u64) << b) as i64,
        (false, true) => a >> b,
        // Unsigned values are held zero-extended (u64 as its bits).
        (false, false) => ((a as u64) >> b) as i64,
    }
}

fn sem_bit_shift(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let [a, b] = x else {
        return Err(format!("expects 2 operands, got {}", x.len()));
    };
    if a.dtype.is_float() || b.dtype.is_float() {
        return Err("bit_shift takes integer tensors".into());
    }
    let left = BitShift::attrs(cx).direction() == Some("left");
    let dt = a.dtype;
    Ok(vec![binary(
        a,
        b,
        dt,
        |_, _| f64::NAN,
        |p, q| shift(p, q, dt, left),
    )?])
}

def_op! {
    /// Shift the bits of integers, with broadcasting
    ///
    /// ONNX BitShift (and its opset-26 extension to signed types): `x << y` or `x >> y`
    /// elementwise with numpy broadcasting. A shift amount that is negative or at least the
    /// type's width gives 0 (-1 for a right shift of a negative signed value); right shifts
    /// of signed values are arithmetic; left shifts wrap to the type.
    pub BitShift = "graph.bit_shift" {
        operands { lhs: IntTensor, rhs: IntTensor },
        results { output: IntTensor },
        attrs {
            /// left or right
            direction: Enum(&["left", "right"]),
        },
        // Not `Elementwise`: it runs on a kernel of its own, not in the fused loops.
        traits [Pure, Broadcastable, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        infer: infer_binary,
        semantics: sem_bit_shift,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Shift,
        ],
        es,
    }
}

// ---- bitcast ------------------------------------------------------------------

/// The result type `to` of a bitcast of `from`: the same storage width (a
/// byte or more; bool counts as its byte, as numpy's view does).
fn bitcast_target(to: Option<Type>, from: DType) -> Result<DType, String> {
    let to = match to.map(|t| t.data()) {
        Some(ge_ir::TypeData::Scalar(d)) => *d,
        _ => return Err("requires attribute 'to' (the result element type)".into()),
    };
    let sub_byte = |d: DType| d != DType::I1 && d.bit_width() < 8;
    if sub_byte(from) || sub_byte(to) || from.byte_size() != to.byte_size() {
        return Err(format!(
            "cannot reinterpret {from} as {to}: the element types must have the same width of whole bytes"
        ));
    }
    Ok(to)
}

fn infer_bitcast(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    let from = t
        .dtype()
        .ok_or_else(|| format!("'{t}' has no element type"))?;
    let to = bitcast_target(Bitcast::attrs(cx).to(), from)?;
    Ok(vec![t.with_dtype(to)])
}

fn sem_bitcast(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let [a] = x else {
        return Err(format!("expects 1 operand, got {}", x.len()));
    };
    let to = bitcast_target(Bitcast::attrs(cx).to(), a.dtype)?;
    let bytes = crate::data::tensor_to_bytes(a);
    Ok(vec![crate::data::tensor_from_bytes(
        &bytes,
        a.shape.clone(),
        to,
    )?])
}

def_op! {
    /// Reinterpret the bits of each element as another type of the same width (ONNX BitCast)
    ///
    /// The storage bytes stay as they are and are read as `to` (little-endian), e.g. f32 1.0
    /// as i32 1065353216. Both types must be whole bytes of the same width (bool is one byte,
    /// as in numpy's `view`); the shape is kept.
    pub Bitcast = "graph.bitcast" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// the result element type
            to: Type,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_bitcast,
        semantics: sem_bitcast,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Copy,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[
    &BITWISE_AND,
    &BITWISE_OR,
    &BITWISE_XOR,
    &BITWISE_NOT,
    &BIT_SHIFT,
    &BITCAST,
];
