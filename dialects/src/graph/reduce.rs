//! Reductions (ONNX semantics): reduce_sum/mean/max/min/prod over `axes`, and
//! argmax/argmin along one `axis`. Negative axes count from the back.

use crate::graph::elementwise::{NUMERIC, ORDERED};
use crate::interfaces::*;
use ge_ir::body::{Body, OpId};
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef, OpError};
use ge_ir::tensor::{strides, Tensor};
use ge_ir::{DType, Dim, Type};

use super::elementwise::COMPUTE_FORMAT;

/// Normalise `axes` against `rank` (negative axes count from the back);
/// `t` is the operand's type, named in messages.
pub fn normalize_axes(axes: &[i64], rank: usize, t: Type) -> Result<Vec<usize>, String> {
    let r = rank as i64;
    let mut out: Vec<usize> = Vec::with_capacity(axes.len());
    for &a in axes {
        if a < -r || a >= r {
            return Err(format!(
                "axis {a} is out of range for operand 'data' of rank {rank} ('{t}'): expected an axis in [{}, {}]",
                -r,
                r - 1
            ));
        }
        let n = if a < 0 { a + r } else { a } as usize;
        if out.contains(&n) {
            return Err(format!(
                "axis {a} appears twice in 'axes' {axes:?} (operand 'data' is '{t}')"
            ));
        }
        out.push(n);
    }
    Ok(out)
}

fn flag(name: &str, v: i64) -> Result<bool, String> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(format!("attribute '{name}' must be 0 or 1, but got {v}")),
    }
}

/// The attributes of a `reduce_*` op, checked.
struct ReduceAttrs {
    axes: Vec<i64>,
    keepdims: bool,
    noop: bool,
}

fn reduce_attrs(axes: Vec<i64>, keepdims: i64, noop: i64) -> Result<ReduceAttrs, String> {
    Ok(ReduceAttrs {
        axes,
        keepdims: flag("keepdims", keepdims)?,
        noop: flag("noop_with_empty_axes", noop)?,
    })
}

/// The checked attributes of reduction op `$op` from an attribute source.
macro_rules! reduce_attrs {
    ($op:ident, $src:expr) => {{
        let a = $op::attrs($src);
        reduce_attrs(a.axes(), a.keepdims(), a.noop_with_empty_axes())
    }};
}

/// Which axes a reduction reduces (`None`: none at all, the identity).
fn reduced_axes(a: &ReduceAttrs, rank: usize, t: Type) -> Result<Option<Vec<usize>>, String> {
    if a.axes.is_empty() {
        return Ok(if a.noop {
            None
        } else {
            Some((0..rank).collect())
        });
    }
    normalize_axes(&a.axes, rank, t).map(Some)
}

fn infer_reduce(cx: &InferCtx, a: ReduceAttrs) -> Result<Vec<Type>, String> {
    let t = *cx.operand_types.first().ok_or("expects an operand")?;
    let tt = t
        .as_tensor()
        .ok_or_else(|| format!("operand 'data' must be a tensor, but got '{t}'"))?;
    let Some(dims) = tt.dims.as_deref() else {
        return Ok(vec![Type::unranked(tt.dtype)]);
    };
    let Some(axes) = reduced_axes(&a, dims.len(), t)? else {
        return Ok(vec![t]);
    };
    let out: Vec<Dim> = dims
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (axes.contains(&i), a.keepdims) {
            (false, _) => Some(d),
            (true, true) => Some(Dim::Static(1)),
            (true, false) => None,
        })
        .collect();
    Ok(vec![Type::tensor(&out, tt.dtype)])
}

fn verify_reduce(body: &Body, op: OpId, a: Result<ReduceAttrs, String>) -> Result<(), OpError> {
    let d = body.op(op);
    if d.attr("axes").is_some_and(|a| a.as_i64_array().is_none()) {
        return Ok(()); // the attribute-kind check reports it
    }
    let a = a?;
    if let Some(&v) = d.operands().first() {
        let t = body.value_type(v);
        if let Some(rank) = t.as_tensor().and_then(|tt| tt.rank()) {
            reduced_axes(&a, rank, t)?;
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Red {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
}

/// For each element of `shape`, its flat index in the reduced (keepdims) output.
fn output_index(shape: &[usize], axes: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let kept: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(i, &d)| if axes.contains(&i) { 1 } else { d })
        .collect();
    let ostr = strides(&kept);
    let n: usize = shape.iter().product();
    let mut idx = vec![0usize; shape.len()];
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let mut flat = 0;
        for (k, &i) in idx.iter().enumerate() {
            if kept[k] != 1 {
                flat += i * ostr[k];
            }
        }
        out.push(flat);
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    (kept, out)
}

fn reduce(x: &[&Tensor], kind: Red, a: ReduceAttrs) -> Result<Vec<Tensor>, String> {
    let t = *x.first().ok_or("expects an operand")?;
    let Some(axes) = reduced_axes(&a, t.rank(), t.ty())? else {
        return Ok(vec![t.clone()]);
    };
    let (kept, oidx) = output_index(&t.shape, &axes);
    let m: usize = kept.iter().product();
    let count: usize = axes.iter().map(|&i| t.shape[i]).product();
    let out_shape: Vec<usize> = if a.keepdims {
        kept.clone()
    } else {
        t.shape
            .iter()
            .enumerate()
            .filter(|(i, _)| !axes.contains(i))
            .map(|(_, &d)| d)
            .collect()
    };
    let name = match kind {
        Red::Sum => "sum",
        Red::Mean => "mean",
        Red::Max => "max",
        Red::Min => "min",
        Red::Prod => "prod",
    };
    if t.dtype.is_float() {
        let init = match kind {
            Red::Sum | Red::Mean => 0.0,
            Red::Prod => 1.0,
            Red::Max => f64::NEG_INFINITY,
            Red::Min => f64::INFINITY,
        };
        let mut acc = vec![init; m];
        for (i, &o) in oidx.iter().enumerate() {
            let v = t.get_f(i);
            let s = &mut acc[o];
            *s = match kind {
                Red::Sum | Red::Mean => *s + v,
                Red::Prod => *s * v,
                Red::Max if v.is_nan() || s.is_nan() => f64::NAN,
                Red::Max => s.max(v),
                Red::Min if v.is_nan() || s.is_nan() => f64::NAN,
                Red::Min => s.min(v),
            };
        }
        if kind == Red::Mean {
            acc.iter_mut().for_each(|s| *s /= count as f64);
        }
        Ok(vec![Tensor::from_f64(out_shape, t.dtype, acc)])
    } else if t.dtype == DType::I1 {
        // max is or, min is and; over an empty set the identity of each
        // (false, true), as the ONNX reference's numpy reduction gives.
        let init = match kind {
            Red::Max => 0,
            Red::Min => 1,
            _ => return Err(format!("reduce_{name} does not take i1")),
        };
        let mut acc = vec![init; m];
        for (i, &o) in oidx.iter().enumerate() {
            let v = t.get_i(i);
            let s = &mut acc[o];
            *s = if kind == Red::Max { *s | v } else { *s & v };
        }
        Ok(vec![Tensor::from_i64(out_shape, t.dtype, acc)])
    } else {
        if count == 0 && matches!(kind, Red::Max | Red::Min | Red::Mean) {
            return Err(format!(
                "reduce_{name} of integers over an empty axis has no value"
            ));
        }
        let init = match kind {
            Red::Sum | Red::Mean => 0,
            Red::Prod => 1,
            Red::Max => i64::MIN,
            Red::Min => i64::MAX,
        };
        let mut acc = vec![init; m];
        for (i, &o) in oidx.iter().enumerate() {
            let v = t.get_i(i);
            let s = &mut acc[o];
            *s = match kind {
                Red::Sum | Red::Mean => s.wrapping_add(v),
                Red::Prod => s.wrapping_mul(v),
                Red::Max => (*s).max(v),
                Red::Min => (*s).min(v),
            };
        }
        if kind == Red::Mean {
            acc.iter_mut().for_each(|s| *s /= count as i64);
        }
        Ok(vec![Tensor::from_i64(out_shape, t.dtype, acc)])
    }
}

/// Reductions differ only in name, docs, kernel and interfaces; each reads
/// its own attributes.
macro_rules! reduce_op {
    ($ty:ident, $name:literal, $summary:literal, $desc:literal, $types:expr, $red:expr, $prec:expr) => {
        def_op! {
            #[doc = $summary]
            #[doc = ""]
            #[doc = $desc]
            pub $ty = $name {
                operands { data: $types },
                results { reduced: $types },
                attrs {
                    /// axes to reduce (negative counts from the back); empty: all axes
                    #[es(positional)]
                    axes: I64Array = [],
                    /// 1: keep reduced axes as size 1; 0: drop them
                    keepdims: I64 = 1,
                    /// 1: empty `axes` means no reduction (the identity) instead of all axes
                    noop_with_empty_axes: I64 = 0,
                },
                traits [Pure],
                format: COMPUTE_FORMAT,
                verify: |body, op| verify_reduce(body, op, reduce_attrs!($ty, body.op(op))),
                infer: |cx| infer_reduce(cx, reduce_attrs!($ty, cx)?),
                semantics: |cx, x| reduce(x, $red, reduce_attrs!($ty, cx)?),
                interfaces [
                    Cost::ELEMENTWISE,
                    FusionPattern::Reduction,
                    VECTOR_ENGINES,
                    $prec,
                    KernelFamily::Reduce,
                ],
                es,
            }
        }
    };
}

reduce_op!(
    ReduceSum,
    "graph.reduce_sum",
    "Sum over axes",
    "ONNX ReduceSum with `axes` as an attribute: \
     `%y = graph.reduce_sum %x {axes = [1], keepdims = 0 : i64} : (tensor<Bx8xf32>) -> tensor<Bxf32>`. \
     Empty `axes` reduces every axis (unless `noop_with_empty_axes = 1`). Integers wrap.",
    NUMERIC,
    Red::Sum,
    PrecisionClass::Black
);
reduce_op!(
    ReduceMean,
    "graph.reduce_mean",
    "Arithmetic mean over axes",
    "ONNX ReduceMean with `axes` as an attribute; attributes as for `graph.reduce_sum`. \
     Integer means truncate toward zero; a float mean over an empty axis is NaN.",
    NUMERIC,
    Red::Mean,
    PrecisionClass::Black
);
reduce_op!(
    ReduceMax,
    "graph.reduce_max",
    "Maximum over axes",
    "ONNX ReduceMax with `axes` as an attribute; attributes as for `graph.reduce_sum`. \
     NaN propagates; a float maximum over an empty axis is -inf. On `i1` it is logical or \
     (false over an empty axis).",
    ORDERED,
    Red::Max,
    PrecisionClass::Gray
);
reduce_op!(
    ReduceMin,
    "graph.reduce_min",
    "Minimum over axes",
    "ONNX ReduceMin with `axes` as an attribute; attributes as for `graph.reduce_sum`. \
     NaN propagates; a float minimum over an empty axis is +inf. On `i1` it is logical and \
     (true over an empty axis).",
    ORDERED,
    Red::Min,
    PrecisionClass::Gray
);
reduce_op!(
    ReduceProd,
    "graph.reduce_prod",
    "Product over axes",
    "ONNX ReduceProd with `axes` as an attribute; attributes as for `graph.reduce_sum`. \
     Integers wrap.",
    NUMERIC,
    Red::Prod,
    PrecisionClass::Black
);

struct ArgAttrs {
    axis: i64,
    keepdims: bool,
    last: bool,
}

impl ArgAttrs {
    fn of(src: &impl ge_ir::opdef::AttrSource, max: bool) -> Result<ArgAttrs, String> {
        let (axis, keepdims, last) = if max {
            let a = Argmax::attrs(src);
            (a.axis(), a.keepdims(), a.select_last_index())
        } else {
            let a = Argmin::attrs(src);
            (a.axis(), a.keepdims(), a.select_last_index())
        };
        Ok(ArgAttrs {
            axis,
            keepdims: flag("keepdims", keepdims)?,
            last: flag("select_last_index", last)?,
        })
    }
}

fn infer_argmax(cx: &InferCtx) -> Result<Vec<Type>, String> {
    infer_arg(cx, ArgAttrs::of(cx, true)?)
}

fn infer_argmin(cx: &InferCtx) -> Result<Vec<Type>, String> {
    infer_arg(cx, ArgAttrs::of(cx, false)?)
}

fn infer_arg(cx: &InferCtx, a: ArgAttrs) -> Result<Vec<Type>, String> {
    let t = *cx.operand_types.first().ok_or("expects an operand")?;
    let tt = t
        .as_tensor()
        .ok_or_else(|| format!("operand 'data' must be a tensor, but got '{t}'"))?;
    let Some(dims) = tt.dims.as_deref() else {
        return Ok(vec![Type::unranked(DType::I64)]);
    };
    let axis = normalize_axes(&[a.axis], dims.len(), t)?[0];
    let out: Vec<Dim> = dims
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (i == axis, a.keepdims) {
            (false, _) => Some(d),
            (true, true) => Some(Dim::Static(1)),
            (true, false) => None,
        })
        .collect();
    Ok(vec![Type::tensor(&out, DType::I64)])
}

fn verify_argmax(body: &Body, op: OpId) -> Result<(), OpError> {
    verify_arg(body, op, ArgAttrs::of(body.op(op), true)?)
}

fn verify_argmin(body: &Body, op: OpId) -> Result<(), OpError> {
    verify_arg(body, op, ArgAttrs::of(body.op(op), false)?)
}

fn verify_arg(body: &Body, op: OpId, a: ArgAttrs) -> Result<(), OpError> {
    let d = body.op(op);
    if let Some(&v) = d.operands().first() {
        let t = body.value_type(v);
        if let Some(rank) = t.as_tensor().and_then(|tt| tt.rank()) {
            if rank == 0 {
                return Err(format!("operand 'data' must have rank >= 1, but got '{t}'").into());
            }
            normalize_axes(&[a.axis], rank, t)?;
        }
    }
    Ok(())
}

fn arg_reduce(cx: &SemCtx, x: &[&Tensor], max: bool) -> Result<Vec<Tensor>, String> {
    let t = *x.first().ok_or("expects an operand")?;
    let a = ArgAttrs::of(cx, max)?;
    if t.rank() == 0 {
        return Err("operand 'data' must have rank >= 1".into());
    }
    let axis = normalize_axes(&[a.axis], t.rank(), t.ty())?[0];
    let n = t.shape[axis];
    if n == 0 {
        return Err(format!(
            "cannot take arg{} along empty axis {axis}",
            if max { "max" } else { "min" }
        ));
    }
    let outer: usize = t.shape[..axis].iter().product();
    let inner: usize = t.shape[axis + 1..].iter().product();
    let mut out = Vec::with_capacity(outer * inner);
    // numpy: the first NaN wins; ties go to the first (or last) index.
    let better = |v: f64, best: f64| -> bool {
        if best.is_nan() {
            false
        } else if v.is_nan() {
            true
        } else if max {
            v > best || (a.last && v == best)
        } else {
            v < best || (a.last && v == best)
        }
    };
    let better_i = |v: i64, best: i64| -> bool {
        if max {
            v > best || (a.last && v == best)
        } else {
            v < best || (a.last && v == best)
        }
    };
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let mut best = 0usize;
            for k in 1..n {
                let b = if t.dtype.is_float() {
                    better(t.get_f(at(k)), t.get_f(at(best)))
                } else {
                    better_i(t.get_i(at(k)), t.get_i(at(best)))
                };
                if b {
                    best = k;
                }
            }
            out.push(best as i64);
        }
    }
    let shape: Vec<usize> = t
        .shape
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (i == axis, a.keepdims) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    Ok(vec![Tensor::from_i64(shape, DType::I64, out)])
}

fn sem_argmax(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    arg_reduce(cx, x, true)
}
fn sem_argmin(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    arg_reduce(cx, x, false)
}

/// Argmax and argmin differ only in name, docs and hooks.
macro_rules! arg_op {
    ($ty:ident, $name:literal, $summary:literal, $desc:literal, $verify:expr, $infer:expr, $sem:expr) => {
        def_op! {
            #[doc = $summary]
            #[doc = ""]
            #[doc = $desc]
            pub $ty = $name {
                operands { data: NUMERIC },
                results { indices: TensorOf(&[DType::I64]) },
                attrs {
                    /// the axis to search (negative counts from the back)
                    axis: I64 = 0,
                    /// 1: keep the axis as size 1; 0: drop it
                    keepdims: I64 = 1,
                    /// 1: on ties pick the last index instead of the first
                    select_last_index: I64 = 0,
                },
                traits [Pure],
                format: COMPUTE_FORMAT,
                verify: $verify,
                infer: $infer,
                semantics: $sem,
                interfaces [
                    Cost::ELEMENTWISE,
                    FusionPattern::Reduction,
                    VECTOR_ENGINES,
                    PrecisionClass::Gray,
                    KernelFamily::ArgReduce,
                ],
                es,
            }
        }
    };
}

arg_op!(
    Argmax,
    "graph.argmax",
    "Index of the maximum along an axis (i64 result)",
    "ONNX ArgMax: `%i = graph.argmax %x {axis = 1 : i64, keepdims = 0 : i64} : \
     (tensor<Bx10xf32>) -> tensor<Bxi64>`. Ties pick the first index, or the last with \
     `select_last_index = 1`; a NaN counts as the maximum (numpy).",
    verify_argmax,
    infer_argmax,
    sem_argmax
);
arg_op!(
    Argmin,
    "graph.argmin",
    "Index of the minimum along an axis (i64 result)",
    "ONNX ArgMin; attributes as for `graph.argmax`. A NaN counts as the minimum (numpy).",
    verify_argmin,
    infer_argmin,
    sem_argmin
);

pub static OPS: &[&OpDef] = &[
    &REDUCE_SUM,
    &REDUCE_MEAN,
    &REDUCE_MAX,
    &REDUCE_MIN,
    &REDUCE_PROD,
    &ARGMAX,
    &ARGMIN,
];
