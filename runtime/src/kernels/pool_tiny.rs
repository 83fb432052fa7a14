//! Max pooling of tiny planes — input planes of up to 32 pixels, output
//! planes of up to 16: GoogLeNet's and Inception's 3x3 stride-1 pools over
//! 2x2 and 4x4 maps at 64x64 (832 planes of 2x2: 10.5 µs through
//! `pool_lanes.rs`, most of it interleaving 16 planes into the lanes and
//! back). One plane at a time (four side by side), the plane in two
//! vectors, each tap a permute by a table made once per pool, folded into
//! the lanes whose tap reads a pixel of the plane.
//!
//! Bit for bit the generic loop of `Pool::run`: each output folds the taps
//! that read a value, in row-major order, from -inf, "the later value wins
//! when greater or NaN". A plane is first folded with one `MAXPS` a tap
//! (that fold when no input is NaN; `pool_rows::fold_max`), while one
//! compare a plane finds whether any input is NaN; a plane that holds a
//! NaN is folded again exactly.

#[cfg(target_arch = "x86_64")]
use super::pool::Pool;

/// Input pixels a plane may have here (two vectors).
const MAX_INPUT: usize = 32;
/// Output pixels a plane may have here (one vector).
const MAX_OUTPUT: usize = 16;
/// Taps a window may have here.
const MAX_TAPS: usize = 64;

/// Which input pixel each output lane of each tap reads, and the lanes
/// whose tap reads one (the rest fall in the padding and are skipped).
#[cfg(target_arch = "x86_64")]
pub(super) struct Tables {
    h: usize,
    w: usize,
    npix: usize,
    index: Vec<[i32; MAX_OUTPUT]>,
    reads: Vec<u16>,
}

/// The tables of a max pool over `h x w` planes pooled to `oh x ow`, when
/// this kernel takes it: AVX-512F, planes small enough, non-negative pads,
/// positive kernel, strides and dilations.
#[cfg(target_arch = "x86_64")]
pub(super) fn tables(
    pool: &Pool,
    (h, w): (usize, usize),
    (oh, ow): (usize, usize),
) -> Option<Tables> {
    let pos = |v: isize| usize::try_from(v).ok().filter(|&v| v > 0);
    let [kh, kw] = [pos(pool.kernel[0])?, pos(pool.kernel[1])?];
    let [sh, sw] = [pos(pool.strides[0])?, pos(pool.strides[1])?];
    let [dh, dw] = [pos(pool.dilations[0])?, pos(pool.dilations[1])?];
    let [pt, pl] = [
        usize::try_from(pool.pads[0]).ok()?,
        usize::try_from(pool.pads[1]).ok()?,
    ];
    let npix = oh * ow;
    let takes = !pool.avg
        && pool.pads.iter().all(|&p| p >= 0)
        && h * w <= MAX_INPUT
        && npix > 0
        && npix <= MAX_OUTPUT
        && kh.checked_mul(kw).is_some_and(|t| t <= MAX_TAPS)
        && std::arch::is_x86_feature_detected!("avx512f");
    if !takes {
        return None;
    }
    let mut index = vec![[0i32; MAX_OUTPUT]; kh * kw];
    let mut reads = vec![0u16; kh * kw];
    for ki in 0..kh {
        for kj in 0..kw {
            let t = ki * kw + kj;
            for (p, lane) in index[t].iter_mut().enumerate().take(npix) {
                let (oy, ox) = (p / ow, p % ow);
                // Beyond the plane (or overflowing): a padded tap.
                let at = |o: usize, s: usize, k: usize, d: usize, pad: usize, len: usize| {
                    o.checked_mul(s)?
                        .checked_add(k.checked_mul(d)?)?
                        .checked_sub(pad)
                        .filter(|&v| v < len)
                };
                if let (Some(y), Some(c)) = (at(oy, sh, ki, dh, pt, h), at(ox, sw, kj, dw, pl, w)) {
                    // Below MAX_INPUT: fits an i32.
                    *lane = (y * w + c) as i32;
                    reads[t] |= 1 << p;
                }
            }
        }
    }
    Some(Tables {
        h,
        w,
        npix,
        index,
        reads,
    })
}

/// Planes a task of [`planes`] takes.
pub(super) const PLANES_PER_TASK: usize = 16;

/// Pools `count` planes: `x` (`h x w` each, one after another) into `o`
/// (`oh x ow` each).
///
/// # Safety
/// `t` came from [`tables`] for this pool; `x` holds `count` input planes
/// and `o` `count` output planes, not overlapping.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn planes(t: &Tables, x: *const f32, o: *mut f32, count: usize) {
    let (plane, npix) = (t.h * t.w, t.npix);
    let mut i = 0;
    while i < count {
        let n = (count - i).min(4);
        // SAFETY: planes `i..i + n` of the caller's.
        unsafe {
            let (x, o) = (x.add(i * plane), o.add(i * npix));
            let nan = match n {
                4 => fold::<4, false>(t, x, o),
                _ => fold::<1, false>(t, x, o),
            };
            if nan {
                match n {
                    4 => fold::<4, true>(t, x, o),
                    _ => fold::<1, true>(t, x, o),
                };
            }
        }
        i += if n == 4 { 4 } else { 1 };
    }
}

/// Planes `0..N` from `x` into `o`, folded exactly or not (`EXACT`, as
/// `pool_rows::fold_max`); whether an input is NaN (`EXACT` false: the
/// outputs written are then not the fold's).
///
/// # Safety
/// As [`planes`] for `N` planes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn fold<const N: usize, const EXACT: bool>(t: &Tables, x: *const f32, o: *mut f32) -> bool {
    use std::arch::x86_64::*;
    let (plane, npix) = (t.h * t.w, t.npix);
    let lanes = |n: usize| -> __mmask16 {
        match n >= 16 {
            true => !0,
            false => (1u16 << n) - 1,
        }
    };
    let (lo_lanes, hi_lanes) = (lanes(plane), lanes(plane.saturating_sub(16)));
    let ninf = _mm512_set1_ps(f32::NEG_INFINITY);
    let mut nan: __mmask16 = 0;
    // SAFETY: each plane's `plane` floats only (masked); the second
    // vector's address is only formed when no lane of it is read.
    let planes: [(__m512, __m512); N] = std::array::from_fn(|i| unsafe {
        let xp = x.add(i * plane);
        (
            _mm512_mask_loadu_ps(ninf, lo_lanes, xp),
            _mm512_mask_loadu_ps(ninf, hi_lanes, xp.wrapping_add(16)),
        )
    });
    if !EXACT {
        for &(lo, hi) in &planes {
            nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(lo, hi);
        }
    }
    let mut acc = [ninf; N];
    for (index, &reads) in t.index.iter().zip(&t.reads) {
        let at = _mm512_loadu_si512(index.as_ptr().cast());
        for (a, &(lo, hi)) in acc.iter_mut().zip(&planes) {
            let v = _mm512_permutex2var_ps(lo, at, hi);
            *a = match EXACT {
                // The lanes whose tap reads a pixel: the later value wins
                // when greater or NaN.
                true => {
                    let wins = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(v, *a)
                        | _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
                    _mm512_mask_mov_ps(*a, wins & reads, v)
                }
                // `MAXPS(v, acc)` in those lanes: acc unless v is greater.
                false => _mm512_mask_max_ps(*a, reads, v, *a),
            };
        }
    }
    let out = lanes(npix);
    for (i, a) in acc.iter().enumerate() {
        // SAFETY: plane `i`'s `npix` outputs (masked).
        unsafe { _mm512_mask_storeu_ps(o.add(i * npix), out, *a) };
    }
    nan != 0
}
