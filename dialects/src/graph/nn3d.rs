//! Volumetric ops (ONNX Conv, ConvTranspose, MaxPool and AveragePool on `N
//! x C x D x H x W` inputs): `graph.conv3d`, `graph.conv_transpose3d`,
//! `graph.max_pool3d`, `graph.avg_pool3d`.
//!
//! The pooling loop ([`pool3d_plane`]) is generic over the element type and
//! public: the semantics run it in f64, the runtime's native kernel
//! (runtime/src/kernels/volume.rs) in f32. The convolution's reference is a
//! direct sum here; the kernel computes it with im2col and a GEMM, so the
//! two are independent statements checked against each other. Likewise the
//! transposed convolution: a direct scatter here, a GEMM and col2im in the
//! kernel (runtime/src/kernels/conv_transpose.rs).

// Reference loops index several arrays by the same loop variable.
#![allow(clippy::needless_range_loop)]

use super::elementwise::COMPUTE_FORMAT;
use super::nn::{conv_flops, transpose_out, window_out, window_out_usize};
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interfaces::CostCtx;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{Dim, Type};

type SemResult = Result<Vec<Tensor>, String>;

const AXES: [&str; 3] = ["D", "H", "W"];

/// The sliding-window geometry of a 3-D conv or pool.
#[derive(Clone, Debug, PartialEq)]
pub struct Window3 {
    pub kernel: [usize; 3],
    pub strides: [usize; 3],
    /// [front, top, left, back, bottom, right] (ONNX begin/end order).
    pub pads: [usize; 6],
    pub dilations: [usize; 3],
    pub ceil: bool,
}

fn three(name: &str, v: Vec<i64>, min: i64) -> Result<[usize; 3], String> {
    let v = check_len(name, v, 3, "D, H, W")?;
    check_min(name, &v, min)?;
    Ok([v[0] as usize, v[1] as usize, v[2] as usize])
}

impl Window3 {
    /// Check the attribute values (kernel `None`: taken from the filter).
    pub fn new(
        kernel: Option<Vec<i64>>,
        strides: Vec<i64>,
        pads: Vec<i64>,
        dilations: Vec<i64>,
        ceil: bool,
    ) -> Result<Window3, String> {
        let pads = check_len("pads", pads, 6, "D, H, W begins then ends")?;
        check_min("pads", &pads, 0)?;
        let mut p = [0usize; 6];
        for (d, s) in p.iter_mut().zip(&pads) {
            *d = *s as usize;
        }
        Ok(Window3 {
            kernel: match kernel {
                Some(k) => three("kernel_shape", k, 1)?,
                None => [1, 1, 1],
            },
            strides: three("strides", strides, 1)?,
            pads: p,
            dilations: three("dilations", dilations, 1)?,
            ceil,
        })
    }

    /// The output's spatial dims for input dims `x` (symbolic or unknown dims
    /// flow through).
    pub fn out_dims(&self, x: &[Dim], kernel: &[Dim]) -> Result<Vec<Dim>, String> {
        (0..3)
            .map(|i| {
                window_out(
                    x[i],
                    kernel[i],
                    self.strides[i] as i64,
                    self.dilations[i] as i64,
                    self.pads[i] as i64,
                    self.pads[3 + i] as i64,
                    self.ceil,
                    AXES[i],
                )
            })
            .collect()
    }

    /// The output's spatial sizes for input sizes `x`.
    pub fn out_sizes(&self, x: [usize; 3]) -> Result<[usize; 3], String> {
        let mut o = [0; 3];
        for i in 0..3 {
            o[i] = window_out_usize(
                x[i],
                self.kernel[i],
                self.strides[i] as i64,
                self.dilations[i] as i64,
                self.pads[i] as i64,
                self.pads[3 + i] as i64,
                self.ceil,
                AXES[i],
            )?;
        }
        Ok(o)
    }
}

/// The dims of a rank-5 operand as `[N, C, [D, H, W]]`.
pub fn dims5(s: &[usize], name: &str) -> Result<(usize, usize, [usize; 3]), String> {
    match s {
        [n, c, d, h, w] => Ok((*n, *c, [*d, *h, *w])),
        _ => Err(format!(
            "operand '{name}' must have rank 5 (NCDHW), but has shape {s:?}"
        )),
    }
}

// ---- pooling ------------------------------------------------------------------

/// Pool one `D x H x W` plane `x` into `out` (`od x oh x ow`): the maximum
/// (padded cells never win; NaN wins) or the mean (divisor: the cells inside
/// the input, or with `include_pad` inside the padded extent — never cells
/// past it that a `ceil_mode` window reaches).
pub fn pool3d_plane<T: Real>(
    x: &[T],
    dims: [usize; 3],
    w: &Window3,
    avg: bool,
    include_pad: bool,
    out: &mut [T],
) {
    let od = match w.out_sizes(dims) {
        Ok(o) => o,
        Err(_) => return,
    };
    // Per axis, the taps that read a value and how many count with the
    // padding (`taps_in`: computed, so a huge window costs what its input
    // does).
    let big = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
    let axis = |a: usize, o: usize| {
        let (s, p, d, k) = (w.strides[a], w.pads[a], w.dilations[a], w.kernel[a]);
        let taps = |lo: i64, hi: i64| super::nn::taps_in(o, big(s), big(p), big(d), big(k), lo, hi);
        let len = big(dims[a]);
        let padded = taps(i64::MIN, len.saturating_add(big(w.pads[3 + a])));
        let at = move |k: i64| (o as i128 * s as i128 - p as i128 + k as i128 * d as i128) as usize;
        (taps(0, len), (padded.end - padded.start) as usize, at)
    };
    let mut k = 0;
    for o0 in 0..od[0] {
        let (r0, p0, at0) = axis(0, o0);
        for o1 in 0..od[1] {
            let (r1, p1, at1) = axis(1, o1);
            for o2 in 0..od[2] {
                let (r2, p2, at2) = axis(2, o2);
                let (mut acc, count, padded) = (
                    if avg { 0.0 } else { f64::NEG_INFINITY },
                    [&r0, &r1, &r2]
                        .iter()
                        .map(|r| (r.end - r.start) as usize)
                        .product::<usize>(),
                    p0.saturating_mul(p1).saturating_mul(p2),
                );
                for k0 in r0.clone() {
                    for k1 in r1.clone() {
                        let row = (at0(k0) * dims[1] + at1(k1)) * dims[2];
                        for k2 in r2.clone() {
                            let v = x[row + at2(k2)].get();
                            if avg {
                                acc += v;
                            } else if v > acc || v.is_nan() {
                                acc = v;
                            }
                        }
                    }
                }
                out[k] = T::of(if avg {
                    let d = if include_pad { padded } else { count };
                    if d == 0 {
                        f64::NAN
                    } else {
                        acc / d as f64
                    }
                } else {
                    acc
                });
                k += 1;
            }
        }
    }
}

pub(crate) fn pool_window(a: PoolView) -> Result<Window3, String> {
    let (kernel, strides, pads, dilations, ceil) = a;
    let kernel = kernel.ok_or("requires attribute 'kernel_shape'")?;
    let w = Window3::new(Some(kernel), strides, pads, dilations, ceil != 0)?;
    for a in 0..3 {
        let keff = w.dilations[a] * (w.kernel[a] - 1) + 1;
        if w.pads[a] >= keff || w.pads[3 + a] >= keff {
            return Err(format!(
                "attribute 'pads' {:?} must be smaller than the kernel extent {keff} along {}",
                w.pads, AXES[a]
            ));
        }
    }
    Ok(w)
}

/// kernel_shape, strides, pads, dilations, ceil_mode.
pub(crate) type PoolView = (Option<Vec<i64>>, Vec<i64>, Vec<i64>, Vec<i64>, i64);

/// The window of a 3-D pool op from its attributes (`avg`: an average pool).
pub fn pool_window_of(src: &impl ge_ir::opdef::AttrSource, avg: bool) -> Result<Window3, String> {
    if avg {
        let a = AvgPool3d::attrs(src);
        pool_window((
            a.kernel_shape(),
            a.strides(),
            a.pads(),
            a.dilations(),
            a.ceil_mode(),
        ))
    } else {
        let a = MaxPool3d::attrs(src);
        pool_window((
            a.kernel_shape(),
            a.strides(),
            a.pads(),
            a.dilations(),
            a.ceil_mode(),
        ))
    }
}

fn infer_pool3d(cx: &InferCtx, avg: bool) -> Result<Vec<Type>, String> {
    let w = pool_window_of(cx, avg)?;
    let t = cx.operand_types[0];
    let x = dims_rank(t, "input", 5, "NCDHW")?;
    let Some(x) = x else {
        return Ok(vec![Type::unranked(dtype_of(t)?)]);
    };
    let k: Vec<Dim> = w.kernel.iter().map(|&k| Dim::Static(k as i64)).collect();
    let mut out = vec![x[0], x[1]];
    out.extend(w.out_dims(&x[2..], &k)?);
    Ok(vec![Type::tensor(&out, dtype_of(t)?)])
}

fn sem_pool3d(cx: &SemCtx, t: &[&Tensor], avg: bool) -> SemResult {
    arity(t, 1)?;
    let w = pool_window_of(cx, avg)?;
    let include_pad = avg && AvgPool3d::attrs(cx).count_include_pad() != 0;
    let x = t[0];
    let (n, c, dims) = dims5(&x.shape, "input")?;
    let od = w.out_sizes(dims)?;
    let (pin, pout) = (dims.iter().product::<usize>(), od.iter().product::<usize>());
    let xs = x.to_f64();
    let mut out = vec![0.0; checked_numel(&[n, c, pout])?];
    for p in 0..n * c {
        pool3d_plane(
            &xs[p * pin..(p + 1) * pin],
            dims,
            &w,
            avg,
            include_pad,
            &mut out[p * pout..(p + 1) * pout],
        );
    }
    let dt = result_dtype(cx, 0, x.dtype);
    Ok(vec![Tensor::from_f64(
        vec![n, c, od[0], od[1], od[2]],
        dt,
        out,
    )])
}

// ---- convolution ----------------------------------------------------------------

/// The window and group of a conv3d from its attributes.
pub fn conv_window_of(src: &impl ge_ir::opdef::AttrSource) -> Result<(Window3, usize), String> {
    let a = Conv3d::attrs(src);
    let w = Window3::new(None, a.strides(), a.pads(), a.dilations(), false)?;
    let g = a.group();
    if g < 1 {
        return Err(format!("attribute 'group' must be >= 1, but got {g}"));
    }
    Ok((w, g as usize))
}

fn infer_conv3d(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let (win, g) = conv_window_of(cx)?;
    let ts = cx.operand_types;
    let x = dims_rank(ts[0], "input", 5, "NCDHW")?;
    let f = dims_rank(ts[1], "filter", 5, "OIDHW")?;
    let dt = dtype_of(ts[0])?;
    if let (Some(x), Some(f)) = (&x, &f) {
        let want = f[1].mul_const(g as i64);
        if !x[1].compatible(want) {
            return Err(format!(
                "operand 'input' has {} channels, but operand 'filter' expects {} per group x group {g} = {want}",
                x[1], f[1]
            ));
        }
    }
    if let Some(m) = f.as_ref().and_then(|f| f[0].as_static()) {
        if m % g as i64 != 0 {
            return Err(format!(
                "operand 'filter' has {m} output channels, which is not a multiple of group {g}"
            ));
        }
    }
    if ts.len() > 2 {
        let b = dims_rank(ts[2], "bias", 1, "O")?;
        if let (Some(b), Some(f)) = (&b, &f) {
            check_dim_eq(
                b[0],
                f[0],
                "operand 'bias' must have one entry per output channel",
            )?;
        }
    }
    let (Some(x), Some(f)) = (x, f) else {
        return Ok(vec![Type::unranked(dt)]);
    };
    let mut out = vec![x[0], f[0]];
    out.extend(win.out_dims(&x[2..], &f[2..])?);
    Ok(vec![Type::tensor(&out, dt)])
}

/// `[N, C, D, H, W]`, `[M, C/group, kD, kH, kW]`, the bias, and the output dims
/// `[N, M, OD, OH, OW]` of a conv3d, checked.
pub fn conv3d_shapes(
    win: &Window3,
    group: usize,
    x: &[usize],
    f: &[usize],
    bias: Option<&[usize]>,
) -> Result<[usize; 5], String> {
    let (n, c, dims) = dims5(x, "input")?;
    let (m, cg, _) = dims5(f, "filter")?;
    if cg * group != c || m % group != 0 {
        return Err(format!(
            "input has {c} channels and filter shape {f:?} with group {group} do not fit"
        ));
    }
    if let Some(b) = bias {
        if b != [m] {
            return Err(format!("bias has shape {b:?}, expected [{m}]"));
        }
    }
    let win = Window3 {
        kernel: [f[2], f[3], f[4]],
        ..win.clone()
    };
    let o = win.out_sizes(dims)?;
    checked_numel(&[n, m, o[0], o[1], o[2]])?;
    Ok([n, m, o[0], o[1], o[2]])
}

fn sem_conv3d(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let (win, g) = conv_window_of(cx)?;
    let (x, f) = (t[0], t[1]);
    let out_shape = conv3d_shapes(&win, g, &x.shape, &f.shape, t.get(2).map(|b| &b.shape[..]))?;
    let [n, m, od, oh, ow] = out_shape;
    let (c, id, ih, iw) = (x.shape[1], x.shape[2], x.shape[3], x.shape[4]);
    let (cg, kd, kh, kw) = (f.shape[1], f.shape[2], f.shape[3], f.shape[4]);
    let (xs, fs) = (x.to_f64(), f.to_f64());
    let bias = t.get(2).map_or(vec![0.0; m], |b| b.to_f64());
    let mg = m / g;
    let at = |o: usize, k: usize, a: usize| {
        (o * win.strides[a] + k * win.dilations[a]) as isize - win.pads[a] as isize
    };
    let mut out = Vec::with_capacity(n * m * od * oh * ow);
    for b in 0..n {
        for oc in 0..m {
            let grp = oc / mg;
            for (o0, o1, o2) in
                (0..od).flat_map(|a| (0..oh).flat_map(move |y| (0..ow).map(move |z| (a, y, z))))
            {
                let mut acc = bias[oc];
                for ci in 0..cg {
                    let ic = grp * cg + ci;
                    for k0 in 0..kd {
                        let z = at(o0, k0, 0);
                        if z < 0 || z >= id as isize {
                            continue;
                        }
                        for k1 in 0..kh {
                            let y = at(o1, k1, 1);
                            if y < 0 || y >= ih as isize {
                                continue;
                            }
                            for k2 in 0..kw {
                                let xx = at(o2, k2, 2);
                                if xx < 0 || xx >= iw as isize {
                                    continue;
                                }
                                let xi = (((b * c + ic) * id + z as usize) * ih + y as usize) * iw
                                    + xx as usize;
                                let fi = (((oc * cg + ci) * kd + k0) * kh + k1) * kw + k2;
                                acc += xs[xi] * fs[fi];
                            }
                        }
                    }
                }
                out.push(acc);
            }
        }
    }
    let dt = result_dtype(cx, 0, x.dtype);
    Ok(vec![Tensor::from_f64(out_shape.to_vec(), dt, out)])
}

// ---- transposed convolution -------------------------------------------------

/// The checked attributes of a `graph.conv_transpose3d`.
#[derive(Clone, Debug, PartialEq)]
pub struct Transpose3 {
    pub strides: [usize; 3],
    /// [front, top, left, back, bottom, right]
    pub pads: [usize; 6],
    pub dilations: [usize; 3],
    pub output_padding: [usize; 3],
    pub group: usize,
}

impl Transpose3 {
    pub fn of(src: &impl ge_ir::opdef::AttrSource) -> Result<Transpose3, String> {
        let a = ConvTranspose3d::attrs(src);
        let w = Window3::new(None, a.strides(), a.pads(), a.dilations(), false)?;
        let op = three("output_padding", a.output_padding(), 0)?;
        for i in 0..3 {
            if op[i] >= w.strides[i].max(w.dilations[i]) {
                return Err(format!(
                    "attribute 'output_padding' entry {} must be smaller than the stride or the dilation ({} / {})",
                    op[i], w.strides[i], w.dilations[i]
                ));
            }
        }
        let g = a.group();
        if g < 1 {
            return Err(format!("attribute 'group' must be >= 1, but got {g}"));
        }
        Ok(Transpose3 {
            strides: w.strides,
            pads: w.pads,
            dilations: w.dilations,
            output_padding: op,
            group: g as usize,
        })
    }

    /// The result dims for `input` (`N x C x D x H x W`), `filter` (`C x
    /// M/group x kD x kH x kW`) and `bias` (`M`), checked.
    pub fn result_dims(
        &self,
        x: &[Dim],
        f: &[Dim],
        bias: Option<&[Dim]>,
    ) -> Result<Vec<Dim>, String> {
        let g = self.group as i64;
        if !x[1].compatible(f[0]) {
            return Err(format!(
                "operand 'input' has {} channels, but operand 'filter' has {} input channels (dim 0)",
                x[1], f[0]
            ));
        }
        if let Some(c) = f[0].as_static().filter(|c| c % g != 0) {
            return Err(format!(
                "operand 'filter' has {c} input channels, which is not a multiple of group {g}"
            ));
        }
        let m = f[1].mul_const(g);
        if let Some(b) = bias {
            check_dim_eq(
                b[0],
                m,
                "operand 'bias' must have one entry per output channel",
            )?;
        }
        let mut out = vec![x[0], m];
        for i in 0..3 {
            out.push(transpose_out(
                x[2 + i],
                f[2 + i],
                self.strides[i] as i64,
                self.dilations[i] as i64,
                self.pads[i] as i64,
                self.pads[3 + i] as i64,
                self.output_padding[i] as i64,
                AXES[i],
            )?);
        }
        Ok(out)
    }

    /// The result dims `[N, M, OD, OH, OW]` of run-time shapes, checked.
    pub fn shapes(
        &self,
        x: &[usize],
        f: &[usize],
        bias: Option<&[usize]>,
    ) -> Result<[usize; 5], String> {
        dims5(x, "input")?;
        dims5(f, "filter")?;
        if bias.is_some_and(|b| b.len() != 1) {
            return Err(format!(
                "operand 'bias' must have rank 1, but has shape {bias:?}"
            ));
        }
        let d = |s: &[usize]| -> Vec<Dim> { s.iter().map(|&v| Dim::Static(v as i64)).collect() };
        let out = self.result_dims(&d(x), &d(f), bias.map(d).as_deref())?;
        let mut o = [0usize; 5];
        for (o, v) in o.iter_mut().zip(&out) {
            *o = v.as_static().unwrap_or(0) as usize;
        }
        checked_numel(&o)?;
        Ok(o)
    }
}

fn infer_conv_transpose3d(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = Transpose3::of(cx)?;
    let ts = cx.operand_types;
    let dt = dtype_of(ts[0])?;
    let x = dims_rank(ts[0], "input", 5, "NCDHW")?;
    let f = dims_rank(ts[1], "filter", 5, "C x M/group x kD x kH x kW")?;
    let b = ts
        .get(2)
        .map(|&b| dims_rank(b, "bias", 1, "M"))
        .transpose()?;
    let (Some(x), Some(f)) = (x, f) else {
        return Ok(vec![Type::unranked(dt)]);
    };
    let out = t.result_dims(&x, &f, b.flatten().as_deref())?;
    Ok(vec![Type::tensor(&out, dt)])
}

fn sem_conv_transpose3d(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let tr = Transpose3::of(cx)?;
    let (x, f) = (t[0], t[1]);
    let bias = t.get(2);
    let out_shape = tr.shapes(&x.shape, &f.shape, bias.map(|b| &b.shape[..]))?;
    let [n, m, od, oh, ow] = out_shape;
    let (c, idims) = (x.shape[1], [x.shape[2], x.shape[3], x.shape[4]]);
    let (mg, kdims) = (f.shape[1], [f.shape[2], f.shape[3], f.shape[4]]);
    let (cg, odims) = (c / tr.group, [od, oh, ow]);
    let (xs, fs) = (x.to_f64(), f.to_f64());
    let bv = bias.map_or(vec![0.0; m], |b| b.to_f64());
    let (pin, pout, kk) = (
        idims.iter().product::<usize>(),
        odims.iter().product::<usize>(),
        kdims.iter().product::<usize>(),
    );
    let mut out = vec![0.0; checked_numel(&out_shape)?];
    for (p, v) in out.chunks_mut(pout.max(1)).enumerate() {
        v.iter_mut().for_each(|v| *v = bv[p % m.max(1)]);
    }
    // The output place of input place `i` and tap `k` along each axis.
    let place = |i: [usize; 3], k: [usize; 3]| -> Option<usize> {
        let mut at = 0;
        for a in 0..3 {
            let o = (i[a] * tr.strides[a] + k[a] * tr.dilations[a]).checked_sub(tr.pads[a])?;
            if o >= odims[a] {
                return None;
            }
            at = at * odims[a] + o;
        }
        Some(at)
    };
    let unflat = |v: usize, d: [usize; 3]| [v / (d[1] * d[2]), v / d[2] % d[1], v % d[2]];
    for b in 0..n {
        for ic in 0..c {
            let grp = ic / cg;
            for pi in 0..pin {
                let xv = xs[(b * c + ic) * pin + pi];
                let i = unflat(pi, idims);
                for k in 0..kk {
                    let Some(po) = place(i, unflat(k, kdims)) else {
                        continue;
                    };
                    for mo in 0..mg {
                        let oc = grp * mg + mo;
                        out[(b * m + oc) * pout + po] += xv * fs[(ic * mg + mo) * kk + k];
                    }
                }
            }
        }
    }
    let dt = result_dtype(cx, 0, x.dtype);
    Ok(vec![Tensor::from_f64(out_shape.to_vec(), dt, out)])
}

fn conv3d_flops(cx: &CostCtx) -> f64 {
    let per: f64 = cx.operand_dims(1).iter().skip(1).product();
    2.0 * cx.out_elements() * per
}

fn pool3d_flops(cx: &CostCtx) -> f64 {
    let k = MaxPool3d::attrs(cx)
        .kernel_shape()
        .unwrap_or_default()
        .iter()
        .map(|&k| k as f64)
        .product::<f64>();
    cx.out_elements() * k.max(1.0)
}

fn infer_max_pool3d(cx: &InferCtx) -> Result<Vec<Type>, String> {
    infer_pool3d(cx, false)
}

fn infer_avg_pool3d(cx: &InferCtx) -> Result<Vec<Type>, String> {
    infer_pool3d(cx, true)
}

fn sem_max_pool3d(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    sem_pool3d(cx, t, false)
}

fn sem_avg_pool3d(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    sem_pool3d(cx, t, true)
}

def_op! {
    /// 3-D convolution (NCDHW input, OIDHW filter, optional bias)
    ///
    /// ONNX `Conv` on volumes: `input` is `N x C x D x H x W`, `filter` is `O x C/group x kD x
    /// kH x kW`, `bias` (optional) has `O` entries; the output is `N x O x OD x OH x OW` with
    /// each size as for `graph.conv2d` (`(D + pad_front + pad_back - dil_d*(kD-1) - 1) /
    /// stride_d + 1`, floor). `group` splits the channels into independent groups.
    pub Conv3d = "graph.conv3d" {
        operands { input: FloatTensor, filter: FloatTensor, bias: Option<FloatTensor> },
        results { output: FloatTensor },
        attrs {
            /// stride along D, H and W
            strides: I64Array = [1, 1, 1],
            /// zero padding [front, top, left, back, bottom, right] (ONNX begin/end order)
            pads: I64Array = [0, 0, 0, 0, 0, 0],
            /// filter dilation along D, H and W
            dilations: I64Array = [1, 1, 1],
            /// number of channel groups
            group: I64 = 1,
        },
        traits [Pure, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_conv3d,
        semantics: sem_conv3d,
        interfaces [
            Cost::cube(conv3d_flops),
            FusionPattern::OutElementwiseFusable,
            CUBE_ENGINES,
            PrecisionClass::White,
            KernelFamily::Conv,
        ],
        es,
    }
}

def_op! {
    /// 3-D transposed convolution (ONNX ConvTranspose on volumes)
    ///
    /// `graph.conv_transpose2d` with a depth axis: `input` is `N x C x D x H x W`, `filter` `C
    /// x M/group x kD x kH x kW`, `bias` (optional) has `M` entries; the output is `N x M x OD x
    /// OH x OW` with `OD = stride_d*(D-1) + output_padding_d + dil_d*(kD-1) + 1 - pad_front -
    /// pad_back` (likewise OH, OW). `output_padding` must be smaller than the stride or the
    /// dilation. ONNX's `output_shape` and `auto_pad` become `pads` at import.
    pub ConvTranspose3d = "graph.conv_transpose3d" {
        operands { input: FloatTensor, filter: FloatTensor, bias: Option<FloatTensor> },
        results { output: FloatTensor },
        attrs {
            /// stride along D, H and W
            strides: I64Array = [1, 1, 1],
            /// [front, top, left, back, bottom, right] removed from the full output
            pads: I64Array = [0, 0, 0, 0, 0, 0],
            /// filter dilation along D, H and W
            dilations: I64Array = [1, 1, 1],
            /// number of channel groups
            group: I64 = 1,
            /// extra size added at the back/bottom/right of the output
            output_padding: I64Array = [0, 0, 0],
        },
        traits [Pure, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_conv_transpose3d,
        semantics: sem_conv_transpose3d,
        interfaces [
            Cost::cube(conv_flops),
            FusionPattern::OutElementwiseFusable,
            CUBE_ENGINES,
            PrecisionClass::White,
            KernelFamily::Conv,
        ],
        es,
    }
}

def_op! {
    /// 3-D max pooling (ONNX MaxPool, NCDHW)
    ///
    /// The maximum over each `kD x kH x kW` window (dilated by `dilations`) of an `N x C x D x
    /// H x W` input; padded cells never win, NaN does. Output sizes as for `graph.conv3d`, or
    /// rounded up with `ceil_mode = 1` (a window must still start inside the input or the
    /// begin pad). With ONNX's `Indices` result it is `graph.max_pool3d_indices`.
    pub MaxPool3d = "graph.max_pool3d" {
        operands { input: FloatTensor },
        results { output: FloatTensor },
        attrs {
            /// window size [kD, kH, kW]
            kernel_shape: I64Array,
            /// stride along D, H and W
            strides: I64Array = [1, 1, 1],
            /// padding [front, top, left, back, bottom, right]; each smaller than the kernel extent
            pads: I64Array = [0, 0, 0, 0, 0, 0],
            /// window dilation along D, H and W
            dilations: I64Array = [1, 1, 1],
            /// 1: round the output sizes up
            ceil_mode: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_max_pool3d,
        semantics: sem_max_pool3d,
        interfaces [
            Cost::vector(pool3d_flops),
            FusionPattern::OutElementwiseFusable,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Pool,
        ],
        es,
    }
}

def_op! {
    /// 3-D average pooling (ONNX AveragePool, NCDHW)
    ///
    /// The mean over each `kD x kH x kW` window of an `N x C x D x H x W` input. With
    /// `count_include_pad = 0` (the default) the divisor counts only cells inside the input;
    /// with 1 it counts padded cells too (but never cells past the padding that `ceil_mode`
    /// windows reach). Window and output sizes as for `graph.max_pool3d`.
    pub AvgPool3d = "graph.avg_pool3d" {
        operands { input: FloatTensor },
        results { output: FloatTensor },
        attrs {
            /// window size [kD, kH, kW]
            kernel_shape: I64Array,
            /// stride along D, H and W
            strides: I64Array = [1, 1, 1],
            /// padding [front, top, left, back, bottom, right]; each smaller than the kernel extent
            pads: I64Array = [0, 0, 0, 0, 0, 0],
            /// window dilation along D, H and W
            dilations: I64Array = [1, 1, 1],
            /// 1: round the output sizes up
            ceil_mode: I64 = 0,
            /// 1: padded cells count in the divisor
            count_include_pad: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_avg_pool3d,
        semantics: sem_avg_pool3d,
        interfaces [
            Cost::vector(pool3d_flops),
            FusionPattern::OutElementwiseFusable,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Pool,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&CONV3D, &CONV_TRANSPOSE3D, &MAX_POOL3D, &AVG_POOL3D];

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2x2x2 max and mean over a 2x2x3 plane, ceil mode taking the last
    /// column in a window of its own.
    #[test]
    fn pool_plane_by_hand() {
        let x: Vec<f64> = (0..12).map(|v| v as f64).collect();
        let w = Window3::new(
            Some(vec![2, 2, 2]),
            vec![2, 2, 2],
            vec![0; 6],
            vec![1; 3],
            true,
        )
        .unwrap();
        assert_eq!(w.out_sizes([2, 2, 3]).unwrap(), [1, 1, 2]);
        let mut out = vec![0.0; 2];
        pool3d_plane(&x, [2, 2, 3], &w, false, false, &mut out);
        assert_eq!(out, vec![10.0, 11.0]);
        pool3d_plane(&x, [2, 2, 3], &w, true, false, &mut out);
        // cells 0,1,3,4,6,7,9,10 and 2,5,8,11
        assert_eq!(out, vec![5.0, 6.5]);
        assert!(Window3::new(None, vec![1, 1], vec![0; 6], vec![1; 3], false).is_err());
    }
}
