//! Elementwise ops (numpy broadcasting, ONNX semantics).

use crate::infer::{broadcast_result, same_as_first};
use ge_ir::opdef::{InferCtx, OpDef, OperandDef, Trait, TypeConstraint as C};

/// The assembly format every compute op of the graph dialect uses.
pub const COMPUTE_FORMAT: &str = "operands attr-dict `:` functional-type(operands, results)";

fn infer_binary(cx: &InferCtx) -> Result<Vec<ge_ir::Type>, String> {
    broadcast_result(cx, None)
}

const BINARY: &[OperandDef] = &[
    OperandDef::one("lhs", C::AnyTensor),
    OperandDef::one("rhs", C::AnyTensor),
];
const UNARY: &[OperandDef] = &[OperandDef::one("input", C::AnyTensor)];
const FLOAT_UNARY: &[OperandDef] = &[OperandDef::one("input", C::FloatTensor)];
const OUT: &[OperandDef] = &[OperandDef::one("output", C::AnyTensor)];

pub static ADD: OpDef = OpDef {
    name: "graph.add",
    summary: "Elementwise addition with broadcasting",
    operands: BINARY,
    results: OUT,
    traits: &[
        Trait::Pure,
        Trait::Commutative,
        Trait::Elementwise,
        Trait::Broadcastable,
        Trait::SameOperandsElementType,
    ],
    format: Some(COMPUTE_FORMAT),
    infer: Some(infer_binary),
    ..OpDef::DEFAULT
};

pub static SUB: OpDef = OpDef {
    name: "graph.sub",
    summary: "Elementwise subtraction with broadcasting",
    operands: BINARY,
    results: OUT,
    traits: &[
        Trait::Pure,
        Trait::Elementwise,
        Trait::Broadcastable,
        Trait::SameOperandsElementType,
    ],
    format: Some(COMPUTE_FORMAT),
    infer: Some(infer_binary),
    ..OpDef::DEFAULT
};

pub static MUL: OpDef = OpDef {
    name: "graph.mul",
    summary: "Elementwise multiplication with broadcasting",
    operands: BINARY,
    results: OUT,
    traits: &[
        Trait::Pure,
        Trait::Commutative,
        Trait::Elementwise,
        Trait::Broadcastable,
        Trait::SameOperandsElementType,
    ],
    format: Some(COMPUTE_FORMAT),
    infer: Some(infer_binary),
    ..OpDef::DEFAULT
};

pub static DIV: OpDef = OpDef {
    name: "graph.div",
    summary: "Elementwise division with broadcasting (integer division truncates)",
    operands: BINARY,
    results: OUT,
    traits: &[
        Trait::Pure,
        Trait::Elementwise,
        Trait::Broadcastable,
        Trait::SameOperandsElementType,
    ],
    format: Some(COMPUTE_FORMAT),
    infer: Some(infer_binary),
    ..OpDef::DEFAULT
};

pub static RELU: OpDef = OpDef {
    name: "graph.relu",
    summary: "max(x, 0) elementwise",
    operands: UNARY,
    results: OUT,
    traits: &[
        Trait::Pure,
        Trait::Elementwise,
        Trait::Idempotent,
        Trait::SameOperandsAndResultType,
    ],
    format: Some(COMPUTE_FORMAT),
    infer: Some(same_as_first),
    ..OpDef::DEFAULT
};

pub static NEG: OpDef = OpDef {
    name: "graph.neg",
    summary: "-x elementwise",
    operands: UNARY,
    results: OUT,
    traits: &[
        Trait::Pure,
        Trait::Elementwise,
        Trait::Involution,
        Trait::SameOperandsAndResultType,
    ],
    format: Some(COMPUTE_FORMAT),
    infer: Some(same_as_first),
    ..OpDef::DEFAULT
};

pub static EXP: OpDef = OpDef {
    name: "graph.exp",
    summary: "e^x elementwise",
    operands: FLOAT_UNARY,
    results: OUT,
    traits: &[
        Trait::Pure,
        Trait::Elementwise,
        Trait::SameOperandsAndResultType,
    ],
    format: Some(COMPUTE_FORMAT),
    infer: Some(same_as_first),
    ..OpDef::DEFAULT
};
