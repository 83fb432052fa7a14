//! Elementwise ONNX ops: arithmetic, comparisons, logic, math functions and
//! activations (those without a graph op of their own are composed).

use super::{fattr, invalid, one, op1, op2, scalar_like, Cx, Node, Res};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::DType;

fn unary(cx: &mut Cx, n: &Node, name: &str) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(op1(cx, name, x)?)
}

/// A binary op; before opset 7, `broadcast`/`axis` say how `B` broadcasts.
fn binary(cx: &mut Cx, n: &Node, name: &str) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    let b = super::legacy::broadcast_operand(cx, n, a, b)?;
    one(op2(cx, name, a, b)?)
}

/// Fold a variadic op (Max, Min, Sum) pairwise.
fn variadic(cx: &mut Cx, n: &Node, name: &str) -> Res<ValueId> {
    let xs = n.present_inputs();
    let mut acc = *xs
        .first()
        .ok_or_else(|| invalid(n, "needs at least one input"))?;
    for &x in &xs[1..] {
        acc = op2(cx, name, acc, x)?;
    }
    if xs.len() == 1 {
        acc = op1(cx, "data.identity", acc)?;
    }
    Ok(acc)
}

pub fn abs(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.abs")
}
pub fn add(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.add")
}
pub fn sub(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.sub")
}
pub fn mul(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.mul")
}
pub fn div(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.div")
}
pub fn pow(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.pow")
}
pub fn and(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.and")
}
pub fn or(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.or")
}
pub fn xor(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.xor")
}
pub fn equal(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.equal")
}
pub fn less(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.less")
}
pub fn less_or_equal(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.less_equal")
}
pub fn greater(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.greater")
}
pub fn greater_or_equal(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.greater_equal")
}
pub fn not(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.not")
}
pub fn neg(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.neg")
}
pub fn exp(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.exp")
}
pub fn log(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.log")
}
pub fn sqrt(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.sqrt")
}
pub fn reciprocal(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.reciprocal")
}
pub fn relu(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.relu")
}
pub fn sigmoid(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.sigmoid")
}
pub fn tanh(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.tanh")
}
pub fn erf(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.erf")
}
pub fn ceil(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.ceil")
}
pub fn floor(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.floor")
}
pub fn round(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.round")
}
pub fn sign(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.sign")
}
pub fn sin(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.sin")
}
pub fn asin(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.asin")
}
pub fn acos(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.acos")
}
pub fn atan(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.atan")
}
pub fn bitwise_and(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.bitwise_and")
}
pub fn bitwise_or(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.bitwise_or")
}
pub fn bitwise_xor(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.bitwise_xor")
}
pub fn bitwise_not(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.bitwise_not")
}
pub fn cos(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.cos")
}
pub fn identity(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    unary(cx, n, "data.identity")
}

pub fn max(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    one(variadic(cx, n, "graph.max")?)
}
pub fn min(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    one(variadic(cx, n, "graph.min")?)
}
pub fn sum(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    one(variadic(cx, n, "graph.add")?)
}
pub fn mean(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let s = variadic(cx, n, "graph.add")?;
    let k = scalar_like(cx, s, n.present_inputs().len() as f64)?;
    one(op2(cx, "graph.div", s, k)?)
}

pub fn mod_(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    let fmod = n.i("fmod", 0)?;
    if fmod != 0 || !cx.e.dtype(a)?.is_float() {
        return one(cx
            .e
            .op("graph.mod", &[a, b], vec![("fmod", Attribute::i64(fmod))])?);
    }
    // Float Mod with fmod = 0 takes the divisor's sign (Python's %): the C
    // remainder, plus the divisor where the signs differ.
    let r =
        cx.e.op("graph.mod", &[a, b], vec![("fmod", Attribute::i64(1))])?;
    let z = scalar_like(cx, r, 0.0)?;
    let rneg = op2(cx, "graph.less", r, z)?;
    let bneg = op2(cx, "graph.less", b, z)?;
    let differ = op2(cx, "graph.xor", rneg, bneg)?;
    let eq0 = op2(cx, "graph.equal", r, z)?;
    let nz = op1(cx, "graph.not", eq0)?;
    let fix = op2(cx, "graph.and", differ, nz)?;
    let rb = op2(cx, "graph.add", r, b)?;
    one(cx.e.op("graph.where", &[fix, rb, r], vec![])?)
}

/// x << y = x * 2^y, x >> y = x / 2^y (unsigned integers).
pub fn bit_shift(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, y) = (n.input(0)?, n.input(1)?);
    let direction = match n.s("direction", "")?.as_str() {
        "LEFT" => "left",
        "RIGHT" => "right",
        d => {
            return Err(invalid(
                n,
                format!("direction must be LEFT or RIGHT, not '{d}'"),
            ))
        }
    };
    one(cx.e.op(
        "graph.bit_shift",
        &[x, y],
        vec![("direction", Attribute::string(direction))],
    )?)
}

/// BitCast: the same bytes read as `to` (same width; checked by the op).
pub fn bit_cast(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let to = super::legacy::cast_target(n)?;
    one(cx.e.op(
        "graph.bitcast",
        &[x],
        vec![("to", Attribute::ty(ge_ir::Type::scalar(to)))],
    )?)
}

pub fn cast(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let to = super::legacy::cast_target(n)?;
    let r = saturating_cast(cx, n, x, to)?;
    if r == x {
        return one(op1(cx, "data.identity", x)?);
    }
    one(r)
}

/// A cast as ONNX's `saturate` attribute (default 1) says: `graph.cast`
/// converts as numpy's `astype` (a float8 past its range is infinity or
/// NaN); saturating to a float8 type clips to its largest value first (the
/// ONNX reference's `saturate_cast`: `clip(x, min, max).astype(to)`).
/// A cast to FLOAT8E8M0 rounds as its `round_mode` says (default up; opset 24).
fn saturating_cast(cx: &mut Cx, n: &Node, x: ValueId, to: DType) -> Res<ValueId> {
    let from = cx.e.dtype(x)?;
    if to == DType::F8E8M0FNU && from != to {
        let mode = n.s("round_mode", "up")?;
        return Ok(cx.e.op(
            "graph.cast",
            &[x],
            vec![
                ("to", Attribute::ty(ge_ir::Type::scalar(to))),
                ("round_mode", Attribute::string(&mode)),
                ("saturate", Attribute::i64(n.i("saturate", 1)?)),
            ],
        )?);
    }
    let to_f8 = to.is_small_float() && !matches!(to, DType::F4E2M1FN | DType::F8E8M0FNU);
    let x = match ge_ir::minifloat::MiniFloat::of(to) {
        Some(f) if to_f8 && n.i("saturate", 1)? != 0 && from.is_float() => {
            let (lo, hi) = (scalar_like(cx, x, -f.max())?, scalar_like(cx, x, f.max())?);
            let seg = Attribute::i64_array(&[1, 1, 1]);
            cx.e.op(
                "graph.clip",
                &[x, lo, hi],
                vec![("operand_segment_sizes", seg)],
            )?
        }
        _ => x,
    };
    super::cast(cx, x, to)
}

pub fn cast_like(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, like) = (n.input(0)?, n.input(1)?);
    let to = cx.e.dtype(like)?;
    let r = saturating_cast(cx, n, x, to)?;
    if r == x {
        return one(op1(cx, "data.identity", x)?);
    }
    one(r)
}

pub fn clip(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let (lo, hi) = if n.opset < 11 {
        let lo = n.opt_f("min")?;
        let hi = n.opt_f("max")?;
        let lo = match lo {
            Some(v) => Some(scalar_like(cx, x, v as f64)?),
            None => None,
        };
        let hi = match hi {
            Some(v) => Some(scalar_like(cx, x, v as f64)?),
            None => None,
        };
        (lo, hi)
    } else {
        (n.opt_input(1), n.opt_input(2))
    };
    let mut operands = vec![x];
    operands.extend(lo);
    operands.extend(hi);
    let seg = Attribute::i64_array(&[1, lo.is_some() as i64, hi.is_some() as i64]);
    one(cx.e.op(
        "graph.clip",
        &operands,
        vec![("operand_segment_sizes", seg)],
    )?)
}

pub fn where_(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (c, a, b) = (n.input(0)?, n.input(1)?, n.input(2)?);
    one(cx.e.op("graph.where", &[c, a, b], vec![])?)
}

pub fn leaky_relu(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let alpha = n.f("alpha", 0.01)?;
    one(cx.e.op(
        "graph.leaky_relu",
        &[x],
        vec![("alpha", fattr(alpha as f64))],
    )?)
}

pub fn gelu(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let approx = n.s("approximate", "none")?;
    one(cx.e.op(
        "graph.gelu",
        &[x],
        vec![("approximate", Attribute::string(&approx))],
    )?)
}

// ---- composed activations and math functions -------------------------------------

/// `alpha * x` (alpha a scalar of x's type).
fn scale(cx: &mut Cx, x: ValueId, alpha: f64) -> Res<ValueId> {
    let a = scalar_like(cx, x, alpha)?;
    op2(cx, "graph.mul", x, a)
}

fn add_k(cx: &mut Cx, x: ValueId, k: f64) -> Res<ValueId> {
    let a = scalar_like(cx, x, k)?;
    op2(cx, "graph.add", x, a)
}

/// `where(x < 0, neg, x)`-style select on the sign of x.
fn lt_zero(cx: &mut Cx, x: ValueId) -> Res<ValueId> {
    let z = scalar_like(cx, x, 0.0)?;
    op2(cx, "graph.less", x, z)
}

fn select(cx: &mut Cx, c: ValueId, a: ValueId, b: ValueId) -> Res<ValueId> {
    Ok(cx.e.op("graph.where", &[c, a, b], vec![])?)
}

/// `exp(x) - 1` rounded once to x's type, as the ONNX reference's
/// `np.expm1` gives it: a 16-bit float is computed in f32 (an `exp`
/// rounded to bf16 before the `- 1` is an ulp off near 0: test_celu_bfloat16).
fn expm1(cx: &mut Cx, x: ValueId) -> Res<ValueId> {
    let dt = cx.e.dtype(x)?;
    let wide = matches!(dt, DType::F16 | DType::BF16);
    let xf = if wide {
        super::cast(cx, x, DType::F32)?
    } else {
        x
    };
    let e = op1(cx, "graph.exp", xf)?;
    let em1 = add_k(cx, e, -1.0)?;
    if wide {
        super::cast(cx, em1, dt)
    } else {
        Ok(em1)
    }
}

pub fn elu(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let alpha = n.f("alpha", 1.0)? as f64;
    let em1 = expm1(cx, x)?;
    let neg = scale(cx, em1, alpha)?;
    let c = lt_zero(cx, x)?;
    one(select(cx, c, neg, x)?)
}

pub fn selu(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let alpha = n.f("alpha", 1.673_263_2)? as f64;
    let gamma = n.f("gamma", 1.050_701)? as f64;
    let e = op1(cx, "graph.exp", x)?;
    let em1 = add_k(cx, e, -1.0)?;
    let neg = scale(cx, em1, alpha * gamma)?;
    let pos = scale(cx, x, gamma)?;
    let z = scalar_like(cx, x, 0.0)?;
    let c = op2(cx, "graph.less_equal", x, z)?;
    one(select(cx, c, neg, pos)?)
}

pub fn celu(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let alpha = n.f("alpha", 1.0)? as f64;
    // alpha * expm1(x / alpha), each step rounded to x's type (the reference).
    let a = scalar_like(cx, x, alpha)?;
    let xa = op2(cx, "graph.div", x, a)?;
    let em1 = expm1(cx, xa)?;
    let neg = scale(cx, em1, alpha)?;
    let z = scalar_like(cx, x, 0.0)?;
    let a = op2(cx, "graph.max", x, z)?;
    let b = op2(cx, "graph.min", neg, z)?;
    one(op2(cx, "graph.add", a, b)?)
}

pub fn thresholded_relu(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let alpha = n.f("alpha", 1.0)? as f64;
    let a = scalar_like(cx, x, alpha)?;
    let c = op2(cx, "graph.greater", x, a)?;
    let z = scalar_like(cx, x, 0.0)?;
    one(select(cx, c, x, z)?)
}

fn hard_sigmoid_of(cx: &mut Cx, x: ValueId, alpha: f64, beta: f64) -> Res<ValueId> {
    let ax = scale(cx, x, alpha)?;
    let y = add_k(cx, ax, beta)?;
    let z = scalar_like(cx, x, 0.0)?;
    let o = scalar_like(cx, x, 1.0)?;
    let y = op2(cx, "graph.min", y, o)?;
    op2(cx, "graph.max", y, z)
}

pub fn hard_sigmoid(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let alpha = n.f("alpha", 0.2)? as f64;
    let beta = n.f("beta", 0.5)? as f64;
    one(hard_sigmoid_of(cx, x, alpha, beta)?)
}

/// One `graph.hard_swish`, not its five-op decomposition: a convolution or
/// matrix product before it takes it as its epilogue (`hard_swish`
/// activation), and alone it is one pass over the tensor.
pub fn hard_swish(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(op1(cx, "graph.hard_swish", x)?)
}

fn softplus_of(cx: &mut Cx, x: ValueId) -> Res<ValueId> {
    let e = op1(cx, "graph.exp", x)?;
    let e1 = add_k(cx, e, 1.0)?;
    op1(cx, "graph.log", e1)
}

pub fn softplus(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(softplus_of(cx, x)?)
}

pub fn softsign(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let a = op1(cx, "graph.abs", x)?;
    let a1 = add_k(cx, a, 1.0)?;
    one(op2(cx, "graph.div", x, a1)?)
}

pub fn mish(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let sp = softplus_of(cx, x)?;
    let t = op1(cx, "graph.tanh", sp)?;
    one(op2(cx, "graph.mul", x, t)?)
}

pub fn swish(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let alpha = n.f("alpha", 1.0)? as f64;
    if alpha == 1.0 {
        return one(op1(cx, "graph.silu", x)?);
    }
    let ax = scale(cx, x, alpha)?;
    let s = op1(cx, "graph.sigmoid", ax)?;
    one(op2(cx, "graph.mul", x, s)?)
}

pub fn prelu(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, slope) = (n.input(0)?, n.input(1)?);
    let slope = super::legacy::prelu_slope(cx, n, x, slope)?;
    let neg = op2(cx, "graph.mul", x, slope)?;
    let c = lt_zero(cx, x)?;
    one(select(cx, c, neg, x)?)
}

pub fn shrink(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let lambd = n.f("lambd", 0.5)? as f64;
    let bias = n.f("bias", 0.0)? as f64;
    let lo = scalar_like(cx, x, -lambd)?;
    let hi = scalar_like(cx, x, lambd)?;
    let z = scalar_like(cx, x, 0.0)?;
    let below = op2(cx, "graph.less", x, lo)?;
    let above = op2(cx, "graph.greater", x, hi)?;
    let xb = add_k(cx, x, bias)?;
    let xm = add_k(cx, x, -bias)?;
    let inner = select(cx, above, xm, z)?;
    one(select(cx, below, xb, inner)?)
}

pub fn is_nan(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let eq = op2(cx, "graph.equal", x, x)?;
    one(op1(cx, "graph.not", eq)?)
}

pub fn is_inf(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let pos = n.i("detect_positive", 1)? != 0;
    let neg = n.i("detect_negative", 1)? != 0;
    let pinf = scalar_like(cx, x, f64::INFINITY)?;
    let ninf = scalar_like(cx, x, f64::NEG_INFINITY)?;
    let p = op2(cx, "graph.equal", x, pinf)?;
    let m = op2(cx, "graph.equal", x, ninf)?;
    one(match (pos, neg) {
        (true, true) => op2(cx, "graph.or", p, m)?,
        (true, false) => p,
        (false, true) => m,
        (false, false) => {
            let f = op2(cx, "graph.and", p, m)?;
            op1(cx, "data.identity", f)?
        }
    })
}

pub fn tan(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let s = op1(cx, "graph.sin", x)?;
    let c = op1(cx, "graph.cos", x)?;
    one(op2(cx, "graph.div", s, c)?)
}

/// (e^x ± e^-x) / 2
fn exp_pair(cx: &mut Cx, x: ValueId, plus: bool) -> Res<ValueId> {
    let a = op1(cx, "graph.exp", x)?;
    let nx = op1(cx, "graph.neg", x)?;
    let b = op1(cx, "graph.exp", nx)?;
    let s = op2(cx, if plus { "graph.add" } else { "graph.sub" }, a, b)?;
    scale(cx, s, 0.5)
}

pub fn sinh(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(exp_pair(cx, x, false)?)
}

pub fn cosh(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(exp_pair(cx, x, true)?)
}

/// ln(x + sqrt(x² ± 1))
fn ln_x_sqrt(cx: &mut Cx, x: ValueId, k: f64) -> Res<ValueId> {
    let x2 = op2(cx, "graph.mul", x, x)?;
    let r = add_k(cx, x2, k)?;
    let s = op1(cx, "graph.sqrt", r)?;
    let t = op2(cx, "graph.add", x, s)?;
    op1(cx, "graph.log", t)
}

pub fn asinh(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(ln_x_sqrt(cx, x, 1.0)?)
}

pub fn acosh(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(ln_x_sqrt(cx, x, -1.0)?)
}

/// 0.5 ln((1 + x) / (1 - x))
pub fn atanh(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let o = scalar_like(cx, x, 1.0)?;
    let a = op2(cx, "graph.add", o, x)?;
    let b = op2(cx, "graph.sub", o, x)?;
    let q = op2(cx, "graph.div", a, b)?;
    let l = op1(cx, "graph.log", q)?;
    one(scale(cx, l, 0.5)?)
}
