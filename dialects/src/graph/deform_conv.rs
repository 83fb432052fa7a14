//! Deformable convolution (ONNX DeformConv, opset 19): `graph.deform_conv2d`.
//!
//! Each filter tap reads the input at its regular place moved by a learned
//! offset (bilinear interpolation, zero outside the image) and scaled by an
//! optional mask. The reference semantics sum the taps directly; the native
//! kernel (runtime/src/kernels/deform_conv.rs) unfolds the sampled taps into
//! im2col columns and multiplies them by the filter with the GEMM. Both
//! sample through [`bilinear`], the op's one sampling rule.

use super::elementwise::COMPUTE_FORMAT;
use super::nn::{conv_flops, window_out};
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{Dim, Type};

/// The checked attributes of a deformable convolution.
#[derive(Clone, Debug, PartialEq)]
pub struct DeformAttrs {
    pub strides: [usize; 2],
    /// top, left, bottom, right
    pub pads: [usize; 4],
    pub dilations: [usize; 2],
    pub group: usize,
    pub offset_group: usize,
}

fn fixed<const N: usize>(
    name: &str,
    v: Vec<i64>,
    min: i64,
    what: &str,
) -> Result<[usize; N], String> {
    let v = check_len(name, v, N, what)?;
    check_min(name, &v, min)?;
    let mut out = [0usize; N];
    for (o, x) in out.iter_mut().zip(&v) {
        *o = *x as usize;
    }
    Ok(out)
}

/// The concrete dims of a deformable convolution: input `N x C x H x W`,
/// filter `M x C/group x kH x kW`, output `N x M x OH x OW`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeformDims {
    pub n: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub m: usize,
    pub kh: usize,
    pub kw: usize,
    pub oh: usize,
    pub ow: usize,
}

impl DeformDims {
    /// Input channels per group.
    pub fn cg(&self, a: &DeformAttrs) -> usize {
        self.c / a.group
    }
    /// Input channels per offset group.
    pub fn c_per_offset_group(&self, a: &DeformAttrs) -> usize {
        self.c / a.offset_group
    }
}

impl DeformAttrs {
    /// The attributes of an op (through any attribute source), checked.
    pub fn of(a: DeformConv2dAttrView) -> Result<DeformAttrs, String> {
        let (group, offset_group) = (a.group(), a.offset_group());
        if group < 1 {
            return Err(format!("attribute 'group' must be >= 1, but got {group}"));
        }
        if offset_group < 1 {
            return Err(format!(
                "attribute 'offset_group' must be >= 1, but got {offset_group}"
            ));
        }
        Ok(DeformAttrs {
            strides: fixed("strides", a.strides(), 1, "H, W")?,
            pads: fixed("pads", a.pads(), 0, "top, left, bottom, right")?,
            dilations: fixed("dilations", a.dilations(), 1, "H, W")?,
            group: group as usize,
            offset_group: offset_group as usize,
        })
    }

    /// The result dims from the operands' dims (`None`: unranked), every
    /// ONNX DeformConv rule checked where the dims are known: the channels
    /// against `group` and `offset_group`, the offset's and the mask's
    /// dims against the kernel and the output, the bias against the filter.
    pub fn result_dims(
        &self,
        x: &[Dim],
        f: &[Dim],
        offset: &[Dim],
        bias: Option<&[Dim]>,
        mask: Option<&[Dim]>,
    ) -> Result<Vec<Dim>, String> {
        let (g, og) = (self.group as i64, self.offset_group as i64);
        if !x[1].compatible(f[1].mul_const(g)) {
            return Err(format!(
                "operand 'input' has {} channels, but operand 'filter' expects {} per group x group {g}",
                x[1], f[1]
            ));
        }
        if let Some(m) = f[0].as_static().filter(|m| m % g != 0) {
            return Err(format!(
                "operand 'filter' has {m} output channels, which is not a multiple of group {g}"
            ));
        }
        if let Some(c) = x[1].as_static().filter(|c| c % og != 0) {
            return Err(format!(
                "operand 'input' has {c} channels, which is not a multiple of offset_group {og}"
            ));
        }
        let mut out = vec![x[0], f[0]];
        for (i, axis) in ["H", "W"].iter().enumerate() {
            out.push(window_out(
                x[2 + i],
                f[2 + i],
                self.strides[i] as i64,
                self.dilations[i] as i64,
                self.pads[i] as i64,
                self.pads[2 + i] as i64,
                false,
                axis,
            )?);
        }
        let taps = f[2].mul(f[3]).mul_const(og);
        let per_pixel = |name: &str, d: &[Dim], ch: Dim, what: &str| -> Result<(), String> {
            check_dim_eq(d[0], x[0], &format!("dim 0 of '{name}' (the batch)"))?;
            check_dim_eq(d[1], ch, &format!("dim 1 of '{name}' ({what})"))?;
            check_dim_eq(
                d[2],
                out[2],
                &format!("dim 2 of '{name}' (the output height)"),
            )?;
            check_dim_eq(
                d[3],
                out[3],
                &format!("dim 3 of '{name}' (the output width)"),
            )
        };
        per_pixel(
            "offset",
            offset,
            taps.mul_const(2),
            "offset_group x 2 x kH x kW",
        )?;
        if let Some(mask) = mask {
            per_pixel("mask", mask, taps, "offset_group x kH x kW")?;
        }
        if let Some(b) = bias {
            check_dim_eq(
                b[0],
                f[0],
                "operand 'bias' must have one entry per output channel",
            )?;
        }
        Ok(out)
    }

    /// The concrete dims of run-time shapes, checked as [`Self::result_dims`].
    pub fn dims(
        &self,
        x: &[usize],
        f: &[usize],
        offset: &[usize],
        bias: Option<&[usize]>,
        mask: Option<&[usize]>,
    ) -> Result<DeformDims, String> {
        let d = |s: &[usize]| -> Vec<Dim> { s.iter().map(|&v| Dim::Static(v as i64)).collect() };
        for (name, s, rank) in [("input", x, 4), ("filter", f, 4), ("offset", offset, 4)]
            .into_iter()
            .chain(bias.map(|b| ("bias", b, 1)))
            .chain(mask.map(|m| ("mask", m, 4)))
        {
            if s.len() != rank {
                return Err(format!(
                    "operand '{name}' must have rank {rank}, but has shape {s:?}"
                ));
            }
        }
        let out = self.result_dims(
            &d(x),
            &d(f),
            &d(offset),
            bias.map(d).as_deref(),
            mask.map(d).as_deref(),
        )?;
        let at = |i: usize| out[i].as_static().unwrap_or(0) as usize;
        let dims = DeformDims {
            n: x[0],
            c: x[1],
            h: x[2],
            w: x[3],
            m: f[0],
            kh: f[2],
            kw: f[3],
            oh: at(2),
            ow: at(3),
        };
        checked_numel(&[dims.n, dims.m, dims.oh, dims.ow])?;
        checked_numel(&[dims.c, dims.kh, dims.kw, dims.oh, dims.ow])?;
        Ok(dims)
    }
}

/// The value of `plane` (`h x w`, row major) at the point (`y`, `x`) by
/// bilinear interpolation, zero outside the plane — ONNX GridSample's
/// `linear` mode with `zeros` padding and aligned corners, which DeformConv's
/// reference samples with (in pixel coordinates here).
pub fn bilinear<T: Real>(plane: &[T], h: usize, w: usize, y: f64, x: f64) -> f64 {
    // Also false for NaN.
    if !(y > -1.0 && y < h as f64 && x > -1.0 && x < w as f64) {
        return 0.0;
    }
    let (y0, x0) = (y.floor(), x.floor());
    let (ly, lx) = (y - y0, x - x0);
    let (y0, x0) = (y0 as isize, x0 as isize);
    let at = |yy: isize, xx: isize| -> f64 {
        if yy < 0 || xx < 0 || yy as usize >= h || xx as usize >= w {
            0.0
        } else {
            plane[yy as usize * w + xx as usize].get()
        }
    };
    (1.0 - ly) * (1.0 - lx) * at(y0, x0)
        + (1.0 - ly) * lx * at(y0, x0 + 1)
        + ly * (1.0 - lx) * at(y0 + 1, x0)
        + ly * lx * at(y0 + 1, x0 + 1)
}

/// Where tap (`ky`, `kx`) of output pixel (`i`, `j`) samples, before its
/// offset: the regular convolution place.
pub fn tap_origin(a: &DeformAttrs, i: usize, j: usize, ky: usize, kx: usize) -> (f64, f64) {
    let y = (i * a.strides[0] + ky * a.dilations[0]) as f64 - a.pads[0] as f64;
    let x = (j * a.strides[1] + kx * a.dilations[1]) as f64 - a.pads[1] as f64;
    (y, x)
}

fn infer_deform_conv2d(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = DeformAttrs::of(DeformConv2d::attrs(cx))?;
    let ts = cx.operand_types;
    let dt = dtype_of(ts[0])?;
    let x = dims_rank(ts[0], "input", 4, "NCHW")?;
    let f = dims_rank(ts[1], "filter", 4, "M x C/group x kH x kW")?;
    let o = dims_rank(ts[2], "offset", 4, "N x offset_group*2*kH*kW x OH x OW")?;
    let b = ts
        .get(3)
        .map(|&t| dims_rank(t, "bias", 1, "M"))
        .transpose()?;
    let m = ts
        .get(4)
        .map(|&t| dims_rank(t, "mask", 4, "N x offset_group*kH*kW x OH x OW"))
        .transpose()?;
    let (Some(x), Some(f), Some(o)) = (x, f, o) else {
        return Ok(vec![Type::unranked(dt)]);
    };
    let out = a.result_dims(&x, &f, &o, b.flatten().as_deref(), m.flatten().as_deref())?;
    Ok(vec![Type::tensor(&out, dt)])
}

fn sem_deform_conv2d(cx: &SemCtx, t: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    arity(t, 3)?;
    let a = DeformAttrs::of(DeformConv2d::attrs(cx))?;
    let (x, f, off) = (t[0], t[1], t[2]);
    let (bias, mask) = (t.get(3), t.get(4));
    let d = a.dims(
        &x.shape,
        &f.shape,
        &off.shape,
        bias.map(|b| &b.shape[..]),
        mask.map(|m| &m.shape[..]),
    )?;
    let (xs, fs, os) = (x.to_f64(), f.to_f64(), off.to_f64());
    let bs = bias.map(|b| b.to_f64());
    let ms = mask.map(|m| m.to_f64());
    let (cg, mg, cog) = (d.cg(&a), d.m / a.group, d.c_per_offset_group(&a));
    let (kk, hw, ohw) = (d.kh * d.kw, d.h * d.w, d.oh * d.ow);
    let mut out = vec![0.0; checked_numel(&[d.n, d.m, d.oh, d.ow])?];
    for b in 0..d.n {
        for oc in 0..d.m {
            let grp = oc / mg;
            for p in 0..ohw {
                let (i, j) = (p / d.ow, p % d.ow);
                let mut acc = bs.as_ref().map_or(0.0, |v| v[oc]);
                for ci in 0..cg {
                    let ic = grp * cg + ci;
                    let og = ic / cog;
                    let plane = &xs[(b * d.c + ic) * hw..][..hw];
                    for k in 0..kk {
                        let (ky, kx) = (k / d.kw, k % d.kw);
                        let (y, xx) = tap_origin(&a, i, j, ky, kx);
                        let ch = (b * a.offset_group + og) * 2 * kk + 2 * k;
                        let (dy, dx) = (os[ch * ohw + p], os[(ch + 1) * ohw + p]);
                        let scale = ms
                            .as_ref()
                            .map_or(1.0, |m| m[((b * a.offset_group + og) * kk + k) * ohw + p]);
                        let v = bilinear(plane, d.h, d.w, y + dy, xx + dx);
                        acc += fs[(oc * cg + ci) * kk + k] * v * scale;
                    }
                }
                out[(b * d.m + oc) * ohw + p] = acc;
            }
        }
    }
    let dt = result_dtype(cx, 0, x.dtype);
    Ok(vec![Tensor::from_f64(vec![d.n, d.m, d.oh, d.ow], dt, out)])
}

def_op! {
    /// 2-D deformable convolution (ONNX DeformConv)
    ///
    /// A convolution whose taps move: `input` is `N x C x H x W`, `filter` `M x C/group x kH x
    /// kW`, `offset` `N x (offset_group * 2 * kH * kW) x OH x OW` — for each output pixel and
    /// tap, the (y, x) shift of the place the tap reads, per group of `C / offset_group` input
    /// channels —, `bias` (optional) has `M` entries and `mask` (optional) `N x (offset_group *
    /// kH * kW) x OH x OW` scales each tap. A moved tap reads the input by bilinear
    /// interpolation, zero outside it. The output is `N x M x OH x OW`, sized as for
    /// `graph.conv2d`. A mask needs a bias operand before it (the importer passes zeros).
    pub DeformConv2d = "graph.deform_conv2d" {
        operands {
            input: FloatTensor,
            filter: FloatTensor,
            offset: FloatTensor,
            bias: Option<FloatTensor>,
            mask: Option<FloatTensor>,
        },
        results { output: FloatTensor },
        attrs {
            /// stride along H and W
            strides: I64Array = [1, 1],
            /// zero padding [top, left, bottom, right] (ONNX begin/end order)
            pads: I64Array = [0, 0, 0, 0],
            /// filter dilation along H and W
            dilations: I64Array = [1, 1],
            /// number of channel groups
            group: I64 = 1,
            /// number of groups of input channels that share one set of offsets (and mask)
            offset_group: I64 = 1,
        },
        traits [Pure, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_deform_conv2d,
        semantics: sem_deform_conv2d,
        interfaces [
            Cost::cube(conv_flops),
            FusionPattern::Opaque,
            CUBE_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Conv,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&DEFORM_CONV2D];

#[cfg(test)]
mod tests {
    use super::*;

    /// Whole-pixel points read the pixel, a half-way point the mean of its
    /// neighbours, and points at or past one pixel outside read zero.
    #[test]
    fn bilinear_by_hand() {
        let p = [1.0f64, 2.0, 3.0, 4.0];
        assert_eq!(bilinear(&p, 2, 2, 1.0, 0.0), 3.0);
        assert_eq!(bilinear(&p, 2, 2, 0.5, 0.5), 2.5);
        assert_eq!(bilinear(&p, 2, 2, -0.5, 0.0), 0.5);
        assert_eq!(bilinear(&p, 2, 2, -1.0, 0.0), 0.0);
        assert_eq!(bilinear(&p, 2, 2, 0.0, 2.0), 0.0);
        assert_eq!(bilinear(&p, 2, 2, f64::NAN, 0.0), 0.0);
    }
}
