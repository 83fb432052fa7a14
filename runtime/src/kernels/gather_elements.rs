//! `graph.gather_elements` (ONNX GatherElements): `out[p] = input[p with
//! its axis coordinate replaced by indices[p]]`, on any dtype (elements are
//! moved as bytes), with i32 or i64 indices (negative ones count from the
//! end; out of range is an error).
//!
//! The output is walked row by row (a row: the last dim): the input offset
//! of a row's other coordinates is computed once per row, so each element
//! costs one index load, one bounds check and one copy.

use super::{Kernel, Par, Slot};
use crate::shared::Shared;
use ge_ir::DType;

#[derive(Clone, Debug)]
pub struct GatherElements {
    pub axis: i64,
}

impl Kernel for GatherElements {
    /// Copies element bytes: f64 as well.
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x, ind], &[y]) = (ins, outs) else {
            return Err("gather_elements takes 2 operands and gives 1 result".into());
        };
        let r = x.shape.len();
        let ax = super::norm::norm_axis(self.axis, r)?;
        if ind.shape.len() != r || y.shape != ind.shape || y.dtype != x.dtype {
            return Err(format!(
                "gather_elements of {:?} by {:?} into {:?}",
                x.shape, ind.shape, y.shape
            ));
        }
        if (0..r).any(|k| k != ax && ind.shape[k] > x.shape[k]) {
            return Err(format!(
                "indices shape {:?} exceeds input shape {:?}",
                ind.shape, x.shape
            ));
        }
        if y.numel() == 0 {
            return Ok(());
        }
        match ind.dtype {
            DType::I64 => gather::<i64>(ax, x, ind, y, par),
            DType::I32 => gather::<i32>(ax, x, ind, y, par),
            d => Err(format!("gather_elements indices of type {d}")),
        }
    }
}

/// Copy one element of `es` bytes.
///
/// # Safety
/// `src` and `dst` are valid for `es` bytes.
#[inline(always)]
pub(crate) unsafe fn copy_elem(es: usize, src: *const u8, dst: *mut u8) {
    match es {
        1 => *dst = *src,
        2 => (dst as *mut u16).write_unaligned((src as *const u16).read_unaligned()),
        4 => (dst as *mut u32).write_unaligned((src as *const u32).read_unaligned()),
        8 => (dst as *mut u64).write_unaligned((src as *const u64).read_unaligned()),
        _ => std::ptr::copy_nonoverlapping(src, dst, es),
    }
}

fn gather<I: Copy + Into<i64> + Sync>(
    ax: usize,
    x: &Slot,
    ind: &Slot,
    y: &Slot,
    par: &Par,
) -> Result<(), String> {
    let r = x.shape.len();
    let es = x.dtype.byte_size();
    let xst = ge_ir::tensor::strides(&x.shape);
    let (xs, ys) = (&x.shape[..], &y.shape[..]);
    let w = ys[r - 1];
    let rows = y.numel() / w;
    let (n, step) = (xs[ax] as i64, xst[ax]);
    let (xp, ip, yp) = (
        Shared(x.ptr as *const u8),
        Shared(ind.ptr as *const I),
        Shared(y.ptr),
    );
    let tasks = rows.min(par.threads() * 4).max(1);
    let per = rows.div_ceil(tasks);
    par.run(tasks, y.numel() > 1 << 14, &|t| {
        for row in t * per..((t + 1) * per).min(rows) {
            // The input offset of this row's coordinates other than the axis
            // (the last dim counts when it is not the axis).
            let mut rest = row;
            let mut base = 0usize;
            for k in (0..r - 1).rev() {
                let c = rest % ys[k];
                rest /= ys[k];
                if k != ax {
                    base += c * xst[k];
                }
            }
            // SAFETY: row `row` of the indices and of the output (same shape,
            // w elements) is inside both slots; the input element read has
            // every coordinate in range (other dims: indices' dims do not
            // exceed the input's, checked by `run`; the axis: checked here).
            unsafe {
                let idx = std::slice::from_raw_parts(ip.p().add(row * w), w);
                let dst = yp.p().add(row * w * es);
                for (j, &i) in idx.iter().enumerate() {
                    let raw: i64 = i.into();
                    let i = if raw < 0 { raw + n } else { raw };
                    if !(0..n).contains(&i) {
                        return Err(format!(
                            "gather_elements index {raw} out of range for a dim of {n}"
                        ));
                    }
                    let col = if ax == r - 1 { 0 } else { j };
                    let src = xp.p().add((base + col + i as usize * step) * es);
                    copy_elem(es, src, dst.add(j * es));
                }
            }
        }
        Ok(())
    })
}
