//! `graph.range` (ONNX Range with start, limit and delta read at run time):
//! `start, start + delta, …` below `limit`. The importer folds constant
//! ranges and gives ranges over symbolic dims to `data.iota`; this op is
//! what a `graph.specialize` builds when the bounds are tensor values
//! (docs/architecture.md "Execution modes"), so its length
//! `ceil((limit - start) / delta)` (at least 0) is a value symbol.

use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Type};

/// The longest range: far beyond any memory budget, so that a length
/// computed from hostile bounds stays an exact integer.
pub const MAX_RANGE_LEN: i64 = 1 << 48;

/// The element count of `start, start + delta, …` below `limit` (ONNX:
/// `max(ceil((limit - start) / delta), 0)`).
pub fn range_len(start: f64, limit: f64, delta: f64) -> Result<i64, String> {
    if delta == 0.0 {
        return Err("'delta' must not be zero".into());
    }
    let n = ((limit - start) / delta).ceil().max(0.0);
    if !n.is_finite() || n > MAX_RANGE_LEN as f64 {
        return Err(format!(
            "a range from {start} to {limit} by {delta} has more than {MAX_RANGE_LEN} elements"
        ));
    }
    Ok(n as i64)
}

fn range_dtype(t: Option<Type>) -> Result<DType, String> {
    let t = t.ok_or("requires attribute 'to' (the element type)")?;
    match t.data() {
        ge_ir::TypeData::Scalar(d) if d.is_float() || d.is_int() => Ok(*d),
        _ => Err(format!(
            "attribute 'to' must be a numeric element type such as f32 or i64, but got '{t}'"
        )),
    }
}

fn infer_range(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = Range::attrs(cx);
    let dt = range_dtype(a.to())?;
    let limit = a.limit().ok_or("requires attribute 'limit'")?;
    let n = range_len(a.start(), limit, a.delta())?;
    Ok(vec![Type::tensor_static(&[n], dt)])
}

/// The range's elements: integers computed as integers (exact beyond 2^53
/// steps), floats as `start + i * delta`.
pub fn range_values(start: f64, limit: f64, delta: f64, dt: DType) -> Result<Tensor, String> {
    let n = range_len(start, limit, delta)?;
    let len = usize::try_from(n).map_err(|_| format!("{n} elements do not fit"))?;
    Ok(if dt.is_float() {
        let v = (0..n).map(|i| start + i as f64 * delta).collect();
        Tensor::from_f64(vec![len], dt, v)
    } else {
        let (s, d) = (start as i64, delta as i64);
        let v = (0..n).map(|i| s.wrapping_add(i.wrapping_mul(d))).collect();
        Tensor::from_i64(vec![len], dt, v)
    })
}

fn sem_range(cx: &SemCtx, t: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    arity(t, 0)?;
    let a = Range::attrs(cx);
    let dt = range_dtype(a.to())?;
    let limit = a.limit().ok_or("requires attribute 'limit'")?;
    Ok(vec![range_values(a.start(), limit, a.delta(), dt)?])
}

def_op! {
    /// `start, start + delta, …` below `limit` (ONNX Range read at run time)
    ///
    /// `graph.range {start = 0.0, limit = 5.0, delta = 2.0, to = i32} : () -> tensor<3xi32>`:
    /// `max(ceil((limit - start) / delta), 0)` elements; `delta` must not be zero. The
    /// importer folds constant ranges; a `graph.specialize` of this op reads the bounds from
    /// tensors at run time, its length being a value symbol.
    pub Range = "graph.range" {
        results { output: AnyTensor },
        attrs {
            /// the first element
            start: F64 = 0.0,
            /// the bound the elements stay below (above, for a negative delta)
            limit: F64,
            /// the step; not zero
            delta: F64 = 1.0,
            /// the element type
            to: Type,
        },
        traits [Pure],
        format: "attr-dict `:` functional-type(operands, results)",
        verify: verify_by_infer,
        infer: infer_range,
        semantics: sem_range,
        interfaces [Cost::FREE, CPU_ENGINES, PrecisionClass::Gray, KernelFamily::Shape],
        es(none = "an importer op for ONNX Range over values known at run time"),
    }
}

pub static OPS: &[&OpDef] = &[&RANGE];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_follow_onnx() {
        assert_eq!(range_len(0.0, 5.0, 2.0), Ok(3));
        assert_eq!(range_len(10.0, 4.0, -3.0), Ok(2));
        assert_eq!(range_len(5.0, 0.0, 1.0), Ok(0));
        assert!(range_len(0.0, 1.0, 0.0).is_err());
        assert!(range_len(0.0, f64::INFINITY, 1.0).is_err());
        assert!(range_len(0.0, 1e300, 1.0).is_err());
        let t = range_values(10.0, 4.0, -3.0, DType::I32).unwrap();
        assert_eq!(t.to_i64(), vec![10, 7]);
    }
}
