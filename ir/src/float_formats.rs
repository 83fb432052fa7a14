//! Float attributes of MLIR float types ge does not model as dtypes (`f80`,
//! `f128`, `tf32`, and the IEEE-like 8-bit floats `f8E5M2`, `f8E4M3`,
//! `f8E3M4`): the value is kept as the text mlir-opt prints for it
//! (`1.000000e+00 : f80`), computed here from the value's bits in its own
//! format, so parse and print round-trip exactly as in MLIR.
//!
//! MLIR reads a decimal float literal as an `f64` and then converts it to the
//! attribute's type, rounding to nearest-even (`parseFloatFromLiteral`); a hex
//! literal is the type's bit pattern. Printing is `printFloatValue`: six
//! digits if they read back to the same bits, else full precision, else hex
//! (infinities and NaNs) — the digit generation is [`crate::mlir_float`]'s.
//!
//! The 8-bit formats whose special values differ from IEEE's (`f8E4M3FN`,
//! the `FNUZ` family, `f8E8M0FNU`) and `f4E2M1FN` are dtypes
//! ([`crate::minifloat`]); the other 6- and 4-bit ones are not covered: their
//! attributes stay a diagnostic.

use num_bigint::BigUint;

/// A binary interchange-like format: sign, `ebits` of biased exponent (all
/// ones: infinity or NaN) and `mbits` of fraction; `explicit` when the
/// integer bit is stored (x87's 80-bit format).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatFormat {
    pub ebits: u32,
    pub mbits: u32,
    pub explicit: bool,
}

impl FloatFormat {
    /// The format of an MLIR float type name ge keeps verbatim.
    pub fn of(name: &str) -> Option<FloatFormat> {
        let (ebits, mbits, explicit) = match name {
            "f80" => (15, 63, true),
            "f128" => (15, 112, false),
            "tf32" => (8, 10, false),
            "f8E5M2" => (5, 2, false),
            "f8E4M3" => (4, 3, false),
            "f8E3M4" => (3, 4, false),
            _ => return None,
        };
        Some(FloatFormat {
            ebits,
            mbits,
            explicit,
        })
    }

    /// Bits of the encoding.
    pub fn width(self) -> u32 {
        1 + self.ebits + self.mbits + self.explicit as u32
    }
    /// Significand bits, the integer bit included.
    fn precision(self) -> u32 {
        self.mbits + 1
    }
    fn bias(self) -> i32 {
        (1 << (self.ebits - 1)) - 1
    }
    fn max_biased(self) -> u128 {
        (1 << self.ebits) - 1
    }

    /// The encoding of `v` (an `f64`) rounded to nearest, ties to even, as
    /// `APFloat::convert` does; overflow is infinity, NaNs stay quiet NaNs.
    pub fn encode_f64(self, v: f64) -> u128 {
        let sign = (v.is_sign_negative() as u128) << (self.width() - 1);
        let exp_field = |biased: u128| biased << (self.mbits + self.explicit as u32);
        if v.is_nan() {
            // The quiet bit (and, for x87, the integer bit).
            let int = if self.explicit { 1 << self.mbits } else { 0 };
            return sign | exp_field(self.max_biased()) | int | 1 << (self.mbits - 1);
        }
        if v.is_infinite() {
            let int = if self.explicit { 1 << self.mbits } else { 0 };
            return sign | exp_field(self.max_biased()) | int;
        }
        if v == 0.0 {
            return sign;
        }
        // v = sig * 2^exp exactly.
        let bits = v.abs().to_bits();
        let (sig, exp) = match bits >> 52 {
            0 => (bits & ((1 << 52) - 1), -1074),
            e => ((bits & ((1 << 52) - 1)) | 1 << 52, e as i32 - 1075),
        };
        let (num, den) = if exp >= 0 {
            (BigUint::from(sig) << exp as u32, BigUint::from(1u32))
        } else {
            (
                BigUint::from(sig),
                BigUint::from(1u32) << exp.unsigned_abs(),
            )
        };
        self.round(v.is_sign_negative(), num, den)
    }

    /// The encoding of the decimal `text` (`-1.5e+03`, `0.25`), rounded
    /// exactly to nearest-even as `APFloat(semantics, text)` does.
    fn encode_decimal(self, text: &str) -> Option<u128> {
        let (neg, t) = match text.strip_prefix('-') {
            Some(t) => (true, t),
            None => (false, text),
        };
        let (mant, e10) = match t.split_once(['e', 'E']) {
            Some((m, e)) => (m, e.parse::<i32>().ok()?),
            None => (t, 0),
        };
        let (whole, frac) = mant.split_once('.').unwrap_or((mant, ""));
        let digits: String = [whole, frac].concat();
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let d = BigUint::parse_bytes(digits.as_bytes(), 10)?;
        let e10 = e10.checked_sub(i32::try_from(frac.len()).ok()?)?;
        let ten = |e: u32| BigUint::from(10u32).pow(e);
        let (num, den) = if e10 >= 0 {
            (d * ten(e10 as u32), BigUint::from(1u32))
        } else {
            (d, ten(e10.unsigned_abs()))
        };
        Some(self.round(neg, num, den))
    }

    /// The encoding of `num / den` (with `neg`'s sign), rounded to nearest,
    /// ties to even; overflow is infinity.
    fn round(self, neg: bool, num: BigUint, den: BigUint) -> u128 {
        let sign = (neg as u128) << (self.width() - 1);
        let stored = self.mbits + self.explicit as u32;
        let inf =
            sign | self.max_biased() << stored | if self.explicit { 1 << self.mbits } else { 0 };
        if num.bits() == 0 {
            return sign;
        }
        // top = floor(log2(num / den)).
        let at_least = |t: i64| {
            if t >= 0 {
                num >= (&den << t as u64)
            } else {
                (&num << t.unsigned_abs()) >= den
            }
        };
        let t = num.bits() as i64 - den.bits() as i64;
        let top = if at_least(t) { t } else { t - 1 };
        let p = self.precision() as i64;
        let emin = 1 - self.bias() as i64;
        if top > self.bias() as i64 {
            return inf;
        }
        let lsb = (top - (p - 1)).max(emin - (p - 1));
        let (n, d) = if lsb >= 0 {
            (num, den << lsb as u64)
        } else {
            (num << lsb.unsigned_abs(), den)
        };
        let mut q = &n / &d;
        let rem2 = (&n % &d) << 1u32;
        if rem2 > d || (rem2 == d && q.bit(0)) {
            q += 1u32;
        }
        let mut lsb = lsb;
        if q.bits() as i64 > p {
            q >>= 1u32;
            lsb += 1;
        }
        let q: u128 = q.try_into().unwrap_or(0);
        if q >> (p - 1) == 0 {
            // Subnormal (or rounded to zero): biased exponent 0.
            return sign | q;
        }
        let top = lsb + p - 1;
        if top > self.bias() as i64 {
            return inf;
        }
        let biased = (top + self.bias() as i64) as u128;
        let int = if self.explicit { 1 << self.mbits } else { 0 };
        sign | biased << stored | int | (q & ((1u128 << self.mbits) - 1))
    }

    /// The bits APFloat keeps for an encoding: x87's unnormals (an exponent
    /// without the integer bit) are NaNs, their exponent field all ones.
    pub fn canonical(self, bits: u128) -> u128 {
        let stored = self.mbits + self.explicit as u32;
        let biased = (bits >> stored) & self.max_biased();
        if self.explicit && biased != 0 && bits >> self.mbits & 1 == 0 {
            return bits | self.max_biased() << stored;
        }
        bits
    }

    /// `(negative, significand, exponent)` of finite bits (value =
    /// significand * 2^exponent); `None` for infinities and NaNs.
    fn decompose(self, bits: u128) -> Option<(bool, u128, i32)> {
        let neg = bits >> (self.width() - 1) & 1 == 1;
        let stored = self.mbits + self.explicit as u32;
        let biased = (bits >> stored) & self.max_biased();
        if biased == self.max_biased()
            || (self.explicit && biased != 0 && bits >> self.mbits & 1 == 0)
        {
            return None;
        }
        let frac = bits & ((1u128 << self.mbits) - 1);
        let emin = 1 - self.bias();
        let (sig, e) = if self.explicit {
            // The stored integer bit is the significand's top bit.
            let sig = bits & ((1u128 << stored) - 1);
            (sig, (biased as i32 - self.bias()).max(emin))
        } else if biased == 0 {
            (frac, emin)
        } else {
            (frac | 1 << self.mbits, biased as i32 - self.bias())
        };
        Some((neg, sig, e - self.mbits as i32))
    }

    /// mlir-opt's spelling of the value with these bits (without the type).
    pub fn print(self, bits: u128) -> String {
        use crate::mlir_float::to_string;
        if let Some((neg, sig, exp)) = self.decompose(bits) {
            let p = self.precision();
            let short = to_string(neg, sig, exp, p, 6, 0, false);
            if self.reads_back(&short, bits) {
                return short;
            }
            let full = to_string(neg, sig, exp, p, 0, 3, true);
            if full.contains('.') {
                return full;
            }
        }
        format!("0x{bits:X}")
    }

    /// Whether `text` reads back to `bits` (printFloatValue's check, which
    /// converts the decimal text in the type itself, not via f64).
    fn reads_back(self, text: &str, bits: u128) -> bool {
        self.encode_decimal(text) == Some(bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_match_mlir_opt() {
        // Each expected string is what mlir-opt-22 prints for `v : ty`.
        for (v, ty, want) in [
            (1.0, "f80", "1.000000e+00"),
            (2.5, "f128", "2.500000e+00"),
            (-0.0, "f128", "-0.000000e+00"),
            (1.0e300, "f80", "1.0000000000000000525E+300"),
        ] {
            let f = FloatFormat::of(ty).expect("a kept format");
            assert_eq!(f.print(f.encode_f64(v)), want, "{v} : {ty}");
        }
        let f80 = FloatFormat::of("f80").expect("f80");
        assert_eq!(f80.print(0x7FF), "7.461720e-4948");
    }
}
