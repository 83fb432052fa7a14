//! Elementwise ops (numpy broadcasting, ONNX semantics).
//!
//! Binary ops broadcast numpy-style; operands share one element type (ONNX
//! has no implicit promotion: insert a `graph.cast`). Comparisons and logical
//! ops produce `i1`. Float-only ops (exp, log, sigmoid, ...) reject integer
//! tensors in the verifier.

use crate::infer::{broadcast_result, same_as_first};
use crate::interfaces::*;
use ge_ir::attributes::Attribute;
use ge_ir::body::{Body, OpId};
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{CustomSyntax, InferCtx, OpDef, OpError, Trait, TypeConstraint as C};
use ge_ir::parser::{OpParser, PResult};
use ge_ir::printer::OpPrinter;
use ge_ir::tensor::{binary, broadcast_index, broadcast_shape, Tensor};
use ge_ir::{DType, Type};

/// The assembly format every compute op of the graph dialect uses.
pub const COMPUTE_FORMAT: &str = "operands attr-dict `:` functional-type(operands, results)";

// ---- type constraints -------------------------------------------------------

/// The number types and then `i1` (ordered types: max and min take bool).
const ORDERED_DTYPES: &[DType] = &[
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
    DType::I1,
];
const NUMERIC_DTYPES: &[DType] = ORDERED_DTYPES.split_at(ORDERED_DTYPES.len() - 1).0;
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
/// Tensors of any number type or `i1` (ONNX ReduceMax/ReduceMin take bool,
/// where max is logical or and min logical and).
pub const ORDERED: C = C::TensorOf(ORDERED_DTYPES);
/// Tensors of floats or signed integers.
pub const SIGNED: C = C::TensorOf(SIGNED_DTYPES);

const BINARY_TRAITS: &[Trait] = &[
    Trait::Pure,
    Trait::Elementwise,
    Trait::Broadcastable,
    Trait::SameOperandsElementType,
];
pub(super) const COMMUTATIVE_TRAITS: &[Trait] = &[
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

pub(super) fn infer_binary(cx: &InferCtx) -> Result<Vec<Type>, String> {
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

pub(crate) fn unary_f(x: &[&Tensor], f: impl Fn(f64) -> f64) -> Result<Vec<Tensor>, String> {
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

/// The logistic function (the reference; the runtime's f64 kernels call it too).
pub fn sigmoid(x: f64) -> f64 {
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
    if Mod::attrs(cx).fmod() != 0 {
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
    let fmod = Mod::attrs(d).fmod();
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

/// Arithmetic binary ops differ only in name, docs, traits, kernel and
/// precision class.
macro_rules! binary_op {
    ($ty:ident, $name:literal, $summary:literal, $desc:literal, $traits:expr, $sem:expr, $prec:expr) => {
        def_op! {
            #[doc = $summary]
            #[doc = ""]
            #[doc = $desc]
            pub $ty = $name {
                operands { lhs: NUMERIC, rhs: NUMERIC },
                results { output: AnyTensor },
                traits: $traits,
                format: COMPUTE_FORMAT,
                infer: infer_binary,
                semantics: $sem,
                interfaces [
                    Cost::ELEMENTWISE,
                    FusionPattern::Elementwise,
                    VECTOR_ENGINES,
                    $prec,
                    Layout::FollowsInputs,
                    KernelFamily::Elementwise,
                ],
                es,
            }
        }
    };
}

binary_op!(
    Add,
    "graph.add",
    "Elementwise addition with broadcasting",
    "`%z = graph.add %x, %y : (T1, T2) -> T` computes `x + y` with numpy broadcasting (ONNX \
     Add). Integers wrap on overflow.",
    COMMUTATIVE_TRAITS,
    sem_add,
    PrecisionClass::Gray
);
binary_op!(
    Sub,
    "graph.sub",
    "Elementwise subtraction with broadcasting",
    "`x - y` with numpy broadcasting (ONNX Sub). Integers wrap on overflow.",
    BINARY_TRAITS,
    sem_sub,
    PrecisionClass::Gray
);
binary_op!(
    Mul,
    "graph.mul",
    "Elementwise multiplication with broadcasting",
    "`x * y` with numpy broadcasting (ONNX Mul). Integers wrap on overflow.",
    COMMUTATIVE_TRAITS,
    sem_mul,
    PrecisionClass::Gray
);
binary_op!(
    Div,
    "graph.div",
    "Elementwise division with broadcasting (integer division truncates)",
    "`x / y` with numpy broadcasting (ONNX Div). Integer division truncates toward zero; an \
     integer division by zero is a runtime error of the interpreter.",
    BINARY_TRAITS,
    sem_div,
    PrecisionClass::Black
);
binary_op!(
    Max,
    "graph.max",
    "Elementwise maximum with broadcasting",
    "`max(x, y)` with numpy broadcasting (ONNX Max of two inputs). A NaN operand gives NaN, \
     like numpy's `maximum`.",
    COMMUTATIVE_TRAITS,
    sem_max,
    PrecisionClass::Gray
);
binary_op!(
    Min,
    "graph.min",
    "Elementwise minimum with broadcasting",
    "`min(x, y)` with numpy broadcasting (ONNX Min of two inputs). A NaN operand gives NaN, \
     like numpy's `minimum`.",
    COMMUTATIVE_TRAITS,
    sem_min,
    PrecisionClass::Gray
);

def_op! {
    /// Elementwise power with broadcasting
    ///
    /// `x ^ y` with numpy broadcasting (ONNX Pow). The exponent may have another number type
    /// than the base; the result has the base's type. Integer bases with negative integer
    /// exponents are an error (as in numpy).
    pub Pow = "graph.pow" {
        operands { base: NUMERIC, exponent: NUMERIC },
        results { output: AnyTensor },
        traits [Pure, Elementwise, Broadcastable],
        format: COMPUTE_FORMAT,
        infer: infer_binary,
        semantics: sem_pow,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Elementwise,
            VECTOR_ENGINES,
            PrecisionClass::Black,
            Layout::FollowsInputs,
            KernelFamily::Elementwise,
        ],
        es,
    }
}

def_op! {
    /// Elementwise remainder with broadcasting
    ///
    /// ONNX Mod. With `fmod = 0` (the default, integers only) the result takes the sign of the
    /// divisor, like Python's `%` and numpy's `mod`; with `fmod = 1` it takes the sign of the
    /// dividend, like C's `fmod` (required for floating-point operands). An integer modulo by
    /// zero is a runtime error of the interpreter.
    pub Mod = "graph.mod" {
        operands { lhs: NUMERIC, rhs: NUMERIC },
        results { output: AnyTensor },
        attrs {
            /// 0: sign of the divisor (integers only); 1: sign of the dividend (C fmod)
            fmod: I64 = 0,
        },
        traits: BINARY_TRAITS,
        format: COMPUTE_FORMAT,
        verify: verify_mod,
        infer: infer_binary,
        semantics: sem_mod,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Elementwise,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            Layout::FollowsInputs,
            KernelFamily::Elementwise,
        ],
        es(method = mod_),
    }
}

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

/// `max(x, 0)` with NaN kept (as ONNX's reference, numpy's `maximum`, and
/// torch's relu): graph.relu, the `relu` epilogue of conv2d and gemm
/// (`activation.rs`) and the recurrent ops' `Relu`. -0 gives +0.
pub fn relu(v: f64) -> f64 {
    if v > 0.0 || v.is_nan() {
        v
    } else {
        0.0
    }
}

fn sem_relu(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary(x, relu, |v| v.max(0))
}

fn sem_leaky_relu(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let alpha = LeakyRelu::attrs(cx).alpha();
    unary_f(x, |v| if v >= 0.0 { v } else { alpha * v })
}

fn sem_sigmoid(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, sigmoid)
}

fn sem_tanh(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, f64::tanh)
}

fn sem_gelu(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    match Gelu::attrs(cx).approximate() {
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

fn sem_square(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, |v| v * v)
}

/// `x * clamp(x / 6 + 1/2, 0, 1)`: graph.hard_swish, and the `hard_swish`
/// epilogue of conv2d and gemm (`activation.rs`).
pub fn hard_swish(v: f64) -> f64 {
    v * (v / 6.0 + 0.5).clamp(0.0, 1.0)
}

fn sem_hard_swish(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    unary_f(x, hard_swish)
}

fn verify_leaky_relu(body: &Body, op: OpId) -> Result<(), OpError> {
    let a = LeakyRelu::attrs(body.op(op)).alpha();
    if a.is_finite() {
        Ok(())
    } else {
        Err(format!("attribute 'alpha' must be finite, but got {a}").into())
    }
}

/// Unary op definitions differ only in name, docs, constraint, traits,
/// kernel, cost and precision class.
macro_rules! unary_op {
    ($ty:ident, $name:literal, $summary:literal, $desc:literal, $input:expr, $traits:expr, $sem:expr, $cost:expr, $prec:expr) => {
        def_op! {
            #[doc = $summary]
            #[doc = ""]
            #[doc = $desc]
            pub $ty = $name {
                operands { input: $input },
                results { output: AnyTensor },
                traits: $traits,
                format: COMPUTE_FORMAT,
                infer: same_as_first,
                semantics: $sem,
                interfaces [
                    $cost,
                    FusionPattern::Elementwise,
                    VECTOR_ENGINES,
                    $prec,
                    Layout::FollowsInputs,
                    KernelFamily::Elementwise,
                ],
                es,
            }
        }
    };
}

unary_op!(
    Neg,
    "graph.neg",
    "-x elementwise",
    "ONNX Neg on floats and signed integers (integers wrap: -MIN = MIN).",
    SIGNED,
    INVOLUTION_TRAITS,
    sem_neg,
    Cost::ELEMENTWISE,
    PrecisionClass::Gray
);
unary_op!(
    Abs,
    "graph.abs",
    "|x| elementwise",
    "ONNX Abs on any number type (integers wrap: |MIN| = MIN).",
    NUMERIC,
    IDEMPOTENT_TRAITS,
    sem_abs,
    Cost::ELEMENTWISE,
    PrecisionClass::Gray
);
unary_op!(
    Exp,
    "graph.exp",
    "e^x elementwise",
    "ONNX Exp on floating-point tensors.",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_exp,
    Cost::TRANSCENDENTAL,
    PrecisionClass::Black
);
unary_op!(
    Log,
    "graph.log",
    "Natural logarithm elementwise",
    "ONNX Log: ln(x) on floating-point tensors; log(0) = -inf, log(x < 0) = NaN.",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_log,
    Cost::TRANSCENDENTAL,
    PrecisionClass::Black
);
unary_op!(
    Sqrt,
    "graph.sqrt",
    "Square root elementwise",
    "ONNX Sqrt on floating-point tensors; sqrt(x < 0) = NaN.",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_sqrt,
    Cost::ELEMENTWISE,
    PrecisionClass::Black
);
unary_op!(
    Rsqrt,
    "graph.rsqrt",
    "Reciprocal square root elementwise",
    "1 / sqrt(x) on floating-point tensors (Ascend's Rsqrt; ONNX spells it Reciprocal(Sqrt)).",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_rsqrt,
    Cost::ELEMENTWISE,
    PrecisionClass::Gray
);
unary_op!(
    Reciprocal,
    "graph.reciprocal",
    "1/x elementwise",
    "ONNX Reciprocal on floating-point tensors; 1/0 = inf.",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_reciprocal,
    Cost::ELEMENTWISE,
    PrecisionClass::Black
);
unary_op!(
    Relu,
    "graph.relu",
    "max(x, 0) elementwise",
    "ONNX Relu on floats and signed integers: NaN stays NaN (numpy's `maximum`, as the ONNX reference and torch), -0 gives +0.",
    SIGNED,
    IDEMPOTENT_TRAITS,
    sem_relu,
    Cost::ELEMENTWISE,
    PrecisionClass::Gray
);
unary_op!(
    Sigmoid,
    "graph.sigmoid",
    "Logistic sigmoid elementwise",
    "ONNX Sigmoid: 1 / (1 + e^-x) on floating-point tensors.",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_sigmoid,
    Cost::TRANSCENDENTAL,
    PrecisionClass::Gray
);
unary_op!(
    Tanh,
    "graph.tanh",
    "Hyperbolic tangent elementwise",
    "ONNX Tanh on floating-point tensors.",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_tanh,
    Cost::TRANSCENDENTAL,
    PrecisionClass::Gray
);
unary_op!(
    Silu,
    "graph.silu",
    "SiLU (swish) elementwise",
    "x * sigmoid(x) on floating-point tensors (PyTorch SiLU; ONNX spells it Mul(x, Sigmoid(x))).",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_silu,
    Cost::TRANSCENDENTAL,
    PrecisionClass::Gray
);
unary_op!(
    Erf,
    "graph.erf",
    "Gauss error function elementwise",
    "ONNX Erf on floating-point tensors. The reference kernel is accurate to about 1e-15 \
         before rounding to the element type.",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_erf,
    Cost::TRANSCENDENTAL,
    PrecisionClass::Black
);
unary_op!(
    Floor,
    "graph.floor",
    "Round down elementwise",
    "ONNX Floor on floating-point tensors.",
    C::FloatTensor,
    IDEMPOTENT_TRAITS,
    sem_floor,
    Cost::ELEMENTWISE,
    PrecisionClass::Gray
);
unary_op!(
    Ceil,
    "graph.ceil",
    "Round up elementwise",
    "ONNX Ceil on floating-point tensors.",
    C::FloatTensor,
    IDEMPOTENT_TRAITS,
    sem_ceil,
    Cost::ELEMENTWISE,
    PrecisionClass::Gray
);
unary_op!(
    Round,
    "graph.round",
    "Round half to even elementwise",
    "ONNX Round on floating-point tensors: halves round to the nearest even integer \
         (numpy `round`).",
    C::FloatTensor,
    IDEMPOTENT_TRAITS,
    sem_round,
    Cost::ELEMENTWISE,
    PrecisionClass::Gray
);
unary_op!(
    Sign,
    "graph.sign",
    "Sign elementwise (-1, 0 or 1)",
    "ONNX Sign on any number type; sign(NaN) = NaN.",
    NUMERIC,
    IDEMPOTENT_TRAITS,
    sem_sign,
    Cost::ELEMENTWISE,
    PrecisionClass::Gray
);
unary_op!(
    Sin,
    "graph.sin",
    "Sine elementwise",
    "ONNX Sin on floating-point tensors.",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_sin,
    Cost::ELEMENTWISE,
    PrecisionClass::Gray
);
unary_op!(
    Cos,
    "graph.cos",
    "Cosine elementwise",
    "ONNX Cos on floating-point tensors.",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_cos,
    Cost::ELEMENTWISE,
    PrecisionClass::Gray
);
unary_op!(
    Square,
    "graph.square",
    "x * x elementwise",
    "TensorFlow's Square on floating-point tensors (rounded once, as `graph.mul %x, %x`).",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_square,
    Cost::ELEMENTWISE,
    PrecisionClass::Gray
);
unary_op!(
    HardSwish,
    "graph.hard_swish",
    "HardSwish elementwise: x * clamp(x / 6 + 1/2, 0, 1)",
    "ONNX HardSwish (opset 14) on floating-point tensors: `x * max(0, min(1, x / 6 + 0.5))`, \
     the activation of MobileNetV3 (PyTorch `hardswish`), one kernel instead of the five ops \
     of its decomposition. NaN stays NaN.",
    C::FloatTensor,
    UNARY_TRAITS,
    sem_hard_swish,
    Cost::ELEMENTWISE,
    PrecisionClass::Gray
);

def_op! {
    /// Leaky rectified linear unit elementwise
    ///
    /// ONNX LeakyRelu: `x` for x >= 0, `alpha * x` otherwise, on floating-point tensors. `%y =
    /// graph.leaky_relu %x {alpha = 0.2 : f32} : (T) -> T`.
    pub LeakyRelu = "graph.leaky_relu" {
        operands { input: FloatTensor },
        results { output: AnyTensor },
        attrs {
            /// slope for negative inputs
            alpha: F64 = 0.01,
        },
        traits: UNARY_TRAITS,
        format: COMPUTE_FORMAT,
        verify: verify_leaky_relu,
        infer: same_as_first,
        semantics: sem_leaky_relu,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Elementwise,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            Layout::FollowsInputs,
            KernelFamily::Elementwise,
        ],
        es,
    }
}

def_op! {
    /// Gaussian error linear unit elementwise
    ///
    /// ONNX Gelu (opset 20) on floating-point tensors. `approximate = "none"` (the default):
    /// `0.5 x (1 + erf(x / sqrt 2))`; `approximate = "tanh"`: `0.5 x (1 + tanh(sqrt(2/pi) (x +
    /// 0.044715 x^3)))`.
    pub Gelu = "graph.gelu" {
        operands { input: FloatTensor },
        results { output: AnyTensor },
        attrs {
            /// "none" (exact, with erf) or "tanh" (the tanh approximation)
            approximate: Enum(&["none", "tanh"]) = "none",
        },
        traits: UNARY_TRAITS,
        format: COMPUTE_FORMAT,
        infer: same_as_first,
        semantics: sem_gelu,
        interfaces [
            Cost::TRANSCENDENTAL,
            FusionPattern::Elementwise,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            Layout::FollowsInputs,
            KernelFamily::Elementwise,
        ],
        es,
    }
}

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
    // The keywords say which bounds are there.
    pr.attr_dict(op, &["operand_segment_sizes"], false);
    pr.write(" : ");
    let ins = pr.body.operand_types(op);
    let outs = pr.body.result_types(op);
    pr.functional_type(&ins, &outs);
}

def_op! {
    /// Clamp elementwise to optional scalar bounds
    ///
    /// ONNX Clip (opset 13): `min(max(x, lo), hi)` where the bounds are optional rank-0
    /// operands of the input's element type; a missing bound does not clip. Syntax: `%y =
    /// graph.clip %x min %lo max %hi : (T, tensor<f32>, tensor<f32>) -> T`; either `min %lo` or
    /// `max %hi` may be left out (the generic form records which in `operand_segment_sizes`).
    /// NaN inputs stay NaN.
    pub Clip = "graph.clip" {
        operands { input: NUMERIC, min: Option<NUMERIC>, max: Option<NUMERIC> },
        results { output: AnyTensor },
        traits [Pure, Elementwise],
        syntax: CustomSyntax {
            parse: parse_clip,
            print: print_clip,
        },
        verify: verify_clip,
        infer: same_as_first,
        semantics: sem_clip,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Elementwise,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            Layout::FollowsInputs,
            KernelFamily::Elementwise,
        ],
        es,
    }
}

// ---- cast ------------------------------------------------------------------------

/// The element type named by `to` (a scalar type, or a tensor type's element type).
fn cast_target(t: Option<Type>) -> Result<DType, String> {
    let t = t.ok_or("requires attribute 'to' (the target element type)")?;
    match t.data() {
        ge_ir::TypeData::Scalar(d) => Ok(*d),
        _ => Err(format!(
            "attribute 'to' must be an element type such as f16 or i32, but got '{t}'"
        )),
    }
}

fn infer_cast(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let to = cast_target(Cast::attrs(cx).to())?;
    let t = *cx.operand_types.first().ok_or("expects an operand")?;
    Ok(vec![t.with_dtype(to)])
}

/// The rounding of a cast with a `round_mode` (to f8E8M0FNU only), and
/// whether it saturates.
pub fn cast_rounding(
    a: &CastAttrView,
) -> Result<Option<(ge_ir::minifloat::E8m0Rounding, bool)>, String> {
    let Some(mode) = a.round_mode() else {
        return Ok(None);
    };
    let r = ge_ir::minifloat::E8m0Rounding::parse(mode).ok_or_else(|| {
        format!("attribute 'round_mode' must be up, down or nearest, but got '{mode}'")
    })?;
    Ok(Some((r, a.saturate() != 0)))
}

/// `round_mode` only on a cast to f8E8M0FNU (its words are the generic
/// verifier's to check).
fn verify_cast(body: &Body, op: OpId) -> Result<(), OpError> {
    let a = Cast::attrs(body.op(op));
    if a.round_mode().is_some() && cast_target(a.to())? != DType::F8E8M0FNU {
        return Err("attribute 'round_mode' applies to casts to f8E8M0FNU only".into());
    }
    Ok(())
}

fn sem_cast(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let a = Cast::attrs(cx);
    let to = cast_target(a.to())?;
    let x = arg(x, 0)?;
    match cast_rounding(&a)? {
        Some((mode, saturate)) => {
            let f = ge_ir::minifloat::MiniFloat::of(to).ok_or("not a small float")?;
            let v = x
                .to_f64()
                .into_iter()
                .map(|v| {
                    let bits = ge_ir::minifloat::e8m0_from_f32(v as f32, saturate, mode);
                    f.decode(bits as u64)
                })
                .collect();
            Ok(vec![Tensor::from_f64(x.shape.clone(), to, v)])
        }
        None => Ok(vec![x.cast(to)]),
    }
}

def_op! {
    /// Convert elements to another type
    ///
    /// ONNX Cast: `%y = graph.cast %x {to = f16} : (tensor<4xf32>) -> tensor<4xf16>`.
    /// Conversions follow numpy's `astype`: floats round to the nearest representable value,
    /// float to integer truncates toward zero (NaN becomes 0), integers wrap to the target
    /// width, and anything to `i1` is `x != 0`. A cast to f8E8M0FNU with `round_mode`
    /// converts as ONNX Cast-24 does (`onnx.numpy_helper.to_float8e8m0`): the exponent of the
    /// value as f32, its sign ignored, rounded up, down or to nearest by the dropped
    /// significand bits, infinities and NaN to NaN.
    pub Cast = "graph.cast" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// the target element type
            to: Type,
            /// how a cast to f8E8M0FNU rounds (ONNX's `round_mode`: up, down or nearest);
            /// absent: to the nearest power of two, as f8E8M0FNU's own conversion
            round_mode: Option<Enum(&["up", "down", "nearest"])>,
            /// with `round_mode`: rounding up from 2^127 stays at 2^127 (ONNX's `saturate`)
            /// rather than giving NaN
            saturate: I64 = 1,
        },
        traits [Pure, Elementwise, SameOperandsAndResultShape],
        format: COMPUTE_FORMAT,
        verify: verify_cast,
        infer: infer_cast,
        semantics: sem_cast,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Elementwise,
            VECTOR_ENGINES,
            PrecisionClass::Never,
            Layout::FollowsInputs,
            KernelFamily::Elementwise,
        ],
        es,
    }
}

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

def_op! {
    /// Select elements from two tensors by a condition
    ///
    /// ONNX Where: `%z = graph.where %cond, %x, %y : (tensor<..xi1>, T, T) -> T` picks `x`
    /// where `cond` is true and `y` elsewhere; all three broadcast numpy-style.
    pub Where = "graph.where" {
        operands { cond: BoolTensor, x: AnyTensor, y: AnyTensor },
        results { output: AnyTensor },
        traits [Pure, Elementwise, Broadcastable],
        format: COMPUTE_FORMAT,
        verify: verify_where,
        infer: infer_where,
        semantics: sem_where,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Elementwise,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            Layout::FollowsInputs,
            KernelFamily::Elementwise,
        ],
        es(method = where_),
    }
}

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

/// Comparison and binary logic definitions differ only in name, docs,
/// operand constraint, traits and kernel.
macro_rules! bool_binary_op {
    ($ty:ident, $name:literal, $summary:literal, $desc:literal, $operand:expr, $traits:expr, $sem:expr) => {
        def_op! {
            #[doc = $summary]
            #[doc = ""]
            #[doc = $desc]
            pub $ty = $name {
                operands { lhs: $operand, rhs: $operand },
                results { output: BoolTensor },
                traits: $traits,
                format: COMPUTE_FORMAT,
                infer: infer_bool_binary,
                semantics: $sem,
                interfaces [
                    Cost::ELEMENTWISE,
                    FusionPattern::Elementwise,
                    VECTOR_ENGINES,
                    PrecisionClass::Gray,
                    Layout::FollowsInputs,
                    KernelFamily::Elementwise,
                ],
                es,
            }
        }
    };
}

bool_binary_op!(
    Equal,
    "graph.equal",
    "x == y elementwise (i1 result)",
    "ONNX Equal with numpy broadcasting; operands share one element type. NaN == NaN is false.",
    C::AnyTensor,
    COMMUTATIVE_TRAITS,
    sem_equal
);
bool_binary_op!(
    Less,
    "graph.less",
    "x < y elementwise (i1 result)",
    "ONNX Less with numpy broadcasting; operands share one element type.",
    C::AnyTensor,
    BINARY_TRAITS,
    sem_less
);
bool_binary_op!(
    LessEqual,
    "graph.less_equal",
    "x <= y elementwise (i1 result)",
    "ONNX LessOrEqual with numpy broadcasting; operands share one element type.",
    C::AnyTensor,
    BINARY_TRAITS,
    sem_less_equal
);
bool_binary_op!(
    Greater,
    "graph.greater",
    "x > y elementwise (i1 result)",
    "ONNX Greater with numpy broadcasting; operands share one element type.",
    C::AnyTensor,
    BINARY_TRAITS,
    sem_greater
);
bool_binary_op!(
    GreaterEqual,
    "graph.greater_equal",
    "x >= y elementwise (i1 result)",
    "ONNX GreaterOrEqual with numpy broadcasting; operands share one element type.",
    C::AnyTensor,
    BINARY_TRAITS,
    sem_greater_equal
);
bool_binary_op!(
    And,
    "graph.and",
    "Logical and of i1 tensors",
    "ONNX And with numpy broadcasting.",
    C::BoolTensor,
    COMMUTATIVE_TRAITS,
    sem_and
);
bool_binary_op!(
    Or,
    "graph.or",
    "Logical or of i1 tensors",
    "ONNX Or with numpy broadcasting.",
    C::BoolTensor,
    COMMUTATIVE_TRAITS,
    sem_or
);
bool_binary_op!(
    Xor,
    "graph.xor",
    "Logical exclusive or of i1 tensors",
    "ONNX Xor with numpy broadcasting.",
    C::BoolTensor,
    COMMUTATIVE_TRAITS,
    sem_xor
);

def_op! {
    /// Logical negation of an i1 tensor
    ///
    /// ONNX Not: `%y = graph.not %x : (tensor<4xi1>) -> tensor<4xi1>`.
    pub Not = "graph.not" {
        operands { input: BoolTensor },
        results { output: BoolTensor },
        traits: INVOLUTION_TRAITS,
        format: COMPUTE_FORMAT,
        infer: same_as_first,
        semantics: sem_not,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Elementwise,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            Layout::FollowsInputs,
            KernelFamily::Elementwise,
        ],
        es,
    }
}

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
    &SQUARE,
    &HARD_SWISH,
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
