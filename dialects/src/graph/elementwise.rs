//! Elementwise ops (numpy broadcasting, ONNX semantics).
//!
//! Binary ops broadcast numpy-style; operands share one element type (ONNX
//! has no implicit promotion: insert a `graph.cast`). Comparisons and logical
//! ops produce `i1`. Float-only ops (exp, log, sigmoid, ...) reject integer
//! tensors in the verifier.

use crate::infer::{broadcast_result, same_as_first};
use ge_ir::attributes::Attribute;
use ge_ir::body::{Body, OpId};
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{
    AttrDef, AttrKind, CustomSyntax, InferCtx, OpDef, OpError, OperandDef, Trait,
    TypeConstraint as C,
};
use ge_ir::parser::{OpParser, PResult};
use ge_ir::printer::OpPrinter;
use ge_ir::tensor::{binary, broadcast_index, broadcast_shape, Tensor};
use ge_ir::{DType, Type};

/// The assembly format every compute op of the graph dialect uses.
pub const COMPUTE_FORMAT: &str = "operands attr-dict `:` functional-type(operands, results)";

// ---- type constraints -------------------------------------------------------

const NUMERIC_DTYPES: &[DType] = &[
    DType::F64,
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::I64,
    DType::I32,
    DType::I16,
    DType::I8,
    DType::U64,
    DType::U32,
    DType::U16,
    DType::U8,
    DType::Index,
];
const SIGNED_DTYPES: &[DType] = &[
    DType::F64,
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::I64,
    DType::I32,
    DType::I16,
    DType::I8,
    DType::Index,
];
/// Tensors of any number type (not `i1`).
pub const NUMERIC: C = C::TensorOf(NUMERIC_DTYPES);
/// Tensors of floats or signed integers.
pub const SIGNED: C = C::TensorOf(SIGNED_DTYPES);

const BINARY: &[OperandDef] = &[
    OperandDef::one("lhs", NUMERIC),
    OperandDef::one("rhs", NUMERIC),
];
const COMPARE: &[OperandDef] = &[
    OperandDef::one("lhs", C::AnyTensor),
    OperandDef::one("rhs", C::AnyTensor),
];
const LOGICAL: &[OperandDef] = &[
    OperandDef::one("lhs", C::BoolTensor),
    OperandDef::one("rhs", C::BoolTensor),
];
const SIGNED_UNARY: &[OperandDef] = &[OperandDef::one("input", SIGNED)];
const NUMERIC_UNARY: &[OperandDef] = &[OperandDef::one("input", NUMERIC)];
const FLOAT_UNARY: &[OperandDef] = &[OperandDef::one("input", C::FloatTensor)];
const OUT: &[OperandDef] = &[OperandDef::one("output", C::AnyTensor)];
const BOOL_OUT: &[OperandDef] = &[OperandDef::one("output", C::BoolTensor)];

const BINARY_TRAITS: &[Trait] = &[
    Trait::Pure,
    Trait::Elementwise,
    Trait::Broadcastable,
    Trait::SameOperandsElementType,
];
const COMMUTATIVE_TRAITS: &[Trait] = &[
    Trait::Pure,
    Trait::Commutative,
    Trait::Elementwise,
    Trait::Broadcastable,
    Trait::SameOperandsElementType,
];
const UNARY_TRAITS: &[Trait] = &[
    Trait::Pure,
    Trait::Elementwise,
    Trait::SameOperandsAndResultType,
];
const IDEMPOTENT_TRAITS: &[Trait] = &[
    Trait::Pure,
    Trait::Elementwise,
    Trait::Idempotent,
    Trait::SameOperandsAndResultType,
];
const INVOLUTION_TRAITS: &[Trait] = &[
    Trait::Pure,
    Trait::Elementwise,
    Trait::Involution,
    Trait::SameOperandsAndResultType,
];

// ---- shared helpers -----------------------------------------------------------

fn infer_binary(cx: &InferCtx) -> Result<Vec<Type>, String> {
    broadcast_result(cx, None)
}

fn infer_bool_binary(cx: &InferCtx) -> Result<Vec<Type>, String> {
    broadcast_result(cx, Some(DType::I1))
}

fn out_dtype(cx: &SemCtx, a: &Tensor) -> DType {
    cx.result_dtype(0).unwrap_or(a.dtype)
}

/// Operand `i`, or an error (semantics never index out of bounds).
fn arg<'a>(x: &[&'a Tensor], i: usize) -> Result<&'a Tensor, String> {
    x.get(i)
        .copied()
        .ok_or_else(|| format!("expects at least {} operands, got {}", i + 1, x.len()))
}

/// A binary op with broadcasting, producing the declared result dtype.
fn bin(
    cx: &SemCtx,
    x: &[&Tensor],
    ff: impl Fn(f64, f64) -> f64,
    fi: impl Fn(i64, i64) -> i64,
) -> Result<Vec<Tensor>, String> {
    let (a, b) = (arg(x, 0)?, arg(x, 1)?);
    Ok(vec![binary(a, b, out_dtype(cx, a), ff, fi)?])
}

/// A comparison or logical op: `i1` result.
fn bool_bin(
    x: &[&Tensor],
    ff: impl Fn(f64, f64) -> bool,
    fi: impl Fn(i64, i64) -> bool,
) -> Result<Vec<Tensor>, String> {
    let (a, b) = (arg(x, 0)?, arg(x, 1)?);
    Ok(vec![binary(
        a,
        b,
        DType::I1,
        |p, q| ff(p, q) as i64 as f64,
        |p, q| fi(p, q) as i64,
    )?])
}

fn unary_f(x: &[&Tensor], f: impl Fn(f64) -> f64) -> Result<Vec<Tensor>, String> {
    Ok(vec![arg(x, 0)?.map_f(f)])
}

fn unary(
    x: &[&Tensor],
    ff: impl Fn(f64) -> f64,
    fi: impl Fn(i64) -> i64,
) -> Result<Vec<Tensor>, String> {
    Ok(vec![arg(x, 0)?.map(ff, fi)])
}

fn int_div_check(b: &Tensor, what: &str) -> Result<(), String> {
    if !b.dtype.is_float() && b.to_i64().contains(&0) {
        return Err(format!("integer {what} by zero"));
    }
    Ok(())
}

/// numpy's `maximum`/`minimum`: a NaN operand gives NaN.
fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// Integer power by squaring (wrapping); `None` for negative exponents.
fn int_pow(base: i64, exp: i64) -> Option<i64> {
    if exp < 0 {
        return None;
    }
    let (mut b, mut e, mut r) = (base, exp as u64, 1i64);
    while e > 0 {
        if e & 1 == 1 {
            r = r.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        e >>= 1;
    }
    Some(r)
}

/// The error function to ~1e-15: a series of positive terms for |x| < 3
/// (no cancellation), the continued fraction of erfc beyond.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let r = if a < 3.0 {
        // erf(a) = 2/sqrt(pi) * exp(-a^2) * sum_n 2^n a^(2n+1) / (1*3*...*(2n+1))
        let a2 = a * a;
        let (mut term, mut sum) = (a, a);
        for n in 1..400 {
            term *= 2.0 * a2 / (2 * n + 1) as f64;
            sum += term;
            if term <= sum * 1e-17 {
                break;
            }
        }
        2.0 / std::f64::consts::PI.sqrt() * (-a2).exp() * sum
    } else if a < 27.0 {
        // erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))
        let mut f = a;
        for k in (1..=120).rev() {
            f = a + (k as f64 / 2.0) / f;
        }
        1.0 - (-a * a).exp() / (std::f64::consts::PI.sqrt() * f)
    } else {
        1.0
    };
    r.copysign(x)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

// ---- binary arithmetic ----------------------------------------------------------

fn sem_add(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bin(cx, x, |a, b| a + b, i64::wrapping_add)
}

fn sem_sub(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bin(cx, x, |a, b| a - b, i64::wrapping_sub)
}

fn sem_mul(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bin(cx, x, |a, b| a * b, i64::wrapping_mul)
}

fn sem_div(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    int_div_check(arg(x, 1)?, "division")?;
    bin(cx, x, |a, b| a / b, i64::wrapping_div)
}

fn sem_pow(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let (a, b) = (arg(x, 0)?, arg(x, 1)?);
    if !a.dtype.is_float() && !b.dtype.is_float() && b.to_i64().iter().any(|&e| e < 0) {
        return Err("integers to negative integer powers are not allowed".into());
    }
    bin(cx, x, f64::powf, |p, q| int_pow(p, q).unwrap_or(0))
}

fn sem_max(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bin(cx, x, nan_max, i64::max)
}

fn sem_min(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bin(cx, x, nan_min, i64::min)
}

fn sem_mod(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    int_div_check(arg(x, 1)?, "modulo")?;
    if cx.i64_attr("fmod").unwrap_or(0) != 0 {
        // C fmod: the sign of the dividend.
        bin(cx, x, |a, b| a % b, i64::wrapping_rem)
    } else {
        // Python/numpy mod: the sign of the divisor.
        bin(
            cx,
            x,
            |a, b| {
                let r = a % b;
                if r != 0.0 && (r < 0.0) != (b < 0.0) {
                    r + b
                } else {
                    r
                }
            },
            |a, b| {
                let r = a.wrapping_rem(b);
                if r != 0 && (r < 0) != (b < 0) {
                    r + b
                } else {
                    r
                }
            },
        )
    }
}

fn verify_mod(body: &Body, op: OpId) -> Result<(), OpError> {
    let d = body.op(op);
    let fmod = d.attr("fmod").and_then(|a| a.as_int()).unwrap_or(0);
    if fmod != 0 && fmod != 1 {
        return Err(format!("attribute 'fmod' must be 0 or 1, but got {fmod}").into());
    }
    let Some(t) = operand_type(body, op, 0) else {
        return Ok(());
    };
    if fmod == 0 && t.dtype().is_some_and(|d| d.is_float()) {
        return Err(format!(
            "operand 'lhs' of type '{t}' is floating-point: expected fmod = 1 (C fmod), as ONNX Mod requires"
        )
        .into());
    }
    Ok(())
}

pub static ADD: OpDef = OpDef {
    name: "graph.add",
    summary: "Elementwise addition with broadcasting",
    description:
        "`%z = graph.add %x, %y : (T1, T2) -> T` computes `x + y` with numpy broadcasting \
                  (ONNX Add). Integers wrap on overflow.",
    operands: BINARY,
    results: OUT,
    traits: COMMUTATIVE_TRAITS,
    format: Some(COMPUTE_FORMAT),
    infer: Some(infer_binary),
    semantics: Some(sem_add),
    ..OpDef::DEFAULT
};

pub static SUB: OpDef = OpDef {
    name: "graph.sub",
    summary: "Elementwise subtraction with broadcasting",
    description: "`x - y` with numpy broadcasting (ONNX Sub). Integers wrap on overflow.",
    operands: BINARY,
    results: OUT,
    traits: BINARY_TRAITS,
    format: Some(COMPUTE_FORMAT),
    infer: Some(infer_binary),
    semantics: Some(sem_sub),
    ..OpDef::DEFAULT
};

pub static MUL: OpDef = OpDef {
    name: "graph.mul",
    summary: "Elementwise multiplication with broadcasting",
    description: "`x * y` with numpy broadcasting (ONNX Mul). Integers wrap on overflow.",
    operands: BINARY,
    results: OUT,
    traits: COMMUTATIVE_TRAITS,
    format: Some(COMPUTE_FORMAT),
    infer: Some(infer_binary),
    semantics: Some(sem_mul),
    ..OpDef::DEFAULT
};

pub static DIV: OpDef = OpDef {
    name: "graph.div",
    summary: "Elementwise division with broadcasting (integer division truncates)",
    description: "`x / y` with numpy broadcasting (ONNX Div). Integer division truncates toward \
                  zero; an integer division by zero is a runtime error of the interpreter.",
    operands: BINARY,
    results: OUT,
    traits: BINARY_TRAITS,
    format: Some(COMPUTE_FORMAT),
    infer: Some(infer_binary),
    semantics: Some(sem_div),
    ..OpDef::DEFAULT
};

pub static POW: OpDef = OpDef {
    name: "graph.pow",
    summary: "Elementwise power with broadcasting",
    description:
        "`x ^ y` with numpy broadcasting (ONNX Pow). The exponent may have another number \
                  type than the base; the result has the base's type. Integer bases with negative \
                  integer exponents are an error (as in numpy).",
    operands: &[
        OperandDef::one("base", NUMERIC),
        OperandDef::one("exponent", NUMERIC),
    ],
    results: OUT,
    traits: &[Trait::Pure, Trait::Elementwise, Trait::Broadcastable],
    format: Some(COMPUTE_FORMAT),
    infer: Some(infer_binary),
    semantics: Some(sem_pow),
    ..OpDef::DEFAULT
};

pub static MAX: OpDef = OpDef {
    name: "graph.max",
    summary: "Elementwise maximum with broadcasting",
    description: "`max(x, y)` with numpy broadcasting (ONNX Max of two inputs). A NaN operand \
                  gives NaN, like numpy's `maximum`.",
    operands: BINARY,
    results: OUT,
    traits: COMMUTATIVE_TRAITS,
    format: Some(COMPUTE_FORMAT),
    infer: Some(infer_binary),
    semantics: Some(sem_max),
    ..OpDef::DEFAULT
};

pub static MIN: OpDef = OpDef {
    name: "graph.min",
    summary: "Elementwise minimum with broadcasting",
    description: "`min(x, y)` with numpy broadcasting (ONNX Min of two inputs). A NaN operand \
                  gives NaN, like numpy's `minimum`.",
    operands: BINARY,
    results: OUT,
    traits: COMMUTATIVE_TRAITS,
    format: Some(COMPUTE_FORMAT),
    infer: Some(infer_binary),
    semantics: Some(sem_min),
    ..OpDef::DEFAULT
};

pub static MOD: OpDef = OpDef {
    name: "graph.mod",
    summary: "Elementwise remainder with broadcasting",
    description: "ONNX Mod. With `fmod = 0` (the default, integers only) the result takes the sign \
                  of the divisor, like Python's `%` and numpy's `mod`; with `fmod = 1` it takes the \
                  sign of the dividend, like C's `fmod` (required for floating-point operands). \
                  An integer modulo by zero is a runtime error of the interpreter.",
    operands: BINARY,
    results: OUT,
    attrs: &[AttrDef::with_default(
        "fmod",
        AttrKind::I64,
        "0",
        "0: sign of the divisor (integers only); 1: sign of the dividend (C fmod)",
    )],
    traits: BINARY_TRAITS,
    format: Some(COMPUTE_FORMAT),
    verify: Some(verify_mod),
    infer: Some(infer_binary),
    semantics: Some(sem_mod),
    ..OpDef::DEFAULT
};

// ---- unary ---------------------------------------------------------------------

fn sem_neg(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary(x, |v| -v, i64::wrapping_neg)
}

fn sem_abs(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary(x, f64::abs, i64::wrapping_abs)
}

fn sem_exp(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::exp)
}

fn sem_log(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::ln)
}

fn sem_sqrt(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::sqrt)
}

fn sem_rsqrt(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, |v| 1.0 / v.sqrt())
}

fn sem_reciprocal(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, |v| 1.0 / v)
}

fn sem_relu(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary(x, |v| if v > 0.0 { v } else { 0.0 }, |v| v.max(0))
}

fn sem_leaky_relu(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let alpha = cx.f64_attr("alpha").unwrap_or(0.01);
    unary_f(x, |v| if v >= 0.0 { v } else { alpha * v })
}

fn sem_sigmoid(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, sigmoid)
}

fn sem_tanh(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::tanh)
}

fn sem_gelu(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    match cx.str_attr("approximate").unwrap_or("none") {
        "none" => unary_f(x, |v| 0.5 * v * (1.0 + erf(v / std::f64::consts::SQRT_2))),
        "tanh" => {
            let k = (2.0 / std::f64::consts::PI).sqrt();
            unary_f(x, |v| {
                0.5 * v * (1.0 + (k * (v + 0.044715 * v * v * v)).tanh())
            })
        }
        other => Err(format!(
            "attribute 'approximate' must be \"none\" or \"tanh\", got {other:?}"
        )),
    }
}

fn sem_silu(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, |v| v * sigmoid(v))
}

fn sem_erf(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, erf)
}

fn sem_floor(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::floor)
}

fn sem_ceil(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::ceil)
}

fn sem_round(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::round_ties_even)
}

fn sem_sign(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary(
        x,
        |v| {
            if v.is_nan() {
                v
            } else if v > 0.0 {
                1.0
            } else if v < 0.0 {
                -1.0
            } else {
                0.0
            }
        },
        i64::signum,
    )
}

fn sem_sin(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::sin)
}

fn sem_cos(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::cos)
}

fn verify_leaky_relu(body: &Body, op: OpId) -> Result<(), OpError> {
    match body.op(op).attr("alpha").and_then(|a| a.as_float()) {
        Some(a) if !a.is_finite() => {
            Err(format!("attribute 'alpha' must be finite, but got {a}").into())
        }
        _ => Ok(()),
    }
}

/// Unary op definitions differ only in name, docs, constraint, traits and kernel.
macro_rules! unary_op {
    ($id:ident, $name:literal, $summary:literal, $desc:literal, $operands:expr, $traits:expr, $sem:expr) => {
        pub static $id: OpDef = OpDef {
            name: $name,
            summary: $summary,
            description: $desc,
            operands: $operands,
            results: OUT,
            traits: $traits,
            format: Some(COMPUTE_FORMAT),
            infer: Some(same_as_first),
            semantics: Some($sem),
            ..OpDef::DEFAULT
        };
    };
}

unary_op!(
    NEG,
    "graph.neg",
    "-x elementwise",
    "ONNX Neg on floats and signed integers (integers wrap: -MIN = MIN).",
    SIGNED_UNARY,
    INVOLUTION_TRAITS,
    sem_neg
);
unary_op!(
    ABS,
    "graph.abs",
    "|x| elementwise",
    "ONNX Abs on any number type (integers wrap: |MIN| = MIN).",
    NUMERIC_UNARY,
    IDEMPOTENT_TRAITS,
    sem_abs
);
unary_op!(
    EXP,
    "graph.exp",
    "e^x elementwise",
    "ONNX Exp on floating-point tensors.",
    FLOAT_UNARY,
    UNARY_TRAITS,
    sem_exp
);
unary_op!(
    LOG,
    "graph.log",
    "Natural logarithm elementwise",
    "ONNX Log: ln(x) on floating-point tensors; log(0) = -inf, log(x < 0) = NaN.",
    FLOAT_UNARY,
    UNARY_TRAITS,
    sem_log
);
unary_op!(
    SQRT,
    "graph.sqrt",
    "Square root elementwise",
    "ONNX Sqrt on floating-point tensors; sqrt(x < 0) = NaN.",
    FLOAT_UNARY,
    UNARY_TRAITS,
    sem_sqrt
);
unary_op!(
    RSQRT,
    "graph.rsqrt",
    "Reciprocal square root elementwise",
    "1 / sqrt(x) on floating-point tensors (Ascend's Rsqrt; ONNX spells it Reciprocal(Sqrt)).",
    FLOAT_UNARY,
    UNARY_TRAITS,
    sem_rsqrt
);
unary_op!(
    RECIPROCAL,
    "graph.reciprocal",
    "1/x elementwise",
    "ONNX Reciprocal on floating-point tensors; 1/0 = inf.",
    FLOAT_UNARY,
    UNARY_TRAITS,
    sem_reciprocal
);
unary_op!(
    RELU,
    "graph.relu",
    "max(x, 0) elementwise",
    "ONNX Relu on floats and signed integers.",
    SIGNED_UNARY,
    IDEMPOTENT_TRAITS,
    sem_relu
);
unary_op!(
    SIGMOID,
    "graph.sigmoid",
    "Logistic sigmoid elementwise",
    "ONNX Sigmoid: 1 / (1 + e^-x) on floating-point tensors.",
    FLOAT_UNARY,
    UNARY_TRAITS,
    sem_sigmoid
);
unary_op!(
    TANH,
    "graph.tanh",
    "Hyperbolic tangent elementwise",
    "ONNX Tanh on floating-point tensors.",
    FLOAT_UNARY,
    UNARY_TRAITS,
    sem_tanh
);
unary_op!(
    SILU,
    "graph.silu",
    "SiLU (swish) elementwise",
    "x * sigmoid(x) on floating-point tensors (PyTorch SiLU; ONNX spells it Mul(x, Sigmoid(x))).",
    FLOAT_UNARY,
    UNARY_TRAITS,
    sem_silu
);
unary_op!(
    ERF,
    "graph.erf",
    "Gauss error function elementwise",
    "ONNX Erf on floating-point tensors. The reference kernel is accurate to about 1e-15 \
     before rounding to the element type.",
    FLOAT_UNARY,
    UNARY_TRAITS,
    sem_erf
);
unary_op!(
    FLOOR,
    "graph.floor",
    "Round down elementwise",
    "ONNX Floor on floating-point tensors.",
    FLOAT_UNARY,
    IDEMPOTENT_TRAITS,
    sem_floor
);
unary_op!(
    CEIL,
    "graph.ceil",
    "Round up elementwise",
    "ONNX Ceil on floating-point tensors.",
    FLOAT_UNARY,
    IDEMPOTENT_TRAITS,
    sem_ceil
);
unary_op!(
    ROUND,
    "graph.round",
    "Round half to even elementwise",
    "ONNX Round on floating-point tensors: halves round to the nearest even integer \
     (numpy `round`).",
    FLOAT_UNARY,
    IDEMPOTENT_TRAITS,
    sem_round
);
unary_op!(
    SIGN,
    "graph.sign",
    "Sign elementwise (-1, 0 or 1)",
    "ONNX Sign on any number type; sign(NaN) = NaN.",
    NUMERIC_UNARY,
    IDEMPOTENT_TRAITS,
    sem_sign
);
unary_op!(
    SIN,
    "graph.sin",
    "Sine elementwise",
    "ONNX Sin on floating-point tensors.",
    FLOAT_UNARY,
    UNARY_TRAITS,
    sem_sin
);
unary_op!(
    COS,
    "graph.cos",
    "Cosine elementwise",
    "ONNX Cos on floating-point tensors.",
    FLOAT_UNARY,
    UNARY_TRAITS,
    sem_cos
);

pub static LEAKY_RELU: OpDef = OpDef {
    name: "graph.leaky_relu",
    summary: "Leaky rectified linear unit elementwise",
    description: "ONNX LeakyRelu: `x` for x >= 0, `alpha * x` otherwise, on floating-point \
                  tensors. `%y = graph.leaky_relu %x {alpha = 0.2 : f32} : (T) -> T`.",
    operands: FLOAT_UNARY,
    results: OUT,
    attrs: &[AttrDef::with_default(
        "alpha",
        AttrKind::F64,
        "0.01",
        "slope for negative inputs",
    )],
    traits: UNARY_TRAITS,
    format: Some(COMPUTE_FORMAT),
    verify: Some(verify_leaky_relu),
    infer: Some(same_as_first),
    semantics: Some(sem_leaky_relu),
    ..OpDef::DEFAULT
};

pub static GELU: OpDef = OpDef {
    name: "graph.gelu",
    summary: "Gaussian error linear unit elementwise",
    description: "ONNX Gelu (opset 20) on floating-point tensors. `approximate = \"none\"` (the \
                  default): `0.5 x (1 + erf(x / sqrt 2))`; `approximate = \"tanh\"`: \
                  `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.",
    operands: FLOAT_UNARY,
    results: OUT,
    attrs: &[AttrDef::with_default(
        "approximate",
        AttrKind::Enum(&["none", "tanh"]),
        "\"none\"",
        "\"none\" (exact, with erf) or \"tanh\" (the tanh approximation)",
    )],
    traits: UNARY_TRAITS,
    format: Some(COMPUTE_FORMAT),
    infer: Some(same_as_first),
    semantics: Some(sem_gelu),
    ..OpDef::DEFAULT
};

// ---- clip ------------------------------------------------------------------------

/// The operand indices of clip's `min` and `max` (from `operand_segment_sizes`,
/// else in order).
fn clip_bounds(n: usize, segments: Option<Vec<i64>>) -> (Option<usize>, Option<usize>) {
    match segments.as_deref() {
        Some([1, a, b]) if (1 + a + b) as usize == n => {
            let min = (*a == 1).then_some(1);
            let max = (*b == 1).then_some(1 + *a as usize);
            (min, max)
        }
        _ => ((n > 1).then_some(1), (n > 2).then_some(2)),
    }
}

/// Type of operand `i`, if the op has it (verifiers run even when the
/// operand count is wrong).
fn operand_type(body: &Body, op: OpId, i: usize) -> Option<Type> {
    body.op(op).operands().get(i).map(|&v| body.value_type(v))
}

fn segments(body: &Body, op: OpId) -> Option<Vec<i64>> {
    body.op(op)
        .attr("operand_segment_sizes")
        .and_then(|a| a.as_i64_array())
}

fn sem_clip(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let input = arg(x, 0)?;
    let (imin, imax) = clip_bounds(x.len(), segments(cx.body, cx.op));
    let bound = |i: Option<usize>, what: &str| -> Result<Option<&Tensor>, String> {
        match i {
            None => Ok(None),
            Some(i) => {
                let t = arg(x, i)?;
                if t.len() != 1 {
                    return Err(format!(
                        "'{what}' must be a scalar, but has shape {:?}",
                        t.shape
                    ));
                }
                Ok(Some(t))
            }
        }
    };
    let (lo, hi) = (bound(imin, "min")?, bound(imax, "max")?);
    // ONNX: y = min(max(x, min), max); NaN stays NaN (numpy clip).
    let out = if input.dtype.is_float() {
        let lo = lo.map_or(f64::NEG_INFINITY, |t| t.get_f(0));
        let hi = hi.map_or(f64::INFINITY, |t| t.get_f(0));
        input.map_f(|v| if v.is_nan() { v } else { v.max(lo).min(hi) })
    } else {
        let lo = lo.map_or(i64::MIN, |t| t.get_i(0));
        let hi = hi.map_or(i64::MAX, |t| t.get_i(0));
        input.map(|v| v, |v| v.max(lo).min(hi))
    };
    Ok(vec![out])
}

fn verify_clip(body: &Body, op: OpId) -> Result<(), OpError> {
    let d = body.op(op);
    let Some(input) = operand_type(body, op, 0) else {
        return Ok(());
    };
    let (imin, imax) = clip_bounds(d.operands().len(), segments(body, op));
    for (i, what) in [(imin, "min"), (imax, "max")] {
        let Some(t) = i.and_then(|i| operand_type(body, op, i)) else {
            continue;
        };
        if t.dtype() != input.dtype() {
            return Err(format!(
                "operand '{what}' must have the element type of operand 'input' ('{input}'), but got '{t}'"
            )
            .into());
        }
        let tt = t.as_tensor();
        if tt.and_then(|tt| tt.rank()).is_some_and(|r| r != 0) {
            return Err(format!(
                "operand '{what}' must be a scalar tensor (rank 0), but got '{t}'"
            )
            .into());
        }
    }
    Ok(())
}

fn parse_clip(p: &mut OpParser<'_, '_, '_>) -> PResult<()> {
    let mut refs = vec![p.parse_operand()?];
    let mut seg = [1i64, 0, 0];
    if p.try_keyword("min") {
        refs.push(p.parse_operand()?);
        seg[1] = 1;
    }
    if p.try_keyword("max") {
        refs.push(p.parse_operand()?);
        seg[2] = 1;
    }
    p.parse_optional_attr_dict()?;
    p.expect_punct(":")?;
    let (ins, outs) = p.parse_functional_type()?;
    p.operands = p.resolve_operands(&refs, &ins)?;
    p.result_types = Some(outs);
    p.attrs
        .retain(|(n, _)| n.as_str() != "operand_segment_sizes");
    p.attrs.push((
        ge_ir::Ident::new("operand_segment_sizes"),
        Attribute::i64_array(&seg),
    ));
    Ok(())
}

fn print_clip(pr: &mut OpPrinter<'_, '_>, op: OpId) {
    let d = pr.body.op(op);
    let operands = d.operands().to_vec();
    let (imin, imax) = clip_bounds(operands.len(), segments(pr.body, op));
    if let Some(&x) = operands.first() {
        pr.write(" ");
        pr.value(x);
    }
    for (i, kw) in [(imin, " min "), (imax, " max ")] {
        if let Some(&v) = i.and_then(|i| operands.get(i)) {
            pr.write(kw);
            pr.value(v);
        }
    }
    pr.attr_dict(op, &[], false);
    pr.write(" : ");
    let ins = pr.body.operand_types(op);
    let outs = pr.body.result_types(op);
    pr.functional_type(&ins, &outs);
}

pub static CLIP: OpDef = OpDef {
    name: "graph.clip",
    summary: "Clamp elementwise to optional scalar bounds",
    description: "ONNX Clip (opset 13): `min(max(x, lo), hi)` where the bounds are optional \
                  rank-0 operands of the input's element type; a missing bound does not clip. \
                  Syntax: `%y = graph.clip %x min %lo max %hi : (T, tensor<f32>, tensor<f32>) -> T`; \
                  either `min %lo` or `max %hi` may be left out (the generic form records which \
                  in `operand_segment_sizes`). NaN inputs stay NaN.",
    operands: &[
        OperandDef::one("input", NUMERIC),
        OperandDef::optional("min", NUMERIC),
        OperandDef::optional("max", NUMERIC),
    ],
    results: OUT,
    traits: &[Trait::Pure, Trait::Elementwise],
    syntax: Some(CustomSyntax {
        parse: parse_clip,
        print: print_clip,
    }),
    verify: Some(verify_clip),
    infer: Some(same_as_first),
    semantics: Some(sem_clip),
    ..OpDef::DEFAULT
};

// ---- cast ------------------------------------------------------------------------

/// The element type named by `to` (a scalar type, or a tensor type's element type).
fn cast_target(a: Option<Attribute>) -> Result<DType, String> {
    let a = a.ok_or("requires attribute 'to' (the target element type)")?;
    let t = a
        .as_type()
        .ok_or_else(|| format!("attribute 'to' must be a type, but got '{a}'"))?;
    match t.data() {
        ge_ir::TypeData::Scalar(d) => Ok(*d),
        _ => Err(format!(
            "attribute 'to' must be an element type such as f16 or i32, but got '{t}'"
        )),
    }
}

fn infer_cast(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let to = cast_target(cx.attr("to"))?;
    let t = *cx.operand_types.first().ok_or("expects an operand")?;
    Ok(vec![t.with_dtype(to)])
}

fn sem_cast(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let to = cast_target(cx.attr("to"))?;
    Ok(vec![arg(x, 0)?.cast(to)])
}

pub static CAST: OpDef = OpDef {
    name: "graph.cast",
    summary: "Convert elements to another type",
    description: "ONNX Cast: `%y = graph.cast %x {to = f16} : (tensor<4xf32>) -> tensor<4xf16>`. \
                  Conversions follow numpy's `astype`: floats round to the nearest representable \
                  value, float to integer truncates toward zero (NaN becomes 0), integers wrap to \
                  the target width, and anything to `i1` is `x != 0`.",
    operands: &[OperandDef::one("input", C::AnyTensor)],
    results: OUT,
    attrs: &[AttrDef::required(
        "to",
        AttrKind::Type,
        "the target element type",
    )],
    traits: &[
        Trait::Pure,
        Trait::Elementwise,
        Trait::SameOperandsAndResultShape,
    ],
    format: Some(COMPUTE_FORMAT),
    infer: Some(infer_cast),
    semantics: Some(sem_cast),
    ..OpDef::DEFAULT
};

// ---- where -----------------------------------------------------------------------

fn infer_where(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let dt = cx.operand_types.get(1).and_then(|t| t.dtype());
    broadcast_result(cx, dt)
}

fn verify_where(body: &Body, op: OpId) -> Result<(), OpError> {
    let (Some(tx), Some(ty)) = (operand_type(body, op, 1), operand_type(body, op, 2)) else {
        return Ok(());
    };
    if tx.dtype() != ty.dtype() {
        return Err(format!(
            "operands 'x' and 'y' must have the same element type, but got '{tx}' and '{ty}'"
        )
        .into());
    }
    Ok(())
}

fn sem_where(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let (c, a, b) = (arg(x, 0)?, arg(x, 1)?, arg(x, 2)?);
    let shape = broadcast_shape(&broadcast_shape(&c.shape, &a.shape)?, &b.shape)?;
    let (ic, ia, ib) = (
        broadcast_index(&c.shape, &shape)?,
        broadcast_index(&a.shape, &shape)?,
        broadcast_index(&b.shape, &shape)?,
    );
    let dt = out_dtype(cx, a);
    let pick = |k: usize| c.get_i(ic[k]) != 0;
    Ok(vec![if dt.is_float() {
        Tensor::from_f64(
            shape,
            dt,
            (0..ic.len())
                .map(|k| {
                    if pick(k) {
                        a.get_f(ia[k])
                    } else {
                        b.get_f(ib[k])
                    }
                })
                .collect(),
        )
    } else {
        Tensor::from_i64(
            shape,
            dt,
            (0..ic.len())
                .map(|k| {
                    if pick(k) {
                        a.get_i(ia[k])
                    } else {
                        b.get_i(ib[k])
                    }
                })
                .collect(),
        )
    }])
}

pub static WHERE: OpDef = OpDef {
    name: "graph.where",
    summary: "Select elements from two tensors by a condition",
    description: "ONNX Where: `%z = graph.where %cond, %x, %y : (tensor<..xi1>, T, T) -> T` picks \
                  `x` where `cond` is true and `y` elsewhere; all three broadcast numpy-style.",
    operands: &[
        OperandDef::one("cond", C::BoolTensor),
        OperandDef::one("x", C::AnyTensor),
        OperandDef::one("y", C::AnyTensor),
    ],
    results: OUT,
    traits: &[Trait::Pure, Trait::Elementwise, Trait::Broadcastable],
    format: Some(COMPUTE_FORMAT),
    verify: Some(verify_where),
    infer: Some(infer_where),
    semantics: Some(sem_where),
    ..OpDef::DEFAULT
};

// ---- comparisons and logic ---------------------------------------------------------

fn sem_equal(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bool_bin(x, |a, b| a == b, |a, b| a == b)
}
fn sem_less(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bool_bin(x, |a, b| a < b, |a, b| a < b)
}
fn sem_less_equal(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bool_bin(x, |a, b| a <= b, |a, b| a <= b)
}
fn sem_greater(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bool_bin(x, |a, b| a > b, |a, b| a > b)
}
fn sem_greater_equal(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bool_bin(x, |a, b| a >= b, |a, b| a >= b)
}
fn sem_and(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bool_bin(x, |a, b| a != 0.0 && b != 0.0, |a, b| a != 0 && b != 0)
}
fn sem_or(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bool_bin(x, |a, b| a != 0.0 || b != 0.0, |a, b| a != 0 || b != 0)
}
fn sem_xor(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    bool_bin(
        x,
        |a, b| (a != 0.0) != (b != 0.0),
        |a, b| (a != 0) != (b != 0),
    )
}
fn sem_not(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let a = arg(x, 0)?;
    Ok(vec![Tensor::from_i64(
        a.shape.clone(),
        DType::I1,
        a.to_i64().into_iter().map(|v| (v == 0) as i64).collect(),
    )])
}

/// Comparison and binary logic definitions differ only in name, docs and kernel.
macro_rules! bool_binary_op {
    ($id:ident, $name:literal, $summary:literal, $desc:literal, $operands:expr, $traits:expr, $sem:expr) => {
        pub static $id: OpDef = OpDef {
            name: $name,
            summary: $summary,
            description: $desc,
            operands: $operands,
            results: BOOL_OUT,
            traits: $traits,
            format: Some(COMPUTE_FORMAT),
            infer: Some(infer_bool_binary),
            semantics: Some($sem),
            ..OpDef::DEFAULT
        };
    };
}

bool_binary_op!(
    EQUAL,
    "graph.equal",
    "x == y elementwise (i1 result)",
    "ONNX Equal with numpy broadcasting; operands share one element type. NaN == NaN is false.",
    COMPARE,
    COMMUTATIVE_TRAITS,
    sem_equal
);
bool_binary_op!(
    LESS,
    "graph.less",
    "x < y elementwise (i1 result)",
    "ONNX Less with numpy broadcasting; operands share one element type.",
    COMPARE,
    BINARY_TRAITS,
    sem_less
);
bool_binary_op!(
    LESS_EQUAL,
    "graph.less_equal",
    "x <= y elementwise (i1 result)",
    "ONNX LessOrEqual with numpy broadcasting; operands share one element type.",
    COMPARE,
    BINARY_TRAITS,
    sem_less_equal
);
bool_binary_op!(
    GREATER,
    "graph.greater",
    "x > y elementwise (i1 result)",
    "ONNX Greater with numpy broadcasting; operands share one element type.",
    COMPARE,
    BINARY_TRAITS,
    sem_greater
);
bool_binary_op!(
    GREATER_EQUAL,
    "graph.greater_equal",
    "x >= y elementwise (i1 result)",
    "ONNX GreaterOrEqual with numpy broadcasting; operands share one element type.",
    COMPARE,
    BINARY_TRAITS,
    sem_greater_equal
);
bool_binary_op!(
    AND,
    "graph.and",
    "Logical and of i1 tensors",
    "ONNX And with numpy broadcasting.",
    LOGICAL,
    COMMUTATIVE_TRAITS,
    sem_and
);
bool_binary_op!(
    OR,
    "graph.or",
    "Logical or of i1 tensors",
    "ONNX Or with numpy broadcasting.",
    LOGICAL,
    COMMUTATIVE_TRAITS,
    sem_or
);
bool_binary_op!(
    XOR,
    "graph.xor",
    "Logical exclusive or of i1 tensors",
    "ONNX Xor with numpy broadcasting.",
    LOGICAL,
    COMMUTATIVE_TRAITS,
    sem_xor
);

pub static NOT: OpDef = OpDef {
    name: "graph.not",
    summary: "Logical negation of an i1 tensor",
    description: "ONNX Not: `%y = graph.not %x : (tensor<4xi1>) -> tensor<4xi1>`.",
    operands: &[OperandDef::one("input", C::BoolTensor)],
    results: BOOL_OUT,
    traits: INVOLUTION_TRAITS,
    format: Some(COMPUTE_FORMAT),
    infer: Some(same_as_first),
    semantics: Some(sem_not),
    ..OpDef::DEFAULT
};

pub static OPS: &[&OpDef] = &[
    &ADD,
    &SUB,
    &MUL,
    &DIV,
    &POW,
    &MAX,
    &MIN,
    &MOD,
    &NEG,
    &ABS,
    &EXP,
    &LOG,
    &SQRT,
    &RSQRT,
    &RECIPROCAL,
    &RELU,
    &LEAKY_RELU,
    &SIGMOID,
    &TANH,
    &GELU,
    &SILU,
    &ERF,
    &FLOOR,
    &CEIL,
    &ROUND,
    &SIGN,
    &SIN,
    &COS,
    &CLIP,
    &CAST,
    &WHERE,
    &EQUAL,
    &LESS,
    &LESS_EQUAL,
    &GREATER,
    &GREATER_EQUAL,
    &NOT,
    &AND,
    &OR,
    &XOR,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_reference_values() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (2.9, 0.999_958_902_121_900_4),
            (3.0, 0.999_977_909_503_001_4),
            (4.0, 0.999_999_984_582_742_1),
            (-1.5, -0.966_105_146_475_310_7),
        ] {
            let got = erf(x);
            assert!((got - want).abs() < 1e-14, "erf({x}) = {got}, want {want}");
        }
        assert!(erf(f64::NAN).is_nan());
        assert_eq!(erf(f64::INFINITY), 1.0);
    }

    #[test]
    fn int_pow_wraps_and_rejects_negative() {
        assert_eq!(int_pow(3, 4), Some(81));
        assert_eq!(int_pow(2, 0), Some(1));
        assert_eq!(int_pow(2, -1), None);
    }
}
