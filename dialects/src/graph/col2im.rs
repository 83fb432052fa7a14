//! Col2Im (ONNX Col2Im, opset 18): the inverse of im2col, in any number
//! of spatial dims.
//!
//! ONNX passes `image_shape` and `block_shape` as *inputs*; here they are
//! attributes, so the result shape is inferred from them, and the importer
//! wraps the op in a `graph.specialize` when they are known only at run time.
//! The sliding-block geometry ([`Col2ImGeom`]) and the scatter-add itself
//! ([`col2im`], generic over the element type) are shared with the runtime's
//! native kernel (runtime/src/kernels/col2im.rs).

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{Dim, Type};

/// The checked geometry of a Col2Im: per spatial dim the image size, the
/// block size, dilation, stride, begin pad and the number of block
/// positions (`cols`, whose product is the input's last dim `L`).
#[derive(Clone, Debug, PartialEq)]
pub struct Col2ImGeom {
    pub image: Vec<usize>,
    pub block: Vec<usize>,
    pub dilations: Vec<usize>,
    pub strides: Vec<usize>,
    pub pad_begin: Vec<usize>,
    pub cols: Vec<usize>,
}

/// An attribute with one entry per spatial dim, or `fill` everywhere when empty.
fn per_dim(name: &str, v: Vec<i64>, n: usize, fill: i64, min: i64) -> Result<Vec<usize>, String> {
    let v = if v.is_empty() { vec![fill; n] } else { v };
    let v = check_len(name, v, n, "one per spatial dim")?;
    check_min(name, &v, min)?;
    Ok(v.iter().map(|&x| x as usize).collect())
}

impl Col2ImGeom {
    /// Check the attributes (`dilations`, `strides` empty: all 1; `pads`
    /// empty: all 0, else every begin pad, then every end pad).
    pub fn new(
        image: &[i64],
        block: &[i64],
        dilations: Vec<i64>,
        pads: Vec<i64>,
        strides: Vec<i64>,
    ) -> Result<Col2ImGeom, String> {
        let n = image.len();
        if n == 0 {
            return Err("attribute 'image_shape' must have at least one entry".into());
        }
        let block = per_dim("block_shape", block.to_vec(), n, 1, 1)?;
        let image = per_dim("image_shape", image.to_vec(), n, 1, 1)?;
        let dilations = per_dim("dilations", dilations, n, 1, 1)?;
        let strides = per_dim("strides", strides, n, 1, 1)?;
        let pads = per_dim("pads", pads, 2 * n, 0, 0)?;
        let mut cols = Vec::with_capacity(n);
        for d in 0..n {
            // Wide arithmetic: the attributes are untrusted.
            let extent = dilations[d] as u128 * (block[d] as u128 - 1) + 1;
            let padded = image[d] as u128 + pads[d] as u128 + pads[n + d] as u128;
            if padded < extent {
                return Err(format!(
                    "the block extent {extent} along spatial dim {d} is larger than the padded image ({padded})"
                ));
            }
            if padded > i64::MAX as u128 {
                return Err(format!(
                    "the padded image along spatial dim {d} is too large ({padded})"
                ));
            }
            cols.push(((padded - extent) / strides[d] as u128 + 1) as usize);
        }
        // Every product the op takes must be computable (a plane, a block,
        // the block positions).
        for (what, v) in [
            ("image", &image),
            ("block", &block),
            ("block positions", &cols),
        ] {
            checked_numel(v).map_err(|_| format!("the {what} {v:?} has too many elements"))?;
        }
        Ok(Col2ImGeom {
            image,
            block,
            dilations,
            strides,
            pad_begin: pads[..n].to_vec(),
            cols,
        })
    }

    /// The geometry of op attributes (through any attribute source).
    pub fn of(a: Col2ImAttrView) -> Result<Col2ImGeom, String> {
        let image = a
            .image_shape()
            .ok_or("attribute 'image_shape' is missing")?;
        let block = a
            .block_shape()
            .ok_or("attribute 'block_shape' is missing")?;
        Col2ImGeom::new(&image, &block, a.dilations(), a.pads(), a.strides())
    }

    /// Elements of one block (`prod(block_shape)`).
    pub fn block_len(&self) -> usize {
        self.block.iter().product()
    }

    /// Block positions (`L`).
    pub fn cols_len(&self) -> usize {
        self.cols.iter().product()
    }

    /// Elements of one image plane.
    pub fn image_len(&self) -> usize {
        self.image.iter().product()
    }

    /// The input dims `[N, C * block, L]` for `C` channels, against the
    /// operand's dims `x`; gives the channel count `C`.
    pub fn channels(&self, x: &[Dim]) -> Result<Option<i64>, String> {
        if x.len() != 3 {
            return Err(format!(
                "operand 'input' must have rank 3 (N, C * prod(block_shape), L), but has rank {}",
                x.len()
            ));
        }
        let (k, l) = (self.block_len() as i64, self.cols_len() as i64);
        check_dim_eq(
            x[2],
            Dim::Static(l),
            "dim 2 of 'input' (the number of block positions)",
        )?;
        match x[1].as_static() {
            Some(ck) if ck % k != 0 => Err(format!(
                "dim 1 of 'input' ({ck}) must be a multiple of the block size prod(block_shape) = {k}"
            )),
            Some(ck) => Ok(Some(ck / k)),
            None => Ok(None),
        }
    }
}

/// Add the columns of planes `planes` (a plane is one batch entry's one
/// channel: `block_len x cols_len` input elements) into `out`, which holds
/// those image planes (starting at plane `planes.start`) and is zeroed
/// first. A column element lands at `col * stride - pad_begin + k *
/// dilation` along each dim, and is dropped when that falls in the padding.
pub fn col2im<T: Real>(g: &Col2ImGeom, input: &[T], planes: std::ops::Range<usize>, out: &mut [T]) {
    let n = g.image.len();
    let (kl, ll, il) = (g.block_len(), g.cols_len(), g.image_len());
    let mut img_strides = vec![1usize; n];
    for d in (0..n.saturating_sub(1)).rev() {
        img_strides[d] = img_strides[d + 1] * g.image[d + 1];
    }
    out.iter_mut().for_each(|v| *v = T::default());
    let first = planes.start;
    let mut kb = vec![0usize; n];
    let mut lc = vec![0usize; n];
    for p in planes {
        let src = &input[p * kl * ll..(p + 1) * kl * ll];
        let dst = &mut out[(p - first) * il..(p - first + 1) * il];
        kb.iter_mut().for_each(|v| *v = 0);
        for k in 0..kl {
            lc.iter_mut().for_each(|v| *v = 0);
            for l in 0..ll {
                let mut flat = Some(0usize);
                for d in 0..n {
                    let pos = (lc[d] * g.strides[d] + kb[d] * g.dilations[d])
                        .checked_sub(g.pad_begin[d])
                        .filter(|&x| x < g.image[d]);
                    flat = flat.zip(pos).map(|(f, x)| f + x * img_strides[d]);
                }
                if let Some(f) = flat {
                    dst[f] = dst[f] + src[k * ll + l];
                }
                step(&mut lc, &g.cols);
            }
            step(&mut kb, &g.block);
        }
    }
}

/// Advance a row-major multi-index within `dims`.
fn step(idx: &mut [usize], dims: &[usize]) {
    for d in (0..idx.len()).rev() {
        idx[d] += 1;
        if idx[d] < dims[d] {
            return;
        }
        idx[d] = 0;
    }
}

fn infer_col2im(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    let dt = dtype_of(t)?;
    let g = Col2ImGeom::of(Col2Im::attrs(cx))?;
    let Some(x) = dims(t, "input")? else {
        return Ok(vec![Type::unranked(dt)]);
    };
    let c = g.channels(&x)?;
    let mut out = vec![x[0], c.map_or(Dim::Unknown, Dim::Static)];
    out.extend(g.image.iter().map(|&s| Dim::Static(s as i64)));
    Ok(vec![Type::tensor(&out, dt)])
}

fn sem_col2im(cx: &SemCtx, t: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    arity(t, 1)?;
    let x = t[0];
    let g = Col2ImGeom::of(Col2Im::attrs(cx))?;
    let xd: Vec<Dim> = x.shape.iter().map(|&d| Dim::Static(d as i64)).collect();
    let c = g.channels(&xd)?.unwrap_or(0) as usize;
    let mut shape = vec![x.shape[0], c];
    shape.extend(&g.image);
    let total = checked_numel(&shape)?;
    let mut v = vec![0f64; total];
    col2im(&g, &x.to_f64(), 0..x.shape[0] * c, &mut v);
    Ok(vec![Tensor::from_f64(shape, x.dtype, v)])
}

/// One add per input element.
fn col2im_flops(cx: &CostCtx) -> f64 {
    cx.operand_dims(0).iter().product()
}

def_op! {
    /// Rearrange columns of sliding blocks into an image, adding overlaps (ONNX Col2Im)
    ///
    /// The inverse of im2col in any number of spatial dims: `input` is `N x (C *
    /// prod(block_shape)) x L`, where `L` is the number of positions a block of `block_shape`
    /// (dilated by `dilations`) takes when it slides over the image of `image_shape` padded by
    /// `pads` with `strides`. Each column element is added into the image element it covers;
    /// elements that fall in the padding are dropped. The result is `N x C x image_shape`.
    /// ONNX's `image_shape` and `block_shape` inputs become the attributes.
    pub Col2Im = "graph.col2im" {
        operands { input: FloatTensor },
        results { output: FloatTensor },
        attrs {
            /// the spatial dims of the image
            image_shape: I64Array,
            /// the spatial dims of a block
            block_shape: I64Array,
            /// the block's dilation along each spatial dim (empty: all 1)
            dilations: I64Array = [],
            /// the image's padding: every begin amount, then every end amount (empty: all 0)
            pads: I64Array = [],
            /// the block's stride along each spatial dim (empty: all 1)
            strides: I64Array = [],
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_col2im,
        semantics: sem_col2im,
        interfaces [
            Cost::vector(col2im_flops),
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Index,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&COL2_IM];
