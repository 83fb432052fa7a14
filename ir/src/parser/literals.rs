//! Literal helpers: numbers, strings, hex blobs, dense literal bodies.

use crate::attributes::Element;
use crate::module::Blob;
use crate::types::DType;

pub fn memchr_newlines(s: &str) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(b'\n', s.as_bytes()).map(|i| i + 1)
}

/// Decimal or `0x` hex integer, optionally negative. Hex may use all 64 bits.
pub fn parse_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let v: i64 = if let Some(h) = body.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()? as i64
    } else if neg {
        return format!("-{body}").parse().ok();
    } else {
        match body.parse::<i64>() {
            Ok(v) => v,
            // Unsigned 64-bit literals keep their bits.
            Err(_) => body.parse::<u64>().ok()? as i64,
        }
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

pub fn parse_float(s: &str) -> Option<f64> {
    match s {
        "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" | "-nan" => Some(f64::NAN),
        _ => s.parse().ok(),
    }
}

/// The bits of a hex float literal (`0x7FF`) of a `width`-bit float type, as
/// MLIR reads them: no sign, no decimal integers, no bits beyond the width.
pub fn hex_float_bits(text: &str, width: u32) -> Result<u128, String> {
    if text.starts_with('-') {
        return Err("hexadecimal float literal should not have a leading minus".into());
    }
    let Some(h) = text.strip_prefix("0x") else {
        return Err("unexpected decimal integer literal for a floating point value".into());
    };
    let bits = u128::from_str_radix(h, 16)
        .ok()
        .filter(|b| width >= 128 || b >> width == 0)
        .ok_or("hexadecimal float constant out of range for type")?;
    Ok(bits)
}

/// A float given by its bit pattern in `dt` (MLIR's hex float spelling).
pub fn float_from_bits(dt: DType, bits: u64) -> f64 {
    if dt.is_float() {
        dt.float_from_bits(bits)
    } else {
        bits as f64
    }
}

/// MLIR string escapes: `\"`, `\\`, `\n`, `\t`, and `\XX` hex bytes.
/// `None` when the bytes the escapes spell are not UTF-8: ge keeps strings
/// as text, and a replacement character would lose the bytes silently.
pub fn unescape(s: &str) -> Option<String> {
    if !s.contains('\\') {
        return Some(s.to_string());
    }
    let b = s.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            match b[i + 1] {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'"' => out.push(b'"'),
                b'\\' => out.push(b'\\'),
                _ if i + 2 < b.len()
                    && b[i + 1].is_ascii_hexdigit()
                    && b[i + 2].is_ascii_hexdigit() =>
                {
                    let h = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("00");
                    out.push(u8::from_str_radix(h, 16).unwrap_or(0));
                    i += 3;
                    continue;
                }
                c => out.push(c),
            }
            i += 2;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The message for a string whose escapes are not UTF-8 (see [`unescape`]).
pub const NOT_UTF8: &str =
    "string escapes spell bytes that are not UTF-8 text, which ge cannot keep";

pub fn unquote_key(s: &str) -> Option<String> {
    if s.starts_with('"') && s.len() >= 2 {
        unescape(&s[1..s.len() - 1])
    } else {
        Some(s.to_string())
    }
}

pub fn decode_hex(h: &str) -> Option<Vec<u8>> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        }
    }
    let b = h.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    let mut out = Vec::with_capacity(b.len() / 2);
    for pair in b.chunks_exact(2) {
        out.push(nibble(pair[0])? << 4 | nibble(pair[1])?);
    }
    Some(out)
}

/// `"0x<alignment u32 LE><data>"` as MLIR writes resource blobs.
pub fn parse_hex_blob(quoted: &str) -> Option<Blob> {
    let h = quoted.strip_prefix("\"0x")?.strip_suffix('"')?;
    let bytes = decode_hex(h)?;
    if bytes.len() < 4 {
        return None;
    }
    let alignment = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    Some(Blob {
        alignment,
        data: bytes[4..].to_vec(),
    })
}

/// Split `a, b<c, d>, "e,f"` at top-level commas.
pub fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = vec![];
    let (mut depth, mut in_str, mut esc, mut start) = (0i32, false, false, 0);
    for (i, c) in s.char_indices() {
        if in_str {
            match c {
                '\\' if !esc => esc = true,
                '"' if !esc => in_str = false,
                _ => esc = false,
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '<' | '[' | '(' | '{' => depth += 1,
            '>' | ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() || !out.is_empty() {
        out.push(&s[start..]);
    }
    out
}

/// Read a validated dense body (`[[1, 2], [3, 4]]` or a scalar splat) into
/// elements and the literal's nested shape (`None` for a splat scalar).
pub fn scan_dense(text: &str) -> Result<(Vec<Element>, Option<Vec<i64>>), String> {
    scan_dense_typed(text, None)
}

/// [`scan_dense`] for elements of type `dt`: in a float literal a hex
/// integer is the element's bit pattern (MLIR's spelling of inf and nan).
pub fn scan_dense_typed(
    text: &str,
    dt: Option<DType>,
) -> Result<(Vec<Element>, Option<Vec<i64>>), String> {
    let float_bits = dt.filter(|d| d.is_float());
    let scalar = |t: &str| match (float_bits, t.strip_prefix("0x")) {
        (Some(d), Some(h)) => u64::from_str_radix(h, 16)
            .map(|bits| Element::Float(float_from_bits(d, bits)))
            .map_err(|_| format!("invalid hex element '{t}'")),
        _ => scalar(t),
    };
    let t = text.trim();
    if !t.starts_with('[') {
        return Ok((vec![scalar(t)?], None));
    }
    scan_nested(text, |i| {
        let b = text.as_bytes();
        if b[i] == b'(' {
            return Err("complex dense elements are not supported".into());
        }
        let mut end = i;
        while end < b.len() && !matches!(b[end], b',' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
            end += 1;
        }
        Ok((scalar(&text[i..end])?, end))
    })
}

/// The one walk over a dense literal's nested lists (`[[a, b], [c, d]]`, or
/// one leaf: a splat), shared by every element kind: `leaf(i)` reads the
/// leaf that starts at byte `i` of `text` (a number, `(re, im)`, a string)
/// and returns it with the byte after it. The lists must be balanced, not
/// ragged, and hold leaves at one depth only. Returns the leaves in order
/// and the literal's nested shape (`None` for a lone leaf; an innermost
/// empty list, `[]` or `[[], []]`, contributes a 0 dim).
pub(crate) fn scan_nested<L>(
    text: &str,
    mut leaf: impl FnMut(usize) -> Result<(L, usize), String>,
) -> Result<(Vec<L>, Option<Vec<i64>>), String> {
    let b = text.as_bytes();
    let list = text.trim_start().starts_with('[');
    let mut leaves = Vec::new();
    // Per depth: number of children seen in the current list; the shape is
    // fixed by the first list at each depth and checked for every other.
    let mut shape: Vec<Option<i64>> = vec![];
    let mut counts: Vec<i64> = vec![];
    let mut leaf_depth: Option<usize> = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'[' => {
                if let Some(c) = counts.last_mut() {
                    *c += 1;
                }
                counts.push(0);
                if shape.len() < counts.len() {
                    shape.push(None);
                }
                i += 1;
            }
            b']' => {
                let n = counts.pop().ok_or("unbalanced ']' in dense literal")?;
                match shape[counts.len()] {
                    None => shape[counts.len()] = Some(n),
                    Some(m) if m != n => {
                        return Err(format!(
                        "dense literal is ragged: a list of {n} elements where {m} were expected"
                    ))
                    }
                    _ => {}
                }
                i += 1;
            }
            b',' | b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            _ => {
                let (l, end) = leaf(i)?;
                // A leaf reader always moves on, so the walk ends.
                i = end.max(i + 1);
                let depth = counts.len();
                if leaf_depth.is_some_and(|d| d != depth) {
                    return Err("dense literal mixes nesting depths".into());
                }
                leaf_depth = Some(depth);
                if let Some(c) = counts.last_mut() {
                    *c += 1;
                }
                leaves.push(l);
            }
        }
    }
    if !counts.is_empty() {
        return Err("unbalanced '[' in dense literal".into());
    }
    if !list {
        if leaves.len() != 1 {
            return Err("expected one element or a list".into());
        }
        return Ok((leaves, None));
    }
    let mut dims: Vec<i64> = shape.into_iter().map(|d| d.unwrap_or(0)).collect();
    if leaf_depth.is_none() && dims.last() != Some(&0) {
        dims.push(0);
    }
    Ok((leaves, Some(dims)))
}

fn scalar(t: &str) -> Result<Element, String> {
    match t {
        "true" => return Ok(Element::Bool(true)),
        "false" => return Ok(Element::Bool(false)),
        _ => {}
    }
    if t.contains('.') || t.contains("inf") || t.contains("nan") {
        return parse_float(t)
            .map(Element::Float)
            .ok_or_else(|| format!("invalid float '{t}'"));
    }
    if let Some(h) = t.strip_prefix("0x") {
        return u64::from_str_radix(h, 16)
            .map(Element::UInt)
            .map_err(|_| format!("invalid hex element '{t}'"));
    }
    match t.parse::<i64>() {
        Ok(i) => Ok(Element::Int(i)),
        Err(_) => t
            .parse::<u64>()
            .map(Element::UInt)
            .map_err(|_| format!("invalid integer '{t}'")),
    }
}

/// How an integer type reads a literal (MLIR's signedness semantics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntKind {
    /// `iN`: any N-bit pattern, printed as its signed value.
    Signless,
    /// `siN` and `index`: positive literals must leave the sign bit clear.
    Signed,
    /// `uiN`: no negative literals.
    Unsigned,
}

/// The widest integer type MLIR has (`IntegerType::kMaxWidth`).
pub const MAX_INT_WIDTH: u32 = 16_777_215;

const OUT_OF_RANGE: &str = "integer constant out of range for attribute";
const NEGATIVE_UNSIGNED: &str = "negative integer literal not valid for unsigned integer type";

/// [`int_literal_value`] for widths of 1 to 64 bits, without big integers
/// (the types ge models, whose attributes a big module holds by the
/// million). The value is an `i64`; an unsigned one above `i64::MAX` keeps
/// its bits.
pub fn int_literal_i64(text: &str, width: u32, kind: IntKind) -> Result<i64, &'static str> {
    let width = width.clamp(1, 64);
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    if neg && kind == IntKind::Unsigned {
        return Err(NEGATIVE_UNSIGNED);
    }
    // Past u128 is past any 64-bit type (the grammar admits only digits).
    let mag = match body.strip_prefix("0x") {
        Some(h) => u128::from_str_radix(h, 16),
        None => body.parse::<u128>(),
    }
    .map_err(|_| OUT_OF_RANGE)?;
    let modulus = 1u128 << width;
    if mag >= modulus {
        return Err(OUT_OF_RANGE);
    }
    let sign_bit = |m: u128| m >> (width - 1) & 1 == 1;
    let bits = if neg {
        let b = (modulus - mag) % modulus;
        if !sign_bit(b) {
            return Err(OUT_OF_RANGE);
        }
        b
    } else {
        if kind == IntKind::Signed && sign_bit(mag) {
            return Err(OUT_OF_RANGE);
        }
        mag
    };
    let v = if kind != IntKind::Unsigned && sign_bit(bits) {
        bits as i128 - modulus as i128
    } else {
        bits as i128
    };
    Ok(v as i64)
}

/// The kind and width of an MLIR integer type name (`i3`, `si8`, `ui1024`),
/// `None` for anything else or a width past [`MAX_INT_WIDTH`].
pub fn int_type_name(name: &str) -> Option<(IntKind, u32)> {
    let (kind, digits) = if let Some(d) = name.strip_prefix("si") {
        (IntKind::Signed, d)
    } else if let Some(d) = name.strip_prefix("ui") {
        (IntKind::Unsigned, d)
    } else {
        (IntKind::Signless, name.strip_prefix('i')?)
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits
        .parse::<u32>()
        .ok()
        .filter(|&w| w <= MAX_INT_WIDTH)
        .map(|w| (kind, w))
}

/// The value an integer literal (decimal or `0x` hex, optionally negative)
/// denotes in a `width`-bit integer type, by MLIR's rules
/// (`buildAttributeAPInt`): the magnitude must fit in `width` bits, a
/// negative literal must be representable in two's complement, a positive
/// one in a signed type must leave the sign bit clear, and unsigned types
/// take no negative literal. The value returned is the one MLIR prints:
/// signed for signless and signed types, unsigned for unsigned ones.
pub fn int_literal_value(
    text: &str,
    width: u32,
    kind: IntKind,
) -> Result<num_bigint::BigInt, &'static str> {
    use num_bigint::{BigInt, BigUint};
    if (1..=64).contains(&width) {
        return int_literal_i64(text, width, kind).map(|v| match kind {
            IntKind::Unsigned => BigInt::from(v as u64),
            _ => BigInt::from(v),
        });
    }
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let mag = match body.strip_prefix("0x") {
        Some(h) => BigUint::parse_bytes(h.as_bytes(), 16),
        None => BigUint::parse_bytes(body.as_bytes(), 10),
    }
    .ok_or("invalid integer literal")?;
    if neg && kind == IntKind::Unsigned {
        return Err(NEGATIVE_UNSIGNED);
    }
    if mag.bits() > u64::from(width) {
        return Err(OUT_OF_RANGE);
    }
    let sign_bit = |m: &BigUint| width > 0 && m.bit(u64::from(width) - 1);
    if width == 0 {
        return if neg {
            Err(OUT_OF_RANGE)
        } else {
            Ok(BigInt::from(0))
        };
    }
    let modulus = BigUint::from(1u8) << width;
    // Two's-complement bits of the value.
    let bits = if neg {
        let b = (&modulus - &mag) % &modulus;
        // Negating must give a set sign bit (MLIR: `-0` overflows too).
        if !sign_bit(&b) {
            return Err(OUT_OF_RANGE);
        }
        b
    } else {
        if kind == IntKind::Signed && sign_bit(&mag) {
            return Err(OUT_OF_RANGE);
        }
        mag
    };
    Ok(if kind != IntKind::Unsigned && sign_bit(&bits) {
        BigInt::from(bits) - BigInt::from(modulus)
    } else {
        BigInt::from(bits)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_literals_follow_mlirs_range_rules() {
        let v = |t: &str, w, k| int_literal_value(t, w, k).map(|x| x.to_string());
        use IntKind::*;
        assert_eq!(v("255", 8, Signless).as_deref(), Ok("-1"));
        assert_eq!(v("0xFF", 8, Signless).as_deref(), Ok("-1"));
        assert_eq!(v("-128", 8, Signless).as_deref(), Ok("-128"));
        assert_eq!(v("255", 8, Unsigned).as_deref(), Ok("255"));
        assert_eq!(v("127", 8, Signed).as_deref(), Ok("127"));
        assert_eq!(v("0", 0, Signless).as_deref(), Ok("0"));
        let big = "340282366920938463463374607431768211455";
        assert_eq!(v(big, 128, Signless).as_deref(), Ok("-1"));
        for (t, w, k) in [
            ("256", 8, Signless),
            ("-129", 8, Signless),
            ("128", 8, Signed),
            ("-0", 8, Signless),
            ("2", 1, Signless),
            ("-1", 0, Signless),
        ] {
            assert!(v(t, w, k).is_err(), "{t} : {k:?}{w}");
        }
        assert!(v("-1", 8, Unsigned).unwrap_err().contains("negative"));
        assert_eq!(int_type_name("si8"), Some((Signed, 8)));
        assert_eq!(int_type_name("i16777216"), None);
        assert_eq!(int_type_name("index"), None);
    }

    #[test]
    fn dense_bodies_report_their_shape() {
        let (e, s) = scan_dense("[[1, 2, 3], [4, 5, 6]]").unwrap();
        assert_eq!(e.len(), 6);
        assert_eq!(s, Some(vec![2, 3]));
        assert_eq!(scan_dense("1.5").unwrap().1, None);
        assert_eq!(scan_dense("[]").unwrap().1, Some(vec![0]));
        assert!(scan_dense("[[1, 2], [3]]").is_err());
    }

    /// The structure of a dense literal: brackets and leaves (commas are
    /// written between siblings when rendering).
    #[derive(Clone, Debug)]
    enum Tok {
        Open,
        Close,
        Leaf,
    }

    /// A balanced, rectangular nested literal of `dims` as tokens.
    fn nested(dims: &[usize]) -> Vec<Tok> {
        match dims.split_first() {
            None => vec![Tok::Leaf],
            Some((&d, rest)) => {
                let mut t = vec![Tok::Open];
                for _ in 0..d {
                    t.extend(nested(rest));
                }
                t.push(Tok::Close);
                t
            }
        }
    }

    /// The tokens as text, each leaf spelled `leaf` (commas between siblings).
    fn render(toks: &[Tok], leaf: &str) -> String {
        let mut s = String::new();
        for (k, t) in toks.iter().enumerate() {
            let prev_value = k > 0 && matches!(toks[k - 1], Tok::Close | Tok::Leaf);
            if prev_value && matches!(t, Tok::Open | Tok::Leaf) {
                s.push_str(", ");
            }
            match t {
                Tok::Open => s.push('['),
                Tok::Close => s.push(']'),
                Tok::Leaf => s.push_str(leaf),
            }
        }
        s
    }

    proptest::proptest! {
        /// Both readers of dense literal bodies — ge's elements
        /// (`scan_dense_typed`) and the kept-as-text complex and string
        /// elements (`dense_text`) — walk the lists with `scan_nested`: a
        /// literal with one bracket dropped or one added anywhere is an
        /// error for each of them, never a panic or an accepted value; the
        /// literal as generated is read with its shape. (Checked to fail
        /// when `scan_nested` skips its final unclosed-'[' check.)
        #[test]
        fn unbalanced_brackets_are_rejected_by_every_dense_reader(
            dims in proptest::collection::vec(1usize..4, 1..4),
            edit in 0usize..64,
            add in proptest::bool::ANY,
            open in proptest::bool::ANY,
        ) {
            let good = nested(&dims);
            let want: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
            let mut bad = good.clone();
            if add {
                bad.insert(edit % (bad.len() + 1), if open { Tok::Open } else { Tok::Close });
            } else {
                let brackets: Vec<usize> = (0..bad.len())
                    .filter(|&k| matches!(bad[k], Tok::Open | Tok::Close))
                    .collect();
                bad.remove(brackets[edit % brackets.len()]);
            }
            let n: usize = dims.iter().product();
            let ty = |elem: &str| {
                let d: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
                format!("tensor<{}x{elem}>", d.join("x"))
            };
            // ge's own elements.
            let (e, shape) = scan_dense_typed(&render(&good, "1.5"), Some(DType::F32))
                .map_err(proptest::test_runner::TestCaseError::fail)?;
            proptest::prop_assert_eq!(e.len(), n);
            proptest::prop_assert_eq!(shape, Some(want));
            let text = render(&bad, "1.5");
            proptest::prop_assert!(scan_dense_typed(&text, Some(DType::F32)).is_err(), "{}", text);
            proptest::prop_assert!(scan_dense(&text).is_err(), "{}", text);
            // Kept as text: complex pairs and strings (brackets inside a
            // string are not structure).
            for (leaf, elem) in [("(1.0, 2.0)", "complex<f32>"), ("\"a]\"", "!x.str")] {
                let read = super::super::dense_text::dense_text(Some(&render(&good, leaf)), &ty(elem));
                proptest::prop_assert!(matches!(read, Some(Ok(_))), "{:?}", read);
                let text = render(&bad, leaf);
                let read = super::super::dense_text::dense_text(Some(&text), &ty(elem));
                proptest::prop_assert!(matches!(read, Some(Err(_))), "{} gave {:?}", text, read);
            }
        }
    }

    #[test]
    fn integers_parse_in_decimal_and_hex() {
        assert_eq!(parse_int("-12"), Some(-12));
        assert_eq!(parse_int("0xFF"), Some(255));
        assert_eq!(parse_int("18446744073709551615"), Some(-1));
        assert_eq!(parse_int("99999999999999999999"), None);
    }

    #[test]
    fn escapes_follow_mlir() {
        assert_eq!(unescape(r#"a\"b\n\41"#).as_deref(), Some("a\"b\nA"));
        assert_eq!(unescape(r#"\C3\A9"#).as_deref(), Some("é"));
        assert_eq!(unescape(r#"\FF"#), None);
    }
}
