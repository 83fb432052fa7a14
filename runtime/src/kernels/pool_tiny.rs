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
#[cfg(target_arch = "x86_64")]
use super::tiny_planes::{fits, Taps};

/// The tap tables of a max pool over `h x w` planes pooled to `oh x ow`,
/// when this kernel takes it: AVX-512F, the geometry `pool_lanes.rs` takes
/// (non-negative pads, positive kernel, strides and dilations), planes
/// small enough ([`fits`]).
#[cfg(target_arch = "x86_64")]
pub(super) fn tables(pool: &Pool, hw: (usize, usize), ohw: (usize, usize)) -> Option<Taps> {
    let g = super::pool_lanes::geometry(pool, hw, ohw)?;
    (!pool.avg && fits(&g)).then(|| Taps::new(&g))
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
pub(super) unsafe fn planes(t: &Taps, x: *const f32, o: *mut f32, count: usize) {
    let mut i = 0;
    while i < count {
        let n = if count - i >= 4 { 4 } else { 1 };
        // SAFETY: planes `i..i + n` of the caller's.
        unsafe {
            let (x, o) = (x.add(i * t.plane), o.add(i * t.npix));
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
        i += n;
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
unsafe fn fold<const N: usize, const EXACT: bool>(t: &Taps, x: *const f32, o: *mut f32) -> bool {
    use std::arch::x86_64::*;
    let ninf = _mm512_set1_ps(f32::NEG_INFINITY);
    let mut nan: __mmask16 = 0;
    // SAFETY: plane `i` of the `N`.
    let planes: [(__m512, __m512); N] =
        std::array::from_fn(|i| unsafe { t.load(x.add(i * t.plane), ninf) });
    if !EXACT {
        for &(lo, hi) in &planes {
            nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(lo, hi);
        }
    }
    let mut acc = [ninf; N];
    for k in 0..t.taps {
        let (at, reads) = t.tap(k);
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
    for (i, a) in acc.iter().enumerate() {
        // SAFETY: plane `i`'s `npix` outputs (masked).
        unsafe { _mm512_mask_storeu_ps(o.add(i * t.npix), t.out_lanes(), *a) };
    }
    nan != 0
}
