//! `data.non_max_suppression` (ONNX NonMaxSuppression, opset 10+): the boxes
//! kept per batch and class, a data-dependent size (issue 15 item 3,
//! docs/architecture.md "Execution modes", size symbols). The number of
//! selected boxes is the size symbol named by `count`, at most
//! `batches * classes * min(max_output_boxes_per_class, boxes)`: its bound.
//! The algorithm ([`nms`], onnxruntime's) is shared by the reference
//! semantics and the native kernel (`runtime/src/kernels/nms.rs`).

use super::size::size_symbol;
use super::{dtype_of, operand, ranked_dims};
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim, Type};

/// The scalar parameters of one NonMaxSuppression.
#[derive(Clone, Copy, Debug)]
pub struct NmsParams {
    pub max_per_class: i64,
    pub iou_threshold: f64,
    /// Boxes scoring at most this are dropped (`None`: none dropped).
    pub score_threshold: Option<f64>,
    /// Boxes are `[x_center, y_center, width, height]`, else `[y1, x1, y2, x2]`.
    pub center_point_box: bool,
}

impl NmsParams {
    /// The parameters from the op's scalar operands (a score threshold of
    /// `-inf` is none: the importer's default).
    pub fn new(max_per_class: i64, iou_threshold: f64, score_threshold: f64, center: bool) -> Self {
        NmsParams {
            max_per_class,
            iou_threshold,
            score_threshold: (score_threshold != f64::NEG_INFINITY).then_some(score_threshold),
            center_point_box: center,
        }
    }
}

/// Checks `boxes` and `scores` element counts against `(batches, classes,
/// boxes)`, so that [`nms`] indexes within them.
pub fn nms_check(
    boxes: usize,
    scores: usize,
    (b, c, n): (usize, usize, usize),
) -> Result<(), String> {
    let want = (
        b.checked_mul(n).and_then(|x| x.checked_mul(4)),
        b.checked_mul(c).and_then(|x| x.checked_mul(n)),
    );
    if want != (Some(boxes), Some(scores)) {
        return Err(format!(
            "non_max_suppression: {boxes} box numbers and {scores} scores do not fit {b} batches, {c} classes, {n} boxes"
        ));
    }
    Ok(())
}

/// Corners `(y_min, x_min, y_max, x_max)` of box `b` (4 numbers).
fn corners(b: &[f64], center: bool) -> (f64, f64, f64, f64) {
    if center {
        let (xc, yc, w, h) = (b[0], b[1], b[2], b[3]);
        (yc - h / 2.0, xc - w / 2.0, yc + h / 2.0, xc + w / 2.0)
    } else {
        (
            b[0].min(b[2]),
            b[1].min(b[3]),
            b[0].max(b[2]),
            b[1].max(b[3]),
        )
    }
}

/// Whether `a` and `b` overlap by more than `th` (intersection over union;
/// onnxruntime's `SuppressByIOU`: empty boxes never suppress).
fn suppresses(a: &[f64], b: &[f64], th: f64, center: bool) -> bool {
    let (ay0, ax0, ay1, ax1) = corners(a, center);
    let (by0, bx0, by1, bx1) = corners(b, center);
    let (ix0, ix1) = (ax0.max(bx0), ax1.min(bx1));
    let (iy0, iy1) = (ay0.max(by0), ay1.min(by1));
    if ix1 <= ix0 || iy1 <= iy0 {
        return false;
    }
    let inter = (ix1 - ix0) * (iy1 - iy0);
    let (aa, ab) = ((ax1 - ax0) * (ay1 - ay0), (bx1 - bx0) * (by1 - by0));
    let union = aa + ab - inter;
    if aa <= 0.0 || ab <= 0.0 || union <= 0.0 {
        return false;
    }
    inter / union > th
}

/// The selected `(batch, class, box)` triples of NonMaxSuppression over
/// `boxes` `[batches, n, 4]` and `scores` `[batches, classes, n]`, per batch
/// and class in order of selection: highest score first (ties: lower box
/// index), kept unless it overlaps a kept box by more than the IoU
/// threshold, at most `max_per_class` per class.
pub fn nms(
    boxes: &[f64],
    scores: &[f64],
    (batches, classes, n): (usize, usize, usize),
    p: NmsParams,
) -> Vec<[i64; 3]> {
    let mut out = vec![];
    let max = usize::try_from(p.max_per_class.max(0)).unwrap_or(usize::MAX);
    for b in 0..batches {
        let bx = &boxes[b * n * 4..(b + 1) * n * 4];
        for c in 0..classes {
            let sc = &scores[(b * classes + c) * n..(b * classes + c + 1) * n];
            let mut cand: Vec<usize> = (0..n)
                .filter(|&i| p.score_threshold.is_none_or(|t| sc[i] > t))
                .collect();
            // Stable: equal scores keep the lower index first.
            cand.sort_by(|&i, &j| sc[j].total_cmp(&sc[i]));
            let mut kept: Vec<usize> = vec![];
            for i in cand {
                if kept.len() >= max {
                    break;
                }
                let bi = &bx[i * 4..i * 4 + 4];
                if !kept.iter().any(|&k| {
                    suppresses(
                        bi,
                        &bx[k * 4..k * 4 + 4],
                        p.iou_threshold,
                        p.center_point_box,
                    )
                }) {
                    kept.push(i);
                }
            }
            out.extend(kept.iter().map(|&i| [b as i64, c as i64, i as i64]));
        }
    }
    out
}

/// `(batches, classes, boxes)` of the two tensor operands' dims, checked.
fn nms_dims(boxes: &[Dim], scores: &[Dim]) -> Result<(Dim, Dim, Dim), String> {
    let [b, n, four] = boxes else {
        return Err(format!(
            "operand 'boxes' must be [batches, boxes, 4], but has rank {}",
            boxes.len()
        ));
    };
    let [sb, c, sn] = scores else {
        return Err(format!(
            "operand 'scores' must be [batches, classes, boxes], but has rank {}",
            scores.len()
        ));
    };
    if four.as_static() != Some(4) {
        return Err(format!("operand 'boxes' must end in 4, not {four}"));
    }
    if !b.compatible(*sb) || !n.compatible(*sn) {
        return Err(format!(
            "operands 'boxes' [{b}, {n}, 4] and 'scores' [{sb}, {c}, {sn}] disagree on batches or boxes"
        ));
    }
    Ok((*b, *c, *n))
}

fn infer_nms(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let boxes = ranked_dims(operand(cx, 0)?, "operand 'boxes'")?;
    let scores = ranked_dims(operand(cx, 1)?, "operand 'scores'")?;
    nms_dims(&boxes, &scores)?;
    for (i, what, int) in [
        (0, "boxes", false),
        (1, "scores", false),
        (2, "max_output_boxes_per_class", true),
        (3, "iou_threshold", false),
        (4, "score_threshold", false),
    ] {
        let t = operand(cx, i)?;
        let dt = dtype_of(t)?;
        if dt.is_float() == int {
            let want = if int { "an integer" } else { "a float" };
            return Err(format!("operand '{what}' must be {want} tensor, not '{t}'"));
        }
        if i >= 2 {
            let d = ranked_dims(t, &format!("operand '{what}'"))?;
            if !d.iter().all(|d| d.as_static() == Some(1)) {
                return Err(format!("operand '{what}' must be one element, not '{t}'"));
            }
        }
    }
    let text = NonMaxSuppression::attrs(cx)
        .count()
        .ok_or("requires attribute 'count' (a symbol)")?;
    let k = size_symbol(text)?;
    if boxes
        .iter()
        .chain(&scores)
        .any(|d| super::size::mentions(*d, k))
    {
        return Err(format!(
            "the size symbol {k} must be fresh, but the operands' dims use it"
        ));
    }
    Ok(vec![
        Type::tensor(&[k, Dim::Static(3)], DType::I64),
        Type::tensor(&[], DType::I64),
    ])
}

fn sem_nms(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let (b, s) = (x[0], x[1]);
    let &[nb, nc, nn] = s.shape.as_slice() else {
        return Err("non_max_suppression: scores must be rank 3".into());
    };
    let dims = (nb, nc, nn);
    nms_check(b.len(), s.len(), dims)?;
    if x[2..].iter().any(|t| t.is_empty()) {
        return Err("non_max_suppression: a scalar operand is empty".into());
    }
    let p = NmsParams::new(
        x[2].get_i(0),
        x[3].get_f(0),
        x[4].get_f(0),
        NonMaxSuppression::attrs(cx).center_point_box() != 0,
    );
    let sel = nms(&b.to_f64(), &s.to_f64(), dims, p);
    Ok(vec![
        Tensor::from_i64(
            vec![sel.len(), 3],
            DType::I64,
            sel.iter().flatten().copied().collect(),
        ),
        Tensor::from_i64(vec![], DType::I64, vec![sel.len() as i64]),
    ])
}

/// The bound of a `data.non_max_suppression`'s size symbol from its
/// operands' types alone: `batches * classes * boxes`, when static (the
/// ONNX importer tightens it when `max_output_boxes_per_class` is a
/// constant).
pub fn nms_bound(scores: Type) -> Option<i64> {
    let d = scores.as_tensor()?.dims.as_ref()?.to_vec();
    d.iter()
        .try_fold(1i64, |a, d| a.checked_mul(d.as_static()?))
}

def_op! {
    /// The boxes kept by non-maximum suppression (ONNX NonMaxSuppression), a data-dependent size
    ///
    /// `%s, %k = data.non_max_suppression %boxes, %scores, %max, %iou, %th {count = "K"} :
    /// (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) ->
    /// (tensor<Kx3xi64>, tensor<i64>)`: rows `[batch, class, box]`; `K` is a size symbol, at
    /// most `batches * classes * min(max, boxes)` (its bound in `ge.symbol_bounds`), bound to
    /// `%k` after the op ran. The score threshold is strict (`score > th`): the importer
    /// passes `-inf` for none.
    pub NonMaxSuppression = "data.non_max_suppression" {
        operands {
            boxes: AnyTensor,
            scores: AnyTensor,
            max_output_boxes_per_class: AnyTensor,
            iou_threshold: AnyTensor,
            score_threshold: AnyTensor,
        },
        results { selected_indices: AnyTensor, size: AnyTensor },
        attrs {
            /// the size symbol: the number of selected boxes
            count: Str,
            /// 1: boxes are [x_center, y_center, width, height]; 0: [y1, x1, y2, x2]
            center_point_box: I64 = 0,
        },
        traits [Pure],
        format: "operands attr-dict `:` functional-type(operands, results)",
        verify: crate::graph::opkit::verify_by_infer,
        infer: infer_nms,
        semantics: sem_nms,
        // Not free: it sorts every class's scores and compares boxes.
        interfaces [Cost::ELEMENTWISE, CPU_ENGINES, PrecisionClass::Gray, KernelFamily::Index],
        es(none = "an importer op for ONNX NonMaxSuppression"),
    }
}

pub static OPS: &[&OpDef] = &[&NON_MAX_SUPPRESSION];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suppresses_overlaps_and_keeps_order() {
        // Boxes 0 and 1 overlap (IoU 0.81), box 2 apart.
        let boxes = [0.0, 0.0, 1.0, 1.0, 0.0, 0.1, 1.0, 1.1, 0.0, 10.0, 1.0, 11.0];
        let scores = [0.9, 0.95, 0.5];
        let p = NmsParams {
            max_per_class: 3,
            iou_threshold: 0.5,
            score_threshold: None,
            center_point_box: false,
        };
        assert_eq!(
            nms(&boxes, &scores, (1, 1, 3), p),
            vec![[0, 0, 1], [0, 0, 2]]
        );
        let p = NmsParams {
            iou_threshold: 0.9,
            ..p
        };
        assert_eq!(nms(&boxes, &scores, (1, 1, 3), p).len(), 3);
        let p = NmsParams {
            score_threshold: Some(0.9),
            ..p
        };
        assert_eq!(nms(&boxes, &scores, (1, 1, 3), p), vec![[0, 0, 1]]);
    }
}
