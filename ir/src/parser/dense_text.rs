//! Dense elements of element types ge's tensors do not hold — complex
//! numbers (`tensor<2xcomplex<f32>>`) and dialect types that MLIR fills with
//! strings (`tensor<2x!tf.string>`) — kept as the text mlir-opt prints for
//! them (a verbatim attribute). The literal is read and checked against the
//! type's shape as MLIR reads it, and printed as MLIR prints it: a splat when
//! every element is equal, nested lists otherwise, and for more than 100
//! complex elements the raw little-endian data in hex.

use super::literals::{
    decode_hex, float_from_bits, int_literal_i64, int_type_name, parse_float, scan_nested, IntKind,
};
use crate::mlir_float::mlir_float;
use crate::printer::escape;
use crate::types::DType;
use std::fmt::Write;

/// What the elements are.
#[derive(Clone, Copy)]
enum Elem {
    /// `complex<T>`: pairs of T, an int or float ge models.
    Complex(Part),
    /// A dialect type (`!x.str`): byte strings.
    Str,
}

/// One component of a complex element.
#[derive(Clone, Copy)]
enum Part {
    Float(DType),
    /// Width in bits and signedness (`i1` reads `true`/`false`).
    Int(u32, IntKind),
}

impl Part {
    fn of(name: &str) -> Option<Part> {
        match DType::parse(name) {
            Some(d)
                if d.is_float()
                    && matches!(d, DType::F16 | DType::BF16 | DType::F32 | DType::F64) =>
            {
                Some(Part::Float(d))
            }
            _ => match int_type_name(name) {
                Some((k, w)) if matches!(w, 1 | 8 | 16 | 32 | 64) => Some(Part::Int(w, k)),
                _ => None,
            },
        }
    }
    fn bytes(self) -> usize {
        match self {
            Part::Float(d) => d.byte_size(),
            Part::Int(w, _) => (w as usize).div_ceil(8),
        }
    }
    /// The component's bits (two's complement / IEEE), from its literal.
    fn read(self, t: &str) -> Result<u64, String> {
        match self {
            Part::Float(d) => {
                if let Some(h) = t.strip_prefix("0x") {
                    return u64::from_str_radix(h, 16)
                        .map_err(|_| format!("invalid hex element '{t}'"));
                }
                if !t.contains(['.', 'e', 'E']) && !t.contains("inf") && !t.contains("nan") {
                    return Err(
                        "unexpected decimal integer literal for a floating point value".into(),
                    );
                }
                let v = parse_float(t).ok_or_else(|| format!("invalid float '{t}'"))?;
                Ok(d.float_bits(v))
            }
            Part::Int(1, _) => match t {
                "true" | "1" => Ok(1),
                "false" | "0" => Ok(0),
                _ => Err(format!("invalid i1 element '{t}'")),
            },
            Part::Int(w, k) => {
                let v = int_literal_i64(t, w, k).map_err(|e| e.to_string())?;
                Ok(if w == 64 {
                    v as u64
                } else {
                    (v as u64) & ((1 << w) - 1)
                })
            }
        }
    }
    /// MLIR's spelling of a component.
    fn write(self, bits: u64, out: &mut String) {
        match self {
            Part::Float(d) => out.push_str(&mlir_float(float_from_bits(d, bits), d)),
            Part::Int(1, _) => out.push_str(if bits & 1 == 1 { "true" } else { "false" }),
            Part::Int(w, IntKind::Unsigned) => {
                let _ = write!(out, "{bits}");
                let _ = w;
            }
            Part::Int(w, _) => {
                // Signless and signed print their signed value.
                let v = if w == 64 {
                    bits as i64
                } else {
                    ((bits << (64 - w)) as i64) >> (64 - w)
                };
                let _ = write!(out, "{v}");
            }
        }
    }
}

/// The shape and element kind of a `tensor<...>` type text whose elements
/// ge does not hold; `None` for any other type.
fn parse_type(ty: &str) -> Option<Result<(Vec<i64>, Elem), String>> {
    let inner = ty.strip_prefix("tensor<")?.strip_suffix('>')?;
    let mut dims = vec![];
    let mut rest = inner;
    loop {
        let n = rest
            .bytes()
            .take_while(|c| c.is_ascii_digit() || *c == b'?')
            .count();
        if n == 0 || rest.as_bytes().get(n) != Some(&b'x') {
            break;
        }
        dims.push(rest[..n].parse::<i64>().ok());
        rest = &rest[n + 1..];
    }
    let elem = if let Some(p) = rest
        .strip_prefix("complex<")
        .and_then(|r| r.strip_suffix('>'))
    {
        match Part::of(p.trim()) {
            Some(p) => Elem::Complex(p),
            None => {
                return Some(Err(format!(
                    "ge cannot keep dense elements of type 'complex<{p}>'"
                )))
            }
        }
    } else if rest.starts_with('!') {
        Elem::Str
    } else {
        return None;
    };
    let dims: Option<Vec<i64>> = dims.into_iter().collect();
    Some(
        dims.ok_or_else(|| format!("dense literal needs a static shape, got '{ty}'"))
            .map(|d| (d, elem)),
    )
}

/// A leaf of the literal: a complex pair or a string (its bytes).
#[derive(PartialEq, Clone)]
enum Leaf {
    Pair(u64, u64),
    Bytes(Vec<u8>),
}

/// The body (`None` for `dense<>`) of a dense attribute of type `ty` as
/// mlir-opt prints the whole attribute, or `None` when `ty` holds elements
/// ge models (the caller reads those).
pub fn dense_text(body: Option<&str>, ty: &str) -> Option<Result<String, String>> {
    let (dims, elem) = match parse_type(ty)? {
        Ok(x) => x,
        Err(e) => return Some(Err(e)),
    };
    Some(read_print(body, ty, &dims, elem))
}

fn read_print(body: Option<&str>, ty: &str, dims: &[i64], elem: Elem) -> Result<String, String> {
    let n = dims
        .iter()
        .try_fold(1i64, |a, &d| a.checked_mul(d))
        .ok_or("dense literal has too many elements")?;
    let leaves: Vec<Leaf> = match body {
        None if n == 0 => vec![],
        None => return Err(format!("empty dense literal for a type with {n} elements")),
        Some(b) => {
            let b = b.trim();
            match elem {
                Elem::Complex(p) if b.starts_with("\"0x") => read_hex(b, p, n)?,
                _ => {
                    let (leaves, shape) = read_list(b, elem)?;
                    if let Some(shape) = shape {
                        if shape != dims && !(n == 0 && leaves.is_empty()) {
                            return Err(format!(
                                "inferred shape of elements literal ([{}]) does not match type ([{}])",
                                join(&shape),
                                join(dims)
                            ));
                        }
                    }
                    leaves
                }
            }
        }
    };
    let mut out = String::from("dense<");
    if n > 0 && !leaves.is_empty() {
        let splat = leaves.iter().all(|l| *l == leaves[0]);
        match elem {
            Elem::Complex(p) if !splat && n > 100 && !matches!(p, Part::Int(1, _)) => {
                out.push_str("\"0x");
                for l in &leaves {
                    if let Leaf::Pair(a, b) = l {
                        for v in [a, b] {
                            for k in 0..p.bytes() {
                                let _ = write!(out, "{:02X}", (v >> (8 * k)) & 0xFF);
                            }
                        }
                    }
                }
                out.push('"');
            }
            _ if splat => write_leaf(&leaves[0], elem, &mut out),
            _ => write_list(&leaves, dims, elem, &mut out),
        }
    }
    out.push_str("> : ");
    out.push_str(ty);
    Ok(out)
}

fn join(d: &[i64]) -> String {
    d.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn write_leaf(l: &Leaf, elem: Elem, out: &mut String) {
    match (l, elem) {
        (Leaf::Pair(a, b), Elem::Complex(p)) => {
            out.push('(');
            p.write(*a, out);
            out.push(',');
            p.write(*b, out);
            out.push(')');
        }
        (Leaf::Bytes(s), _) => {
            out.push('"');
            out.push_str(&escape_bytes(s));
            out.push('"');
        }
        _ => {}
    }
}

fn write_list(leaves: &[Leaf], dims: &[i64], elem: Elem, out: &mut String) {
    let Some((&d, rest)) = dims.split_first() else {
        if let Some(l) = leaves.first() {
            write_leaf(l, elem, out);
        }
        return;
    };
    let per = rest.iter().product::<i64>().max(0) as usize;
    out.push('[');
    for i in 0..d.max(0) as usize {
        if i > 0 {
            out.push_str(", ");
        }
        let start = (i * per).min(leaves.len());
        write_list(
            &leaves[start..(start + per).min(leaves.len())],
            rest,
            elem,
            out,
        );
    }
    out.push(']');
}

/// MLIR's escaping of a string's bytes (printable ASCII as is, `\\`, and
/// `\XX` for `"` and everything else).
fn escape_bytes(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => escape(s),
        Err(_) => {
            let mut out = String::new();
            for &c in b {
                match c {
                    b'\\' => out.push_str("\\\\"),
                    0x20..=0x7e if c != b'"' => out.push(c as char),
                    _ => {
                        let _ = write!(out, "\\{c:02X}");
                    }
                }
            }
            out
        }
    }
}

/// A string literal's bytes (the text between the quotes, escapes read).
fn unescape_bytes(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            let hex = |k: usize| b.get(k).is_some_and(|c| c.is_ascii_hexdigit());
            match b[i + 1] {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'"' => out.push(b'"'),
                b'\\' => out.push(b'\\'),
                _ if hex(i + 1) && hex(i + 2) => {
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
    out
}

/// `"0x..."`: the raw data of `n` complex elements, or of one (a splat).
fn read_hex(b: &str, p: Part, n: i64) -> Result<Vec<Leaf>, String> {
    let hex = b
        .strip_prefix("\"0x")
        .and_then(|t| t.strip_suffix('"'))
        .ok_or("invalid hex in dense literal")?;
    let bytes = decode_hex(hex).ok_or("invalid hex in dense literal")?;
    let w = p.bytes();
    let pair = 2 * w;
    let count = bytes.len() / pair.max(1);
    if bytes.len() % pair != 0 || (count as i64 != n && count != 1) {
        return Err(format!(
            "elements hex data size is invalid for provided type: {} bytes for {n} elements of {pair} bytes",
            bytes.len()
        ));
    }
    let word = |c: &[u8]| c.iter().rev().fold(0u64, |a, &x| (a << 8) | x as u64);
    Ok(bytes
        .chunks_exact(pair)
        .map(|c| Leaf::Pair(word(&c[..w]), word(&c[w..])))
        .collect())
}

/// Nested lists of leaves (or one leaf: a splat, shape `None`).
fn read_list(b: &str, elem: Elem) -> Result<(Vec<Leaf>, Option<Vec<i64>>), String> {
    scan_nested(b, |i| read_leaf(b, i, elem))
}

/// One leaf starting at `i`: `(a, b)` or `"..."`; its end.
fn read_leaf(b: &str, i: usize, elem: Elem) -> Result<(Leaf, usize), String> {
    let s = b.as_bytes();
    match (elem, s[i]) {
        (Elem::Str, b'"') => {
            let mut j = i + 1;
            while j < s.len() && s[j] != b'"' {
                j += if s[j] == b'\\' { 2 } else { 1 };
            }
            let body = b
                .get(i + 1..j)
                .ok_or("unterminated string in dense literal")?;
            Ok((Leaf::Bytes(unescape_bytes(body)), (j + 1).min(s.len())))
        }
        (Elem::Complex(p), b'(') => {
            let close = b[i..]
                .find(')')
                .ok_or("expected ')' in a complex element")?
                + i;
            let (re, im) = b[i + 1..close]
                .split_once(',')
                .ok_or("a complex element is '(real, imaginary)'")?;
            Ok((
                Leaf::Pair(p.read(re.trim())?, p.read(im.trim())?),
                close + 1,
            ))
        }
        (Elem::Str, _) => Err("expected a string element".into()),
        (Elem::Complex(_), _) => Err("expected a complex element '(real, imaginary)'".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_match_mlir_opt() {
        // What mlir-opt-22 prints for each attribute.
        for (body, ty, want) in [
            (
                Some("[(1.0, 2.0), (1.0, 2.0)]"),
                "tensor<2xcomplex<f32>>",
                "dense<(1.000000e+00,2.000000e+00)> : tensor<2xcomplex<f32>>",
            ),
            (
                Some("[[(1, 2)], [(3, -4)]]"),
                "tensor<2x1xcomplex<i8>>",
                "dense<[[(1,2)], [(3,-4)]]> : tensor<2x1xcomplex<i8>>",
            ),
            (
                Some("(255, 0x7F)"),
                "tensor<complex<i8>>",
                "dense<(-1,127)> : tensor<complex<i8>>",
            ),
            (
                Some("(1, 0)"),
                "tensor<2xcomplex<i1>>",
                "dense<(true,false)> : tensor<2xcomplex<i1>>",
            ),
            (
                Some("\"0x0000803F00000040\""),
                "tensor<complex<f32>>",
                "dense<(1.000000e+00,2.000000e+00)> : tensor<complex<f32>>",
            ),
            (
                None,
                "tensor<0xcomplex<f32>>",
                "dense<> : tensor<0xcomplex<f32>>",
            ),
            (Some("[]"), "tensor<0x!x.s>", "dense<> : tensor<0x!x.s>"),
            (
                Some("[\"a\", \"a\"]"),
                "tensor<2x!x.str>",
                "dense<\"a\"> : tensor<2x!x.str>",
            ),
            (
                Some("[[\"x\\\\y\"], [\"\\09\"]]"),
                "tensor<2x1x!x.str>",
                "dense<[[\"x\\\\y\"], [\"\\09\"]]> : tensor<2x1x!x.str>",
            ),
            (
                Some("[\"\\FF\", \"a\\\"b\"]"),
                "tensor<2x!x.str>",
                "dense<[\"\\FF\", \"a\\22b\"]> : tensor<2x!x.str>",
            ),
        ] {
            assert_eq!(dense_text(body, ty).expect("kept").expect("reads"), want);
        }
        assert!(dense_text(Some("1"), "tensor<2xf32>").is_none());
        let e = dense_text(Some("[(1.0, 2.0)]"), "tensor<2xcomplex<f32>>")
            .expect("kept")
            .expect_err("shape");
        assert!(e.contains("does not match type ([2])"), "{e}");
        let e = dense_text(Some("(1, 2)"), "tensor<complex<f32>>")
            .expect("kept")
            .expect_err("int");
        assert!(e.contains("unexpected decimal integer"), "{e}");
    }
}
