//! Row-wise kernels: softmax / log-softmax, layer and RMS normalisation, and
//! reductions over arbitrary axes.

use super::ew::Bcast;
use super::{vmath, F32In, F32Out, Par, Slot};
use crate::buffer::{load_f64, load_i64, store_f64, store_i64};
use crate::shared::Shared;
use ge_ir::DType;

pub(crate) fn norm_axis(axis: i64, rank: usize) -> Result<usize, String> {
    let a = if axis < 0 { axis + rank as i64 } else { axis };
    if a < 0 || a as usize >= rank.max(1) {
        return Err(format!("axis {axis} is out of range for rank {rank}"));
    }
    Ok(a as usize)
}

/// Softmax (or log-softmax) along `axis`.
pub fn softmax(axis: i64, log: bool, x: &Slot, out: &Slot, par: &Par) -> Result<(), String> {
    let ax = norm_axis(axis, x.shape.len())?;
    let outer: usize = x.shape[..ax].iter().product();
    let len = x.shape.get(ax).copied().unwrap_or(1);
    let inner: usize = x.shape[ax + 1..].iter().product();
    if matches!(out.dtype, ge_ir::DType::F16 | ge_ir::DType::BF16) && len > 0 {
        // Rounded step by step as the ONNX reference (numpy in the 16-bit
        // type) computes it: the op's own row function.
        let mut v = vec![0f64; x.numel()];
        load_f64(x.dtype, x.ptr, 0, &mut v);
        let vp = Shared(v.as_mut_ptr());
        let block = len * inner;
        let dt = out.dtype;
        par.run(outer, outer * block > 1 << 15, &|r| {
            // SAFETY: block r of `v` (outer blocks of len x inner elements);
            // tasks own disjoint blocks.
            let b = unsafe { std::slice::from_raw_parts_mut(vp.p().add(r * block), block) };
            ge_dialects::graph::nn::softmax_along_rounded(b, 1, len, inner, log, dt);
            Ok(())
        })?;
        store_f64(out.dtype, out.ptr, 0, &v);
        return Ok(());
    }
    if out.dtype == ge_ir::DType::F64 {
        // At f64 precision, with the reference's own row loop.
        let mut v = vec![0f64; x.numel()];
        load_f64(x.dtype, x.ptr, 0, &mut v);
        let vp = Shared(v.as_mut_ptr());
        let block = len * inner;
        par.run(outer, outer * block > 1 << 15, &|r| {
            // SAFETY: block r of `v` (outer blocks of len x inner elements);
            // tasks own disjoint blocks.
            let b = unsafe { std::slice::from_raw_parts_mut(vp.p().add(r * block), block) };
            ge_dialects::graph::nn::softmax_along(b, 1, len, inner, log);
            Ok(())
        })?;
        store_f64(out.dtype, out.ptr, 0, &v);
        return Ok(());
    }
    let xi = F32In::new(x);
    let mut o = F32Out::new(out);
    let (xp, op) = (Shared(xi.ptr()), Shared(o.ptr()));
    let parallel = outer * len * inner > 1 << 15;
    if inner == 1 {
        // Contiguous rows, in parts of consecutive rows: a short row's
        // softmax is a few dozen instructions, less than a task's dispatch.
        let parts = match parallel {
            true => outer.min(4 * par.threads()),
            false => 1,
        };
        par.run(parts, parallel, &|t| {
            let (r0, r1) = (t * outer / parts, (t + 1) * outer / parts);
            // SAFETY: part t owns rows r0..r1 of the output; each row of
            // the input (possibly the output itself) is read before its
            // place is written.
            unsafe {
                softmax_rows_into(
                    log,
                    xp.p().add(r0 * len),
                    op.p().add(r0 * len),
                    len,
                    r1 - r0,
                );
            }
            Ok(())
        })?;
        o.finish();
        return Ok(());
    }
    par.run(outer, parallel, &|r| {
        let mut row = vec![0f32; len];
        for j in 0..inner {
            // SAFETY: task r owns block r of the output; the input may be
            // the output itself (in place), so it is read before written.
            unsafe {
                let base = r * len * inner + j;
                for (t, v) in row.iter_mut().enumerate() {
                    *v = *xp.p().add(base + t * inner);
                }
                softmax_row(log, &mut row);
                for (t, v) in row.iter().enumerate() {
                    *op.p().add(base + t * inner) = *v;
                }
            }
        }
        Ok(())
    })?;
    o.finish();
    Ok(())
}

/// Softmax of one row in place: with AVX-512 in vectors of 16 (the tail
/// masked); else the loops below compiled again for AVX2.
pub(crate) fn softmax_row(log: bool, y: &mut [f32]) {
    let p = y.as_mut_ptr();
    // SAFETY: `y` holds its `len` floats, read and written in place.
    unsafe { softmax_row_into(log, p, p, y.len()) }
}

/// Softmax of `rows` consecutive rows of `n` floats at `x` into those at
/// `y` (the same rows, or ones not overlapping them): with AVX-512 and
/// rows of at most four vectors, two rows at a time
/// ([`softmax_short_rows_avx512`]), else row by row.
///
/// # Safety
/// `x` and `y` address `rows * n` floats each, equal or not overlapping.
unsafe fn softmax_rows_into(log: bool, x: *const f32, y: *mut f32, n: usize, rows: usize) {
    #[cfg(target_arch = "x86_64")]
    if !log && n <= 64 && std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F; the caller's bounds.
        return unsafe { softmax_short_rows_avx512(x, y, n, rows) };
    }
    for r in 0..rows {
        // SAFETY: row r of the caller's rows.
        unsafe { softmax_row_into(log, x.add(r * n), y.add(r * n), n) };
    }
}

/// Softmax of the row of `n` floats at `x` into the row at `y` (the same
/// row, or one not overlapping it): with AVX-512 the first pass reads `x`
/// and the exponentials go straight to `y`, no copy of the row first;
/// else `x` copied to `y` and the loops below.
///
/// # Safety
/// `x` and `y` address `n` floats each, equal or not overlapping.
unsafe fn softmax_row_into(log: bool, x: *const f32, y: *mut f32, n: usize) {
    #[cfg(target_arch = "x86_64")]
    if !log && std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F; the caller's bounds.
        return unsafe { softmax_row_avx512(x, y, n) };
    }
    // SAFETY: the caller's bounds (`copy` allows `x == y`).
    let y = unsafe {
        std::ptr::copy(x, y, n);
        std::slice::from_raw_parts_mut(y, n)
    };
    by_cpu_features!(softmax_row_loops(log: bool, y: &mut [f32]))
}

/// [`softmax_row_loops`] (not the log form) in AVX-512 vectors, from `x`
/// into `y`: the rows of attention scores are short (49 for a Swin window,
/// 197 for a ViT), and the loops' scalar folds of 16 lanes, their scalar
/// tail and their f64 sums in 256-bit halves took 7 cycles an element on
/// Swin-T's windows (24 % of the model, onnxruntime's softmax 7 %). The
/// same steps: the max ignoring NaN, `e^(x - max)` (the vector form of
/// [`vmath::exp`]); its sum, in 16 f32 lanes for a row of more than four
/// vectors as onnxruntime's MLAS sums (widening to f64 took a fifth of a
/// 196-float row's time; 16 lanes of a few terms each stay within a few
/// ulps of the f64 sum), in f64 for a shorter one; then a
/// multiplication by the sum's reciprocal (as MLAS scales a row), within an
/// ulp and a half of the division. 1x5x196x196: 147 -> 91 µs (onnxruntime
/// 78). A row of at most four vectors stays in registers
/// ([`softmax_short`]).
///
/// # Safety
/// The CPU has AVX-512F; `x` and `y` address `n` floats each, equal or
/// not overlapping.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn softmax_row_avx512(x: *const f32, y: *mut f32, n: usize) {
    // SAFETY (each): the caller's bounds, one row of `n` floats.
    unsafe {
        match n <= 64 {
            true => softmax_short_rows_avx512(x, y, n, 1),
            false => softmax_long(x, y, n),
        }
    }
}

/// [`softmax_row_avx512`] of `rows` consecutive rows of `n <= 64` floats,
/// two at a time: one row's steps are a chain of dependent latencies (the
/// max's reduction, the exponential, the sum's, the division) that a
/// second row's steps fill (64x3x49x49, 1 thread: 419 µs row by row from
/// memory, 367 in registers, 255 two rows at a time; onnxruntime 263).
///
/// # Safety
/// As [`softmax_rows_into`], with AVX-512F and `n <= 64`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn softmax_short_rows_avx512(x: *const f32, y: *mut f32, n: usize, rows: usize) {
    /// Rows `0..rows` two a call of [`softmax_short`], the last odd one
    /// alone.
    #[inline(always)]
    unsafe fn by_pairs<const V: usize>(x: *const f32, y: *mut f32, n: usize, rows: usize) {
        let mut r = 0;
        while r + 2 <= rows {
            // SAFETY: rows r and r + 1 of the caller's.
            unsafe { softmax_short::<V, 2>(x.add(r * n), y.add(r * n), n) };
            r += 2;
        }
        if r < rows {
            // SAFETY: row r of the caller's.
            unsafe { softmax_short::<V, 1>(x.add(r * n), y.add(r * n), n) };
        }
    }
    // SAFETY (each): the caller's bounds, `n` in the form's range.
    unsafe {
        match n.div_ceil(16) {
            0 => {}
            1 => by_pairs::<1>(x, y, n, rows),
            2 => by_pairs::<2>(x, y, n, rows),
            3 => by_pairs::<3>(x, y, n, rows),
            _ => by_pairs::<4>(x, y, n, rows),
        }
    }
}

/// The lanes of vector `j` of a row of `n` floats that lie in it.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn row_lanes(n: usize, j: usize) -> std::arch::x86_64::__mmask16 {
    match n - 16 * j {
        l if l >= 16 => !0,
        l => (1u16 << l) - 1,
    }
}

/// [`softmax_row_avx512`] of `R` consecutive rows of `n` floats, `V`
/// vectors each at most (a Swin window's 49: four), read once into
/// registers and written once: the passes over memory and their loops were
/// most of a 49-float row's time. The rows' steps interleave.
///
/// # Safety
/// As [`softmax_row_avx512`] for each of the `R` rows, with
/// `16 * (V - 1) < n <= 16 * V`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn softmax_short<const V: usize, const R: usize>(x: *const f32, y: *mut f32, n: usize) {
    use super::avx512_exp::exp;
    use std::arch::x86_64::*;
    let ninf = _mm512_set1_ps(f32::NEG_INFINITY);
    // SAFETY: the lanes of vector `j` of row `q` below `n` (`row_lanes`),
    // in the caller's bounds; every row is loaded before any is stored.
    let v: [[__m512; V]; R] = std::array::from_fn(|q| {
        std::array::from_fn(|j| unsafe {
            _mm512_mask_loadu_ps(ninf, row_lanes(n, j), x.add(q * n + 16 * j))
        })
    });
    // `max` returns its second operand when the first is NaN: NaN skipped.
    let m: [__m512; R] = std::array::from_fn(|q| {
        let m = v[q].iter().fold(ninf, |m, &v| _mm512_max_ps(v, m));
        _mm512_set1_ps(_mm512_reduce_max_ps(m))
    });
    let e: [[__m512; V]; R] = std::array::from_fn(|q| {
        std::array::from_fn(|j| {
            _mm512_maskz_mov_ps(row_lanes(n, j), exp(_mm512_sub_ps(v[q][j], m[q])))
        })
    });
    // The sum in f64 (each vector widened in halves), as the loops form
    // it: a short row's few vectors make the widening cheap, and its sum
    // in f32 lanes moved a dynamic BERT's attention (rows of 9) past the
    // 1e-5 its lit test holds the outputs to.
    let r: [__m512; R] = std::array::from_fn(|q| {
        let (mut lo, mut hi) = (_mm512_setzero_pd(), _mm512_setzero_pd());
        for &e in &e[q] {
            let upper = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(e)));
            lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
            hi = _mm512_add_pd(hi, _mm512_cvtps_pd(upper));
        }
        _mm512_set1_ps(1.0 / _mm512_reduce_add_pd(_mm512_add_pd(lo, hi)) as f32)
    });
    for q in 0..R {
        for (j, &e) in e[q].iter().enumerate() {
            // SAFETY: as the loads.
            unsafe {
                _mm512_mask_storeu_ps(
                    y.add(q * n + 16 * j),
                    row_lanes(n, j),
                    _mm512_mul_ps(e, r[q]),
                )
            };
        }
    }
}

/// [`softmax_row_avx512`] of a longer row, in three passes: the max of
/// `x`, the exponentials into `y` and their sum, `y` scaled.
///
/// # Safety
/// As [`softmax_row_avx512`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn softmax_long(x: *const f32, y: *mut f32, n: usize) {
    use super::avx512_exp::exp;
    use std::arch::x86_64::*;
    let lanes = |i: usize| row_lanes(n, i / 16);
    // SAFETY (every access below): lanes `i..i + 16` masked to those below
    // `n`, the rows' length; `x[i..]` is read before `y[i..]` is written.
    let mut m = _mm512_set1_ps(f32::NEG_INFINITY);
    let mut i = 0;
    while i < n {
        let v = unsafe { _mm512_mask_loadu_ps(m, lanes(i), x.add(i)) };
        // `max` returns its second operand when the first is NaN: NaN is
        // skipped, as `f32::max` does.
        m = _mm512_max_ps(v, m);
        i += 16;
    }
    let m = _mm512_set1_ps(_mm512_reduce_max_ps(m));
    let mut acc = _mm512_setzero_ps();
    i = 0;
    while i < n {
        let k = lanes(i);
        let e = exp(_mm512_sub_ps(
            unsafe { _mm512_maskz_loadu_ps(k, x.add(i)) },
            m,
        ));
        let e = _mm512_maskz_mov_ps(k, e);
        unsafe { _mm512_mask_storeu_ps(y.add(i), k, e) };
        acc = _mm512_add_ps(acc, e);
        i += 16;
    }
    let s = _mm512_reduce_add_ps(acc);
    let r = _mm512_set1_ps(1.0 / s);
    i = 0;
    while i < n {
        let k = lanes(i);
        let v = unsafe { _mm512_maskz_loadu_ps(k, y.add(i)) };
        unsafe { _mm512_mask_storeu_ps(y.add(i), k, _mm512_mul_ps(v, r)) };
        i += 16;
    }
}

/// `exp(y - max)` summed in f64, then divided (or logged) by the sum. The
/// max and the sum keep one partial per lane so that the loops vectorise
/// without reassociating a float reduction.
#[inline(always)]
fn softmax_row_loops(log: bool, y: &mut [f32]) {
    const L: usize = 16;
    let mut lanes = [f32::NEG_INFINITY; L];
    let mut chunks = y.chunks_exact(L);
    for c in &mut chunks {
        for (m, &v) in lanes.iter_mut().zip(c) {
            *m = m.max(v);
        }
    }
    let m = chunks
        .remainder()
        .iter()
        .chain(&lanes)
        .fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let mut sums = [0f64; L];
    let mut chunks = y.chunks_exact_mut(L);
    for c in &mut chunks {
        for (s, v) in sums.iter_mut().zip(c) {
            *v = vmath::exp(*v - m);
            *s += *v as f64;
        }
    }
    let mut sum = 0f64;
    for v in chunks.into_remainder() {
        *v = vmath::exp(*v - m);
        sum += *v as f64;
    }
    let s = (sum + sums.iter().sum::<f64>()) as f32;
    if log {
        let ls = s.ln();
        y.iter_mut().for_each(|v| *v = v.ln() - ls);
    } else {
        y.iter_mut().for_each(|v| *v /= s);
    }
}

/// Layer normalisation (or RMS normalisation) over the dims from `axis` on.
#[derive(Clone, Debug)]
pub struct Norm {
    pub axis: i64,
    pub eps: f32,
    pub rms: bool,
}

impl Norm {
    pub fn run(&self, ins: &[&Slot], out: &Slot, par: &Par) -> Result<(), String> {
        let x = ins[0];
        let ax = norm_axis(self.axis, x.shape.len())?;
        let rows: usize = x.shape[..ax].iter().product();
        let size: usize = x.shape[ax..].iter().product();
        let nshape = &x.shape[ax..];
        let load = |s: &Slot| -> Result<Vec<f32>, String> {
            let mut v = vec![0f32; size];
            Bcast::new(nshape, &s.shape)?.load_f(s.dtype, s.ptr, 0, &mut v);
            Ok(v)
        };
        let scale = load(ins[1])?;
        let bias = match ins.get(2) {
            Some(b) => Some(load(b)?),
            None => None,
        };
        let xi = F32In::new(x);
        let mut o = F32Out::new(out);
        let (xp, op) = (Shared(xi.ptr()), Shared(o.ptr()));
        let eps = self.eps as f64;
        par.run(rows, rows * size > 1 << 15, &|r| {
            // SAFETY: row r of input and output.
            let (src, dst) = unsafe {
                (
                    std::slice::from_raw_parts(xp.p().add(r * size), size),
                    std::slice::from_raw_parts_mut(op.p().add(r * size), size),
                )
            };
            norm_row(src, dst, &scale, bias.as_deref(), eps, self.rms);
            Ok(())
        })?;
        o.finish();
        Ok(())
    }
}

/// One row of a layer norm (or RMS norm: no mean) into `dst`: its mean and
/// variance in f64 over eight partial sums (a single chain of f64 adds
/// waited on each add's latency, and LayerNorm over ConvNeXt's 24 to 192
/// channels took 15 % of its run), then the scaled row in f32; compiled
/// for AVX-512 and AVX2 and picked at run time.
fn norm_row(
    src: &[f32],
    dst: &mut [f32],
    scale: &[f32],
    bias: Option<&[f32]>,
    eps: f64,
    rms: bool,
) {
    by_cpu_features!(norm_row_loops(
        src: &[f32],
        dst: &mut [f32],
        scale: &[f32],
        bias: Option<&[f32]>,
        eps: f64,
        rms: bool
    ))
}

#[inline(always)]
fn norm_row_loops(
    src: &[f32],
    dst: &mut [f32],
    scale: &[f32],
    bias: Option<&[f32]>,
    eps: f64,
    rms: bool,
) {
    let n = src.len() as f64;
    let mean = match rms {
        true => 0.0,
        false => sum8(src, |v| v) / n,
    };
    let var = sum8(src, |v| (v - mean) * (v - mean)) / n;
    let inv = (1.0 / (var + eps).sqrt()) as f32;
    let mean = mean as f32;
    match bias {
        Some(b) => {
            for (((d, &s), &k), &b) in dst.iter_mut().zip(src).zip(scale).zip(b) {
                *d = (s - mean) * inv * k + b;
            }
        }
        None => {
            for ((d, &s), &k) in dst.iter_mut().zip(src).zip(scale) {
                *d = (s - mean) * inv * k;
            }
        }
    }
}

/// `sum f(v)` over `src` in f64, as eight interleaved partial sums added
/// pairwise at the end (the compiler keeps them in vector lanes).
#[inline(always)]
fn sum8(src: &[f32], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0f64; 8];
    let chunks = src.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += f(v as f64);
        }
    }
    for (a, &v) in acc.iter_mut().zip(rest) {
        *a += f(v as f64);
    }
    ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RedKind {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
}

#[derive(Clone, Debug)]
pub struct Reduce {
    pub kind: RedKind,
    pub axes: Vec<i64>,
    pub noop_empty: bool,
}

impl Reduce {
    pub fn run(&self, x: &Slot, out: &Slot) -> Result<(), String> {
        let rank = x.shape.len();
        let mut red = vec![false; rank];
        if self.axes.is_empty() {
            if !self.noop_empty {
                red.iter_mut().for_each(|r| *r = true);
            }
        } else {
            for &a in &self.axes {
                red[norm_axis(a, rank)?] = true;
            }
        }
        // Output strides over the input's dims (0 on reduced dims).
        let kept: Vec<usize> = (0..rank).filter(|&d| !red[d]).map(|d| x.shape[d]).collect();
        let kst = ge_ir::tensor::strides(&kept);
        let mut ost = vec![0usize; rank];
        let mut k = 0;
        for d in 0..rank {
            if !red[d] {
                ost[d] = kst[k];
                k += 1;
            }
        }
        let nout: usize = kept.iter().product();
        if nout != out.numel() {
            return Err(format!(
                "reduction of {:?} gives {nout} elements, not {:?}",
                x.shape, out.shape
            ));
        }
        let n = x.numel();
        let count = (n / nout.max(1)).max(1) as f64;
        if self.reduce_f32(x, out, &red, count) {
            return Ok(());
        }
        let float = x.dtype.is_float();
        let init = match self.kind {
            RedKind::Sum | RedKind::Mean => 0.0,
            RedKind::Prod => 1.0,
            RedKind::Max => f64::NEG_INFINITY,
            RedKind::Min => f64::INFINITY,
        };
        let mut acc = vec![init; nout];
        // i1 (max/min only): or/and, so an empty set gives false/true.
        let bool_ = x.dtype == DType::I1;
        let mut iacc: Vec<i64> = vec![
            match self.kind {
                RedKind::Prod => 1,
                RedKind::Max if bool_ => 0,
                RedKind::Min if bool_ => 1,
                RedKind::Max => i64::MIN,
                RedKind::Min => i64::MAX,
                _ => 0,
            };
            nout
        ];
        // Floats accumulate in f64 (f64 data at its own precision).
        let mut fv = vec![0f64; if float { n } else { 0 }];
        let mut iv = vec![0i64; if float { 0 } else { n }];
        if float {
            crate::buffer::load_f64(x.dtype, x.ptr, 0, &mut fv);
        } else {
            load_i64(x.dtype, x.ptr, 0, &mut iv);
        }
        let mut idx = vec![0usize; rank];
        let mut o = 0usize;
        for i in 0..n {
            if float {
                let v = fv[i];
                let a = &mut acc[o];
                match self.kind {
                    RedKind::Sum | RedKind::Mean => *a += v,
                    RedKind::Prod => *a *= v,
                    RedKind::Max => {
                        if v > *a || v.is_nan() {
                            *a = v
                        }
                    }
                    RedKind::Min => {
                        if v < *a || v.is_nan() {
                            *a = v
                        }
                    }
                }
            } else {
                let v = iv[i];
                let a = &mut iacc[o];
                match self.kind {
                    RedKind::Sum | RedKind::Mean => *a = a.wrapping_add(v),
                    RedKind::Prod => *a = a.wrapping_mul(v),
                    RedKind::Max => *a = (*a).max(v),
                    RedKind::Min => *a = (*a).min(v),
                }
            }
            // advance
            let mut d = rank;
            while d > 0 {
                d -= 1;
                idx[d] += 1;
                o += ost[d];
                if idx[d] < x.shape[d] {
                    break;
                }
                o -= ost[d] * idx[d];
                idx[d] = 0;
            }
        }
        if float {
            if self.kind == RedKind::Mean {
                acc.iter_mut().for_each(|a| *a /= count);
            }
            store_f64(out.dtype, out.ptr, 0, &acc);
        } else {
            if self.kind == RedKind::Mean {
                iacc.iter_mut().for_each(|a| *a /= count as i64);
            }
            store_i64(out.dtype, out.ptr, 0, &iacc);
        }
        Ok(())
    }
}

impl Reduce {
    /// The f32 reductions over one run of adjacent axes (a global pool's
    /// `[2, 3]` of NCHW, a softmax-like last axis, a middle axis), as
    /// `outer x reduced x inner` loops that vectorise: sums in f64 as the
    /// generic loop's (eight partial sums along a reduced run; along `inner`
    /// each output's own, in order), maxima and minima on the values, NaN
    /// winning. `false` (nothing written) for any other reduction.
    fn reduce_f32(&self, x: &Slot, out: &Slot, red: &[bool], count: f64) -> bool {
        let Some(a) = red.iter().position(|&r| r) else {
            return false;
        };
        let b = red[a..]
            .iter()
            .position(|&r| !r)
            .map_or(red.len(), |k| a + k);
        let n = x.numel();
        if x.dtype != DType::F32
            || out.dtype != DType::F32
            || self.kind == RedKind::Prod
            || red[b..].iter().any(|&r| r)
            || n == 0
        {
            return false;
        }
        let size = |d: &[usize]| d.iter().product::<usize>();
        let (reduced, inner) = (size(&x.shape[a..b]), size(&x.shape[b..]));
        let outer = n / (reduced * inner);
        if out.numel() != outer * inner {
            return false;
        }
        // SAFETY: the slots hold `n` and `outer * inner` f32 values.
        let (xs, ys) = unsafe {
            (
                std::slice::from_raw_parts(x.ptr as *const f32, n),
                std::slice::from_raw_parts_mut(out.ptr as *mut f32, outer * inner),
            )
        };
        reduce_runs(self.kind, xs, ys, reduced, inner, count);
        true
    }
}

/// `ys[o * inner + i]` = the reduction over `r` of `xs[(o * reduced + r) *
/// inner + i]`, compiled again for AVX-512 and AVX2.
pub(super) fn reduce_runs(
    kind: RedKind,
    xs: &[f32],
    ys: &mut [f32],
    reduced: usize,
    inner: usize,
    count: f64,
) {
    by_cpu_features!(reduce_runs_loops(kind: RedKind, xs: &[f32], ys: &mut [f32], reduced: usize, inner: usize, count: f64))
}

/// The sum of `xs` in f64, as eight partial sums (independent additions,
/// in vector lanes; one running sum waits on each addition's latency).
#[inline(always)]
fn sum_f64(xs: &[f32]) -> f64 {
    let mut part = [0f64; 8];
    let lanes = xs.chunks_exact(8);
    let rest: f64 = lanes.remainder().iter().map(|&v| v as f64).sum();
    for c in lanes {
        for (p, &v) in part.iter_mut().zip(c) {
            *p += v as f64;
        }
    }
    part.iter().sum::<f64>() + rest
}

#[inline(always)]
fn reduce_runs_loops(
    kind: RedKind,
    xs: &[f32],
    ys: &mut [f32],
    reduced: usize,
    inner: usize,
    count: f64,
) {
    let take_max = |a: f32, v: f32| if v > a || v.is_nan() { v } else { a };
    let take_min = |a: f32, v: f32| if v < a || v.is_nan() { v } else { a };
    let finish = |s: f64| match kind {
        RedKind::Mean => (s / count) as f32,
        _ => s as f32,
    };
    let block = reduced * inner;
    for (xo, yo) in xs.chunks_exact(block).zip(ys.chunks_exact_mut(inner)) {
        if inner == 1 {
            yo[0] = match kind {
                RedKind::Max => xo.iter().fold(f32::NEG_INFINITY, |a, &v| take_max(a, v)),
                RedKind::Min => xo.iter().fold(f32::INFINITY, |a, &v| take_min(a, v)),
                _ => finish(sum_f64(xo)),
            };
            continue;
        }
        let rows = xo.chunks_exact(inner);
        match kind {
            RedKind::Max | RedKind::Min => {
                let init = if kind == RedKind::Max {
                    f32::NEG_INFINITY
                } else {
                    f32::INFINITY
                };
                yo.fill(init);
                for row in rows {
                    for (y, &v) in yo.iter_mut().zip(row) {
                        *y = if kind == RedKind::Max {
                            take_max(*y, v)
                        } else {
                            take_min(*y, v)
                        };
                    }
                }
            }
            _ => {
                let mut acc = vec![0f64; inner];
                for row in rows {
                    for (s, &v) in acc.iter_mut().zip(row) {
                        *s += v as f64;
                    }
                }
                for (y, &s) in yo.iter_mut().zip(&acc) {
                    *y = finish(s);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of up to four vectors, two at a time (odd counts end with one
    /// alone): the bits of the same rows one by one, into another block
    /// and in place.
    #[test]
    fn short_rows_in_pairs_match_rows_one_by_one() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            for n in 1..=64usize {
                for rows in [1usize, 2, 3, 5] {
                    let block: Vec<f32> = (0..n * rows)
                        .map(|i| ((i * 29 % 31) as f32 - 15.0) * 0.4)
                        .collect();
                    let mut want = vec![0f32; n * rows];
                    let (mut into, mut in_place) = (vec![0f32; n * rows], block.clone());
                    // SAFETY: the CPU has AVX-512F; every block holds
                    // `rows` rows of `n` floats.
                    unsafe {
                        for r in 0..rows {
                            softmax_row_avx512(
                                block.as_ptr().add(r * n),
                                want.as_mut_ptr().add(r * n),
                                n,
                            );
                        }
                        softmax_rows_into(false, block.as_ptr(), into.as_mut_ptr(), n, rows);
                        let p = in_place.as_mut_ptr();
                        softmax_rows_into(false, p, p, n, rows);
                    }
                    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&into), bits(&want), "n {n} rows {rows}");
                    assert_eq!(bits(&in_place), bits(&want), "n {n} rows {rows} in place");
                }
            }
        }
    }

    /// The AVX-512 row against the portable loops on every length up to
    /// three vectors and a tail, with NaN, -inf, +inf, huge and tiny values:
    /// the same values to a few ulps (the sums run in another order), the
    /// same NaNs.
    #[test]
    fn vector_softmax_rows_match_the_loops() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            let specials = [
                f32::NAN,
                f32::NEG_INFINITY,
                f32::INFINITY,
                1e30,
                -1e30,
                80.0,
            ];
            for n in 1..=70usize {
                for special in [None, Some(0), Some(1), Some(2), Some(3), Some(4), Some(5)] {
                    let mut row: Vec<f32> = (0..n)
                        .map(|i| ((i * 37 % 23) as f32 - 11.0) * 0.7)
                        .collect();
                    if let Some(s) = special {
                        row[n / 2] = specials[s];
                    }
                    let mut want = row.clone();
                    softmax_row_loops(false, &mut want);
                    // Into another row, then in place: the same bits.
                    let mut into = vec![0f32; n];
                    // SAFETY: the CPU has AVX-512F; the rows hold `n`
                    // floats each.
                    unsafe {
                        softmax_row_avx512(row.as_ptr(), into.as_mut_ptr(), n);
                        softmax_row_avx512(row.as_ptr(), row.as_mut_ptr(), n);
                    }
                    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&into), bits(&row), "n {n} special {special:?}");
                    for (j, (g, w)) in row.iter().zip(&want).enumerate() {
                        let close = (g - w).abs() <= 4.0 * f32::EPSILON * w.abs().max(1e-30)
                            || (g.is_nan() && w.is_nan());
                        assert!(close, "n {n} special {special:?} at {j}: {g} vs {w}");
                    }
                }
            }
        }
    }
}
