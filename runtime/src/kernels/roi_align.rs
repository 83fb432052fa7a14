//! `graph.roi_align` (ONNX RoiAlign): the op's own `roi_align` (shared with
//! its semantics in dialects/src/graph/roi_align.rs) in f32 — f64 data in
//! f64 —, one region per task: regions write disjoint output blocks.

use super::{F32In, F32Out, Kernel, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::opkit::Real;
use ge_dialects::graph::roi_align::{roi_align, roi_batch, RoiAlign as RoiAlignOp, RoiAlignParams};
use ge_ir::body::{Body, OpId};
use ge_ir::DType;

#[derive(Clone, Debug)]
pub struct RoiAlign {
    pub attrs: RoiAlignParams,
}

impl RoiAlign {
    pub fn from_op(b: &Body, o: OpId) -> Option<RoiAlign> {
        let attrs = RoiAlignParams::of(RoiAlignOp::attrs(b.op(o))).ok()?;
        Some(RoiAlign { attrs })
    }
}

/// The checked geometry of one run.
struct Regions {
    /// `[x1, y1, x2, y2]` per region.
    rois: Vec<[f64; 4]>,
    /// The image of each region.
    images: Vec<usize>,
    c: usize,
    hw: (usize, usize),
}

/// Pool every region of `xs` into `y` (`per` elements per region).
fn pool<T: Real>(
    a: &RoiAlignParams,
    g: &Regions,
    xs: &[T],
    y: *mut T,
    par: &Par,
) -> Result<(), String> {
    let (c, (h, w)) = (g.c, g.hw);
    let (img, per) = (c * h * w, c * a.out_h * a.out_w);
    let yp = Shared(y);
    let k = g.rois.len();
    par.run(k, k > 1 && k * per > 1 << 12, &|r| {
        // SAFETY: region `r`'s block is the `per` elements at `r * per` of
        // the `k x C x out_h x out_w` result (its shape checked by the
        // caller); tasks own distinct regions.
        let out = unsafe { std::slice::from_raw_parts_mut(yp.p().add(r * per), per) };
        let b = g.images[r];
        let mut acc = vec![0.0; c];
        roi_align(
            a,
            &xs[b * img..(b + 1) * img],
            g.hw,
            g.rois[r],
            &mut acc,
            out,
        );
        Ok(())
    })
}

impl Kernel for RoiAlign {
    fn float_only(&self) -> bool {
        true
    }

    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x, rois, idx], &[y]) = (ins, outs) else {
            return Err("roi_align takes 3 operands and gives 1 result".into());
        };
        let a = &self.attrs;
        let &[n, c, h, w] = &x.shape[..] else {
            return Err(format!("roi_align: input {:?} must have rank 4", x.shape));
        };
        let k = idx.numel();
        if rois.shape != [k, 4] || idx.dtype != DType::I64 || y.shape != [k, c, a.out_h, a.out_w] {
            return Err(format!(
                "roi_align: rois {:?}, batch_indices {:?} and result {:?} do not fit input {:?}",
                rois.shape, idx.shape, y.shape, x.shape
            ));
        }
        // SAFETY: `idx` holds `k` i64s (its dtype and element count were
        // checked) and is not written while the kernel runs.
        let is = unsafe { std::slice::from_raw_parts(idx.ptr as *const i64, k) };
        let images = is
            .iter()
            .enumerate()
            .map(|(r, &b)| roi_batch(b, r, n))
            .collect::<Result<Vec<_>, _>>()?;
        let rv: Vec<f64> = if rois.dtype == DType::F64 {
            // SAFETY: `rois` holds `4k` f64s (dtype and shape checked).
            unsafe { std::slice::from_raw_parts(rois.ptr as *const f64, 4 * k) }.to_vec()
        } else {
            F32In::new(rois).slice().iter().map(|&v| v as f64).collect()
        };
        let g = Regions {
            rois: rv
                .chunks_exact(4)
                .map(|r| [r[0], r[1], r[2], r[3]])
                .collect(),
            images,
            c,
            hw: (h, w),
        };
        if x.dtype == DType::F64 && y.dtype == DType::F64 {
            // SAFETY: the input slot holds `x.numel()` f64s (its dtype and
            // shape were checked) and is not written while the kernel runs.
            let xs = unsafe { std::slice::from_raw_parts(x.ptr as *const f64, x.numel()) };
            return pool(a, &g, xs, y.ptr as *mut f64, par);
        }
        let xi = F32In::new(x);
        let mut yo = F32Out::new(y);
        pool(a, &g, xi.slice(), yo.ptr(), par)?;
        yo.finish();
        Ok(())
    }
}
