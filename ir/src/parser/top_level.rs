//! Cutting a module's text into its top-level ops without parsing it, so that
//! each op can be parsed on its own (incremental compilation re-parses only
//! the functions an edit touched).
//!
//! The cut is lexical ([`lex::next_independent`], as for parallel parsing)
//! and only a guess: callers parse every piece and fall back to parsing the
//! whole text when a piece does not parse as exactly one op. Only ops
//! isolated from above without operands or results qualify (functions), and
//! their only region comes last, so a piece cannot end inside an op without
//! the op failing to parse.

use super::lex;
use super::parallel::independent_op;
use crate::Context;
use std::ops::Range;

/// A module text cut into whole lines: `prefix`, then each top-level op,
/// then `suffix`; the pieces are adjacent and cover the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopLevel {
    /// Aliases and the `module … {` line (empty for a bare list of ops).
    pub prefix: Range<usize>,
    /// Each top-level op, from the start of its line to the start of the
    /// next op's line (so with its trailing comments and blank lines).
    pub ops: Vec<Range<usize>>,
    /// From the line of the module's closing `}` (or the end of the last op
    /// of a bare list) to the end of the text: resources and trailing comments.
    pub suffix: Range<usize>,
}

/// Cut `src` into top-level ops; `None` if it is not a module (custom form,
/// or a bare list of ops) whose top-level ops are all independent
/// ([`independent_op`]), each starting on its own line, with at least one op.
pub fn split_module_text(ctx: &Context, src: &str) -> Option<TopLevel> {
    let s = src.as_bytes();
    let mut at = lex::skip(s, 0);
    while lex::is_alias_def(&s[at..]) {
        at = lex::op_end_guess(s, at + 1)?;
    }
    let wrapped = s[at..].starts_with(b"module") && !s.get(at + 6).copied().is_some_and(id_char);
    let body_start = if wrapped {
        module_body_start(s, at + 6)?
    } else {
        at
    };
    let mut independent = |name: &str| independent_op(ctx, name);
    let (mut starts, mut pos) = (vec![], body_start);
    while let Some(r) = lex::next_independent(s, pos, &mut independent) {
        starts.push(r.start);
        pos = r.end;
    }
    let end = lex::skip(s, pos);
    if wrapped {
        if s.get(end) != Some(&b'}') {
            return None;
        }
        let rest = lex::skip(s, end + 1);
        if rest != s.len() && !s[rest..].starts_with(b"{-#") {
            return None;
        }
    } else if end != s.len() && !s[end..].starts_with(b"{-#") {
        return None;
    }
    if starts.is_empty() {
        return None;
    }
    // Every piece is whole lines: each op (and the closing `}`) is the first
    // token on its line.
    let mut lines = Vec::with_capacity(starts.len() + 1);
    for &p in starts.iter().chain(std::iter::once(&end)) {
        lines.push(own_line_start(s, p)?);
    }
    let ops = lines.windows(2).map(|w| w[0]..w[1]).collect();
    Some(TopLevel {
        prefix: 0..lines[0],
        ops,
        suffix: lines[starts.len()]..s.len(),
    })
}

/// [`split_module_text`] of `new`, given the cut of an earlier version
/// `old`: ops before the edited region keep their pieces, the edited region
/// is cut again until an op boundary lines up with an old one in the
/// unchanged tail, and the rest is the old cut shifted. The same result as
/// cutting `new` from scratch, in time proportional to the edit.
pub fn resplit_module_text(
    ctx: &Context,
    old: &str,
    old_top: &TopLevel,
    new: &str,
) -> Option<TopLevel> {
    resplit_with_ends(ctx, old, old_top, new, common_ends(old, new))
}

/// The lengths of the longest common prefix of `old` and `new`, and of the
/// longest common suffix of what follows it in both: the edit is
/// `old[p..old.len() - q]` replaced by `new[p..new.len() - q]`.
pub fn common_ends(old: &str, new: &str) -> (usize, usize) {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let p = common_prefix(o, n);
    let max_q = o.len().min(n.len()) - p;
    (
        p,
        common_suffix(&o[o.len() - max_q..], &n[n.len() - max_q..]),
    )
}

/// [`resplit_module_text`] with the edit's [`common_ends`] already known.
pub fn resplit_with_ends(
    ctx: &Context,
    old: &str,
    old_top: &TopLevel,
    new: &str,
    (p, q): (usize, usize),
) -> Option<TopLevel> {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    if p == o.len() && p == n.len() {
        return Some(old_top.clone());
    }
    // Edits of the prefix or suffix: cut from scratch.
    if p < old_top.prefix.end || o.len() - q > old_top.suffix.start {
        return split_module_text(ctx, new);
    }
    // Ops wholly before the op containing the first change kept their
    // pieces (their scan read nothing at or after it); cut again from the
    // op before that one.
    let k = old_top.ops.partition_point(|r| r.end <= p);
    let j = k.saturating_sub(1);
    let tail = n.len() - q;
    let mut lines: Vec<usize> = old_top.ops[..j].iter().map(|r| r.start).collect();
    let mut independent = |name: &str| independent_op(ctx, name);
    let mut pos = old_top.ops.get(j)?.start;
    while let Some(r) = lex::next_independent(n, pos, &mut independent) {
        let ls = own_line_start(n, r.start)?;
        if ls >= tail {
            // An op line in the unchanged tail where an old op began: from
            // here on the text, and so the cut, is the old one shifted.
            let old_ls = ls + o.len() - n.len();
            if let Ok(i) = old_top.ops.binary_search_by_key(&old_ls, |r| r.start) {
                let shift = |x: usize| x + n.len() - o.len();
                lines.extend(old_top.ops[i..].iter().map(|r| shift(r.start)));
                lines.push(shift(old_top.suffix.start));
                return Some(TopLevel {
                    prefix: old_top.prefix.clone(),
                    ops: lines.windows(2).map(|w| w[0]..w[1]).collect(),
                    suffix: shift(old_top.suffix.start)..n.len(),
                });
            }
        }
        lines.push(ls);
        pos = r.end;
    }
    // The edit reached the module's end: cut from scratch.
    split_module_text(ctx, new)
}

/// Length of the longest common prefix (compared a block at a time: memcmp).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 256;
    let len = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= len && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..len]
        .iter()
        .zip(&b[i..len])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Length of the longest common suffix of two equally long slices.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 256;
    let len = a.len();
    let mut i = 0;
    while i + BLOCK <= len && a[len - i - BLOCK..len - i] == b[len - i - BLOCK..len - i] {
        i += BLOCK;
    }
    i + a[..len - i]
        .iter()
        .rev()
        .zip(b[..len - i].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// `text` without its comments, every run of whitespace one space: equal for
/// texts that differ only in trivia (for keys that should survive such edits).
pub fn strip_trivia(text: &str) -> String {
    let s = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = lex::skip(s, 0);
    while i < s.len() {
        let j = lex::skip(s, i);
        if j > i {
            out.push(' ');
            i = j;
            continue;
        }
        // Copy up to the next whitespace, comment or string (strings whole).
        let start = i;
        if s[i] == b'"' {
            i += lex::string_len(&s[i..]).max(1);
        } else {
            while i < s.len()
                && !matches!(s[i], b' ' | b'\t' | b'\r' | b'\n' | b'"')
                && !s[i..].starts_with(b"//")
            {
                i += 1;
            }
        }
        out.push_str(&text[start..i]);
    }
    if out.ends_with(' ') {
        out.pop();
    }
    out
}

fn id_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.')
}

/// After `module`: skip `@name` and `attributes {…}`; the offset just after
/// the `{` that opens the body.
fn module_body_start(s: &[u8], from: usize) -> Option<usize> {
    let mut i = lex::skip(s, from);
    if s.get(i) == Some(&b'@') {
        i += 1;
        i += match s.get(i) {
            Some(b'"') => lex::string_len(&s[i..]),
            _ => s[i..]
                .iter()
                .take_while(|&&c| id_char(c) || c == b'-')
                .count(),
        };
        i = lex::skip(s, i);
    }
    if s[i..].starts_with(b"attributes") && !s.get(i + 10).copied().is_some_and(id_char) {
        i = lex::skip(s, i + 10);
        i = lex::skip(s, balanced_end(s, i)?);
    }
    (s.get(i) == Some(&b'{')).then_some(i + 1)
}

/// The end of the bracketed group starting at `s[i]` (strings skipped).
fn balanced_end(s: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i < s.len() {
        let before = depth;
        i = lex::nesting_step(s, i, &mut depth)?;
        if depth == 0 && before > 0 {
            return Some(i);
        }
    }
    None
}

/// The start of `p`'s line if only blanks precede `p` on it (the end of the
/// text counts as a line of its own).
fn own_line_start(s: &[u8], p: usize) -> Option<usize> {
    let ls = memchr::memrchr(b'\n', &s[..p]).map_or(0, |n| n + 1);
    (p == s.len() || s[ls..p].iter().all(|&c| c == b' ' || c == b'\t')).then_some(ls)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(src: &str) -> Option<Vec<&str>> {
        let t = split_module_text(&Context::new(), src)?;
        let mut v = vec![&src[t.prefix]];
        v.extend(t.ops.iter().map(|r| &src[r.clone()]));
        v.push(&src[t.suffix]);
        Some(v)
    }

    #[test]
    fn non_module_text_is_not_cut() {
        assert_eq!(pieces(""), None);
        assert_eq!(pieces("module {\n}\n"), None);
        assert_eq!(pieces("module {\n  %0 = x.y : () -> ()\n}\n"), None);
        assert_eq!(pieces("\"builtin.module\"() ({\n}) : () -> ()\n"), None);
    }

    #[test]
    fn trivia_is_stripped_outside_strings() {
        let a = "// head\nmodule attributes {s = \"a  // b\"}   {\n\n";
        assert_eq!(strip_trivia(a), "module attributes {s = \"a  // b\"} {");
        assert_eq!(strip_trivia("}\n// end\n"), "}");
        assert_eq!(strip_trivia(" \n "), "");
    }
}
