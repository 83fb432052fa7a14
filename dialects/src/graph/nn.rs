//! Neural-network ops: convolution, pooling, normalisation and softmax
//! (ONNX semantics and attribute names; NCHW activations, OIHW filters).

// Reference kernels index several arrays by the same loop variable.
#![allow(clippy::needless_range_loop)]

use super::elementwise::COMPUTE_FORMAT;
use super::linalg::batched;
use super::opkit::*;
use crate::infer::broadcast_shapes;
use crate::infer::same_as_first;
use crate::interfaces::*;
use ge_ir::attributes::{AttrDict, Format};
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{AttrSource, InferCtx, OpDef};
use ge_ir::tensor::{broadcast_index, numel, Tensor};
use ge_ir::{DType, Dim, Type};

type SemResult = Result<Vec<Tensor>, String>;

// ---- shared shape arithmetic ------------------------------------------------

/// Output length of a sliding window along one axis (ONNX Conv/Pool):
/// `floor((in + pad_begin + pad_end - (dil*(k-1)+1)) / stride) + 1`, or with
/// `ceil_mode` the ceiling — minus one when the last window would start past
/// the input and the begin pad (PyTorch's and ONNX's rule). Symbolic inputs
/// stay symbolic (`B`, `H` flow through), except where `ceil_mode` makes the
/// answer depend on the value (then `?`).
#[allow(clippy::too_many_arguments)]
pub fn window_out(
    input: Dim,
    k: Dim,
    stride: i64,
    dil: i64,
    pad_begin: i64,
    pad_end: i64,
    ceil: bool,
    axis: &str,
) -> Result<Dim, String> {
    let Some(k) = k.as_static() else {
        return Ok(Dim::Unknown);
    };
    if k < 1 || stride < 1 || dil < 1 {
        return Err(format!(
            "window along {axis} needs kernel, stride and dilation >= 1 (got {k}, {stride}, {dil})"
        ));
    }
    let keff = dil.saturating_mul(k - 1).saturating_add(1);
    let span = input.add(Dim::Static(
        pad_begin.saturating_add(pad_end).saturating_sub(keff),
    ));
    if let Some(s) = span.as_static() {
        if s < 0 {
            return Err(format!(
                "kernel extent {keff} along {axis} exceeds the padded input size {}",
                s.saturating_add(keff)
            ));
        }
    }
    if !ceil {
        return Ok(span.div_const(stride).add(Dim::Static(1)));
    }
    let out = span.ceil_div_const(stride).add(Dim::Static(1));
    match (out.as_static(), input.as_static()) {
        (Some(o), Some(i)) => Ok(Dim::Static(
            if (o - 1).saturating_mul(stride) >= i.saturating_add(pad_begin) {
                o - 1
            } else {
                o
            },
        )),
        _ if pad_end.saturating_add(stride) <= keff => Ok(out),
        _ => Ok(Dim::Unknown),
    }
}

/// The concrete value of [`window_out`] for run-time shapes.
#[allow(clippy::too_many_arguments)]
pub fn window_out_usize(
    input: usize,
    k: usize,
    stride: i64,
    dil: i64,
    pb: i64,
    pe: i64,
    ceil: bool,
    axis: &str,
) -> Result<usize, String> {
    let d = window_out(
        Dim::Static(input as i64),
        Dim::Static(k as i64),
        stride,
        dil,
        pb,
        pe,
        ceil,
        axis,
    )?;
    match d.as_static() {
        Some(v) if v >= 0 => Ok(v as usize),
        _ => Err(format!("cannot compute the output size along {axis}")),
    }
}

fn opt_dim(d: &Option<Vec<Dim>>, i: usize) -> Dim {
    d.as_ref()
        .and_then(|d| d.get(i).copied())
        .unwrap_or(Dim::Unknown)
}

// ---- conv2d -------------------------------------------------------------

/// Attributes of conv2d / conv_transpose2d (and the quantised convolutions
/// of `qlinear`), checked.
pub struct ConvAttrs {
    pub strides: Vec<i64>,
    pub pads: Vec<i64>,
    pub dilations: Vec<i64>,
    pub group: i64,
}

impl ConvAttrs {
    fn of(src: &impl AttrSource, transposed: bool) -> Result<ConvAttrs, String> {
        if transposed {
            let a = ConvTranspose2d::attrs(src);
            ConvAttrs::check(a.strides(), a.pads(), a.dilations(), a.group())
        } else {
            let a = Conv2d::attrs(src);
            ConvAttrs::check(a.strides(), a.pads(), a.dilations(), a.group())
        }
    }

    pub fn check(
        strides: Vec<i64>,
        pads: Vec<i64>,
        dilations: Vec<i64>,
        group: i64,
    ) -> Result<ConvAttrs, String> {
        let strides = check_len("strides", strides, 2, "H, W")?;
        let pads = check_len("pads", pads, 4, "top, left, bottom, right")?;
        let dilations = check_len("dilations", dilations, 2, "H, W")?;
        check_conv(strides, pads, dilations, group)
    }
}

fn check_conv(
    strides: Vec<i64>,
    pads: Vec<i64>,
    dilations: Vec<i64>,
    group: i64,
) -> Result<ConvAttrs, String> {
    check_min("strides", &strides, 1)?;
    check_min("pads", &pads, 0)?;
    check_min("dilations", &dilations, 1)?;
    if group < 1 {
        return Err(format!("attribute 'group' must be >= 1, but got {group}"));
    }
    Ok(ConvAttrs {
        strides,
        pads,
        dilations,
        group,
    })
}

fn infer_conv2d(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = ConvAttrs::of(cx, false)?;
    let ts = cx.operand_types;
    Ok(vec![conv2d_type(ts[0], ts[1], ts.get(2).copied(), &a)?])
}

/// The result type of a 2-D convolution of `input` by `filter` (with
/// `bias`), of `input`'s element type.
pub(crate) fn conv2d_type(
    input: Type,
    filter: Type,
    bias: Option<Type>,
    a: &ConvAttrs,
) -> Result<Type, String> {
    let x = dims_rank(input, "input", 4, "NCHW")?;
    let w = dims_rank(filter, "filter", 4, "OIHW")?;
    let dt = dtype_of(input)?;
    let g = a.group;
    if let (Some(x), Some(w)) = (&x, &w) {
        let want = w[1].mul_const(g);
        if !x[1].compatible(want) {
            return Err(format!(
                "operand 'input' has {} channels, but operand 'filter' expects {} per group x group {g} = {want}",
                x[1], w[1]
            ));
        }
    }
    if let Some(m) = w.as_ref().and_then(|w| w[0].as_static()) {
        if m % g != 0 {
            return Err(format!(
                "operand 'filter' has {m} output channels, which is not a multiple of group {g}"
            ));
        }
    }
    if let Some(bias) = bias {
        let b = dims_rank(bias, "bias", 1, "O")?;
        if let (Some(b), Some(w)) = (&b, &w) {
            check_dim_eq(
                b[0],
                w[0],
                "operand 'bias' must have one entry per output channel",
            )?;
        }
    }
    let mut out = vec![opt_dim(&x, 0), opt_dim(&w, 0)];
    for (i, axis) in ["H", "W"].iter().enumerate() {
        out.push(window_out(
            opt_dim(&x, 2 + i),
            opt_dim(&w, 2 + i),
            a.strides[i],
            a.dilations[i],
            a.pads[i],
            a.pads[2 + i],
            false,
            axis,
        )?);
    }
    Ok(Type::tensor(&out, dt))
}

/// `out[i] += w * inp[j]` over the output range where the input index
/// `j = i*stride + off` lies in `0..inp.len()`.
#[inline]
fn axpy_window(out: &mut [f64], inp: &[f64], w: f64, stride: usize, off: isize) {
    let n_in = inp.len() as isize;
    let s = stride as isize;
    // first i with i*s + off >= 0, last i with i*s + off < n_in
    let lo = if off >= 0 { 0 } else { ((-off) + s - 1) / s };
    let hi = if n_in - off <= 0 {
        0
    } else {
        ((n_in - off + s - 1) / s).min(out.len() as isize)
    };
    if lo >= hi {
        return;
    }
    let (lo, hi) = (lo as usize, hi as usize);
    let start = (lo as isize * s + off) as usize;
    if stride == 1 {
        let o = &mut out[lo..hi];
        let x = &inp[start..start + (hi - lo)];
        let n = o.len();
        let mut i = 0;
        while i + 4 <= n {
            o[i] += w * x[i];
            o[i + 1] += w * x[i + 1];
            o[i + 2] += w * x[i + 2];
            o[i + 3] += w * x[i + 3];
            i += 4;
        }
        while i < n {
            o[i] += w * x[i];
            i += 1;
        }
    } else {
        let mut j = start;
        let mut i = lo;
        while i < hi {
            out[i] += w * inp[j];
            i += 1;
            j += stride;
        }
    }
}

fn sem_conv2d(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let a = ConvAttrs::of(cx, false)?;
    let (x, w) = (t[0], t[1]);
    expect_rank(x, "input", 4)?;
    expect_rank(w, "filter", 4)?;
    let bias = t.get(2).map(|b| (b.shape.clone(), b.to_f64()));
    let bias = bias.as_ref().map(|(s, v)| (s.as_slice(), v.as_slice()));
    let (shape, out) = conv2d_ref((&x.to_f64(), &x.shape), (&w.to_f64(), &w.shape), bias, &a)?;
    let dt = result_dtype(cx, 0, x.dtype);
    let out = Tensor::from_f64(shape, dt, out);
    let epilogue = Conv2d::attrs(cx);
    Ok(vec![super::activation::apply(
        epilogue.activation(),
        epilogue.activation_alpha(),
        out,
    )?])
}

/// The reference 2-D convolution in f64: `input` (NCHW, its values and
/// shape) by `filter` (OIHW) plus `bias` (shape `[O]`, zero when absent).
/// Exact on integer values while the sums stay below 2^53, so the quantised
/// convolutions run it too. Returns the result's shape and values.
pub fn conv2d_ref(
    (xs, x_shape): (&[f64], &[usize]),
    (ws, w_shape): (&[f64], &[usize]),
    bias: Option<(&[usize], &[f64])>,
    a: &ConvAttrs,
) -> Result<(Vec<usize>, Vec<f64>), String> {
    let (&[n, c, h, wd], &[m, cg, kh, kw]) = (x_shape, w_shape) else {
        return Err(format!(
            "input {x_shape:?} and filter {w_shape:?} must have rank 4"
        ));
    };
    let g = a.group as usize;
    if cg * g != c || m % g != 0 {
        return Err(format!(
            "input has {c} channels and filter shape {w_shape:?} with group {g} do not fit"
        ));
    }
    let bias = match bias {
        Some((shape, _)) if shape != [m] => {
            return Err(format!("bias has shape {shape:?}, expected [{m}]"))
        }
        Some((_, b)) => b.to_vec(),
        None => vec![0.0; m],
    };
    let oh = window_out_usize(
        h,
        kh,
        a.strides[0],
        a.dilations[0],
        a.pads[0],
        a.pads[2],
        false,
        "H",
    )?;
    let ow = window_out_usize(
        wd,
        kw,
        a.strides[1],
        a.dilations[1],
        a.pads[1],
        a.pads[3],
        false,
        "W",
    )?;
    let mg = m / g;
    let (sh, sw) = (a.strides[0] as usize, a.strides[1] as usize);
    let (dh, dw) = (a.dilations[0] as usize, a.dilations[1] as usize);
    let (pt, pl) = (a.pads[0] as isize, a.pads[1] as isize);
    let mut out = vec![0.0; checked_numel(&[n, m, oh, ow])?];
    for b in 0..n {
        for oc in 0..m {
            let grp = oc / mg;
            let plane_start = (b * m + oc) * oh * ow;
            let plane = &mut out[plane_start..plane_start + oh * ow];
            plane.iter_mut().for_each(|v| *v = bias[oc]);
            for ci in 0..cg {
                let ic = grp * cg + ci;
                let in_start = (b * c + ic) * h * wd;
                let in_plane = &xs[in_start..in_start + h * wd];
                for ky in 0..kh {
                    for kx in 0..kw {
                        let wv = ws[((oc * cg + ci) * kh + ky) * kw + kx];
                        if wv == 0.0 {
                            continue;
                        }
                        let off = (kx * dw) as isize - pl;
                        for oy in 0..oh {
                            let iy = (oy * sh + ky * dh) as isize - pt;
                            if iy < 0 || iy >= h as isize {
                                continue;
                            }
                            let iy = iy as usize;
                            axpy_window(
                                &mut plane[oy * ow..(oy + 1) * ow],
                                &in_plane[iy * wd..(iy + 1) * wd],
                                wv,
                                sw,
                                off,
                            );
                        }
                    }
                }
            }
        }
    }
    Ok((vec![n, m, oh, ow], out))
}

def_op! {
    /// 2-D convolution (NCHW input, OIHW filter, optional bias)
    ///
    /// ONNX `Conv` for 2-D images. `input` is `N x C x H x W`, `filter` is `O x C/group x kH x
    /// kW`, `bias` (optional) has `O` entries. The output is `N x O x OH x OW` with `OH = (H +
    /// pad_top + pad_bottom - dil_h*(kH-1) - 1) / stride_h + 1` (floor; likewise OW). Symbolic
    /// batch and spatial dims flow through inference. `group` splits channels into independent
    /// groups; `group = C` with `O = C` is a depthwise convolution. `auto_pad` is not
    /// supported: importers turn it into explicit `pads`. `activation` is a fused epilogue
    /// applied to the result (conv + bias + relu in one kernel).
    pub Conv2d = "graph.conv2d" {
        operands { input: FloatTensor, filter: FloatTensor, bias: Option<FloatTensor> },
        results { output: FloatTensor },
        attrs {
            /// stride along H and W
            strides: I64Array = [1, 1],
            /// zero padding [top, left, bottom, right] (ONNX begin/end order)
            pads: I64Array = [0, 0, 0, 0],
            /// filter dilation along H and W
            dilations: I64Array = [1, 1],
            /// number of channel groups (group = C = O gives a depthwise convolution)
            group: I64 = 1,
            /// activation applied to the result (epilogue): none, relu, relu6 (clip to [0, 6]),
            /// leaky_relu, sigmoid, tanh, gelu, silu, hard_swish
            activation: Enum(super::activation::NAMES) = "none",
            /// slope of leaky_relu when it is the epilogue
            activation_alpha: F64 = 0.01,
        },
        traits [Pure, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_conv2d,
        semantics: sem_conv2d,
        interfaces [
            Cost::cube(conv_flops),
            FusionPattern::OutElementwiseFusable,
            CUBE_ENGINES,
            PrecisionClass::White,
            CONV_KERNEL,
            KernelFamily::Conv,
        ],
        es,
    }
}

// ---- conv_transpose2d ---------------------------------------------------

fn conv_transpose_extra(src: &impl AttrSource, a: &ConvAttrs) -> Result<Vec<i64>, String> {
    let op = check_len(
        "output_padding",
        ConvTranspose2d::attrs(src).output_padding(),
        2,
        "H, W",
    )?;
    check_min("output_padding", &op, 0)?;
    for i in 0..2 {
        if op[i] >= a.strides[i].max(a.dilations[i]) {
            return Err(format!(
                "attribute 'output_padding' entry {} must be smaller than the stride or the dilation ({} / {})",
                op[i], a.strides[i], a.dilations[i]
            ));
        }
    }
    Ok(op)
}

/// Output length of a transposed convolution along one axis:
/// `stride*(in-1) + output_padding + dil*(k-1) + 1 - pad_begin - pad_end`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn transpose_out(
    input: Dim,
    k: Dim,
    s: i64,
    d: i64,
    pb: i64,
    pe: i64,
    op: i64,
    axis: &str,
) -> Result<Dim, String> {
    let Some(k) = k.as_static() else {
        return Ok(Dim::Unknown);
    };
    let keff = d.saturating_mul(k - 1).saturating_add(1);
    let out = input.add(Dim::Static(-1)).mul_const(s).add(Dim::Static(
        op.saturating_add(keff)
            .saturating_sub(pb)
            .saturating_sub(pe),
    ));
    if let Some(o) = out.as_static() {
        if o < 1 {
            return Err(format!(
                "output size along {axis} would be {o}: the pads remove the whole output"
            ));
        }
    }
    Ok(out)
}

fn infer_conv_transpose2d(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = ConvAttrs::of(cx, true)?;
    let op = conv_transpose_extra(cx, &a)?;
    let ts = cx.operand_types;
    let x = dims_rank(ts[0], "input", 4, "NCHW")?;
    let w = dims_rank(ts[1], "filter", 4, "C x O/group x kH x kW")?;
    let dt = dtype_of(ts[0])?;
    let g = a.group;
    if let (Some(x), Some(w)) = (&x, &w) {
        if !x[1].compatible(w[0]) {
            return Err(format!(
                "operand 'input' has {} channels, but operand 'filter' has {} input channels (dim 0)",
                x[1], w[0]
            ));
        }
    }
    if let Some(c) = w.as_ref().and_then(|w| w[0].as_static()) {
        if c % g != 0 {
            return Err(format!(
                "operand 'filter' has {c} input channels, which is not a multiple of group {g}"
            ));
        }
    }
    let m = opt_dim(&w, 1).mul_const(g);
    if ts.len() > 2 {
        let b = dims_rank(ts[2], "bias", 1, "O")?;
        if let Some(b) = &b {
            check_dim_eq(
                b[0],
                m,
                "operand 'bias' must have one entry per output channel",
            )?;
        }
    }
    let mut out = vec![opt_dim(&x, 0), m];
    for (i, axis) in ["H", "W"].iter().enumerate() {
        out.push(transpose_out(
            opt_dim(&x, 2 + i),
            opt_dim(&w, 2 + i),
            a.strides[i],
            a.dilations[i],
            a.pads[i],
            a.pads[2 + i],
            op[i],
            axis,
        )?);
    }
    Ok(vec![Type::tensor(&out, dt)])
}

fn sem_conv_transpose2d(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let a = ConvAttrs::of(cx, true)?;
    let opad = conv_transpose_extra(cx, &a)?;
    let (x, w) = (t[0], t[1]);
    expect_rank(x, "input", 4)?;
    expect_rank(w, "filter", 4)?;
    let (n, c, h, wd) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
    let (wc, mg, kh, kw) = (w.shape[0], w.shape[1], w.shape[2], w.shape[3]);
    let g = a.group as usize;
    if wc != c || c % g != 0 {
        return Err(format!(
            "input has {c} channels and filter shape {:?} with group {g} do not fit",
            w.shape
        ));
    }
    let m = mg * g;
    let cg = c / g;
    let bias = match t.get(2) {
        Some(b) if b.shape != [m] => {
            return Err(format!("bias has shape {:?}, expected [{m}]", b.shape))
        }
        Some(b) => b.to_f64(),
        None => vec![0.0; m],
    };
    let size = |i: usize, len: usize, k: usize, axis: &str| -> Result<usize, String> {
        transpose_out(
            Dim::Static(len as i64),
            Dim::Static(k as i64),
            a.strides[i],
            a.dilations[i],
            a.pads[i],
            a.pads[2 + i],
            opad[i],
            axis,
        )?
        .as_static()
        .map(|v| v as usize)
        .ok_or_else(|| format!("cannot compute the output size along {axis}"))
    };
    let oh = size(0, h, kh, "H")?;
    let ow = size(1, wd, kw, "W")?;
    let xs = x.to_f64();
    let ws = w.to_f64();
    let (sh, sw) = (a.strides[0] as isize, a.strides[1] as isize);
    let (dh, dw) = (a.dilations[0] as isize, a.dilations[1] as isize);
    let (pt, pl) = (a.pads[0] as isize, a.pads[1] as isize);
    let mut out = vec![0.0; checked_numel(&[n, m, oh, ow])?];
    for b in 0..n {
        for oc in 0..m {
            let s = (b * m + oc) * oh * ow;
            out[s..s + oh * ow].iter_mut().for_each(|v| *v = bias[oc]);
        }
        for ic in 0..c {
            let grp = ic / cg;
            for iy in 0..h {
                for ix in 0..wd {
                    let xv = xs[((b * c + ic) * h + iy) * wd + ix];
                    if xv == 0.0 {
                        continue;
                    }
                    for mo in 0..mg {
                        let oc = grp * mg + mo;
                        let obase = (b * m + oc) * oh * ow;
                        for ky in 0..kh {
                            let oy = iy as isize * sh - pt + ky as isize * dh;
                            if oy < 0 || oy >= oh as isize {
                                continue;
                            }
                            for kx in 0..kw {
                                let ox = ix as isize * sw - pl + kx as isize * dw;
                                if ox < 0 || ox >= ow as isize {
                                    continue;
                                }
                                out[obase + oy as usize * ow + ox as usize] +=
                                    xv * ws[((ic * mg + mo) * kh + ky) * kw + kx];
                            }
                        }
                    }
                }
            }
        }
    }
    let dt = result_dtype(cx, 0, x.dtype);
    Ok(vec![Tensor::from_f64(vec![n, m, oh, ow], dt, out)])
}

def_op! {
    /// 2-D transposed convolution (ONNX ConvTranspose)
    ///
    /// The gradient of `conv2d` with respect to its input, used for upsampling. `input` is `N x
    /// C x H x W`, `filter` is `C x O/group x kH x kW`, `bias` (optional) has `O` entries. The
    /// output is `N x O x OH x OW` with `OH = stride_h*(H-1) + output_padding_h + dil_h*(kH-1) +
    /// 1 - pad_top - pad_bottom` (likewise OW). `output_padding` must be smaller than the
    /// stride or the dilation. ONNX's `output_shape` and `auto_pad` are not supported:
    /// importers turn them into `pads`.
    pub ConvTranspose2d = "graph.conv_transpose2d" {
        operands { input: FloatTensor, filter: FloatTensor, bias: Option<FloatTensor> },
        results { output: FloatTensor },
        attrs {
            /// stride along H and W
            strides: I64Array = [1, 1],
            /// [top, left, bottom, right] removed from the full output
            pads: I64Array = [0, 0, 0, 0],
            /// filter dilation along H and W
            dilations: I64Array = [1, 1],
            /// number of channel groups
            group: I64 = 1,
            /// extra size added at the bottom/right of the output
            output_padding: I64Array = [0, 0],
        },
        traits [Pure, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_conv_transpose2d,
        semantics: sem_conv_transpose2d,
        interfaces [
            Cost::cube(conv_flops),
            FusionPattern::OutElementwiseFusable,
            CUBE_ENGINES,
            PrecisionClass::White,
            NC1HWC0_KERNEL,
            KernelFamily::Conv,
        ],
        es,
    }
}

// ---- pooling ------------------------------------------------------------

/// The checked window attributes of a 2-D pool (graph.max_pool2d_indices's too).
#[derive(Clone, Debug)]
pub struct PoolAttrs {
    pub kernel: Vec<i64>,
    pub strides: Vec<i64>,
    pub pads: Vec<i64>,
    pub dilations: Vec<i64>,
    pub ceil: bool,
}

impl PoolAttrs {
    fn of(src: &impl AttrSource, avg: bool) -> Result<PoolAttrs, String> {
        if avg {
            let a = AvgPool2d::attrs(src);
            pool_attrs(
                a.kernel_shape(),
                a.strides(),
                a.pads(),
                a.dilations(),
                a.ceil_mode(),
            )
        } else {
            let a = MaxPool2d::attrs(src);
            pool_attrs(
                a.kernel_shape(),
                a.strides(),
                a.pads(),
                a.dilations(),
                a.ceil_mode(),
            )
        }
    }
}

pub fn pool_attrs(
    kernel: Option<Vec<i64>>,
    strides: Vec<i64>,
    pads: Vec<i64>,
    dilations: Vec<i64>,
    ceil_mode: i64,
) -> Result<PoolAttrs, String> {
    let kernel = kernel.ok_or("requires attribute 'kernel_shape'")?;
    let kernel = check_len("kernel_shape", kernel, 2, "kH, kW")?;
    let strides = check_len("strides", strides, 2, "H, W")?;
    let pads = check_len("pads", pads, 4, "top, left, bottom, right")?;
    let dilations = check_len("dilations", dilations, 2, "H, W")?;
    let ceil = ceil_mode != 0;
    check_min("kernel_shape", &kernel, 1)?;
    check_min("strides", &strides, 1)?;
    check_min("pads", &pads, 0)?;
    check_min("dilations", &dilations, 1)?;
    for i in 0..2 {
        let keff = dilations[i].saturating_mul(kernel[i] - 1).saturating_add(1);
        if pads[i] >= keff || pads[i + 2] >= keff {
            return Err(format!(
                "attribute 'pads' {pads:?} must be smaller than the kernel extent {keff} along {}",
                ["H", "W"][i]
            ));
        }
    }
    Ok(PoolAttrs {
        kernel,
        strides,
        pads,
        dilations,
        ceil,
    })
}

fn infer_max_pool2d(cx: &InferCtx) -> Result<Vec<Type>, String> {
    infer_pool2d(cx, PoolAttrs::of(cx, false)?)
}

fn infer_avg_pool2d(cx: &InferCtx) -> Result<Vec<Type>, String> {
    infer_pool2d(cx, PoolAttrs::of(cx, true)?)
}

fn infer_pool2d(cx: &InferCtx, a: PoolAttrs) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    let x = dims_rank(t, "input", 4, "NCHW")?;
    let mut out = vec![opt_dim(&x, 0), opt_dim(&x, 1)];
    for (i, axis) in ["H", "W"].iter().enumerate() {
        out.push(window_out(
            opt_dim(&x, 2 + i),
            Dim::Static(a.kernel[i]),
            a.strides[i],
            a.dilations[i],
            a.pads[i],
            a.pads[2 + i],
            a.ceil,
            axis,
        )?);
    }
    Ok(vec![Type::tensor(&out, dtype_of(t)?)])
}

/// The taps `k` in `0..kernel` of output `o` along one axis whose position
/// `o·stride - pad + k·dilation` lies in `lo..hi` (stride and dilation
/// positive). Computed, not searched: a pool's loops take only the taps
/// that read a value (`0..len`) or count with the padding (`..len + pad_end`),
/// so a hostile window of 2^31 taps costs what its input does (a mutated
/// node test's did not end). The positions grow with `k`, so the taps are
/// one range, in the order a loop over `0..kernel` meets them.
pub fn taps_in(
    o: usize,
    stride: i64,
    pad: i64,
    dilation: i64,
    kernel: i64,
    lo: i64,
    hi: i64,
) -> std::ops::Range<i64> {
    let base = o as i128 * stride as i128 - pad as i128;
    let d = dilation.max(1) as i128;
    // The first k with base + k·d >= bound.
    let first = |bound: i64| match bound as i128 - base {
        gap if gap > 0 => (gap + d - 1) / d,
        _ => 0,
    };
    let clamp = |k: i128| k.clamp(0, kernel.max(0) as i128) as i64;
    let (k0, k1) = (clamp(first(lo)), clamp(first(hi)));
    k0..k1.max(k0)
}

/// Shared pooling loop: `reduce(values in window, count_in_padded_extent)`.
fn pool2d(cx: &SemCtx, x: &Tensor, avg: bool) -> SemResult {
    let a = PoolAttrs::of(cx, avg)?;
    let include_pad = avg && AvgPool2d::attrs(cx).count_include_pad() != 0;
    expect_rank(x, "input", 4)?;
    let (n, c, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
    let size = |i: usize, len: usize| {
        window_out_usize(
            len,
            a.kernel[i] as usize,
            a.strides[i],
            a.dilations[i],
            a.pads[i],
            a.pads[2 + i],
            a.ceil,
            ["H", "W"][i],
        )
    };
    let (oh, ow) = (size(0, h)?, size(1, w)?);
    let xs = x.to_f64();
    // Along each axis, the taps that read a value and how many count with
    // the padding (windows may hang past the padded extent in ceil mode;
    // those cells never count).
    let axis = |i: usize, o: usize, len: usize| {
        let (s, p, d, k) = (a.strides[i], a.pads[i], a.dilations[i], a.kernel[i]);
        let valid = taps_in(o, s, p, d, k, 0, len as i64);
        let padded = taps_in(
            o,
            s,
            p,
            d,
            k,
            i64::MIN,
            (len as i64).saturating_add(a.pads[2 + i]),
        );
        (valid, (padded.end - padded.start) as usize)
    };
    // A valid tap's position: inside the input.
    let at = |o: usize, k: i64, i: usize| {
        let (s, p, d) = (
            a.strides[i] as i128,
            a.pads[i] as i128,
            a.dilations[i] as i128,
        );
        (o as i128 * s - p + k as i128 * d) as usize
    };
    let mut out = Vec::with_capacity(checked_numel(&[n, c, oh, ow])?);
    for plane in 0..n * c {
        let base = plane * h * w;
        for oy in 0..oh {
            let (rows, padded_rows) = axis(0, oy, h);
            for ox in 0..ow {
                let (cols, padded_cols) = axis(1, ox, w);
                let mut acc = if avg { 0.0 } else { f64::NEG_INFINITY };
                let count = (rows.end - rows.start) as usize * (cols.end - cols.start) as usize;
                let padded_count = padded_rows.saturating_mul(padded_cols);
                for ky in rows.clone() {
                    let row = base + at(oy, ky, 0) * w;
                    for kx in cols.clone() {
                        let v = xs[row + at(ox, kx, 1)];
                        if avg {
                            acc += v;
                        } else if v > acc || v.is_nan() {
                            acc = v;
                        }
                    }
                }
                out.push(if avg {
                    let d = if include_pad { padded_count } else { count };
                    if d == 0 {
                        f64::NAN
                    } else {
                        acc / d as f64
                    }
                } else {
                    acc
                });
            }
        }
    }
    let dt = result_dtype(cx, 0, x.dtype);
    Ok(vec![Tensor::from_f64(vec![n, c, oh, ow], dt, out)])
}

/// The element types of ONNX MaxPool: floats, i8 and u8.
pub const MAX_POOL_TYPES: &[DType] = &[
    DType::F64,
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::I8,
    DType::U8,
];

fn sem_max_pool2d(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    pool2d(cx, t[0], false)
}

fn sem_avg_pool2d(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    pool2d(cx, t[0], true)
}

def_op! {
    /// 2-D max pooling (ONNX MaxPool, NCHW)
    ///
    /// The maximum over each `kH x kW` window (dilated by `dilations`) of an `N x C x H x W`
    /// input; padded cells never win. Output size as for `conv2d`, or rounded up with
    /// `ceil_mode = 1`. Floats, i8 and u8, as ONNX MaxPool. ONNX's optional `Indices` result
    /// and `storage_order` are not supported.
    pub MaxPool2d = "graph.max_pool2d" {
        operands { input: TensorOf(MAX_POOL_TYPES) },
        results { output: TensorOf(MAX_POOL_TYPES) },
        attrs {
            /// window size [kH, kW]
            kernel_shape: I64Array,
            /// stride along H and W
            strides: I64Array = [1, 1],
            /// padding [top, left, bottom, right]; each smaller than the kernel extent
            pads: I64Array = [0, 0, 0, 0],
            /// window dilation along H and W
            dilations: I64Array = [1, 1],
            /// 1: round the output size up (a window must still start inside the input or the
            /// begin pad)
            ceil_mode: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_max_pool2d,
        semantics: sem_max_pool2d,
        interfaces [
            Cost::vector(max_pool_flops),
            FusionPattern::OutElementwiseFusable,
            CUBE_ENGINES,
            PrecisionClass::Gray,
            NC1HWC0_KERNEL,
            KernelFamily::Pool,
        ],
        es,
    }
}

def_op! {
    /// 2-D average pooling (ONNX AveragePool, NCHW)
    ///
    /// The mean over each `kH x kW` window of an `N x C x H x W` input. With `count_include_pad
    /// = 0` (the default) the divisor counts only cells inside the input; with 1 it counts
    /// padded cells too (but never cells past the padding that `ceil_mode` windows reach).
    pub AvgPool2d = "graph.avg_pool2d" {
        operands { input: FloatTensor },
        results { output: FloatTensor },
        attrs {
            /// window size [kH, kW]
            kernel_shape: I64Array,
            /// stride along H and W
            strides: I64Array = [1, 1],
            /// padding [top, left, bottom, right]; each smaller than the kernel extent
            pads: I64Array = [0, 0, 0, 0],
            /// window dilation along H and W
            dilations: I64Array = [1, 1],
            /// 1: round the output size up (a window must still start inside the input or the
            /// begin pad)
            ceil_mode: I64 = 0,
            /// 1: padded cells count in the divisor
            count_include_pad: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_avg_pool2d,
        semantics: sem_avg_pool2d,
        interfaces [
            Cost::vector(avg_pool_flops),
            FusionPattern::OutElementwiseFusable,
            CUBE_ENGINES,
            PrecisionClass::Gray,
            NC1HWC0_KERNEL,
            KernelFamily::Pool,
        ],
        es,
    }
}

fn infer_global_pool(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    let x = dims_min_rank(t, "input", 3, "N x C x spatial...")?;
    let dt = dtype_of(t)?;
    Ok(vec![match x {
        Some(x) => {
            let mut out = x[..2].to_vec();
            out.extend(std::iter::repeat_n(Dim::Static(1), x.len() - 2));
            Type::tensor(&out, dt)
        }
        None => Type::unranked(dt),
    }])
}

fn global_pool(cx: &SemCtx, x: &Tensor, avg: bool) -> SemResult {
    if x.rank() < 3 {
        return Err(format!(
            "operand 'input' must have rank >= 3, but has shape {:?}",
            x.shape
        ));
    }
    let planes = x.shape[0] * x.shape[1];
    let size: usize = x.shape[2..].iter().product();
    let xs = x.to_f64();
    let mut out = Vec::with_capacity(planes);
    for p in 0..planes {
        let vals = &xs[p * size..(p + 1) * size];
        out.push(if avg {
            vals.iter().sum::<f64>() / size as f64
        } else {
            vals.iter().copied().fold(
                f64::NEG_INFINITY,
                |m, v| {
                    if v > m || v.is_nan() {
                        v
                    } else {
                        m
                    }
                },
            )
        });
    }
    let mut shape = x.shape[..2].to_vec();
    shape.extend(std::iter::repeat_n(1, x.rank() - 2));
    let dt = result_dtype(cx, 0, x.dtype);
    Ok(vec![Tensor::from_f64(shape, dt, out)])
}

fn sem_global_avg_pool(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    global_pool(cx, t[0], true)
}

fn sem_global_max_pool(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    global_pool(cx, t[0], false)
}

def_op! {
    /// Mean over all spatial dims (ONNX GlobalAveragePool)
    ///
    /// `N x C x D1 x ... x Dk` to `N x C x 1 x ... x 1`: the mean of each channel's spatial
    /// values.
    pub GlobalAvgPool = "graph.global_avg_pool" {
        operands { input: FloatTensor },
        results { output: FloatTensor },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_global_pool,
        semantics: sem_global_avg_pool,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Reduction,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::GlobalPool,
        ],
        es,
    }
}

def_op! {
    /// Maximum over all spatial dims (ONNX GlobalMaxPool)
    ///
    /// `N x C x D1 x ... x Dk` to `N x C x 1 x ... x 1`: the maximum of each channel's spatial
    /// values.
    pub GlobalMaxPool = "graph.global_max_pool" {
        operands { input: FloatTensor },
        results { output: FloatTensor },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_global_pool,
        semantics: sem_global_max_pool,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Reduction,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::GlobalPool,
        ],
        es,
    }
}

// ---- normalisation ----------------------------------------------------------

fn check_epsilon(eps: f64) -> Result<f64, String> {
    if eps.is_nan() || eps < 0.0 {
        return Err(format!("attribute 'epsilon' must be >= 0, but got {eps}"));
    }
    Ok(eps)
}

/// Operands `names[i]` (starting at operand 1) must be 1-D with C entries.
fn check_per_channel(cx: &InferCtx, names: &[&str], channels: Dim) -> Result<(), String> {
    for (i, name) in names.iter().enumerate() {
        if let Some(&t) = cx.operand_types.get(1 + i) {
            if let Some(d) = dims_rank(t, name, 1, "C")? {
                check_dim_eq(
                    d[0],
                    channels,
                    &format!("operand '{name}' must have one entry per channel of 'input'"),
                )?;
            }
        }
    }
    Ok(())
}

fn infer_batch_norm(cx: &InferCtx) -> Result<Vec<Type>, String> {
    check_epsilon(BatchNorm::attrs(cx).epsilon())?;
    let t = cx.operand_types[0];
    let x = dims_min_rank(t, "input", 2, "N x C x ...")?;
    check_per_channel(cx, &["scale", "bias", "mean", "var"], opt_dim(&x, 1))?;
    Ok(vec![t])
}

/// Per-channel affine transform `y = (x - mean) * k + b` over an `N x C x ...` tensor.
/// Per-channel parameter values and the `(N, C, inner)` view of the input.
type PerChannel = (Vec<Vec<f64>>, usize, usize, usize);

fn per_channel(x: &Tensor, params: &[&Tensor], names: &[&str]) -> Result<PerChannel, String> {
    if x.rank() < 2 {
        return Err(format!(
            "operand 'input' must have rank >= 2, but has shape {:?}",
            x.shape
        ));
    }
    let c = x.shape[1];
    let mut vs = vec![];
    for (p, name) in params.iter().zip(names) {
        if p.shape != [c] {
            return Err(format!(
                "operand '{name}' has shape {:?}, expected [{c}]",
                p.shape
            ));
        }
        vs.push(p.to_f64());
    }
    let inner: usize = x.shape[2..].iter().product();
    Ok((vs, x.shape[0], c, inner))
}

fn sem_batch_norm(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 5)?;
    let eps = check_epsilon(BatchNorm::attrs(cx).epsilon())?;
    let x = t[0];
    let (p, n, c, inner) = per_channel(x, &t[1..5], &["scale", "bias", "mean", "var"])?;
    let xs = x.to_f64();
    let mut out = Vec::with_capacity(xs.len());
    for b in 0..n {
        for ch in 0..c {
            let k = p[0][ch] / (p[3][ch] + eps).sqrt();
            let base = (b * c + ch) * inner;
            for &v in &xs[base..base + inner] {
                out.push((v - p[2][ch]) * k + p[1][ch]);
            }
        }
    }
    let dt = result_dtype(cx, 0, x.dtype);
    Ok(vec![Tensor::from_f64(x.shape.clone(), dt, out)])
}

def_op! {
    /// Batch normalisation, inference form (ONNX BatchNormalization)
    ///
    /// `y = (x - mean) / sqrt(var + epsilon) * scale + bias` per channel of an `N x C x ...`
    /// input; `scale`, `bias`, `mean` and `var` have `C` entries. Only the inference form (one
    /// result, running statistics as operands) is defined; training-mode outputs are not.
    pub BatchNorm = "graph.batch_norm" {
        operands {
            input: FloatTensor,
            scale: FloatTensor,
            bias: FloatTensor,
            mean: FloatTensor,
            var: FloatTensor,
        },
        results { output: FloatTensor },
        attrs {
            /// added to the variance before the square root
            epsilon: F64 = 1.0e-05_f32,
        },
        traits [Pure, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_batch_norm,
        semantics: sem_batch_norm,
        interfaces [
            Cost::NORMALIZATION,
            FusionPattern::Broadcast,
            VECTOR_ENGINES,
            PrecisionClass::Black,
            Layout::FollowsInputs,
            KernelFamily::Norm,
        ],
        es,
    }
}

fn infer_instance_norm(cx: &InferCtx) -> Result<Vec<Type>, String> {
    check_epsilon(InstanceNorm::attrs(cx).epsilon())?;
    let t = cx.operand_types[0];
    let x = dims_min_rank(t, "input", 3, "N x C x spatial...")?;
    check_per_channel(cx, &["scale", "bias"], opt_dim(&x, 1))?;
    Ok(vec![t])
}

fn sem_instance_norm(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 3)?;
    let eps = check_epsilon(InstanceNorm::attrs(cx).epsilon())?;
    let x = t[0];
    let (p, n, c, inner) = per_channel(x, &t[1..3], &["scale", "bias"])?;
    if inner == 0 {
        return Ok(vec![x.clone()]);
    }
    let xs = x.to_f64();
    let mut out = Vec::with_capacity(xs.len());
    for b in 0..n {
        for ch in 0..c {
            let base = (b * c + ch) * inner;
            let vals = &xs[base..base + inner];
            let mean = vals.iter().sum::<f64>() / inner as f64;
            let var = vals.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / inner as f64;
            let k = p[0][ch] / (var + eps).sqrt();
            out.extend(vals.iter().map(|v| (v - mean) * k + p[1][ch]));
        }
    }
    let dt = result_dtype(cx, 0, x.dtype);
    Ok(vec![Tensor::from_f64(x.shape.clone(), dt, out)])
}

def_op! {
    /// Instance normalisation (ONNX InstanceNormalization)
    ///
    /// For each sample and channel of an `N x C x spatial...` input: `y = (x - mean) / sqrt(var +
    /// epsilon) * scale[c] + bias[c]`, with mean and (population) variance over the spatial
    /// dims.
    pub InstanceNorm = "graph.instance_norm" {
        operands { input: FloatTensor, scale: FloatTensor, bias: FloatTensor },
        results { output: FloatTensor },
        attrs {
            /// added to the variance before the square root
            epsilon: F64 = 1.0e-05_f32,
        },
        traits [Pure, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_instance_norm,
        semantics: sem_instance_norm,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Black,
            KernelFamily::Norm,
        ],
        es,
    }
}

/// `param` (named `name`) must broadcast unidirectionally to `trailing`.
fn check_trailing_param(t: Type, name: &str, trailing: &[Dim]) -> Result<(), String> {
    let Some(d) = dims(t, name)? else {
        return Ok(());
    };
    let ok = d.len() <= trailing.len()
        && d.iter()
            .rev()
            .zip(trailing.iter().rev())
            .all(|(&p, &q)| p == Dim::Static(1) || p.compatible(q));
    if !ok {
        let tr: Vec<String> = trailing.iter().map(|d| d.to_string()).collect();
        return Err(format!(
            "operand '{name}' of type '{t}' does not broadcast to the normalised dims [{}]",
            tr.join(", ")
        ));
    }
    Ok(())
}

/// The `(axis, epsilon)` of layer norm or RMS norm.
fn norm_axis_eps(src: &impl AttrSource, rms: bool) -> (i64, f64) {
    if rms {
        let a = RmsNorm::attrs(src);
        (a.axis(), a.epsilon())
    } else {
        let a = LayerNorm::attrs(src);
        (a.axis(), a.epsilon())
    }
}

fn infer_norm_over_axis(cx: &InferCtx, params: &[&str], rms: bool) -> Result<Vec<Type>, String> {
    let (axis, eps) = norm_axis_eps(cx, rms);
    check_epsilon(eps)?;
    let t = cx.operand_types[0];
    if let Some(x) = dims(t, "input")? {
        let ax = norm_axis(axis, x.len(), "attribute 'axis'")?;
        for (i, name) in params.iter().enumerate() {
            if let Some(&pt) = cx.operand_types.get(1 + i) {
                check_trailing_param(pt, name, &x[ax..])?;
            }
        }
    }
    Ok(vec![t])
}

fn infer_layer_norm(cx: &InferCtx) -> Result<Vec<Type>, String> {
    infer_norm_over_axis(cx, &["scale", "bias"], false)
}

fn infer_rms_norm(cx: &InferCtx) -> Result<Vec<Type>, String> {
    infer_norm_over_axis(cx, &["scale"], true)
}

/// Normalise each row over dims `axis..`: `y = (x - mu) / sqrt(s + eps) * scale + bias`
/// where for layer norm `mu` is the mean and `s` the variance, for RMS norm
/// `mu = 0` and `s` the mean square.
fn norm_rows(cx: &SemCtx, t: &[&Tensor], rms: bool) -> SemResult {
    let (axis, eps) = norm_axis_eps(cx, rms);
    let eps = check_epsilon(eps)?;
    let x = t[0];
    let axis = norm_axis(axis, x.rank(), "attribute 'axis'")?;
    let trailing = &x.shape[axis..];
    let row: usize = trailing.iter().product();
    let param = |i: usize| -> Result<Option<Vec<f64>>, String> {
        match t.get(i) {
            None => Ok(None),
            Some(p) => {
                let idx = broadcast_index(&p.shape, trailing)
                    .map_err(|e| format!("operand #{i}: {e}"))?;
                let v = p.to_f64();
                Ok(Some(idx.into_iter().map(|k| v[k]).collect()))
            }
        }
    };
    let scale = param(1)?;
    let bias = param(2)?;
    let xs = x.to_f64();
    let mut out = Vec::with_capacity(xs.len());
    if row > 0 {
        for r in xs.chunks(row) {
            let n = row as f64;
            let mean = if rms { 0.0 } else { r.iter().sum::<f64>() / n };
            let s = r.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
            let inv = 1.0 / (s + eps).sqrt();
            for (j, v) in r.iter().enumerate() {
                let mut y = (v - mean) * inv;
                if let Some(sc) = &scale {
                    y *= sc[j];
                }
                if let Some(b) = &bias {
                    y += b[j];
                }
                out.push(y);
            }
        }
    }
    let dt = result_dtype(cx, 0, x.dtype);
    Ok(vec![Tensor::from_f64(x.shape.clone(), dt, out)])
}

fn sem_layer_norm(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    norm_rows(cx, t, false)
}

fn sem_rms_norm(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    norm_rows(cx, t, true)
}

def_op! {
    /// Layer normalisation (ONNX LayerNormalization-17)
    ///
    /// Normalises over the dims from `axis` to the last: `y = (x - mean) / sqrt(var + epsilon) *
    /// scale + bias`, mean and population variance per row. `scale` and the optional `bias`
    /// broadcast to the normalised dims (usually they have exactly those dims). Only the `Y`
    /// result of ONNX is produced (not `Mean`/`InvStdDev`); computation is in f64 whatever
    /// `stash_type` would say.
    pub LayerNorm = "graph.layer_norm" {
        operands { input: FloatTensor, scale: FloatTensor, bias: Option<FloatTensor> },
        results { output: FloatTensor },
        attrs {
            /// first normalised dim (negative counts from the end)
            axis: I64 = -1,
            /// added to the variance before the square root
            epsilon: F64 = 1.0e-05_f32,
        },
        traits [Pure, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_layer_norm,
        semantics: sem_layer_norm,
        interfaces [
            Cost::NORMALIZATION,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Black,
            KernelFamily::Norm,
        ],
        es,
    }
}

def_op! {
    /// Root-mean-square normalisation (ONNX RMSNormalization)
    ///
    /// Normalises over the dims from `axis` to the last: `y = x / sqrt(mean(x^2) + epsilon) *
    /// scale`; `scale` broadcasts to the normalised dims.
    pub RmsNorm = "graph.rms_norm" {
        operands { input: FloatTensor, scale: FloatTensor },
        results { output: FloatTensor },
        attrs {
            /// first normalised dim (negative counts from the end)
            axis: I64 = -1,
            /// added to the mean square before the square root
            epsilon: F64 = 1.0e-05_f32,
        },
        traits [Pure, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_rms_norm,
        semantics: sem_rms_norm,
        interfaces [
            Cost::NORMALIZATION,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Norm,
        ],
        es,
    }
}

// ---- softmax ------------------------------------------------------------

fn infer_softmax(cx: &InferCtx) -> Result<Vec<Type>, String> {
    infer_softmax_axis(cx, Softmax::attrs(cx).axis())
}

fn infer_log_softmax(cx: &InferCtx) -> Result<Vec<Type>, String> {
    infer_softmax_axis(cx, LogSoftmax::attrs(cx).axis())
}

fn infer_softmax_axis(cx: &InferCtx, axis: i64) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    if let Some(x) = dims(t, "input")? {
        norm_axis(axis, x.len(), "attribute 'axis'")?;
    }
    same_as_first(cx)
}

/// The largest of the row's `n` entries at `at(k)`; 0 when every entry is
/// -inf, so that exp gives 0/0 like numpy.
fn row_max(xs: &[f64], n: usize, at: impl Fn(usize) -> usize) -> f64 {
    let m = (0..n).fold(f64::NEG_INFINITY, |m, k| m.max(xs[at(k)]));
    if m == f64::NEG_INFINITY {
        0.0
    } else {
        m
    }
}

/// Softmax (or log-softmax) of `xs` viewed as `outer x n x inner` along the middle dim.
pub fn softmax_along(xs: &mut [f64], outer: usize, n: usize, inner: usize, log: bool) {
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let m = row_max(xs, n, at);
            let mut sum = 0.0;
            for k in 0..n {
                sum += (xs[at(k)] - m).exp();
            }
            for k in 0..n {
                let v = xs[at(k)] - m;
                xs[at(k)] = if log { v - sum.ln() } else { v.exp() / sum };
            }
        }
    }
}

/// Softmax (or log-softmax) of 16-bit float data as the ONNX reference
/// computes it in numpy: every step rounded to the element type — `x - max`,
/// its `exp`, the sum (bf16: accumulated in bf16 in index order, as numpy
/// reduces a user dtype; f16: numpy's float accumulation, rounded once),
/// the quotient and its log. Computing in f32 and rounding once differs from
/// it by an ulp (a bf16 ulp is 2^-8 relative: ONNX's bf16 Attention cases).
pub fn softmax_along_rounded(
    xs: &mut [f64],
    outer: usize,
    n: usize,
    inner: usize,
    log: bool,
    dtype: DType,
) {
    let r = |v: f64| ge_ir::tensor::round_f(dtype, v);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let m = row_max(xs, n, at);
            for k in 0..n {
                xs[at(k)] = r(r(xs[at(k)] - m).exp());
            }
            let sum = match dtype {
                DType::BF16 => (1..n).fold(xs[at(0)], |acc, k| r(acc + xs[at(k)])),
                _ => r((0..n).map(|k| xs[at(k)]).sum::<f64>()),
            };
            for k in 0..n {
                let p = r(xs[at(k)] / sum);
                xs[at(k)] = if log { r(p.ln()) } else { p };
            }
        }
    }
}

fn softmax_sem(cx: &SemCtx, x: &Tensor, log: bool) -> SemResult {
    let axis = if log {
        LogSoftmax::attrs(cx).axis()
    } else {
        Softmax::attrs(cx).axis()
    };
    let axis = norm_axis(axis, x.rank(), "attribute 'axis'")?;
    let (outer, n, inner) = split_at_axis(&x.shape, axis);
    let mut xs = x.to_f64();
    let dt = result_dtype(cx, 0, x.dtype);
    match dt {
        DType::F16 | DType::BF16 if n > 0 => {
            softmax_along_rounded(&mut xs, outer, n, inner, log, dt)
        }
        _ => softmax_along(&mut xs, outer, n, inner, log),
    }
    Ok(vec![Tensor::from_f64(x.shape.clone(), dt, xs)])
}

fn sem_softmax(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    softmax_sem(cx, t[0], false)
}

fn sem_log_softmax(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    softmax_sem(cx, t[0], true)
}

def_op! {
    /// Softmax along one axis (ONNX Softmax-13)
    ///
    /// `y = exp(x - max) / sum(exp(x - max))` along `axis` (default the last; negative counts
    /// from the end). Opset-13 semantics: one axis, not the flattened 2-D view of older opsets.
    pub Softmax = "graph.softmax" {
        operands { input: FloatTensor },
        results { output: FloatTensor },
        attrs {
            /// the normalised axis
            axis: I64 = -1,
        },
        traits [Pure, SameOperandsAndResultType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_softmax,
        semantics: sem_softmax,
        interfaces [
            Cost::TRANSCENDENTAL,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Black,
            KernelFamily::Softmax,
        ],
        es,
    }
}

def_op! {
    /// Log of softmax along one axis (ONNX LogSoftmax-13)
    ///
    /// `y = x - max - log(sum(exp(x - max)))` along `axis` (default the last).
    pub LogSoftmax = "graph.log_softmax" {
        operands { input: FloatTensor },
        results { output: FloatTensor },
        attrs {
            /// the normalised axis
            axis: I64 = -1,
        },
        traits [Pure, SameOperandsAndResultType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_log_softmax,
        semantics: sem_log_softmax,
        interfaces [
            Cost::TRANSCENDENTAL,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Black,
            KernelFamily::Softmax,
        ],
        es,
    }
}

// ---- attention ------------------------------------------------------------

fn infer_sdpa(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let ts = cx.operand_types;
    let (tq, tk, tv) = (ts[0], ts[1], ts[2]);
    let dt = dtype_of(tq)?;
    for (t, name) in [(tk, "key"), (tv, "value")] {
        if t.dtype() != Some(dt) {
            return Err(format!(
                "operand '{name}' '{t}' must have the element type of 'query' '{tq}'"
            ));
        }
    }
    let q = dims_min_rank(tq, "query", 2, "batch... x Sq x D")?;
    let k = dims_min_rank(tk, "key", 2, "batch... x Sk x D")?;
    let v = dims_min_rank(tv, "value", 2, "batch... x Sk x Dv")?;
    let (Some(q), Some(k), Some(v)) = (q, k, v) else {
        return Ok(vec![Type::unranked(dt)]);
    };
    let r = q.len();
    if k.len() != r || v.len() != r {
        return Err(format!(
            "operands 'query', 'key' and 'value' must have the same rank, but got '{tq}', '{tk}' and '{tv}'"
        ));
    }
    check_dim_eq(
        k[r - 1],
        q[r - 1],
        &format!("operand 'key' '{tk}' must have the head size of 'query' '{tq}'"),
    )?;
    check_dim_eq(
        v[r - 2],
        k[r - 2],
        &format!("operand 'value' '{tv}' must have the sequence length of 'key' '{tk}'"),
    )?;
    let bd = |e: String| format!("batch dims of 'query', 'key' and 'value' do not broadcast ({e})");
    let batch = broadcast_shapes(&q[..r - 2], &k[..r - 2]).map_err(bd)?;
    let batch = broadcast_shapes(&batch, &v[..r - 2]).map_err(bd)?;
    if let Some(&tm) = ts.get(3) {
        let mdt = dtype_of(tm)?;
        if mdt != dt && mdt != DType::I1 {
            return Err(format!(
                "operand 'mask' '{tm}' must be i1 or have the element type of 'query'"
            ));
        }
        if let Some(m) = dims(tm, "mask")? {
            let mut scores = batch.clone();
            scores.push(q[r - 2]);
            scores.push(k[r - 2]);
            let ok = m.len() <= scores.len()
                && m.iter()
                    .rev()
                    .zip(scores.iter().rev())
                    .all(|(&p, &s)| p == Dim::Static(1) || p.compatible(s));
            if !ok {
                let s: Vec<String> = scores.iter().map(|d| d.to_string()).collect();
                return Err(format!(
                    "operand 'mask' '{tm}' does not broadcast to the scores shape [{}]",
                    s.join(", ")
                ));
            }
        }
    }
    let mut out = batch;
    out.push(q[r - 2]);
    out.push(v[r - 1]);
    Ok(vec![Type::tensor(&out, dt)])
}

fn sem_sdpa(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 3)?;
    let (q, k, v) = (t[0], t[1], t[2]);
    let r = q.rank();
    if r < 2 || k.rank() != r || v.rank() != r {
        return Err(format!(
            "query, key and value must have the same rank >= 2, got {:?}, {:?}, {:?}",
            q.shape, k.shape, v.shape
        ));
    }
    let (sq, d) = (q.shape[r - 2], q.shape[r - 1]);
    let (sk, dk) = (k.shape[r - 2], k.shape[r - 1]);
    let (sv, dv) = (v.shape[r - 2], v.shape[r - 1]);
    if dk != d || sv != sk {
        return Err(format!(
            "shapes do not fit: query {:?}, key {:?}, value {:?}",
            q.shape, k.shape, v.shape
        ));
    }
    let at = ScaledDotProductAttention::attrs(cx);
    let scale = at.scale().unwrap_or(1.0 / (d.max(1) as f64).sqrt());
    let causal = at.causal();
    let (qb, kb, vb) = (&q.shape[..r - 2], &k.shape[..r - 2], &v.shape[..r - 2]);
    let (sb, mut scores) = batched(&q.to_f64(), qb, &k.to_f64(), kb, (sq, d, sk), false, true)?;
    scores.iter_mut().for_each(|s| *s *= scale);
    let mut sshape = sb.clone();
    sshape.extend([sq, sk]);
    if let Some(m) = t.get(3) {
        let idx = broadcast_index(&m.shape, &sshape).map_err(|e| format!("operand 'mask': {e}"))?;
        let mv = m.to_f64();
        let boolean = m.dtype == DType::I1;
        for (s, i) in scores.iter_mut().zip(idx) {
            if boolean {
                if mv[i] == 0.0 {
                    *s = f64::NEG_INFINITY;
                }
            } else {
                *s += mv[i];
            }
        }
    }
    if causal {
        for (p, s) in scores.iter_mut().enumerate() {
            let (i, j) = ((p / sk) % sq, p % sk);
            if j > i {
                *s = f64::NEG_INFINITY;
            }
        }
    }
    let planes = numel(&sb);
    softmax_along(&mut scores, planes * sq, sk, 1, false);
    let (ob, out) = batched(&scores, &sb, &v.to_f64(), vb, (sq, sk, dv), false, false)?;
    let mut shape = ob;
    shape.extend([sq, dv]);
    let dt = result_dtype(cx, 0, q.dtype);
    Ok(vec![Tensor::from_f64(shape, dt, out)])
}

def_op! {
    /// softmax(q·kᵀ·scale + mask)·v — the attention core of BERT and GPT-2
    ///
    /// `query` is `batch... x Sq x D`, `key` `batch... x Sk x D`, `value` `batch... x Sk x Dv`
    /// (same rank, batch dims broadcast, e.g. `B x heads`); the result is `batch... x Sq x Dv`.
    /// `scale` defaults to `1/sqrt(D)`. The optional `mask` broadcasts to the scores `batch...
    /// x Sq x Sk`: a float mask is added, an i1 mask keeps the positions that are true. `causal
    /// = true` also hides key positions after the query position (`j > i`, top-left aligned). A
    /// row with every position hidden gives NaN, as in PyTorch.
    pub ScaledDotProductAttention = "graph.scaled_dot_product_attention" {
        operands {
            query: FloatTensor,
            key: FloatTensor,
            value: FloatTensor,
            mask: Option<AnyTensor>,
        },
        results { output: FloatTensor },
        attrs {
            /// factor of q·kᵀ (default 1/sqrt(D))
            scale: Option<F64>,
            /// hide keys after the query position
            causal: Bool = false,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_sdpa,
        semantics: sem_sdpa,
        interfaces [
            Cost::cube(attention_flops),
            FusionPattern::Opaque,
            CUBE_ENGINES,
            PrecisionClass::White,
            KernelFamily::Attention,
        ],
        es(attrs = AttentionAttrs),
    }
}

// ---- interfaces -------------------------------------------------------------

/// Pooling and transposed-convolution kernels on AI Core read and write
/// activations in NC1HWC0.
const NC1HWC0_KERNEL: Layout = Layout::Blocked {
    format: Format::NC1HWC0,
    data: &[0],
    weight: None,
};

/// Convolution kernels also read a dense (`group = 1`) filter in FRACTAL_Z.
const CONV_KERNEL: Layout = Layout::Blocked {
    format: Format::NC1HWC0,
    data: &[0],
    weight: Some(BlockedWeight {
        operand: 1,
        format: Format::FRACTAL_Z,
        when: dense_filter,
    }),
};

fn dense_filter(a: AttrDict) -> bool {
    Conv2d::attrs(&a).group() == 1
}

/// `2 · out elements · C_in/group · kH · kW` (the filter's dims after the first).
pub(crate) fn conv_flops(cx: &CostCtx) -> f64 {
    let per: f64 = cx.operand_dims(1).iter().skip(1).product();
    2.0 * cx.out_elements() * per
}

/// One operation per window cell of each output element.
pub(crate) fn window_flops(cx: &CostCtx, kernel: Option<Vec<i64>>) -> f64 {
    let k: f64 = kernel
        .unwrap_or_default()
        .iter()
        .map(|&x| x as f64)
        .product();
    cx.out_elements() * k.max(1.0)
}

fn max_pool_flops(cx: &CostCtx) -> f64 {
    window_flops(cx, MaxPool2d::attrs(cx).kernel_shape())
}

fn avg_pool_flops(cx: &CostCtx) -> f64 {
    window_flops(cx, AvgPool2d::attrs(cx).kernel_shape())
}

/// Two products of `batch · L · S · E` multiply-adds (`q·kᵀ` and the weighted sum of `v`).
fn attention_flops(cx: &CostCtx) -> f64 {
    let q = cx.operand_dims(0);
    let k = cx.operand_dims(1);
    let l = q.iter().rev().nth(1).copied().unwrap_or(1.0);
    let e = q.last().copied().unwrap_or(1.0);
    let s = k.iter().rev().nth(1).copied().unwrap_or(1.0);
    let batch: f64 = q.iter().rev().skip(2).product();
    4.0 * batch * l * s * e
}

pub static OPS: &[&OpDef] = &[
    &CONV2D,
    &CONV_TRANSPOSE2D,
    &MAX_POOL2D,
    &AVG_POOL2D,
    &GLOBAL_AVG_POOL,
    &GLOBAL_MAX_POOL,
    &BATCH_NORM,
    &INSTANCE_NORM,
    &LAYER_NORM,
    &RMS_NORM,
    &SOFTMAX,
    &LOG_SOFTMAX,
    &SCALED_DOT_PRODUCT_ATTENTION,
];
