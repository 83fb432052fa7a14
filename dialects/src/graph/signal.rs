//! Signal processing (ONNX DFT, STFT, HannWindow, HammingWindow,
//! BlackmanWindow, MelWeightMatrix).
//!
//! ONNX passes the sizes of these ops as scalar *inputs* (the window's
//! `size`, DFT's `axis` and `dft_length`, STFT's `frame_step` and
//! `frame_length`, all five of MelWeightMatrix's); here they are attributes,
//! so shapes are inferred from them, and the importer wraps the op in a
//! `graph.specialize` when they are known only at run time.
//!
//! The semantics are the definitions: each coefficient of a DFT is the direct
//! sum `Σ x[j]·e^(∓2πi·jk/n)` in f64, O(n²) per line — the oracle of the
//! runtime's native kernels (runtime/src/kernels/signal.rs), which compute the
//! same transform with an FFT. Everything else is shared so that both refuse
//! and lay out the same things: the checks and sizes ([`dft_dims`],
//! [`stft_dims`]), the walk over the lines with its zero padding, one-sided
//! output and IRFFT spectrum ([`dft_run`], [`stft_run`], which take the
//! length-n transform as an argument), and the window and mel functions.

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interfaces::CostCtx;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{AttrSource, InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim, Type};

type SemResult = Result<Vec<Tensor>, String>;

/// The element types of signals and spectra (ONNX's T1 of DFT and STFT).
pub const SIGNAL: &[DType] = &[DType::F16, DType::BF16, DType::F32, DType::F64];

/// The element types a window or mel matrix may be produced in (ONNX's
/// `output_datatype`).
pub const GENERATED: &[DType] = &[
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
];

/// A complex number, (real, imaginary).
pub type C = (f64, f64);

/// The unnormalised length-`buf.len()` DFT of `buf` in place, by its
/// definition: `X[k] = Σ_j x[j]·e^(∓2πi·jk/n)` (`+` when `inverse`). The
/// twiddle `jk` is taken modulo `n`, so every angle is one of `n` exact ones.
pub fn direct_dft(buf: &mut [C], inverse: bool) {
    let n = buf.len();
    if n == 0 {
        return;
    }
    let sign = if inverse { 1.0 } else { -1.0 };
    let tw: Vec<C> = (0..n)
        .map(|m| {
            let a = 2.0 * std::f64::consts::PI * m as f64 / n as f64;
            (a.cos(), sign * a.sin())
        })
        .collect();
    let x = buf.to_vec();
    for (k, out) in buf.iter_mut().enumerate() {
        let (mut re, mut im) = (0.0, 0.0);
        let mut idx = 0usize;
        for &(xr, xi) in &x {
            let (c, s) = tw[idx];
            re += xr * c - xi * s;
            im += xr * s + xi * c;
            idx += k;
            if idx >= n {
                idx %= n;
            }
        }
        *out = (re, im);
    }
}

/// A non-negative attribute value as a size.
fn size_attr(v: i64, name: &str, min: i64) -> Result<usize, String> {
    if v < min {
        return Err(format!("attribute '{name}' must be >= {min}, but got {v}"));
    }
    usize::try_from(v).map_err(|_| format!("attribute '{name}' is too large: {v}"))
}

/// A static dim as a size, if it is one.
fn stat(d: Dim) -> Option<usize> {
    d.as_static().and_then(|v| usize::try_from(v).ok())
}

/// Dims of a shape.
fn to_dims(shape: &[usize]) -> Vec<Dim> {
    shape.iter().map(|&d| Dim::Static(d as i64)).collect()
}

/// Static dims as sizes (after [`to_dims`] and inference on static dims,
/// every dim is static).
fn to_shape(dims: &[Dim]) -> Result<Vec<usize>, String> {
    dims.iter()
        .map(|&d| stat(d).ok_or_else(|| format!("dim {d} is not a static size")))
        .collect()
}

// ---- DFT -------------------------------------------------------------------------

/// The attributes of a DFT.
#[derive(Clone, Copy, Debug)]
pub struct DftParams {
    pub axis: i64,
    pub inverse: bool,
    pub onesided: bool,
    /// `dft_length`, when given.
    pub length: Option<usize>,
}

impl DftParams {
    pub fn of(src: &impl AttrSource) -> Result<DftParams, String> {
        let a = Dft::attrs(src);
        let flag = |v: i64, name: &str| match v {
            0 | 1 => Ok(v == 1),
            _ => Err(format!("attribute '{name}' must be 0 or 1, but got {v}")),
        };
        Ok(DftParams {
            axis: a.axis(),
            inverse: flag(a.inverse(), "inverse")?,
            onesided: flag(a.onesided(), "onesided")?,
            length: a
                .dft_length()
                .map(|v| size_attr(v, "dft_length", 1))
                .transpose()?,
        })
    }
}

/// What a DFT does to an input of `dims` (`[..signal dims.., 1 or 2]`): the
/// transformed axis and the result's dims. The errors are the ONNX rules: the
/// axis lies in `[-r, -2] ∪ [0, r-2]`, a one-sided forward DFT (RFFT) takes
/// real input, a one-sided inverse (IRFFT) complex input, and the length is at
/// least 1 (IRFFT's default is `2·(n-1)`).
pub fn dft_dims(p: &DftParams, dims: &[Dim]) -> Result<(usize, Vec<Dim>), String> {
    let r = dims.len();
    if r < 2 {
        return Err(format!(
            "operand 'input' must have rank >= 2 (signal dims, then 1 for real or 2 for complex values), but has rank {r}"
        ));
    }
    let last = stat(dims[r - 1]);
    if let Some(c) = last.filter(|&c| c != 1 && c != 2) {
        return Err(format!(
            "the last dim of operand 'input' must be 1 (real) or 2 (complex), but is {c}"
        ));
    }
    let ri = r as i64;
    let axis = if p.axis < 0 { p.axis + ri } else { p.axis };
    if axis < 0 || axis > ri - 2 {
        return Err(format!(
            "attribute 'axis' {} is out of range for rank {r}: expected {}..=-2 or 0..={} (the last dim holds the real and imaginary parts)",
            p.axis,
            -ri,
            ri - 2
        ));
    }
    let axis = axis as usize;
    match (p.onesided, p.inverse, last) {
        (true, false, Some(2)) => {
            return Err(
                "a one-sided forward DFT (RFFT) takes real input (last dim 1), but the input is complex"
                    .into(),
            )
        }
        (true, true, Some(1)) => {
            return Err(
                "a one-sided inverse DFT (IRFFT) takes complex input (last dim 2), but the input is real"
                    .into(),
            )
        }
        _ => {}
    }
    let n = dims[axis];
    let len = match p.length {
        Some(l) => Dim::Static(l as i64),
        None if p.onesided && p.inverse => n.sub(Dim::Static(1)).mul_const(2),
        None => n,
    };
    if let Some(l) = len.as_static().filter(|&l| l < 1) {
        return Err(format!(
            "the DFT length must be >= 1, but is {l} (the axis has {n} elements)"
        ));
    }
    let mut out = dims.to_vec();
    out[axis] = if p.onesided && !p.inverse {
        len.div_const(2).add(Dim::Static(1))
    } else {
        len
    };
    out[r - 1] = Dim::Static(if p.onesided && p.inverse { 1 } else { 2 });
    Ok((axis, out))
}

/// A DFT on concrete shapes: the input is `outer x n_in x inner x c_in`, the
/// result `outer x n_out x inner x c_out`; each line is transformed at length
/// `len`.
#[derive(Clone, Debug)]
pub struct DftPlan {
    pub outer: usize,
    pub n_in: usize,
    pub inner: usize,
    pub c_in: usize,
    pub len: usize,
    pub n_out: usize,
    pub c_out: usize,
    pub inverse: bool,
    /// One-sided inverse: the input is half a Hermitian spectrum.
    pub irfft: bool,
    pub out_shape: Vec<usize>,
}

impl DftPlan {
    pub fn new(p: &DftParams, shape: &[usize]) -> Result<DftPlan, String> {
        let (axis, out) = dft_dims(p, &to_dims(shape))?;
        let out_shape = to_shape(&out)?;
        checked_numel(&out_shape)?;
        let r = shape.len();
        let len = match p.length {
            Some(l) => l,
            None if p.onesided && p.inverse => 2 * (shape[axis] - 1),
            None => shape[axis],
        };
        Ok(DftPlan {
            outer: shape[..axis].iter().product(),
            n_in: shape[axis],
            inner: shape[axis + 1..r - 1].iter().product(),
            c_in: shape[r - 1],
            len,
            n_out: out_shape[axis],
            c_out: out_shape[r - 1],
            inverse: p.inverse,
            irfft: p.onesided && p.inverse,
            out_shape,
        })
    }
}

/// Run a DFT: for every line, load it (zero padded or cut to the length;
/// for an IRFFT, the Hermitian spectrum completed from its first half),
/// transform it with `transform` (the unnormalised length-`len` DFT in
/// place, in the direction of `p.inverse`), scale an inverse by `1/len` and
/// store the result's first `n_out` values (real parts only for an IRFFT).
pub fn dft_run(p: &DftPlan, x: &[f64], out: &mut [f64], transform: &mut dyn FnMut(&mut [C])) {
    let mut buf = vec![(0.0, 0.0); p.len];
    let scale = if p.inverse { 1.0 / p.len as f64 } else { 1.0 };
    let at = |j: usize, o: usize, i: usize| -> C {
        let b = ((o * p.n_in + j) * p.inner + i) * p.c_in;
        (x[b], if p.c_in == 2 { x[b + 1] } else { 0.0 })
    };
    for o in 0..p.outer {
        for i in 0..p.inner {
            buf.iter_mut().for_each(|v| *v = (0.0, 0.0));
            if p.irfft {
                let half = p.len / 2 + 1;
                for (j, v) in buf.iter_mut().enumerate().take(half.min(p.n_in)) {
                    *v = at(j, o, i);
                }
                for j in half..p.len {
                    let (re, im) = buf[p.len - j];
                    buf[j] = (re, -im);
                }
            } else {
                for (j, v) in buf.iter_mut().enumerate().take(p.n_in) {
                    *v = at(j, o, i);
                }
            }
            transform(&mut buf);
            for (k, &(re, im)) in buf.iter().enumerate().take(p.n_out) {
                let b = ((o * p.n_out + k) * p.inner + i) * p.c_out;
                out[b] = re * scale;
                if p.c_out == 2 {
                    out[b + 1] = im * scale;
                }
            }
        }
    }
}

fn infer_dft(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let p = DftParams::of(cx)?;
    let t = cx.operand_types[0];
    let dt = dtype_of(t)?;
    match dims(t, "input")? {
        Some(d) => Ok(vec![Type::tensor(&dft_dims(&p, &d)?.1, dt)]),
        None => Ok(vec![Type::unranked(dt)]),
    }
}

fn sem_dft(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    let plan = DftPlan::new(&DftParams::of(cx)?, &t[0].shape)?;
    let mut out = vec![0.0; plan.out_shape.iter().product()];
    let inverse = plan.inverse;
    dft_run(&plan, &t[0].to_f64(), &mut out, &mut |b| {
        direct_dft(b, inverse)
    });
    let dt = result_dtype(cx, 0, t[0].dtype);
    Ok(vec![Tensor::from_f64(plan.out_shape, dt, out)])
}

/// `5·n·log2(n)` per transformed line (the FFT's count), `n` the result's
/// length along the axis.
fn dft_flops(cx: &CostCtx) -> f64 {
    let out = cx
        .result_types
        .first()
        .map(|&t| cx.dims(t))
        .unwrap_or_default();
    let axis = Dft::attrs(cx).axis();
    let r = out.len() as i64;
    let a = if axis < 0 { axis + r } else { axis };
    let n = usize::try_from(a)
        .ok()
        .and_then(|a| out.get(a).copied())
        .unwrap_or(1.0)
        .max(2.0);
    5.0 * cx.out_elements() * n.log2()
}

def_op! {
    /// Discrete Fourier transform along one axis (ONNX DFT)
    ///
    /// `input` is `[..signal dims.., 1]` (real) or `[..., 2]` (complex: real and imaginary
    /// parts); `axis` is a signal axis (`[-r, -2] ∪ [0, r-2]`, negative from the back, the
    /// last dim included). Each line along `axis` is cut or zero padded to `dft_length`
    /// (default: its length) and transformed: `y[k] = Σ_j x[j]·e^(-2πi·jk/n)`, or with
    /// `inverse` `x[j] = 1/n·Σ_k y[k]·e^(2πi·jk/n)`; the result is complex (`[..., 2]`).
    /// `onesided` with a forward transform (RFFT, real input) keeps `n/2 + 1` coefficients;
    /// with `inverse` (IRFFT, complex input) the input is the first half of a Hermitian
    /// spectrum (`n/2 + 1` values used, default `n = 2·(m - 1)`) and the result real
    /// (`[..., 1]`). The ONNX importer maps opset 17's `axis` attribute and opset 20's input;
    /// values known only at run time make it a `graph.specialize`.
    pub Dft = "graph.dft" {
        operands { input: TensorOf(SIGNAL) },
        results { output: TensorOf(SIGNAL) },
        attrs {
            /// the transformed axis
            axis: I64 = -2,
            /// 1: the inverse transform (scaled by 1/n)
            inverse: I64 = 0,
            /// 1: one-sided spectrum (RFFT, or IRFFT with `inverse`)
            onesided: I64 = 0,
            /// the transform's length (default: the axis's; IRFFT: 2·(m - 1))
            dft_length: Option<I64>,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_dft,
        semantics: sem_dft,
        interfaces [
            Cost::vector(dft_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Black,
            KernelFamily::Signal,
        ],
        es,
    }
}

// ---- STFT ------------------------------------------------------------------------

/// The attributes of an STFT.
#[derive(Clone, Copy, Debug)]
pub struct StftParams {
    pub frame_step: usize,
    pub frame_length: Option<usize>,
    pub onesided: bool,
}

impl StftParams {
    pub fn of(src: &impl AttrSource) -> Result<StftParams, String> {
        let a = Stft::attrs(src);
        let step = a.frame_step().ok_or("requires attribute 'frame_step'")?;
        let onesided = match a.onesided() {
            v @ (0 | 1) => v == 1,
            v => return Err(format!("attribute 'onesided' must be 0 or 1, but got {v}")),
        };
        Ok(StftParams {
            frame_step: size_attr(step, "frame_step", 1)?,
            frame_length: a
                .frame_length()
                .map(|v| size_attr(v, "frame_length", 1))
                .transpose()?,
            onesided,
        })
    }
}

/// The frame length and result dims of an STFT of a `signal` of `[batch,
/// length, 1 or 2]` with a window of `window` dims: `[batch, frames, bins,
/// 2]`, `frames = (length - frame_length) / frame_step + 1`, `bins =
/// frame_length / 2 + 1` one-sided (real signals only) or `frame_length`. The
/// frame length is the attribute, else the window's length, else the signal's.
pub fn stft_dims(
    p: &StftParams,
    signal: &[Dim],
    window: Option<&[Dim]>,
) -> Result<(Dim, Vec<Dim>), String> {
    let &[batch, len, c] = signal else {
        return Err(format!(
            "operand 'signal' must have rank 3 ([batch, length, 1 or 2]), but has rank {}",
            signal.len()
        ));
    };
    match stat(c) {
        Some(c) if c != 1 && c != 2 => {
            return Err(format!(
                "the last dim of operand 'signal' must be 1 (real) or 2 (complex), but is {c}"
            ))
        }
        Some(2) if p.onesided => {
            return Err(
                "a one-sided STFT takes a real signal (last dim 1), but the signal is complex; set onesided = 0"
                    .into(),
            )
        }
        _ => {}
    }
    let wlen = match window {
        Some(&[w]) => Some(w),
        Some(w) => {
            return Err(format!(
                "operand 'window' must have rank 1, but has rank {}",
                w.len()
            ))
        }
        None => None,
    };
    let frame = match (p.frame_length, wlen) {
        (Some(f), Some(w)) => {
            if stat(w).is_some_and(|w| w != f) {
                return Err(format!(
                    "the window has {w} elements but 'frame_length' is {f}"
                ));
            }
            Dim::Static(f as i64)
        }
        (Some(f), None) => Dim::Static(f as i64),
        (None, Some(w)) => w,
        (None, None) => len,
    };
    if let (Some(l), Some(f)) = (stat(len), stat(frame)) {
        if f > l || f == 0 {
            return Err(format!(
                "the frame length {f} must be between 1 and the signal's length {l}"
            ));
        }
    }
    let frames = len
        .sub(frame)
        .div_const(p.frame_step as i64)
        .add(Dim::Static(1));
    let bins = if p.onesided {
        frame.div_const(2).add(Dim::Static(1))
    } else {
        frame
    };
    Ok((frame, vec![batch, frames, bins, Dim::Static(2)]))
}

/// An STFT on concrete shapes.
#[derive(Clone, Debug)]
pub struct StftPlan {
    pub batch: usize,
    pub len: usize,
    pub c_in: usize,
    pub frame: usize,
    pub step: usize,
    pub frames: usize,
    pub bins: usize,
    pub out_shape: Vec<usize>,
}

impl StftPlan {
    pub fn new(
        p: &StftParams,
        signal: &[usize],
        window: Option<&[usize]>,
    ) -> Result<StftPlan, String> {
        let w = window.map(to_dims);
        let (frame, out) = stft_dims(p, &to_dims(signal), w.as_deref())?;
        let out_shape = to_shape(&out)?;
        checked_numel(&out_shape)?;
        Ok(StftPlan {
            batch: signal[0],
            len: signal[1],
            c_in: signal[2],
            frame: to_shape(&[frame])?[0],
            step: p.frame_step,
            frames: out_shape[1],
            bins: out_shape[2],
            out_shape,
        })
    }
}

/// Run an STFT: each frame (`frame` samples from `t·step`), weighted by the
/// window (all ones without one), transformed by `transform` (the forward
/// length-`frame` DFT in place); the first `bins` coefficients are stored.
pub fn stft_run(
    p: &StftPlan,
    signal: &[f64],
    window: Option<&[f64]>,
    out: &mut [f64],
    transform: &mut dyn FnMut(&mut [C]),
) {
    let mut buf = vec![(0.0, 0.0); p.frame];
    for b in 0..p.batch {
        for t in 0..p.frames {
            for (j, v) in buf.iter_mut().enumerate() {
                let s = (b * p.len + t * p.step + j) * p.c_in;
                let w = window.map_or(1.0, |w| w[j]);
                let im = if p.c_in == 2 { signal[s + 1] } else { 0.0 };
                *v = (signal[s] * w, im * w);
            }
            transform(&mut buf);
            for (k, &(re, im)) in buf.iter().enumerate().take(p.bins) {
                let o = ((b * p.frames + t) * p.bins + k) * 2;
                out[o] = re;
                out[o + 1] = im;
            }
        }
    }
}

fn infer_stft(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let p = StftParams::of(cx)?;
    let ts = cx.operand_types;
    let dt = dtype_of(ts[0])?;
    if let Some(&w) = ts.get(1) {
        if dtype_of(w)? != dt {
            return Err(format!(
                "operands 'signal' and 'window' must have one element type, but got '{}' and '{w}'",
                ts[0]
            ));
        }
    }
    let window = match ts.get(1) {
        Some(&w) => match dims(w, "window")? {
            Some(d) => Some(d),
            None => return Ok(vec![Type::unranked(dt)]),
        },
        None => None,
    };
    match dims(ts[0], "signal")? {
        Some(d) => Ok(vec![Type::tensor(
            &stft_dims(&p, &d, window.as_deref())?.1,
            dt,
        )]),
        None => Ok(vec![Type::unranked(dt)]),
    }
}

fn sem_stft(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    let w = t.get(1);
    let plan = StftPlan::new(&StftParams::of(cx)?, &t[0].shape, w.map(|w| &w.shape[..]))?;
    let mut out = vec![0.0; plan.out_shape.iter().product()];
    let wv = w.map(|w| w.to_f64());
    stft_run(&plan, &t[0].to_f64(), wv.as_deref(), &mut out, &mut |b| {
        direct_dft(b, false)
    });
    let dt = result_dtype(cx, 0, t[0].dtype);
    Ok(vec![Tensor::from_f64(plan.out_shape, dt, out)])
}

/// `5·n·log2(n)` per frame, `n` the frame length (the bins' dim).
fn stft_flops(cx: &CostCtx) -> f64 {
    let out = cx
        .result_types
        .first()
        .map(|&t| cx.dims(t))
        .unwrap_or_default();
    let n = out.get(2).copied().unwrap_or(1.0).max(2.0);
    5.0 * cx.out_elements() * n.log2()
}

def_op! {
    /// Short-time Fourier transform (ONNX STFT)
    ///
    /// `signal` is `[batch, length, 1]` (real) or `[batch, length, 2]` (complex). Frames of
    /// `frame_length` samples start every `frame_step` samples (`frames = (length -
    /// frame_length) / frame_step + 1`); each is multiplied by `window` (1-D, `frame_length`
    /// values; all ones without it) and transformed by a forward DFT of length
    /// `frame_length`. The result is `[batch, frames, bins, 2]`, `bins = frame_length / 2 + 1`
    /// with `onesided` (real signals only) or `frame_length`. Without `frame_length` the
    /// window's length is the frame length, without either the signal's. The ONNX importer
    /// passes `frame_step` and `frame_length` as attributes, or a `graph.specialize` when
    /// they are known only at run time.
    pub Stft = "graph.stft" {
        operands { signal: TensorOf(SIGNAL), window: Option<TensorOf(SIGNAL)> },
        results { output: TensorOf(SIGNAL) },
        attrs {
            /// samples between the starts of two frames
            frame_step: I64,
            /// samples per frame, the DFT length (default: the window's, else the signal's length)
            frame_length: Option<I64>,
            /// 1: only the `frame_length / 2 + 1` non-redundant bins (real signals)
            onesided: I64 = 1,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_stft,
        semantics: sem_stft,
        interfaces [
            Cost::vector(stft_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Black,
            KernelFamily::Signal,
        ],
        es,
    }
}

// ---- windows ---------------------------------------------------------------------

/// A window function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    Hann,
    Hamming,
    Blackman,
}

/// `size` values of window `kind`, as the ONNX reference computes them with
/// `N = size` (periodic) or `size - 1` (symmetric): Hann `sin²(π·n/N)`,
/// Hamming `25/46 - 21/46·cos(2π·n/N)`, Blackman `0.42 - 0.5·cos(2π·n/N) +
/// 0.08·cos(4π·n/N)`. A symmetric window of one value divides 0 by 0: NaN,
/// as in the reference and onnxruntime.
pub fn window(kind: Window, size: usize, periodic: bool) -> Vec<f64> {
    use std::f64::consts::PI;
    let n1 = if periodic {
        size as f64
    } else {
        size as f64 - 1.0
    };
    (0..size)
        .map(|i| {
            let x = i as f64;
            match kind {
                Window::Hann => (PI * x / n1).sin().powi(2),
                Window::Hamming => 25.0 / 46.0 - 21.0 / 46.0 * (2.0 * PI * x / n1).cos(),
                Window::Blackman => {
                    0.42 - 0.5 * (2.0 * PI * x / n1).cos() + 0.08 * (4.0 * PI * x / n1).cos()
                }
            }
        })
        .collect()
}

/// A generated result's element type, checked against [`GENERATED`].
fn generated_dtype(t: Option<Type>) -> Result<DType, String> {
    let scalar = t.and_then(|t| match t.data() {
        ge_ir::TypeData::Scalar(d) => Some(*d),
        _ => None,
    });
    match scalar {
        Some(d) if GENERATED.contains(&d) => Ok(d),
        _ => Err(format!(
            "attribute 'dtype' must be one of {}, but got {}",
            GENERATED
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", "),
            t.map_or("nothing".to_string(), |t| format!("'{t}'"))
        )),
    }
}

/// A window's size, element type and periodicity, checked.
fn window_params(
    size: Option<i64>,
    periodic: i64,
    dtype: Option<Type>,
) -> Result<(usize, bool, DType), String> {
    let size = size_attr(size.ok_or("requires attribute 'size'")?, "size", 0)?;
    checked_numel(&[size])?;
    let periodic = match periodic {
        v @ (0 | 1) => v == 1,
        v => return Err(format!("attribute 'periodic' must be 0 or 1, but got {v}")),
    };
    Ok((size, periodic, generated_dtype(dtype)?))
}

/// Window ops differ in name, function and docs.
macro_rules! window_op {
    ($ty:ident, $name:literal, $kind:expr, $summary:literal, $desc:literal) => {
        def_op! {
            #[doc = $summary]
            #[doc = ""]
            #[doc = $desc]
            pub $ty = $name {
                results { output: TensorOf(GENERATED) },
                attrs {
                    /// the number of values
                    size: I64,
                    /// 1: periodic (N = size), 0: symmetric (N = size - 1)
                    periodic: I64 = 1,
                    /// the result's element type (ONNX `output_datatype`)
                    dtype: Type,
                },
                traits [Pure],
                format: "attr-dict `:` functional-type(operands, results)",
                verify: verify_by_infer,
                infer: |cx| {
                    let a = $ty::attrs(cx);
                    let (size, _, dt) = window_params(a.size(), a.periodic(), a.dtype())?;
                    Ok(vec![Type::tensor(&[Dim::Static(size as i64)], dt)])
                },
                semantics: |cx, _| {
                    let a = $ty::attrs(cx);
                    let (size, periodic, dt) = window_params(a.size(), a.periodic(), a.dtype())?;
                    Ok(vec![Tensor::from_f64(vec![size], dt, window($kind, size, periodic))])
                },
                interfaces [
                    Cost::TRANSCENDENTAL,
                    FusionPattern::Opaque,
                    CPU_ENGINES,
                    PrecisionClass::Gray,
                    KernelFamily::Signal,
                ],
                es,
            }
        }

        impl $ty<'_> {
            /// The window's size, periodicity and element type, checked.
            pub fn params(src: &impl AttrSource) -> Result<(usize, bool, DType), String> {
                let a = $ty::attrs(src);
                window_params(a.size(), a.periodic(), a.dtype())
            }
        }
    };
}

window_op!(
    HannWindow,
    "graph.hann_window",
    Window::Hann,
    "Hann window (ONNX HannWindow)",
    "`size` values `sin²(π·n/N)`, `N = size` (periodic) or `size - 1` (symmetric), in \
     `dtype`: `%w = graph.hann_window {size = 10 : i64, dtype = f32} : () -> tensor<10xf32>`. \
     The importer makes it a `graph.specialize` when ONNX's `size` input is known only at \
     run time."
);
window_op!(
    HammingWindow,
    "graph.hamming_window",
    Window::Hamming,
    "Hamming window (ONNX HammingWindow)",
    "`size` values `25/46 - 21/46·cos(2π·n/N)`, `N` as for `graph.hann_window`, in `dtype`."
);
window_op!(
    BlackmanWindow,
    "graph.blackman_window",
    Window::Blackman,
    "Blackman window (ONNX BlackmanWindow)",
    "`size` values `0.42 - 0.5·cos(2π·n/N) + 0.08·cos(4π·n/N)`, `N` as for \
     `graph.hann_window`, in `dtype`."
);

// ---- mel weight matrix -----------------------------------------------------------

/// The inputs of a mel weight matrix.
#[derive(Clone, Copy, Debug)]
pub struct MelParams {
    pub num_mel_bins: usize,
    pub dft_length: usize,
    pub sample_rate: usize,
    pub lower_edge_hertz: f64,
    pub upper_edge_hertz: f64,
    pub dtype: DType,
}

impl MelParams {
    pub fn of(src: &impl AttrSource) -> Result<MelParams, String> {
        let a = MelWeightMatrix::attrs(src);
        let need = |v: Option<i64>, name: &str, min: i64| {
            size_attr(v.ok_or(format!("requires attribute '{name}'"))?, name, min)
        };
        let p = MelParams {
            num_mel_bins: need(a.num_mel_bins(), "num_mel_bins", 0)?,
            dft_length: need(a.dft_length(), "dft_length", 1)?,
            sample_rate: need(a.sample_rate(), "sample_rate", 1)?,
            lower_edge_hertz: a
                .lower_edge_hertz()
                .ok_or("requires attribute 'lower_edge_hertz'")?,
            upper_edge_hertz: a
                .upper_edge_hertz()
                .ok_or("requires attribute 'upper_edge_hertz'")?,
            dtype: generated_dtype(a.dtype())?,
        };
        checked_numel(&p.shape())?;
        Ok(p)
    }

    /// `[dft_length / 2 + 1, num_mel_bins]`.
    pub fn shape(&self) -> [usize; 2] {
        [self.dft_length / 2 + 1, self.num_mel_bins]
    }
}

/// The mel weight matrix, row-major `[dft_length / 2 + 1, num_mel_bins]`, as
/// the ONNX reference computes it: `num_mel_bins + 2` points evenly spaced in
/// mel (`2595·log10(1 + f/700)`; the step is the range over the number of
/// points), back to hertz, to spectrogram bins `⌊(dft_length + 1)·f /
/// sample_rate⌋`; band `i` rises from point `i` to `i + 1` and falls to `i +
/// 2` (peak 1). A band reaching outside the spectrogram's bins is an error
/// (the reference's IndexError).
pub fn mel_weight_matrix(p: &MelParams) -> Result<Vec<f64>, String> {
    let [rows, bands] = p.shape();
    let ln10 = std::f64::consts::LN_10;
    let mel = |hz: f64| 2595.0 * (hz / 700.0).ln_1p() / ln10;
    let (lo, hi) = (mel(p.lower_edge_hertz), mel(p.upper_edge_hertz));
    let points = bands + 2;
    let step = (hi - lo) / points as f64;
    let bins: Vec<i64> = (0..points)
        .map(|i| {
            let hz = 700.0 * ((i as f64 * step + lo) / 2595.0 * ln10).exp_m1();
            let bin = ((p.dft_length as f64 + 1.0) * hz / p.sample_rate as f64).floor();
            if bin.is_finite() && bin.abs() < 9e15 {
                Ok(bin as i64)
            } else {
                Err(format!(
                    "band edge {i} ({hz} Hz) falls on bin {bin} (check the edges: lower_edge_hertz {}, upper_edge_hertz {})",
                    p.lower_edge_hertz, p.upper_edge_hertz
                ))
            }
        })
        .collect::<Result<_, _>>()?;
    let mut out = vec![0.0; rows * bands];
    // The reference writes exactly these elements; one outside the matrix is
    // its IndexError (a loop stops at its first such bin, so none runs long).
    let mut set = |j: i64, i: usize, v: f64| {
        match usize::try_from(j) {
        Ok(r) if r < rows => {
            out[r * bands + i] = v;
            Ok(())
        }
        _ => Err(format!(
            "band {i} reaches bin {j}, outside the spectrogram's {rows} bins (check the edges against sample_rate / 2)"
        )),
    }
    };
    for i in 0..bands {
        let (low, center, high) = (bins[i], bins[i + 1], bins[i + 2]);
        if center == low {
            set(center, i, 1.0)?;
        } else {
            for j in low..=center {
                set(j, i, (j - low) as f64 / (center - low) as f64)?;
            }
        }
        if high > center {
            for j in center..high {
                set(j, i, (high - j) as f64 / (high - center) as f64)?;
            }
        }
    }
    Ok(out)
}

fn infer_mel(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let p = MelParams::of(cx)?;
    let [r, b] = p.shape();
    Ok(vec![Type::tensor(
        &[Dim::Static(r as i64), Dim::Static(b as i64)],
        p.dtype,
    )])
}

fn sem_mel(cx: &SemCtx, _: &[&Tensor]) -> SemResult {
    let p = MelParams::of(cx)?;
    let v = mel_weight_matrix(&p)?;
    Ok(vec![Tensor::from_f64(p.shape().to_vec(), p.dtype, v)])
}

def_op! {
    /// Mel filter bank weights (ONNX MelWeightMatrix)
    ///
    /// A `[dft_length / 2 + 1, num_mel_bins]` matrix in `dtype` that maps the bins of a
    /// one-sided spectrum (of a DFT of `dft_length` samples at `sample_rate`) to
    /// `num_mel_bins` triangular bands evenly spaced on the mel scale (`2595·log10(1 +
    /// f/700)`) between `lower_edge_hertz` and `upper_edge_hertz`, each with peak 1 — computed
    /// as the ONNX reference does (bins `⌊(dft_length + 1)·f / sample_rate⌋`). The importer
    /// makes it a `graph.specialize` when ONNX's inputs are known only at run time.
    pub MelWeightMatrix = "graph.mel_weight_matrix" {
        results { output: TensorOf(GENERATED) },
        attrs {
            /// the number of mel bands
            num_mel_bins: I64,
            /// the length of the DFT whose bins are mapped
            dft_length: I64,
            /// samples per second of the signal
            sample_rate: I64,
            /// the lower edge of the lowest band, in hertz
            lower_edge_hertz: F64,
            /// the upper edge of the highest band, in hertz
            upper_edge_hertz: F64,
            /// the result's element type (ONNX `output_datatype`)
            dtype: Type,
        },
        traits [Pure],
        format: "attr-dict `:` functional-type(operands, results)",
        verify: verify_by_infer,
        infer: infer_mel,
        semantics: sem_mel,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Signal,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[
    &DFT,
    &STFT,
    &HANN_WINDOW,
    &HAMMING_WINDOW,
    &BLACKMAN_WINDOW,
    &MEL_WEIGHT_MATRIX,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The DFT of [1, 2, 3, 4]: [10, -2+2i, -2, -2-2i]; the inverse brings
    /// it back.
    #[test]
    fn direct_dft_of_four_values() {
        let mut b = vec![(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)];
        direct_dft(&mut b, false);
        let want = [(10.0, 0.0), (-2.0, 2.0), (-2.0, 0.0), (-2.0, -2.0)];
        for (g, w) in b.iter().zip(want) {
            assert!(
                (g.0 - w.0).abs() < 1e-12 && (g.1 - w.1).abs() < 1e-12,
                "{b:?}"
            );
        }
        direct_dft(&mut b, true);
        for (k, g) in b.iter().enumerate() {
            assert!((g.0 / 4.0 - (k + 1) as f64).abs() < 1e-12 && g.1.abs() < 1e-12);
        }
    }

    /// An IRFFT of an RFFT gives the signal back, at odd and even lengths.
    #[test]
    fn irfft_inverts_rfft() {
        for n in [5usize, 6] {
            let x: Vec<f64> = (0..n).map(|i| (i * i) as f64 - 3.0).collect();
            let p = DftParams {
                axis: 0,
                inverse: false,
                onesided: true,
                length: None,
            };
            let plan = DftPlan::new(&p, &[n, 1]).unwrap();
            let mut spec = vec![0.0; plan.out_shape.iter().product()];
            dft_run(&plan, &x, &mut spec, &mut |b| direct_dft(b, false));
            let q = DftParams {
                inverse: true,
                length: Some(n),
                ..p
            };
            let back = DftPlan::new(&q, &plan.out_shape).unwrap();
            assert_eq!(back.out_shape, vec![n, 1]);
            let mut y = vec![0.0; n];
            dft_run(&back, &spec, &mut y, &mut |b| direct_dft(b, true));
            for (a, b) in x.iter().zip(&y) {
                assert!((a - b).abs() < 1e-9, "n={n}: {x:?} vs {y:?}");
            }
        }
    }
}
