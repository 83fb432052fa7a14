//! `graph.deform_conv2d` (ONNX DeformConv): deformable im2col and the GEMM.
//! Per (sample, group) the columns hold every tap of every output pixel as
//! the op samples it (`ge_dialects::graph::deform_conv::bilinear` at the
//! regular place plus the offset, times the mask), and one `sgemm`
//! multiplies the group's filter rows by them; the bias is added after.
//! Samples and groups write disjoint output channels and run in parallel.

use super::{sgemm, F32In, F32Out, Kernel, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::deform_conv::{
    bilinear, tap_origin, DeformAttrs, DeformConv2d, DeformDims,
};
use ge_ir::body::{Body, OpId};

#[derive(Clone, Debug)]
pub struct DeformConv {
    pub attrs: DeformAttrs,
}

impl DeformConv {
    pub fn from_op(b: &Body, o: OpId) -> Option<DeformConv> {
        let attrs = DeformAttrs::of(DeformConv2d::attrs(b.op(o))).ok()?;
        Some(DeformConv { attrs })
    }
}

/// The sampled columns of sample `b`, group `grp`: row `ci * kk + k` (input
/// channel `ci` of the group, tap `k`), column `p` (output pixel).
struct Unfold<'a> {
    a: &'a DeformAttrs,
    d: DeformDims,
    x: &'a [f32],
    offset: &'a [f32],
    mask: Option<&'a [f32]>,
}

impl Unfold<'_> {
    fn fill(&self, b: usize, grp: usize, cols: &mut [f32]) {
        let (a, d) = (self.a, &self.d);
        let (cg, cog) = (d.cg(a), d.c_per_offset_group(a));
        let (kk, hw, ohw) = (d.kh * d.kw, d.h * d.w, d.oh * d.ow);
        for ci in 0..cg {
            let ic = grp * cg + ci;
            let og = ic / cog;
            let plane = &self.x[(b * d.c + ic) * hw..][..hw];
            for k in 0..kk {
                let (ky, kx) = (k / d.kw, k % d.kw);
                let ch = (b * a.offset_group + og) * 2 * kk + 2 * k;
                let (dys, dxs) = (
                    &self.offset[ch * ohw..][..ohw],
                    &self.offset[(ch + 1) * ohw..][..ohw],
                );
                let ms = self
                    .mask
                    .map(|m| &m[((b * a.offset_group + og) * kk + k) * ohw..][..ohw]);
                let row = &mut cols[(ci * kk + k) * ohw..][..ohw];
                for (p, v) in row.iter_mut().enumerate() {
                    let (y, x) = tap_origin(a, p / d.ow, p % d.ow, ky, kx);
                    let s = bilinear(plane, d.h, d.w, y + dys[p] as f64, x + dxs[p] as f64);
                    *v = (s * ms.map_or(1.0, |m| m[p] as f64)) as f32;
                }
            }
        }
    }
}

impl Kernel for DeformConv {
    fn float_only(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x, f, off], bias, mask, &[y]) =
            (ins.get(..3).unwrap_or(&[]), ins.get(3), ins.get(4), outs)
        else {
            return Err("deform_conv2d takes 3 to 5 operands and gives 1 result".into());
        };
        let a = &self.attrs;
        let d = a.dims(
            &x.shape,
            &f.shape,
            &off.shape,
            bias.map(|b| &b.shape[..]),
            mask.map(|m| &m.shape[..]),
        )?;
        if y.shape != [d.n, d.m, d.oh, d.ow] {
            return Err(format!(
                "deform_conv2d: result shape {:?} is not [{}, {}, {}, {}]",
                y.shape, d.n, d.m, d.oh, d.ow
            ));
        }
        let (xi, fi, oi) = (F32In::new(x), F32In::new(f), F32In::new(off));
        let (bi, mi) = (bias.map(|b| F32In::new(b)), mask.map(|m| F32In::new(m)));
        let unfold = Unfold {
            a,
            d,
            x: xi.slice(),
            offset: oi.slice(),
            mask: mi.as_ref().map(|m| m.slice()),
        };
        let bias = bi.as_ref().map(|b| b.slice());
        let mut yo = F32Out::new(y);
        let (fp, yp) = (Shared(fi.ptr()), Shared(yo.ptr()));
        let (cg, mg, ohw) = (d.cg(a), d.m / a.group, d.oh * d.ow);
        let k = cg * d.kh * d.kw;
        let tasks = d.n * a.group;
        par.run(tasks, tasks > 1 && d.n * d.m * ohw * k > 1 << 14, &|t| {
            let (b, grp) = (t / a.group, t % a.group);
            let mut cols = vec![0f32; k * ohw];
            unfold.fill(b, grp, &mut cols);
            // SAFETY: the filter rows of group `grp` are `mg` rows of `k`
            // elements inside the checked `M x C/group x kH x kW` filter; the
            // output rows of (b, grp) are `mg` planes of `ohw` elements inside
            // the checked `N x M x OH x OW` result, written by this task only;
            // `cols` is `k x ohw`.
            unsafe {
                let dst = yp.p().add((b * d.m + grp * mg) * ohw);
                sgemm(
                    mg,
                    k,
                    ohw,
                    1.0,
                    fp.p().add(grp * mg * k),
                    k as isize,
                    1,
                    cols.as_ptr(),
                    ohw as isize,
                    1,
                    0.0,
                    dst,
                    ohw as isize,
                    1,
                );
                if let Some(bias) = bias {
                    for r in 0..mg {
                        let row = std::slice::from_raw_parts_mut(dst.add(r * ohw), ohw);
                        let bv = bias[grp * mg + r];
                        row.iter_mut().for_each(|v| *v += bv);
                    }
                }
            }
            Ok(())
        })?;
        yo.finish();
        Ok(())
    }
}
