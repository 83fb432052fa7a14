//! `data.transdata` and the Ascend storage layouts.
//!
//! Every layout is a map between a *logical* index space and a storage shape:
//!
//! - image formats (NCHW, NHWC, HWCN, CHWN, NC1HWC0, FRACTAL_Z) share the
//!   logical space `[N, C, H, W]`;
//! - matrix formats (ND, FRACTAL_NZ) share the logical space `[..., M, N]`.
//!
//! Storage layouts (C0 = `Format::c0(dtype)`: 16 for 16-bit types, 32 for
//! 8-bit, 8 for 32-bit; padding is zeros):
//!
//! | format     | storage shape                          | element                                   |
//! |------------|----------------------------------------|-------------------------------------------|
//! | NCHW       | `[N, C, H, W]`                         | plain                                     |
//! | NHWC       | `[N, H, W, C]`                         | plain                                     |
//! | HWCN       | `[H, W, C, N]`                         | plain                                     |
//! | CHWN       | `[C, H, W, N]`                         | plain                                     |
//! | NC1HWC0    | `[N, ceil(C/C0), H, W, C0]`            | `[n, c1, h, w, c0] = x[n, c1*C0+c0, h, w]` |
//! | FRACTAL_Z  | `[ceil(C/C0)*H*W, ceil(N/16), 16, C0]` | `[c1*H*W + h*W + w, n1, n0, c0] = x[n1*16+n0, c1*C0+c0, h, w]` |
//! | ND         | `[..., M, N]`                          | plain                                     |
//! | FRACTAL_NZ | `[..., ceil(N/C0), ceil(M/16), 16, C0]` | `[..., n1, m1, m0, n0] = x[..., m1*16+m0, n1*C0+n0]` |
//!
//! FRACTAL_Z is GE's layout of convolution weights (OIHW: N = output
//! channels, C = input channels); FRACTAL_NZ is the cube unit's matrix layout
//! (a rank-1 ND tensor is treated as `[1, N]`). The padded formats cannot be
//! read back without the logical shape, so their tensor types carry it:
//! `#ge.format<NC1HWC0, origin = NCHW, origin_shape = [8, 3, 224, 224]>`.

use super::{dtype_of, fmt_dims, operand, ranked_dims, DATA_FORMAT};
use crate::interfaces::*;
use ge_ir::attributes::{Attribute, Format, FormatAttr};
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{strides, Data, Tensor};
use ge_ir::{DType, Dim, Type};

/// Rows (and the N block of FRACTAL_Z) of a fractal.
pub const FRACTAL: i64 = 16;

/// The format names `data.transdata` accepts.
pub const FORMAT_NAMES: &[&str] = &[
    "ND",
    "NCHW",
    "NHWC",
    "HWCN",
    "CHWN",
    "NC1HWC0",
    "FRACTAL_Z",
    "FRACTAL_NZ",
];

/// Which logical index space a format lays out.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Family {
    /// `[N, C, H, W]`
    Image,
    /// `[..., M, N]`
    Matrix,
}

pub fn family(f: Format) -> Option<Family> {
    match f {
        Format::NCHW
        | Format::NHWC
        | Format::HWCN
        | Format::CHWN
        | Format::NC1HWC0
        | Format::FRACTAL_Z => Some(Family::Image),
        Format::ND | Format::FRACTAL_NZ => Some(Family::Matrix),
        _ => None,
    }
}

/// Whether the storage shape pads and reorders so that the logical shape
/// cannot be recovered from it.
pub fn is_padded(f: Format) -> bool {
    matches!(f, Format::NC1HWC0 | Format::FRACTAL_Z | Format::FRACTAL_NZ)
}

/// Storage dim `i` of a plain image format is logical dim `perm[i]`.
fn plain_perm(f: Format) -> Option<[usize; 4]> {
    match f {
        Format::NCHW => Some([0, 1, 2, 3]),
        Format::NHWC => Some([0, 2, 3, 1]),
        Format::HWCN => Some([2, 3, 1, 0]),
        Format::CHWN => Some([1, 2, 3, 0]),
        _ => None,
    }
}

fn unsupported(f: Format) -> String {
    format!(
        "format {f} is not supported by data.transdata (expected one of {})",
        FORMAT_NAMES.join(", ")
    )
}

/// The logical dims of a tensor stored in a plain format `f` with shape `s`.
pub fn plain_logical<D: Copy>(f: Format, s: &[D]) -> Result<Vec<D>, String> {
    if f == Format::ND {
        if s.is_empty() {
            return Err("an ND tensor for transdata must have rank >= 1".into());
        }
        return Ok(s.to_vec());
    }
    let perm = plain_perm(f).ok_or_else(|| {
        if is_padded(f) {
            format!("{f} is not a plain format")
        } else {
            unsupported(f)
        }
    })?;
    if s.len() != 4 {
        return Err(format!(
            "a {f} tensor must have rank 4, but has rank {}",
            s.len()
        ));
    }
    let mut out = [s[0]; 4];
    for (i, &p) in perm.iter().enumerate() {
        out[p] = s[i];
    }
    Ok(out.to_vec())
}

/// The storage dims of logical dims `l` in format `f` (symbolic dims allowed).
pub fn storage_dims(f: Format, l: &[Dim], dtype: DType) -> Result<Vec<Dim>, String> {
    let c0 = Format::c0(dtype);
    match f {
        Format::ND => Ok(l.to_vec()),
        Format::NC1HWC0 => {
            let [n, c, h, w] = image(l)?;
            Ok(vec![n, c.ceil_div_const(c0), h, w, Dim::Static(c0)])
        }
        Format::FRACTAL_Z => {
            let [n, c, h, w] = image(l)?;
            let c1hw = c.ceil_div_const(c0).mul(h).mul(w);
            Ok(vec![
                c1hw,
                n.ceil_div_const(FRACTAL),
                Dim::Static(FRACTAL),
                Dim::Static(c0),
            ])
        }
        Format::FRACTAL_NZ => {
            let (batch, m, n) = matrix(l)?;
            let mut out = batch.to_vec();
            out.extend([
                n.ceil_div_const(c0),
                m.ceil_div_const(FRACTAL),
                Dim::Static(FRACTAL),
                Dim::Static(c0),
            ]);
            Ok(out)
        }
        f => {
            let perm = plain_perm(f).ok_or_else(|| unsupported(f))?;
            let [_, _, _, _] = image(l)?;
            Ok(perm.iter().map(|&p| l[p]).collect())
        }
    }
}

fn image<D: Copy>(l: &[D]) -> Result<[D; 4], String> {
    match l {
        [n, c, h, w] => Ok([*n, *c, *h, *w]),
        _ => Err(format!(
            "image formats need a rank-4 logical shape, but got rank {}",
            l.len()
        )),
    }
}

fn matrix(l: &[Dim]) -> Result<(&[Dim], Dim, Dim), String> {
    match l.len() {
        0 => Err("matrix formats need rank >= 1".into()),
        1 => Ok((&[], Dim::Static(1), l[0])),
        r => Ok((&l[..r - 2], l[r - 2], l[r - 1])),
    }
}

/// A concrete layout: a format over a concrete logical shape.
#[derive(Clone, Debug)]
pub struct Layout {
    pub format: Format,
    pub logical: Vec<usize>,
    pub storage: Vec<usize>,
    c0: usize,
    /// Row-major strides of `storage`.
    st: Vec<usize>,
}

impl Layout {
    pub fn new(format: Format, logical: &[usize], dtype: DType) -> Result<Layout, String> {
        let l: Vec<Dim> = logical.iter().map(|&d| Dim::Static(d as i64)).collect();
        let storage = storage_dims(format, &l, dtype)?
            .iter()
            .map(|d| d.as_static().map(|v| v.max(0) as usize))
            .collect::<Option<Vec<_>>>()
            .ok_or("storage shape is not static")?;
        let st = strides(&storage);
        Ok(Layout {
            format,
            logical: logical.to_vec(),
            storage,
            c0: Format::c0(dtype) as usize,
            st,
        })
    }

    /// The logical index of storage index `s` (in `out`); `false` for padding.
    pub fn to_logical(&self, s: &[usize], out: &mut [usize]) -> bool {
        let l = &self.logical;
        let c0 = self.c0;
        let f = FRACTAL as usize;
        match self.format {
            Format::ND => {
                out.copy_from_slice(s);
                true
            }
            Format::NC1HWC0 => {
                let c = s[1] * c0 + s[4];
                out.copy_from_slice(&[s[0], c, s[2], s[3]]);
                c < l[1]
            }
            Format::FRACTAL_Z => {
                let hw = (l[2] * l[3]).max(1);
                let (c1, r) = (s[0] / hw, s[0] % hw);
                let w = l[3].max(1);
                let (n, c) = (s[1] * f + s[2], c1 * c0 + s[3]);
                out.copy_from_slice(&[n, c, r / w, r % w]);
                n < l[0] && c < l[1]
            }
            Format::FRACTAL_NZ => {
                let r = s.len();
                let (n1, m1, m0, n0) = (s[r - 4], s[r - 3], s[r - 2], s[r - 1]);
                let (m, n) = (m1 * f + m0, n1 * c0 + n0);
                let lr = l.len();
                out[..lr.saturating_sub(2)].copy_from_slice(&s[..r - 4]);
                if lr == 1 {
                    out[0] = n;
                    m < 1 && n < l[0]
                } else {
                    out[lr - 2] = m;
                    out[lr - 1] = n;
                    m < l[lr - 2] && n < l[lr - 1]
                }
            }
            fmt => {
                let perm = plain_perm(fmt).unwrap_or([0, 1, 2, 3]);
                for (i, &p) in perm.iter().enumerate() {
                    out[p] = s[i];
                }
                true
            }
        }
    }

    /// The flat storage offset of logical index `l`.
    pub fn to_flat(&self, li: &[usize]) -> usize {
        let l = &self.logical;
        let c0 = self.c0;
        let f = FRACTAL as usize;
        let st = &self.st;
        match self.format {
            Format::ND => li.iter().zip(st).map(|(a, b)| a * b).sum(),
            Format::NC1HWC0 => {
                li[0] * st[0] + (li[1] / c0) * st[1] + li[2] * st[2] + li[3] * st[3] + li[1] % c0
            }
            Format::FRACTAL_Z => {
                let vfi = (li[1] / c0) * l[2] * l[3] + li[2] * l[3] + li[3];
                vfi * st[0] + (li[0] / f) * st[1] + (li[0] % f) * st[2] + li[1] % c0
            }
            Format::FRACTAL_NZ => {
                let lr = l.len();
                let (m, n) = if lr == 1 {
                    (0, li[0])
                } else {
                    (li[lr - 2], li[lr - 1])
                };
                let r = st.len();
                let batch: usize = li[..lr.saturating_sub(2)]
                    .iter()
                    .zip(st)
                    .map(|(a, b)| a * b)
                    .sum();
                batch + (n / c0) * st[r - 4] + (m / f) * st[r - 3] + (m % f) * st[r - 2] + n % c0
            }
            fmt => {
                let perm = plain_perm(fmt).unwrap_or([0, 1, 2, 3]);
                perm.iter().zip(st).map(|(&p, s)| li[p] * s).sum()
            }
        }
    }
}

/// The layouts of a conversion from `src` to `dst` over `logical`, checked
/// against the shape the source is stored in.
fn layouts(
    stored: &[usize],
    dtype: DType,
    src: Format,
    dst: Format,
    logical: &[usize],
) -> Result<(Layout, Layout), String> {
    let (fs, fd) = (family(src), family(dst));
    if fs.is_none() || fs != fd {
        return Err(format!("cannot convert {src} to {dst}"));
    }
    let from = Layout::new(src, logical, dtype)?;
    let to = Layout::new(dst, logical, dtype)?;
    if from.storage != stored {
        return Err(format!(
            "the input has shape {stored:?} but {src} storage of logical shape {logical:?} is {:?}",
            from.storage
        ));
    }
    Ok((from, to))
}

/// Every destination element in storage order with the flat source index it
/// copies (`None` for padding).
fn for_each_source(from: &Layout, to: &Layout, mut f: impl FnMut(usize, Option<usize>)) {
    let n: usize = to.storage.iter().product();
    let mut s = vec![0usize; to.storage.len()];
    let mut l = vec![0usize; from.logical.len()];
    for i in 0..n {
        f(i, to.to_logical(&s, &mut l).then(|| from.to_flat(&l)));
        for k in (0..s.len()).rev() {
            s[k] += 1;
            if s[k] < to.storage[k] {
                break;
            }
            s[k] = 0;
        }
    }
}

/// Convert `x` (stored as `src` over logical shape `logical`) to `dst`.
/// Padding becomes zeros; converting back drops it, so `dst → src` after
/// `src → dst` is the identity.
pub fn transdata(
    x: &Tensor,
    src: Format,
    dst: Format,
    logical: &[usize],
) -> Result<Tensor, String> {
    let (from, to) = layouts(&x.shape, x.dtype, src, dst, logical)?;
    let n: usize = to.storage.iter().product();
    let data = match &x.data {
        Data::F(v) => {
            let mut out = Vec::with_capacity(n);
            for_each_source(&from, &to, |_, i| out.push(i.map_or(0.0, |i| v[i])));
            Data::F(out)
        }
        Data::I(v) => {
            let mut out = Vec::with_capacity(n);
            for_each_source(&from, &to, |_, i| out.push(i.map_or(0, |i| v[i])));
            Data::I(out)
        }
    };
    Ok(Tensor {
        shape: to.storage,
        dtype: x.dtype,
        data,
    })
}

/// [`transdata`] of raw elements, as a weight is stored in a constant: each
/// element's bytes are copied (no conversion through `f64`, no index table),
/// so folding a model's weights into their storage formats at compile time
/// moves bytes at memory speed. `splat`: `bytes` is one element standing for
/// all of them. Returns the destination's bytes and whether they are one
/// element standing for all (a splat source with no padding to add). Element
/// types narrower than a byte are refused (the caller falls back to
/// [`transdata`]).
pub fn transdata_bytes(
    bytes: &[u8],
    splat: bool,
    stored: &[usize],
    dtype: DType,
    (src, dst): (Format, Format),
    logical: &[usize],
) -> Result<(Vec<u8>, bool), String> {
    if !dtype.bit_width().is_multiple_of(8) {
        return Err(format!("{dtype} elements are not whole bytes"));
    }
    let es = dtype.byte_size();
    let (from, to) = layouts(stored, dtype, src, dst, logical)?;
    let count: usize = stored.iter().product();
    let want = if splat { es } else { count * es };
    if bytes.len() != want {
        return Err(format!(
            "{} bytes of elements, expected {want}",
            bytes.len()
        ));
    }
    let n: usize = to.storage.iter().product();
    if splat && n == count {
        // A permutation of equal elements is the same splat.
        return Ok((bytes.to_vec(), true));
    }
    let mut out = vec![0u8; n * es];
    // A splat's runs (at most the destination's innermost dim long) are
    // prefixes of one run of the element: each is one copy.
    let run = if splat {
        bytes.repeat(to.storage.last().copied().unwrap_or(1).max(1))
    } else {
        vec![]
    };
    let copied = copy_runs(&from, &to, |d, src, stride, count| {
        let dst = &mut out[d * es..(d + count) * es];
        if splat {
            dst.copy_from_slice(&run[..count * es]);
        } else if stride == 1 {
            dst.copy_from_slice(&bytes[src * es..(src + count) * es]);
        } else {
            for (j, e) in dst.chunks_exact_mut(es).enumerate() {
                let s = (src + j * stride) * es;
                e.copy_from_slice(&bytes[s..s + es]);
            }
        }
    });
    if !copied {
        for_each_source(&from, &to, |d, s| {
            if let Some(s) = s {
                let s = if splat { 0 } else { s * es };
                out[d * es..(d + 1) * es].copy_from_slice(&bytes[s..s + es]);
            }
        });
    }
    Ok((out, false))
}

/// [`for_each_source`] a run at a time, for a source stored plainly (ND or a
/// permutation of NCHW, so its flat index is linear in the logical one): along
/// the destination's innermost storage dim one logical axis `k` counts up
/// (ND, the permutations, and the `c0`/`n0` lane of the padded formats), so a
/// run is a strided copy of its elements before the padding of axis `k` —
/// `copy(dst, src, stride, count)` — instead of an index computation per
/// element (which made converting VGG-19's weights to FRACTAL_Z a quarter of
/// its compile). `false`, copying nothing, for any other source.
fn copy_runs(from: &Layout, to: &Layout, mut copy: impl FnMut(usize, usize, usize, usize)) -> bool {
    if from.format != Format::ND && plain_perm(from.format).is_none() {
        return false;
    }
    let (Some(&len), r) = (to.storage.last(), to.storage.len()) else {
        return false;
    };
    let n: usize = to.storage.iter().product();
    if n == 0 {
        return true;
    }
    let rank = from.logical.len();
    let mut s = vec![0usize; r];
    let (mut l0, mut l1) = (vec![0usize; rank], vec![0usize; rank]);
    // The axis the innermost storage dim counts along (any, for runs of one).
    let k = if len > 1 {
        to.to_logical(&s, &mut l0);
        s[r - 1] = 1;
        to.to_logical(&s, &mut l1);
        s[r - 1] = 0;
        let moved: Vec<usize> = (0..rank).filter(|&i| l0[i] != l1[i]).collect();
        match moved[..] {
            [k] if l1[k] == l0[k] + 1 => k,
            _ => return false,
        }
    } else {
        0
    };
    let stride = if len > 1 {
        let mut unit = vec![0usize; rank];
        unit[k] = 1;
        from.to_flat(&unit)
    } else {
        0
    };
    let mut d = 0;
    while d < n {
        if to.to_logical(&s, &mut l0) {
            let count = if len > 1 {
                (from.logical[k] - l0[k]).min(len)
            } else {
                1
            };
            copy(d, from.to_flat(&l0), stride, count);
        }
        d += len;
        for i in (0..r - 1).rev() {
            s[i] += 1;
            if s[i] < to.storage[i] {
                break;
            }
            s[i] = 0;
        }
    }
    true
}

// ---- the op ------------------------------------------------------------------------

fn format_attr(name: &str, v: Option<&str>) -> Result<Format, String> {
    let s = v.ok_or_else(|| format!("requires attribute '{name}' (a format name)"))?;
    let f = Format::parse(s).ok_or_else(|| {
        format!(
            "attribute '{name}' is '{s}', which is not a format (expected one of {})",
            FORMAT_NAMES.join(", ")
        )
    })?;
    family(f).ok_or_else(|| unsupported(f))?;
    Ok(f)
}

/// What transdata needs to know about its operand: the logical dims and the
/// origin (format, shape) to record on padded results.
struct Source {
    logical: Vec<Dim>,
    origin: (Format, Vec<Dim>),
}

fn source(t: Type, src: Format, dst: Format) -> Result<Source, String> {
    let dims = ranked_dims(t, "operand 'input'")?;
    if src == dst {
        return Err(format!(
            "converts {src} to itself; src_format and dst_format must differ"
        ));
    }
    if family(src) != family(dst) {
        return Err(format!(
            "cannot convert {src} to {dst}: {src} lays out {} and {dst} {}",
            describe(src),
            describe(dst)
        ));
    }
    let enc = t
        .as_tensor()
        .and_then(|tt| tt.encoding)
        .and_then(|e| e.as_format());
    if let Some(e) = enc {
        if e.storage != src {
            return Err(format!(
                "operand 'input' is stored as {} (its type is '{t}') but src_format is {src}",
                e.storage
            ));
        }
    }
    if !is_padded(src) {
        let logical = plain_logical(src, &dims)?;
        return Ok(Source {
            logical,
            origin: (src, dims),
        });
    }
    let (Some(origin), Some(oshape)) = (
        enc.and_then(|e| e.origin),
        enc.and_then(|e| e.origin_shape.as_ref()),
    ) else {
        return Err(format!(
            "operand 'input' of type '{t}' is {src} data, so its type must carry \
             #ge.format<{src}, origin = FORMAT, origin_shape = [...]> to say its logical shape"
        ));
    };
    if is_padded(origin) || family(origin) != family(src) {
        return Err(format!(
            "operand 'input' has origin format {origin}, which is not a plain layout of {src}"
        ));
    }
    let logical = plain_logical(origin, oshape)?;
    let dtype = dtype_of(t)?;
    let want = storage_dims(src, &logical, dtype)?;
    let ok = want.len() == dims.len() && want.iter().zip(&dims).all(|(a, b)| a.compatible(*b));
    if !ok {
        return Err(format!(
            "operand 'input' has shape {} but {src} storage of origin shape {} ({origin}) is {}",
            fmt_dims(&dims),
            fmt_dims(oshape),
            fmt_dims(&want)
        ));
    }
    Ok(Source {
        logical,
        origin: (origin, oshape.to_vec()),
    })
}

fn describe(f: Format) -> &'static str {
    match family(f) {
        Some(Family::Image) => "images [N, C, H, W]",
        Some(Family::Matrix) => "matrices [..., M, N]",
        None => "an unsupported layout",
    }
}

/// The result type of converting a value of type `t` from `src` to `dst`.
pub fn transdata_type(t: Type, src: Format, dst: Format) -> Result<Type, String> {
    let s = source(t, src, dst)?;
    let dtype = dtype_of(t)?;
    let dims = storage_dims(dst, &s.logical, dtype)?;
    let enc = is_padded(dst).then(|| {
        Attribute::format(FormatAttr {
            storage: dst,
            origin: Some(s.origin.0),
            origin_shape: Some(s.origin.1.clone().into()),
        })
    });
    Ok(Type::tensor_encoded(&dims, dtype, enc))
}

fn infer_transdata(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = operand(cx, 0)?;
    let a = Transdata::attrs(cx);
    let src = format_attr("src_format", a.src_format())?;
    let dst = format_attr("dst_format", a.dst_format())?;
    Ok(vec![transdata_type(t, src, dst)?])
}

fn sem_transdata(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let a = Transdata::attrs(cx);
    let src = format_attr("src_format", a.src_format())?;
    let dst = format_attr("dst_format", a.dst_format())?;
    let logical: Vec<usize> = if is_padded(src) {
        // The logical shape comes from the operand type's encoding; its
        // symbols were bound when the operand was produced.
        let v = crate::memory::nth_operand(cx.body, cx.op, 0).ok_or("has no operand")?;
        let t = cx.body.value_type(v);
        let s = source(t, src, dst)?;
        s.logical
            .iter()
            .map(|d| {
                d.eval(cx.symbols())
                    .and_then(|v| usize::try_from(v).ok())
                    .ok_or_else(|| format!("the origin shape of '{t}' is not known at run time"))
            })
            .collect::<Result<_, _>>()?
    } else {
        plain_logical(src, &x[0].shape)?
    };
    Ok(vec![transdata(x[0], src, dst, &logical)?])
}

def_op! {
    /// Change the storage format (Ascend TransData)
    ///
    /// `data.transdata %x {src_format = "NCHW", dst_format = "NC1HWC0"}` re-lays out a tensor
    /// between ND, NCHW, NHWC, HWCN, CHWN, NC1HWC0, FRACTAL_Z and FRACTAL_NZ with GE's exact
    /// layouts (C0 = 16 for 16-bit types, 32 for 8-bit, 8 for 32-bit; padding is zeros):
    ///
    /// - NC1HWC0: `[N, ceil(C/C0), H, W, C0]`, `[n, c1, h, w, c0] = x[n, c1*C0+c0, h, w]`
    /// - FRACTAL_Z (conv weights OIHW): `[ceil(C/C0)*H*W, ceil(N/16), 16, C0]`,
    ///   `[c1*H*W + h*W + w, n1, n0, c0] = x[n1*16+n0, c1*C0+c0, h, w]`
    /// - FRACTAL_NZ (matrices `[..., M, N]`): `[..., ceil(N/C0), ceil(M/16), 16, C0]`,
    ///   `[..., n1, m1, m0, n0] = x[..., m1*16+m0, n1*C0+n0]`
    ///
    /// Image formats (NCHW, NHWC, HWCN, CHWN, NC1HWC0, FRACTAL_Z) convert among themselves,
    /// matrix formats (ND, FRACTAL_NZ) among themselves. A padded result type carries
    /// `#ge.format<DST, origin = SRC, origin_shape = [...]>`, and a padded operand must carry
    /// it: that is how the inverse transdata knows the shape to restore, so `NCHW → NC1HWC0 →
    /// NCHW` is the identity.
    pub Transdata = "data.transdata" {
        operands { input: AnyTensor },
        results { output: AnyTensor },
        attrs {
            /// the operand's storage format
            src_format: Enum(FORMAT_NAMES),
            /// the result's storage format
            dst_format: Enum(FORMAT_NAMES),
        },
        traits [Pure, SameOperandsElementType],
        format: DATA_FORMAT,
        infer: infer_transdata,
        semantics: sem_transdata,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Injective,
            CUBE_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Transdata,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&TRANSDATA];

#[cfg(test)]
mod tests {
    use super::*;

    fn iota(shape: Vec<usize>, dt: DType) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_i64(shape, dt, (1..=n as i64).collect())
    }

    #[test]
    fn nc1hwc0_pads_channels_with_zeros() {
        let x = iota(vec![1, 3, 1, 2], DType::F16);
        let y = transdata(&x, Format::NCHW, Format::NC1HWC0, &[1, 3, 1, 2]).unwrap();
        assert_eq!(y.shape, vec![1, 1, 1, 2, 16]);
        let v = y.to_i64();
        // (h=0, w=0): channels 1, 3, 5 then zeros.
        assert_eq!(&v[..4], &[1, 3, 5, 0]);
        assert_eq!(&v[16..19], &[2, 4, 6]);
        assert!(v[19..32].iter().all(|&e| e == 0));
        let back = transdata(&y, Format::NC1HWC0, Format::NCHW, &[1, 3, 1, 2]).unwrap();
        assert_eq!(back, x);
    }

    #[test]
    fn fractal_z_matches_ge() {
        // OIHW weights [N=2, C=3, H=1, W=1], f32 (C0 = 8).
        let x = iota(vec![2, 3, 1, 1], DType::F32);
        let y = transdata(&x, Format::NCHW, Format::FRACTAL_Z, &[2, 3, 1, 1]).unwrap();
        assert_eq!(y.shape, vec![1, 1, 16, 8]);
        let v = y.to_i64();
        assert_eq!(&v[..3], &[1, 2, 3]); // n0 = 0: c = 0..3
        assert_eq!(&v[8..11], &[4, 5, 6]); // n0 = 1
        assert!(v[16..].iter().all(|&e| e == 0));
    }

    #[test]
    fn fractal_nz_matches_ge() {
        let x = iota(vec![2, 3], DType::F16);
        let y = transdata(&x, Format::ND, Format::FRACTAL_NZ, &[2, 3]).unwrap();
        assert_eq!(y.shape, vec![1, 1, 16, 16]);
        let v = y.to_i64();
        assert_eq!(&v[..4], &[1, 2, 3, 0]);
        assert_eq!(&v[16..19], &[4, 5, 6]);
        let back = transdata(&y, Format::FRACTAL_NZ, Format::ND, &[2, 3]).unwrap();
        assert_eq!(back, x);
    }

    proptest::proptest! {
        /// Folding weights by bytes gives what the reference conversion
        /// gives, for every format pair, element size and shape; a splat
        /// source gives the bytes of its materialised conversion.
        #[test]
        fn bytes_conversion_equals_reference(
            dims in proptest::collection::vec(1usize..7, 4),
            pair in 0usize..11,
            dt in proptest::sample::select(vec![DType::F32, DType::F16, DType::I8, DType::I64]),
            splat in proptest::bool::ANY,
        ) {
            let (src, dst) = [
                (Format::NCHW, Format::NC1HWC0),
                (Format::NCHW, Format::FRACTAL_Z),
                (Format::NCHW, Format::NHWC),
                (Format::HWCN, Format::FRACTAL_Z),
                (Format::ND, Format::FRACTAL_NZ),
                (Format::NHWC, Format::NC1HWC0),
                (Format::CHWN, Format::FRACTAL_Z),
                (Format::NHWC, Format::HWCN),
                // Padded sources: converted element by element.
                (Format::NC1HWC0, Format::NCHW),
                (Format::FRACTAL_Z, Format::NHWC),
                (Format::FRACTAL_NZ, Format::ND),
            ][pair];
            // `dims` is the logical shape; the source is stored as `src`
            // (a padded one converted by the reference, so never a splat).
            let logical = dims.clone();
            let n: usize = dims.iter().product();
            let plain = if family(src) == Some(Family::Matrix) { Format::ND } else { Format::NCHW };
            let splat = splat && !is_padded(src);
            let x = if splat {
                Tensor::from_i64(dims.clone(), dt, vec![3; n])
            } else {
                Tensor::from_i64(dims.clone(), dt, (1..=n as i64).map(|v| v % 100).collect())
            };
            let x = if src == plain { x } else { transdata(&x, plain, src, &logical).unwrap() };
            let want = super::super::tensor_to_bytes(&transdata(&x, src, dst, &logical).unwrap());
            let bytes = super::super::tensor_to_bytes(&x);
            let es = dt.byte_size();
            let input = if splat { &bytes[..es] } else { &bytes[..] };
            let stored = x.shape.clone();
            let (got, is_splat) = transdata_bytes(input, splat, &stored, dt, (src, dst), &logical).unwrap();
            if is_splat {
                proptest::prop_assert!(want.chunks(es).all(|c| c == &got[..]));
            } else {
                proptest::prop_assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn bytes_conversion_refuses_wrong_sizes_and_sub_byte_types() {
        let e = transdata_bytes(
            &[0; 7],
            false,
            &[1, 2, 1, 1],
            DType::F32,
            (Format::NCHW, Format::NC1HWC0),
            &[1, 2, 1, 1],
        );
        assert!(e.unwrap_err().contains("7 bytes"));
        let e = transdata_bytes(
            &[0; 1],
            false,
            &[1, 2, 1, 1],
            DType::I4,
            (Format::NCHW, Format::NC1HWC0),
            &[1, 2, 1, 1],
        );
        assert!(e.unwrap_err().contains("not whole bytes"));
    }

    #[test]
    fn symbolic_storage_dims() {
        let b = Dim::sym("B");
        let l = [b, Dim::Static(3), Dim::Static(224), Dim::Static(224)];
        let s = storage_dims(Format::NC1HWC0, &l, DType::F16).unwrap();
        assert_eq!(
            s,
            vec![
                b,
                Dim::Static(1),
                Dim::Static(224),
                Dim::Static(224),
                Dim::Static(16)
            ]
        );
    }
}
