//! `graph.conv_transpose2d` (ONNX ConvTranspose, NCHW input, `C x O/group x
//! kH x kW` filter): per batch and group one GEMM (the `gemm` crate) makes
//! the columns `filterᵀ · input` — every output channel's kernel-window
//! contribution of every input pixel — and col2im adds them into the output
//! (started at the bias). Batch x group pairs own disjoint output channels
//! and run in parallel. `graph.conv_transpose3d` ([`ConvTranspose3`]) is the
//! same GEMM with the N-D col2im of `graph.col2im`.

use super::real_kernel::{run_real, Elem, RealKernel};
use super::{Kernel, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::col2im::{col2im, Col2ImGeom};
use ge_dialects::graph::nn::ConvTranspose2d;
use ge_dialects::graph::nn3d::Transpose3;
use ge_ir::body::{Body, OpId};

/// The columns `filterᵀ · input` of one batch entry and group: every output
/// channel's kernel-window contribution (`rows` = output channels of the
/// group x kernel taps) of every input position (`n`), from the group's `cg`
/// filter rows at `w` (`cg x rows`, read transposed) and its `cg` input
/// channels at `x` (`cg x n`).
///
/// # Safety
/// `w` must be valid for `cg * rows` and `x` for `cg * n` reads.
unsafe fn columns<T: Elem>(
    w: *const T,
    x: *const T,
    (rows, cg, n): (usize, usize, usize),
) -> Vec<T> {
    let mut cols = vec![T::default(); rows * n];
    // SAFETY: A = `w` (rows x cg, column stride rows), B = `x` (cg x n), C =
    // `cols` (rows x n): the caller's contract and the allocation above.
    unsafe {
        T::gemm(
            (rows, cg, n),
            w,
            (1, rows as isize),
            x,
            (n as isize, 1),
            cols.as_mut_ptr(),
            (n as isize, 1),
        )
    };
    cols
}

#[derive(Clone, Debug)]
pub struct ConvTranspose {
    pub strides: [usize; 2],
    /// top, left, bottom, right
    pub pads: [usize; 4],
    pub dilations: [usize; 2],
    pub output_padding: [usize; 2],
    pub group: usize,
}

/// `n` non-negative entries, or `None` (the interpreter reports the error).
fn non_negative<const N: usize>(v: &[i64], min: i64) -> Option<[usize; N]> {
    let a: [i64; N] = v.try_into().ok()?;
    a.iter().all(|&x| x >= min).then(|| a.map(|x| x as usize))
}

impl ConvTranspose {
    pub fn from_op(b: &Body, o: OpId) -> Option<ConvTranspose> {
        let a = ConvTranspose2d::attrs(b.op(o));
        Some(ConvTranspose {
            strides: non_negative(&a.strides(), 1)?,
            pads: non_negative(&a.pads(), 0)?,
            dilations: non_negative(&a.dilations(), 1)?,
            output_padding: non_negative(&a.output_padding(), 0)?,
            group: usize::try_from(a.group()).ok().filter(|&g| g >= 1)?,
        })
    }

    /// The output size along spatial axis `i` for an input of `len` and a kernel of `k`.
    fn out_len(&self, i: usize, len: usize, k: usize) -> Option<usize> {
        let keff = self.dilations[i].checked_mul(k.checked_sub(1)?)? + 1;
        (len.checked_sub(1)?.checked_mul(self.strides[i])? + self.output_padding[i] + keff)
            .checked_sub(self.pads[i] + self.pads[2 + i])
    }
}

impl Kernel for ConvTranspose {
    fn float_only(&self) -> bool {
        true
    }

    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (x, w, bias, y) = match (ins, outs) {
            (&[x, w], &[y]) => (x, w, None, y),
            (&[x, w, b], &[y]) => (x, w, Some(b), y),
            _ => return Err("conv_transpose2d takes 2 or 3 operands and gives 1 result".into()),
        };
        let bad = || {
            format!(
                "conv_transpose2d: shapes {:?} * {:?} -> {:?} do not agree (group {})",
                x.shape, w.shape, y.shape, self.group
            )
        };
        let (&[n, c, h, wd], &[wc, mg, kh, kw], &[yn, m, oh, ow]) =
            (&x.shape[..], &w.shape[..], &y.shape[..])
        else {
            return Err(bad());
        };
        let g = self.group;
        if wc != c || c % g != 0 || yn != n || m != mg * g {
            return Err(bad());
        }
        if self.out_len(0, h, kh) != Some(oh) || self.out_len(1, wd, kw) != Some(ow) {
            return Err(bad());
        }
        if bias.is_some_and(|b| b.numel() != m) {
            return Err(format!("conv_transpose2d: bias must have {m} entries"));
        }
        let call = Call2 {
            k: self,
            x: [n, c, h, wd],
            w: [mg, kh, kw],
            y: [m, oh, ow],
        };
        run_real(&call, ins, y, par)
    }
}

/// One run of [`ConvTranspose`] with its checked shapes: input `[n, c, h,
/// w]`, filter `[c, mg, kh, kw]` (given as `[mg, kh, kw]`), result `[n, m,
/// oh, ow]` (given as `[m, oh, ow]`).
struct Call2<'a> {
    k: &'a ConvTranspose,
    x: [usize; 4],
    w: [usize; 3],
    y: [usize; 3],
}

impl RealKernel for Call2<'_> {
    fn compute<T: Elem>(&self, ins: &[&[T]], out: &mut [T], par: &Par) -> Result<(), String> {
        let ([n, c, h, wd], [mg, kh, kw], [m, oh, ow]) = (self.x, self.w, self.y);
        let (x, w, bias) = (ins[0], ins[1], ins.get(2).copied());
        let g = self.k.group;
        let cg = c / g;
        let (hw, ohw, kk) = (h * wd, oh * ow, kh * kw);
        let rows = mg * kk;
        let (xp, wp, yp) = (
            Shared(x.as_ptr()),
            Shared(w.as_ptr()),
            Shared(out.as_mut_ptr()),
        );
        let [sh, sw] = self.k.strides;
        let [dh, dw] = self.k.dilations;
        let (pt, pl) = (self.k.pads[0], self.k.pads[1]);
        par.run(n * g, n * m * ohw * cg * kk > 1 << 16, &|task| {
            let (b, grp) = (task / g, task % g);
            // SAFETY: the group's filter rows and the batch's group channels
            // lie inside their slots (shapes checked by the kernel).
            let cols = unsafe {
                columns(
                    wp.p().add(grp * cg * rows),
                    xp.p().add((b * c + grp * cg) * hw),
                    (rows, cg, hw),
                )
            };
            for mo in 0..mg {
                let oc = grp * mg + mo;
                // SAFETY: output channel `oc` of batch `b` (ohw elements
                // inside the n x m x oh x ow output); only this task writes
                // it (tasks own disjoint (b, group) channel ranges).
                let out =
                    unsafe { std::slice::from_raw_parts_mut(yp.p().add((b * m + oc) * ohw), ohw) };
                out.fill(bias.map_or(T::default(), |b| b[oc]));
                for ky in 0..kh {
                    for kx in 0..kw {
                        let col = &cols[((mo * kh + ky) * kw + kx) * hw..][..hw];
                        for iy in 0..h {
                            let Some(oy) = (iy * sh + ky * dh).checked_sub(pt) else {
                                continue;
                            };
                            if oy >= oh {
                                continue;
                            }
                            let orow = &mut out[oy * ow..(oy + 1) * ow];
                            for (ix, &v) in col[iy * wd..(iy + 1) * wd].iter().enumerate() {
                                if let Some(o) = orow.get_mut((ix * sw + kx * dw).wrapping_sub(pl))
                                {
                                    *o = *o + v;
                                }
                            }
                        }
                    }
                }
            }
            Ok(())
        })
    }
}

/// `graph.conv_transpose3d`: per batch and group one GEMM makes the columns
/// `filterᵀ · input` (every output channel's kernel-window contribution of
/// every input voxel) and the col2im of `graph.col2im`
/// (`ge_dialects::graph::col2im::col2im`, N-D) adds them into the output
/// planes — its blocks are the kernel windows, its block positions the
/// input voxels; the bias is added after.
#[derive(Clone, Debug)]
pub struct ConvTranspose3 {
    pub attrs: Transpose3,
}

impl ConvTranspose3 {
    pub fn from_op(b: &Body, o: OpId) -> Option<ConvTranspose3> {
        Some(ConvTranspose3 {
            attrs: Transpose3::of(b.op(o)).ok()?,
        })
    }
}

impl Kernel for ConvTranspose3 {
    fn float_only(&self) -> bool {
        true
    }

    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (x, w, bias, y) = match (ins, outs) {
            (&[x, w], &[y]) => (x, w, None, y),
            (&[x, w, b], &[y]) => (x, w, Some(b), y),
            _ => return Err("conv_transpose3d takes 2 or 3 operands and gives 1 result".into()),
        };
        let a = &self.attrs;
        let dims = a.shapes(&x.shape, &w.shape, bias.map(|b| &b.shape[..]))?;
        if y.shape != dims {
            return Err(format!(
                "conv_transpose3d: result shape {:?} is not the transposed convolution's {dims:?}",
                y.shape
            ));
        }
        let [_, _, od, oh, ow] = dims;
        let geom = Col2ImGeom {
            image: vec![od, oh, ow],
            block: w.shape[2..5].to_vec(),
            dilations: a.dilations.to_vec(),
            strides: a.strides.to_vec(),
            pad_begin: a.pads[..3].to_vec(),
            cols: x.shape[2..].to_vec(),
        };
        let call = Call3 {
            group: a.group,
            n: dims[0],
            c: x.shape[1],
            m: dims[1],
            geom,
        };
        run_real(&call, ins, y, par)
    }
}

/// One run of [`ConvTranspose3`]: `n` batch entries of `c` input channels
/// into `m` output channels, the col2im geometry of one (batch, group).
struct Call3 {
    group: usize,
    n: usize,
    c: usize,
    m: usize,
    geom: Col2ImGeom,
}

impl RealKernel for Call3 {
    fn compute<T: Elem>(&self, ins: &[&[T]], out: &mut [T], par: &Par) -> Result<(), String> {
        let (x, w, bias) = (ins[0], ins[1], ins.get(2).copied());
        let (n, c, m, g, geom) = (self.n, self.c, self.m, self.group, &self.geom);
        let (cg, mg) = (c / g, m / g);
        let (vin, vout, kk) = (geom.cols_len(), geom.image_len(), geom.block_len());
        let rows = mg * kk;
        let (xp, wp, yp) = (
            Shared(x.as_ptr()),
            Shared(w.as_ptr()),
            Shared(out.as_mut_ptr()),
        );
        par.run(n * g, n * m * vout * cg * kk > 1 << 16, &|task| {
            let (b, grp) = (task / g, task % g);
            // SAFETY: the group's filter rows and the batch's group channels
            // lie inside their slots (shapes checked by the kernel).
            let cols = unsafe {
                columns(
                    wp.p().add(grp * cg * rows),
                    xp.p().add((b * c + grp * cg) * vin),
                    (rows, cg, vin),
                )
            };
            // SAFETY: output channels grp*mg .. (grp+1)*mg of batch `b` are
            // `mg * vout` contiguous elements inside the checked n x m x od
            // x oh x ow result; only this task writes them.
            let out = unsafe {
                std::slice::from_raw_parts_mut(yp.p().add((b * m + grp * mg) * vout), mg * vout)
            };
            col2im(geom, &cols, 0..mg, out);
            if let Some(bias) = bias {
                for (mo, plane) in out.chunks_mut(vout.max(1)).enumerate() {
                    let bv = bias[grp * mg + mo];
                    plane.iter_mut().for_each(|v| *v = *v + bv);
                }
            }
            Ok(())
        })
    }
}
