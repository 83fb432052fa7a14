//! `data.non_max_suppression` (ONNX NonMaxSuppression), a size op
//! (docs/architecture.md "Execution modes", size symbols): the selected
//! `[batch, class, box]` rows, written at the count at the start of the
//! `[bound, 3]` buffer, and the count as the second result, which the
//! executor reads after the launch to bind the symbol. The algorithm is the
//! op's own (`ge_dialects::data::nms::nms`).

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f64, load_i64, store_i64};
use ge_dialects::data::nms::{nms, nms_check, NmsParams};

#[derive(Clone, Debug)]
pub struct Nms {
    pub center_point_box: bool,
}

/// The one element of a scalar operand (checked: one element).
fn scalar_f(s: &Slot, what: &str) -> Result<f64, String> {
    if s.numel() != 1 {
        return Err(format!(
            "non_max_suppression: {what} has {} elements, not 1",
            s.numel()
        ));
    }
    let mut v = [0f64];
    load_f64(s.dtype, s.ptr, 0, &mut v);
    Ok(v[0])
}

impl Kernel for Nms {
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], _par: &Par) -> Result<(), String> {
        let (&[boxes, scores, max, iou, th], &[sel, size]) = (ins, outs) else {
            return Err("non_max_suppression takes 5 operands and gives 2 results".into());
        };
        let &[b, c, n] = scores.shape.as_slice() else {
            return Err(format!(
                "non_max_suppression: scores {:?} are not rank 3",
                scores.shape
            ));
        };
        nms_check(boxes.numel(), scores.numel(), (b, c, n))?;
        if max.numel() != 1 || !max.dtype.is_int() {
            return Err(
                "non_max_suppression: max_output_boxes_per_class is not one integer".into(),
            );
        }
        if sel.shape.len() != 2 || sel.shape[1] != 3 || !sel.dtype.is_int() || size.numel() != 1 {
            return Err(format!(
                "non_max_suppression cannot fill {:?} {} and {:?}",
                sel.shape, sel.dtype, size.shape
            ));
        }
        let mut m = [0i64];
        load_i64(max.dtype, max.ptr, 0, &mut m);
        let p = NmsParams::new(
            m[0],
            scalar_f(iou, "iou_threshold")?,
            scalar_f(th, "score_threshold")?,
            self.center_point_box,
        );
        let mut bx = vec![0f64; boxes.numel()];
        load_f64(boxes.dtype, boxes.ptr, 0, &mut bx);
        let mut sc = vec![0f64; scores.numel()];
        load_f64(scores.dtype, scores.ptr, 0, &mut sc);
        let rows = nms(&bx, &sc, (b, c, n), p);
        // The buffer holds `[planned, 3]`; the result is its first rows.
        if rows.len() > sel.shape[0] {
            return Err(format!(
                "non_max_suppression selected {} boxes, more than the {} planned",
                rows.len(),
                sel.shape[0]
            ));
        }
        let flat: Vec<i64> = rows.iter().flatten().copied().collect();
        store_i64(sel.dtype, sel.ptr, 0, &flat);
        store_i64(size.dtype, size.ptr, 0, &[rows.len() as i64]);
        Ok(())
    }
}
