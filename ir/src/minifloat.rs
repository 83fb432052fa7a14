//! The 8- and 4-bit float storage types (ONNX FLOAT8E4M3FN, FLOAT8E4M3FNUZ,
//! FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT4E2M1; MLIR's f8E4M3FN, f8E4M3FNUZ,
//! f8E5M2, f8E5M2FNUZ, f4E2M1FN): their bits to and from f64, exactly as
//! `ml_dtypes` (which the ONNX reference uses) converts them — round to
//! nearest even; a value beyond the largest finite one becomes infinity
//! (f8E5M2), NaN (the others with a NaN) or the largest value (f4E2M1FN,
//! which has neither).
//!
//! One description ([`MiniFloat`]) covers all five: the layouts differ only
//! in field widths, bias and how NaN and infinity are spelled.

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
            Special::Ieee => (1 << self.ebits) - 2,
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
        ];
        for &(dt, x, want) in cases {
            assert_eq!(rt(dt, x), want, "{x} as {dt}");
        }
        for dt in [DType::F8E4M3FN, DType::F8E4M3FNUZ, DType::F8E5M2FNUZ] {
            assert!(rt(dt, 1e6).is_nan(), "{dt}");
            assert!(rt(dt, f64::INFINITY).is_nan(), "{dt}");
        }
        assert_eq!(rt(DType::F8E5M2, f64::NEG_INFINITY), f64::NEG_INFINITY);
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
            DType::F4E2M1FN,
        ] {
            let f = MiniFloat::of(dt).unwrap();
            let n = 1u64 << (1 + f.ebits + f.mbits);
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
    }
}
