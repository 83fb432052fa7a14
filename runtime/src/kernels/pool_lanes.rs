//! Max and average pooling over small maps with the channels in the vector
//! lanes (`lanes.rs`), output maps up to 32x32. On the 2x2 to 16x16 maps
//! of small images' late layers (GoogLeNet's 3x3 pools over 832 channels
//! of 2x2, Inception's, SqueezeNet's) the plane-wise kernel (`pool.rs`) spends most of its time
//! setting up each plane. Here 16 channels go together: their planes are
//! interleaved into one padded plane (the pool's padding value around),
//! each output pixel folds one vector per tap, and the results are
//! transposed back.
//!
//! Bit for bit the generic loop of `Pool::run`: each lane folds its
//! channel's taps in the same (row-major) order from the padding value,
//! and padded taps change nothing (-inf never wins a max; +0.0 added to a
//! sum that starts at +0.0 leaves it as it is); an average divides by the
//! same count.

use super::conv::Geo;
use super::pool::Pool;
use std::cell::RefCell;

/// Largest output plane (pixels) taken here: up to 32x32 outputs this
/// kernel beat the plane-wise ones once it folded 4 pixels at once
/// (isolated 3x3 stride-1 pools over 28x28: average 256 channels 124 ->
/// 99 µs, max 141 -> 101; a stride-2 max pool to 27x27 the same as
/// `pool_rows.rs`). Larger planes were not measured here.
const MAX_PLANE: usize = 1024;

/// Largest interleaved padded plane (pixels, 64 bytes each).
const MAX_PADDED: usize = 4096;

/// The geometry of `pool` on `h x w` planes pooled to `oh x ow`, when this
/// kernel takes it (AVX-512F, non-negative pads, positive kernel, strides
/// and dilations, a small map).
pub(super) fn geometry(
    pool: &Pool,
    (h, w): (usize, usize),
    (oh, ow): (usize, usize),
) -> Option<Geo> {
    let pos = |v: isize| usize::try_from(v).ok().filter(|&v| v > 0);
    let [pt, pl, _, _] = pool.pads.map(|p| usize::try_from(p).ok());
    let g = Geo {
        h,
        w,
        kh: pos(pool.kernel[0])?,
        kw: pos(pool.kernel[1])?,
        oh,
        ow,
        sh: pos(pool.strides[0])?,
        sw: pos(pool.strides[1])?,
        pt: pt?,
        pl: pl?,
        dh: pos(pool.dilations[0])?,
        dw: pos(pool.dilations[1])?,
    };
    if pool.pads.iter().any(|&p| p < 0) || oh == 0 || ow == 0 || oh * ow > MAX_PLANE {
        return None;
    }
    let (hp, wp) = super::lanes::padded(&g);
    let fits = hp.checked_mul(wp).is_some_and(|n| n <= MAX_PADDED);
    #[cfg(target_arch = "x86_64")]
    {
        (fits && std::arch::is_x86_feature_detected!("avx512f")).then_some(g)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = fits;
        None
    }
}

thread_local! {
    /// The interleaved padded plane, then the results.
    static SCRATCH: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Channels `0..cnt` (`cnt <= 16`) of the planes at `x` (`h x w` each, one
/// after another) pooled into `o` (`oh x ow` each); an average pool divides
/// by `divisors` (`Pool::divisors`, made once per run).
///
/// # Safety
/// `g` came from [`geometry`] for `pool`; `x` holds `cnt` planes of
/// `h x w` floats and `o` of `oh x ow`, not overlapping.
#[cfg(target_arch = "x86_64")]
pub(super) unsafe fn block(
    pool: &Pool,
    g: &Geo,
    x: *const f32,
    o: *mut f32,
    cnt: usize,
    divisors: Option<&[f32]>,
) {
    SCRATCH.with(|s| {
        // SAFETY: the caller's contract; `geometry` checked AVX-512F.
        unsafe { pool_lanes(pool, g, x, o, cnt, divisors, &mut s.borrow_mut()) }
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn pool_lanes(
    pool: &Pool,
    g: &Geo,
    x: *const f32,
    o: *mut f32,
    cnt: usize,
    divisors: Option<&[f32]>,
    scratch: &mut Vec<f32>,
) {
    use super::lanes::{deinterleave, fill_border, interleave, padded, results_len};
    let (hp, wp) = padded(g);
    let npix = g.oh * g.ow;
    let pad = if pool.avg { 0.0 } else { f32::NEG_INFINITY };
    let need = (hp * wp + results_len(npix)) * 16;
    if scratch.len() < need {
        scratch.resize(need, 0.0);
    }
    let (plane, results) = scratch[..need].split_at_mut(hp * wp * 16);
    fill_border(g, plane, pad);
    interleave(g, x, cnt, plane);
    // NaN-free blocks (all but the rarest) fold a max with one instruction.
    // SAFETY: `plane` holds its floats, the padded plane of `g`; `results`
    // the outputs' 16 lanes each.
    unsafe {
        match !pool.avg && any_nan(plane.as_ptr(), plane.len()) {
            true => fold_pixels::<true>(pool, g, plane, results, wp, divisors),
            false => fold_pixels::<false>(pool, g, plane, results, wp, divisors),
        }
    }
    deinterleave(results, o, npix, cnt);
}

/// Each output pixel's fold of its taps into `results` (16 lanes a pixel),
/// from the interleaved padded `plane` (`wp` pixels a row); `EXACT` as
/// [`super::pool_rows::fold_max`].
///
/// # Safety
/// `plane` is the interleaved padded plane of `g` (every tap of every
/// output inside it), `results` holds `16 * oh * ow` floats.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn fold_pixels<const EXACT: bool>(
    pool: &Pool,
    g: &Geo,
    plane: &[f32],
    results: &mut [f32],
    wp: usize,
    divisors: Option<&[f32]>,
) {
    use std::arch::x86_64::*;
    let pad = _mm512_set1_ps(if pool.avg { 0.0 } else { f32::NEG_INFINITY });
    // Each tap's offset (floats) from its output's first tap, worked out once.
    let taps: Vec<usize> = (0..g.kh)
        .flat_map(|ki| (0..g.kw).map(move |kj| (ki * g.dh * wp + kj * g.dw) * 16))
        .collect();
    // Output pixels `q..q + N` of a row (`N` independent chains of folds,
    // each in the generic loop's tap order), from the plane at `at`, the
    // pixels `step` floats apart.
    let fold = |at: *const f32, step: usize, q: usize, results: &mut [f32], n: usize| {
        let mut acc = [pad; 4];
        for &t in &taps {
            for (i, a) in acc.iter_mut().take(n).enumerate() {
                // SAFETY: every tap of every output lies in the plane (the
                // caller's contract).
                let v = unsafe { _mm512_loadu_ps(at.add(i * step + t)) };
                *a = match pool.avg {
                    true => _mm512_add_ps(*a, v),
                    false => super::pool_rows::fold_max::<EXACT>(*a, v),
                };
            }
        }
        for (i, a) in acc.iter().take(n).enumerate() {
            let a = match divisors.and_then(|d| d.get(q + i)) {
                Some(&d) => _mm512_div_ps(*a, _mm512_set1_ps(d)),
                None => *a,
            };
            // SAFETY: `results` holds 16 floats per output pixel.
            unsafe { _mm512_storeu_ps(results.as_mut_ptr().add((q + i) * 16), a) };
        }
    };
    let p = plane.as_ptr();
    let step = g.sw * 16;
    for oy in 0..g.oh {
        let row = p.add(oy * g.sh * wp * 16);
        let mut ox = 0;
        while ox < g.ow {
            let n = (g.ow - ox).min(4);
            fold(row.add(ox * step), step, oy * g.ow + ox, results, n);
            ox += n;
        }
    }
}

/// Whether any of the `n` floats at `x` is NaN.
///
/// # Safety
/// `x` holds `n` floats.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn any_nan(x: *const f32, n: usize) -> bool {
    use std::arch::x86_64::*;
    let mut nan: __mmask16 = 0;
    for i in (0..n).step_by(16) {
        let m: __mmask16 = if n - i >= 16 {
            !0
        } else {
            (1u16 << (n - i)) - 1
        };
        // SAFETY: lanes `i..n` alone (masked), inside the `n` floats.
        let v = unsafe { _mm512_maskz_loadu_ps(m, x.add(i)) };
        nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
    }
    nan != 0
}
