//! Sigmoid and SiLU (`x * sigmoid(x)`) over f32 slices with AVX-512: the
//! activations of EfficientNet, MobileNetV3's squeeze-excite gates and
//! every SiLU-gated MLP. The portable loop ([`super::ew`] with
//! [`super::vmath::exp`]) divides once per element, and the division was
//! half of its time (perf: the store after `vdivps`; SiLU after a 144
//! channel 16x16 depthwise convolution took longer than the convolution).
//! Here `z = e^-|x|` and `1 / (1 + z)` come from [`super::avx512_exp`]
//! (the same Cephes polynomial in fused multiply-adds, scaled by
//! `vscalefps`; a reciprocal estimate refined once), and a negative `x`
//! takes `z / (1 + z)`: within 2 ulps of the exact function (tested against
//! f64; results below 1e-30 within 1e-37), nothing overflows, tiny results
//! underflow gradually. NaN stays NaN; `x = -inf` gives 0 (SiLU: -inf * 0 =
//! NaN, as the reference), `+inf` gives 1 (SiLU: +inf).

/// `y = sigmoid(x)`, or `silu(x)` when `silu`; false (nothing written)
/// without AVX-512F. `x` and `y` have the same length.
pub fn map(silu: bool, x: &[f32], y: &mut [f32]) -> bool {
    assert_eq!(x.len(), y.len(), "logistic: operand lengths differ");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F; `x` and `y` hold `len` floats each.
        unsafe { avx512::run(silu, x.as_ptr(), y.as_mut_ptr(), x.len()) };
        return true;
    }
    let _ = (silu, x, y);
    false
}

/// [`map`] in place.
pub fn in_place(silu: bool, v: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        let p = v.as_mut_ptr();
        // SAFETY: the CPU has AVX-512F; `v` holds `len` floats, and `run`
        // reads each vector before it writes it.
        unsafe { avx512::run(silu, p, p, v.len()) };
        return true;
    }
    let _ = (silu, v);
    false
}

#[cfg(target_arch = "x86_64")]
pub(super) mod avx512 {
    use super::super::avx512_exp::{each_vector, exp, recip};
    use std::arch::x86_64::*;

    /// `n` floats from `x` to `y` (which may be `x` itself), 16 at a time,
    /// the last ones masked: every element gets the same formula.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `x` and `y` point at `n` floats each, either
    /// the same or not overlapping.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn run(silu: bool, x: *const f32, y: *mut f32, n: usize) {
        // SAFETY: the caller's bounds.
        unsafe { each_vector(x, y, n, |v| one(silu, v)) }
    }

    /// Sigmoid or SiLU of 16 floats (for kernels that hold them in a
    /// register: the same values as [`super::map`]).
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[inline(always)]
    pub(in crate::kernels) unsafe fn one(silu: bool, x: __m512) -> __m512 {
        let (z, q) = parts(x);
        // x >= 0: q; x < 0: z q (NaN: either, NaN).
        let negative = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x, _mm512_setzero_ps());
        let s = _mm512_mask_mul_ps(q, negative, z, q);
        match silu {
            true => _mm512_mul_ps(x, s),
            false => s,
        }
    }

    /// `(z, q)` with `z = e^-|x|` (in [0, 1]) and `q = 1 / (1 + z)`:
    /// `sigmoid(x) = q` for `x >= 0`, `z q` below. NaN gives NaN.
    #[inline(always)]
    unsafe fn parts(x: __m512) -> (__m512, __m512) {
        // -|x| (the sign bit set); its exp underflows gradually, 0 below
        // -110 (where the sigmoid is 0 in f32 too).
        let minus_abs = _mm512_castsi512_ps(_mm512_or_si512(
            _mm512_castps_si512(x),
            _mm512_set1_epi32(i32::MIN),
        ));
        let z = exp(minus_abs);
        let q = recip(_mm512_add_ps(z, _mm512_set1_ps(1.0)));
        (z, q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(silu: bool, x: f32) -> f32 {
        let s = 1.0 / (1.0 + (-(x as f64)).exp());
        (if silu { x as f64 * s } else { s }) as f32
    }

    #[test]
    fn within_two_ulps_of_f64_and_exact_at_the_edges() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            return;
        }
        let mut xs: Vec<f32> = (-2000..=2000).map(|i| i as f32 * 0.0537).collect();
        xs.extend([
            0.0,
            -0.0,
            1e-30,
            -1e-30,
            86.9,
            -86.9,
            87.5,
            -87.5,
            88.5,
            -88.5,
            103.0,
            -103.0,
            -105.0,
            -109.9,
            -110.5,
            -200.0,
            1e30,
            -1e30,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ]);
        for silu in [false, true] {
            let mut got = vec![0f32; xs.len()];
            assert!(map(silu, &xs, &mut got));
            for (&x, &g) in xs.iter().zip(&got) {
                let want = exact(silu, x);
                if want.is_nan() {
                    assert!(g.is_nan(), "silu={silu} x={x}: {g}, want NaN");
                    continue;
                }
                let ulps = (g.to_bits() as i64 - want.to_bits() as i64).abs();
                // Results below 1e-30 (x < -65): absolute error only (a
                // subnormal sigmoid has few bits, and SiLU multiplies them).
                let tiny = want.abs() < 1e-30 && (g - want).abs() < 1e-37;
                assert!(
                    ulps <= 2 || tiny,
                    "silu={silu} x={x}: {g} vs {want} ({ulps} ulps)"
                );
            }
            // In place, at every length of a masked tail.
            for len in 0..40 {
                let mut v = xs[..len].to_vec();
                assert!(in_place(silu, &mut v));
                assert_eq!(
                    v.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                    got[..len].iter().map(|f| f.to_bits()).collect::<Vec<_>>()
                );
            }
        }
    }
}
