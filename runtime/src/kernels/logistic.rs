//! Sigmoid and SiLU (`x * sigmoid(x)`) over f32 slices with AVX-512: the
//! activations of EfficientNet, MobileNetV3's squeeze-excite gates and
//! every SiLU-gated MLP. The portable loop ([`super::ew`] with
//! [`super::vmath::exp`]) divides once per element, and the division was
//! half of its time (perf: the store after `vdivps`; SiLU after a 144
//! channel 16x16 depthwise convolution took longer than the convolution).
//! Here `z = e^-|x|` is the same Cephes polynomial in fused multiply-adds,
//! scaled by `vscalefps`, `1 / (1 + z)` is the reciprocal estimate refined
//! by one Newton step (relative error about 2^-28), and a negative `x`
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
    use std::arch::x86_64::*;

    /// `n` floats from `x` to `y` (which may be `x` itself), 16 at a time,
    /// the last ones masked: every element gets the same formula.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `x` and `y` point at `n` floats each, either
    /// the same or not overlapping.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn run(silu: bool, x: *const f32, y: *mut f32, n: usize) {
        let mut i = 0;
        while i + 16 <= n {
            let v = _mm512_loadu_ps(x.add(i));
            _mm512_storeu_ps(y.add(i), one(silu, v));
            i += 16;
        }
        if i < n {
            let m = ((1u32 << (n - i)) - 1) as __mmask16;
            let v = _mm512_maskz_loadu_ps(m, x.add(i));
            _mm512_mask_storeu_ps(y.add(i), m, one(silu, v));
        }
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
        // ln 2 split so that n * LN2_HI is exact for the n that occur.
        const LN2_HI: f32 = 0.693_359_4;
        const LN2_LO: f32 = -2.121_944_4e-4;
        // -|x| (the sign bit set), kept finite: e^-110 is 0 in f32 either
        // way. `max` returns its second operand when one is NaN: NaN stays.
        let minus_abs = _mm512_castsi512_ps(_mm512_or_si512(
            _mm512_castps_si512(x),
            _mm512_set1_epi32(i32::MIN),
        ));
        let t = _mm512_max_ps(_mm512_set1_ps(-110.0), minus_abs);
        let n = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
            _mm512_mul_ps(t, _mm512_set1_ps(std::f32::consts::LOG2_E)),
        );
        let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_HI), t);
        let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_LO), r);
        let mut p = _mm512_set1_ps(1.987_569_1e-4);
        for c in [
            1.398_2e-3,
            8.333_452e-3,
            4.166_579_6e-2,
            1.666_666_5e-1,
            0.5,
        ] {
            p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
        }
        let e = _mm512_fmadd_ps(
            _mm512_mul_ps(p, r),
            r,
            _mm512_add_ps(r, _mm512_set1_ps(1.0)),
        );
        // e * 2^n, gradually underflowing for the largest |x|.
        let z = _mm512_scalef_ps(e, n);
        let d = _mm512_add_ps(z, _mm512_set1_ps(1.0));
        let est = _mm512_rcp14_ps(d);
        let q = _mm512_mul_ps(est, _mm512_fnmadd_ps(d, est, _mm512_set1_ps(2.0)));
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
