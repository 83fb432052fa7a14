//! `graph.deform_conv2d` (ONNX DeformConv): deformable im2col and the GEMM.
//! Per (sample, group) the columns hold every tap of every output pixel as
//! the op samples it (`ge_dialects::graph::deform_conv::bilinear` at the
//! regular place plus the offset, times the mask), and one GEMM multiplies
//! the group's filter rows by them; the bias is added after. Samples and
//! groups write disjoint output channels and run in parallel. f64 computes
//! in f64 ([`RealKernel`]).

use super::real_kernel::{run_real, Elem, RealKernel};
use super::{Kernel, Par, Slot};
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
struct Unfold<'a, T> {
    a: &'a DeformAttrs,
    d: &'a DeformDims,
    x: &'a [T],
    offset: &'a [T],
    mask: Option<&'a [T]>,
}

impl<T: Elem> Unfold<'_, T> {
    fn fill(&self, b: usize, grp: usize, cols: &mut [T]) {
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
                    let s = bilinear(plane, d.h, d.w, y + dys[p].get(), x + dxs[p].get());
                    *v = T::of(s * ms.map_or(1.0, |m| m[p].get()));
                }
            }
        }
    }
}

impl Kernel for DeformConv {
    fn float_only(&self) -> bool {
        true
    }

    fn f64_ok(&self) -> bool {
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
        run_real(&Call { a, d }, ins, y, par)
    }
}

/// One run of [`DeformConv`] with its checked dims.
struct Call<'a> {
    a: &'a DeformAttrs,
    d: DeformDims,
}

impl RealKernel for Call<'_> {
    fn compute<T: Elem>(&self, ins: &[&[T]], out: &mut [T], par: &Par) -> Result<(), String> {
        let (a, d) = (self.a, &self.d);
        let (f, bias) = (ins[1], ins.get(3).copied());
        let unfold = Unfold {
            a,
            d,
            x: ins[0],
            offset: ins[2],
            mask: ins.get(4).copied(),
        };
        let (fp, yp) = (Shared(f.as_ptr()), Shared(out.as_mut_ptr()));
        let (cg, mg, ohw) = (d.cg(a), d.m / a.group, d.oh * d.ow);
        let k = cg * d.kh * d.kw;
        let tasks = d.n * a.group;
        par.run(tasks, tasks > 1 && d.n * d.m * ohw * k > 1 << 14, &|t| {
            let (b, grp) = (t / a.group, t % a.group);
            let mut cols = vec![T::default(); k * ohw];
            unfold.fill(b, grp, &mut cols);
            // SAFETY: the filter rows of group `grp` are `mg` rows of `k`
            // elements inside the checked `M x C/group x kH x kW` filter; the
            // output rows of (b, grp) are `mg` planes of `ohw` elements inside
            // the checked `N x M x OH x OW` result, written by this task only;
            // `cols` is `k x ohw`.
            unsafe {
                let dst = yp.p().add((b * d.m + grp * mg) * ohw);
                T::gemm(
                    (mg, k, ohw),
                    fp.p().add(grp * mg * k),
                    (k as isize, 1),
                    cols.as_ptr(),
                    (ohw as isize, 1),
                    dst,
                    (ohw as isize, 1),
                );
                if let Some(bias) = bias {
                    for r in 0..mg {
                        let row = std::slice::from_raw_parts_mut(dst.add(r * ohw), ohw);
                        let bv = bias[grp * mg + r];
                        row.iter_mut().for_each(|v| *v = *v + bv);
                    }
                }
            }
            Ok(())
        })
    }
}
