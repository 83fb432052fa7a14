//! `graph.conv_transpose2d` (ONNX ConvTranspose, NCHW input, `C x O/group x
//! kH x kW` filter): per batch and group one GEMM (the `gemm` crate) makes
//! the columns `filterᵀ · input` — every output channel's kernel-window
//! contribution of every input pixel — and col2im adds them into the output
//! (started at the bias). Batch x group pairs own disjoint output channels
//! and run in parallel. `graph.conv_transpose3d` ([`ConvTranspose3`]) is the
//! same GEMM with the N-D col2im of `graph.col2im`.

use super::{sgemm, F32In, F32Out, Kernel, Par, Slot};
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
/// `w` must be valid for `cg * rows` and `x` for `cg * n` f32 reads.
unsafe fn columns(w: *const f32, x: *const f32, (rows, cg, n): (usize, usize, usize)) -> Vec<f32> {
    let mut cols = vec![0f32; rows * n];
    // SAFETY: A = `w` (rows x cg, column stride rows), B = `x` (cg x n), C =
    // `cols` (rows x n): the caller's contract and the allocation above.
    unsafe {
        sgemm(
            rows,
            cg,
            n,
            1.0,
            w,
            1,
            rows as isize,
            x,
            n as isize,
            1,
            0.0,
            cols.as_mut_ptr(),
            n as isize,
            1,
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
        let cg = c / g;
        let (hw, ohw, kk) = (h * wd, oh * ow, kh * kw);
        let rows = mg * kk;
        let (xi, wi) = (F32In::new(x), F32In::new(w));
        let bi = bias.map(F32In::new);
        let mut yo = F32Out::new(y);
        let (xp, wp, yp) = (Shared(xi.ptr()), Shared(wi.ptr()), Shared(yo.ptr()));
        let bias = bi.as_ref().map(|b| b.slice());
        let [sh, sw] = self.strides;
        let [dh, dw] = self.dilations;
        let (pt, pl) = (self.pads[0], self.pads[1]);
        par.run(n * g, n * m * ohw * cg * kk > 1 << 16, &|task| {
            let (b, grp) = (task / g, task % g);
            // SAFETY: the group's filter rows and the batch's group channels
            // lie inside their slots (shapes checked above).
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
                out.fill(bias.map_or(0.0, |b| b[oc]));
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
                                    *o += v;
                                }
                            }
                        }
                    }
                }
            }
            Ok(())
        })?;
        yo.finish();
        Ok(())
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
        let [n, m, od, oh, ow] = dims;
        let (c, g) = (x.shape[1], a.group);
        let (cg, mg) = (c / g, m / g);
        let block = [w.shape[2], w.shape[3], w.shape[4]];
        let geom = Col2ImGeom {
            image: vec![od, oh, ow],
            block: block.to_vec(),
            dilations: a.dilations.to_vec(),
            strides: a.strides.to_vec(),
            pad_begin: a.pads[..3].to_vec(),
            cols: x.shape[2..].to_vec(),
        };
        let (vin, vout, kk) = (geom.cols_len(), geom.image_len(), geom.block_len());
        let rows = mg * kk;
        let (xi, wi) = (F32In::new(x), F32In::new(w));
        let bi = bias.map(F32In::new);
        let bias = bi.as_ref().map(|b| b.slice());
        let mut yo = F32Out::new(y);
        let (xp, wp, yp) = (Shared(xi.ptr()), Shared(wi.ptr()), Shared(yo.ptr()));
        par.run(n * g, n * m * vout * cg * kk > 1 << 16, &|task| {
            let (b, grp) = (task / g, task % g);
            // SAFETY: the group's filter rows and the batch's group channels
            // lie inside their slots (shapes checked above).
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
            col2im(&geom, &cols, 0..mg, out);
            if let Some(bias) = bias {
                for (mo, plane) in out.chunks_mut(vout.max(1)).enumerate() {
                    let bv = bias[grp * mg + mo];
                    plane.iter_mut().for_each(|v| *v += bv);
                }
            }
            Ok(())
        })?;
        yo.finish();
        Ok(())
    }
}
