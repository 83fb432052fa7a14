//! Elementwise ops → TOSA elementwise ops (rank-equalised broadcasting).

use super::{Ex, Res, T};
use ge_ir::{DType, OpId};

type Out<'c, 'a> = Res<Vec<T<'c, 'a>>>;

/// A binary op mapped 1:1 (operands in order, or swapped).
macro_rules! binary {
    ($f:ident, $tosa:literal) => {
        pub fn $f<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
            let (a, b) = (e.input(op, 0)?, e.input(op, 1)?);
            let (s, dt) = e.out(op, 0)?;
            Ok(vec![e.ew($tosa, &[&a, &b], &s, dt)?])
        }
    };
    ($f:ident, $tosa:literal, swapped) => {
        pub fn $f<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
            let (a, b) = (e.input(op, 0)?, e.input(op, 1)?);
            let (s, dt) = e.out(op, 0)?;
            Ok(vec![e.ew($tosa, &[&b, &a], &s, dt)?])
        }
    };
}

/// A unary op mapped 1:1.
macro_rules! unary {
    ($f:ident, $tosa:literal) => {
        pub fn $f<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
            let x = e.input(op, 0)?;
            let (s, dt) = e.out(op, 0)?;
            Ok(vec![e.op($tosa, &[&x], &[], &s, dt)?])
        }
    };
}

binary!(add, "tosa.add");
binary!(sub, "tosa.sub");
binary!(mul, "tosa.mul");
binary!(max, "tosa.maximum");
binary!(min, "tosa.minimum");
binary!(pow, "tosa.pow");
binary!(and, "tosa.logical_and");
binary!(or, "tosa.logical_or");
binary!(xor, "tosa.logical_xor");
binary!(equal, "tosa.equal");
binary!(greater, "tosa.greater");
binary!(greater_equal, "tosa.greater_equal");
binary!(less, "tosa.greater", swapped);
binary!(less_equal, "tosa.greater_equal", swapped);

unary!(abs, "tosa.abs");
unary!(ceil, "tosa.ceil");
unary!(cos, "tosa.cos");
unary!(erf, "tosa.erf");
unary!(exp, "tosa.exp");
unary!(floor, "tosa.floor");
unary!(log, "tosa.log");
unary!(not, "tosa.logical_not");
unary!(reciprocal, "tosa.reciprocal");
unary!(rsqrt, "tosa.rsqrt");
unary!(sigmoid, "tosa.sigmoid");
unary!(sin, "tosa.sin");
unary!(tanh, "tosa.tanh");

/// `tosa.cast`; float → integer first truncates toward zero (ONNX Cast),
/// since TOSA's cast rounds to nearest (found by ge-mlir-crosscheck).
pub fn cast<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let mut x = e.input(op, 0)?;
    let (s, dt) = e.out(op, 0)?;
    // Already truncated (an imported truncation: where(x >= 0, floor x, ceil x))?
    let truncated = {
        let b = e.body;
        let v = b.operand(op, 0);
        let name = |v| b.defining_op(v).map(|d| b.op(d).name.as_str());
        name(v) == Some("graph.where")
            && b.defining_op(v)
                .map(|d| name(b.operand(d, 1)) == Some("graph.floor"))
                .unwrap_or(false)
    };
    if x.dt.is_float() && !dt.is_float() && dt != DType::I1 && !truncated {
        let z = e.splat(0.0, x.rank(), x.dt)?;
        let pos = e.bin("tosa.greater_equal", &x, &z)?;
        let f = e.un("tosa.floor", &x)?;
        let c = e.un("tosa.ceil", &x)?;
        x = e.ew("tosa.select", &[&pos, &f, &c], &x.shape.clone(), x.dt)?;
    }
    Ok(vec![e.op("tosa.cast", &[&x], &[], &s, dt)?])
}

/// Float division: `a * reciprocal(b)`; i32 division: `tosa.intdiv`.
pub fn div<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let (a, b) = (e.input(op, 0)?, e.input(op, 1)?);
    let (s, dt) = e.out(op, 0)?;
    if dt.is_float() {
        let r = e.un("tosa.reciprocal", &b)?;
        return Ok(vec![e.ew("tosa.mul", &[&a, &r], &s, dt)?]);
    }
    if dt == DType::I32 {
        return Ok(vec![e.ew("tosa.intdiv", &[&a, &b], &s, dt)?]);
    }
    Err(format!(
        "division of {} has no TOSA equivalent (only floats and i32)",
        dt.name()
    ))
}

/// `tosa.negate` (with its zero points).
pub fn neg<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let zp = e.zp(x.dt)?;
    Ok(vec![e.op(
        "tosa.negate",
        &[&x, &zp, &zp],
        &[],
        &x.shape.clone(),
        x.dt,
    )?])
}

/// `tosa.pow(x, 0.5)`.
pub fn sqrt<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let h = e.splat(0.5, x.rank(), x.dt)?;
    Ok(vec![e.bin("tosa.pow", &x, &h)?])
}

/// The largest value of a dtype (+inf for floats).
fn dtype_max(dt: DType) -> f64 {
    crate::mlir::types::dtype_range(dt).1
}

fn dtype_min(dt: DType) -> f64 {
    crate::mlir::types::dtype_range(dt).0
}

/// `tosa.clamp` with attribute bounds.
pub fn clamp<'c, 'a>(e: &Ex<'c, 'a>, x: &T<'c, 'a>, lo: f64, hi: f64) -> Res<T<'c, 'a>> {
    let attrs = [
        ("min_val", e.scalar_attr(x.dt, lo)?),
        ("max_val", e.scalar_attr(x.dt, hi)?),
    ];
    e.op("tosa.clamp", &[x], &attrs, &x.shape.clone(), x.dt)
}

/// `clamp(x, 0, +inf)`.
pub fn relu<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    Ok(vec![clamp(e, &x, 0.0, dtype_max(x.dt))?])
}

/// Constant bounds → `tosa.clamp`; computed bounds → maximum/minimum.
pub fn clip<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    // Which of the optional operands are present (operand_segment_sizes).
    let segs = e
        .attr_ints(op, "operand_segment_sizes")
        .or_else(|| e.attr_ints(op, "operandSegmentSizes"))
        .unwrap_or_else(|| {
            let n = e.num_inputs(op) as i64;
            vec![1, (n > 1) as i64, (n > 2) as i64]
        });
    let has_min = segs.get(1).copied().unwrap_or(0) > 0;
    let has_max = segs.get(2).copied().unwrap_or(0) > 0;
    let min_idx = 1;
    let max_idx = if has_min { 2 } else { 1 };
    let lo_c = if has_min {
        e.const_input(op, min_idx)
    } else {
        None
    };
    let hi_c = if has_max {
        e.const_input(op, max_idx)
    } else {
        None
    };
    if (!has_min || lo_c.is_some()) && (!has_max || hi_c.is_some()) {
        let lo = lo_c.map(|t| t.get_f(0)).unwrap_or(dtype_min(x.dt));
        let hi = hi_c.map(|t| t.get_f(0)).unwrap_or(dtype_max(x.dt));
        return Ok(vec![clamp(e, &x, lo, hi)?]);
    }
    let mut y = x;
    if has_min {
        let lo = e.input(op, min_idx)?;
        y = e.bin("tosa.maximum", &y, &lo)?;
    }
    if has_max {
        let hi = e.input(op, max_idx)?;
        y = e.bin("tosa.minimum", &y, &hi)?;
    }
    Ok(vec![y])
}

/// `select(x >= 0, x, alpha * x)`.
pub fn leaky<'c, 'a>(e: &Ex<'c, 'a>, x: &T<'c, 'a>, alpha: f64) -> Res<T<'c, 'a>> {
    let z = e.splat(0.0, x.rank(), x.dt)?;
    let c = e.bin("tosa.greater_equal", x, &z)?;
    let ax = e.scale(x, alpha)?;
    e.ew("tosa.select", &[&c, x, &ax], &x.shape.clone(), x.dt)
}

pub fn leaky_relu<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let alpha = e.attr_f64(op, "alpha", 0.01);
    Ok(vec![leaky(e, &x, alpha)?])
}

/// `0.5 x (1 + erf(x / sqrt 2))`, or the tanh approximation.
pub fn gelu_of<'c, 'a>(e: &Ex<'c, 'a>, x: &T<'c, 'a>, tanh: bool) -> Res<T<'c, 'a>> {
    let inner = if tanh {
        // tanh(sqrt(2/pi) (x + 0.044715 x^3))
        let x2 = e.bin("tosa.mul", x, x)?;
        let x3 = e.bin("tosa.mul", &x2, x)?;
        let t = e.scale(&x3, 0.044715)?;
        let s = e.bin("tosa.add", x, &t)?;
        let s = e.scale(&s, (2.0 / std::f64::consts::PI).sqrt())?;
        e.un("tosa.tanh", &s)?
    } else {
        let s = e.scale(x, std::f64::consts::FRAC_1_SQRT_2)?;
        e.un("tosa.erf", &s)?
    };
    let one = e.offset(&inner, 1.0)?;
    let h = e.scale(x, 0.5)?;
    e.bin("tosa.mul", &h, &one)
}

pub fn gelu<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let tanh = e.attr_str(op, "approximate") == Some("tanh");
    Ok(vec![gelu_of(e, &x, tanh)?])
}

/// `x * sigmoid(x)`.
pub fn silu<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let s = e.un("tosa.sigmoid", &x)?;
    Ok(vec![e.bin("tosa.mul", &x, &s)?])
}

/// `x * clamp(x * (1/6) + 1/2, 0, 1)` (graph.hard_swish).
pub fn hard_swish_of<'c, 'a>(e: &Ex<'c, 'a>, x: &T<'c, 'a>) -> Res<T<'c, 'a>> {
    let t = e.scale(x, 1.0 / 6.0)?;
    let t = e.offset(&t, 0.5)?;
    let h = clamp(e, &t, 0.0, 1.0)?;
    e.bin("tosa.mul", x, &h)
}

pub fn hard_swish<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    Ok(vec![hard_swish_of(e, &x)?])
}

/// `tosa.select(cond, x, y)`.
pub fn select<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let (c, x, y) = (e.input(op, 0)?, e.input(op, 1)?, e.input(op, 2)?);
    let (s, dt) = e.out(op, 0)?;
    Ok(vec![e.ew("tosa.select", &[&c, &x, &y], &s, dt)?])
}

/// An activation epilogue (conv2d, gemm).
pub fn activation<'c, 'a>(
    e: &Ex<'c, 'a>,
    x: T<'c, 'a>,
    act: Option<&str>,
    alpha: f64,
) -> Res<T<'c, 'a>> {
    Ok(match act.unwrap_or("none") {
        "none" => x,
        "relu" => clamp(e, &x, 0.0, dtype_max(x.dt))?,
        "relu6" => clamp(e, &x, 0.0, 6.0)?,
        "leaky_relu" => leaky(e, &x, alpha)?,
        "sigmoid" => e.un("tosa.sigmoid", &x)?,
        "tanh" => e.un("tosa.tanh", &x)?,
        "gelu" => gelu_of(e, &x, false)?,
        "silu" => {
            let s = e.un("tosa.sigmoid", &x)?;
            e.bin("tosa.mul", &x, &s)?
        }
        "hard_swish" => hard_swish_of(e, &x)?,
        other => return Err(format!("activation '{other}' has no TOSA equivalent")),
    })
}

/// ONNX Sign: 1, -1 or 0 by two selects.
pub fn sign<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let (s, dt) = e.out(op, 0)?;
    let r = x.rank();
    let (zero, one, minus) = (
        e.splat(0.0, r, dt)?,
        e.splat(1.0, r, dt)?,
        e.splat(-1.0, r, dt)?,
    );
    let pos = e.bin("tosa.greater", &x, &zero)?;
    let neg = e.bin("tosa.greater", &zero, &x)?;
    let low = e.ew("tosa.select", &[&neg, &minus, &zero], &s, dt)?;
    Ok(vec![e.ew("tosa.select", &[&pos, &one, &low], &s, dt)?])
}

/// ONNX Round (halves to even): floor, then up when the fraction is above
/// one half, or exactly one half and the floor is odd.
pub fn round<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let (s, dt) = e.out(op, 0)?;
    let r = x.rank();
    let f = e.un("tosa.floor", &x)?;
    let frac = e.bin("tosa.sub", &x, &f)?;
    let (half, one, two) = (
        e.splat(0.5, r, dt)?,
        e.splat(1.0, r, dt)?,
        e.splat(2.0, r, dt)?,
    );
    let up = e.bin("tosa.add", &f, &one)?;
    let above = e.bin("tosa.greater", &frac, &half)?;
    let tie = e.bin("tosa.equal", &frac, &half)?;
    // f is odd when f - 2·floor(f/2) is not 0.
    let f_half = e.un("tosa.floor", &e.bin("tosa.mul", &f, &half)?)?;
    let even = e.bin("tosa.equal", &e.bin("tosa.mul", &f_half, &two)?, &f)?;
    let at_tie = e.ew("tosa.select", &[&even, &f, &up], &s, dt)?;
    let low = e.ew("tosa.select", &[&tie, &at_tie, &f], &s, dt)?;
    Ok(vec![e.ew("tosa.select", &[&above, &up, &low], &s, dt)?])
}

/// ONNX Mod on 32-bit integers: `tosa.intdiv` truncates, so `fmod = 1` is
/// `x - (x / y)·y`, and `fmod = 0` (Python's sign of the divisor) adds `y`
/// to a non-zero remainder whose sign differs from `y`'s. Float Mod has no
/// exact form: TOSA has no float division (`x·(1/y)` misses exact multiples).
pub fn modulo<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let (x, y) = (e.input(op, 0)?, e.input(op, 1)?);
    let (s, dt) = e.out(op, 0)?;
    let fmod = e.attr_i64(op, "fmod", 0) != 0;
    let r = s.len();
    if dt != DType::I32 {
        return Err(format!(
            "mod on {dt} has no exact TOSA equivalent (tosa.intdiv is 32-bit; TOSA has no float division)"
        ));
    }
    let q = e.ew("tosa.intdiv", &[&x, &y], &s, dt)?;
    let rem = e.bin("tosa.sub", &x, &e.bin("tosa.mul", &q, &y)?)?;
    if fmod {
        return Ok(vec![rem]);
    }
    let zero = e.splat(0.0, r, dt)?;
    let nonzero = e.un("tosa.logical_not", &e.bin("tosa.equal", &rem, &zero)?)?;
    let rem_neg = e.bin("tosa.greater", &zero, &rem)?;
    let y_neg = e.bin("tosa.greater", &zero, &y)?;
    let differ = e.bin("tosa.logical_xor", &rem_neg, &y_neg)?;
    let fix = e.bin("tosa.logical_and", &nonzero, &differ)?;
    let shifted = e.bin("tosa.add", &rem, &y)?;
    Ok(vec![e.ew(
        "tosa.select",
        &[&fix, &shifted, &rem],
        &s,
        dt,
    )?])
}
