//! `e^x` and `1 / d` on AVX-512 vectors for the activations written with
//! intrinsics ([`super::logistic`], [`super::gelu`]) and `graph.exp` over
//! a slice ([`map`]): the Cephes `expf`
//! polynomial of [`super::vmath::exp`] in fused multiply-adds, scaled by
//! `vscalefps` (no exponent bits to build, gradual underflow), and a
//! reciprocal estimate refined by one Newton step (relative error about
//! 2^-28) where the portable loops divide.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// `y = e^x` over a slice (`graph.exp`), 16 values at a time, the last
/// ones masked; false (nothing written) without AVX-512F. Within 2 ulps
/// of the exact function (the portable loop's Cephes polynomial, in fused
/// multiply-adds: `graph.exp` over 196 Ki values 108 -> 50 µs, onnxruntime
/// 41-47 µs timed from Python);
/// `+inf` and everything from 89 on give `+inf`, `-inf` 0, NaN NaN. `x`
/// and `y` have the same length.
pub fn map(x: &[f32], y: &mut [f32]) -> bool {
    assert_eq!(x.len(), y.len(), "exp: operand lengths differ");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F; `x` and `y` hold `len` floats each.
        unsafe { map_avx512(x.as_ptr(), y.as_mut_ptr(), x.len()) };
        return true;
    }
    let _ = (x, y);
    false
}

/// [`map`]'s loop.
///
/// # Safety
/// The CPU has AVX-512F; `x` and `y` point at `n` floats each.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn map_avx512(x: *const f32, y: *mut f32, n: usize) {
    // `min` returns its second operand when one is NaN: NaN stays; an
    // infinite `v` would make `exp`'s reduction `inf - inf`.
    // SAFETY: the caller's bounds.
    unsafe { each_vector(x, y, n, |v| exp(_mm512_min_ps(_mm512_set1_ps(89.0), v))) }
}

/// `y[i] = f(x[i])` for `n` floats, 16 at a time, the last ones masked:
/// the loop of the slice maps written with intrinsics ([`map`],
/// `gelu`, `logistic`).
///
/// # Safety
/// The CPU has AVX-512F (inlined into a function compiled for it); `x`
/// and `y` point at `n` floats each, the same or not overlapping.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn each_vector(
    x: *const f32,
    y: *mut f32,
    n: usize,
    f: impl Fn(__m512) -> __m512,
) {
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: lanes `i..i + 16` lie below `n`; each vector is read
        // before it is written.
        unsafe { _mm512_storeu_ps(y.add(i), f(_mm512_loadu_ps(x.add(i)))) };
        i += 16;
    }
    if i < n {
        let m = ((1u32 << (n - i)) - 1) as __mmask16;
        // SAFETY: the masked lanes lie below `n`.
        unsafe { _mm512_mask_storeu_ps(y.add(i), m, f(_mm512_maskz_loadu_ps(m, x.add(i)))) };
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_map_within_two_ulps_and_exact_at_the_edges() {
        let mut xs: Vec<f32> = (-2000..=2000).map(|i| i as f32 * 0.0443).collect();
        xs.extend([
            0.0, -0.0, 1e-30, -1e-30, 88.7, 89.5, -103.0, -110.5, 1e30, -1e30,
        ]);
        let mut got = vec![0f32; xs.len()];
        if !map(&xs, &mut got) {
            return; // no AVX-512 here
        }
        for (&x, &g) in xs.iter().zip(&got) {
            let want = (x as f64).exp();
            if want > f32::MAX as f64 {
                assert_eq!(g, f32::INFINITY, "e^{x}");
            } else if want < f32::MIN_POSITIVE as f64 {
                // Gradual underflow: within a denormal step or two.
                assert!((g as f64 - want).abs() <= 4e-45, "e^{x}: {g} vs {want}");
            } else {
                let err = (g as f64 - want).abs() / want;
                assert!(err <= 2.0 * f32::EPSILON as f64, "e^{x}: {g} vs {want}");
            }
        }
        let mut edges = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        let src = edges;
        assert!(map(&src, &mut edges));
        assert_eq!(edges[..2], [f32::INFINITY, 0.0]);
        assert!(edges[2].is_nan());
        // Every length of a masked tail: the same bits as the whole.
        for len in 0..40 {
            let mut part = vec![0f32; len];
            assert!(map(&xs[..len], &mut part));
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&part), bits(&got[..len]));
        }
    }
}
