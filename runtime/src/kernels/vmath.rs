//! Branch-free f32 `exp`, `erf` and `tanh` for loops the compiler
//! vectorises.
//!
//! libm's `expf` is a call per element, and a branchy `erf` stays scalar;
//! softmax and GELU spend most of their time there. These are written with
//! selects instead of branches and without calls, so a loop over a slice
//! becomes AVX-512 / AVX2 code in the kernels compiled for those targets
//! (see `ew::unary_f`). `exp` is within 1 ulp of the exact function, `erf`
//! and `tanh` within 2 (checked against f64 in the tests below); NaN stays
//! NaN, ±inf and overflow behave as libm's.

/// `e^x`: `x = n ln2 + r` with `|r| <= ln2 / 2`, a degree-6 polynomial for
/// `e^r` (Cephes' `expf` coefficients), times `2^n` built from the
/// exponent bits in two halves (so `2^n` stays normal from the overflow
/// threshold down to the subnormal results).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // ln 2 split so that n * LN2_HI is exact for the n that occur.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Past these, e^x is 0 or inf in f32 either way (NaN passes through).
    let x = x.clamp(-104.0, 88.8);
    // Adding 1.5 * 2^23 rounds to an integer (ties to even) and leaves it
    // in the low mantissa bits: no float-to-int conversion, whose
    // saturating form would not vectorise.
    const ROUND: f32 = 12_582_912.0;
    let big = x * std::f32::consts::LOG2_E + ROUND;
    let n = big - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let mut p = 1.987_569_1e-4;
    p = p * r + 1.398_2e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let y = p * r * r + r + 1.0;
    let ni = big.to_bits() as i32 - ROUND.to_bits() as i32;
    let n1 = ni >> 1;
    y * pow2(n1) * pow2(ni - n1)
}

/// `2^n` for `-126 <= n <= 127`.
#[inline(always)]
fn pow2(n: i32) -> f32 {
    f32::from_bits(((n + 127) as u32) << 23)
}

/// The error function: fdlibm's rational form below 0.84375 (as
/// `erf(a) = a + a p(a²)/q(a²)`), above it `1 - erfc` with erfc from the
/// Chebyshev fit of Numerical Recipes (`t e^(-a² + poly(t))`, fractional
/// error below 1.2e-7); both are computed and one is selected.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let a = x.abs();
    let z = a * a;
    let p = 1.283_791_7e-1_f32
        + z * (-3.250_421e-1 + z * (-2.848_175e-2 + z * (-5.770_270_3e-3 + z * -2.376_301_7e-5)));
    let q = 1.0
        + z * (3.979_172e-1
            + z * (6.502_225e-2 + z * (5.081_306e-3 + z * (1.324_947_4e-4 + z * -3.960_228_3e-6))));
    let small = a + a * (p / q);
    let t = 1.0 / (1.0 + 0.5 * a);
    let poly = -1.265_512_2
        + t * (1.000_023_7
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_204
                                + t * (1.488_515_9 + t * (-0.822_152_2 + t * 0.170_872_77))))))));
    let large = 1.0 - t * exp(poly - z);
    let r = if a < 0.84375 { small } else { large };
    r.copysign(x)
}

/// The hyperbolic tangent: Cephes' `tanhf` — below 0.625 in magnitude the
/// odd polynomial `x + x³ p(x²)`, above it `1 - 2 / (e^{2|x|} + 1)` (with
/// `|x|` capped at 10, past which it is 1 in f32); both are computed and one
/// is selected, the sign copied from `x`. libm's `tanhf` is a call per
/// element: GPT-2's tanh GELU spent most of its time there.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    let a = x.abs();
    let z = a * a;
    let small =
        ((((-5.704_988_7e-3 * z + 2.063_909e-2) * z - 5.373_971_6e-2) * z + 1.333_144_2e-1) * z
            - 3.333_328e-1)
            * z
            * a
            + a;
    // A NaN stays NaN through the cap (`a > 10` is false) and `exp`.
    let capped = if a > 10.0 { 10.0 } else { a };
    let large = 1.0 - 2.0 / (exp(2.0 * capped) + 1.0);
    let r = if a < 0.625 { small } else { large };
    r.copysign(x)
}

#[cfg(test)]
mod tests {
    /// Distance in units in the last place.
    fn ulps(got: f32, want: f64) -> f64 {
        let w = want as f32;
        if got == w {
            return 0.0;
        }
        let ulp = (f32::from_bits(w.abs().to_bits() + 1) - w.abs()) as f64;
        (got as f64 - want).abs() / ulp
    }

    fn samples() -> impl Iterator<Item = f32> {
        // Every 9973rd float of both signs: all exponents, many mantissas.
        (0..u32::MAX / 2).step_by(9973).flat_map(|b| {
            let x = f32::from_bits(b);
            [x, -x]
        })
    }

    /// The largest error over `xs`, and where. A NaN error (the kernel
    /// returned NaN for a number) is the worst of all: infinite.
    fn worst(xs: impl Iterator<Item = f32>, err: impl Fn(f32) -> f64) -> (f64, f32) {
        xs.map(|x| {
            let e = err(x);
            (if e.is_nan() { f64::INFINITY } else { e }, x)
        })
        .fold((0.0, 0.0), |w, e| if e.0 > w.0 { e } else { w })
    }

    /// `exp`'s worst error in ulp over the samples (absolute, in units of
    /// the smallest subnormal, where the result is subnormal).
    fn exp_worst(exp: impl Fn(f32) -> f32) -> (f64, f32) {
        worst(samples().filter(|x| x.abs() < 88.0), |x| {
            let want = (x as f64).exp();
            // Subnormal results carry fewer bits; compare those absolutely.
            if want < f32::MIN_POSITIVE as f64 {
                (exp(x) as f64 - want).abs() / f32::from_bits(1) as f64
            } else {
                ulps(exp(x), want)
            }
        })
    }

    fn erf_worst(erf: impl Fn(f32) -> f32) -> (f64, f32) {
        worst(samples().filter(|x| x.is_finite()), |x| {
            ulps(erf(x), ge_dialects::graph::elementwise::erf(x as f64))
        })
    }

    #[test]
    fn tanh_is_within_two_ulps() {
        let worst = worst(samples().filter(|x| x.is_finite()), |x| {
            ulps(super::tanh(x), (x as f64).tanh())
        });
        assert!(worst.0 <= 2.0, "tanh({}) is {} ulp off", worst.1, worst.0);
        assert!(super::tanh(f32::NAN).is_nan());
        assert_eq!(super::tanh(f32::INFINITY), 1.0);
        assert_eq!(super::tanh(f32::NEG_INFINITY), -1.0);
        assert_eq!(super::tanh(-0.0).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn exp_is_within_one_ulp() {
        let worst = exp_worst(super::exp);
        assert!(worst.0 <= 1.0, "exp({}) is {} ulp off", worst.1, worst.0);
    }

    /// The checkers can fail: a kernel returning NaN for some inputs (which
    /// `ulps` turns into a NaN error, and `e > worst` used to skip) is
    /// infinitely wrong, as is one a few ulp off.
    #[test]
    fn the_ulp_checkers_catch_nan_and_wrong_results() {
        let w = worst([1.0f32, 3.0, 5.0].into_iter(), |x| {
            ulps(if x == 3.0 { f32::NAN } else { x }, x as f64)
        });
        assert_eq!(w, (f64::INFINITY, 3.0));
        let nan_exp = |x: f32| if x > 10.0 { f32::NAN } else { super::exp(x) };
        assert!(exp_worst(nan_exp).0 > 1.0);
        let nan_erf = |x: f32| if x < -0.5 { f32::NAN } else { super::erf(x) };
        assert!(erf_worst(nan_erf).0 > 2.0);
        let off_exp = |x: f32| f32::from_bits(super::exp(x).to_bits() + 3);
        assert!(exp_worst(off_exp).0 > 1.0);
    }

    #[test]
    fn exp_limits() {
        assert!(super::exp(f32::NAN).is_nan());
        assert_eq!(super::exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(super::exp(89.0), f32::INFINITY);
        assert_eq!(super::exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(super::exp(-200.0), 0.0);
        assert_eq!(super::exp(0.0), 1.0);
        // Largest finite result, and a subnormal one.
        assert!(super::exp(88.7).is_finite());
        assert!(super::exp(-100.0) > 0.0);
    }

    #[test]
    fn erf_is_within_two_ulp() {
        let worst = erf_worst(super::erf);
        assert!(worst.0 <= 2.0, "erf({}) is {} ulp off", worst.1, worst.0);
    }

    #[test]
    fn erf_limits() {
        assert!(super::erf(f32::NAN).is_nan());
        assert_eq!(super::erf(f32::INFINITY), 1.0);
        assert_eq!(super::erf(f32::NEG_INFINITY), -1.0);
        assert_eq!(super::erf(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(super::erf(-0.0).to_bits(), (-0.0f32).to_bits());
    }
}
