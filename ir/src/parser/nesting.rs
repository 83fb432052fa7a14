//! How deep a text nests, found before it is parsed.
//!
//! Every recursion of the parser — pest's rules for types, attributes and
//! locations, building them, op regions — goes one bracket deeper (`(`, `[`,
//! `{`, `<`), so bounding the brackets bounds them all, and everything the
//! parse builds (IR regions, attributes) nests no deeper either. One linear
//! scan (strings and comments skipped) before the parse costs far less than
//! the parse and turns a hostile input into a diagnostic instead of a stack
//! overflow.

use std::ops::Range;

/// The deepest bracket nesting ge reads (regions, types, attributes,
/// locations together). Real programs nest a few dozen levels; 10,000 nested
/// generic regions (two brackets each) still fit.
pub const MAX_NESTING: usize = 32_768;

/// What a scan found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nesting {
    /// The deepest nesting (up to the limit).
    pub max_depth: usize,
    /// Offset of the bracket that went past the limit, if one did.
    pub too_deep_at: Option<usize>,
}

/// Scan `src` for its bracket nesting, stopping at the first bracket deeper
/// than `limit`. Brackets nest only with their own kind: a closing bracket
/// that does not match the innermost open one is content (`#foo<)>`: the
/// grammar does not count it either), so the depth found is never less than
/// any recursion of the parser. `->` closes nothing, nor does `>=` (an
/// affine constraint).
pub fn scan(src: &str, limit: usize) -> Nesting {
    let s = src.as_bytes();
    let mut open: Vec<u8> = Vec::new();
    let mut max_depth = 0usize;
    let mut i = 0usize;
    while let Some(at) = next_interesting(s, i) {
        i = at;
        let c = s[i];
        match c {
            b'(' | b'[' | b'{' | b'<' => {
                open.push(c);
                if open.len() > max_depth {
                    max_depth = open.len();
                    if max_depth > limit {
                        return Nesting {
                            max_depth: limit,
                            too_deep_at: Some(i),
                        };
                    }
                }
            }
            b'>' if (i > 0 && s[i - 1] == b'-') || s.get(i + 1) == Some(&b'=') => {}
            b')' | b']' | b'}' | b'>' => {
                let opener = match c {
                    b')' => b'(',
                    b']' => b'[',
                    b'}' => b'{',
                    _ => b'<',
                };
                if open.last() == Some(&opener) {
                    open.pop();
                }
            }
            b'"' => {
                // To the closing quote, escapes skipped (an unterminated
                // string runs to the end: the parser reports it).
                i += 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', s.get(i..).unwrap_or_default()) {
                        Some(k) if s[i + k] == b'"' => {
                            i += k;
                            break;
                        }
                        Some(k) => i += k + 2,
                        None => {
                            i = s.len();
                            break;
                        }
                    }
                }
                if i >= s.len() {
                    break;
                }
            }
            b'/' if s.get(i + 1) == Some(&b'/') => {
                i += memchr::memchr(b'\n', &s[i..]).unwrap_or(s.len() - i);
            }
            _ => {}
        }
        i += 1;
    }
    Nesting {
        max_depth,
        too_deep_at: None,
    }
}

/// The next byte at or after `i` that is a bracket, a quote or a slash.
#[inline]
fn next_interesting(s: &[u8], mut i: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    while i + 16 <= s.len() {
        let m = interesting_mask(&s[i..i + 16]);
        if m != 0 {
            return Some(i + m.trailing_zeros() as usize);
        }
        i += 16;
    }
    while i < s.len() {
        if matches!(
            s[i],
            b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'<' | b'>' | b'"' | b'/'
        ) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// One bit per byte of `block` (16 bytes) that is a bracket, `"` or `/`:
/// six byte-wise compares (brackets of a pair differ in one bit) instead of
/// a branch per byte, which made this scan as slow as a tenth of the parse.
#[cfg(target_arch = "x86_64")]
#[inline]
fn interesting_mask(block: &[u8]) -> u32 {
    use std::arch::x86_64::*;
    assert!(block.len() >= 16);
    // SAFETY: SSE2 is part of every x86_64 target; the unaligned load reads
    // the 16 bytes of `block`, whose length was just checked.
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr() as *const __m128i);
        let eq = |x: __m128i, c: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(c as i8));
        let or1 = _mm_or_si128(v, _mm_set1_epi8(1));
        let or2 = _mm_or_si128(v, _mm_set1_epi8(2));
        let or32 = _mm_or_si128(v, _mm_set1_epi8(0x20));
        let m = _mm_or_si128(
            _mm_or_si128(eq(or1, b')'), eq(or2, b'>')),
            _mm_or_si128(
                _mm_or_si128(eq(or32, b'{'), eq(or32, b'}')),
                _mm_or_si128(eq(v, b'"'), eq(v, b'/')),
            ),
        );
        _mm_movemask_epi8(m) as u32
    }
}

/// The error for a text nesting deeper than [`MAX_NESTING`] at `at`: the
/// span of the bracket and the message.
pub fn too_deep(at: usize) -> (Range<usize>, String) {
    (
        at..at + 1,
        format!(
            "input nested too deeply: more than {MAX_NESTING} levels of brackets (regions, \
             types, attributes); ge reads at most {MAX_NESTING}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_brackets_outside_strings_and_comments() {
        let n = scan("a([{<x>}]) \"(((\\\"[[\" // [[[\n -> >= (", 100);
        assert_eq!(n.max_depth, 4);
        assert_eq!(n.too_deep_at, None);
        let deep = "[".repeat(10);
        assert_eq!(scan(&deep, 5).too_deep_at, Some(5));
        // Past the 16-byte blocks too.
        let long = format!("{}{}", " ".repeat(37), "(".repeat(40));
        assert_eq!(scan(&long, 39).too_deep_at, Some(37 + 39));
        // `>=` closes nothing: it cannot hide depth from the scan.
        assert_eq!(scan("<>=<>=<>=<", 3).too_deep_at, Some(9));
        // An unterminated string or a trailing backslash ends the scan.
        assert_eq!(scan("(\"abc\\", 5).max_depth, 1);
        assert_eq!(scan("(\"abc", 5).max_depth, 1);
        // Nor can closers of another kind (content of a dialect body).
        assert_eq!(scan("#a<))))<))))<))))<", 3).too_deep_at, Some(17));
    }

    #[test]
    fn the_block_mask_finds_every_interesting_byte() {
        let all: Vec<u8> = (0..=255u8).collect();
        for chunk in all.chunks(16) {
            let mut want = 0u32;
            for (k, b) in chunk.iter().enumerate() {
                if b"()[]{}<>\"/".contains(b) {
                    want |= 1 << k;
                }
            }
            #[cfg(target_arch = "x86_64")]
            assert_eq!(interesting_mask(chunk), want, "{chunk:?}");
        }
    }
}
