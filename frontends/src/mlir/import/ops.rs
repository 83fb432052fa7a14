//! One import function per upstream op.

use super::{Im, ImportFn, Res, UAttr, UOp};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::DType;

type Out = Res<Vec<ValueId>>;

/// Every upstream op the importer supports and its import function.
pub static TABLE: &[(&str, ImportFn)] = &[
    ("arith.constant", constant),
    ("func.call", call),
    ("tosa.abs", abs),
    ("tosa.add", add),
    ("tosa.argmax", argmax),
    ("tosa.avg_pool2d", avg_pool2d),
    ("tosa.cast", cast),
    ("tosa.ceil", ceil),
    ("tosa.clamp", clamp),
    ("tosa.concat", concat),
    ("tosa.const", constant),
    ("tosa.const_shape", const_shape),
    ("tosa.conv2d", conv2d),
    ("tosa.cos", cos),
    ("tosa.depthwise_conv2d", depthwise_conv2d),
    ("tosa.equal", equal),
    ("tosa.erf", erf),
    ("tosa.exp", exp),
    ("tosa.floor", floor),
    ("tosa.gather", gather),
    ("tosa.greater", greater),
    ("tosa.greater_equal", greater_equal),
    ("tosa.identity", identity),
    ("tosa.intdiv", intdiv),
    ("tosa.log", log),
    ("tosa.logical_and", and),
    ("tosa.logical_not", not),
    ("tosa.logical_or", or),
    ("tosa.logical_xor", xor),
    ("tosa.matmul", matmul),
    ("tosa.max_pool2d", max_pool2d),
    ("tosa.maximum", maximum),
    ("tosa.minimum", minimum),
    ("tosa.mul", mul),
    ("tosa.negate", negate),
    ("tosa.pad", pad),
    ("tosa.pow", pow),
    ("tosa.reciprocal", reciprocal),
    ("tosa.reduce_max", reduce_max),
    ("tosa.reduce_min", reduce_min),
    ("tosa.reduce_product", reduce_prod),
    ("tosa.reduce_sum", reduce_sum),
    ("tosa.reshape", reshape),
    ("tosa.rsqrt", rsqrt),
    ("tosa.select", select),
    ("tosa.sigmoid", sigmoid),
    ("tosa.sin", sin),
    ("tosa.slice", slice),
    ("tosa.sub", sub),
    ("tosa.tanh", tanh),
    ("tosa.tile", tile),
    ("tosa.transpose", transpose),
];

macro_rules! simple {
    ($f:ident, $graph:literal, $n:expr) => {
        fn $f(im: &mut Im, u: &UOp) -> Out {
            let xs: Vec<ValueId> = (0..$n).map(|i| im.v(u, i)).collect::<Res<_>>()?;
            Ok(vec![im.op($graph, &xs, vec![])?])
        }
    };
}

simple!(add, "graph.add", 2);
simple!(sub, "graph.sub", 2);
simple!(maximum, "graph.max", 2);
simple!(minimum, "graph.min", 2);
simple!(pow, "graph.pow", 2);
simple!(intdiv, "graph.div", 2);
simple!(and, "graph.and", 2);
simple!(or, "graph.or", 2);
simple!(xor, "graph.xor", 2);
simple!(equal, "graph.equal", 2);
simple!(greater, "graph.greater", 2);
simple!(greater_equal, "graph.greater_equal", 2);
simple!(select, "graph.where", 3);
simple!(abs, "graph.abs", 1);
simple!(ceil, "graph.ceil", 1);
simple!(cos, "graph.cos", 1);
simple!(erf, "graph.erf", 1);
simple!(exp, "graph.exp", 1);
simple!(floor, "graph.floor", 1);
simple!(log, "graph.log", 1);
simple!(not, "graph.not", 1);
simple!(reciprocal, "graph.reciprocal", 1);
simple!(rsqrt, "graph.rsqrt", 1);
simple!(sigmoid, "graph.sigmoid", 1);
simple!(sin, "graph.sin", 1);
simple!(tanh, "graph.tanh", 1);

fn identity(im: &mut Im, u: &UOp) -> Out {
    Ok(vec![im.v(u, 0)?])
}

/// Zero points and shifts must be zero (float and unquantised integer models).
fn require_zero(im: &Im, u: &UOp, i: usize, what: &str) -> Res<()> {
    if i >= u.operands.len() {
        return Ok(());
    }
    match im.const_of(u, i) {
        Some(t) if t.to_f64().iter().all(|&x| x == 0.0) => Ok(()),
        _ => Err(format!(
            "a non-zero or computed {what} (quantised TOSA) is not supported"
        )),
    }
}

fn mul(im: &mut Im, u: &UOp) -> Out {
    require_zero(im, u, 2, "shift")?;
    let (a, b) = (im.v(u, 0)?, im.v(u, 1)?);
    Ok(vec![im.op("graph.mul", &[a, b], vec![])?])
}

fn negate(im: &mut Im, u: &UOp) -> Out {
    require_zero(im, u, 1, "zero point")?;
    require_zero(im, u, 2, "zero point")?;
    let x = im.v(u, 0)?;
    Ok(vec![im.op("graph.neg", &[x], vec![])?])
}

fn cast(im: &mut Im, u: &UOp) -> Out {
    let x = im.v(u, 0)?;
    let (_, dt) = u.out(0)?;
    Ok(vec![im.cast(x, dt)?])
}

fn constant(im: &mut Im, u: &UOp) -> Out {
    let a = u.attrs.get("values").or_else(|| u.attrs.get("value"));
    match a {
        Some(UAttr::Elements(d)) => Ok(vec![im.e.constant_attr(Attribute::dense(d.clone()))?]),
        _ => Err("only dense tensor constants are imported".into()),
    }
}

fn const_shape(im: &mut Im, u: &UOp) -> Out {
    let Some(UAttr::Elements(d)) = u.attrs.get("values") else {
        return Err("tosa.const_shape without dense values".into());
    };
    // index elements are stored as 64-bit integers.
    let v: Vec<i64> = d
        .bytes
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect();
    let n = d.ty.as_tensor().and_then(|t| t.num_elements()).unwrap_or(0) as usize;
    let v = if d.splat && n > 0 {
        vec![v.first().copied().unwrap_or(0); n]
    } else {
        v
    };
    if let Some(&k) = u.result_keys.first() {
        im.shapes.insert(k, v);
    }
    Ok(vec![])
}

/// A clamp bound that means "no upper bound": the dtype's largest value
/// (for floats, anything from f32::MAX up).
fn is_unbounded_max(dt: DType, x: f64) -> bool {
    let hi = crate::mlir::types::dtype_range(dt).1;
    x >= if dt.is_float() { f32::MAX as f64 } else { hi }
}

fn is_unbounded_min(dt: DType, x: f64) -> bool {
    let lo = crate::mlir::types::dtype_range(dt).0;
    x <= if dt.is_float() { f32::MIN as f64 } else { lo }
}

/// `clamp(x, 0, max)` → relu; otherwise clip with scalar constant bounds.
fn clamp(im: &mut Im, u: &UOp) -> Out {
    let x = im.v(u, 0)?;
    let dt = im.e.dtype(x)?;
    let lo = u.num("min_val")?;
    let hi = u.num("max_val")?;
    if lo == 0.0 && is_unbounded_max(dt, hi) {
        return Ok(vec![im.op("graph.relu", &[x], vec![])?]);
    }
    let mut ops = vec![x];
    let has_lo = !is_unbounded_min(dt, lo);
    let has_hi = !is_unbounded_max(dt, hi);
    if has_lo {
        ops.push(im.e.scalar(dt, lo)?);
    }
    if has_hi {
        ops.push(im.e.scalar(dt, hi)?);
    }
    let seg = Attribute::i64_array(&[1, has_lo as i64, has_hi as i64]);
    Ok(vec![im.op(
        "graph.clip",
        &ops,
        vec![("operand_segment_sizes", seg)],
    )?])
}

fn reshape(im: &mut Im, u: &UOp) -> Out {
    let x = im.v(u, 0)?;
    let (s, _) = u.out(0)?;
    let s = if s.iter().any(|&d| d < 0) {
        im.shape_operand(u, 1)?
    } else {
        s
    };
    Ok(vec![im.reshape(x, &s)?])
}

fn transpose(im: &mut Im, u: &UOp) -> Out {
    let x = im.v(u, 0)?;
    let p = u.ints("perms")?;
    Ok(vec![im.transpose(x, &p)?])
}

fn concat(im: &mut Im, u: &UOp) -> Out {
    let xs: Vec<ValueId> = (0..u.operands.len())
        .map(|i| im.v(u, i))
        .collect::<Res<_>>()?;
    let axis = u.int("axis")?;
    Ok(vec![im.op(
        "data.concat",
        &xs,
        vec![("axis", Attribute::i64(axis))],
    )?])
}

fn slice(im: &mut Im, u: &UOp) -> Out {
    let x = im.v(u, 0)?;
    let start = im.shape_operand(u, 1)?;
    let size = im.shape_operand(u, 2)?;
    let ends: Vec<i64> = start.iter().zip(&size).map(|(a, b)| a + b).collect();
    let axes: Vec<i64> = (0..start.len() as i64).collect();
    Ok(vec![im.op(
        "data.slice",
        &[x],
        vec![
            ("starts", Attribute::i64_array(&start)),
            ("ends", Attribute::i64_array(&ends)),
            ("axes", Attribute::i64_array(&axes)),
        ],
    )?])
}

fn tile(im: &mut Im, u: &UOp) -> Out {
    let x = im.v(u, 0)?;
    let m = im.shape_operand(u, 1)?;
    Ok(vec![im.op(
        "data.tile",
        &[x],
        vec![("repeats", Attribute::i64_array(&m))],
    )?])
}

fn pad(im: &mut Im, u: &UOp) -> Out {
    let x = im.v(u, 0)?;
    let p = im.shape_operand(u, 1)?;
    let value = if u.operands.len() > 2 {
        im.const_of(u, 2)
            .map(|t| t.get_f(0))
            .ok_or("a computed pad value is not supported")?
    } else {
        0.0
    };
    let r = p.len() / 2;
    let mut pads: Vec<i64> = (0..r).map(|d| p[2 * d]).collect();
    pads.extend((0..r).map(|d| p[2 * d + 1]));
    Ok(vec![im.op(
        "graph.pad",
        &[x],
        vec![
            ("pads", Attribute::i64_array(&pads)),
            ("value", Attribute::f64(value)),
        ],
    )?])
}

const NHWC_TO_NCHW: [i64; 4] = [0, 3, 1, 2];
const NCHW_TO_NHWC: [i64; 4] = [0, 2, 3, 1];

/// TOSA pad [top, bottom, left, right] → ONNX pads [top, left, bottom, right].
fn onnx_pads(p: &[i64]) -> Res<Vec<i64>> {
    if p.len() != 4 {
        return Err("expected 4 pad values".into());
    }
    Ok(vec![p[0], p[2], p[1], p[3]])
}

fn conv_common(im: &mut Im, u: &UOp, filter: ValueId, group: i64) -> Out {
    require_zero(im, u, 3, "input zero point")?;
    require_zero(im, u, 4, "weight zero point")?;
    let x = im.v(u, 0)?;
    let b = im.v(u, 2)?;
    let (out, _) = u.out(0)?;
    let o = *out.get(3).ok_or("conv2d result is not rank 4")?;
    let b = if im.e.static_shape(b).as_deref() == Some(&[o][..]) {
        b
    } else {
        im.op(
            "data.broadcast_to",
            &[b],
            vec![("shape", Attribute::i64_array(&[o]))],
        )?
    };
    let xc = im.transpose(x, &NHWC_TO_NCHW)?;
    let y = im.op(
        "graph.conv2d",
        &[xc, filter, b],
        vec![
            ("strides", Attribute::i64_array(&u.ints("stride")?)),
            ("pads", Attribute::i64_array(&onnx_pads(&u.ints("pad")?)?)),
            ("dilations", Attribute::i64_array(&u.ints("dilation")?)),
            ("group", Attribute::i64(group)),
        ],
    )?;
    Ok(vec![im.transpose(y, &NCHW_TO_NHWC)?])
}

/// NHWC input, OHWI filter → NCHW/OIHW `graph.conv2d` between transposes.
fn conv2d(im: &mut Im, u: &UOp) -> Out {
    let w = im.v(u, 1)?;
    let wc = im.transpose(w, &NHWC_TO_NCHW)?;
    conv_common(im, u, wc, 1)
}

/// kH x kW x C x M filter → (C·M) x 1 x kH x kW, group = C.
fn depthwise_conv2d(im: &mut Im, u: &UOp) -> Out {
    let w = im.v(u, 1)?;
    let s =
        im.e.static_shape(w)
            .ok_or("the depthwise filter needs a static shape")?;
    if s.len() != 4 {
        return Err("the depthwise filter is not rank 4".into());
    }
    let (kh, kw, c, m) = (s[0], s[1], s[2], s[3]);
    let wt = im.transpose(w, &[2, 3, 0, 1])?;
    let wr = im.reshape(wt, &[c * m, 1, kh, kw])?;
    conv_common(im, u, wr, c)
}

fn pool(im: &mut Im, u: &UOp, name: &str) -> Out {
    if name == "graph.avg_pool2d" {
        require_zero(im, u, 1, "input zero point")?;
        require_zero(im, u, 2, "output zero point")?;
    }
    let x = im.v(u, 0)?;
    let xc = im.transpose(x, &NHWC_TO_NCHW)?;
    let y = im.op(
        name,
        &[xc],
        vec![
            ("kernel_shape", Attribute::i64_array(&u.ints("kernel")?)),
            ("strides", Attribute::i64_array(&u.ints("stride")?)),
            ("pads", Attribute::i64_array(&onnx_pads(&u.ints("pad")?)?)),
        ],
    )?;
    Ok(vec![im.transpose(y, &NCHW_TO_NHWC)?])
}

fn avg_pool2d(im: &mut Im, u: &UOp) -> Out {
    pool(im, u, "graph.avg_pool2d")
}

fn max_pool2d(im: &mut Im, u: &UOp) -> Out {
    pool(im, u, "graph.max_pool2d")
}

fn matmul(im: &mut Im, u: &UOp) -> Out {
    require_zero(im, u, 2, "zero point")?;
    require_zero(im, u, 3, "zero point")?;
    let (a, b) = (im.v(u, 0)?, im.v(u, 1)?);
    Ok(vec![im.op("graph.matmul", &[a, b], vec![])?])
}

fn reduce(im: &mut Im, u: &UOp, name: &str) -> Out {
    let x = im.v(u, 0)?;
    let axis = u.int("axis")?;
    Ok(vec![im.op(
        name,
        &[x],
        vec![
            ("axes", Attribute::i64_array(&[axis])),
            ("keepdims", Attribute::i64(1)),
        ],
    )?])
}

fn reduce_sum(im: &mut Im, u: &UOp) -> Out {
    reduce(im, u, "graph.reduce_sum")
}
fn reduce_max(im: &mut Im, u: &UOp) -> Out {
    reduce(im, u, "graph.reduce_max")
}
fn reduce_min(im: &mut Im, u: &UOp) -> Out {
    reduce(im, u, "graph.reduce_min")
}
fn reduce_prod(im: &mut Im, u: &UOp) -> Out {
    reduce(im, u, "graph.reduce_prod")
}

/// `graph.argmax` (i64) cast to TOSA's result type.
fn argmax(im: &mut Im, u: &UOp) -> Out {
    let x = im.v(u, 0)?;
    let (_, dt) = u.out(0)?;
    let y = im.op(
        "graph.argmax",
        &[x],
        vec![
            ("axis", Attribute::i64(u.int("axis")?)),
            ("keepdims", Attribute::i64(0)),
        ],
    )?;
    Ok(vec![im.cast(y, dt)?])
}

/// values N x K x C, indices N x W with N = 1 → `graph.gather` on axis 0.
fn gather(im: &mut Im, u: &UOp) -> Out {
    let (v, i) = (im.v(u, 0)?, im.v(u, 1)?);
    let vs =
        im.e.static_shape(v)
            .ok_or("tosa.gather needs static shapes")?;
    let is =
        im.e.static_shape(i)
            .ok_or("tosa.gather needs static shapes")?;
    if vs.len() != 3 || is.len() != 2 || vs[0] != 1 {
        return Err("only tosa.gather with batch 1 is imported".into());
    }
    let v2 = im.reshape(v, &[vs[1], vs[2]])?;
    let i1 = im.reshape(i, &[is[1]])?;
    let g = im.op("graph.gather", &[v2, i1], vec![("axis", Attribute::i64(0))])?;
    Ok(vec![im.reshape(g, &[1, is[1], vs[2]])?])
}

fn call(im: &mut Im, u: &UOp) -> Out {
    let Some(UAttr::Sym(callee)) = u.attrs.get("callee") else {
        return Err("func.call without a callee".into());
    };
    let xs: Vec<ValueId> = (0..u.operands.len())
        .map(|i| im.v(u, i))
        .collect::<Res<_>>()?;
    let mut tys = vec![];
    for i in 0..u.results.len() {
        let (s, dt) = u.out(i)?;
        tys.push(super::ge_type(&s, dt));
    }
    im.e.op_multi(
        "graph.call",
        &xs,
        vec![("callee", Attribute::symbol(callee))],
        Some(tys),
    )
}
