//! Helpers shared by the compute-op definitions of the graph dialect (`nn`,
//! `linalg`, `index`): attribute value checks, operand shape checks with
//! uniform messages, axis handling, and running an op's inference as its
//! verifier so that `verify` and `infer-shapes` can never disagree.

use ge_ir::body::{Body, OpId};
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpError};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim, Type};

/// An integer-array attribute's value, which must have exactly `len` entries.
pub fn check_len(name: &str, v: Vec<i64>, len: usize, what: &str) -> Result<Vec<i64>, String> {
    if v.len() != len {
        return Err(format!(
            "attribute '{name}' must have {len} entries ({what}), but has {}: {v:?}",
            v.len()
        ));
    }
    Ok(v)
}

/// Check that every entry of an attribute is at least `min`.
pub fn check_min(name: &str, v: &[i64], min: i64) -> Result<(), String> {
    if let Some(bad) = v.iter().find(|&&x| x < min) {
        return Err(format!(
            "attribute '{name}' entries must be >= {min}, but got {bad} in {v:?}"
        ));
    }
    Ok(())
}

/// The dims of a tensor operand (`None` when unranked).
pub fn dims(t: Type, name: &str) -> Result<Option<Vec<Dim>>, String> {
    let tt = t
        .as_tensor()
        .ok_or_else(|| format!("operand '{name}' must be a tensor, but got '{t}'"))?;
    Ok(tt.dims.as_ref().map(|d| d.to_vec()))
}

/// The dims of a tensor operand that must have rank `rank` (`layout` names the
/// expected dims in messages, e.g. `NCHW`).
pub fn dims_rank(
    t: Type,
    name: &str,
    rank: usize,
    layout: &str,
) -> Result<Option<Vec<Dim>>, String> {
    let d = dims(t, name)?;
    if let Some(d) = &d {
        if d.len() != rank {
            let what = if layout.is_empty() {
                String::new()
            } else {
                format!(" ({layout})")
            };
            return Err(format!(
                "operand '{name}' must have rank {rank}{what}, but got '{t}'"
            ));
        }
    }
    Ok(d)
}

/// The dims of a tensor operand that must have rank at least `min`.
pub fn dims_min_rank(
    t: Type,
    name: &str,
    min: usize,
    layout: &str,
) -> Result<Option<Vec<Dim>>, String> {
    let d = dims(t, name)?;
    if let Some(d) = &d {
        if d.len() < min {
            let what = if layout.is_empty() {
                String::new()
            } else {
                format!(" ({layout})")
            };
            return Err(format!(
                "operand '{name}' must have rank >= {min}{what}, but got '{t}'"
            ));
        }
    }
    Ok(d)
}

/// Check that two dims may be equal; `what` describes the pair for messages.
pub fn check_dim_eq(a: Dim, b: Dim, what: &str) -> Result<(), String> {
    if a.compatible(b) {
        Ok(())
    } else {
        Err(format!("{what}: expected {b}, but got {a}"))
    }
}

/// The element type of operand `i`.
pub fn dtype_of(t: Type) -> Result<DType, String> {
    t.dtype()
        .ok_or_else(|| format!("'{t}' has no element type"))
}

/// Normalise an ONNX axis (negative counts from the end) for rank `rank`.
pub fn norm_axis(axis: i64, rank: usize, what: &str) -> Result<usize, String> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        return Err(format!(
            "{what} {axis} is out of range for rank {rank} (expected {}..={})",
            -r,
            r - 1
        ));
    }
    Ok(if axis < 0 { axis + r } else { axis } as usize)
}

/// A tensor type with `dims` (or unranked when `None`).
pub fn tensor_type(dims: Option<&[Dim]>, dtype: DType) -> Type {
    match dims {
        Some(d) => Type::tensor(d, dtype),
        None => Type::unranked(dtype),
    }
}

/// Run the op's `infer` hook on its operand types and attributes and report
/// its complaint. Used as the `verify` of ops whose checks live in inference:
/// the diagnostic then appears even when other errors hide the verifier's own
/// inference check. Skipped when operand types or attribute kinds are already
/// wrong or a required attribute is missing (the generic verifier reports those).
pub fn verify_by_infer(body: &Body, op: OpId) -> Result<(), OpError> {
    let d = body.op(op);
    let Some(def) = d.def else { return Ok(()) };
    let Some(infer) = def.infer else {
        return Ok(());
    };
    let ots = body.operand_types(op);
    // Optional operands in the middle are placed by `operand_segment_sizes`
    // (as the builder's inference reads them), never filled in order.
    let segs = d
        .attr("operand_segment_sizes")
        .and_then(|a| a.as_i64_array());
    let Some(sizes) = def.group_sizes(def.operands, ots.len(), segs.as_deref()) else {
        return Ok(());
    };
    let mut i = 0;
    for (g, &n) in def.operands.iter().zip(&sizes) {
        for _ in 0..n {
            if !ots.get(i).is_some_and(|&t| g.constraint.accepts(t)) {
                return Ok(());
            }
            i += 1;
        }
    }
    for ad in def.attrs {
        match d.attr(ad.name) {
            Some(a) if !ad.kind.accepts(a) => return Ok(()),
            None if ad.default.is_none() && !ad.optional => return Ok(()),
            _ => {}
        }
    }
    let consts = vec![None; ots.len()];
    let cx = InferCtx {
        operand_types: &ots,
        attrs: d.attrs,
        operand_consts: &consts,
        group_sizes: &sizes,
        op: Some((body, op)),
    };
    infer(&cx).map(|_| ()).map_err(OpError::from)
}

/// The dtype of result `i` as declared, else `fallback`.
pub fn result_dtype(cx: &SemCtx, i: usize, fallback: DType) -> DType {
    cx.result_dtype(i).unwrap_or(fallback)
}

/// Sizes of the dims before `axis`, at `axis`, and after it.
pub fn split_at_axis(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    let outer = shape[..axis].iter().product();
    let n = shape.get(axis).copied().unwrap_or(1);
    let inner = shape.get(axis + 1..).map_or(1, |s| s.iter().product());
    (outer, n, inner)
}

/// Check a runtime tensor's rank in semantics.
pub fn expect_rank(t: &Tensor, name: &str, rank: usize) -> Result<(), String> {
    if t.rank() != rank {
        return Err(format!(
            "operand '{name}' must have rank {rank}, but has shape {:?}",
            t.shape
        ));
    }
    Ok(())
}

/// Concrete dims for messages and checks at run time.
pub fn usize_to_i64(v: &[usize]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

/// Largest tensor (in elements) the reference kernels will allocate.
pub const MAX_ELEMENTS: usize = 1 << 32;

/// Element count of a result shape computed from attributes, or an error
/// when it overflows or exceeds [`MAX_ELEMENTS`] (never a panic or an abort).
pub fn checked_numel(shape: &[usize]) -> Result<usize, String> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= MAX_ELEMENTS)
        .ok_or_else(|| format!("result shape {shape:?} is too large to compute"))
}

/// Check that a semantics function got at least `n` operands.
pub fn arity(t: &[&Tensor], n: usize) -> Result<(), String> {
    if t.len() < n {
        return Err(format!("expects {n} operands, got {}", t.len()));
    }
    Ok(())
}

/// An element type a reference computation shared with a native kernel is
/// generic over: f64 in the op's semantics, f32 in the runtime's kernel
/// (graph.rnn/gru/lstm, the 3-D convolution and pools); nonlinear
/// functions go through f64.
pub trait Real:
    Copy
    + Default
    + Send
    + Sync
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
{
    fn of(x: f64) -> Self;
    fn get(self) -> f64;
}

impl Real for f32 {
    fn of(x: f64) -> f32 {
        x as f32
    }
    fn get(self) -> f64 {
        self as f64
    }
}

impl Real for f64 {
    fn of(x: f64) -> f64 {
        x
    }
    fn get(self) -> f64 {
        self
    }
}
