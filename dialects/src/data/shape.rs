//! Ops that change a tensor's shape but not its element order: reshape,
//! squeeze, unsqueeze, identity.

use super::{fmt_dims, norm_axis, operand, ranked_dims, DATA_FORMAT};
use crate::interfaces::*;
use ge_ir::attributes::Attribute;
use ge_ir::body::{Body, OpId};
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{FoldResult, InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{Dim, Type};

// ---- reshape ---------------------------------------------------------------

/// ONNX Reshape over symbolic dims: `0` copies the input dim (unless
/// `allowzero`), `-1` is inferred from the element count. A `-1` next to
/// symbolic dims is solved when the symbols cancel (e.g. `[B, 3, 4]` with
/// `[0, -1]` gives `[B, 12]`), else it is `?`.
pub fn reshape_dims(input: &[Dim], shape: &[i64], allowzero: bool) -> Result<Vec<Dim>, String> {
    check_reshape_attr(input.len(), shape, allowzero)?;
    let mut in_k: i64 = 1;
    let mut rest: Vec<Option<Dim>> = vec![];
    for &d in input {
        match d {
            Dim::Static(n) => in_k = in_k.saturating_mul(n),
            d => rest.push(Some(d)),
        }
    }
    // Position in `rest` of each non-static input dim.
    let mut rest_pos = vec![usize::MAX; input.len()];
    let mut j = 0;
    for (i, d) in input.iter().enumerate() {
        if !d.is_static() {
            rest_pos[i] = j;
            j += 1;
        }
    }
    let mut out = Vec::with_capacity(shape.len());
    let mut out_k: i64 = 1;
    let mut infer_at = None;
    for (i, &s) in shape.iter().enumerate() {
        match s {
            -1 => {
                infer_at = Some(i);
                out.push(Dim::Unknown);
            }
            0 if !allowzero => {
                let d = input[i];
                match d {
                    Dim::Static(n) => out_k = out_k.saturating_mul(n),
                    _ => rest[rest_pos[i]] = None,
                }
                out.push(d);
            }
            n => {
                out_k = out_k.saturating_mul(n);
                out.push(Dim::Static(n));
            }
        }
    }
    let rest: Vec<Dim> = rest.into_iter().flatten().collect();
    let static_in = rest.is_empty();
    match infer_at {
        Some(i) => {
            if out_k == 0 {
                if static_in && in_k == 0 {
                    return Err(
                        "cannot infer the -1 dim of a reshape of an empty tensor".to_string()
                    );
                }
                return Err(format!(
                    "cannot reshape {} into {shape:?}: the other dims multiply to 0",
                    fmt_dims(input)
                ));
            }
            out[i] = if !static_in {
                ge_ir::dim::solve_reshape_dim(input, &out, i)
            } else if in_k % out_k == 0 {
                Dim::Static(in_k / out_k)
            } else if static_in {
                return Err(format!(
                    "cannot reshape {} ({in_k} elements) into {shape:?}: {in_k} is not a multiple of {out_k}",
                    fmt_dims(input)
                ));
            } else {
                Dim::Unknown
            };
        }
        None => {
            if static_in && in_k != out_k {
                return Err(format!(
                    "cannot reshape {} ({in_k} elements) into {shape:?} ({out_k} elements)",
                    fmt_dims(input)
                ));
            }
        }
    }
    Ok(out)
}

fn check_reshape_attr(rank: usize, shape: &[i64], allowzero: bool) -> Result<(), String> {
    let mut minus = 0;
    for (i, &s) in shape.iter().enumerate() {
        if s < -1 {
            return Err(format!(
                "attribute 'shape' has invalid entry {s} at #{i} (expected >= -1)"
            ));
        }
        if s == -1 {
            minus += 1;
        }
        if s == 0 && !allowzero && i >= rank {
            return Err(format!(
                "attribute 'shape' entry #{i} is 0 (copy the input dim) but the input has rank {rank}"
            ));
        }
    }
    if minus > 1 {
        return Err("attribute 'shape' may contain at most one -1".into());
    }
    if allowzero && minus == 1 && shape.contains(&0) {
        return Err("attribute 'shape' cannot hold both 0 and -1 when allowzero = 1".into());
    }
    Ok(())
}

/// The symbolic target of a reshape: its element count must not contradict
/// the input's (equal as polynomials, or at least not provably different).
fn sym_reshape_dims(input: &[Dim], text: &str) -> Result<Vec<Dim>, String> {
    let out = ge_ir::dim::parse_dims(text).map_err(|e| format!("attribute 'sym_shape': {e}"))?;
    let count = ge_ir::dim::product;
    if let Some(diff) = count(input).sub(count(&out)).expr() {
        // Contradictory when the counts differ for every positive size.
        let (lo, hi) = diff.range(&|_| Some((1, ge_ir::dim::SYM_MAX)));
        if lo > 0 || hi < 0 {
            return Err(format!(
                "cannot reshape {} into {}: the element counts differ",
                fmt_dims(input),
                fmt_dims(&out)
            ));
        }
    }
    Ok(out)
}

fn infer_reshape(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = operand(cx, 0)?;
    let dims = ranked_dims(t, "operand 'input'")?;
    let a = Reshape::attrs(cx);
    if let Some(text) = a.sym_shape() {
        let out = sym_reshape_dims(&dims, text)?;
        return Ok(vec![Type::tensor(&out, super::dtype_of(t)?)]);
    }
    let shape = a
        .shape()
        .ok_or("requires attribute 'shape' (array of integers)")?;
    let allowzero = a.allowzero() != 0;
    let out = reshape_dims(&dims, &shape, allowzero)?;
    Ok(vec![Type::tensor(&out, super::dtype_of(t)?)])
}

fn sem_reshape(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let a = Reshape::attrs(cx);
    if a.sym_shape().is_some() {
        let out = cx
            .result_shape(0)
            .ok_or("the symbolic target of the reshape is not known at run time")?;
        return Ok(vec![x[0].clone().reshape(out)?]);
    }
    let shape = a.shape().ok_or("missing 'shape'")?;
    let allowzero = a.allowzero() != 0;
    let dims: Vec<Dim> = x[0].shape.iter().map(|&d| Dim::Static(d as i64)).collect();
    let out = reshape_dims(&dims, &shape, allowzero)?;
    let out: Vec<usize> = out
        .iter()
        .map(|d| d.as_static().map(|v| v as usize))
        .collect::<Option<_>>()
        .ok_or("reshape result is not static")?;
    Ok(vec![x[0].clone().reshape(out)?])
}

def_op! {
    /// Reshape without moving elements (ONNX Reshape)
    ///
    /// `data.reshape %x {shape = [0, -1]}`: the result has `len(shape)` dims; an entry `0`
    /// copies the input dim at that position (unless `allowzero = 1`, then it is a real 0) and
    /// one entry `-1` is inferred from the element count. Symbolic dims are supported: `-1` is
    /// solved when the symbols cancel (`[B, 3, 4]` with `[0, -1]` is `[B, 12]`), otherwise it
    /// is `?` and checked at run time. A target computed from symbolic dims is
    /// `sym_shape = "Bx(S*12)x64"` (the dims spelled as in a tensor type; `shape` is then
    /// `[]`): its element count must not contradict the input's.
    pub Reshape = "data.reshape" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// the new shape (0 = copy, -1 = infer)
            shape: I64Array,
            /// 1: a 0 in `shape` is a real 0
            allowzero: I64 = 0,
            /// a symbolic target (`Bx(S*12)x64`), replacing `shape`
            sym_shape: Option<Str>,
        },
        traits [Pure, SameOperandsElementType],
        format: DATA_FORMAT,
        infer: infer_reshape,
        semantics: sem_reshape,
        interfaces [
            Cost::FREE,
            FusionPattern::Injective,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Copy,
        ],
        es,
    }
}

// ---- squeeze / unsqueeze -------------------------------------------------

/// Normalised, sorted, duplicate-free axes.
fn unique_axes(axes: &[i64], rank: usize, attr: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = norm_axis(a, rank, &format!("'{attr}' entry"))?;
        if out.contains(&n) {
            return Err(format!("attribute '{attr}' names axis {n} twice"));
        }
        out.push(n);
    }
    out.sort_unstable();
    Ok(out)
}

fn squeeze_axes(dims: &[Dim], axes: Option<&[i64]>) -> Result<Vec<usize>, String> {
    match axes {
        Some(axes) => {
            let ax = unique_axes(axes, dims.len(), "axes")?;
            for &a in &ax {
                if let Dim::Static(n) = dims[a] {
                    if n != 1 {
                        return Err(format!(
                            "cannot squeeze axis {a} of shape {}: its size is {n}, not 1",
                            fmt_dims(dims)
                        ));
                    }
                }
            }
            Ok(ax)
        }
        None => Ok(dims
            .iter()
            .enumerate()
            .filter(|(_, d)| **d == Dim::Static(1))
            .map(|(i, _)| i)
            .collect()),
    }
}

fn infer_squeeze(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = operand(cx, 0)?;
    let dims = ranked_dims(t, "operand 'input'")?;
    let axes = Squeeze::attrs(cx).axes();
    let ax = squeeze_axes(&dims, axes.as_deref())?;
    let out: Vec<Dim> = dims
        .iter()
        .enumerate()
        .filter(|(i, _)| !ax.contains(i))
        .map(|(_, &d)| d)
        .collect();
    Ok(vec![Type::tensor(&out, super::dtype_of(t)?)])
}

fn sem_squeeze(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    // Without `axes`, squeeze the dims that are 1 in the declared operand
    // type (not ones that happen to be 1 at run time), so the result agrees
    // with inference.
    let declared = crate::memory::nth_operand(cx.body, cx.op, 0).map(|v| cx.body.value_type(v));
    let decl_dims = declared
        .and_then(|t| t.as_tensor())
        .and_then(|t| t.dims.as_ref().map(|d| d.to_vec()))
        .unwrap_or_else(|| x[0].shape.iter().map(|&d| Dim::Static(d as i64)).collect());
    let axes = Squeeze::attrs(cx).axes();
    let ax = squeeze_axes(&decl_dims, axes.as_deref())?;
    for &a in &ax {
        if x[0].shape.get(a) != Some(&1) {
            return Err(format!(
                "cannot squeeze axis {a} of shape {:?}: its size is not 1",
                x[0].shape
            ));
        }
    }
    let out: Vec<usize> = x[0]
        .shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !ax.contains(i))
        .map(|(_, &d)| d)
        .collect();
    Ok(vec![x[0].clone().reshape(out)?])
}

def_op! {
    /// Remove size-1 dims (ONNX Squeeze)
    ///
    /// `data.squeeze %x {axes = [0, -1]}` removes the listed dims, which must have size 1
    /// (negative axes count from the end). Without `axes` it removes every dim that is
    /// statically 1 in the operand's type.
    pub Squeeze = "data.squeeze" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// dims to remove (default: every static 1)
            axes: Option<I64Array>,
        },
        traits [Pure, SameOperandsElementType],
        format: DATA_FORMAT,
        infer: infer_squeeze,
        semantics: sem_squeeze,
        interfaces [
            Cost::FREE,
            FusionPattern::Injective,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Copy,
        ],
        es,
    }
}

fn unsqueeze_dims(dims: &[Dim], axes: &[i64]) -> Result<Vec<Dim>, String> {
    let rank = dims.len() + axes.len();
    let ax = unique_axes(axes, rank, "axes")?;
    let mut it = dims.iter();
    Ok((0..rank)
        .map(|i| {
            if ax.contains(&i) {
                Dim::Static(1)
            } else {
                it.next().copied().unwrap_or(Dim::Static(1))
            }
        })
        .collect())
}

fn infer_unsqueeze(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = operand(cx, 0)?;
    let dims = ranked_dims(t, "operand 'input'")?;
    let axes = Unsqueeze::attrs(cx)
        .axes()
        .ok_or("requires attribute 'axes' (array of integers)")?;
    Ok(vec![Type::tensor(
        &unsqueeze_dims(&dims, &axes)?,
        super::dtype_of(t)?,
    )])
}

fn sem_unsqueeze(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let axes = Unsqueeze::attrs(cx).axes().ok_or("missing 'axes'")?;
    let dims: Vec<Dim> = x[0].shape.iter().map(|&d| Dim::Static(d as i64)).collect();
    let out = unsqueeze_dims(&dims, &axes)?
        .iter()
        .map(|d| d.as_static().unwrap_or(1) as usize)
        .collect();
    Ok(vec![x[0].clone().reshape(out)?])
}

def_op! {
    /// Insert size-1 dims (ONNX Unsqueeze)
    ///
    /// `data.unsqueeze %x {axes = [0, 3]}` inserts a dim of size 1 at each listed position of
    /// the *result* (negative axes count from the end of the result).
    pub Unsqueeze = "data.unsqueeze" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// positions of the new dims in the result
            axes: I64Array,
        },
        traits [Pure, SameOperandsElementType],
        format: DATA_FORMAT,
        infer: infer_unsqueeze,
        semantics: sem_unsqueeze,
        interfaces [
            Cost::FREE,
            FusionPattern::Injective,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Copy,
        ],
        es,
    }
}

// ---- identity ----------------------------------------------------------------

fn sem_identity(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    Ok(vec![x[0].clone()])
}

fn fold_identity(body: &Body, op: OpId, _: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    Some(vec![FoldResult::Value(*body.op(op).operands().first()?)])
}

def_op! {
    /// Return the input unchanged
    ///
    /// `data.identity %x` is `%x` (ONNX Identity); it folds away.
    pub Identity = "data.identity" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        traits [Pure, SameOperandsAndResultType],
        format: DATA_FORMAT,
        fold: fold_identity,
        semantics: sem_identity,
        interfaces [
            Cost::FREE,
            FusionPattern::Injective,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Elementwise,
        ],
        es,
    }
}

// ---- shape_of ----------------------------------------------------------------

fn infer_shape_of(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = operand(cx, 0)?;
    let dims = ranked_dims(t, "operand 'input'")?;
    Ok(vec![Type::tensor(
        &[Dim::Static(dims.len() as i64)],
        ge_ir::DType::I64,
    )])
}

fn sem_shape_of(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let s: Vec<i64> = x[0].shape.iter().map(|&d| d as i64).collect();
    Ok(vec![Tensor::from_i64(vec![s.len()], ge_ir::DType::I64, s)])
}

fn fold_shape_of(body: &Body, op: OpId, _: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    let x = *body.op(op).operands().first()?;
    let dims = body.value_type(x).as_tensor()?.dims.clone()?;
    let s: Vec<i64> = dims.iter().map(|d| d.as_static()).collect::<Option<_>>()?;
    let t = Tensor::from_i64(vec![s.len()], ge_ir::DType::I64, s);
    Some(vec![FoldResult::Attr(Attribute::dense(t.to_dense()))])
}

def_op! {
    /// The shape of a tensor as a 1-D i64 tensor (ONNX Shape)
    ///
    /// `data.shape_of %x : (tensor<Bx8xf32>) -> tensor<2xi64>` holds `[B, 8]` at run time.
    /// The ONNX importer tracks such values symbolically and folds them when every dim
    /// they read is static, so this op remains only where a shape is used as data.
    pub ShapeOf = "data.shape_of" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        traits [Pure],
        format: DATA_FORMAT,
        infer: infer_shape_of,
        fold: fold_shape_of,
        semantics: sem_shape_of,
        interfaces [Cost::FREE, CPU_ENGINES, PrecisionClass::Gray, KernelFamily::Shape],
        es(none = "shapes are known to the builder; it never needs them as data"),
    }
}

// ---- iota ------------------------------------------------------------------

fn infer_iota(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let text = Iota::attrs(cx)
        .count()
        .ok_or("requires attribute 'count' (a dim)")?;
    let count = ge_ir::dim::parse_dims(text).map_err(|e| format!("attribute 'count': {e}"))?;
    let [n] = count.as_slice() else {
        return Err(format!(
            "attribute 'count' must be one dim, not {}",
            count.len()
        ));
    };
    Ok(vec![Type::tensor(&[*n], ge_ir::DType::I64)])
}

fn sem_iota(cx: &SemCtx, _: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let a = Iota::attrs(cx);
    let n = cx
        .result_shape(0)
        .and_then(|s| s.first().copied())
        .ok_or("the length of the iota is not known at run time")?;
    let (start, delta) = (a.start(), a.delta());
    let v: Vec<i64> = (0..n as i64).map(|i| start + i * delta).collect();
    Ok(vec![Tensor::from_i64(vec![n], ge_ir::DType::I64, v)])
}

def_op! {
    /// `start, start + delta, …` with a symbolic length (ONNX Range over a shape)
    ///
    /// `data.iota {count = "S", start = 0, delta = 1} : () -> tensor<Sxi64>`: the importer
    /// emits it for a `Range` whose limit is a symbolic dim (position ids in transformers)
    /// and for a `Slice` whose bounds are symbolic (a `graph.gather` of these indices).
    pub Iota = "data.iota" {
        results { output: AnyTensor },
        attrs {
            /// the length, a dim (`S`, `(S-1)`, `8`)
            count: Str,
            /// the first value
            start: I64 = 0,
            /// the step
            delta: I64 = 1,
        },
        traits [Pure],
        format: "attr-dict `:` functional-type(operands, results)",
        infer: infer_iota,
        semantics: sem_iota,
        interfaces [Cost::FREE, CPU_ENGINES, PrecisionClass::Gray, KernelFamily::Shape],
        es(none = "an importer op for ONNX Range over symbolic dims"),
    }
}

pub static OPS: &[&OpDef] = &[&RESHAPE, &SQUEEZE, &UNSQUEEZE, &IDENTITY, &SHAPE_OF, &IOTA];

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[i64]) -> Vec<Dim> {
        v.iter().map(|&d| Dim::Static(d)).collect()
    }

    #[test]
    fn reshape_follows_onnx() {
        assert_eq!(
            reshape_dims(&s(&[2, 3, 4]), &[0, -1], false).unwrap(),
            s(&[2, 12])
        );
        assert_eq!(
            reshape_dims(&s(&[2, 3, 4]), &[-1], false).unwrap(),
            s(&[24])
        );
        assert!(reshape_dims(&s(&[2, 3, 4]), &[5, -1], false).is_err());
        assert!(reshape_dims(&s(&[2, 3]), &[7], false).is_err());
        assert!(reshape_dims(&s(&[2, 3]), &[-1, -1], false).is_err());
        assert_eq!(
            reshape_dims(&s(&[0, 3]), &[0, 3], true).unwrap(),
            s(&[0, 3])
        );
    }

    #[test]
    fn reshape_solves_symbolic_minus_one() {
        let b = Dim::sym("B");
        let out = reshape_dims(&[b, Dim::Static(3), Dim::Static(4)], &[0, -1], false).unwrap();
        assert_eq!(out, vec![b, Dim::Static(12)]);
        let out = reshape_dims(&[b, Dim::Static(3), Dim::Static(4)], &[-1, 4], false).unwrap();
        assert_eq!(out, vec![b.mul_const(3), Dim::Static(4)]);
        let out = reshape_dims(&[b, Dim::Static(3)], &[2, -1], false).unwrap();
        assert_eq!(out, vec![Dim::Static(2), Dim::Unknown]);
    }
}
