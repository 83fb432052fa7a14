//! Elementwise ops (numpy broadcasting, ONNX semantics).

use crate::infer::{broadcast_result, same_as_first};
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef, OperandDef, Trait, TypeConstraint as C};
use ge_ir::tensor::{binary, Tensor};

/// The assembly format every compute op of the graph dialect uses.
pub const COMPUTE_FORMAT: &str = "operands attr-dict `:` functional-type(operands, results)";

fn infer_binary(cx: &InferCtx) -> Result<Vec<ge_ir::Type>, String> {
    broadcast_result(cx, None)
}

fn out_dtype(cx: &SemCtx, a: &Tensor) -> ge_ir::DType {
    cx.result_dtype(0).unwrap_or(a.dtype)
}

fn sem_add(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    Ok(vec![binary(
        x[0],
        x[1],
        out_dtype(cx, x[0]),
        |a, b| a + b,
        i64::wrapping_add,
    )?])
}

fn sem_sub(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    Ok(vec![binary(
        x[0],
        x[1],
        out_dtype(cx, x[0]),
        |a, b| a - b,
        i64::wrapping_sub,
    )?])
}

fn sem_mul(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    Ok(vec![binary(
        x[0],
        x[1],
        out_dtype(cx, x[0]),
        |a, b| a * b,
        i64::wrapping_mul,
    )?])
}

fn sem_div(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    if !x[1].dtype.is_float() && x[1].to_i64().contains(&0) {
        return Err("integer division by zero".into());
    }
    Ok(vec![binary(
        x[0],
        x[1],
        out_dtype(cx, x[0]),
        |a, b| a / b,
        i64::wrapping_div,
    )?])
}

fn sem_relu(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    Ok(vec![
        x[0].map(|v| if v > 0.0 { v } else { 0.0 }, |v| v.max(0))
    ])
}

fn sem_neg(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    Ok(vec![x[0].map(|v| -v, i64::wrapping_neg)])
}

fn sem_exp(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    Ok(vec![x[0].map_f(f64::exp)])
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
    semantics: Some(sem_add),
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
    semantics: Some(sem_sub),
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
    semantics: Some(sem_mul),
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
    semantics: Some(sem_div),
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
    semantics: Some(sem_relu),
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
    semantics: Some(sem_neg),
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
    semantics: Some(sem_exp),
    ..OpDef::DEFAULT
};

pub static OPS: &[&OpDef] = &[&ADD, &SUB, &MUL, &DIV, &RELU, &NEG, &EXP];
