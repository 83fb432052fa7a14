//! The 8- and 4-bit float storage types (ONNX FLOAT8E4M3FN, FLOAT8E4M3FNUZ,
//! FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0, FLOAT4E2M1; MLIR's f8E4M3FN,
//! f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f8E8M0FNU, f4E2M1FN): their bits to and
//! from f64, exactly as `ml_dtypes` (which the ONNX reference uses) converts
//! them — round to nearest even; a value beyond the largest finite one becomes
//! infinity (f8E5M2), NaN (the others with a NaN) or the largest value
//! (f4E2M1FN, which has neither).
//!
//! One description ([`MiniFloat`]) covers all six: the layouts differ only
//! in field widths, bias and how NaN and infinity are spelled. f8E8M0FNU is
//! the odd one: no sign and no mantissa, every value a power of two
//! 2^(e - 127), 0xFF NaN; `ml_dtypes` makes zero and negative values NaN and
//! anything below 2^-127 the smallest value. ONNX's Cast to it (opset 24)
//! rounds as its `round_mode` says instead: [`e8m0_from_f32`].

use crate::types::DType;

/// How a format spells its special values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Special {
    /// IEEE: the all-ones exponent holds the infinities and NaNs (f8E5M2).
    Ieee,
    /// "FN": no infinities; only all-ones exponent and mantissa is NaN (f8E4M3FN).
    Fn,
    /// "FNUZ": no infinities, no negative zero; `0x80` is NaN.
    Fnuz,
    /// Neither infinities nor NaN (f4E2M1FN): everything saturates.
    Finite,
    /// Unsigned powers of two, 0xFF NaN (f8E8M0FNU).
    E8m0,
}

/// A small float format.
#[derive(Clone, Copy, Debug)]
pub struct MiniFloat {
    ebits: u32,
    mbits: u32,
    bias: i32,
    special: Special,
}

impl MiniFloat {
    /// The format of `dt`, if it is one of the small floats.
    pub fn of(dt: DType) -> Option<MiniFloat> {
        let (ebits, mbits, bias, special) = match dt {
            DType::F8E4M3FN => (4, 3, 7, Special::Fn),
            DType::F8E4M3FNUZ => (4, 3, 8, Special::Fnuz),
            DType::F8E5M2 => (5, 2, 15, Special::Ieee),
            DType::F8E5M2FNUZ => (5, 2, 16, Special::Fnuz),
            DType::F8E8M0FNU => (8, 0, 127, Special::E8m0),
            DType::F4E2M1FN => (2, 1, 1, Special::Finite),
            _ => return None,
        };
        Some(MiniFloat {
            ebits,
            mbits,
            bias,
            special,
        })
    }

    /// Stored mantissa bits.
    pub fn mantissa_bits(self) -> u32 {
        self.mbits
    }

    fn sign_bit(self) -> u64 {
        1 << (self.ebits + self.mbits)
    }

    fn nan_bits(self) -> u64 {
        match self.special {
            Special::Fnuz => self.sign_bit(),
            Special::E8m0 => 0xFF,
            // All ones (f8E5M2's quiet NaN is 0x7E, ml_dtypes' choice).
            Special::Ieee => ((1 << self.ebits) - 1) << self.mbits | 1 << (self.mbits - 1),
            _ => (1 << (self.ebits + self.mbits)) - 1,
        }
    }

    /// An f64 NaN carrying this format's NaN sign and mantissa `m` in its
    /// top mantissa bits (read back by [`MiniFloat::encode`]).
    fn nan(self, neg: bool, m: u64) -> f64 {
        let sign = if neg { 1u64 << 63 } else { 0 };
        f64::from_bits(sign | 0x7FF << 52 | m << (52 - self.mbits))
    }

    /// The largest finite value.
    pub fn max(self) -> f64 {
        let emax_field = match self.special {
            Special::Ieee | Special::E8m0 => (1 << self.ebits) - 2,
            _ => (1 << self.ebits) - 1,
        };
        let mant_max = match self.special {
            Special::Fn => (1u64 << self.mbits) - 2,
            _ => (1u64 << self.mbits) - 1,
        };
        (1.0 + mant_max as f64 / (1u64 << self.mbits) as f64) * 2f64.powi(emax_field - self.bias)
    }

    /// The value of `bits` (the low `1 + ebits + mbits` bits are read).
    pub fn decode(self, bits: u64) -> f64 {
        if self.special == Special::E8m0 {
            return match bits & 0xFF {
                0xFF => f64::NAN,
                e => 2f64.powi(e as i32 - self.bias),
            };
        }
        let bits = bits & ((self.sign_bit() << 1) - 1);
        let neg = bits & self.sign_bit() != 0;
        let e = ((bits >> self.mbits) & ((1 << self.ebits) - 1)) as i32;
        let m = bits & ((1 << self.mbits) - 1);
        let all_e = (1 << self.ebits) - 1;
        match self.special {
            Special::Fnuz if bits == self.sign_bit() => return f64::NAN,
            Special::Fn if e == all_e && m == (1 << self.mbits) - 1 => return self.nan(neg, m),
            Special::Ieee if e == all_e => {
                return match (m, neg) {
                    (0, false) => f64::INFINITY,
                    (0, true) => f64::NEG_INFINITY,
                    _ => self.nan(neg, m),
                }
            }
            _ => {}
        }
        let scale = (1u64 << self.mbits) as f64;
        let mag = if e == 0 {
            m as f64 / scale * 2f64.powi(1 - self.bias)
        } else {
            (1.0 + m as f64 / scale) * 2f64.powi(e - self.bias)
        };
        if neg {
            -mag
        } else {
            mag
        }
    }

    /// The bits of `v`, rounded to nearest even; past the largest finite
    /// value: infinity, NaN or the largest value, as the format has them.
    pub fn encode(self, v: f64) -> u64 {
        if self.special == Special::E8m0 {
            return e8m0_nearest(v);
        }
        let sign = if v.is_sign_negative() {
            self.sign_bit()
        } else {
            0
        };
        if v.is_nan() {
            // The sign and the top mantissa bits of the NaN are kept (as a
            // narrowing IEEE conversion does), so a NaN read from this format
            // writes back the same bits — MLIR prints `0x7F : f8E5M2` back as
            // written; f64's default NaN gives the format's quiet NaN.
            let payload = (v.to_bits() >> (52 - self.mbits)) & ((1 << self.mbits) - 1);
            return match self.special {
                // ml_dtypes: f4E2M1FN has no NaN; a NaN becomes (signed) zero.
                Special::Finite => sign,
                Special::Ieee if payload != 0 => {
                    sign | ((1 << self.ebits) - 1) << self.mbits | payload
                }
                Special::Fn => sign | self.nan_bits(),
                _ => self.nan_bits(),
            };
        }
        let r = self.round(v.abs());
        if r > self.max() || r.is_infinite() {
            return match self.special {
                Special::Ieee => sign | ((1 << self.ebits) - 1) << self.mbits,
                Special::Finite => sign | self.encode_mag(self.max()),
                _ => self.nan_bits(),
            };
        }
        if r == 0.0 && self.special == Special::Fnuz {
            return 0;
        }
        sign | self.encode_mag(r)
    }

    /// `a` (non-negative) rounded to this format's precision, to nearest
    /// even, without a bound on the exponent above.
    fn round(self, a: f64) -> f64 {
        if a == 0.0 || a.is_infinite() {
            return a;
        }
        let emin = 1 - self.bias;
        let e = (((a.to_bits() >> 52) & 0x7FF) as i32 - 1023).max(emin);
        // The spacing of the format's values near `a`: scaling by it is exact.
        let q = 2f64.powi(e - self.mbits as i32);
        (a / q).round_ties_even() * q
    }

    /// The bits of a representable non-negative finite value.
    fn encode_mag(self, r: f64) -> u64 {
        if r == 0.0 {
            return 0;
        }
        let emin = 1 - self.bias;
        let e = ((r.to_bits() >> 52) & 0x7FF) as i32 - 1023;
        let scale = (1u64 << self.mbits) as f64;
        if e < emin {
            (r / 2f64.powi(emin) * scale) as u64
        } else {
            let m = ((r / 2f64.powi(e) - 1.0) * scale) as u64;
            ((e + self.bias) as u64) << self.mbits | m
        }
    }

    /// `v` rounded to this format (as `decode(encode(v))`).
    pub fn round_value(self, v: f64) -> f64 {
        self.decode(self.encode(v))
    }
}

/// `v` as f8E8M0FNU bits the way `ml_dtypes` converts it: the nearest power
/// of two (a significand of 1.5 or more rounds up), NaN for zero, negative,
/// infinite and NaN values and past 2^127, the smallest value (2^-127) below it.
fn e8m0_nearest(v: f64) -> u64 {
    if v.is_nan() || v <= 0.0 || v.is_infinite() {
        return 0xFF;
    }
    if v < 2f64.powi(-127) {
        return 0;
    }
    let bits = v.to_bits();
    let mut e = ((bits >> 52) & 0x7FF) as i64 - 1023;
    if bits & (1 << 51) != 0 {
        e += 1;
    }
    if e > 127 {
        0xFF
    } else {
        (e + 127) as u64
    }
}

/// How ONNX's Cast (opset 24) rounds to FLOAT8E8M0 (its `round_mode`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum E8m0Rounding {
    /// Up to the next power of two unless the value is one (ONNX's default).
    Up,
    /// Down: the value's own exponent.
    Down,
    /// To the nearest power of two by the first dropped significand bit.
    Nearest,
}

impl E8m0Rounding {
    /// The `round_mode` word: `up`, `down` or `nearest`.
    pub fn parse(s: &str) -> Option<E8m0Rounding> {
        match s {
            "up" => Some(E8m0Rounding::Up),
            "down" => Some(E8m0Rounding::Down),
            "nearest" => Some(E8m0Rounding::Nearest),
            _ => None,
        }
    }
}

/// ONNX's conversion of `x` to FLOAT8E8M0 bits (`onnx.numpy_helper.
/// to_float8e8m0`, which Cast-24 runs): the biased exponent of the f32 value,
/// its sign ignored, rounded by `mode` from the dropped significand bits;
/// infinities and NaN give 0xFF (NaN); rounding up from 2^127 gives NaN
/// unless `saturate`.
pub fn e8m0_from_f32(x: f32, saturate: bool, mode: E8m0Rounding) -> u8 {
    let bits = x.to_bits();
    let exponent = (bits >> 23) & 0xFF;
    if exponent == 0xFF {
        return 0xFF;
    }
    let fraction = bits & 0x7F_FFFF;
    let round_up = match mode {
        E8m0Rounding::Down => false,
        E8m0Rounding::Up => fraction != 0,
        E8m0Rounding::Nearest => {
            // guard, round and sticky bits; the exponent's "lsb" is 1 for
            // every normal value, as the reference computes it
            let g = bits & 0x40_0000 != 0;
            let r = bits & 0x20_0000 != 0;
            let s = bits & 0x1F_FFFF != 0;
            g && (r || s || exponent > 0)
        }
    };
    if round_up && !(saturate && exponent == 0xFE) {
        (exponent + 1) as u8
    } else {
        exponent as u8
    }
}

/// The value range of the small integer types (`i4`, `ui4`, `i2`, `ui2`).
pub fn small_int_range(dt: DType) -> Option<(i64, i64)> {
    match dt {
        DType::I4 => Some((-8, 7)),
        DType::U4 => Some((0, 15)),
        DType::I2 => Some((-2, 1)),
        DType::U2 => Some((0, 3)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(dt: DType, v: f64) -> f64 {
        MiniFloat::of(dt)
            .map(|f| f.round_value(v))
            .unwrap_or(f64::NAN)
    }

    /// Values checked against ml_dtypes 0.7 (`np.float32(x).astype(...)`).
    #[test]
    fn conversions_match_ml_dtypes() {
        let cases: &[(DType, f64, f64)] = &[
            (DType::F8E4M3FN, 0.47892547, 0.46875),
            (DType::F8E4M3FN, 464.0, 448.0),
            (DType::F8E4M3FN, 9.2, 9.0),
            (DType::F8E4M3FN, 1e-7, 0.0),
            (DType::F8E4M3FNUZ, 247.0, 240.0),
            (DType::F8E5M2, 61000.0, 57344.0),
            (DType::F8E5M2, 61440.0, f64::INFINITY),
            (DType::F8E5M2, 9.2, 10.0),
            (DType::F8E5M2FNUZ, 0.3, 0.3125),
            (DType::F4E2M1FN, 5.0, 4.0),
            (DType::F4E2M1FN, 7.0, 6.0),
            (DType::F4E2M1FN, 1e6, 6.0),
            (DType::F4E2M1FN, -3.5, -4.0),
            (DType::F4E2M1FN, 0.25, 0.0),
            (DType::F4E2M1FN, 0.48, 0.5),
            (DType::F8E8M0FNU, 1.5, 2.0),
            (DType::F8E8M0FNU, 1.4, 1.0),
            (DType::F8E8M0FNU, 3.0, 4.0),
            (DType::F8E8M0FNU, 1e-45, 2f64.powi(-127)),
            (DType::F8E8M0FNU, 1.49 * 2f64.powi(127), 2f64.powi(127)),
        ];
        for &(dt, x, want) in cases {
            assert_eq!(rt(dt, x), want, "{x} as {dt}");
        }
        for dt in [DType::F8E4M3FN, DType::F8E4M3FNUZ, DType::F8E5M2FNUZ] {
            assert!(rt(dt, 1e6).is_nan(), "{dt}");
            assert!(rt(dt, f64::INFINITY).is_nan(), "{dt}");
        }
        assert_eq!(rt(DType::F8E5M2, f64::NEG_INFINITY), f64::NEG_INFINITY);
        for x in [0.0, -2.0, f64::INFINITY, 1.5 * 2f64.powi(127)] {
            assert!(rt(DType::F8E8M0FNU, x).is_nan(), "{x} as f8E8M0FNU");
        }
    }

    /// `onnx.numpy_helper.to_float8e8m0` (onnx 1.23) on the same inputs, in
    /// every mode, with and without saturation.
    #[test]
    fn onnx_e8m0_cast_matches_the_reference() {
        let p = |e: i32| 2f32.powi(e);
        let xs = [
            0.0,
            1.0,
            1.5,
            1.4,
            1.6,
            3.0,
            -2.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            p(-127),
            p(-127) / 2.0,
            p(127),
            f32::MAX,
            6e-39,
            1.5 * p(-127),
        ];
        use E8m0Rounding::*;
        let want: [(E8m0Rounding, bool, [u8; 16]); 6] = [
            (
                Up,
                true,
                [
                    0, 127, 128, 128, 128, 129, 128, 255, 255, 255, 1, 1, 254, 254, 1, 1,
                ],
            ),
            (
                Up,
                false,
                [
                    0, 127, 128, 128, 128, 129, 128, 255, 255, 255, 1, 1, 254, 255, 1, 1,
                ],
            ),
            (
                Down,
                true,
                [
                    0, 127, 127, 127, 127, 128, 128, 255, 255, 255, 0, 0, 254, 254, 0, 0,
                ],
            ),
            (
                Down,
                false,
                [
                    0, 127, 127, 127, 127, 128, 128, 255, 255, 255, 0, 0, 254, 254, 0, 0,
                ],
            ),
            (
                Nearest,
                true,
                [
                    0, 127, 128, 127, 128, 129, 128, 255, 255, 255, 0, 0, 254, 254, 1, 1,
                ],
            ),
            (
                Nearest,
                false,
                [
                    0, 127, 128, 127, 128, 129, 128, 255, 255, 255, 0, 0, 254, 255, 1, 1,
                ],
            ),
        ];
        for (mode, sat, bits) in want {
            let got: Vec<u8> = xs.iter().map(|&x| e8m0_from_f32(x, sat, mode)).collect();
            assert_eq!(got, bits, "{mode:?} saturate={sat}");
        }
    }

    /// Every bit pattern reads back to itself, NaNs included (their sign and
    /// payload travel in the f64 NaN).
    #[test]
    fn bits_round_trip() {
        for dt in [
            DType::F8E4M3FN,
            DType::F8E4M3FNUZ,
            DType::F8E5M2,
            DType::F8E5M2FNUZ,
            DType::F8E8M0FNU,
            DType::F4E2M1FN,
        ] {
            let f = MiniFloat::of(dt).unwrap();
            let n = 1u64 << (f.ebits + f.mbits + u32::from(f.special != Special::E8m0));
            for b in 0..n {
                let v = f.decode(b);
                assert_eq!(f.encode(v), b, "{dt} bits {b:#x} = {v}");
            }
        }
    }

    #[test]
    fn largest_values() {
        let max = |dt| MiniFloat::of(dt).unwrap().max();
        assert_eq!(max(DType::F8E4M3FN), 448.0);
        assert_eq!(max(DType::F8E4M3FNUZ), 240.0);
        assert_eq!(max(DType::F8E5M2), 57344.0);
        assert_eq!(max(DType::F8E5M2FNUZ), 57344.0);
        assert_eq!(max(DType::F4E2M1FN), 6.0);
        assert_eq!(max(DType::F8E8M0FNU), 2f64.powi(127));
    }
}
