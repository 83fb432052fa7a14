//! Max pooling that also gives where each maximum came from (ONNX
//! MaxPool's `Indices` output, with `storage_order`, on images and volumes)
//! and its inverse (ONNX MaxUnpool), which puts pooled values back at those
//! places.
//!
//! The window loops with the argmax ([`max_pool_argmax`],
//! [`max_pool3d_argmax`], generic over the element type) and the scatter of the unpooling ([`max_unpool`]) are
//! shared with the runtime's native kernels (runtime/src/kernels/max_unpool.rs).
//! The window rules (sizes, pads, ceil mode) are graph.max_pool2d's
//! ([`pool_attrs`], [`window_out`]).

use super::elementwise::COMPUTE_FORMAT;
use super::nn::{
    pool_attrs, window_flops, window_out, window_out_usize, PoolAttrs, MAX_POOL_TYPES,
};
use super::nn3d::{dims5, pool_window, Window3};
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{strides, Data, Tensor};
use ge_ir::{DType, Dim, Type};

type SemResult = Result<Vec<Tensor>, String>;

// ---- MaxPool with indices ----------------------------------------------------------

/// A max pool's windows over planes of `h x w` into planes of `oh x ow`,
/// and how indices are numbered (`column_major`: ONNX `storage_order = 1`).
#[derive(Clone, Debug)]
pub struct ArgmaxPool {
    pub attrs: PoolAttrs,
    pub column_major: bool,
    pub h: usize,
    pub w: usize,
    pub oh: usize,
    pub ow: usize,
}

impl ArgmaxPool {
    /// The checked attributes of a `graph.max_pool2d_indices` (any attribute source).
    pub fn attrs(a: MaxPool2dIndicesAttrView) -> Result<(PoolAttrs, bool), String> {
        let p = pool_attrs(
            a.kernel_shape(),
            a.strides(),
            a.pads(),
            a.dilations(),
            a.ceil_mode(),
        )?;
        match a.storage_order() {
            0 => Ok((p, false)),
            1 => Ok((p, true)),
            s => Err(format!(
                "attribute 'storage_order' must be 0 (row major) or 1 (column major), but is {s}"
            )),
        }
    }

    /// The run over planes of `h x w`.
    pub fn new(attrs: PoolAttrs, column_major: bool, h: usize, w: usize) -> Result<Self, String> {
        let size = |i: usize, len: usize| {
            window_out_usize(
                len,
                attrs.kernel[i] as usize,
                attrs.strides[i],
                attrs.dilations[i],
                attrs.pads[i],
                attrs.pads[2 + i],
                attrs.ceil,
                ["H", "W"][i],
            )
        };
        let (oh, ow) = (size(0, h)?, size(1, w)?);
        Ok(ArgmaxPool {
            attrs,
            column_major,
            h,
            w,
            oh,
            ow,
        })
    }
}

/// Max-pool planes `planes` of `x` (`h x w` each, all planes of the
/// tensor) into `out` and `idx` (`oh x ow` each, starting at plane
/// `planes.start`). As ONNX's reference: the first largest value of a
/// window wins (a NaN only when it comes first); its index counts from the
/// start of the tensor, row major (`column_major`: the plane's columns
/// first). A window with no cell inside the input (which the attribute
/// checks rule out) gives 0 at index -1.
pub fn max_pool_argmax<T: Real>(
    g: &ArgmaxPool,
    x: &[T],
    planes: std::ops::Range<usize>,
    out: &mut [T],
    idx: &mut [i64],
) {
    let a = &g.attrs;
    let (h, w) = (g.h as i64, g.w as i64);
    let valid = |i: usize, o: usize, len: i64| {
        let (s, p, d) = (a.strides[i], a.pads[i], a.dilations[i]);
        super::nn::taps_in(o, s, p, d, a.kernel[i], 0, len)
    };
    let first = planes.start;
    for p in planes {
        let base = p * g.h * g.w;
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                let mut best: Option<(f64, i64, i64)> = None;
                // Only the taps inside the input (`taps_in`: a hostile
                // window of 2^31 taps costs what the input does).
                let (rows, cols) = (valid(0, oy, h), valid(1, ox, w));
                for ky in rows {
                    let iy = oy as i64 * a.strides[0] - a.pads[0] + ky * a.dilations[0];
                    for kx in cols.clone() {
                        let ix = ox as i64 * a.strides[1] - a.pads[1] + kx * a.dilations[1];
                        let v = x[base + (iy * w + ix) as usize].get();
                        if best.is_none_or(|(b, _, _)| v > b) {
                            best = Some((v, iy, ix));
                        }
                    }
                }
                let o = (p - first) * g.oh * g.ow + oy * g.ow + ox;
                let (v, i) = match best {
                    Some((v, iy, ix)) if g.column_major => (v, base as i64 + iy + ix * h),
                    Some((v, iy, ix)) => (v, base as i64 + iy * w + ix),
                    None => (0.0, -1),
                };
                out[o] = T::of(v);
                idx[o] = i;
            }
        }
    }
}

fn infer_max_pool2d_indices(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    let (a, _) = ArgmaxPool::attrs(MaxPool2dIndices::attrs(cx))?;
    let dt = dtype_of(t)?;
    let Some(x) = dims_rank(t, "input", 4, "NCHW")? else {
        return Ok(vec![Type::unranked(dt), Type::unranked(DType::I64)]);
    };
    let mut out = vec![x[0], x[1]];
    for (i, axis) in ["H", "W"].iter().enumerate() {
        out.push(window_out(
            x[2 + i],
            Dim::Static(a.kernel[i]),
            a.strides[i],
            a.dilations[i],
            a.pads[i],
            a.pads[2 + i],
            a.ceil,
            axis,
        )?);
    }
    Ok(vec![Type::tensor(&out, dt), Type::tensor(&out, DType::I64)])
}

fn sem_max_pool2d_indices(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    let x = t[0];
    expect_rank(x, "input", 4)?;
    let (a, col) = ArgmaxPool::attrs(MaxPool2dIndices::attrs(cx))?;
    let g = ArgmaxPool::new(a, col, x.shape[2], x.shape[3])?;
    let shape = vec![x.shape[0], x.shape[1], g.oh, g.ow];
    let total = checked_numel(&shape)?;
    let (mut v, mut idx) = (vec![0f64; total], vec![0i64; total]);
    max_pool_argmax(
        &g,
        &x.to_f64(),
        0..x.shape[0] * x.shape[1],
        &mut v,
        &mut idx,
    );
    Ok(vec![
        Tensor::from_f64(shape.clone(), x.dtype, v),
        Tensor::from_i64(shape, DType::I64, idx),
    ])
}

def_op! {
    /// 2-D max pooling with the place of each maximum (ONNX MaxPool with `Indices`)
    ///
    /// graph.max_pool2d's result (the same windows, pads, dilations and `ceil_mode`; floats,
    /// i8 and u8) and, for each output element, the index of the input element it came from,
    /// counted over the whole `N x C x H x W` input: row major, or with `storage_order = 1`
    /// column major within each plane (`(n * C + c) * H * W + x * H + y`). The first largest
    /// value of a window wins, as in ONNX's reference.
    pub MaxPool2dIndices = "graph.max_pool2d_indices" {
        operands { input: TensorOf(MAX_POOL_TYPES) },
        results { output: TensorOf(MAX_POOL_TYPES), indices: TensorOf(&[DType::I64]) },
        attrs {
            /// window size [kH, kW]
            kernel_shape: I64Array,
            /// stride along H and W
            strides: I64Array = [1, 1],
            /// padding [top, left, bottom, right]; each smaller than the kernel extent
            pads: I64Array = [0, 0, 0, 0],
            /// window dilation along H and W
            dilations: I64Array = [1, 1],
            /// 1: round the output size up
            ceil_mode: I64 = 0,
            /// 0: indices row major; 1: column major within each plane
            storage_order: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_max_pool2d_indices,
        semantics: sem_max_pool2d_indices,
        interfaces [
            Cost::vector(argmax_pool_flops),
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Pool,
        ],
        es(results = MaxPoolIndicesResults),
    }
}

/// One compare per window cell.
fn argmax_pool_flops(cx: &CostCtx) -> f64 {
    window_flops(cx, MaxPool2dIndices::attrs(cx).kernel_shape())
}

// ---- MaxPool with indices on volumes -----------------------------------------------

/// The checked window and index order of a `graph.max_pool3d_indices`
/// (any attribute source; `true`: column major, ONNX `storage_order = 1`).
pub fn argmax_pool3d_attrs(a: MaxPool3dIndicesAttrView) -> Result<(Window3, bool), String> {
    let w = pool_window((
        a.kernel_shape(),
        a.strides(),
        a.pads(),
        a.dilations(),
        a.ceil_mode(),
    ))?;
    match a.storage_order() {
        0 => Ok((w, false)),
        1 => Ok((w, true)),
        s => Err(format!(
            "attribute 'storage_order' must be 0 (row major) or 1 (column major), but is {s}"
        )),
    }
}

/// Max-pool volumes `planes` of `x` (`dims` = `D x H x W` each, all
/// volumes of the tensor) into `out` and `idx` (`od x oh x ow` each,
/// starting at volume `planes.start`), as [`max_pool_argmax`] does planes:
/// the first largest value wins; its index counts from the start of the
/// tensor, row major (`column_major`: `z + y * D + x * D * H` within the
/// volume, as ONNX's reference numbers them).
pub fn max_pool3d_argmax<T: Real>(
    w: &Window3,
    dims: [usize; 3],
    column_major: bool,
    x: &[T],
    planes: std::ops::Range<usize>,
    out: &mut [T],
    idx: &mut [i64],
) {
    let Ok(od) = w.out_sizes(dims) else {
        return;
    };
    let (vin, vout) = (dims.iter().product::<usize>(), od.iter().product::<usize>());
    let first = planes.start;
    let at = |o: usize, k: usize, a: usize| -> Option<usize> {
        (o * w.strides[a] + k * w.dilations[a])
            .checked_sub(w.pads[a])
            .filter(|&i| i < dims[a])
    };
    // Only the taps inside the input (`taps_in`: a hostile window of 2^31
    // taps costs what the input does); `at` still checks each.
    let valid = |o: usize, a: usize| {
        let big = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
        let (s, p, d, k) = (w.strides[a], w.pads[a], w.dilations[a], w.kernel[a]);
        let r = super::nn::taps_in(o, big(s), big(p), big(d), big(k), 0, big(dims[a]));
        r.start as usize..r.end as usize
    };
    for p in planes {
        let base = p * vin;
        for o in 0..vout {
            let oi = [o / (od[1] * od[2]), o / od[2] % od[1], o % od[2]];
            let mut best: Option<(f64, [usize; 3])> = None;
            let [r0, r1, r2] = [0, 1, 2].map(|a| valid(oi[a], a));
            for k0 in r0 {
                let Some(z) = at(oi[0], k0, 0) else { continue };
                for k1 in r1.clone() {
                    let Some(y) = at(oi[1], k1, 1) else { continue };
                    for k2 in r2.clone() {
                        let Some(xx) = at(oi[2], k2, 2) else { continue };
                        let v = x[base + (z * dims[1] + y) * dims[2] + xx].get();
                        if best.is_none_or(|(b, _)| v > b) {
                            best = Some((v, [z, y, xx]));
                        }
                    }
                }
            }
            let (v, i) = match best {
                Some((v, [z, y, xx])) if column_major => {
                    (v, (base + z + y * dims[0] + xx * dims[0] * dims[1]) as i64)
                }
                Some((v, [z, y, xx])) => (v, (base + (z * dims[1] + y) * dims[2] + xx) as i64),
                None => (0.0, -1),
            };
            out[(p - first) * vout + o] = T::of(v);
            idx[(p - first) * vout + o] = i;
        }
    }
}

fn infer_max_pool3d_indices(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    let (w, _) = argmax_pool3d_attrs(MaxPool3dIndices::attrs(cx))?;
    let dt = dtype_of(t)?;
    let Some(x) = dims_rank(t, "input", 5, "NCDHW")? else {
        return Ok(vec![Type::unranked(dt), Type::unranked(DType::I64)]);
    };
    let k: Vec<Dim> = w.kernel.iter().map(|&k| Dim::Static(k as i64)).collect();
    let mut out = vec![x[0], x[1]];
    out.extend(w.out_dims(&x[2..], &k)?);
    Ok(vec![Type::tensor(&out, dt), Type::tensor(&out, DType::I64)])
}

fn sem_max_pool3d_indices(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    let x = t[0];
    let (n, c, dims) = dims5(&x.shape, "input")?;
    let (w, col) = argmax_pool3d_attrs(MaxPool3dIndices::attrs(cx))?;
    let od = w.out_sizes(dims)?;
    let shape = vec![n, c, od[0], od[1], od[2]];
    let total = checked_numel(&shape)?;
    let (mut v, mut idx) = (vec![0f64; total], vec![0i64; total]);
    max_pool3d_argmax(&w, dims, col, &x.to_f64(), 0..n * c, &mut v, &mut idx);
    Ok(vec![
        Tensor::from_f64(shape.clone(), x.dtype, v),
        Tensor::from_i64(shape, DType::I64, idx),
    ])
}

/// One compare per window cell.
fn argmax_pool3d_flops(cx: &CostCtx) -> f64 {
    window_flops(cx, MaxPool3dIndices::attrs(cx).kernel_shape())
}

def_op! {
    /// 3-D max pooling with the place of each maximum (ONNX MaxPool with `Indices`, NCDHW)
    ///
    /// graph.max_pool3d's result (the same windows, pads, dilations and `ceil_mode`) and, for
    /// each output element, the index of the input element it came from, counted over the
    /// whole `N x C x D x H x W` input: row major, or with `storage_order = 1` column major
    /// within each volume (`(n * C + c) * D * H * W + z + y * D + x * D * H`, as ONNX's
    /// reference numbers them). The first largest value of a window wins.
    pub MaxPool3dIndices = "graph.max_pool3d_indices" {
        operands { input: FloatTensor },
        results { output: FloatTensor, indices: TensorOf(&[DType::I64]) },
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
            /// 0: indices row major; 1: column major within each volume
            storage_order: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_max_pool3d_indices,
        semantics: sem_max_pool3d_indices,
        interfaces [
            Cost::vector(argmax_pool3d_flops),
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Pool,
        ],
        es(results = MaxPool3dIndicesResults),
    }
}

// ---- MaxUnpool ---------------------------------------------------------------------

/// The shape a max pool of `kernel`, `pads` (every begin amount, then every
/// end amount; empty: 0) and `strides` (empty: 1) was taken from, given the
/// pooled dims `x` (`N x C x spatial...`): `(in - 1) * stride - pads + kernel`
/// per spatial dim.
pub fn unpool_dims(
    x: &[Dim],
    kernel: &[i64],
    pads: &[i64],
    strides: &[i64],
) -> Result<Vec<Dim>, String> {
    let n = x.len().saturating_sub(2);
    if x.len() < 3 {
        return Err(format!(
            "operand 'input' must have rank >= 3 (N, C, spatial dims), but has rank {}",
            x.len()
        ));
    }
    let kernel = check_len("kernel_shape", kernel.to_vec(), n, "one per spatial dim")?;
    check_min("kernel_shape", &kernel, 1)?;
    let pads = if pads.is_empty() {
        vec![0; 2 * n]
    } else {
        pads.to_vec()
    };
    let pads = check_len("pads", pads, 2 * n, "begin and end per spatial dim")?;
    check_min("pads", &pads, 0)?;
    let strides = if strides.is_empty() {
        vec![1; n]
    } else {
        strides.to_vec()
    };
    let strides = check_len("strides", strides, n, "one per spatial dim")?;
    check_min("strides", &strides, 1)?;
    let mut out = x[..2].to_vec();
    for d in 0..n {
        let grow = kernel[d]
            .checked_sub(pads[d])
            .and_then(|v| v.checked_sub(pads[n + d]))
            .and_then(|v| v.checked_sub(strides[d]))
            .ok_or("the unpooled size overflows")?;
        let len = x[2 + d].mul_const(strides[d]).add(Dim::Static(grow));
        if let Some(l) = len.as_static().filter(|&l| l < 1) {
            return Err(format!(
                "the unpooled size along spatial dim {d} is {l} (pads larger than the windows)"
            ));
        }
        out.push(len);
    }
    Ok(out)
}

/// The result dims: `output_shape` when given (its rank, N and C those of
/// the input, no dim smaller than the unpooled one), else `inferred`.
pub fn unpool_result(inferred: &[Dim], output_shape: &[i64]) -> Result<Vec<Dim>, String> {
    if output_shape.is_empty() {
        return Ok(inferred.to_vec());
    }
    if output_shape.len() != inferred.len() {
        return Err(format!(
            "attribute 'output_shape' must have {} entries (the input's rank), but has {}: {output_shape:?}",
            inferred.len(),
            output_shape.len()
        ));
    }
    for (d, (&o, &i)) in output_shape.iter().zip(inferred).enumerate() {
        let small = match i.as_static() {
            Some(i) if d < 2 => o != i,
            Some(i) => o < i,
            None => o < 0,
        };
        if small {
            return Err(format!(
                "attribute 'output_shape' {output_shape:?} does not hold the unpooled shape {}",
                Type::tensor(inferred, DType::F32)
            ));
        }
    }
    Ok(output_shape.iter().map(|&d| Dim::Static(d)).collect())
}

/// Put `x[i]` at flat index `idx[i]` of a tensor of `inferred` dims, placed
/// at the start of every dim of `out` (dims `out_shape`, zeroed first).
/// Later elements overwrite earlier ones at the same index.
pub fn max_unpool<T: Copy + Default>(
    x: &[T],
    idx: &[i64],
    inferred: &[usize],
    out_shape: &[usize],
    out: &mut [T],
) -> Result<(), String> {
    let total: usize = inferred.iter().product();
    let (si, so) = (strides(inferred), strides(out_shape));
    out.iter_mut().for_each(|v| *v = T::default());
    for (&v, &j) in x.iter().zip(idx) {
        let Some(mut j) = usize::try_from(j).ok().filter(|&j| j < total) else {
            return Err(format!(
                "index {j} is out of range for the unpooled shape {inferred:?} ({total} elements)"
            ));
        };
        let mut o = 0;
        for (a, &s) in si.iter().enumerate() {
            o += j / s * so[a];
            j %= s;
        }
        out[o] = v;
    }
    Ok(())
}

/// The attributes of a `graph.max_unpool`.
#[derive(Clone, Debug)]
pub struct UnpoolAttrs {
    pub kernel: Vec<i64>,
    pub pads: Vec<i64>,
    pub strides: Vec<i64>,
    pub output_shape: Vec<i64>,
}

impl UnpoolAttrs {
    pub fn of(a: MaxUnpoolAttrView) -> Result<UnpoolAttrs, String> {
        Ok(UnpoolAttrs {
            kernel: a
                .kernel_shape()
                .ok_or("attribute 'kernel_shape' is missing")?,
            pads: a.pads(),
            strides: a.strides(),
            output_shape: a.output_shape(),
        })
    }

    /// The result dims for an input of dims `x`.
    pub fn dims(&self, x: &[Dim]) -> Result<Vec<Dim>, String> {
        let inferred = unpool_dims(x, &self.kernel, &self.pads, &self.strides)?;
        unpool_result(&inferred, &self.output_shape)
    }

    /// The concrete unpooled and result shapes for an input of shape `x`.
    pub fn shapes(&self, x: &[usize]) -> Result<(Vec<usize>, Vec<usize>), String> {
        let xd: Vec<Dim> = x.iter().map(|&d| Dim::Static(d as i64)).collect();
        let inferred = unpool_dims(&xd, &self.kernel, &self.pads, &self.strides)?;
        let out = unpool_result(&inferred, &self.output_shape)?;
        let conc = |d: &[Dim]| -> Vec<usize> {
            d.iter()
                .map(|d| d.as_static().unwrap_or(0) as usize)
                .collect()
        };
        Ok((conc(&inferred), conc(&out)))
    }
}

fn infer_max_unpool(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let (t, ti) = (cx.operand_types[0], cx.operand_types[1]);
    let dt = dtype_of(t)?;
    let a = UnpoolAttrs::of(MaxUnpool::attrs(cx))?;
    let Some(x) = dims(t, "input")? else {
        return Ok(vec![Type::unranked(dt)]);
    };
    if let Some(i) = dims(ti, "indices")? {
        if i.len() != x.len() || i.iter().zip(&x).any(|(a, b)| !a.compatible(*b)) {
            return Err(format!(
                "operand 'indices' must have the input's shape {t}, but is {ti}"
            ));
        }
    }
    Ok(vec![Type::tensor(&a.dims(&x)?, dt)])
}

fn sem_max_unpool(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let (x, i) = (t[0], t[1]);
    if x.shape != i.shape {
        return Err(format!(
            "indices of shape {:?} do not match the input's {:?}",
            i.shape, x.shape
        ));
    }
    let (inferred, shape) = UnpoolAttrs::of(MaxUnpool::attrs(cx))?.shapes(&x.shape)?;
    let total = checked_numel(&shape)?;
    checked_numel(&inferred)?;
    let Data::I(idx) = &i.data else {
        return Err("indices must be integers".into());
    };
    let mut v = vec![0f64; total];
    max_unpool(&x.to_f64(), idx, &inferred, &shape, &mut v)?;
    Ok(vec![Tensor::from_f64(shape, x.dtype, v)])
}

def_op! {
    /// Put pooled values back where they came from (ONNX MaxUnpool)
    ///
    /// `input` (`N x C x spatial...`) and `indices` (the same shape; what
    /// graph.max_pool2d_indices gives) make a zero tensor of the shape the pooling was taken
    /// from — `(in - 1) * stride - pad_begin - pad_end + kernel` per spatial dim — with each
    /// input value at its index (counted over that whole tensor, row major); an index out of
    /// range is an error. With `output_shape` (ONNX's input of that name) the result has that
    /// shape, at least as large, with the unpooled tensor at its start and zeros after, as in
    /// ONNX's reference.
    pub MaxUnpool = "graph.max_unpool" {
        operands { input: FloatTensor, indices: TensorOf(&[DType::I64]) },
        results { output: FloatTensor },
        attrs {
            /// the pooling window per spatial dim
            kernel_shape: I64Array,
            /// the pooling's pads: every begin amount, then every end amount (empty: all 0)
            pads: I64Array = [],
            /// the pooling's strides (empty: all 1)
            strides: I64Array = [],
            /// the result's shape, N and C included (empty: the unpooled shape)
            output_shape: I64Array = [],
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_max_unpool,
        semantics: sem_max_unpool,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Index,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&MAX_POOL2D_INDICES, &MAX_POOL3D_INDICES, &MAX_UNPOOL];
