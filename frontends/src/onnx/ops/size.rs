//! Ops whose output size depends on the values of their inputs (issue 15
//! item 3, docs/architecture.md "Execution modes", size symbols): Unique and
//! NonMaxSuppression become size ops with a fresh symbol named after the
//! output and bounded from the operands' static shapes (NonZero and
//! Compress are in shape.rs). A constant operand is computed at import.

use super::{invalid, unsupported, Cx, Node, Res};
use ge_dialects::data::unique::{unique_axis, unique_tensors};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

/// The largest size of each dim of `v` — static, or an expression of
/// symbols that have upper bounds (TopK's K, an earlier size op's count) —
/// or an unsupported error naming the flag that makes them static.
fn bound_dims(cx: &Cx, n: &Node, v: ValueId, what: &str) -> Res<Vec<usize>> {
    let t = cx.e.ty(v);
    t.as_tensor()
        .and_then(|t| t.dims.as_ref())
        .and_then(|d| {
            d.iter()
                .map(|&d| cx.symbols.upper_bound(d).and_then(|d| usize::try_from(d).ok()))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| {
            unsupported(n, format_args!(
                "of {what} '{t}' (dynamic dims without an upper bound: its size symbol needs one; give the input a static shape with --input_shape)"
            ))
        })
}

/// A fresh size symbol named after the node's first output, bounded.
fn size_symbol(cx: &mut Cx, n: &Node, bound: usize) -> String {
    let out = n.output_names.first().map_or("size", String::as_str);
    let sym = cx.symbols.fresh(&format!("{out}_count"));
    cx.symbols.bounds.insert(sym.clone(), bound as i64);
    sym
}

/// ONNX Unique: `data.unique` (outputs Y, indices, inverse_indices, counts;
/// Y, indices and counts sized by the symbol).
pub fn unique(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let sorted = n.i("sorted", 1)?;
    let axis = if n.has("axis") {
        Some(n.i("axis", 0)?)
    } else {
        None
    };
    let dims = bound_dims(cx, n, x, "input")?;
    let ax = unique_axis(axis, dims.len()).map_err(|m| invalid(n, m))?;
    if cx.is_const(x) {
        let t = cx.const_tensor(x, "X")?;
        let r = unique_tensors(&t, ax, sorted != 0);
        return r[..4].iter().map(|t| Ok(cx.e.constant(t)?)).collect();
    }
    let bound = match ax {
        None => dims.iter().product(),
        Some(a) => dims[a],
    };
    let sym = size_symbol(cx, n, bound);
    let mut attrs = vec![
        ("count", Attribute::string(&sym)),
        ("sorted", Attribute::i64(sorted)),
    ];
    if let Some(a) = axis {
        attrs.push(("axis", Attribute::i64(a)));
    }
    let r = cx.e.op_multi("data.unique", &[x], attrs, None)?;
    Ok(r[..4].to_vec())
}

/// ONNX NonMaxSuppression: `data.non_max_suppression` with the optional
/// scalar inputs filled in (no boxes, IoU 0, no score threshold: `-inf`);
/// the bound is `batches * classes * boxes`, or `* min(max, boxes)` when
/// `max_output_boxes_per_class` is a constant.
pub fn non_max_suppression(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (boxes, scores) = (n.input(0)?, n.input(1)?);
    let center = n.i("center_point_box", 0)?;
    if !(0..=1).contains(&center) {
        return Err(invalid(
            n,
            format!("center_point_box must be 0 or 1, not {center}"),
        ));
    }
    let sd = bound_dims(cx, n, scores, "scores")?;
    bound_dims(cx, n, boxes, "boxes")?;
    let &[b, c, nb] = sd.as_slice() else {
        return Err(invalid(n, format!("scores must be rank 3, not {:?}", sd)));
    };
    let scalar = |cx: &mut Cx, dt: DType, v: f64| -> Res<ValueId> {
        Ok(cx.e.constant(&Tensor::from_f64(vec![1], dt, vec![v]))?)
    };
    let max = match n.opt_input(2) {
        Some(v) => v,
        None => scalar(cx, DType::I64, 0.0)?,
    };
    let iou = match n.opt_input(3) {
        Some(v) => v,
        None => scalar(cx, DType::F32, 0.0)?,
    };
    let th = match n.opt_input(4) {
        Some(v) => v,
        None => scalar(cx, DType::F32, f64::NEG_INFINITY)?,
    };
    let per_class = match cx.e.const_value(max) {
        Some(t) if t.len() == 1 => usize::try_from(t.get_i(0).max(0))
            .unwrap_or(usize::MAX)
            .min(nb),
        _ => nb,
    };
    let bound = b
        .checked_mul(c)
        .and_then(|x| x.checked_mul(per_class))
        .ok_or_else(|| invalid(n, "the bound of its output size overflows"))?;
    let sym = size_symbol(cx, n, bound);
    let r = cx.e.op_multi(
        "data.non_max_suppression",
        &[boxes, scores, max, iou, th],
        vec![
            ("count", Attribute::string(&sym)),
            ("center_point_box", Attribute::i64(center)),
        ],
        None,
    )?;
    Ok(vec![r[0]])
}
