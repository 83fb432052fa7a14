//! Cumulative ops along an axis (ONNX CumProd and CumSum): `graph.cumprod`,
//! `graph.cumsum`.
//!
//! The scan ([`scan_lines`]) is generic over the element and the operation
//! and public: the semantics run it on f64 or i64 values, the runtime's
//! native kernels (runtime/src/kernels/cumulative.rs) on f32, f64 or i64.

use super::elementwise::{COMPUTE_FORMAT, NUMERIC};
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Type};

/// The running product (or sum: `mul` is the operation, `one` its identity)
/// along the middle axis of `x` viewed as `outer x n x inner`, into `out`:
/// inclusive (`y[i] = x[0]·…·x[i]`) or `exclusive` (starting from `one`),
/// forwards or in `reverse`.
#[allow(clippy::too_many_arguments)]
pub fn scan_lines<T: Copy>(
    x: &[T],
    (outer, n, inner): (usize, usize, usize),
    exclusive: bool,
    reverse: bool,
    one: T,
    mul: impl Fn(T, T) -> T,
    out: &mut [T],
) {
    for o in 0..outer {
        for k in 0..inner {
            let mut acc = one;
            for s in 0..n {
                let i = if reverse { n - 1 - s } else { s };
                let at = (o * n + i) * inner + k;
                if exclusive {
                    out[at] = acc;
                    acc = mul(acc, x[at]);
                } else {
                    acc = mul(acc, x[at]);
                    out[at] = acc;
                }
            }
        }
    }
}

/// The op's axis, exclusive and reverse flags for an input of `rank`.
pub fn cumprod_params(
    src: &impl ge_ir::opdef::AttrSource,
    rank: usize,
) -> Result<(usize, bool, bool), String> {
    let a = Cumprod::attrs(src);
    let axis = norm_axis(a.axis(), rank.max(1), "axis")?;
    Ok((axis, a.exclusive() != 0, a.reverse() != 0))
}

fn infer_cumprod(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    if let Some(d) = dims(t, "input")? {
        cumprod_params(cx, d.len())?;
    }
    Ok(vec![t])
}

fn sem_cumprod(cx: &SemCtx, t: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    arity(t, 1)?;
    let (axis, exclusive, reverse) = cumprod_params(cx, t[0].rank())?;
    let dt = result_dtype(cx, 0, t[0].dtype);
    let ops: ScanOps = (|a, b| a * b, i64::wrapping_mul);
    Ok(vec![scan_tensor(
        t[0],
        axis,
        exclusive,
        reverse,
        dt,
        (1.0, 1),
        ops,
    )])
}

/// A scan's operation on floats (in f64) and on integers (wrapping i64).
type ScanOps = (fn(f64, f64) -> f64, fn(i64, i64) -> i64);

/// The scan of `x` along `axis` in f64 (floats) or wrapping i64 (integers):
/// `ids` the identities and `ops` the operations of each.
fn scan_tensor(
    x: &Tensor,
    axis: usize,
    exclusive: bool,
    reverse: bool,
    dt: ge_ir::DType,
    ids: (f64, i64),
    ops: ScanOps,
) -> Tensor {
    let lines = split_at_axis(&x.shape, axis.min(x.rank().saturating_sub(1)));
    if x.dtype.is_float() {
        let v = x.to_f64();
        let mut out = vec![0.0; v.len()];
        scan_lines(&v, lines, exclusive, reverse, ids.0, ops.0, &mut out);
        Tensor::from_f64(x.shape.clone(), dt, out)
    } else {
        let v = x.to_i64();
        let mut out = vec![0; v.len()];
        scan_lines(&v, lines, exclusive, reverse, ids.1, ops.1, &mut out);
        Tensor::from_i64(x.shape.clone(), dt, out)
    }
}

def_op! {
    /// Cumulative product along an axis (ONNX CumProd)
    ///
    /// `y[..., i, ...] = x[..., 0, ...] · … · x[..., i, ...]` along `axis`; with `exclusive`
    /// the product stops before `i` (1 for the first); with `reverse` it runs from the end.
    /// Integer products wrap to the type. ONNX's `axis` operand is folded into the attribute
    /// by importers.
    pub Cumprod = "graph.cumprod" {
        operands { input: NUMERIC },
        results { output: NUMERIC },
        attrs {
            /// the axis (negative counts from the end)
            axis: I64 = 0,
            /// 1: the product of the elements before each one
            exclusive: I64 = 0,
            /// 1: from the last element backwards
            reverse: I64 = 0,
        },
        traits [Pure, SameOperandsAndResultType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_cumprod,
        semantics: sem_cumprod,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Scan,
        ],
        es,
    }
}

// ---- cumsum ----------------------------------------------------------------

/// Integer types of `graph.cumsum`'s run-time axis (ONNX: int32 or int64).
const AXIS_TYPES: &[DType] = &[DType::I32, DType::I64];

/// The axis of a `graph.cumsum` whose `axis_value` operand has type `t`:
/// one element of an integer type, known only at run time.
fn check_axis_value(t: Type) -> Result<(), String> {
    let d = dims(t, "axis_value")?.ok_or("operand 'axis_value' must be ranked")?;
    if d.len() > 1 || d.iter().any(|x| x.as_static() != Some(1)) {
        return Err(format!(
            "operand 'axis_value' must hold one element (rank 0, or 1 of length 1), but got '{t}'"
        ));
    }
    Ok(())
}

/// The axis a cumsum scans, normalised: the `axis_value` tensor's element
/// when there is one (`value`), else the attribute.
pub fn cumsum_axis(
    src: &impl ge_ir::opdef::AttrSource,
    value: Option<i64>,
    rank: usize,
) -> Result<usize, String> {
    let a = Cumsum::attrs(src);
    match value {
        Some(v) => norm_axis(v, rank.max(1), "the run-time axis"),
        None => norm_axis(a.axis(), rank.max(1), "axis"),
    }
}

fn infer_cumsum(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    if let Some(&v) = cx.operand_types.get(1) {
        check_axis_value(v)?;
    } else if let Some(d) = dims(t, "input")? {
        cumsum_axis(cx, None, d.len())?;
    }
    Ok(vec![t])
}

fn sem_cumsum(cx: &SemCtx, t: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    if t.is_empty() || t.len() > 2 {
        return Err(format!("expects 1 or 2 operands, got {}", t.len()));
    }
    let value = match t.get(1) {
        Some(a) => match a.to_i64()[..] {
            [v] => Some(v),
            ref v => return Err(format!("the axis must hold one element, got {}", v.len())),
        },
        None => None,
    };
    let x = t[0];
    let axis = cumsum_axis(cx, value, x.rank())?;
    let a = Cumsum::attrs(cx);
    let dt = result_dtype(cx, 0, x.dtype);
    let ops: ScanOps = (|a, b| a + b, i64::wrapping_add);
    let (excl, rev) = (a.exclusive() != 0, a.reverse() != 0);
    Ok(vec![scan_tensor(x, axis, excl, rev, dt, (0.0, 0), ops)])
}

def_op! {
    /// Cumulative sum along an axis (ONNX CumSum)
    ///
    /// `y[..., i, ...] = x[..., 0, ...] + … + x[..., i, ...]` along the axis; with `exclusive`
    /// the sum stops before `i` (0 for the first); with `reverse` it runs from the end.
    /// Integer sums wrap to the type. The axis is the attribute `axis`, or, when the optional
    /// operand `axis_value` is given (ONNX's `axis` input known only at run time: one int32
    /// or int64 element), that element, read when the op runs; out of range
    /// (`[-rank, rank-1]`) it is a run-time error. The result's shape is the input's either way.
    pub Cumsum = "graph.cumsum" {
        operands { input: NUMERIC, axis_value: Option<TensorOf(AXIS_TYPES)> },
        results { output: NUMERIC },
        attrs {
            /// the axis when there is no `axis_value` (negative counts from the end)
            axis: I64 = 0,
            /// 1: the sum of the elements before each one
            exclusive: I64 = 0,
            /// 1: from the last element backwards
            reverse: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_cumsum,
        semantics: sem_cumsum,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Scan,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&CUMPROD, &CUMSUM];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumprod_by_hand() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let mut out = [0.0; 4];
        scan_lines(&x, (1, 4, 1), false, false, 1.0, |a, b| a * b, &mut out);
        assert_eq!(out, [1.0, 2.0, 6.0, 24.0]);
        scan_lines(&x, (1, 4, 1), true, true, 1.0, |a, b| a * b, &mut out);
        assert_eq!(out, [24.0, 12.0, 4.0, 1.0]);
        // Two columns of a 2x2: along axis 0.
        scan_lines(&x, (1, 2, 2), false, false, 1.0, |a, b| a * b, &mut out);
        assert_eq!(out, [1.0, 2.0, 3.0, 8.0]);
    }
}
