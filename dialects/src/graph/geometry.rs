//! Image geometry (ONNX CenterCropPad, AffineGrid).
//!
//! ONNX passes the target `shape` of CenterCropPad and the `size` of
//! AffineGrid as *inputs*; here they are attributes, so the result shapes
//! are inferred from them, and the importer wraps the op in a
//! `graph.specialize` when they are known only at run time.
//!
//! What the reference semantics and the runtime's native kernels
//! (runtime/src/kernels/geometry.rs) must agree on is shared here: the pads
//! a center crop-or-pad amounts to ([`crop_pad_amounts`]) and the grid an
//! affine matrix makes ([`affine_grid`], generic over the element type).

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{strides, Data, Tensor};
use ge_ir::{Dim, Type};

type SemResult = Result<Vec<Tensor>, String>;

// ---- CenterCropPad ------------------------------------------------------------

/// The dims `shape` sets, normalised: `axes` (all dims when empty), each in
/// range and listed once, as many as `shape` has entries.
pub fn crop_pad_axes(shape: &[i64], axes: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    let axes: Vec<usize> = if axes.is_empty() {
        (0..rank).collect()
    } else {
        axes.iter()
            .map(|&a| norm_axis(a, rank, "axis"))
            .collect::<Result<_, _>>()?
    };
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].contains(a) {
            return Err(format!("attribute 'axes' names dim {a} twice"));
        }
    }
    if shape.len() != axes.len() {
        return Err(format!(
            "attribute 'shape' must have one entry per axis ({}), but has {}: {shape:?}",
            axes.len(),
            shape.len()
        ));
    }
    check_min("shape", shape, 0)?;
    Ok(axes)
}

/// The result dims of a center crop-or-pad of `dims` to `shape` along `axes`.
pub fn crop_pad_dims(dims: &[Dim], shape: &[i64], axes: &[i64]) -> Result<Vec<Dim>, String> {
    let ax = crop_pad_axes(shape, axes, dims.len())?;
    let mut out = dims.to_vec();
    for (&a, &s) in ax.iter().zip(shape) {
        out[a] = Dim::Static(s);
    }
    Ok(out)
}

/// The ONNX `pads` (begin amounts of every dim, then end amounts; negative:
/// cropped) that turn a tensor of `input` dims into one of `output` dims
/// centred: a dim that grows by `d` gets `d / 2` in front and the rest
/// behind, one that shrinks by `d` loses `d / 2` in front and the rest
/// behind (ONNX's reference: the odd element goes at the end either way).
pub fn crop_pad_amounts(input: &[usize], output: &[usize]) -> Vec<i64> {
    let r = input.len();
    let mut pads = vec![0i64; 2 * r];
    for (a, (&i, &o)) in input.iter().zip(output).enumerate() {
        let (i, o) = (i as i64, o as i64);
        let begin = if o >= i { (o - i) / 2 } else { -((i - o) / 2) };
        pads[a] = begin;
        pads[a + r] = (o - i) - begin;
    }
    pads
}

fn infer_center_crop_pad(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    let dt = dtype_of(t)?;
    let at = CenterCropPad::attrs(cx);
    let shape = at.shape().ok_or("attribute 'shape' is missing")?;
    let axes = at.axes();
    match dims(t, "input")? {
        Some(d) => Ok(vec![Type::tensor(&crop_pad_dims(&d, &shape, &axes)?, dt)]),
        None => Ok(vec![Type::unranked(dt)]),
    }
}

fn sem_center_crop_pad(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    let x = t[0];
    let at = CenterCropPad::attrs(cx);
    let shape = at.shape().ok_or("attribute 'shape' is missing")?;
    let ax = crop_pad_axes(&shape, &at.axes(), x.rank())?;
    let mut out_shape = x.shape.clone();
    for (&a, &s) in ax.iter().zip(&shape) {
        out_shape[a] = s as usize;
    }
    let total = checked_numel(&out_shape)?;
    let pads = crop_pad_amounts(&x.shape, &out_shape);
    let st = strides(&x.shape);
    let r = x.rank();
    // Each output element's source element (None: padding, a zero).
    let mut pos = vec![0usize; r];
    let mut src = Vec::with_capacity(total);
    for _ in 0..total {
        let mut flat = Some(0usize);
        for a in 0..r {
            let i = pos[a] as i64 - pads[a];
            flat = flat.filter(|_| (0..x.shape[a] as i64).contains(&i));
            flat = flat.map(|f| f + i as usize * st[a]);
        }
        src.push(flat);
        for a in (0..r).rev() {
            pos[a] += 1;
            if pos[a] < out_shape[a] {
                break;
            }
            pos[a] = 0;
        }
    }
    Ok(vec![match &x.data {
        Data::F(v) => Tensor::from_f64(
            out_shape,
            x.dtype,
            src.iter().map(|s| s.map_or(0.0, |i| v[i])).collect(),
        ),
        Data::I(v) => Tensor::from_i64(
            out_shape,
            x.dtype,
            src.iter().map(|s| s.map_or(0, |i| v[i])).collect(),
        ),
    }])
}

def_op! {
    /// Crop or pad a tensor to a shape around its centre (ONNX CenterCropPad)
    ///
    /// Each dim of `axes` (every dim when `axes` is empty; negative axes count from the end)
    /// becomes the matching entry of `shape`: a larger size pads with zeros, `d / 2` elements in
    /// front and the rest behind; a smaller one crops, `d / 2` elements from the front and the
    /// rest from the back. Other dims are kept. ONNX's `shape` input becomes the attribute.
    pub CenterCropPad = "graph.center_crop_pad" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// the target size of each dim of `axes`
            shape: I64Array,
            /// the dims `shape` sets (every dim when empty)
            axes: I64Array = [],
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_center_crop_pad,
        semantics: sem_center_crop_pad,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Injective,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Pad,
        ],
        es,
    }
}

// ---- AffineGrid ---------------------------------------------------------------

/// The checked output shape of an affine grid of `size` (`[N, C, H, W]` or
/// `[N, C, D, H, W]`) from `theta` of dims `theta` (`N x 2 x 3` or
/// `N x 3 x 4`): `[N, H, W, 2]` or `[N, D, H, W, 3]`.
pub fn affine_grid_dims(theta: Option<&[Dim]>, size: &[i64]) -> Result<Vec<Dim>, String> {
    let r = match size.len() {
        4 => 2,
        5 => 3,
        n => {
            return Err(format!(
                "attribute 'size' must have 4 (N, C, H, W) or 5 (N, C, D, H, W) entries, but has {n}: {size:?}"
            ))
        }
    };
    check_min("size", size, 0)?;
    if let Some(t) = theta {
        if t.len() != 3 {
            return Err(format!(
                "operand 'theta' must have rank 3 (N x {r} x {}), but has rank {}",
                r + 1,
                t.len()
            ));
        }
        check_dim_eq(
            t[0],
            Dim::Static(size[0]),
            "the batch of 'theta' and 'size'",
        )?;
        check_dim_eq(t[1], Dim::Static(r as i64), "dim 1 of 'theta'")?;
        check_dim_eq(t[2], Dim::Static(r as i64 + 1), "dim 2 of 'theta'")?;
    }
    let mut out = vec![Dim::Static(size[0])];
    out.extend(size[2..].iter().map(|&s| Dim::Static(s)));
    out.push(Dim::Static(r as i64));
    Ok(out)
}

/// The normalised coordinate of pixel `i` of a dim of `len` pixels: -1 and
/// 1 are the corner pixels' centres with `align_corners`, else their outer
/// edges (a dim of one pixel: -1 aligned, 0 otherwise).
pub fn grid_coord(i: usize, len: usize, align: bool) -> f64 {
    if align {
        if len <= 1 {
            -1.0
        } else {
            -1.0 + 2.0 * i as f64 / (len - 1) as f64
        }
    } else {
        -1.0 + (2 * i + 1) as f64 / len as f64
    }
}

/// Fill `out` (`N x spatial... x r`) with the grid of batch entries
/// `batches`: each point is `theta[n]` (`r x (r+1)`) times the point's
/// normalised coordinates (x innermost, then y, z) and 1. `spatial` holds
/// the `r` output dims, outermost first; `out` starts at batch
/// `batches.start`.
pub fn affine_grid<T: Real>(
    theta: &[T],
    spatial: &[usize],
    align: bool,
    batches: std::ops::Range<usize>,
    out: &mut [T],
) {
    let r = spatial.len();
    let points: usize = spatial.iter().product();
    let coords: Vec<Vec<f64>> = spatial
        .iter()
        .map(|&len| (0..len).map(|i| grid_coord(i, len, align)).collect())
        .collect();
    let mut p = vec![0f64; r + 1];
    let first = batches.start;
    for n in batches {
        let th = &theta[n * r * (r + 1)..(n + 1) * r * (r + 1)];
        let mut pos = vec![0usize; r];
        for k in 0..points {
            // The point's coordinates, x (the innermost dim) first.
            for d in 0..r {
                p[d] = coords[r - 1 - d][pos[r - 1 - d]];
            }
            p[r] = 1.0;
            let o = ((n - first) * points + k) * r;
            for (row, v) in out[o..o + r].iter_mut().enumerate() {
                let t = &th[row * (r + 1)..(row + 1) * (r + 1)];
                *v = T::of(t.iter().zip(&p).map(|(a, b)| a.get() * b).sum());
            }
            for d in (0..r).rev() {
                pos[d] += 1;
                if pos[d] < spatial[d] {
                    break;
                }
                pos[d] = 0;
            }
        }
    }
}

fn infer_affine_grid(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    let dt = dtype_of(t)?;
    let size = AffineGrid::attrs(cx)
        .size()
        .ok_or("attribute 'size' is missing")?;
    let d = dims(t, "theta")?;
    Ok(vec![Type::tensor(
        &affine_grid_dims(d.as_deref(), &size)?,
        dt,
    )])
}

fn sem_affine_grid(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    let th = t[0];
    let at = AffineGrid::attrs(cx);
    let size = at.size().ok_or("attribute 'size' is missing")?;
    let td: Vec<Dim> = th.shape.iter().map(|&d| Dim::Static(d as i64)).collect();
    let out: Vec<usize> = affine_grid_dims(Some(&td), &size)?
        .iter()
        .map(|d| d.as_static().unwrap_or(0) as usize)
        .collect();
    let total = checked_numel(&out)?;
    let spatial = &out[1..out.len() - 1];
    let mut v = vec![0f64; total];
    affine_grid(
        &th.to_f64(),
        spatial,
        at.align_corners() != 0,
        0..out[0],
        &mut v,
    );
    Ok(vec![Tensor::from_f64(out, th.dtype, v)])
}

def_op! {
    /// The sampling grid of a batch of affine transforms (ONNX AffineGrid)
    ///
    /// `theta` is `N x 2 x 3` (2-D) or `N x 3 x 4` (3-D); `size` is the image size `[N, C, H,
    /// W]` or `[N, C, D, H, W]`. The result is `N x H x W x 2` (or `N x D x H x W x 3`): each
    /// pixel's normalised coordinates `(x, y[, z], 1)` in [-1, 1] multiplied by `theta`, x
    /// first (the grid graph.grid_sample reads). With `align_corners`, -1 and 1 are the
    /// centres of the corner pixels, otherwise their outer edges. ONNX's `size` input becomes
    /// the attribute.
    pub AffineGrid = "graph.affine_grid" {
        operands { theta: FloatTensor },
        results { grid: FloatTensor },
        attrs {
            /// the image size: N, C, H, W (or N, C, D, H, W)
            size: I64Array,
            /// 1: -1 and 1 are the corner pixels' centres; 0: their outer edges
            align_corners: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_affine_grid,
        semantics: sem_affine_grid,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Sample,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&CENTER_CROP_PAD, &AFFINE_GRID];
