//! GELU in its erf form, `0.5 x (1 + erf(x / sqrt 2))`, over f32 slices
//! with AVX-512: the activation of ConvNeXt, ViT, Swin, MLP-Mixer and
//! BERT's MLPs. The portable loop ([`super::vmath::erf`]) computes both of
//! erf's branches with two divisions and an `exp` per element; in
//! ConvNeXt it took a fifth of the run. Here one of them serves every
//! `x` (GELU needs `erfc`'s accuracy, not erf's near 0: `gelu` below), in
//! fused multiply-adds, the division a reciprocal estimate refined by one
//! Newton step, and `exp` the Cephes polynomial scaled by `vscalefps`
//! ([`super::avx512_exp`]): within a few ulps of the exact function
//! (tested against f64). NaN stays NaN; `+inf` gives `+inf`, `-inf` NaN
//! (`-inf * 0`, as the reference interpreter computes it).

use std::f32::consts::FRAC_1_SQRT_2;

/// `y = gelu(x)`; false (nothing written) without AVX-512F. `x` and `y`
/// have the same length.
pub fn map(x: &[f32], y: &mut [f32]) -> bool {
    assert_eq!(x.len(), y.len(), "gelu: operand lengths differ");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F; `x` and `y` hold `len` floats each.
        unsafe { avx512::run(x.as_ptr(), y.as_mut_ptr(), x.len()) };
        return true;
    }
    let _ = (x, y);
    false
}

/// [`map`] in place.
pub fn in_place(v: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        let p = v.as_mut_ptr();
        // SAFETY: the CPU has AVX-512F; `v` holds `len` floats, and `run`
        // reads each vector before it writes it.
        unsafe { avx512::run(p, p, v.len()) };
        return true;
    }
    let _ = v;
    false
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::super::avx512_exp::{each_vector, exp, horner, recip};
    use super::FRAC_1_SQRT_2;
    use std::arch::x86_64::*;

    /// `n` floats from `x` to `y` (which may be `x` itself), 16 at a time,
    /// the last ones masked.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `x` and `y` point at `n` floats each, either
    /// the same or not overlapping.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn run(x: *const f32, y: *mut f32, n: usize) {
        // SAFETY: the caller's bounds.
        unsafe { each_vector(x, y, n, |v| gelu(v)) }
    }

    /// `x Φ(x)`, the normal distribution's `Φ(x) = 1 - erfc(z) / 2` above
    /// 0 and `erfc(z) / 2` below, `z = |x| / sqrt 2`, with `erfc(z) = t
    /// e^(poly(t) - z^2)`, `t = 1 / (1 + z / 2)` (W. H. Press et al.,
    /// Numerical Recipes' `erfcc`: relative error under 1.2e-7 for every
    /// `z >= 0`). One branch for every `x`: `erf` near 0 needs its own
    /// rational function to stay accurate relative to `erf` itself, but
    /// GELU adds 1 first, so an error of `erfc`'s size is an ulp or two of
    /// the result (the test below bounds it) — the rational branch and its
    /// blend were two fifths of the instructions.
    #[inline(always)]
    unsafe fn gelu(x: __m512) -> __m512 {
        // `z` at most 12: `e^(-z^2)` is 0 in f32 from 10.2 on, and an
        // infinite `z` would make the reciprocal NaN. `min` returns its
        // second operand when one is NaN: NaN stays.
        let z = _mm512_min_ps(
            _mm512_set1_ps(12.0),
            _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(FRAC_1_SQRT_2)),
        );
        let t = recip(_mm512_fmadd_ps(_mm512_set1_ps(0.5), z, _mm512_set1_ps(1.0)));
        let poly = horner(
            t,
            &[
                -1.265_512_2,
                1.000_023_7,
                0.374_091_96,
                0.096_784_18,
                -0.186_288_06,
                0.278_868_07,
                -1.135_204,
                1.488_515_9,
                -0.822_152_2,
                0.170_872_77,
            ],
        );
        // erfc(z) / 2.
        let half_t = _mm512_mul_ps(_mm512_set1_ps(0.5), t);
        let h = _mm512_mul_ps(half_t, exp(_mm512_fnmadd_ps(z, z, poly)));
        // NaN compares false: `h`, NaN too. +inf: `1 - 0`, so +inf; -inf:
        // `h` is 0, so NaN (`-inf * 0`, as the reference computes it).
        let above = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(x, _mm512_setzero_ps());
        let phi = _mm512_mask_sub_ps(h, above, _mm512_set1_ps(1.0), h);
        _mm512_mul_ps(x, phi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(x: f32) -> f64 {
        let x = x as f64;
        0.5 * x * (1.0 + libm_erf(x / std::f64::consts::SQRT_2))
    }

    /// erf in f64 by its series / continued fraction (W. J. Cody's bounds
    /// are not needed at this test's tolerance): the complementary error
    /// function's continued fraction above 3, the Taylor series below.
    fn libm_erf(x: f64) -> f64 {
        let a = x.abs();
        let r = if a < 3.0 {
            // sum_n (-1)^n x^(2n+1) / (n! (2n+1)), enough terms for 1e-16.
            let (mut term, mut sum, mut n) = (a, a, 0.0);
            while term.abs() > 1e-18 * sum.abs() {
                n += 1.0;
                term *= -a * a / n;
                sum += term / (2.0 * n + 1.0);
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            // erfc(a) = e^(-a^2) / sqrt(pi) * 1/(a + 1/2/(a + 1/(a + 3/2/(a + ...))))
            let mut f = a;
            for k in (1..60).rev() {
                f = a + (k as f64 / 2.0) / f;
            }
            1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / f
        };
        r.copysign(x)
    }

    #[test]
    fn within_a_few_ulps_of_f64_and_exact_at_the_edges() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            return;
        }
        let mut xs: Vec<f32> = (-3000..=3000).map(|i| i as f32 * 0.00371).collect();
        xs.extend((-400..=400).map(|i| i as f32 * 0.0531));
        xs.extend([0.0, -0.0, 1e-30, -1e-30, 1.19, -1.19, 1e30, -1e30]);
        let mut got = vec![0f32; xs.len()];
        assert!(map(&xs, &mut got));
        for (&x, &g) in xs.iter().zip(&got) {
            let want = exact(x);
            let err = (g as f64 - want).abs();
            // 4 ulps of the larger of the result and the terms it is the
            // difference of (x / 2 and x erf / 2): where erf rounds to -1
            // in f32 the negative tail is 0, in any f32 evaluation of the
            // formula.
            let scale = want.abs().max(0.5 * x.abs() as f64);
            assert!(
                err <= 4.0 * scale * f32::EPSILON as f64,
                "x={x}: {g} vs {want}"
            );
        }
        let mut edges = vec![f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        assert!(in_place(&mut edges));
        assert_eq!(edges[0], f32::INFINITY);
        // -inf * (1 + erf(-inf)) = -inf * 0, NaN, as the reference computes.
        assert!(edges[1].is_nan());
        assert!(edges[2].is_nan());
        // In place, at every length of a masked tail: the same bits.
        for len in 0..40 {
            let mut v = xs[..len].to_vec();
            assert!(in_place(&mut v));
            assert_eq!(
                v.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                got[..len].iter().map(|f| f.to_bits()).collect::<Vec<_>>()
            );
        }
    }
}
