//! Floats spelled exactly as MLIR's printer spells them (`1.500000e+00`,
//! `3.14159265358979`, `0x7F800000`), for the generic form, which must read
//! the same as `mlir-opt --mlir-print-op-generic`.
//!
//! MLIR prints a float with LLVM's `APFloat::toString` in two settings
//! (`printFloatValue` in `AsmPrinter.cpp`): six digits in scientific form if
//! that reads back to the same bits, else the type's full precision, else the
//! bits in hex. No crate reproduces `toString`'s digit generation — it
//! truncates before it rounds, so Rust's shortest round-trip formatting gives
//! other digits — so it is re-done here on big integers (`num-bigint`).

use crate::types::DType;
use num_bigint::BigUint;

/// MLIR's text for `v` held in `dt` (a float dtype; others are treated as f64).
pub fn mlir_float(v: f64, dt: DType) -> String {
    let (neg, sig, exp, precision) = decompose(v, dt);
    if v.is_finite() {
        let short = to_string(neg, sig.into(), exp, precision, 6, 0, false);
        if reads_back(&short, v, dt) {
            return short;
        }
        let full = to_string(neg, sig.into(), exp, precision, 0, 3, true);
        if full.contains('.') {
            return full;
        }
    }
    hex_bits(v, dt)
}

/// `0x` and the bits of `v` in `dt`, in upper-case hex (MLIR's spelling of
/// infinities, NaNs and numbers no decimal form keeps exactly).
pub fn hex_bits(v: f64, dt: DType) -> String {
    let dt = if dt.is_float() { dt } else { DType::F64 };
    let bits = dt.float_bits(v);
    match dt {
        DType::F32 => format!("0x{bits:08X}"),
        DType::F16 | DType::BF16 => format!("0x{bits:04X}"),
        DType::F4E2M1FN => format!("0x{bits:X}"),
        d if d.is_small_float() => format!("0x{bits:02X}"),
        _ => format!("0x{bits:016X}"),
    }
}

/// Whether `text` parses to the same bits as `v` in `dt`.
fn reads_back(text: &str, v: f64, dt: DType) -> bool {
    match dt {
        DType::F32 => text
            .parse::<f32>()
            .is_ok_and(|x| x.to_bits() == (v as f32).to_bits()),
        DType::F16 => text
            .parse::<f64>()
            .is_ok_and(|x| half::f16::from_f64(x).to_bits() == half::f16::from_f64(v).to_bits()),
        DType::BF16 => text
            .parse::<f64>()
            .is_ok_and(|x| half::bf16::from_f64(x).to_bits() == half::bf16::from_f64(v).to_bits()),
        d if d.is_small_float() => text
            .parse::<f64>()
            .is_ok_and(|x| d.float_bits(x) == d.float_bits(v)),
        _ => text
            .parse::<f64>()
            .is_ok_and(|x| x.to_bits() == v.to_bits()),
    }
}

/// `v` in `dt` as sign, integer significand, binary exponent (value =
/// significand * 2^exponent) and the type's precision in bits.
fn decompose(v: f64, dt: DType) -> (bool, u64, i32, u32) {
    if let Some(f) = crate::minifloat::MiniFloat::of(dt) {
        // A small float's value is exact in f64: its digits are f64's, its
        // precision its own.
        let (neg, sig, e, _) = decompose(f.round_value(v), DType::F64);
        return (neg, sig, e, f.mantissa_bits() + 1);
    }
    // (bits, mantissa bits, exponent bits) of the value in its own type.
    let (bits, man, ebits): (u64, u32, u32) = match dt {
        DType::F32 => ((v as f32).to_bits() as u64, 23, 8),
        DType::F16 => (half::f16::from_f64(v).to_bits() as u64, 10, 5),
        DType::BF16 => (half::bf16::from_f64(v).to_bits() as u64, 7, 8),
        _ => (v.to_bits(), 52, 11),
    };
    let neg = bits >> (man + ebits) & 1 == 1;
    let biased = (bits >> man) & ((1 << ebits) - 1);
    let frac = bits & ((1 << man) - 1);
    let bias = (1i32 << (ebits - 1)) - 1;
    let (sig, e) = if biased == 0 {
        (frac, 1 - bias)
    } else {
        (frac | 1 << man, biased as i32 - bias)
    };
    (neg, sig, e - man as i32, man + 1)
}

/// `APFloat::toString(Str, FormatPrecision, FormatMaxPadding, TruncateZero)`
/// for a finite value `sig * 2^exp` of a type with `precision` bits.
// long: a line-by-line transliteration of LLVM's `APFloat::toString`, kept in
// its order so the two can be compared side by side.
pub(crate) fn to_string(
    neg: bool,
    sig: u128,
    mut exp: i32,
    precision: u32,
    mut format_precision: u32,
    max_padding: u32,
    truncate_zero: bool,
) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if sig == 0 {
        if max_padding != 0 {
            out.push('0');
        } else if truncate_zero {
            out.push_str("0.0E+0");
        } else {
            out.push_str("0.0");
            for _ in 1..format_precision {
                out.push('0');
            }
            out.push_str("e+00");
        }
        return out;
    }
    if format_precision == 0 {
        // Enough digits to read the value back (Steele and White).
        format_precision = 2 + precision * 59 / 196;
    }
    let tz = sig.trailing_zeros();
    exp += tz as i32;
    let mut n = BigUint::from(sig >> tz);
    // From 2^exp to 10^exp: N * 2^-e == N * 5^e * 10^-e.
    if exp > 0 {
        n <<= exp as u32;
        exp = 0;
    } else if exp < 0 {
        n *= BigUint::from(5u32).pow(exp.unsigned_abs());
    }
    // Drop decimal digits beyond what the precision needs (truncating).
    let bits = n.bits();
    let required = (u64::from(format_precision) * 196).div_ceil(59);
    if bits > required {
        let removable = ((bits - required) * 59 / 196) as u32;
        if removable > 0 {
            exp += removable as i32;
            n /= BigUint::from(10u32).pow(removable);
        }
    }
    // Decimal digits, least significant first, trailing zeros dropped.
    let mut digits: Vec<u8> = n.to_radix_le(10);
    let zeros = digits.iter().take_while(|&&d| d == 0).count();
    exp += zeros as i32;
    digits.drain(..zeros);
    round_to_precision(&mut digits, &mut exp, format_precision as usize);
    let nd = digits.len();
    let scientific = if max_padding == 0 {
        true
    } else if exp >= 0 {
        exp as u32 > max_padding || nd as u32 + exp as u32 > format_precision
    } else {
        let msd = exp + nd as i32 - 1;
        msd < 0 && (-msd) as u32 > max_padding
    };
    let digit = |d: u8| (b'0' + d) as char;
    if scientific {
        exp += nd as i32 - 1;
        out.push(digit(digits[nd - 1]));
        out.push('.');
        if nd == 1 && truncate_zero {
            out.push('0');
        } else {
            for i in 1..nd {
                out.push(digit(digits[nd - 1 - i]));
            }
        }
        if !truncate_zero && format_precision as usize > nd - 1 {
            for _ in 0..format_precision as usize - nd + 1 {
                out.push('0');
            }
        }
        out.push(if truncate_zero { 'E' } else { 'e' });
        out.push(if exp >= 0 { '+' } else { '-' });
        let e = exp.unsigned_abs().to_string();
        if !truncate_zero && e.len() < 2 {
            out.push('0');
        }
        out.push_str(&e);
        return out;
    }
    if exp >= 0 {
        for i in 0..nd {
            out.push(digit(digits[nd - 1 - i]));
        }
        for _ in 0..exp {
            out.push('0');
        }
        return out;
    }
    let whole = exp + nd as i32;
    let mut i = 0;
    if whole > 0 {
        while i < whole as usize {
            out.push(digit(digits[nd - 1 - i]));
            i += 1;
        }
        out.push('.');
    } else {
        out.push_str("0.");
        for _ in 0..-whole {
            out.push('0');
        }
    }
    while i < nd {
        out.push(digit(digits[nd - 1 - i]));
        i += 1;
    }
    out
}

/// Keep the `precision` most significant digits of `digits` (least
/// significant first), rounding half up as APFloat does.
fn round_to_precision(digits: &mut Vec<u8>, exp: &mut i32, precision: usize) {
    let n = digits.len();
    if n <= precision {
        return;
    }
    let mut first = n - precision;
    if digits[first - 1] < 5 {
        while first < n && digits[first] == 0 {
            first += 1;
        }
        *exp += first as i32;
        digits.drain(..first);
        return;
    }
    // Round up: a decimal add with carry; carried-through nines become zeros
    // and are dropped.
    let mut i = first;
    while i < n {
        if digits[i] == 9 {
            first += 1;
            i += 1;
        } else {
            digits[i] += 1;
            break;
        }
    }
    if first == n {
        *exp += first as i32;
        digits.clear();
        digits.push(1);
        return;
    }
    *exp += first as i32;
    digits.drain(..first);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_match_mlir_opt() {
        // Each expected string is what mlir-opt-22 prints for the value.
        for (v, dt, want) in [
            (1.5, DType::F32, "1.500000e+00"),
            (0.0, DType::F32, "0.000000e+00"),
            (-0.0, DType::F64, "-0.000000e+00"),
            (0.1, DType::F32, "1.000000e-01"),
            (65504.0, DType::F16, "6.550400e+04"),
            (3.0e38, DType::BF16, "3.004060e+38"),
            (1.0e-300, DType::F64, "1.000000e-300"),
            (1.0e-40, DType::F32, "9.999940e-41"),
            (1.23456789, DType::F64, "1.2345678899999999"),
            (0.3, DType::F64, "3.000000e-01"),
            (16777217.0, DType::F32, "0x4B800000"),
            (123456789.0, DType::F64, "0x419D6F3454000000"),
            (f64::INFINITY, DType::F32, "0x7F800000"),
        ] {
            assert_eq!(mlir_float(v, dt), want, "{v} as {dt}");
        }
    }
}
