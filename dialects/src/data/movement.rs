//! Ops that move elements: transpose, broadcast_to, expand, tile, slice,
//! concat, split (ONNX semantics unless stated).

use super::{dtype_of, fmt_dims, norm_axis, operand, ranked_dims, take_flat, DATA_FORMAT};
use crate::infer::broadcast_shapes;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{broadcast_shape, strides, Tensor};
use ge_ir::{Dim, Type};

/// For every element of `out_shape` (row-major), the flat source index
/// `src(index)`, walking the multi-index incrementally.
pub fn gather_index(out_shape: &[usize], mut src: impl FnMut(&[usize]) -> usize) -> Vec<usize> {
    let n: usize = out_shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; out_shape.len()];
    for _ in 0..n {
        out.push(src(&idx));
        for k in (0..out_shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < out_shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

fn static_usize(d: &[Dim]) -> Option<Vec<usize>> {
    d.iter()
        .map(|x| x.as_static().and_then(|v| usize::try_from(v).ok()))
        .collect()
}

// ---- transpose -------------------------------------------------------------

fn perm_of(perm: Option<Vec<i64>>, rank: usize) -> Result<Vec<usize>, String> {
    let Some(p) = perm else {
        return Ok((0..rank).rev().collect());
    };
    if p.len() != rank {
        return Err(format!(
            "attribute 'perm' has {} entries but the input has rank {rank}",
            p.len()
        ));
    }
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(rank);
    for &a in &p {
        let i = usize::try_from(a)
            .ok()
            .filter(|&i| i < rank && !seen[i])
            .ok_or_else(|| format!("attribute 'perm' {p:?} is not a permutation of 0..{rank}"))?;
        seen[i] = true;
        out.push(i);
    }
    Ok(out)
}

fn infer_transpose(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = operand(cx, 0)?;
    let dims = ranked_dims(t, "operand 'input'")?;
    let perm = perm_of(Transpose::attrs(cx).perm(), dims.len())?;
    let out: Vec<Dim> = perm.iter().map(|&p| dims[p]).collect();
    Ok(vec![Type::tensor(&out, dtype_of(t)?)])
}

/// `x` with its dims permuted: result dim `i` is input dim `perm[i]`.
pub fn transpose(x: &Tensor, perm: &[usize]) -> Tensor {
    let st = strides(&x.shape);
    let out_shape: Vec<usize> = perm.iter().map(|&p| x.shape[p]).collect();
    let pst: Vec<usize> = perm.iter().map(|&p| st[p]).collect();
    let idx = gather_index(&out_shape, |i| i.iter().zip(&pst).map(|(a, b)| a * b).sum());
    take_flat(x, out_shape, &idx)
}

fn sem_transpose(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let perm = perm_of(Transpose::attrs(cx).perm(), x[0].rank())?;
    Ok(vec![transpose(x[0], &perm)])
}

def_op! {
    /// Permute dims (ONNX Transpose)
    ///
    /// `data.transpose %x {perm = [0, 2, 3, 1]}`: result dim `i` is input dim `perm[i]`.
    /// Without `perm` the dims are reversed.
    pub Transpose = "data.transpose" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// a permutation of the input dims (default: reversed)
            #[es(positional)]
            perm: Option<I64Array>,
        },
        traits [Pure, SameOperandsElementType],
        format: DATA_FORMAT,
        infer: infer_transpose,
        semantics: sem_transpose,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Injective,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Transpose,
        ],
        es,
    }
}

// ---- broadcast_to / expand ---------------------------------------------------

fn broadcast_to_dims(input: &[Dim], shape: &[i64]) -> Result<Vec<Dim>, String> {
    if shape.len() < input.len() {
        return Err(format!(
            "cannot broadcast {} to rank {} (attribute 'shape' {shape:?})",
            fmt_dims(input),
            shape.len()
        ));
    }
    let off = shape.len() - input.len();
    let mut out = Vec::with_capacity(shape.len());
    for (i, &s) in shape.iter().enumerate() {
        let d = if i >= off { Some(input[i - off]) } else { None };
        let r = match (s, d) {
            (-1, Some(d)) => d,
            (-1, None) => {
                return Err(format!(
                    "attribute 'shape' entry #{i} is -1 (keep the input dim) but the input has no dim there"
                ))
            }
            (s, _) if s < 0 => {
                return Err(format!(
                    "attribute 'shape' has invalid entry {s} at #{i}"
                ))
            }
            (s, None) => Dim::Static(s),
            (s, Some(Dim::Static(n))) if n == 1 || n == s => Dim::Static(s),
            (s, Some(Dim::Unknown)) => Dim::Static(s),
            (s, Some(d)) => {
                return Err(format!(
                    "cannot broadcast {} to {shape:?}: dim {d} does not match {s}",
                    fmt_dims(input)
                ))
            }
        };
        out.push(r);
    }
    Ok(out)
}

fn infer_broadcast_to(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = operand(cx, 0)?;
    let dims = ranked_dims(t, "operand 'input'")?;
    let shape = BroadcastTo::attrs(cx)
        .shape()
        .ok_or("requires attribute 'shape' (array of integers)")?;
    Ok(vec![Type::tensor(
        &broadcast_to_dims(&dims, &shape)?,
        dtype_of(t)?,
    )])
}

fn sem_broadcast_to(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let shape = BroadcastTo::attrs(cx).shape().ok_or("missing 'shape'")?;
    let dims: Vec<Dim> = x[0].shape.iter().map(|&d| Dim::Static(d as i64)).collect();
    let out = static_usize(&broadcast_to_dims(&dims, &shape)?).ok_or("shape is not static")?;
    Ok(vec![x[0].broadcast_to(&out)?])
}

def_op! {
    /// Broadcast to a given shape (numpy broadcast_to)
    ///
    /// `data.broadcast_to %x {shape = [4, 3]}`: the result has exactly `shape`; input dims
    /// align from the right and must be 1 or equal to the target dim. An entry `-1` keeps the
    /// input dim (so symbolic dims pass through: `[B, 1]` to `[-1, 8]` is `[B, 8]`).
    pub BroadcastTo = "data.broadcast_to" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// the result shape (-1 = keep the input dim)
            shape: I64Array,
        },
        traits [Pure, SameOperandsElementType],
        format: DATA_FORMAT,
        infer: infer_broadcast_to,
        semantics: sem_broadcast_to,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Injective,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Elementwise,
        ],
        es,
    }
}

fn infer_expand(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = operand(cx, 0)?;
    let dims = ranked_dims(t, "operand 'input'")?;
    if let Some(text) = Expand::attrs(cx).sym_shape() {
        let target =
            ge_ir::dim::parse_dims(text).map_err(|e| format!("attribute 'sym_shape': {e}"))?;
        let out = broadcast_shapes(&dims, &target).map_err(|e| {
            format!(
                "cannot expand {} by {}: {e}",
                fmt_dims(&dims),
                fmt_dims(&target)
            )
        })?;
        return Ok(vec![Type::tensor(&out, dtype_of(t)?)]);
    }
    let shape = Expand::attrs(cx)
        .shape()
        .ok_or("requires attribute 'shape' (array of integers)")?;
    if let Some(bad) = shape.iter().find(|&&s| s < 0) {
        return Err(format!(
            "attribute 'shape' has invalid entry {bad} (expected >= 0)"
        ));
    }
    let target: Vec<Dim> = shape.iter().map(|&s| Dim::Static(s)).collect();
    let out = broadcast_shapes(&dims, &target)
        .map_err(|e| format!("cannot expand {} by {shape:?}: {e}", fmt_dims(&dims)))?;
    Ok(vec![Type::tensor(&out, dtype_of(t)?)])
}

fn sem_expand(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    if Expand::attrs(cx).sym_shape().is_some() {
        let out = cx
            .result_shape(0)
            .ok_or("the symbolic target of the expand is not known at run time")?;
        return Ok(vec![x[0].broadcast_to(&out)?]);
    }
    let shape = Expand::attrs(cx).shape().ok_or("missing 'shape'")?;
    let target: Vec<usize> = shape.iter().map(|&s| s.max(0) as usize).collect();
    let out = broadcast_shape(&x[0].shape, &target)?;
    Ok(vec![x[0].broadcast_to(&out)?])
}

def_op! {
    /// Broadcast input and shape against each other (ONNX Expand)
    ///
    /// `data.expand %x {shape = [3, 1]}`: the result shape is the numpy broadcast of the input
    /// shape and `shape` (so a 1 in `shape` keeps the input dim, unlike `data.broadcast_to`).
    /// A shape computed from symbolic dims is `sym_shape = "BxS"` (spelled as in a tensor
    /// type; `shape` is then `[]`).
    pub Expand = "data.expand" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// the shape to broadcast with
            shape: I64Array,
            /// a symbolic shape (`BxS`), replacing `shape`
            sym_shape: Option<Str>,
        },
        traits [Pure, SameOperandsElementType],
        format: DATA_FORMAT,
        infer: infer_expand,
        semantics: sem_expand,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Injective,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Elementwise,
        ],
        es,
    }
}

// ---- tile ----------------------------------------------------------------------

fn check_repeats(reps: &[i64], rank: usize) -> Result<(), String> {
    if reps.len() != rank {
        return Err(format!(
            "attribute 'repeats' has {} entries but the input has rank {rank}",
            reps.len()
        ));
    }
    if let Some(bad) = reps.iter().find(|&&r| r < 0) {
        return Err(format!("attribute 'repeats' has negative entry {bad}"));
    }
    Ok(())
}

fn infer_tile(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = operand(cx, 0)?;
    let dims = ranked_dims(t, "operand 'input'")?;
    let reps = Tile::attrs(cx)
        .repeats()
        .ok_or("requires attribute 'repeats' (array of integers)")?;
    check_repeats(&reps, dims.len())?;
    let out: Vec<Dim> = dims
        .iter()
        .zip(&reps)
        .map(|(d, &r)| d.mul_const(r))
        .collect();
    Ok(vec![Type::tensor(&out, dtype_of(t)?)])
}

fn sem_tile(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let reps = Tile::attrs(cx).repeats().ok_or("missing 'repeats'")?;
    check_repeats(&reps, x[0].rank())?;
    let sh = &x[0].shape;
    let st = strides(sh);
    let out_shape: Vec<usize> = sh
        .iter()
        .zip(&reps)
        .map(|(&d, &r)| d * r as usize)
        .collect();
    let idx = gather_index(&out_shape, |i| {
        i.iter()
            .zip(sh)
            .zip(&st)
            .map(|((&a, &d), &s)| (a % d.max(1)) * s)
            .sum()
    });
    Ok(vec![take_flat(x[0], out_shape, &idx)])
}

def_op! {
    /// Repeat the input along each dim (ONNX Tile)
    ///
    /// `data.tile %x {repeats = [2, 1]}`: result dim `i` is `dim_i * repeats[i]`, the input
    /// repeated `repeats[i]` times along dim `i`.
    pub Tile = "data.tile" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// how often to repeat along each dim
            repeats: I64Array,
        },
        traits [Pure, SameOperandsElementType],
        format: DATA_FORMAT,
        infer: infer_tile,
        semantics: sem_tile,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Injective,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Repeat,
        ],
        es,
    }
}

// ---- slice ------------------------------------------------------------------------

/// The slice of one axis: (first index, count, step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisSlice {
    pub start: i64,
    pub count: i64,
    pub step: i64,
}

/// ONNX Slice on one axis of size `dim`: negative starts/ends count from the
/// end, then both are clamped (`[0, dim]` for positive steps, `[0, dim-1]` /
/// `[-1, dim-1]` for negative ones).
pub fn slice_axis(dim: i64, start: i64, end: i64, step: i64) -> Result<AxisSlice, String> {
    if step == 0 {
        return Err("attribute 'steps' may not contain 0".into());
    }
    let s = if start < 0 {
        start.saturating_add(dim)
    } else {
        start
    };
    let e = if end < 0 {
        end.saturating_add(dim)
    } else {
        end
    };
    let (s, e) = if step > 0 {
        (s.clamp(0, dim), e.clamp(0, dim))
    } else {
        (s.clamp(0, (dim - 1).max(0)), e.clamp(-1, dim - 1))
    };
    let count = if step > 0 {
        if e > s {
            (e - s + step - 1) / step
        } else {
            0
        }
    } else if s > e {
        (s - e + (-step) - 1) / (-step)
    } else {
        0
    };
    let count = if dim == 0 { 0 } else { count };
    Ok(AxisSlice {
        start: s,
        count,
        step,
    })
}

/// An end index this large means "to the end" (ONNX uses INT_MAX / INT64_MAX).
const TO_END: i64 = i32::MAX as i64;

/// The sliced size of a symbolic dim, where it can be expressed (see the op description).
fn slice_dim_symbolic(d: Dim, start: i64, end: i64, step: i64) -> Dim {
    if step <= 0 || d == Dim::Unknown {
        return Dim::Unknown;
    }
    let len = match (start >= 0, end >= TO_END, end < 0) {
        (true, true, _) => d.sub(Dim::Static(start)),
        (true, false, true) => d.add(Dim::Static(end)).sub(Dim::Static(start)),
        (false, true, _) => Dim::Static(-start),
        (false, false, true) => Dim::Static((end - start).max(0)),
        _ => return Dim::Unknown,
    };
    len.ceil_div_const(step)
}

/// Per-axis (start, end, step) of a slice op, normalised axes; errors name the attribute.
type SliceSpec = Vec<(usize, i64, i64, i64)>;

fn slice_spec(
    rank: usize,
    starts: Option<Vec<i64>>,
    ends: Option<Vec<i64>>,
    axes: Option<Vec<i64>>,
    steps: Option<Vec<i64>>,
) -> Result<SliceSpec, String> {
    let starts = starts.ok_or("requires attribute 'starts' (array of integers)")?;
    let ends = ends.ok_or("requires attribute 'ends' (array of integers)")?;
    let n = starts.len();
    if ends.len() != n {
        return Err(format!(
            "attributes 'starts' and 'ends' must have the same length, but have {n} and {}",
            ends.len()
        ));
    }
    let axes = axes.unwrap_or_else(|| (0..n as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; n]);
    if axes.len() != n || steps.len() != n {
        return Err(format!(
            "attributes 'axes' and 'steps' must have as many entries as 'starts' ({n}), but have {} and {}",
            axes.len(),
            steps.len()
        ));
    }
    let mut out: SliceSpec = Vec::with_capacity(n);
    for i in 0..n {
        let a = norm_axis(axes[i], rank, "'axes' entry")?;
        if out.iter().any(|x| x.0 == a) {
            return Err(format!("attribute 'axes' names axis {a} twice"));
        }
        if steps[i] == 0 {
            return Err("attribute 'steps' may not contain 0".into());
        }
        out.push((a, starts[i], ends[i], steps[i]));
    }
    Ok(out)
}

fn slice_spec_of(rank: usize, a: SliceAttrView) -> Result<SliceSpec, String> {
    slice_spec(rank, a.starts(), a.ends(), a.axes(), a.steps())
}

fn infer_slice(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = operand(cx, 0)?;
    let dims = ranked_dims(t, "operand 'input'")?;
    let spec = slice_spec_of(dims.len(), Slice::attrs(cx))?;
    let mut out = dims.clone();
    for (a, s, e, st) in spec {
        out[a] = match dims[a] {
            Dim::Static(d) => Dim::Static(slice_axis(d, s, e, st)?.count),
            d => slice_dim_symbolic(d, s, e, st),
        };
    }
    Ok(vec![Type::tensor(&out, dtype_of(t)?)])
}

fn sem_slice(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let sh = &x[0].shape;
    let spec = slice_spec_of(sh.len(), Slice::attrs(cx))?;
    let mut per_axis: Vec<AxisSlice> = sh
        .iter()
        .map(|&d| AxisSlice {
            start: 0,
            count: d as i64,
            step: 1,
        })
        .collect();
    for (a, s, e, st) in spec {
        per_axis[a] = slice_axis(sh[a] as i64, s, e, st)?;
    }
    let out_shape: Vec<usize> = per_axis.iter().map(|p| p.count.max(0) as usize).collect();
    let stv = strides(sh);
    let idx = gather_index(&out_shape, |i| {
        i.iter()
            .zip(&per_axis)
            .zip(&stv)
            .map(|((&k, p), &s)| (p.start + k as i64 * p.step) as usize * s)
            .sum()
    });
    Ok(vec![take_flat(x[0], out_shape, &idx)])
}

def_op! {
    /// Strided slice (ONNX Slice)
    ///
    /// `data.slice %x {starts = [1], ends = [-1], axes = [1], steps = [1]}` takes `start,
    /// start+step, …` up to (excluding) `end` on each listed axis. Negative starts/ends count
    /// from the end of the axis; both are then clamped (to `[0, dim]` for positive steps, `[0,
    /// dim-1]` and `[-1, dim-1]` for negative ones). `axes` defaults to `[0, 1, …]`, `steps` to
    /// all 1. On a symbolic dim the result size is symbolic for positive steps when `end` is
    /// "to the end" (≥ 2^31-1) or negative (`[1:]` of `B` is `B-1`, `[1:-1]` is `B-2`, assuming
    /// the dim is large enough; the interpreter checks it), else `?`.
    pub Slice = "data.slice" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// first index on each axis
            starts: I64Array,
            /// end index (exclusive) on each axis
            ends: I64Array,
            /// the axes sliced (default 0..n)
            axes: Option<I64Array>,
            /// step on each axis (default 1)
            steps: Option<I64Array>,
        },
        traits [Pure, SameOperandsElementType],
        format: DATA_FORMAT,
        infer: infer_slice,
        semantics: sem_slice,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Injective,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Slice,
        ],
        es,
    }
}

// ---- concat -------------------------------------------------------------------------

fn infer_concat(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let first = operand(cx, 0)?;
    let mut out = ranked_dims(first, "operand 'inputs' #0")?;
    let axis = Concat::attrs(cx)
        .axis()
        .ok_or("requires attribute 'axis' (integer)")?;
    let a = norm_axis(axis, out.len(), "attribute 'axis'")?;
    for (k, &t) in cx.operand_types.iter().enumerate().skip(1) {
        let d = ranked_dims(t, &format!("operand 'inputs' #{k}"))?;
        if d.len() != out.len() {
            return Err(format!(
                "operand 'inputs' #{k} has rank {} but operand #0 has rank {} ('{t}' vs '{first}')",
                d.len(),
                out.len()
            ));
        }
        for i in 0..out.len() {
            if i == a {
                out[i] = out[i].add(d[i]);
            } else if !out[i].compatible(d[i]) {
                return Err(format!(
                    "operand 'inputs' #{k} has shape {} but #0 has {}: dim {i} differs ({} vs {}) off the concat axis {a}",
                    fmt_dims(&d),
                    fmt_dims(&ranked_dims(first, "")?),
                    d[i],
                    out[i]
                ));
            } else if out[i] == Dim::Unknown {
                out[i] = d[i];
            }
        }
    }
    Ok(vec![Type::tensor(&out, dtype_of(first)?)])
}

fn sem_concat(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let first = x.first().ok_or("needs at least one input")?;
    let rank = first.rank();
    let a = norm_axis(
        Concat::attrs(cx).axis().unwrap_or(0),
        rank,
        "attribute 'axis'",
    )?;
    let mut out_shape = first.shape.clone();
    out_shape[a] = 0;
    for t in x {
        if t.rank() != rank
            || t.shape
                .iter()
                .zip(&first.shape)
                .enumerate()
                .any(|(i, (p, q))| i != a && p != q)
        {
            return Err(format!(
                "cannot concatenate shapes {:?} and {:?} on axis {a}",
                first.shape, t.shape
            ));
        }
        out_shape[a] += t.shape[a];
    }
    let outer: usize = first.shape[..a].iter().product();
    let inner: usize = first.shape[a + 1..].iter().product();
    // Flat (input, index) pairs in output order.
    let mut idx: Vec<(usize, usize)> = Vec::with_capacity(out_shape.iter().product());
    for o in 0..outer {
        for (k, t) in x.iter().enumerate() {
            let chunk = t.shape[a] * inner;
            idx.extend((o * chunk..(o + 1) * chunk).map(|i| (k, i)));
        }
    }
    let data = if first.dtype.is_float() {
        ge_ir::tensor::Data::F(idx.iter().map(|&(k, i)| x[k].get_f(i)).collect())
    } else {
        ge_ir::tensor::Data::I(idx.iter().map(|&(k, i)| x[k].get_i(i)).collect())
    };
    Ok(vec![Tensor {
        shape: out_shape,
        dtype: first.dtype,
        data,
    }])
}

def_op! {
    /// Concatenate along an axis (ONNX Concat)
    ///
    /// `data.concat %a, %b {axis = 1}`: inputs have the same rank and the same dims except on
    /// `axis` (negative counts from the end); the result's `axis` dim is the sum (symbolic sums
    /// allowed: `B` and `B` give `2*B`).
    pub Concat = "data.concat" {
        operands { inputs: Variadic<AnyTensor> },
        results { output: AnyTensor },
        attrs {
            /// the concatenation axis
            axis: I64,
        },
        traits [Pure, SameOperandsElementType],
        format: DATA_FORMAT,
        infer: infer_concat,
        semantics: sem_concat,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Concat,
        ],
        es,
    }
}

// ---- split ------------------------------------------------------------------------------

/// The sizes of the split parts of a dim of size `d`.
fn split_sizes(
    d: Dim,
    split: Option<&[i64]>,
    num_outputs: Option<i64>,
) -> Result<Vec<Dim>, String> {
    match (split, num_outputs) {
        (Some(_), Some(_)) => {
            Err("give either attribute 'split' or 'num_outputs', not both".into())
        }
        (None, None) => {
            Err("requires attribute 'split' (sizes) or 'num_outputs' (equal parts)".into())
        }
        (Some(s), None) => {
            if s.is_empty() {
                return Err("attribute 'split' may not be empty".into());
            }
            if let Some(bad) = s.iter().find(|&&x| x < 0) {
                return Err(format!("attribute 'split' has negative entry {bad}"));
            }
            // Sizes may be run-time values (a graph.specialize of Split):
            // any i64s, so the sum is checked.
            let total = s
                .iter()
                .try_fold(0i64, |a, &x| a.checked_add(x))
                .ok_or_else(|| format!("attribute 'split' {s:?} sums beyond 64 bits"))?;
            if let Dim::Static(n) = d {
                if total != n {
                    return Err(format!(
                        "attribute 'split' {s:?} sums to {total} but the split dim has size {n}"
                    ));
                }
            }
            Ok(s.iter().map(|&x| Dim::Static(x)).collect())
        }
        (None, Some(n)) => {
            if n < 1 {
                return Err(format!(
                    "attribute 'num_outputs' must be at least 1, but is {n}"
                ));
            }
            let exact = d.div_const(n);
            let chunk = if exact.mul_const(n) == d {
                exact
            } else {
                d.ceil_div_const(n)
            };
            let last = d.sub(chunk.mul_const(n - 1));
            if let Dim::Static(l) = last {
                if l < 0 {
                    return Err(format!(
                        "cannot split a dim of size {d} into {n} parts of {chunk}"
                    ));
                }
            }
            // One size per part, sized by the attribute: within the budget first.
            ge_ir::budget::check(
                (n as u64).checked_mul(std::mem::size_of::<Dim>() as u64),
                &format_args!("a split into {n} parts"),
            )?;
            let mut v = vec![chunk; (n - 1) as usize];
            v.push(last);
            Ok(v)
        }
    }
}

fn split_params(
    rank: usize,
    axis: i64,
    split: Option<Vec<i64>>,
    num_outputs: Option<i64>,
    d: impl Fn(usize) -> Dim,
) -> Result<(usize, Vec<Dim>), String> {
    let a = norm_axis(axis, rank, "attribute 'axis'")?;
    Ok((a, split_sizes(d(a), split.as_deref(), num_outputs)?))
}

fn infer_split(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = operand(cx, 0)?;
    let dims = ranked_dims(t, "operand 'input'")?;
    let at = Split::attrs(cx);
    let (a, sizes) = split_params(dims.len(), at.axis(), at.split(), at.num_outputs(), |a| {
        dims[a]
    })?;
    let dt = dtype_of(t)?;
    Ok(sizes
        .into_iter()
        .map(|s| {
            let mut d = dims.clone();
            d[a] = s;
            Type::tensor(&d, dt)
        })
        .collect())
}

fn sem_split(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let sh = &x[0].shape;
    let at = Split::attrs(cx);
    let (a, sizes) = split_params(sh.len(), at.axis(), at.split(), at.num_outputs(), |a| {
        Dim::Static(sh[a] as i64)
    })?;
    let sizes: Vec<usize> = static_usize(&sizes).ok_or("split sizes are not static")?;
    if sizes.iter().sum::<usize>() != sh[a] {
        return Err(format!(
            "split sizes {sizes:?} do not add up to dim {a} of shape {sh:?}"
        ));
    }
    let st = strides(sh);
    let mut start = 0usize;
    let mut out = Vec::with_capacity(sizes.len());
    for s in sizes {
        let mut shape = sh.clone();
        shape[a] = s;
        let idx = gather_index(&shape, |i| {
            i.iter()
                .enumerate()
                .map(|(k, &v)| if k == a { v + start } else { v } * st[k])
                .sum()
        });
        out.push(take_flat(x[0], shape, &idx));
        start += s;
    }
    Ok(out)
}

def_op! {
    /// Split along an axis into several results (ONNX Split)
    ///
    /// `%a:2 = data.split %x {axis = 1, split = [2, 3]}` cuts `axis` into parts of the given
    /// sizes (which must add up to the dim); `{num_outputs = 3}` instead cuts it into equal
    /// parts of `ceil(dim / n)` with a smaller last part (ONNX opset 18). One result per part.
    pub Split = "data.split" {
        operands { input: AnyTensor },
        results { outputs: Variadic<AnyTensor> },
        attrs {
            /// the split axis
            axis: I64 = 0,
            /// the size of each part
            split: Option<I64Array>,
            /// the number of equal parts
            num_outputs: Option<I64>,
        },
        traits [Pure, SameOperandsElementType],
        format: DATA_FORMAT,
        infer: infer_split,
        semantics: sem_split,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Split,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[
    &TRANSPOSE,
    &BROADCAST_TO,
    &EXPAND,
    &TILE,
    &SLICE,
    &CONCAT,
    &SPLIT,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_clamps_like_onnx() {
        assert_eq!(slice_axis(10, 1, -1, 1).unwrap().count, 8);
        assert_eq!(slice_axis(10, 0, i64::MAX, 3).unwrap().count, 4);
        assert_eq!(slice_axis(10, -1, i64::MIN, -1).unwrap().count, 10);
        assert_eq!(slice_axis(10, 20, 30, 1).unwrap().count, 0);
        assert_eq!(slice_axis(10, 5, 2, 1).unwrap().count, 0);
        let s = slice_axis(10, 9, 0, -2).unwrap();
        assert_eq!((s.start, s.count), (9, 5));
    }

    #[test]
    fn symbolic_slices() {
        let b = Dim::sym("B");
        assert_eq!(slice_dim_symbolic(b, 1, i64::MAX, 1), b.sub(Dim::Static(1)));
        assert_eq!(slice_dim_symbolic(b, 1, -1, 1), b.sub(Dim::Static(2)));
        assert_eq!(slice_dim_symbolic(b, -3, i64::MAX, 1), Dim::Static(3));
        assert_eq!(slice_dim_symbolic(b, 0, 4, 1), Dim::Unknown);
    }

    #[test]
    fn equal_split_sizes() {
        let s = split_sizes(Dim::Static(7), None, Some(3)).unwrap();
        assert_eq!(s, vec![Dim::Static(3), Dim::Static(3), Dim::Static(1)]);
        assert!(split_sizes(Dim::Static(1), None, Some(3)).is_err());
        let b = Dim::sym("B").mul_const(2);
        assert_eq!(
            split_sizes(b, None, Some(2)).unwrap(),
            vec![Dim::sym("B"), Dim::sym("B")]
        );
    }
}
