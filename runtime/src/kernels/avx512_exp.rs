//! `e^x` and `1 / d` on AVX-512 vectors for the activations written with
//! intrinsics ([`super::logistic`], [`super::gelu`]): the Cephes `expf`
//! polynomial of [`super::vmath::exp`] in fused multiply-adds, scaled by
//! `vscalefps` (no exponent bits to build, gradual underflow), and a
//! reciprocal estimate refined by one Newton step (relative error about
//! 2^-28) where the portable loops divide.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// `e^v`, 0 below -110 (NaN gives NaN); `v` at most 88.
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn exp(v: __m512) -> __m512 {
    // ln 2 split so that n * LN2_HI is exact for the n that occur.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // `max` returns its second operand when one is NaN: NaN stays.
    let v = _mm512_max_ps(_mm512_set1_ps(-110.0), v);
    // v = n ln 2 + r.
    let n = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
        _mm512_mul_ps(v, _mm512_set1_ps(std::f32::consts::LOG2_E)),
    );
    let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_HI), v);
    let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_LO), r);
    let p = horner(
        r,
        &[
            5.0e-1,
            1.666_666_5e-1,
            4.166_579_6e-2,
            8.333_452e-3,
            1.398_2e-3,
            1.987_569_1e-4,
        ],
    );
    // e^r = 1 + r + r^2 p, the small terms first; times 2^n.
    let e = _mm512_fmadd_ps(
        _mm512_mul_ps(p, r),
        r,
        _mm512_add_ps(r, _mm512_set1_ps(1.0)),
    );
    _mm512_scalef_ps(e, n)
}

/// `1 / d`: the estimate refined once (finite nonzero `d`).
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn recip(d: __m512) -> __m512 {
    let r = _mm512_rcp14_ps(d);
    _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0)))
}

/// Horner's rule: `c[0] + v (c[1] + v (c[2] + ...))`.
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn horner(v: __m512, c: &[f32]) -> __m512 {
    let mut acc = _mm512_set1_ps(c[c.len() - 1]);
    for &k in c[..c.len() - 1].iter().rev() {
        acc = _mm512_fmadd_ps(acc, v, _mm512_set1_ps(k));
    }
    acc
}
