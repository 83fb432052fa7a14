//! Region-of-interest pooling by bilinear sampling (ONNX RoiAlign, opsets
//! 10 and 16): `graph.roi_align`.
//!
//! [`roi_align`] pools one region, generic over the element type; the
//! semantics run it in f64, the runtime's native kernel
//! (runtime/src/kernels/roi_align.rs) in f32 (f64 in f64), one region per
//! task. It follows ONNX's reference: the sample grid of each output bin,
//! the clamping at the borders and `max` mode's maximum over the weighted
//! corner values (not of the interpolated samples).

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interfaces::CostCtx;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim, Type};

const MODES: &[&str] = &["avg", "max"];
const COORDINATE_MODES: &[&str] = &["half_pixel", "output_half_pixel"];

/// The checked attributes of a RoiAlign.
#[derive(Clone, Debug, PartialEq)]
pub struct RoiAlignParams {
    pub max: bool,
    pub out_h: usize,
    pub out_w: usize,
    /// Samples per bin along each axis; 0: `ceil(roi size / bins)`.
    pub sampling_ratio: usize,
    pub spatial_scale: f64,
    pub half_pixel: bool,
}

impl RoiAlignParams {
    pub fn of(a: RoiAlignAttrView) -> Result<RoiAlignParams, String> {
        let (oh, ow, sr) = (a.output_height(), a.output_width(), a.sampling_ratio());
        for (name, v, min) in [
            ("output_height", oh, 1),
            ("output_width", ow, 1),
            ("sampling_ratio", sr, 0),
        ] {
            if v < min {
                return Err(format!("attribute '{name}' must be >= {min}, but got {v}"));
            }
        }
        checked_numel(&[oh as usize, ow as usize])?;
        Ok(RoiAlignParams {
            max: a.mode() == "max",
            out_h: oh as usize,
            out_w: ow as usize,
            sampling_ratio: sr as usize,
            spatial_scale: a.spatial_scale(),
            half_pixel: a.coordinate_transformation_mode() == "half_pixel",
        })
    }

    /// The samples per bin along one axis of a region `size` long split into `bins`.
    fn grid(&self, size: f64, bins: usize) -> usize {
        if self.sampling_ratio > 0 {
            self.sampling_ratio
        } else {
            // Negative sizes (half_pixel regions of negative extent) take no samples.
            (size / bins as f64).ceil().max(0.0) as usize
        }
    }
}

/// The four corners (flat offsets into an `h x w` plane) and their weights
/// of one sample point; all weights zero when the point lies more than one
/// pixel outside the plane.
fn corners(h: usize, w: usize, y: f64, x: f64) -> ([usize; 4], [f64; 4]) {
    if h == 0 || w == 0 || y < -1.0 || y > h as f64 || x < -1.0 || x > w as f64 {
        return ([0; 4], [0.0; 4]);
    }
    let (mut y, mut x) = (y.max(0.0), x.max(0.0));
    let (mut y0, mut x0) = (y as usize, x as usize);
    let y1 = if y0 >= h - 1 {
        y0 = h - 1;
        y = y0 as f64;
        y0
    } else {
        y0 + 1
    };
    let x1 = if x0 >= w - 1 {
        x0 = w - 1;
        x = x0 as f64;
        x0
    } else {
        x0 + 1
    };
    let (ly, lx) = (y - y0 as f64, x - x0 as f64);
    let (hy, hx) = (1.0 - ly, 1.0 - lx);
    (
        [y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1],
        [hy * hx, hy * lx, ly * hx, ly * lx],
    )
}

/// Pool region `roi` (`[x1, y1, x2, y2]` in input coordinates) of `x` (the
/// `C` planes, `h x w` each, of the region's image) into `out` (`C x out_h
/// x out_w`). `acc` is scratch of `C` entries.
pub fn roi_align<T: Real>(
    a: &RoiAlignParams,
    x: &[T],
    (h, w): (usize, usize),
    roi: [f64; 4],
    acc: &mut [f64],
    out: &mut [T],
) {
    let c = acc.len();
    let off = if a.half_pixel { 0.5 } else { 0.0 };
    let [x1, y1, x2, y2] = roi.map(|v| v * a.spatial_scale - off);
    let (mut rw, mut rh) = (x2 - x1, y2 - y1);
    if !a.half_pixel {
        // Malformed regions count as 1 x 1.
        rw = rw.max(1.0);
        rh = rh.max(1.0);
    }
    let (bh, bw) = (rh / a.out_h as f64, rw / a.out_w as f64);
    let (gh, gw) = (a.grid(rh, a.out_h), a.grid(rw, a.out_w));
    let count = (gh * gw).max(1) as f64;
    let (hw, bins) = (h * w, a.out_h * a.out_w);
    for ph in 0..a.out_h {
        for pw in 0..a.out_w {
            let mut first = true;
            acc.iter_mut().for_each(|v| *v = 0.0);
            for iy in 0..gh {
                let y = y1 + ph as f64 * bh + (iy as f64 + 0.5) * bh / gh as f64;
                for ix in 0..gw {
                    let xx = x1 + pw as f64 * bw + (ix as f64 + 0.5) * bw / gw as f64;
                    let (pos, wt) = corners(h, w, y, xx);
                    for (ch, v) in acc.iter_mut().enumerate() {
                        let plane = &x[ch * hw..(ch + 1) * hw];
                        let t = |k: usize| wt[k] * plane.get(pos[k]).map_or(0.0, |p| p.get());
                        if a.max {
                            let s = t(0).max(t(1)).max(t(2)).max(t(3));
                            *v = if first { s } else { v.max(s) };
                        } else {
                            *v += t(0) + t(1) + t(2) + t(3);
                        }
                    }
                    first = false;
                }
            }
            for (ch, v) in acc.iter().enumerate().take(c) {
                let r = if a.max { *v } else { *v / count };
                out[ch * bins + ph * a.out_w + pw] = T::of(r);
            }
        }
    }
}

/// The image of region `r`, checked against the batch size `n`.
pub fn roi_batch(b: i64, r: usize, n: usize) -> Result<usize, String> {
    usize::try_from(b)
        .ok()
        .filter(|&b| b < n)
        .ok_or_else(|| format!("batch index {b} of region {r} is out of range for {n} images"))
}

fn infer_roi_align(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = RoiAlignParams::of(RoiAlign::attrs(cx))?;
    let ts = cx.operand_types;
    let dt = dtype_of(ts[0])?;
    if dtype_of(ts[1])? != dt {
        return Err(format!(
            "operand 'rois' '{}' must have the element type of 'input' ({dt})",
            ts[1]
        ));
    }
    let x = dims_rank(ts[0], "input", 4, "NCHW")?;
    let r = dims_rank(ts[1], "rois", 2, "num_rois x 4")?;
    let b = dims_rank(ts[2], "batch_indices", 1, "num_rois")?;
    let mut rois = Dim::Unknown;
    if let Some(r) = &r {
        check_dim_eq(r[1], Dim::Static(4), "dim 1 of 'rois' ([x1, y1, x2, y2])")?;
        rois = r[0];
    }
    if let Some(b) = &b {
        check_dim_eq(b[0], rois, "dim 0 of 'batch_indices' (one per region)")?;
        if rois == Dim::Unknown {
            rois = b[0];
        }
    }
    let c = x.as_ref().map_or(Dim::Unknown, |x| x[1]);
    let out = [
        rois,
        c,
        Dim::Static(a.out_h as i64),
        Dim::Static(a.out_w as i64),
    ];
    Ok(vec![Type::tensor(&out, dt)])
}

fn sem_roi_align(cx: &SemCtx, t: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    arity(t, 3)?;
    let a = RoiAlignParams::of(RoiAlign::attrs(cx))?;
    let (x, rois, idx) = (t[0], t[1], t[2]);
    let &[n, c, h, w] = &x.shape[..] else {
        return Err(format!(
            "input must have rank 4, but has shape {:?}",
            x.shape
        ));
    };
    let k: usize = idx.shape.iter().product();
    if rois.shape != [k, 4] {
        return Err(format!(
            "rois {:?} must be {k} x 4 (one region per batch index)",
            rois.shape
        ));
    }
    let (xs, rs, is) = (x.to_f64(), rois.to_f64(), idx.to_i64());
    let per = c * a.out_h * a.out_w;
    let mut out = vec![0.0; checked_numel(&[k, per])?];
    let mut acc = vec![0.0; c];
    for r in 0..k {
        let b = roi_batch(is[r], r, n)?;
        let roi = [rs[4 * r], rs[4 * r + 1], rs[4 * r + 2], rs[4 * r + 3]];
        let img = &xs[b * c * h * w..(b + 1) * c * h * w];
        roi_align(
            &a,
            img,
            (h, w),
            roi,
            &mut acc,
            &mut out[r * per..(r + 1) * per],
        );
    }
    let dt = result_dtype(cx, 0, x.dtype);
    Ok(vec![Tensor::from_f64(
        vec![k, c, a.out_h, a.out_w],
        dt,
        out,
    )])
}

/// Four multiply-adds per sample, about four samples per bin.
fn roi_align_flops(cx: &CostCtx) -> f64 {
    16.0 * cx.out_elements()
}

def_op! {
    /// Pool regions of interest by bilinear sampling (ONNX RoiAlign)
    ///
    /// For each region `r` (`rois[r] = [x1, y1, x2, y2]`, scaled by `spatial_scale`, of the image
    /// `batch_indices[r]` of the `N x C x H x W` input), an `output_height x output_width` grid of
    /// bins; each bin averages (`mode = "avg"`) or takes the maximum (`"max"`) of
    /// `sampling_ratio x sampling_ratio` bilinear samples (0: `ceil(region size / bins)` per
    /// axis). `coordinate_transformation_mode = "half_pixel"` shifts the scaled corners by -0.5
    /// (opset 16's default; opset 10 behaves as `"output_half_pixel"`, which also makes
    /// regions at least 1 x 1). As in ONNX's reference, `max` takes the maximum of the
    /// weighted corner values of each sample. The result is `num_rois x C x output_height x
    /// output_width`; a batch index out of range is an error.
    pub RoiAlign = "graph.roi_align" {
        operands { input: FloatTensor, rois: FloatTensor, batch_indices: TensorOf(&[DType::I64]) },
        results { output: FloatTensor },
        attrs {
            /// how region corners map to input coordinates: half_pixel or output_half_pixel
            coordinate_transformation_mode: Enum(COORDINATE_MODES) = "half_pixel",
            /// the pooling of each bin's samples: avg or max
            mode: Enum(MODES) = "avg",
            /// bins along the height
            output_height: I64 = 1,
            /// bins along the width
            output_width: I64 = 1,
            /// samples per bin along each axis (0: adaptive)
            sampling_ratio: I64 = 0,
            /// the scale from region coordinates to input coordinates
            spatial_scale: F64 = 1.0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_roi_align,
        semantics: sem_roi_align,
        interfaces [
            Cost::vector(roi_align_flops),
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Sample,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&ROI_ALIGN];

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2 x 2 region of a 3 x 3 plane in one bin of 2 x 2 samples
    /// (output_half_pixel): the samples at 0.5 and 1.5 along each axis
    /// average to the plane's centre value; max mode takes the largest
    /// weighted corner of the samples.
    #[test]
    fn one_bin_by_hand() {
        let x: Vec<f64> = (0..9).map(|v| v as f64).collect();
        let mut a = RoiAlignParams {
            max: false,
            out_h: 1,
            out_w: 1,
            sampling_ratio: 0,
            spatial_scale: 1.0,
            half_pixel: false,
        };
        let (mut acc, mut out) = (vec![0.0; 1], vec![0.0; 1]);
        roi_align(&a, &x, (3, 3), [0.0, 0.0, 2.0, 2.0], &mut acc, &mut out);
        assert_eq!(out, vec![4.0]);
        a.max = true;
        roi_align(&a, &x, (3, 3), [0.0, 0.0, 2.0, 2.0], &mut acc, &mut out);
        // Sample (1.5, 1.5): corners 4, 5, 7, 8 weighted 0.25 each.
        assert_eq!(out, vec![2.0]);
        assert!(roi_batch(2, 0, 2).is_err());
    }
}
