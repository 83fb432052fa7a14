//! The fast path for op segments: a byte-dispatched lexer producing exactly
//! the items the pest rules `op_segment` / `op_continue` would (air.pest stays
//! the definition of the language). Simple tokens — SSA values, punctuation,
//! keywords, numbers, strings, cached types — are read here; anything richer
//! (attribute dictionaries, `dense<…>`, `#dialect` attributes, locations,
//! uncached types) is handed to the pest rule for that one item. A parse
//! with the fast path must equal a parse without it; `set_fast_lexer(false)`
//! turns it off so tests can compare the two.

use super::*;
use std::sync::atomic::{AtomicBool, Ordering};

static FAST_LEXER: AtomicBool = AtomicBool::new(true);

/// Use the hand-written segment lexer (default) or pest alone (for differential tests).
pub fn set_fast_lexer(on: bool) {
    FAST_LEXER.store(on, Ordering::Relaxed);
}

pub(super) fn fast_lexer() -> bool {
    FAST_LEXER.load(Ordering::Relaxed)
}

/// What the first segment of an op starts with.
pub(super) struct Head<'s> {
    pub results: Vec<(&'s str, u32, Range<usize>)>,
    /// Name text (unescaped for strings), whether it was a string (generic form), span.
    pub name: (std::borrow::Cow<'s, str>, bool, Range<usize>),
}

fn is_id_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'.'
}

fn is_suffix_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'$' | b'.' | b'_' | b'-')
}

/// Length of a `suffix-id` at the start of `s` (0 if none).
fn suffix_id_len(s: &[u8]) -> usize {
    match s.first() {
        Some(c) if c.is_ascii_digit() => s.iter().take_while(|c| c.is_ascii_digit()).count(),
        Some(&c) if c.is_ascii_alphabetic() || matches!(c, b'$' | b'.' | b'_' | b'-') => {
            1 + s[1..].iter().take_while(|&&c| is_suffix_char(c)).count()
        }
        _ => 0,
    }
}

/// Length of a `bare-id` at the start of `s` (0 if none).
fn bare_id_len(s: &[u8]) -> usize {
    match s.first() {
        Some(&c) if c.is_ascii_alphabetic() || c == b'_' => {
            1 + s[1..].iter().take_while(|&&c| is_id_char(c)).count()
        }
        _ => 0,
    }
}

/// Length of a string literal at the start of `s` (0 if unterminated or none).
pub(crate) fn string_len(s: &[u8]) -> usize {
    if s.first() != Some(&b'"') {
        return 0;
    }
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'\\' if i + 1 < s.len() => i += 2,
            b'"' => return i + 1,
            b'\n' => return 0,
            _ => i += 1,
        }
    }
    0
}

/// Skip whitespace and `//` comments (pest's implicit WHITESPACE/COMMENT).
pub(super) fn skip(s: &[u8], mut i: usize) -> usize {
    loop {
        while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\r' | b'\n') {
            i += 1;
        }
        if s[i..].starts_with(b"//") {
            while i < s.len() && s[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        return i;
    }
}

/// Length of `%name[:N]` (a result group) at `s`, 0 if none.
fn result_group_len(s: &[u8]) -> usize {
    if s.first() != Some(&b'%') {
        return 0;
    }
    let n = suffix_id_len(&s[1..]);
    if n == 0 {
        return 0;
    }
    let mut i = 1 + n;
    if s.get(i) == Some(&b':') && s.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
        i += 1 + s[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
    }
    i
}

/// `op_results`: `%a, %b:2 =` — returns the length if present.
fn op_results_len(s: &[u8]) -> usize {
    let mut i = 0;
    loop {
        let g = result_group_len(&s[i..]);
        if g == 0 {
            return 0;
        }
        i = skip(s, i + g);
        match s.get(i) {
            Some(b',') => i = skip(s, i + 1),
            Some(b'=') => return i + 1,
            _ => return 0,
        }
    }
}

/// `block_label`: `^bb(%a: T, …):` (not `::`) — whether one starts at `s`.
fn is_block_label(s: &[u8]) -> bool {
    if s.first() != Some(&b'^') {
        return false;
    }
    let n = suffix_id_len(&s[1..]);
    if n == 0 {
        return false;
    }
    let mut i = skip(s, 1 + n);
    if s.get(i) == Some(&b'(') {
        // Balanced parentheses, skipping strings.
        let mut depth = 0usize;
        while i < s.len() {
            match s[i] {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                b'"' => {
                    let l = string_len(&s[i..]);
                    if l == 0 {
                        return false;
                    }
                    i += l - 1;
                }
                _ => {}
            }
            i += 1;
        }
        i = skip(s, i);
    }
    s.get(i) == Some(&b':') && s.get(i + 1) != Some(&b':')
}

/// Whether the next op (or block) starts at `s` (the grammar's `op_boundary`).
fn at_boundary(s: &[u8]) -> bool {
    match s.first() {
        Some(b'%') => op_results_len(s) > 0,
        Some(b'^') => is_block_label(s),
        Some(b'"') => {
            let l = string_len(s);
            l > 0 && s.get(skip(s, l)) == Some(&b'(')
        }
        Some(&c) if c.is_ascii_alphabetic() || c == b'_' => {
            // bare_id_dotted, or `module`
            let n = s[1..]
                .iter()
                .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$')
                .count()
                + 1;
            if s.get(n) == Some(&b'.') {
                return true;
            }
            s.starts_with(b"module") && !s.get(6).is_some_and(|&c| is_id_char(c))
        }
        // An alias definition (mlir-opt puts location aliases after the module).
        Some(b'#' | b'!') => is_alias_def(s),
        _ => false,
    }
}

/// Extent of `tensor<…>` from `s` (which starts with `tensor`), balancing `<>`.
fn tensor_type_len(s: &[u8]) -> usize {
    let mut i = skip(s, 6);
    if s.get(i) != Some(&b'<') {
        return 0;
    }
    let mut depth = 0usize;
    while i < s.len() {
        match s[i] {
            b'<' => depth += 1,
            b'>' => {
                // `->` inside an attribute (function type) does not close.
                if i > 0 && s[i - 1] == b'-' {
                    i += 1;
                    continue;
                }
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b'"' => {
                let l = string_len(&s[i..]);
                if l == 0 {
                    return 0;
                }
                i += l;
                continue;
            }
            b'\n' | b'{' | b'}' => return 0,
            _ => {}
        }
        i += 1;
    }
    0
}

/// Whether `{…` at `s` can start an attribute dictionary: `{}` or a key
/// (bare id or string) followed by `=`, `,` or `}`.
fn looks_like_dict(s: &[u8]) -> bool {
    let i = skip(s, 1);
    match s.get(i) {
        Some(b'}') => true,
        Some(b'"') => {
            let l = string_len(&s[i..]);
            l > 0 && matches!(s.get(skip(s, i + l)), Some(b'=' | b',' | b'}'))
        }
        Some(_) => {
            let l = bare_id_len(&s[i..]);
            l > 0 && matches!(s.get(skip(s, i + l)), Some(b'=' | b',' | b'}'))
        }
        None => false,
    }
}

fn scalar_type_name(word: &str) -> bool {
    let b = word.as_bytes();
    let digits_after = |k: usize| b.len() > k && b[k..].iter().all(|c| c.is_ascii_digit());
    matches!(word, "bf16" | "index")
        || (word.starts_with("si") && digits_after(2))
        || (word.starts_with("ui") && digits_after(2))
        || (b
            .first()
            .is_some_and(|&c| c == b'u' || c == b'i' || c == b'f')
            && digits_after(1))
}

impl<'c, 's> Parser<'c, 's> {
    /// Run one pest item rule at `at`; `None` if it does not match there.
    fn pest_item(&mut self, rule: Rule, at: usize) -> PResult<Option<(Item<'s>, usize)>> {
        let text = &self.src[at..];
        let res = run_pest(self.shallow, rule, text);
        match res {
            Ok(mut pairs) => match pairs.next() {
                Some(p) => {
                    let end = at + p.as_span().end();
                    let item = self.build_item(p, at)?;
                    Ok(Some((item, end)))
                }
                None => Ok(None),
            },
            Err(_) => Ok(None),
        }
    }

    /// The results and name at the start of an op (`None`: let pest report the error).
    pub(super) fn lex_head(&mut self) -> Option<Head<'s>> {
        let s = self.src.as_bytes();
        let start = self.pos;
        let mut results = vec![];
        let mut i = start;
        let rl = op_results_len(&s[start..]);
        if rl > 0 {
            let end = start + rl;
            while i < end {
                let g = result_group_len(&s[i..]);
                if g == 0 {
                    break;
                }
                let text = &self.src[i..i + g];
                let (name, count) = match text.split_once(':') {
                    Some((n, c)) => (n, c.parse::<u32>().ok()?),
                    None => (text, 1),
                };
                if count == 0 {
                    return None;
                }
                results.push((name, count, i..i + g));
                i = skip(s, i + g);
                if s.get(i) == Some(&b',') {
                    i = skip(s, i + 1);
                }
            }
            i = skip(s, end);
        }
        let name = if s.get(i) == Some(&b'"') {
            let l = string_len(&s[i..]);
            if l == 0 {
                return None;
            }
            (
                // Not UTF-8: left to the grammar's path, which reports it.
                std::borrow::Cow::Owned(unescape(&self.src[i + 1..i + l - 1])?),
                true,
                i..i + l,
            )
        } else {
            let l = bare_id_len(&s[i..]);
            if l == 0 {
                return None;
            }
            (
                std::borrow::Cow::Borrowed(&self.src[i..i + l]),
                false,
                i..i + l,
            )
        };
        self.pos = name.2.end;
        Some(Head { results, name })
    }

    /// Items from `pos` to the end of the segment (the `item*` of the grammar).
    pub(super) fn lex_items(&mut self, items: &mut Vec<Item<'s>>) -> PResult<()> {
        let s = self.src.as_bytes();
        loop {
            let i = skip(s, self.pos);
            if i >= s.len() || at_boundary(&s[i..]) {
                return Ok(());
            }
            let c = s[i];
            let rest = &s[i..];
            let simple = |kind: ItemKind<'s>, len: usize| {
                Some((
                    Item {
                        kind,
                        span: i..i + len,
                    },
                    i + len,
                ))
            };
            let got: Option<(Item<'s>, usize)> = match c {
                b'%' => {
                    let n = suffix_id_len(&rest[1..]);
                    if n == 0 {
                        None
                    } else {
                        let name = &self.src[i..i + 1 + n];
                        let mut len = 1 + n;
                        let mut index = 0;
                        if rest.get(len) == Some(&b'#')
                            && rest.get(len + 1).is_some_and(|c| c.is_ascii_digit())
                        {
                            let d = rest[len + 1..]
                                .iter()
                                .take_while(|c| c.is_ascii_digit())
                                .count();
                            match self.src[i + len + 1..i + len + 1 + d].parse() {
                                Ok(x) => index = x,
                                Err(_) => {
                                    return Err(
                                        self.err(i..i + len + 1 + d, "invalid result number")
                                    )
                                }
                            }
                            len += 1 + d;
                        }
                        simple(ItemKind::Value { name, index }, len)
                    }
                }
                b'^' => {
                    let n = suffix_id_len(&rest[1..]);
                    if n == 0 {
                        None
                    } else {
                        simple(ItemKind::Caret(&self.src[i..i + 1 + n]), 1 + n)
                    }
                }
                b'@' => self.pest_item(Rule::symbol_ref, i)?,
                b'{' => {
                    // Region bodies start with `{` too; only a dictionary-looking
                    // start goes to pest (a failed pest parse is costly: its error
                    // scans the input for line numbers).
                    if looks_like_dict(rest) {
                        self.pest_item(Rule::dict_attr, i)?
                    } else {
                        None
                    }
                }
                b'#' => self.pest_item(Rule::hash_attr, i)?,
                b'!' => self.pest_item(Rule::simple_type, i)?,
                b'"' => {
                    let l = string_len(rest);
                    if l == 0 {
                        None
                    } else {
                        // Not UTF-8: left to the grammar's path, which reports it.
                        unescape(&self.src[i + 1..i + l - 1])
                            .and_then(|s| simple(ItemKind::Str(s), l))
                    }
                }
                b'0'..=b'9' | b'-' => {
                    if rest.starts_with(b"->") {
                        simple(ItemKind::Punct("->"), 2)
                    } else {
                        self.lex_number(i)?
                    }
                }
                b'(' | b')' | b'[' | b']' | b'<' | b'>' | b',' | b'=' | b'*' | b'+' | b'?'
                | b'|' => simple(ItemKind::Punct(&self.src[i..i + 1]), 1),
                b':' => {
                    if rest.starts_with(b"::") {
                        simple(ItemKind::Punct("::"), 2)
                    } else {
                        simple(ItemKind::Punct(":"), 1)
                    }
                }
                b'.' if rest.starts_with(b"...") => simple(ItemKind::Punct("..."), 3),
                c if c.is_ascii_alphabetic() || c == b'_' => self.lex_word(i)?,
                _ => None,
            };
            match got {
                Some((item, end)) => {
                    items.push(item);
                    self.pos = end;
                }
                None => return Ok(()),
            }
        }
    }

    /// `float | integer` at `i` (a `-` not followed by a digit is not a number).
    fn lex_number(&mut self, i: usize) -> PResult<Option<(Item<'s>, usize)>> {
        let s = self.src.as_bytes();
        let mut j = i;
        if s[j] == b'-' {
            j += 1;
        }
        let digits = s[j..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return Ok(None);
        }
        let mut k = j + digits;
        let hex = s[j] == b'0' && s.get(j + 1) == Some(&b'x');
        if !hex && s.get(k) == Some(&b'.') {
            // float: digits '.' digits* exponent?
            k += 1;
            k += s[k..].iter().take_while(|c| c.is_ascii_digit()).count();
            if matches!(s.get(k), Some(b'e' | b'E')) {
                let mut e = k + 1;
                if matches!(s.get(e), Some(b'+' | b'-')) {
                    e += 1;
                }
                let ed = s[e..].iter().take_while(|c| c.is_ascii_digit()).count();
                if ed > 0 {
                    k = e + ed;
                }
            }
            let text = &self.src[i..k];
            let v = parse_float(text).ok_or_else(|| self.err(i..k, "invalid float literal"))?;
            return Ok(Some((
                Item {
                    kind: ItemKind::Float(v),
                    span: i..k,
                },
                k,
            )));
        }
        if hex {
            let h = s[j + 2..]
                .iter()
                .take_while(|c| c.is_ascii_hexdigit())
                .count();
            if h == 0 {
                return Ok(None);
            }
            k = j + 2 + h;
        }
        if s.get(k).is_some_and(|&c| is_id_char(c)) {
            // `4x` is not an integer token (the grammar's `!id_char`).
            return Ok(None);
        }
        let text = &self.src[i..k];
        let v = parse_int(text).ok_or_else(|| self.err(i..k, "integer literal out of range"))?;
        Ok(Some((
            Item {
                kind: ItemKind::Int(v),
                span: i..k,
            },
            k,
        )))
    }

    /// A word: a location, attribute literal, type or keyword (in the grammar's order).
    fn lex_word(&mut self, i: usize) -> PResult<Option<(Item<'s>, usize)>> {
        let s = self.src.as_bytes();
        let n = bare_id_len(&s[i..]);
        let word = &self.src[i..i + n];
        let next = s.get(skip(s, i + n)).copied();
        match word {
            "loc" if next == Some(b'(') => {
                if let Some(r) = self.pest_item(Rule::location, i)? {
                    return Ok(Some(r));
                }
            }
            "dense" | "dense_resource" if next == Some(b'<') => {
                let rule = if word == "dense" {
                    Rule::dense_attr
                } else {
                    Rule::dense_resource_attr
                };
                if let Some(r) = self.pest_item(rule, i)? {
                    return Ok(Some(r));
                }
            }
            "memref" | "vector" | "complex" | "tuple" if next == Some(b'<') => {
                if let Some(r) = self.pest_item(Rule::simple_type, i)? {
                    return Ok(Some(r));
                }
            }
            "sparse" if next == Some(b'<') => {
                if let Some(r) = self.pest_item(Rule::sparse_attr, i)? {
                    return Ok(Some(r));
                }
            }
            "array" if next == Some(b'<') => {
                if let Some(r) = self.pest_item(Rule::dense_array_attr, i)? {
                    return Ok(Some(r));
                }
            }
            "tensor" if next == Some(b'<') => {
                let l = tensor_type_len(&s[i..]);
                if l > 0 {
                    let text = &self.src[i..i + l];
                    if let Some(&t) = self.type_cache.get(text) {
                        return Ok(Some((
                            Item {
                                kind: ItemKind::Type(t),
                                span: i..i + l,
                            },
                            i + l,
                        )));
                    }
                }
                if let Some(r) = self.pest_item(Rule::simple_type, i)? {
                    return Ok(Some(r));
                }
            }
            "none" => {
                return Ok(Some((
                    Item {
                        kind: ItemKind::Type(Type::none()),
                        span: i..i + n,
                    },
                    i + n,
                )))
            }
            "tf32" | "f8E4M3B11FNUZ" | "f8E4M3FNUZ" | "f8E5M2FNUZ" | "f8E8M0FNU" | "f8E4M3FN"
            | "f8E4M3" | "f8E5M2" | "f8E3M4" | "f6E2M3FN" | "f6E3M2FN" | "f4E2M1FN" => {
                if let Some(r) = self.pest_item(Rule::simple_type, i)? {
                    return Ok(Some(r));
                }
            }
            w if scalar_type_name(w) => {
                if let Some(&t) = self.type_cache.get(w) {
                    return Ok(Some((
                        Item {
                            kind: ItemKind::Type(t),
                            span: i..i + n,
                        },
                        i + n,
                    )));
                }
                if let Some(r) = self.pest_item(Rule::simple_type, i)? {
                    return Ok(Some(r));
                }
            }
            _ => {}
        }
        Ok(Some((
            Item {
                kind: ItemKind::Keyword(word),
                span: i..i + n,
            },
            i + n,
        )))
    }
}

/// `#name =` or `!name =`: a top-level alias definition.
pub(super) fn is_alias_def(s: &[u8]) -> bool {
    if !matches!(s.first(), Some(b'#' | b'!')) {
        return false;
    }
    let n = suffix_id_len(&s[1..]);
    n > 0 && s.get(skip(s, 1 + n)) == Some(&b'=')
}

/// Bytes that open or close a bracket, start a string or a comment.
static NESTING_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut k = 0;
    let set = b"()[]{}<>\"/";
    while k < set.len() {
        t[set[k] as usize] = true;
        k += 1;
    }
    t
};

/// Where the op whose name ends at `from` probably ends: the start of the next
/// token at bracket depth 0 that begins an op or block, closes the enclosing
/// region (`}`), or is the end of input. A lexical guess (strings, comments and
/// `()[]{}<>` nesting only) for splitting a module into independently parsed
/// ops: callers check it against the real parse. `None` if the text is
/// unbalanced or a string is unterminated.
pub(super) fn op_end_guess(s: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = from;
    while i < s.len() {
        if depth > 0 {
            // Inside brackets only brackets, strings and comments matter.
            while i < s.len() && !NESTING_BYTE[s[i] as usize] {
                i += 1;
            }
            if i == s.len() {
                break;
            }
        }
        match s[i] {
            b' ' | b'\t' | b'\r' | b'\n' | b'/' => {
                let j = skip(s, i);
                if j == i {
                    // A lone '/' (not a comment).
                    i += 1;
                    continue;
                }
                i = j;
                if depth == 0
                    && (i == s.len()
                        || s[i] == b'}'
                        || at_boundary(&s[i..])
                        || s[i..].starts_with(b"{-#")
                        || is_alias_def(&s[i..]))
                {
                    return Some(i);
                }
                continue;
            }
            _ => i = nesting_step(s, i, &mut depth)?,
        }
    }
    (depth == 0).then_some(i)
}

/// One step of bracket matching at `s[i]`: a string is skipped whole,
/// `([{<` and `)]}>` (not the `>` of `->`) counted in `depth`. The next
/// offset; `None` for an unterminated string or a close without an open.
pub(super) fn nesting_step(s: &[u8], i: usize, depth: &mut usize) -> Option<usize> {
    match s[i] {
        b'"' => match string_len(&s[i..]) {
            0 => None,
            l => Some(i + l),
        },
        b'(' | b'[' | b'{' | b'<' => {
            *depth += 1;
            Some(i + 1)
        }
        b'>' if i > 0 && s[i - 1] == b'-' => Some(i + 1),
        b')' | b']' | b'}' | b'>' => {
            *depth = depth.checked_sub(1)?;
            Some(i + 1)
        }
        _ => Some(i + 1),
    }
}

/// The next op from `at` on that can be parsed on its own, as a byte range
/// (from its first token to the next op's): an op without results, in custom
/// form or in generic form with no operands, whose name `independent` accepts
/// (isolated from above, no operands). `None` at anything else: another op, the end of the region, an
/// alias or resource section.
pub(super) fn next_independent<'a>(
    s: &'a [u8],
    at: usize,
    independent: &mut impl FnMut(&'a str) -> bool,
) -> Option<Range<usize>> {
    let at = skip(s, at);
    // Custom form `name ...`, or generic form `"name"() ...` without operands.
    let (name, after) = match s.get(at) {
        Some(b'"') => {
            let l = string_len(&s[at..]);
            let name = s.get(at + 1..(at + l).saturating_sub(1))?;
            let open = skip(s, at + l);
            if l < 2 || name.contains(&b'\\') || s.get(open) != Some(&b'(') {
                return None;
            }
            let close = skip(s, open + 1);
            (name, (s.get(close) == Some(&b')')).then_some(close + 1)?)
        }
        _ => {
            let n = bare_id_len(&s[at..]);
            (&s[at..at + n], at + n)
        }
    };
    let name = std::str::from_utf8(name).ok()?;
    if name.is_empty() || !independent(name) {
        return None;
    }
    op_end_guess(s, after).map(|end| at..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_match_the_grammar() {
        assert!(at_boundary(b"%0 = graph.add"));
        assert!(at_boundary(b"%x:2, %y = \"a.b\"()"));
        assert!(!at_boundary(b"%0, %1 : tensor<4xf32>"));
        assert!(at_boundary(b"^bb1(%a: f32):"));
        assert!(!at_boundary(b"^bb1, ^bb2]"));
        assert!(at_boundary(b"graph.relu %0"));
        assert!(at_boundary(b"\"x.y\"() : () -> ()"));
        assert!(!at_boundary(b"\"AICore\" ins(%a)"));
        assert!(at_boundary(b"module {"));
        assert!(!at_boundary(b"modules"));
    }

    #[test]
    fn tensor_types_balance_angle_brackets() {
        let t = b"tensor<4x?xf16, #ge.format<NC1HWC0, origin = NCHW>> : x";
        assert_eq!(tensor_type_len(t), t.len() - 4);
        assert_eq!(tensor_type_len(b"tensor<4xf32"), 0);
    }

    #[test]
    fn op_ends_are_guessed_at_the_next_op_or_region_end() {
        let m = b"t.f @a(%x: tensor<4xf32>) -> tensor<4xf32> attributes {d = \"} {\"} {\n  %0 = g.h {a = 1} : () -> ()\n}\n  // c } {\n  t.f @b() {\n}\n}";
        let second = m.windows(6).position(|w| w == b"t.f @b").unwrap();
        assert_eq!(op_end_guess(m, 3), Some(second));
        let last = m.len() - 1;
        assert_eq!(op_end_guess(m, second + 3), Some(last));
        // Unbalanced or unterminated text: no guess.
        assert_eq!(op_end_guess(b" @a() { ", 0), None);
        assert_eq!(op_end_guess(b" @a() ))", 0), None);
        assert_eq!(op_end_guess(b" @a() { \"x", 0), None);
        // Aliases and resource sections end a run.
        assert_eq!(op_end_guess(b" @a() {}\n!t = f32", 0), Some(9));
        assert_eq!(op_end_guess(b" @a() {}\n{-# x #-}", 0), Some(9));
    }

    #[test]
    fn independent_ops_need_no_results_and_no_operands() {
        let yes = &mut |n: &str| n == "f";
        assert_eq!(next_independent(b"  f @a() {}\n", 0, yes), Some(2..12));
        assert_eq!(
            next_independent(b"\"f\"() ({}) : () -> ()", 0, yes).map(|r| r.start),
            Some(0)
        );
        assert_eq!(next_independent(b"\"f\"(%x) ({})", 0, yes), None);
        assert_eq!(next_independent(b"%0 = f @a() {}", 0, yes), None);
        assert_eq!(next_independent(b"g @a() {}", 0, yes), None);
    }
}
