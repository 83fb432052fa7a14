//! Linear quantisation (ONNX QuantizeLinear / DequantizeLinear, opsets 10-25):
//! a scale (and zero point) per tensor, per slice along an axis, or per block
//! of `block_size` elements along it; the quantised type is any integer type
//! up to 16 bits or one of the small floats. The element rules
//! ([`quantize_value`], [`dequantize_value`]) and the scale layout
//! ([`scale_indices`]) are public: the runtime's native kernels
//! (runtime/src/kernels/quant.rs) use these very functions.

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::minifloat::MiniFloat;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{round_f, Tensor};
use ge_ir::{DType, Type};

type SemResult = Result<Vec<Tensor>, String>;

/// For each element of a tensor of `shape`, the flat index of its scale (and
/// zero point) in a tensor of `scale_shape`: one value for the whole tensor,
/// a 1-D tensor along `axis`, or (with `block_size` > 0) a tensor of the same
/// rank whose `axis` dim counts blocks of `block_size` elements.
pub fn scale_indices(
    shape: &[usize],
    scale_shape: &[usize],
    axis: i64,
    block_size: i64,
) -> Result<Vec<usize>, String> {
    let n: usize = shape.iter().product();
    let Some((ax, block)) = scale_layout(shape, scale_shape, axis, block_size)? else {
        return Ok(vec![0; n]);
    };
    let (_, dim, inner) = split_at_axis(shape, ax);
    let b = block.unwrap_or(1);
    let sdim = dim.div_ceil(b);
    Ok((0..n)
        .map(|i| {
            let (outer, j, k) = (i / (dim * inner), (i / inner) % dim, i % inner);
            match block {
                None => j,
                Some(_) => (outer * sdim + j / b) * inner + k,
            }
        })
        .collect())
}

/// Check the scale's shape: `None` for one scale, else the axis and the
/// block size (`None`: per axis).
fn scale_layout(
    shape: &[usize],
    scale_shape: &[usize],
    axis: i64,
    block_size: i64,
) -> Result<Option<(usize, Option<usize>)>, String> {
    let sn: usize = scale_shape.iter().product();
    if sn == 1 && (block_size <= 0 || scale_shape.len() <= 1) {
        return Ok(None);
    }
    let ax = norm_axis(axis, shape.len(), "axis")?;
    let dim = shape[ax];
    if block_size <= 0 {
        if scale_shape != [dim] {
            return Err(format!(
                "a per-axis scale must have shape [{dim}] (dim {ax} of {shape:?}), but has {scale_shape:?}"
            ));
        }
        return Ok(Some((ax, None)));
    }
    let b = block_size as usize;
    let mut want = shape.to_vec();
    want[ax] = dim.div_ceil(b);
    if scale_shape != want {
        return Err(format!(
            "a blocked scale (block_size {b} on axis {ax} of {shape:?}) must have shape {want:?}, but has {scale_shape:?}"
        ));
    }
    Ok(Some((ax, Some(b))))
}

/// The scale's shape checked when both shapes are static.
fn check_scale(cx: &InferCtx, axis: i64, block_size: i64) -> Result<(), String> {
    let st = |t: Type| {
        t.as_tensor()
            .and_then(|t| t.static_shape())
            .map(|s| s.into_iter().map(|d| d as usize).collect::<Vec<_>>())
    };
    if let (Some(x), Some(s)) = (st(cx.operand_types[0]), st(cx.operand_types[1])) {
        scale_layout(&x, &s, axis, block_size)?;
    }
    Ok(())
}

/// The value range of an integer type that can be quantised to.
fn int_range(dt: DType) -> Result<(f64, f64), String> {
    if let Some((lo, hi)) = ge_ir::minifloat::small_int_range(dt) {
        return Ok((lo as f64, hi as f64));
    }
    Ok(match dt {
        DType::I8 => (-128.0, 127.0),
        DType::U8 => (0.0, 255.0),
        DType::I16 => (-32768.0, 32767.0),
        DType::U16 => (0.0, 65535.0),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        DType::U32 => (0.0, u32::MAX as f64),
        _ => return Err(format!("cannot quantize to {dt}")),
    })
}

/// `x` quantised with `scale` and zero point `zp` to `to` (ONNX reference):
/// `x / scale` in `x`'s type; for integers rounded half to even, shifted by
/// `zp` and clamped to the type; float8 clipped to its largest value when
/// `saturate` (zero point unused); float4 shifted by `zp` (it saturates).
pub fn quantize_value(x: f64, scale: f64, zp: f64, in_dt: DType, to: DType, saturate: bool) -> f64 {
    let v = round_f(in_dt, x / scale);
    match MiniFloat::of(to) {
        Some(f) if to == DType::F4E2M1FN => f.round_value(v + zp),
        Some(f) if saturate && !v.is_nan() => f.round_value(v.clamp(-f.max(), f.max())),
        Some(f) => f.round_value(v),
        None => {
            let (lo, hi) = int_range(to).unwrap_or((0.0, 255.0));
            (v.round_ties_even() + zp).clamp(lo, hi)
        }
    }
}

/// `x` of type `from` dequantised: `(x - zp) * scale` in f32 (the zero point
/// of a small float is unused), rounded to `to`.
pub fn dequantize_value(x: f64, scale: f64, zp: f64, from: DType, to: DType) -> f64 {
    let dx = if from.is_small_float() { x } else { x - zp };
    round_f(to, round_f(DType::F32, dx * scale))
}

/// The target element type attribute `to`.
fn target(t: Option<Type>) -> Result<DType, String> {
    match t.map(|t| t.data()) {
        Some(ge_ir::TypeData::Scalar(d)) => Ok(*d),
        _ => Err("requires attribute 'to' (the result element type)".into()),
    }
}

fn infer_quantize(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = QuantizeLinear::attrs(cx);
    let to = target(a.to())?;
    check_scale(cx, a.axis(), a.block_size())?;
    int_range(to).or_else(|e| {
        if to.is_small_float() {
            Ok((0.0, 0.0))
        } else {
            Err(e)
        }
    })?;
    Ok(vec![cx.operand_types[0].with_dtype(to)])
}

fn infer_dequantize(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = DequantizeLinear::attrs(cx);
    let to = target(a.to())?;
    check_scale(cx, a.axis(), a.block_size())?;
    if !to.is_float() || to.is_small_float() {
        return Err(format!("cannot dequantize to {to} (f32, f16 or bf16)"));
    }
    Ok(vec![cx.operand_types[0].with_dtype(to)])
}

/// The input, the scales, each element's scale index, the zero points.
type Operands<'a> = (&'a Tensor, Vec<f64>, Vec<usize>, Vec<f64>);

/// Operands, scale index per element, and the zero point per scale index.
fn operands<'a>(t: &[&'a Tensor], axis: i64, block_size: i64) -> Result<Operands<'a>, String> {
    let (x, s) = match t {
        [x, s] | [x, s, _] => (*x, *s),
        _ => return Err(format!("expects 2 or 3 operands, got {}", t.len())),
    };
    let idx = scale_indices(&x.shape, &s.shape, axis, block_size)?;
    let zp = match t.get(2) {
        Some(z) if z.len() != s.len() => {
            return Err(format!(
                "the zero point has {} values, the scale {}",
                z.len(),
                s.len()
            ))
        }
        Some(z) => z.to_f64(),
        None => vec![0.0; s.len()],
    };
    Ok((x, s.to_f64(), idx, zp))
}

fn sem_quantize(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    let a = QuantizeLinear::attrs(cx);
    let to = target(a.to())?;
    let (x, s, idx, zp) = operands(t, a.axis(), a.block_size())?;
    let xs = x.to_f64();
    let v = xs
        .iter()
        .zip(&idx)
        .map(|(&v, &k)| quantize_value(v, s[k], zp[k], x.dtype, to, a.saturate() != 0))
        .collect();
    Ok(vec![Tensor::from_f64(x.shape.clone(), to, v)])
}

fn sem_dequantize(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    let a = DequantizeLinear::attrs(cx);
    let to = target(a.to())?;
    let (x, s, idx, zp) = operands(t, a.axis(), a.block_size())?;
    let xs = x.to_f64();
    let v = xs
        .iter()
        .zip(&idx)
        .map(|(&v, &k)| dequantize_value(v, s[k], zp[k], x.dtype, to))
        .collect();
    Ok(vec![Tensor::from_f64(x.shape.clone(), to, v)])
}

def_op! {
    /// Quantize a float tensor (ONNX QuantizeLinear)
    ///
    /// `y = saturate(round(x / scale) + zero_point)` with the result type `to`: an integer
    /// type up to 16 bits (also i4/ui4/i2/ui2: rounded half to even, clamped to the type),
    /// a float8 type (`x / scale` converted, clipped to the largest value when `saturate`;
    /// the zero point is unused) or f4E2M1FN (`x / scale + zero_point`, saturating). The
    /// scale and zero point are one value, a 1-D tensor along `axis`, or (`block_size` > 0)
    /// one value per block of `block_size` elements along `axis`.
    pub QuantizeLinear = "graph.quantize_linear" {
        operands { input: FloatTensor, scale: FloatTensor, zero_point: Option<AnyTensor> },
        results { output: AnyTensor },
        attrs {
            /// the quantised element type
            to: Type,
            /// the axis of a per-axis or blocked scale
            axis: I64 = 1,
            /// elements per block along `axis` (0: not blocked)
            block_size: I64 = 0,
            /// 1: float8 results clip to their largest value
            saturate: I64 = 1,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_quantize,
        semantics: sem_quantize,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Quantize,
        ],
        es,
    }
}

def_op! {
    /// Dequantize a tensor (ONNX DequantizeLinear)
    ///
    /// `y = (x - zero_point) * scale`, computed in f32 and converted to `to` (the scale's
    /// type unless ONNX's `output_dtype` says otherwise). A float8 or f4E2M1FN input has no
    /// zero point. Scale and zero point as for `graph.quantize_linear`.
    pub DequantizeLinear = "graph.dequantize_linear" {
        operands { input: AnyTensor, scale: FloatTensor, zero_point: Option<AnyTensor> },
        results { output: FloatTensor },
        attrs {
            /// the result element type
            to: Type,
            /// the axis of a per-axis or blocked scale
            axis: I64 = 1,
            /// elements per block along `axis` (0: not blocked)
            block_size: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_dequantize,
        semantics: sem_dequantize,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Quantize,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&QUANTIZE_LINEAR, &DEQUANTIZE_LINEAR];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_scale_indices() {
        // [2, 5] blocked by 2 along axis 1: scale [2, 3].
        let idx = scale_indices(&[2, 5], &[2, 3], 1, 2).unwrap();
        assert_eq!(idx, vec![0, 0, 1, 1, 2, 3, 3, 4, 4, 5]);
        assert!(scale_indices(&[2, 5], &[2, 2], 1, 2).is_err());
        assert_eq!(
            scale_indices(&[2, 3], &[3], 1, 0).unwrap(),
            vec![0, 1, 2, 0, 1, 2]
        );
    }

    #[test]
    fn quantize_rounds_half_to_even_and_clamps() {
        assert_eq!(
            quantize_value(2.5, 1.0, 0.0, DType::F32, DType::U8, true),
            2.0
        );
        assert_eq!(
            quantize_value(-3.0, 1.0, 1.0, DType::F32, DType::U8, true),
            0.0
        );
        assert_eq!(
            quantize_value(100.0, 1.0, 0.0, DType::F32, DType::I4, true),
            7.0
        );
        assert_eq!(
            quantize_value(1e6, 1.0, 0.0, DType::F32, DType::F8E4M3FN, true),
            448.0
        );
        assert!(quantize_value(1e6, 1.0, 0.0, DType::F32, DType::F8E4M3FN, false).is_nan());
    }
}
