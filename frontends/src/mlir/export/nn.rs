//! Neural-network ops: convolution and pooling (NCHW ↔ TOSA's NHWC by
//! transposes), matrix products (TOSA's rank-3 `tosa.matmul`), reductions,
//! gathers, and decompositions (softmax, batch/layer norm) into TOSA ops.

use super::elementwise::activation;
use super::{norm_axis, Ex, Res, T};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, OpId};

type Out<'c, 'a> = Res<Vec<T<'c, 'a>>>;

const NCHW_TO_NHWC: [i64; 4] = [0, 2, 3, 1];
const NHWC_TO_NCHW: [i64; 4] = [0, 3, 1, 2];

fn static_dims(t: &T, what: &str) -> Res<()> {
    if t.shape.iter().any(|&d| d < 0) {
        return Err(format!("{what} needs static dims here"));
    }
    Ok(())
}

/// Bottom/right padding that makes TOSA's exact output-size rule give `out`
/// (ONNX floors, or rounds up with `ceil_mode`); negative: crop the input.
fn end_pad(input: i64, begin: i64, k_eff: i64, stride: i64, out: i64) -> i64 {
    (out - 1) * stride + k_eff - input - begin
}

/// Crop the NHWC input when the end padding would be negative.
fn fit_spatial<'c, 'a>(e: &Ex<'c, 'a>, x: T<'c, 'a>, ends: &mut [i64; 2]) -> Res<T<'c, 'a>> {
    if ends[0] >= 0 && ends[1] >= 0 {
        return Ok(x);
    }
    let mut size = x.shape.clone();
    for (k, end) in ends.iter_mut().enumerate() {
        if *end < 0 {
            size[1 + k] += *end;
            *end = 0;
        }
    }
    let start = e.shape_const(&[0, 0, 0, 0])?;
    let sz = e.shape_const(&size)?;
    e.op_values("tosa.slice", &[x.v, start, sz], &[], &size, x.dt)
}

/// The convolution's bias operand (`o` entries), zeros when it has none
/// (TOSA's convolutions always take one).
fn conv_bias<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId, o: i64, dt: DType) -> Res<T<'c, 'a>> {
    if e.num_inputs(op) > 2 {
        let b = e.input(op, 2)?;
        e.reshape(&b, &[o])
    } else {
        e.constant(&Tensor::zeros(vec![o as usize], dt))
    }
}

/// TOSA's `acc_type` for a convolution over `dt`: f64 stays f64, else f32.
fn accumulator<'c, 'a>(e: &Ex<'c, 'a>, dt: DType) -> Res<melior::ir::Attribute<'c>> {
    e.type_attr(if dt == DType::F64 {
        DType::F64
    } else {
        DType::F32
    })
}

pub fn conv2d<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let w = e.input(op, 1)?;
    let (out_s, dt) = e.out(op, 0)?;
    static_dims(&w, "conv2d's filter")?;
    let strides = e.attr_ints(op, "strides").unwrap_or(vec![1, 1]);
    let pads = e.attr_ints(op, "pads").unwrap_or(vec![0, 0, 0, 0]);
    let dil = e.attr_ints(op, "dilations").unwrap_or(vec![1, 1]);
    let group = e.attr_i64(op, "group", 1);
    if x.rank() != 4 || w.rank() != 4 || pads.len() != 4 || strides.len() != 2 || dil.len() != 2 {
        return Err("only 2-D NCHW convolutions are exported".into());
    }
    let (o, c) = (w.shape[0], x.shape[1]);
    let bias = conv_bias(e, op, o, dt)?;
    let xh = e.transpose(&x, &NCHW_TO_NHWC)?;
    let mut ends = [0i64; 2];
    for k in 0..2 {
        let k_eff = dil[k] * (w.shape[2 + k] - 1) + 1;
        ends[k] = end_pad(xh.shape[1 + k], pads[k], k_eff, strides[k], out_s[2 + k]);
    }
    let xh = fit_spatial(e, xh, &mut ends)?;
    // TOSA pad order: top, bottom, left, right.
    let pad = [pads[0], ends[0], pads[1], ends[1]];
    let out_nhwc = [out_s[0], out_s[2], out_s[3], out_s[1]];
    let zp = e.zp(dt)?;
    let acc = accumulator(e, dt)?;
    let attrs = [
        ("pad", e.i64s(&pad)),
        ("stride", e.i64s(&strides)),
        ("dilation", e.i64s(&dil)),
        ("acc_type", acc),
    ];
    let y = if group == 1 {
        let wh = e.transpose(&w, &NCHW_TO_NHWC)?; // OIHW → OHWI
        e.op(
            "tosa.conv2d",
            &[&xh, &wh, &bias, &zp, &zp],
            &attrs,
            &out_nhwc,
            dt,
        )?
    } else if group == c && w.shape[1] == 1 && o % c == 0 {
        // Depthwise: OIHW = (C·M)x1xkHxkW → kHxkWxCxM.
        let m = o / c;
        let w4 = e.reshape(&w, &[c, m, w.shape[2], w.shape[3]])?;
        let wd = e.transpose(&w4, &[2, 3, 0, 1])?;
        e.op(
            "tosa.depthwise_conv2d",
            &[&xh, &wd, &bias, &zp, &zp],
            &attrs,
            &out_nhwc,
            dt,
        )?
    } else {
        // Grouped: one tosa.conv2d per group on its channel slices, concatenated.
        if c % group != 0 || o % group != 0 {
            return Err(format!("group {group} does not divide the channels"));
        }
        let (cg, og) = (c / group, o / group);
        let wh = e.transpose(&w, &NCHW_TO_NHWC)?; // OIHW → OHWI
        let (n, h, wd) = (xh.shape[0], xh.shape[1], xh.shape[2]);
        let mut parts = vec![];
        for g in 0..group {
            let xg = super::data::slice_at(e, &xh, &[0, 0, 0, g * cg], &[n, h, wd, cg])?;
            let wg = super::data::slice_at(
                e,
                &wh,
                &[g * og, 0, 0, 0],
                &[og, wh.shape[1], wh.shape[2], cg],
            )?;
            let bg = super::data::slice_at(e, &bias, &[g * og], &[og])?;
            let out_g = [out_nhwc[0], out_nhwc[1], out_nhwc[2], og];
            parts.push(e.op(
                "tosa.conv2d",
                &[&xg, &wg, &bg, &zp, &zp],
                &attrs,
                &out_g,
                dt,
            )?);
        }
        let refs: Vec<&T> = parts.iter().collect();
        e.op(
            "tosa.concat",
            &refs,
            &[("axis", e.i32_attr(3))],
            &out_nhwc,
            dt,
        )?
    };
    let y = e.transpose(&y, &NHWC_TO_NCHW)?;
    let act = e.attr_str(op, "activation");
    let alpha = e.attr_f64(op, "activation_alpha", 0.01);
    Ok(vec![activation(e, y, act, alpha)?])
}

/// ONNX ConvTranspose as `tosa.transpose_conv2d`: TOSA's output is
/// `(H-1)*stride + out_pad_top + out_pad_bottom + kH`, so ONNX's pads become
/// negative output padding (cropping) and `output_padding` adds at the end.
pub fn conv_transpose2d<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let w = e.input(op, 1)?;
    let (out_s, dt) = e.out(op, 0)?;
    static_dims(&w, "conv_transpose2d's filter")?;
    let strides = e.attr_ints(op, "strides").unwrap_or(vec![1, 1]);
    let pads = e.attr_ints(op, "pads").unwrap_or(vec![0, 0, 0, 0]);
    let dil = e.attr_ints(op, "dilations").unwrap_or(vec![1, 1]);
    let out_pad = e.attr_ints(op, "output_padding").unwrap_or(vec![0, 0]);
    if x.rank() != 4 || w.rank() != 4 || pads.len() != 4 || strides.len() != 2 || out_pad.len() != 2
    {
        return Err("only 2-D NCHW transposed convolutions are exported".into());
    }
    if e.attr_i64(op, "group", 1) != 1 {
        return Err("a grouped transposed convolution has no TOSA equivalent".into());
    }
    if dil.iter().any(|&d| d != 1) {
        return Err("a dilated transposed convolution has no TOSA equivalent".into());
    }
    let bias = conv_bias(e, op, w.shape[1], dt)?;
    let xh = e.transpose(&x, &NCHW_TO_NHWC)?;
    // Filter C x O x kH x kW -> TOSA's O x kH x kW x C.
    let wh = e.transpose(&w, &[1, 2, 3, 0])?;
    let out_pad = [
        -pads[0],
        -pads[2] + out_pad[0],
        -pads[1],
        -pads[3] + out_pad[1],
    ];
    let out_nhwc = [out_s[0], out_s[2], out_s[3], out_s[1]];
    let zp = e.zp(dt)?;
    let acc = accumulator(e, dt)?;
    let attrs = [
        ("out_pad", e.i64s(&out_pad)),
        ("stride", e.i64s(&strides)),
        ("acc_type", acc),
    ];
    let y = e.op(
        "tosa.transpose_conv2d",
        &[&xh, &wh, &bias, &zp, &zp],
        &attrs,
        &out_nhwc,
        dt,
    )?;
    Ok(vec![e.transpose(&y, &NHWC_TO_NCHW)?])
}

/// A scale as a fraction `n / d` (exact for the ratios models use: 2, 1.5, 0.5, …).
fn fraction(x: f64) -> Option<(i64, i64)> {
    (1..=1024i64)
        .map(|d| ((x * d as f64).round() as i64, d))
        .find(|&(n, d)| n > 0 && ((n as f64 / d as f64) - x).abs() < 1e-9)
}

/// ONNX Resize of the H and W dims of an NCHW tensor as `tosa.resize`.
/// TOSA maps output index `o` to input `(o·d + offset) / n` and rounds
/// nearest halves up; the ONNX coordinate modes and rounding modes become
/// the scale fraction and offset (all scaled by 2 so half offsets stay
/// integral, and by 2 once more when a rounding mode needs a nudge below a
/// tie: floor(v) = round_half_up(v − ½), round_prefer_floor(v) =
/// round_half_up(v − ε), ceil(v) = round_half_up(v + ½ − ε)).
pub fn resize<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let (out_s, dt) = e.out(op, 0)?;
    static_dims(&x, "resize's input")?;
    if x.rank() != 4 || out_s[0] != x.shape[0] || out_s[1] != x.shape[1] {
        return Err("only resizing H and W of a 4-D NCHW tensor has a TOSA equivalent".into());
    }
    let mode = e.attr_str(op, "mode").unwrap_or("nearest");
    let coord = e
        .attr_str(op, "coordinate_transformation_mode")
        .unwrap_or("half_pixel");
    let nearest = e
        .attr_str(op, "nearest_mode")
        .unwrap_or("round_prefer_floor");
    // Antialiasing, dropped outside taps and a subset of axes have no TOSA
    // form (`scales` below is indexed per dim).
    for a in ["antialias", "exclude_outside"] {
        if e.body.op(op).attr(a).and_then(|v| v.as_int()).unwrap_or(0) != 0 {
            return Err(format!("resize with '{a}' has no TOSA equivalent"));
        }
    }
    if e.body.op(op).attr("axes").is_some() {
        return Err("resize of a subset of 'axes' has no TOSA equivalent".into());
    }
    let scales = e.body.op(op).attr("scales").and_then(|a| a.as_f64_array());
    // Per spatial dim k: (n, d, offset) with input = (o·d + offset) / n.
    let mut params = [(0i64, 0i64, 0i64); 2];
    for k in 0..2 {
        let (i, o) = (x.shape[2 + k], out_s[2 + k]);
        let (n, d) = match coord {
            "align_corners" if o > 1 => (o - 1, (i - 1).max(0)),
            "align_corners" => {
                return Err("align_corners resize to length 1 has no TOSA equivalent".into())
            }
            _ => match &scales {
                Some(sc) => fraction(sc[2 + k])
                    .ok_or_else(|| format!("resize scale {} is not a small fraction", sc[2 + k]))?,
                None => (o, i),
            },
        };
        // Everything doubled: half_pixel's -½ is then an integer offset.
        let (mut n, mut d) = (2 * n, 2 * d);
        let mut off = match coord {
            "half_pixel" | "pytorch_half_pixel" => (d - n) / 2,
            "asymmetric" | "align_corners" => 0,
            c => {
                return Err(format!(
                    "resize coordinate mode '{c}' has no TOSA equivalent"
                ))
            }
        };
        if coord == "pytorch_half_pixel" && o == 1 {
            off = 0;
        }
        if mode == "nearest" {
            match nearest {
                "round_prefer_ceil" => {}
                // Doubling again leaves room for a nudge of 1/n' below ties.
                "floor" => off -= n / 2,
                "round_prefer_floor" | "ceil" => {
                    n *= 2;
                    d *= 2;
                    off = 2 * off - 1 + if nearest == "ceil" { n / 2 } else { 0 };
                }
                m => return Err(format!("resize nearest mode '{m}' has no TOSA equivalent")),
            }
        }
        params[k] = (n, d, off);
    }
    let tosa_mode = match mode {
        "nearest" => "NEAREST_NEIGHBOR",
        "linear" => "BILINEAR",
        m => return Err(format!("resize mode '{m}' has no TOSA equivalent")),
    };
    let (y, xp) = (params[0], params[1]);
    let border = |p: (i64, i64, i64), i: i64, o: i64| (o - 1) * p.1 - (i - 1) * p.0 + p.2;
    let scale = e.shape_const(&[y.0, y.1, xp.0, xp.1])?;
    let offset = e.shape_const(&[y.2, xp.2])?;
    let bord = e.shape_const(&[
        border(y, x.shape[2], out_s[2]),
        border(xp, x.shape[3], out_s[3]),
    ])?;
    let text = format!("#tosa.resize_mode<{tosa_mode}>");
    let mode_attr = melior::ir::Attribute::parse(e.ctx, &text)
        .ok_or_else(|| format!("MLIR rejects the attribute '{text}'"))?;
    let xh = e.transpose(&x, &NCHW_TO_NHWC)?;
    let out_nhwc = [out_s[0], out_s[2], out_s[3], out_s[1]];
    let r = e.op_values(
        "tosa.resize",
        &[xh.v, scale, offset, bord],
        &[("mode", mode_attr)],
        &out_nhwc,
        dt,
    )?;
    Ok(vec![e.transpose(&r, &NHWC_TO_NCHW)?])
}

fn pool<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId, max: bool) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let (out_s, dt) = e.out(op, 0)?;
    let kernel = e.attr_ints(op, "kernel_shape").ok_or("no kernel_shape")?;
    let strides = e.attr_ints(op, "strides").unwrap_or(vec![1, 1]);
    let pads = e.attr_ints(op, "pads").unwrap_or(vec![0, 0, 0, 0]);
    let dil = e.attr_ints(op, "dilations").unwrap_or(vec![1, 1]);
    if x.rank() != 4 || kernel.len() != 2 || pads.len() != 4 || strides.len() != 2 {
        return Err("only 2-D NCHW pooling is exported".into());
    }
    if dil.iter().any(|&d| d != 1) {
        return Err("dilated pooling has no TOSA equivalent".into());
    }
    let mut xh = e.transpose(&x, &NCHW_TO_NHWC)?;
    let mut begins = [pads[0], pads[1]];
    let include_pad = !max && e.attr_i64(op, "count_include_pad", 0) != 0;
    if include_pad && pads.iter().any(|&p| p != 0) {
        if e.attr_i64(op, "ceil_mode", 0) != 0 {
            return Err(
                "avg_pool2d with count_include_pad and ceil_mode has no TOSA equivalent".into(),
            );
        }
        // Padded cells count: pad with zeros first, then pool without padding.
        let padding = e.shape_const(&[0, 0, pads[0], pads[2], pads[1], pads[3], 0, 0])?;
        let pc = e.splat(0.0, 1, dt)?;
        let s = [
            xh.shape[0],
            xh.shape[1] + pads[0] + pads[2],
            xh.shape[2] + pads[1] + pads[3],
            xh.shape[3],
        ];
        xh = e.op_values("tosa.pad", &[xh.v, padding, pc.v], &[], &s, dt)?;
        begins = [0, 0];
    }
    let mut ends = [0i64; 2];
    for k in 0..2 {
        ends[k] = end_pad(
            xh.shape[1 + k],
            begins[k],
            kernel[k],
            strides[k],
            out_s[2 + k],
        );
    }
    let xh = fit_spatial(e, xh, &mut ends)?;
    let pad = [begins[0], ends[0], begins[1], ends[1]];
    let out_nhwc = [out_s[0], out_s[2], out_s[3], out_s[1]];
    let mut attrs = vec![
        ("kernel", e.i64s(&kernel)),
        ("stride", e.i64s(&strides)),
        ("pad", e.i64s(&pad)),
    ];
    let y = if max {
        e.op("tosa.max_pool2d", &[&xh], &attrs, &out_nhwc, dt)?
    } else {
        attrs.push(("acc_type", e.type_attr(DType::F32)?));
        let zp = e.zp(dt)?;
        e.op("tosa.avg_pool2d", &[&xh, &zp, &zp], &attrs, &out_nhwc, dt)?
    };
    Ok(vec![e.transpose(&y, &NHWC_TO_NCHW)?])
}

pub fn avg_pool2d<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    pool(e, op, false)
}

pub fn max_pool2d<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    pool(e, op, true)
}

/// One `tosa.reduce_*` per axis (dims kept).
fn reduce_axes<'c, 'a>(
    e: &Ex<'c, 'a>,
    name: &str,
    x: &T<'c, 'a>,
    axes: &[usize],
) -> Res<T<'c, 'a>> {
    let mut y = x.clone();
    for &a in axes {
        let mut s = y.shape.clone();
        s[a] = 1;
        y = e.op(name, &[&y], &[("axis", e.i32_attr(a as i64))], &s, y.dt)?;
    }
    Ok(y)
}

/// The number of elements over `axes`.
fn count(x: &T, axes: &[usize]) -> Res<i64> {
    let mut n = 1;
    for &a in axes {
        if x.shape[a] < 0 {
            return Err("a mean over a dim that is not static".into());
        }
        n *= x.shape[a];
    }
    Ok(n)
}

fn global<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId, max: bool) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let axes: Vec<usize> = (2..x.rank()).collect();
    if max {
        return Ok(vec![reduce_axes(e, "tosa.reduce_max", &x, &axes)?]);
    }
    let s = reduce_axes(e, "tosa.reduce_sum", &x, &axes)?;
    let n = count(&x, &axes)?;
    Ok(vec![e.scale(&s, 1.0 / n as f64)?])
}

pub fn global_avg_pool<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    global(e, op, false)
}

pub fn global_max_pool<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    global(e, op, true)
}

fn reduce<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId, name: &str, mean: bool) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let (out_s, _) = e.out(op, 0)?;
    let axes = e.attr_ints(op, "axes").unwrap_or_default();
    let axes: Vec<usize> = if axes.is_empty() {
        if e.attr_i64(op, "noop_with_empty_axes", 0) != 0 {
            return Ok(vec![x]);
        }
        (0..x.rank()).collect()
    } else {
        axes.iter()
            .map(|&a| norm_axis(a, x.rank()))
            .collect::<Res<_>>()?
    };
    let mut y = reduce_axes(e, name, &x, &axes)?;
    if mean {
        let n = count(&x, &axes)?;
        y = e.scale(&y, 1.0 / n as f64)?;
    }
    Ok(vec![e.reshape(&y, &out_s)?])
}

pub fn reduce_sum<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    reduce(e, op, "tosa.reduce_sum", false)
}
pub fn reduce_mean<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    reduce(e, op, "tosa.reduce_sum", true)
}
pub fn reduce_max<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    reduce(e, op, "tosa.reduce_max", false)
}
pub fn reduce_min<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    reduce(e, op, "tosa.reduce_min", false)
}
pub fn reduce_prod<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    reduce(e, op, "tosa.reduce_product", false)
}

/// `tosa.argmax` (i32) reshaped for `keepdims` and cast to the result type.
/// ONNX ArgMin: the first maximum of the negated input is the first minimum.
pub fn argmin<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let zero = e.splat(0.0, x.rank(), x.dt)?;
    let neg = e.bin("tosa.sub", &zero, &x)?;
    arg_max_of(e, op, neg)
}

pub fn argmax<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    arg_max_of(e, op, x)
}

/// `tosa.argmax` of `x` along the op's `axis`, with the op's result shape and type.
fn arg_max_of<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId, x: T<'c, 'a>) -> Out<'c, 'a> {
    let (out_s, dt) = e.out(op, 0)?;
    if e.attr_i64(op, "select_last_index", 0) != 0 {
        return Err("argmax with select_last_index has no TOSA equivalent".into());
    }
    let a = norm_axis(e.attr_i64(op, "axis", 0), x.rank())?;
    let mut s = x.shape.clone();
    s.remove(a);
    let y = e.op(
        "tosa.argmax",
        &[&x],
        &[("axis", e.i32_attr(a as i64))],
        &s,
        DType::I32,
    )?;
    let y = e.reshape(&y, &out_s)?;
    Ok(vec![if dt == DType::I32 {
        y
    } else {
        e.op("tosa.cast", &[&y], &[], &out_s, dt)?
    }])
}

/// softmax(x) along `axis`: exp(x - max) / sum.
fn softmax_of<'c, 'a>(e: &Ex<'c, 'a>, x: &T<'c, 'a>, axis: usize, log: bool) -> Res<T<'c, 'a>> {
    let m = reduce_axes(e, "tosa.reduce_max", x, &[axis])?;
    let d = e.bin("tosa.sub", x, &m)?;
    let ex = e.un("tosa.exp", &d)?;
    let s = reduce_axes(e, "tosa.reduce_sum", &ex, &[axis])?;
    if log {
        let l = e.un("tosa.log", &s)?;
        return e.bin("tosa.sub", &d, &l);
    }
    let r = e.un("tosa.reciprocal", &s)?;
    e.bin("tosa.mul", &ex, &r)
}

pub fn softmax<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let a = norm_axis(e.attr_i64(op, "axis", -1), x.rank())?;
    Ok(vec![softmax_of(e, &x, a, false)?])
}

pub fn log_softmax<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let a = norm_axis(e.attr_i64(op, "axis", -1), x.rank())?;
    Ok(vec![softmax_of(e, &x, a, true)?])
}

/// Inference batch norm: (x - mean) · scale / sqrt(var + eps) + bias, per channel (dim 1).
pub fn batch_norm<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let eps = e.attr_f64(op, "epsilon", 1e-5);
    if x.rank() < 2 {
        return Err("batch_norm needs a rank >= 2 input".into());
    }
    let c = x.shape[1];
    let mut cs = vec![1i64; x.rank()];
    cs[1] = c;
    let per_channel = |i: usize| -> Res<T<'c, 'a>> {
        let t = e.input(op, i)?;
        e.reshape(&t, &cs)
    };
    let (scale, bias, mean, var) = (
        per_channel(1)?,
        per_channel(2)?,
        per_channel(3)?,
        per_channel(4)?,
    );
    let ve = e.offset(&var, eps)?;
    let r = e.un("tosa.rsqrt", &ve)?;
    let k = e.bin("tosa.mul", &scale, &r)?;
    let d = e.bin("tosa.sub", &x, &mean)?;
    let y = e.bin("tosa.mul", &d, &k)?;
    Ok(vec![e.bin("tosa.add", &y, &bias)?])
}

/// Layer norm over the dims from `axis` on.
pub fn layer_norm<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let a = norm_axis(e.attr_i64(op, "axis", -1), x.rank())?;
    let eps = e.attr_f64(op, "epsilon", 1e-5);
    let axes: Vec<usize> = (a..x.rank()).collect();
    let nrm = normalize(e, &x, &axes, eps)?;
    let scale = e.input(op, 1)?;
    let mut y = e.bin("tosa.mul", &nrm, &scale)?;
    if e.num_inputs(op) > 2 {
        let b = e.input(op, 2)?;
        y = e.bin("tosa.add", &y, &b)?;
    }
    Ok(vec![y])
}

/// `(x - mean) / sqrt(var + eps)` over `axes` (population variance).
fn normalize<'c, 'a>(e: &Ex<'c, 'a>, x: &T<'c, 'a>, axes: &[usize], eps: f64) -> Res<T<'c, 'a>> {
    let n = count(x, axes)? as f64;
    let s = reduce_axes(e, "tosa.reduce_sum", x, axes)?;
    let mean = e.scale(&s, 1.0 / n)?;
    let d = e.bin("tosa.sub", x, &mean)?;
    let d2 = e.bin("tosa.mul", &d, &d)?;
    let vs = reduce_axes(e, "tosa.reduce_sum", &d2, axes)?;
    let var = e.scale(&vs, 1.0 / n)?;
    let ve = e.offset(&var, eps)?;
    let r = e.un("tosa.rsqrt", &ve)?;
    e.bin("tosa.mul", &d, &r)
}

/// RMS normalisation: `x / sqrt(mean(x^2) + eps) * scale` over `axis..`.
pub fn rms_norm<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let a = norm_axis(e.attr_i64(op, "axis", -1), x.rank())?;
    let eps = e.attr_f64(op, "epsilon", 1e-5);
    let axes: Vec<usize> = (a..x.rank()).collect();
    let n = count(&x, &axes)? as f64;
    let x2 = e.bin("tosa.mul", &x, &x)?;
    let s = reduce_axes(e, "tosa.reduce_sum", &x2, &axes)?;
    let ms = e.offset(&e.scale(&s, 1.0 / n)?, eps)?;
    let r = e.un("tosa.rsqrt", &ms)?;
    let y = e.bin("tosa.mul", &x, &r)?;
    let scale = e.input(op, 1)?;
    Ok(vec![e.bin("tosa.mul", &y, &scale)?])
}

/// Instance normalisation: normalise each sample and channel over the
/// spatial dims, then `* scale[c] + bias[c]`.
pub fn instance_norm<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    if x.rank() < 3 {
        return Err("instance_norm needs N x C x spatial dims".into());
    }
    let eps = e.attr_f64(op, "epsilon", 1e-5);
    let axes: Vec<usize> = (2..x.rank()).collect();
    let nrm = normalize(e, &x, &axes, eps)?;
    // Per-channel parameters as 1 x C x 1 ... 1.
    let mut pshape = vec![1i64; x.rank()];
    pshape[1] = x.shape[1];
    let scale = e.reshape(&e.input(op, 1)?, &pshape)?;
    let bias = e.reshape(&e.input(op, 2)?, &pshape)?;
    let y = e.bin("tosa.mul", &nrm, &scale)?;
    Ok(vec![e.bin("tosa.add", &y, &bias)?])
}

/// Tile `x` (already of the right rank) up to `shape` where its dims are 1.
pub fn tile_to<'c, 'a>(e: &Ex<'c, 'a>, x: &T<'c, 'a>, shape: &[i64]) -> Res<T<'c, 'a>> {
    let mut mult = vec![];
    for (&d, &t) in x.shape.iter().zip(shape) {
        if d == t {
            mult.push(1);
        } else if d == 1 && t >= 0 {
            mult.push(t);
        } else {
            return Err(format!(
                "cannot broadcast {:?} to {shape:?} with static tiling",
                x.shape
            ));
        }
    }
    if mult.iter().all(|&m| m == 1) {
        return Ok(x.clone());
    }
    let m = e.shape_const(&mult)?;
    e.op_values("tosa.tile", &[x.v, m], &[], shape, x.dt)
}

/// a @ b with numpy broadcasting of batch dims, through rank-3 `tosa.matmul`.
fn matmul_of<'c, 'a>(
    e: &Ex<'c, 'a>,
    a: &T<'c, 'a>,
    b: &T<'c, 'a>,
    out: &[i64],
    dt: DType,
) -> Res<T<'c, 'a>> {
    if a.rank() < 2 || b.rank() < 2 {
        return Err("matmul of vectors (rank 1) is not exported".into());
    }
    static_dims(a, "matmul")?;
    static_dims(b, "matmul")?;
    let (m, k) = (a.shape[a.rank() - 2], a.shape[a.rank() - 1]);
    let n = b.shape[b.rank() - 1];
    let ab = &a.shape[..a.rank() - 2];
    let bb = &b.shape[..b.rank() - 2];
    let zp = e.zp(a.dt)?;
    let y = if bb.iter().product::<i64>() == 1 && !ab.is_empty() {
        // Fold a's batch into rows: [1, B·M, K] x [1, K, N].
        let rows: i64 = ab.iter().product::<i64>() * m;
        let a3 = e.reshape(a, &[1, rows, k])?;
        let b3 = e.reshape(b, &[1, k, n])?;
        e.op("tosa.matmul", &[&a3, &b3, &zp, &zp], &[], &[1, rows, n], dt)?
    } else {
        let batch = Ex::bshape(ab, bb);
        let bn: i64 = batch.iter().product();
        let expand = |x: &T<'c, 'a>, r: i64, c: i64| -> Res<T<'c, 'a>> {
            let x = e.to_rank(x, batch.len() + 2)?;
            let mut s = batch.clone();
            s.extend([r, c]);
            let x = tile_to(e, &x, &s)?;
            e.reshape(&x, &[bn, r, c])
        };
        let a3 = expand(a, m, k)?;
        let b3 = expand(b, k, n)?;
        e.op("tosa.matmul", &[&a3, &b3, &zp, &zp], &[], &[bn, m, n], dt)?
    };
    e.reshape(&y, out)
}

/// Swap the last two dims.
fn transpose_last<'c, 'a>(e: &Ex<'c, 'a>, x: &T<'c, 'a>) -> Res<T<'c, 'a>> {
    let r = x.rank();
    let mut p: Vec<i64> = (0..r as i64).collect();
    p.swap(r - 1, r - 2);
    e.transpose(x, &p)
}

pub fn matmul<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let (a, b) = (e.input(op, 0)?, e.input(op, 1)?);
    let (s, dt) = e.out(op, 0)?;
    Ok(vec![matmul_of(e, &a, &b, &s, dt)?])
}

pub fn batch_matmul<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let (mut a, mut b) = (e.input(op, 0)?, e.input(op, 1)?);
    let (s, dt) = e.out(op, 0)?;
    if e.attr_i64(op, "transpose_a", 0) != 0 {
        a = transpose_last(e, &a)?;
    }
    if e.attr_i64(op, "transpose_b", 0) != 0 {
        b = transpose_last(e, &b)?;
    }
    Ok(vec![matmul_of(e, &a, &b, &s, dt)?])
}

/// Attention as TOSA: softmax(q·kᵀ·scale + mask)·v, an i1 mask selecting
/// −∞ where false, `causal` adding a constant −∞ above the diagonal.
pub fn attention<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let (q, k, v) = (e.input(op, 0)?, e.input(op, 1)?, e.input(op, 2)?);
    let (s, dt) = e.out(op, 0)?;
    let r = q.rank();
    if r < 2 || k.rank() != r || v.rank() != r {
        return Err("attention needs query, key and value of one rank >= 2".into());
    }
    let (sq, d, sk) = (q.shape[r - 2], q.shape[r - 1], k.shape[r - 2]);
    let scale = e
        .body
        .op(op)
        .attr("scale")
        .and_then(|a| a.as_float())
        .unwrap_or(1.0 / (d.max(1) as f64).sqrt());
    let mut sshape = Ex::bshape(&q.shape[..r - 2], &k.shape[..r - 2]);
    sshape.extend([sq, sk]);
    let kt = transpose_last(e, &k)?;
    let scores = matmul_of(e, &q, &kt, &sshape, dt)?;
    let mut scores = e.scale(&scores, scale)?;
    if e.num_inputs(op) > 3 {
        let m = e.input(op, 3)?;
        scores = if m.dt == DType::I1 {
            let hidden = e.splat(f64::NEG_INFINITY, sshape.len(), dt)?;
            e.ew("tosa.select", &[&m, &scores, &hidden], &sshape, dt)?
        } else {
            e.bin("tosa.add", &scores, &m)?
        };
    }
    if e.body.op(op).attr("causal").and_then(|a| a.as_bool()) == Some(true) {
        let vals: Vec<f64> = (0..sq * sk)
            .map(|p| {
                if p % sk > p / sk {
                    f64::NEG_INFINITY
                } else {
                    0.0
                }
            })
            .collect();
        let tri = e.constant(&Tensor::from_f64(vec![sq as usize, sk as usize], dt, vals))?;
        scores = e.bin("tosa.add", &scores, &tri)?;
    }
    let p = softmax_of(e, &scores, sshape.len() - 1, false)?;
    Ok(vec![matmul_of(e, &p, &v, &s, dt)?])
}

/// alpha · A' · B' + beta · C, then the activation.
pub fn gemm<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let (mut a, mut b) = (e.input(op, 0)?, e.input(op, 1)?);
    let (s, dt) = e.out(op, 0)?;
    if e.attr_i64(op, "transA", 0) != 0 {
        a = transpose_last(e, &a)?;
    }
    if e.attr_i64(op, "transB", 0) != 0 {
        b = transpose_last(e, &b)?;
    }
    let mut y = matmul_of(e, &a, &b, &s, dt)?;
    let alpha = e.attr_f64(op, "alpha", 1.0);
    if alpha != 1.0 {
        y = e.scale(&y, alpha)?;
    }
    if e.num_inputs(op) > 2 {
        let mut c = e.input(op, 2)?;
        let beta = e.attr_f64(op, "beta", 1.0);
        if beta != 1.0 {
            c = e.scale(&c, beta)?;
        }
        y = e.bin("tosa.add", &y, &c)?;
    }
    let act = e.attr_str(op, "activation");
    let alpha = e.attr_f64(op, "activation_alpha", 0.01);
    Ok(vec![activation(e, y, act, alpha)?])
}

/// Rows of `table` (axis 0) at `ids`: `tosa.gather` over [1, V, D]. Negative
/// ids (ONNX counts them from the end) are not rewritten: TOSA requires
/// indices in [0, V).
fn gather_rows<'c, 'a>(e: &Ex<'c, 'a>, table: &T<'c, 'a>, ids: &T<'c, 'a>) -> Res<T<'c, 'a>> {
    static_dims(table, "gather")?;
    static_dims(ids, "gather")?;
    let v = table.shape[0];
    let d: i64 = table.shape[1..].iter().product();
    let n: i64 = ids.shape.iter().product();
    let t3 = e.reshape(table, &[1, v, d])?;
    let mut i = ids.clone();
    if i.dt != DType::I32 {
        i = e.op("tosa.cast", &[&i], &[], &i.shape.clone(), DType::I32)?;
    }
    let i2 = e.reshape(&i, &[1, n])?;
    let g = e.op("tosa.gather", &[&t3, &i2], &[], &[1, n, d], table.dt)?;
    let mut s = ids.shape.clone();
    s.extend_from_slice(&table.shape[1..]);
    e.reshape(&g, &s)
}

pub fn embedding<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let (t, i) = (e.input(op, 0)?, e.input(op, 1)?);
    let (s, _) = e.out(op, 0)?;
    let g = gather_rows(e, &t, &i)?;
    Ok(vec![e.reshape(&g, &s)?])
}

/// ONNX Gather along `axis`: move the axis to the front, gather rows, move back.
pub fn gather<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let (x, i) = (e.input(op, 0)?, e.input(op, 1)?);
    let (s, _) = e.out(op, 0)?;
    let a = norm_axis(e.attr_i64(op, "axis", 0), x.rank())?;
    let r = x.rank() as i64;
    let a64 = a as i64;
    // [pre, V, post] → [V, pre, post]
    let mut p: Vec<i64> = vec![a64];
    p.extend((0..r).filter(|&d| d != a64));
    let xt = e.transpose(&x, &p)?;
    let g = gather_rows(e, &xt, &i)?; // [idx..., pre, post]
    let q = i.rank() as i64;
    // → [pre, idx..., post]
    let mut back: Vec<i64> = (q..q + a64).collect();
    back.extend(0..q);
    back.extend(q + a64..q + r - 1);
    let y = e.transpose(&g, &back)?;
    Ok(vec![e.reshape(&y, &s)?])
}

/// Flat indices into `x` for ONNX Gather/ScatterElements along `axis`:
/// `index·stride(axis) + base(position)` as `1 x n` i32, the base being each
/// index position's offset with its axis coordinate 0 (a constant: shapes are
/// static); negative indices wrap.
fn flat_element_indices<'c, 'a>(
    e: &Ex<'c, 'a>,
    x: &T<'c, 'a>,
    idx: &T<'c, 'a>,
    axis: usize,
) -> Res<T<'c, 'a>> {
    let r = x.rank();
    let mut strides = vec![1i64; r];
    for d in (0..r.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * x.shape[d + 1];
    }
    let n: i64 = idx.shape.iter().product();
    let mut base = Vec::with_capacity(n as usize);
    for flat in 0..n {
        let (mut rest, mut off) = (flat, 0i64);
        for d in (0..r).rev() {
            let c = rest % idx.shape[d];
            rest /= idx.shape[d];
            if d != axis {
                off += c * strides[d];
            }
        }
        base.push(off);
    }
    let ishape: Vec<usize> = idx.shape.iter().map(|&d| d as usize).collect();
    let base = e.constant(&Tensor::from_i64(ishape, DType::I32, base))?;
    let mut i = idx.clone();
    if i.dt != DType::I32 {
        i = e.op("tosa.cast", &[&i], &[], &i.shape.clone(), DType::I32)?;
    }
    let zero = e.splat(0.0, r, DType::I32)?;
    let dim = e.splat(x.shape[axis] as f64, r, DType::I32)?;
    let negative = e.bin("tosa.greater", &zero, &i)?;
    let wrapped = e.bin("tosa.add", &i, &dim)?;
    let i = e.ew(
        "tosa.select",
        &[&negative, &wrapped, &i],
        &i.shape.clone(),
        DType::I32,
    )?;
    let stride = e.splat(strides[axis] as f64, r, DType::I32)?;
    let scaled = e.bin("tosa.mul", &i, &stride)?;
    let flat = e.bin("tosa.add", &scaled, &base)?;
    e.reshape(&flat, &[1, n])
}

/// ONNX ScatterElements as `tosa.scatter` over the flattened input: each
/// update is a row of one element at its flat index. Reductions have no
/// TOSA form.
pub fn scatter_elements<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let (x, idx, upd) = (e.input(op, 0)?, e.input(op, 1)?, e.input(op, 2)?);
    let (s, dt) = e.out(op, 0)?;
    for (t, what) in [(&x, "input"), (&idx, "indices"), (&upd, "updates")] {
        static_dims(t, &format!("scatter_elements' {what}"))?;
    }
    let reduction = e.attr_str(op, "reduction").unwrap_or("none");
    if reduction != "none" {
        return Err(format!(
            "scatter_elements with reduction '{reduction}' has no TOSA equivalent"
        ));
    }
    let a = norm_axis(e.attr_i64(op, "axis", 0), x.rank())?;
    let indices = flat_element_indices(e, &x, &idx, a)?;
    let (k, n): (i64, i64) = (x.shape.iter().product(), idx.shape.iter().product());
    let values = e.reshape(&x, &[1, k, 1])?;
    let rows = e.reshape(&upd, &[1, n, 1])?;
    let out = e.op(
        "tosa.scatter",
        &[&values, &indices, &rows],
        &[],
        &[1, k, 1],
        dt,
    )?;
    Ok(vec![e.reshape(&out, &s)?])
}

/// ONNX GatherElements as `tosa.gather` over the flattened input, one
/// element per row at its flat index.
pub fn gather_elements<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let (x, idx) = (e.input(op, 0)?, e.input(op, 1)?);
    let (s, dt) = e.out(op, 0)?;
    static_dims(&x, "gather_elements' input")?;
    static_dims(&idx, "gather_elements' indices")?;
    let a = norm_axis(e.attr_i64(op, "axis", 0), x.rank())?;
    let indices = flat_element_indices(e, &x, &idx, a)?;
    let (k, n): (i64, i64) = (x.shape.iter().product(), idx.shape.iter().product());
    let values = e.reshape(&x, &[1, k, 1])?;
    let g = e.op("tosa.gather", &[&values, &indices], &[], &[1, n, 1], dt)?;
    Ok(vec![e.reshape(&g, &s)?])
}

/// Constant-mode pad with non-negative pads.
pub fn pad<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let (s, dt) = e.out(op, 0)?;
    let mode = e.attr_str(op, "mode").unwrap_or("constant");
    if mode != "constant" {
        return Err(format!(
            "pad mode '{mode}' is not exported (TOSA pads with a constant)"
        ));
    }
    let pads = e.attr_ints(op, "pads").ok_or("pad has no pads")?;
    if e.attr_ints(op, "axes").is_some_and(|a| !a.is_empty()) {
        return Err("pad with 'axes' is not exported".into());
    }
    let r = x.rank();
    if pads.len() != 2 * r || pads.iter().any(|&p| p < 0) {
        return Err("pad with negative (cropping) pads is not exported".into());
    }
    let mut tp = vec![];
    for d in 0..r {
        tp.push(pads[d]);
        tp.push(pads[r + d]);
    }
    let value = e.attr_f64(op, "value", 0.0);
    let padding = e.shape_const(&tp)?;
    let pc = e.splat(value, 1, dt)?;
    Ok(vec![e.op_values(
        "tosa.pad",
        &[x.v, padding, pc.v],
        &[],
        &s,
        dt,
    )?])
}
