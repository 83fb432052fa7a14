//! Indexing and resampling ops: gather, gather_elements, scatter_elements,
//! embedding, topk, resize and pad (ONNX semantics; negative indices count
//! from the end where ONNX allows them).

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef, TypeConstraint as C};
use ge_ir::tensor::{numel, strides, Data, Tensor};
use ge_ir::{DType, Dim, Type};

type SemResult = Result<Vec<Tensor>, String>;

/// A tensor of `shape` whose element `i` is `t`'s flat element `idx[i]`
/// (dtype kept).
pub fn take(t: &Tensor, idx: &[usize], shape: Vec<usize>) -> Result<Tensor, String> {
    if idx.len() != numel(&shape) {
        return Err(format!(
            "internal: {} indices for shape {shape:?}",
            idx.len()
        ));
    }
    if let Some(&bad) = idx.iter().find(|&&i| i >= t.len()) {
        return Err(format!("internal: index {bad} past {} elements", t.len()));
    }
    let data = match &t.data {
        Data::F(v) => Data::F(idx.iter().map(|&i| v[i]).collect()),
        Data::I(v) => Data::I(idx.iter().map(|&i| v[i]).collect()),
    };
    Ok(Tensor {
        shape,
        dtype: t.dtype,
        data,
    })
}

/// An ONNX index (negative counts from the end) into a dim of size `n`.
fn fix_index(i: i64, n: usize, what: &str) -> Result<usize, String> {
    let j = if i < 0 { i + n as i64 } else { i };
    if j < 0 || j >= n as i64 {
        return Err(format!("{what} {i} is out of range for a dim of size {n}"));
    }
    Ok(j as usize)
}

/// Multi-index iteration helper: advance `idx` within `shape` (row-major).
fn next_index(idx: &mut [usize], shape: &[usize]) {
    for k in (0..shape.len()).rev() {
        idx[k] += 1;
        if idx[k] < shape[k] {
            return;
        }
        idx[k] = 0;
    }
}

fn index_dtype_ok(t: Type, name: &str) -> Result<(), String> {
    if C::IndexTensor.accepts(t) {
        Ok(())
    } else {
        Err(format!(
            "operand '{name}' must be a tensor of i32/i64/index values, but got '{t}'"
        ))
    }
}

// ---- gather -----------------------------------------------------------------

fn infer_gather(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let (td, ti) = (cx.operand_types[0], cx.operand_types[1]);
    let dt = dtype_of(td)?;
    let axis = Gather::attrs(cx).axis();
    let (Some(d), Some(i)) = (dims(td, "input")?, dims(ti, "indices")?) else {
        if let Some(d) = dims(td, "input")? {
            norm_axis(axis, d.len(), "attribute 'axis'")?;
        }
        return Ok(vec![Type::unranked(dt)]);
    };
    let ax = norm_axis(axis, d.len(), "attribute 'axis'")?;
    let mut out = d[..ax].to_vec();
    out.extend_from_slice(&i);
    out.extend_from_slice(&d[ax + 1..]);
    Ok(vec![Type::tensor(&out, dt)])
}

fn sem_gather(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let (d, ind) = (t[0], t[1]);
    let ax = norm_axis(Gather::attrs(cx).axis(), d.rank(), "attribute 'axis'")?;
    let (outer, n, inner) = split_at_axis(&d.shape, ax);
    let ids = ind
        .to_i64()
        .into_iter()
        .map(|i| fix_index(i, n, "index"))
        .collect::<Result<Vec<_>, _>>()?;
    let mut idx = Vec::with_capacity(outer * ids.len() * inner);
    for o in 0..outer {
        for &i in &ids {
            let base = (o * n + i) * inner;
            idx.extend(base..base + inner);
        }
    }
    let mut shape = d.shape[..ax].to_vec();
    shape.extend_from_slice(&ind.shape);
    shape.extend_from_slice(&d.shape[ax + 1..]);
    Ok(vec![take(d, &idx, shape)?])
}

def_op! {
    /// Take slices along an axis at the given indices (ONNX Gather)
    ///
    /// For `input` of shape `D0 x ... x Dr-1` and `indices` of shape `I`, the result has shape
    /// `D[:axis] + I + D[axis+1:]`: the slices of `input` along `axis` picked by each index.
    /// Negative indices count from the end; an index out of range is an error at run time.
    pub Gather = "graph.gather" {
        operands { input: AnyTensor, indices: IndexTensor },
        results { output: AnyTensor },
        attrs {
            /// the gathered axis (negative counts from the end)
            axis: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_gather,
        semantics: sem_gather,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Injective,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Gather,
        ],
        es,
    }
}

// ---- gather_elements / scatter_elements ---------------------------------------

/// `indices` must have the rank of `input` and no dim larger than it (except along `axis`).
type MaybeDims = Option<Vec<Dim>>;

fn check_elementwise_indices(
    td: Type,
    ti: Type,
    axis: i64,
) -> Result<(MaybeDims, MaybeDims), String> {
    let d = dims(td, "input")?;
    let i = dims(ti, "indices")?;
    if let Some(d) = &d {
        let ax = norm_axis(axis, d.len(), "attribute 'axis'")?;
        if let Some(i) = &i {
            if i.len() != d.len() {
                return Err(format!(
                    "operand 'indices' must have the rank of 'input' ({}), but got '{ti}'",
                    d.len()
                ));
            }
            for (k, (&x, &y)) in i.iter().zip(d.iter()).enumerate() {
                if k != ax {
                    if let (Some(x), Some(y)) = (x.as_static(), y.as_static()) {
                        if x > y {
                            return Err(format!(
                                "operand 'indices' '{ti}' is larger than 'input' '{td}' in dim {k} ({x} > {y})"
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok((d, i))
}

fn infer_gather_elements(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let (td, ti) = (cx.operand_types[0], cx.operand_types[1]);
    let (_, i) = check_elementwise_indices(td, ti, GatherElements::attrs(cx).axis())?;
    Ok(vec![tensor_type(i.as_deref(), dtype_of(td)?)])
}

/// For each position of `ind` (same rank as `d`), the flat index into `d`
/// with the `axis` coordinate replaced by the index value.
fn element_targets(d: &Tensor, ind: &Tensor, ax: usize) -> Result<Vec<usize>, String> {
    if ind.rank() != d.rank() {
        return Err(format!(
            "indices shape {:?} and input shape {:?} differ in rank",
            ind.shape, d.shape
        ));
    }
    for k in 0..d.rank() {
        if k != ax && ind.shape[k] > d.shape[k] {
            return Err(format!(
                "indices shape {:?} exceeds input shape {:?} in dim {k}",
                ind.shape, d.shape
            ));
        }
    }
    let st = strides(&d.shape);
    let vals = ind.to_i64();
    let mut pos = vec![0usize; ind.rank()];
    let mut out = Vec::with_capacity(vals.len());
    for &v in &vals {
        let j = fix_index(v, d.shape[ax], "index")?;
        let mut flat = 0;
        for k in 0..pos.len() {
            flat += if k == ax { j } else { pos[k] } * st[k];
        }
        out.push(flat);
        next_index(&mut pos, &ind.shape);
    }
    Ok(out)
}

fn sem_gather_elements(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let (d, ind) = (t[0], t[1]);
    let ax = norm_axis(
        GatherElements::attrs(cx).axis(),
        d.rank(),
        "attribute 'axis'",
    )?;
    let idx = element_targets(d, ind, ax)?;
    Ok(vec![take(d, &idx, ind.shape.clone())?])
}

def_op! {
    /// Gather single elements along an axis (ONNX GatherElements)
    ///
    /// `indices` has the rank of `input`; the result has the shape of `indices` and `out[i0,
    /// .., ik, ..] = input[i0, .., indices[i0, .., ik, ..], ..]` with the index replacing the
    /// coordinate along `axis`. Negative indices count from the end.
    pub GatherElements = "graph.gather_elements" {
        operands { input: AnyTensor, indices: IndexTensor },
        results { output: AnyTensor },
        attrs {
            /// the indexed axis (negative counts from the end)
            axis: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_gather_elements,
        semantics: sem_gather_elements,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Index,
        ],
        es,
    }
}

const REDUCTIONS: &[&str] = &["none", "add", "mul", "max", "min"];

fn infer_scatter_elements(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let ts = cx.operand_types;
    let (td, ti, tu) = (ts[0], ts[1], ts[2]);
    let at = ScatterElements::attrs(cx);
    let r = at.reduction();
    if !REDUCTIONS.contains(&r) {
        return Err(format!(
            "attribute 'reduction' must be one of {}, but got '{r}'",
            REDUCTIONS.join(", ")
        ));
    }
    let (_, i) = check_elementwise_indices(td, ti, at.axis())?;
    if td.dtype() != tu.dtype() {
        return Err(format!(
            "operand 'updates' '{tu}' must have the element type of 'input' '{td}'"
        ));
    }
    if let (Some(i), Some(u)) = (i, dims(tu, "updates")?) {
        let same = i.len() == u.len() && i.iter().zip(&u).all(|(a, b)| a.compatible(*b));
        if !same {
            return Err(format!(
                "operand 'updates' '{tu}' must have the shape of 'indices' '{ti}'"
            ));
        }
    }
    Ok(vec![td])
}

fn sem_scatter_elements(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 3)?;
    let (d, ind, upd) = (t[0], t[1], t[2]);
    let at = ScatterElements::attrs(cx);
    let ax = norm_axis(at.axis(), d.rank(), "attribute 'axis'")?;
    if upd.shape != ind.shape {
        return Err(format!(
            "updates shape {:?} differs from indices shape {:?}",
            upd.shape, ind.shape
        ));
    }
    let targets = element_targets(d, ind, ax)?;
    let red = at.reduction();
    fn apply<T: Copy + PartialOrd>(
        out: &mut [T],
        targets: &[usize],
        upd: &[T],
        red: &str,
        add: fn(T, T) -> T,
        mul: fn(T, T) -> T,
    ) -> Result<(), String> {
        for (&i, &u) in targets.iter().zip(upd) {
            let o = out[i];
            out[i] = match red {
                "none" => u,
                "add" => add(o, u),
                "mul" => mul(o, u),
                "max" => {
                    if u > o {
                        u
                    } else {
                        o
                    }
                }
                "min" => {
                    if u < o {
                        u
                    } else {
                        o
                    }
                }
                r => return Err(format!("unknown reduction '{r}'")),
            };
        }
        Ok(())
    }
    let out = match &d.data {
        Data::F(v) => {
            let mut out = v.clone();
            apply(
                &mut out,
                &targets,
                &upd.to_f64(),
                red,
                |a, b| a + b,
                |a, b| a * b,
            )?;
            Tensor::from_f64(d.shape.clone(), d.dtype, out)
        }
        Data::I(v) => {
            let mut out = v.clone();
            apply(
                &mut out,
                &targets,
                &upd.to_i64(),
                red,
                i64::wrapping_add,
                i64::wrapping_mul,
            )?;
            Tensor::from_i64(d.shape.clone(), d.dtype, out)
        }
    };
    Ok(vec![out])
}

def_op! {
    /// Write single elements along an axis (ONNX ScatterElements)
    ///
    /// A copy of `input` where, for each position `p` of `indices`, the element at `p` with the
    /// `axis` coordinate replaced by `indices[p]` becomes `updates[p]` (`reduction = "none"`),
    /// or is combined with it (`add`, `mul`, `max`, `min`). `updates` has the shape of
    /// `indices`. With `none` and duplicate indices the last update wins.
    pub ScatterElements = "graph.scatter_elements" {
        operands { input: AnyTensor, indices: IndexTensor, updates: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// the indexed axis (negative counts from the end)
            axis: I64 = 0,
            /// how an update combines with the existing element
            reduction: Enum(REDUCTIONS) = "none",
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_scatter_elements,
        semantics: sem_scatter_elements,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Index,
        ],
        es,
    }
}

// ---- embedding ----------------------------------------------------------------

fn infer_embedding(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let (tt, ti) = (cx.operand_types[0], cx.operand_types[1]);
    index_dtype_ok(ti, "ids")?;
    let table = dims_rank(tt, "table", 2, "vocab x dim")?;
    let dt = dtype_of(tt)?;
    Ok(vec![match dims(ti, "ids")? {
        Some(mut i) => {
            i.push(table.map_or(Dim::Unknown, |t| t[1]));
            Type::tensor(&i, dt)
        }
        None => Type::unranked(dt),
    }])
}

fn sem_embedding(_: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let (table, ids) = (t[0], t[1]);
    expect_rank(table, "table", 2)?;
    let (v, dim) = (table.shape[0], table.shape[1]);
    let mut idx = Vec::with_capacity(ids.len() * dim);
    for id in ids.to_i64() {
        if id < 0 || id >= v as i64 {
            return Err(format!("id {id} is out of range for a table of {v} rows"));
        }
        let base = id as usize * dim;
        idx.extend(base..base + dim);
    }
    let mut shape = ids.shape.clone();
    shape.push(dim);
    Ok(vec![take(table, &idx, shape)?])
}

def_op! {
    /// Look up rows of an embedding table
    ///
    /// `table` is `vocab x dim`; the result has shape `ids.shape + [dim]` with row `ids[p]` of
    /// the table at each position `p`. Ids must lie in `0..vocab` (negative ids are an error,
    /// unlike `gather`). Word, position and token-type embeddings of BERT and GPT-2.
    pub Embedding = "graph.embedding" {
        operands { table: AnyTensor, ids: IndexTensor },
        results { output: AnyTensor },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_embedding,
        semantics: sem_embedding,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Embedding,
        ],
        es,
    }
}

// ---- topk -----------------------------------------------------------------

fn infer_topk(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    let dt = dtype_of(t)?;
    let at = Topk::attrs(cx);
    let Some(k) = at.k() else {
        return Err("requires attribute 'k' (integer)".into());
    };
    if k < 0 {
        return Err(format!("attribute 'k' must be >= 0, but got {k}"));
    }
    let axis = at.axis();
    let Some(mut d) = dims(t, "input")? else {
        return Ok(vec![Type::unranked(dt), Type::unranked(DType::I64)]);
    };
    let ax = norm_axis(axis, d.len(), "attribute 'axis'")?;
    if let Some(n) = d[ax].as_static() {
        if k > n {
            return Err(format!(
                "attribute 'k' = {k} exceeds the size {n} of axis {ax} of '{t}'"
            ));
        }
    }
    d[ax] = Dim::Static(k);
    Ok(vec![Type::tensor(&d, dt), Type::tensor(&d, DType::I64)])
}

/// The order of two elements in topk's result (`Less`: `a` comes first):
/// descending when `largest`, else ascending; NaN counts as the largest
/// value. A stable sort by it keeps equal values in index order.
pub fn topk_order(a: f64, b: f64, largest: bool) -> std::cmp::Ordering {
    let ord = match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal),
    };
    if largest {
        ord.reverse()
    } else {
        ord
    }
}

fn sem_topk(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    let x = t[0];
    let at = Topk::attrs(cx);
    let k = at.k().unwrap_or(0);
    let ax = norm_axis(at.axis(), x.rank(), "attribute 'axis'")?;
    let largest = at.largest() != 0;
    let (outer, n, inner) = split_at_axis(&x.shape, ax);
    if k < 0 || k as usize > n {
        return Err(format!("k = {k} is out of range for an axis of size {n}"));
    }
    let k = k as usize;
    let xs = x.to_f64();
    let mut shape = x.shape.clone();
    shape[ax] = k;
    let total = outer * k * inner;
    let mut src = vec![0usize; total];
    let mut ids = vec![0i64; total];
    let mut line: Vec<usize> = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| (o * n + j) * inner + i;
            line.clear();
            line.extend(0..n);
            // Stable sort: equal values keep the lower index first (ONNX).
            line.sort_by(|&p, &q| topk_order(xs[at(p)], xs[at(q)], largest));
            for (r, &j) in line.iter().take(k).enumerate() {
                let o_at = (o * k + r) * inner + i;
                src[o_at] = at(j);
                ids[o_at] = j as i64;
            }
        }
    }
    let values = take(x, &src, shape.clone())?;
    let idt = result_dtype(cx, 1, DType::I64);
    Ok(vec![values, Tensor::from_i64(shape, idt, ids)])
}

def_op! {
    /// The k largest (or smallest) elements along an axis and their indices (ONNX TopK)
    ///
    /// Results: `values` (the input's element type) and `indices` (i64), both with the input's
    /// shape except `k` along `axis`. `k` is an attribute (importers fold ONNX's constant `K`
    /// operand into it). Equal values are ordered by lower index first; NaN counts as the
    /// largest value. Results are always sorted, also with `sorted = 0` (ONNX leaves that order
    /// unspecified).
    pub Topk = "graph.topk" {
        operands { input: TensorOf(super::linalg::NUMERIC) },
        results { values: TensorOf(super::linalg::NUMERIC), indices: TensorOf(&[DType::I64]) },
        attrs {
            /// how many elements to keep
            k: I64,
            /// the searched axis
            axis: I64 = -1,
            /// 1: the largest elements, 0: the smallest
            largest: I64 = 1,
            /// results are always sorted
            sorted: I64 = 1,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_topk,
        semantics: sem_topk,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::TopK,
        ],
        es(results = TopK),
    }
}

// ---- resize ---------------------------------------------------------------

/// The values of graph.resize's enum attributes (the ONNX importer checks
/// a node's against them).
pub const RESIZE_MODES: &[&str] = &["nearest", "linear", "cubic"];
pub const COORD_MODES: &[&str] = &[
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
];
pub const NEAREST_MODES: &[&str] = &["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"];
pub const ASPECT_POLICIES: &[&str] = &["stretch", "not_larger", "not_smaller"];

/// How one output coordinate of a resized axis reads the input.
#[derive(Clone, Debug, PartialEq)]
pub enum ResizeTaps {
    /// `(source index, weight)` pairs, indices clamped into the input.
    Taps(Vec<(usize, f64)>),
    /// Outside the crop (`tf_crop_and_resize`): the output is `extrapolation_value`.
    Outside,
}

/// The checked modes and numbers of a resize, everything but the sizes.
#[derive(Clone, Copy, Debug)]
pub struct ResizeModes {
    pub mode: &'static str,
    pub coord: &'static str,
    pub nearest: &'static str,
    pub cubic_a: f64,
    pub exclude_outside: bool,
    pub antialias: bool,
    pub extrapolation: f64,
}

/// The modes of a resize, checked against each other.
pub fn resize_modes(a: ResizeAttrView) -> Result<ResizeModes, String> {
    let (m, c, n, p) = (
        a.mode(),
        a.coordinate_transformation_mode(),
        a.nearest_mode(),
        a.keep_aspect_ratio_policy(),
    );
    for (name, v, all) in [
        ("mode", m, RESIZE_MODES),
        ("coordinate_transformation_mode", c, COORD_MODES),
        ("nearest_mode", n, NEAREST_MODES),
        ("keep_aspect_ratio_policy", p, ASPECT_POLICIES),
    ] {
        if !all.contains(&v) {
            return Err(format!(
                "attribute '{name}' must be one of {}, but got '{v}'",
                all.join(", ")
            ));
        }
    }
    let antialias = a.antialias() != 0;
    let exclude_outside = a.exclude_outside() != 0;
    if m == "nearest" && antialias {
        return Err("'antialias' applies to the linear and cubic modes, not nearest".into());
    }
    if m == "nearest" && exclude_outside {
        return Err("'exclude_outside' applies to the linear and cubic modes, not nearest".into());
    }
    if !a.cubic_coeff_a().is_finite() || !a.extrapolation_value().is_finite() {
        return Err("'cubic_coeff_a' and 'extrapolation_value' must be finite".into());
    }
    match (c == "tf_crop_and_resize", a.roi().is_some()) {
        (true, false) => {
            return Err("coordinate_transformation_mode 'tf_crop_and_resize' requires attribute 'roi'".into())
        }
        (false, true) => {
            return Err(format!(
                "attribute 'roi' is read only by coordinate_transformation_mode 'tf_crop_and_resize', not '{c}'"
            ))
        }
        _ => {}
    }
    Ok(ResizeModes {
        mode: m,
        coord: c,
        nearest: n,
        cubic_a: a.cubic_coeff_a(),
        exclude_outside,
        antialias,
        extrapolation: a.extrapolation_value(),
    })
}

/// One axis of a resize: the scale of the coordinate transformation, the
/// resized length before rounding, and the crop (start, end) in `[0, 1]`
/// coordinates of the input.
#[derive(Clone, Copy, Debug)]
struct AxisPlan {
    scale: f64,
    len: f64,
    roi: (f64, f64),
}

/// The resized axes (`axes`, normalised, or every dim) of a resize of rank `r`.
fn resize_axes(a: ResizeAttrView, r: usize) -> Result<Vec<usize>, String> {
    let Some(axes) = a.axes() else {
        return Ok((0..r).collect());
    };
    let mut out = Vec::with_capacity(axes.len());
    for &x in &axes {
        let d = norm_axis(x, r, "attribute 'axes' entry")?;
        if out.contains(&d) {
            return Err(format!("attribute 'axes' names dim {d} twice: {axes:?}"));
        }
        out.push(d);
    }
    Ok(out)
}

/// The output shape of a resize and, when every input dim is static, the
/// plan of each axis. `scales`, `sizes` and `roi` refer to `axes` (every dim
/// without it); other dims keep their length.
fn resize_plan(
    a: ResizeAttrView,
    input: &[Dim],
) -> Result<(Vec<Dim>, Option<Vec<AxisPlan>>), String> {
    let r = input.len();
    let axes = resize_axes(a, r)?;
    let n = axes.len();
    let roi = a.roi();
    if let Some(v) = &roi {
        if v.len() != 2 * n {
            return Err(format!(
                "attribute 'roi' must have 2 entries per resized dim ({}), but has {}",
                2 * n,
                v.len()
            ));
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(format!(
                "attribute 'roi' entries must be finite, but got {v:?}"
            ));
        }
    }
    let stat: Option<Vec<f64>> = input
        .iter()
        .map(|d| d.as_static().map(|v| v as f64))
        .collect();
    let mut out = input.to_vec();
    let mut plan: Option<Vec<AxisPlan>> = stat.as_ref().map(|s| {
        s.iter()
            .map(|&len| AxisPlan {
                scale: 1.0,
                len,
                roi: (0.0, 1.0),
            })
            .collect()
    });
    let count = |name: &str, len: usize| {
        if len == n {
            Ok(())
        } else {
            Err(format!(
                "attribute '{name}' must have one entry per resized dim ({n}), but has {len}"
            ))
        }
    };
    match (a.scales(), a.sizes()) {
        (Some(_), Some(_)) => return Err("takes either 'scales' or 'sizes', not both".into()),
        (None, None) => return Err("requires attribute 'scales' or 'sizes'".into()),
        (Some(s), None) => {
            count("scales", s.len())?;
            if let Some(bad) = s.iter().find(|&&x| !x.is_finite() || x <= 0.0) {
                return Err(format!(
                    "attribute 'scales' entries must be > 0, but got {bad}"
                ));
            }
            for (&d, &sc) in axes.iter().zip(&s) {
                let dim = input[d];
                out[d] = match dim.as_static() {
                    Some(v) => Dim::Static((v as f64 * sc).floor() as i64),
                    None if sc.fract() == 0.0 => dim.mul_const(sc as i64),
                    None if (1.0 / sc).fract() == 0.0 => dim.div_const((1.0 / sc) as i64),
                    None => Dim::Unknown,
                };
                if let Some(p) = plan.as_mut() {
                    p[d].scale = sc;
                    p[d].len *= sc;
                }
            }
        }
        (None, Some(z)) => {
            count("sizes", z.len())?;
            check_min("sizes", &z, 1)?;
            let policy = a.keep_aspect_ratio_policy();
            match (policy, &stat) {
                ("stretch", _) => {
                    for (&d, &v) in axes.iter().zip(&z) {
                        out[d] = Dim::Static(v);
                        if let Some(p) = plan.as_mut() {
                            p[d].scale = v as f64 / p[d].len;
                            p[d].len = v as f64;
                        }
                    }
                }
                (_, Some(st)) => {
                    // One scale for every resized axis, the smallest
                    // (not_larger) or largest (not_smaller) of the ratios.
                    let ratios = axes.iter().zip(&z).map(|(&d, &v)| v as f64 / st[d]);
                    let scale = if policy == "not_larger" {
                        ratios.fold(f64::INFINITY, f64::min)
                    } else {
                        ratios.fold(f64::NEG_INFINITY, f64::max)
                    };
                    for &d in &axes {
                        // round_int: halfway cases up.
                        out[d] = Dim::Static((scale * st[d] + 0.5).floor() as i64);
                        if let Some(p) = plan.as_mut() {
                            p[d].scale = scale;
                            p[d].len = scale * st[d];
                        }
                    }
                }
                (_, None) => {
                    for &d in &axes {
                        out[d] = Dim::Unknown;
                    }
                }
            }
        }
    }
    if let (Some(v), Some(p)) = (&roi, plan.as_mut()) {
        for (k, &d) in axes.iter().enumerate() {
            p[d].roi = (v[k], v[n + k]);
        }
    }
    Ok((out, plan))
}

fn infer_resize(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let at = Resize::attrs(cx);
    resize_modes(at)?;
    let t = cx.operand_types[0];
    let dt = dtype_of(t)?;
    let Some(d) = dims(t, "input")? else {
        return Ok(vec![Type::unranked(dt)]);
    };
    let (out, _) = resize_plan(at, &d)?;
    if let Some(z) = out.iter().find(|d| d.as_static().is_some_and(|n| n < 1)) {
        return Err(format!("the output would have an empty dim ({z})"));
    }
    Ok(vec![Type::tensor(&out, dt)])
}

/// The source coordinate of output coordinate `x` along an axis of `in_len`
/// with `out_len` outputs (ONNX's `coordinate_transformation_mode`); `None`
/// outside a `tf_crop_and_resize` crop.
fn resize_source(x: usize, in_len: usize, out_len: usize, p: AxisPlan, coord: &str) -> Option<f64> {
    let (xf, n) = (x as f64, in_len as f64);
    let (scale, len) = (p.scale, p.len);
    Some(match coord {
        "half_pixel" => (xf + 0.5) / scale - 0.5,
        "half_pixel_symmetric" => {
            // The crop's centre stays the output's centre when the length
            // was rounded down.
            let adjustment = out_len as f64 / len;
            let offset = n / 2.0 * (1.0 - adjustment);
            offset + (xf + 0.5) / scale - 0.5
        }
        "pytorch_half_pixel" if len > 1.0 => (xf + 0.5) / scale - 0.5,
        "pytorch_half_pixel" => 0.0,
        // ONNX divides by the unrounded resized length: `in * scale` with
        // scales given.
        "align_corners" if len == 1.0 => 0.0,
        "align_corners" => xf * (n - 1.0) / (len - 1.0),
        "tf_crop_and_resize" => {
            let (s, e) = p.roi;
            let v = if len == 1.0 {
                (e - s) * (n - 1.0) / 2.0
            } else {
                xf * (e - s) * (n - 1.0) / (len - 1.0)
            } + s * (n - 1.0);
            if v < 0.0 || v > n - 1.0 {
                return None;
            }
            v
        }
        _ => xf / scale,
    })
}

/// The cubic convolution kernel of coefficient `a` at distance `x`.
fn cubic_weight(x: f64, a: f64) -> f64 {
    let x = x.abs();
    let (x2, x3) = (x * x, x * x * x);
    if x <= 1.0 {
        (a + 2.0) * x3 - (a + 3.0) * x2 + 1.0
    } else if x < 2.0 {
        a * x3 - 5.0 * a * x2 + 8.0 * a * x - 4.0 * a
    } else {
        0.0
    }
}

/// Taps of source coordinate `src` along an axis of `in_len` (the ONNX
/// reference's `_get_neighbor` and coefficient functions): the `n` nearest
/// indices around `src` (the left one preferred: `ratio` in `(0, 1]`),
/// edge-clamped, or with `exclude_outside` dropped and the rest renormalised.
fn resize_taps(src: f64, in_len: usize, scale: f64, m: &ResizeModes) -> Vec<(usize, f64)> {
    let clamp = |v: i64| v.clamp(0, in_len as i64 - 1) as usize;
    if m.mode == "nearest" {
        let frac = src - src.floor();
        let r = match m.nearest {
            "floor" => src.floor(),
            "ceil" => src.ceil(),
            "round_prefer_ceil" if frac == 0.5 => src.ceil(),
            "round_prefer_floor" if frac == 0.5 => src.floor(),
            _ => src.round(),
        };
        return vec![(clamp(r as i64), 1.0)];
    }
    // `left` is the last index below `src` (one below an integer `src`).
    let (left, ratio) = if src.fract() == 0.0 {
        (src as i64 - 1, 1.0)
    } else {
        (src.floor() as i64, src - src.floor())
    };
    // The first tap's offset from `left` and the weights.
    let (first, mut w): (i64, Vec<f64>) = match (m.mode, m.antialias) {
        ("linear", false) => (0, vec![1.0 - ratio, ratio]),
        ("cubic", false) => {
            let a = m.cubic_a;
            let r1 = 1.0 - ratio;
            (
                -1,
                vec![
                    ((a * (ratio + 1.0) - 5.0 * a) * (ratio + 1.0) + 8.0 * a) * (ratio + 1.0)
                        - 4.0 * a,
                    ((a + 2.0) * ratio - (a + 3.0)) * ratio * ratio + 1.0,
                    ((a + 2.0) * r1 - (a + 3.0)) * r1 * r1 + 1.0,
                    ((a * (r1 + 1.0) - 5.0 * a) * (r1 + 1.0) + 8.0 * a) * (r1 + 1.0) - 4.0 * a,
                ],
            )
        }
        (mode, _) => {
            // Antialias: the filter stretched by 1/scale when downscaling,
            // its weights normalised.
            let s = scale.min(1.0);
            let support = if mode == "linear" { 1.0 } else { 2.0 };
            let start = (-support / s).floor() as i64 + 1;
            let w: Vec<f64> = (start..2 - start)
                .map(|j| {
                    let d = s * (j as f64 - ratio);
                    if mode == "linear" {
                        (1.0 - d.abs()).clamp(0.0, 1.0)
                    } else {
                        cubic_weight(d, m.cubic_a)
                    }
                })
                .collect();
            let sum: f64 = w.iter().sum();
            (start, w.into_iter().map(|v| v / sum).collect())
        }
    };
    let idx = |k: usize| left + first + k as i64;
    if m.exclude_outside {
        for (k, v) in w.iter_mut().enumerate() {
            if idx(k) < 0 || idx(k) >= in_len as i64 {
                *v = 0.0;
            }
        }
        let sum: f64 = w.iter().sum();
        let sum = if sum == 0.0 { 1.0 } else { sum };
        w.iter_mut().for_each(|v| *v /= sum);
    }
    w.into_iter()
        .enumerate()
        .filter(|&(_, v)| v != 0.0)
        .map(|(k, v)| (clamp(idx(k)), v))
        .collect()
}

/// A resize resolved for one concrete input shape: the output shape and,
/// per axis, the taps of every output coordinate. The reference and the
/// runtime's kernel both run it.
#[derive(Clone, Debug)]
pub struct ResizeRun {
    pub out_shape: Vec<usize>,
    pub taps: Vec<Vec<ResizeTaps>>,
    pub modes: ResizeModes,
}

/// The taps of a resize of `in_shape` (errors: bad attributes, an empty
/// input or output, a linear or cubic resize of rank above 16).
pub fn resize_run(a: ResizeAttrView, in_shape: &[usize]) -> Result<ResizeRun, String> {
    let modes = resize_modes(a)?;
    let in_dims: Vec<Dim> = in_shape.iter().map(|&n| Dim::Static(n as i64)).collect();
    let (out_dims, plan) = resize_plan(a, &in_dims)?;
    let out_shape: Vec<usize> = out_dims
        .iter()
        .map(|d| match d.as_static() {
            Some(n) if n >= 1 => Ok(n as usize),
            _ => Err(format!("empty output dim {d}")),
        })
        .collect::<Result<_, _>>()?;
    if in_shape.contains(&0) {
        return Err("cannot resize an empty tensor".into());
    }
    checked_numel(&out_shape)?;
    let plan = plan.ok_or("internal: a resize plan without static dims")?;
    let taps = in_shape
        .iter()
        .zip(&out_shape)
        .zip(plan)
        .map(|((&n_in, &n_out), p)| {
            // An axis that keeps its length, scale and crop is copied, as the
            // ONNX reference skips it.
            let same = n_in == n_out
                && (p.scale - 1.0).abs() <= 1e-9
                && (p.roi.0.abs() <= 1e-9 && (p.roi.1 - 1.0).abs() <= 1e-9);
            (0..n_out)
                .map(|o| {
                    if same {
                        return ResizeTaps::Taps(vec![(o, 1.0)]);
                    }
                    match resize_source(o, n_in, n_out, p, modes.coord) {
                        Some(src) => ResizeTaps::Taps(resize_taps(src, n_in, p.scale, &modes)),
                        None => ResizeTaps::Outside,
                    }
                })
                .collect()
        })
        .collect();
    Ok(ResizeRun {
        out_shape,
        taps,
        modes,
    })
}

fn sem_resize(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    let x = t[0];
    let run = resize_run(Resize::attrs(cx), &x.shape)?;
    let out_shape = run.out_shape.clone();
    let n_out = checked_numel(&out_shape)?;
    let r = x.rank();
    let st = strides(&x.shape);
    let ev = run.modes.extrapolation;
    let mut pos = vec![0usize; r];
    let dt = result_dtype(cx, 0, x.dtype);
    let outside = |pos: &[usize]| (0..r).any(|a| run.taps[a][pos[a]] == ResizeTaps::Outside);
    let has_outside = run.taps.iter().flatten().any(|t| *t == ResizeTaps::Outside);
    if run.modes.mode == "nearest" && !has_outside {
        let mut idx = Vec::with_capacity(n_out);
        for _ in 0..n_out {
            idx.push(
                (0..r)
                    .map(|a| match &run.taps[a][pos[a]] {
                        ResizeTaps::Taps(t) => t[0].0 * st[a],
                        ResizeTaps::Outside => 0,
                    })
                    .sum(),
            );
            next_index(&mut pos, &out_shape);
        }
        return Ok(vec![take(x, &idx, out_shape)?]);
    }
    let xs = x.to_f64();
    let mut out = Vec::with_capacity(n_out);
    let mut combos: Vec<(usize, f64)> = vec![];
    for _ in 0..n_out {
        if outside(&pos) {
            out.push(ev);
            next_index(&mut pos, &out_shape);
            continue;
        }
        // The weighted sum over the product of every axis' taps.
        combos.clear();
        combos.push((0, 1.0));
        for a in 0..r {
            let ResizeTaps::Taps(t) = &run.taps[a][pos[a]] else {
                continue;
            };
            combos = combos
                .iter()
                .flat_map(|&(o, w)| {
                    let sa = st[a];
                    t.iter().map(move |&(i, wt)| (o + i * sa, w * wt))
                })
                .collect();
        }
        out.push(combos.iter().map(|&(i, w)| w * xs[i]).sum());
        next_index(&mut pos, &out_shape);
    }
    Ok(vec![Tensor::from_f64(out_shape, dt, out)])
}

def_op! {
    /// Resample a tensor by nearest, (multi-)linear or (multi-)cubic interpolation (ONNX Resize)
    ///
    /// Exactly one of `scales` (floats; output dim = `floor(in * scale)`) or `sizes`
    /// (integers) gives the output shape, one entry per dim of `axes` (every dim without it;
    /// other dims keep their length). With `sizes`, `keep_aspect_ratio_policy` `not_larger`
    /// / `not_smaller` resizes every axis of `axes` by the smallest / largest ratio
    /// `sizes / in` (output `round_half_up(scale * in)`). `mode`: `nearest` (rounded per
    /// `nearest_mode`), `linear` or `cubic` (coefficient `cubic_coeff_a`), interpolated along
    /// every dim with edge values beyond the input, or with `exclude_outside` the weights of
    /// outside taps dropped and the rest renormalised; `antialias` stretches the linear or
    /// cubic filter by `1/scale` when downscaling. Output coordinate `x` maps to the input
    /// per `coordinate_transformation_mode`: `half_pixel` `(x + 0.5)/scale - 0.5`,
    /// `half_pixel_symmetric` (the same, shifted so the centres match when the length was
    /// rounded), `pytorch_half_pixel` (0 for length-1 outputs), `align_corners`
    /// `x*(in-1)/(out-1)`, `asymmetric` `x/scale`, `tf_crop_and_resize` (the crop `roi`,
    /// starts then ends of the resized dims in `[0, 1]` coordinates, resampled with
    /// align-corners spacing; outside the input the output is `extrapolation_value`; the
    /// output shape does not shrink with the crop, as in onnxruntime and the ONNX reference).
    pub Resize = "graph.resize" {
        operands { input: TensorOf(super::linalg::NUMERIC) },
        results { output: TensorOf(super::linalg::NUMERIC) },
        attrs {
            /// interpolation mode
            mode: Enum(RESIZE_MODES) = "nearest",
            /// scale per resized dim (exclusive with sizes)
            scales: Option<F64Array>,
            /// output length per resized dim (exclusive with scales)
            sizes: Option<I64Array>,
            /// how output coordinates map to input coordinates
            coordinate_transformation_mode: Enum(COORD_MODES) = "half_pixel",
            /// rounding of the source coordinate in nearest mode
            nearest_mode: Enum(NEAREST_MODES) = "round_prefer_floor",
            /// the cubic kernel's coefficient
            cubic_coeff_a: F64 = -0.75,
            /// 1: taps outside the input weigh nothing (the rest renormalised)
            exclude_outside: I64 = 0,
            /// 1: stretch the linear or cubic filter when downscaling
            antialias: I64 = 0,
            /// the crop of tf_crop_and_resize: starts, then ends, of the resized dims
            roi: Option<F64Array>,
            /// the output outside the input under tf_crop_and_resize
            extrapolation_value: F64 = 0.0,
            /// the dims that scales, sizes and roi refer to (default: every dim)
            axes: Option<I64Array>,
            /// how sizes keep the input's aspect ratio
            keep_aspect_ratio_policy: Enum(ASPECT_POLICIES) = "stretch",
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_resize,
        semantics: sem_resize,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            IMAGE_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Sample,
        ],
        es,
    }
}

// ---- pad --------------------------------------------------------------------

const PAD_MODES: &[&str] = &["constant", "reflect", "edge", "wrap"];

/// The begin and end amounts of every dim of a rank-`rank` input: `pads` as
/// given, or, with `axes`, spread over those dims (negative axes count from
/// the end; the other dims get 0).
pub fn full_pads(a: PadAttrView, rank: usize) -> Result<Vec<i64>, String> {
    let pads = a.pads().ok_or("requires attribute 'pads'")?;
    let axes = a.axes();
    let n = if axes.is_empty() { rank } else { axes.len() };
    if pads.len() != 2 * n {
        return Err(format!(
            "attribute 'pads' must have 2 x {} = {} entries (all begins, then all ends), but has {}",
            if axes.is_empty() { "rank" } else { "len(axes)" },
            2 * n,
            pads.len()
        ));
    }
    if axes.is_empty() {
        return Ok(pads);
    }
    let mut full = vec![0i64; 2 * rank];
    let mut seen = vec![false; rank];
    for (k, &a) in axes.iter().enumerate() {
        let r = rank as i64;
        let ax = if a < 0 { a + r } else { a };
        if !(0..r).contains(&ax) {
            return Err(format!("axis {a} is out of range for rank {rank}"));
        }
        let ax = ax as usize;
        if std::mem::replace(&mut seen[ax], true) {
            return Err(format!("axis {a} is given twice in 'axes'"));
        }
        full[ax] = pads[k];
        full[rank + ax] = pads[n + k];
    }
    Ok(full)
}

fn pad_attrs(a: PadAttrView, rank: usize) -> Result<(Vec<i64>, &'static str, f64), String> {
    let pads = full_pads(a, rank)?;
    let mode = a.mode();
    if !PAD_MODES.contains(&mode) {
        return Err(format!(
            "attribute 'mode' must be one of {}, but got '{mode}'",
            PAD_MODES.join(", ")
        ));
    }
    let value = a.value();
    Ok((pads, mode, value))
}

fn infer_pad(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    let dt = dtype_of(t)?;
    let Some(d) = dims(t, "input")? else {
        return Ok(vec![Type::unranked(dt)]);
    };
    let (pads, mode, _) = pad_attrs(Pad::attrs(cx), d.len())?;
    let r = d.len();
    let mut out = Vec::with_capacity(r);
    for a in 0..r {
        let o = d[a].add(Dim::Static(pads[a].saturating_add(pads[a + r])));
        if let Some(n) = o.as_static() {
            if n < 0 {
                return Err(format!(
                    "pads {pads:?} remove more than dim {a} ({}) holds",
                    d[a]
                ));
            }
        }
        if mode != "constant" && (pads[a] > 0 || pads[a + r] > 0) && d[a] == Dim::Static(0) {
            return Err(format!("mode '{mode}' cannot pad the empty dim {a}"));
        }
        out.push(o);
    }
    Ok(vec![Type::tensor(&out, dt)])
}

fn sem_pad(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    let x = t[0];
    let r = x.rank();
    let (pads, mode, value) = pad_attrs(Pad::attrs(cx), r)?;
    let mut out_shape = Vec::with_capacity(r);
    for a in 0..r {
        let n = x.shape[a] as i64;
        let len = n.saturating_add(pads[a]).saturating_add(pads[a + r]);
        if len < 0 {
            return Err(format!(
                "pads {pads:?} remove more than dim {a} ({n}) holds"
            ));
        }
        out_shape.push(len as usize);
    }
    let total = checked_numel(&out_shape)?;
    // Source coordinate of each output coordinate, per axis (None = pad value).
    let mut maps: Vec<Vec<Option<usize>>> = Vec::with_capacity(r);
    for a in 0..r {
        let n = x.shape[a] as i64;
        let mut m = Vec::with_capacity(out_shape[a]);
        for o in 0..out_shape[a] as i64 {
            let i = o.saturating_sub(pads[a]);
            m.push(if (0..n).contains(&i) {
                Some(i as usize)
            } else if n == 0 {
                if mode == "constant" {
                    None
                } else {
                    return Err(format!("mode '{mode}' cannot pad the empty dim {a}"));
                }
            } else {
                match mode {
                    "constant" => None,
                    "edge" => Some(i.clamp(0, n - 1) as usize),
                    "wrap" => Some(i.rem_euclid(n) as usize),
                    _ => {
                        if n == 1 {
                            Some(0)
                        } else {
                            let period = 2 * (n - 1);
                            let k = i.rem_euclid(period);
                            Some(if k >= n { period - k } else { k } as usize)
                        }
                    }
                }
            });
        }
        maps.push(m);
    }
    let st = strides(&x.shape);
    let mut pos = vec![0usize; r];
    let mut src: Vec<Option<usize>> = Vec::with_capacity(total);
    for _ in 0..total {
        let mut flat = Some(0);
        for a in 0..r {
            flat = match (flat, maps[a][pos[a]]) {
                (Some(f), Some(i)) => Some(f + i * st[a]),
                _ => None,
            };
        }
        src.push(flat);
        next_index(&mut pos, &out_shape);
    }
    let dt = x.dtype;
    let out = match &x.data {
        Data::F(v) => Tensor::from_f64(
            out_shape,
            dt,
            src.iter().map(|s| s.map_or(value, |i| v[i])).collect(),
        ),
        Data::I(v) => {
            let fill = Tensor::scalar(dt, value).get_i(0);
            Tensor::from_i64(
                out_shape,
                dt,
                src.iter().map(|s| s.map_or(fill, |i| v[i])).collect(),
            )
        }
    };
    Ok(vec![out])
}

def_op! {
    /// Pad (or crop, with negative pads) a tensor (ONNX Pad)
    ///
    /// `pads` lists the amount added at the beginning of every dim, then at the end of every
    /// dim (`[x1_begin, x2_begin, ..., x1_end, x2_end, ...]`); negative amounts remove
    /// elements. `mode`: `constant` fills with `value`, `reflect` mirrors without repeating the
    /// edge, `edge` repeats the edge, `wrap` wraps around. ONNX's `pads`, `constant_value` and
    /// `axes` operands become attributes (importers fold the constants).
    pub Pad = "graph.pad" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// begin amounts of every dim, then end amounts
            pads: I64Array,
            /// how padded elements are filled
            mode: Enum(PAD_MODES) = "constant",
            /// fill value of constant mode
            value: F64 = 0.0,
            /// the dims `pads` lists, in its order (every dim when empty)
            axes: I64Array = [],
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_pad,
        semantics: sem_pad,
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

pub static OPS: &[&OpDef] = &[
    &GATHER,
    &GATHER_ELEMENTS,
    &SCATTER_ELEMENTS,
    &EMBEDDING,
    &TOPK,
    &RESIZE,
    &PAD,
];
