//! ai.onnx.ml ops with tensor semantics: Binarizer and ArrayFeatureExtractor
//! are compositions of graph ops (where/greater, gather); TreeEnsemble maps
//! to `graph.tree_ensemble` (dialects/src/graph/tree_ensemble.rs).

use super::{invalid, one, op2, reshape, scalar_like, static_shape, unsupported, Cx, Node, Res};
use crate::onnx::tensor::tensor_value;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::DType;

/// `x > threshold ? 1 : 0` in x's type (NaN gives 0).
pub fn binarizer(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let t = n.f("threshold", 0.0)? as f64;
    let dt = cx.e.dtype(x)?;
    // An integer x is compared with the threshold in f64 (numpy): x > t is
    // x > floor(t), a threshold an integer type holds once clamped.
    let t = if dt.is_float() {
        t
    } else if t.is_nan() {
        f64::INFINITY
    } else {
        t.floor()
    };
    let t = match dt {
        DType::I32 => t.clamp(i32::MIN as f64, i32::MAX as f64),
        DType::I64 => t.clamp(i64::MIN as f64, i64::MAX as f64),
        DType::F64 | DType::F32 => t,
        _ => {
            return Err(unsupported(
                n,
                format!("on '{}' (float, double, int32 and int64 are)", cx.e.ty(x)),
            ))
        }
    };
    let k = scalar_like(cx, x, t)?;
    let c = op2(cx, "graph.greater", x, k)?;
    let (one_, zero) = (scalar_like(cx, x, 1.0)?, scalar_like(cx, x, 0.0)?);
    one(cx.e.op("graph.where", &[c, one_, zero], vec![])?)
}

/// `X[..., indices]` with the indices flattened; a 1-D X gives `[1, k]`.
pub fn array_feature_extractor(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, idx) = (n.input(0)?, n.input(1)?);
    let xd = static_shape(cx, n, x, "X")?;
    if xd.is_empty() {
        return Err(invalid(n, "X must have rank >= 1"));
    }
    let k: i64 = static_shape(cx, n, idx, "Y (the indices)")?
        .iter()
        .product();
    let flat = reshape(cx, idx, &[k])?;
    let flat = super::cast(cx, flat, DType::I64)?;
    let g = cx.e.op(
        "graph.gather",
        &[x, flat],
        vec![("axis", Attribute::i64(xd.len() as i64 - 1))],
    )?;
    if xd.len() == 1 {
        return one(reshape(cx, g, &[1, k])?);
    }
    one(g)
}

/// A TENSOR attribute's values as f64 (`None` when absent).
fn tensor_f64s(cx: &Cx, n: &Node, name: &str) -> Res<Option<Vec<f64>>> {
    match n.tensor(name) {
        None => Ok(None),
        Some(t) => Ok(Some(tensor_value(t, &cx.model.base)?.to_f64())),
    }
}

fn required<T>(n: &Node, v: Option<T>, name: &str) -> Res<T> {
    v.ok_or_else(|| invalid(n, format!("requires attribute '{name}'")))
}

pub fn tree_ensemble(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let post = n.i("post_transform", 0)?;
    if post != 0 {
        return Err(unsupported(
            n,
            format!("with post_transform {post} (only 0, NONE, is)"),
        ));
    }
    let agg = match n.i("aggregate_function", 1)? {
        0 => "AVERAGE",
        1 => "SUM",
        2 => "MIN",
        3 => "MAX",
        v => {
            return Err(invalid(
                n,
                format!("aggregate_function must be 0..=3 (AVERAGE, SUM, MIN, MAX), got {v}"),
            ))
        }
    };
    let ints = |name: &str| required(n, n.ints(name), name);
    let modes: Vec<i64> = required(n, tensor_f64s(cx, n, "nodes_modes")?, "nodes_modes")?
        .into_iter()
        .map(|m| m as i64)
        .collect();
    let mut splits = required(n, tensor_f64s(cx, n, "nodes_splits")?, "nodes_splits")?;
    // A membership node's split is unused (often NaN): kept out of the IR.
    for (s, &m) in splits.iter_mut().zip(&modes) {
        if m == 6 {
            *s = 0.0;
        }
    }
    let weights = required(n, tensor_f64s(cx, n, "leaf_weights")?, "leaf_weights")?;
    let targets = ints("leaf_targetids")?;
    let n_targets = match n.opt_i("n_targets")? {
        Some(t) => t,
        None => targets.iter().max().map_or(0, |m| m + 1),
    };
    // ONNX lists the sets NaN-delimited; the op takes values and sizes.
    let mut values = vec![];
    let mut counts = vec![];
    let mut run = 0i64;
    for v in tensor_f64s(cx, n, "membership_values")?.unwrap_or_default() {
        if v.is_nan() {
            counts.push(run);
            run = 0;
        } else {
            values.push(v);
            run += 1;
        }
    }
    if run > 0 {
        counts.push(run);
    }
    let floats = |v: &[f64]| Attribute::array(v.iter().map(|&f| Attribute::f64(f)).collect());
    let mut attrs = vec![
        ("n_targets", Attribute::i64(n_targets)),
        ("aggregate_function", Attribute::string(agg)),
        ("tree_roots", Attribute::i64_array(&ints("tree_roots")?)),
        ("nodes_modes", Attribute::i64_array(&modes)),
        (
            "nodes_featureids",
            Attribute::i64_array(&ints("nodes_featureids")?),
        ),
        ("nodes_splits", floats(&splits)),
        (
            "nodes_truenodeids",
            Attribute::i64_array(&ints("nodes_truenodeids")?),
        ),
        (
            "nodes_falsenodeids",
            Attribute::i64_array(&ints("nodes_falsenodeids")?),
        ),
        (
            "nodes_trueleafs",
            Attribute::i64_array(&ints("nodes_trueleafs")?),
        ),
        (
            "nodes_falseleafs",
            Attribute::i64_array(&ints("nodes_falseleafs")?),
        ),
        ("leaf_targetids", Attribute::i64_array(&targets)),
        ("leaf_weights", floats(&weights)),
    ];
    if let Some(m) = n.ints("nodes_missing_value_tracks_true") {
        attrs.push(("nodes_missing_value_tracks_true", Attribute::i64_array(&m)));
    }
    if !counts.is_empty() {
        attrs.push(("membership_values", floats(&values)));
        attrs.push(("membership_counts", Attribute::i64_array(&counts)));
    }
    one(cx.e.op("graph.tree_ensemble", &[x], attrs)?)
}
