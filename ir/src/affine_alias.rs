//! The generic form's `#map` and `#set` aliases.
//!
//! ge keeps affine maps and sets as written (`AttrData::Verbatim`, and inside
//! verbatim types such as `memref<4xf32, affine_map<(d0) -> (d0 + 1)>>`).
//! mlir-opt names every distinct one `#map`, `#map1`, … (`#set`, …) in the
//! order its printer meets them, defines the aliases above the module, and
//! writes the names in their place; the generic form does the same so that
//! its text is mlir-opt's.

use crate::attributes::{walk_nested, AttrData, Nested as Visit};
use crate::body::{Body, OpId};
use crate::module::Module;
use crate::types::TypeData;
use rustc_hash::FxHashMap as HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a verbatim type or attribute holding an affine map or set was
/// ever made: the printer looks for them only then.
static SEEN: AtomicBool = AtomicBool::new(false);

/// Note the text of a new verbatim type or attribute.
pub fn note_verbatim(text: &str) {
    if !find(text).is_empty() {
        SEEN.store(true, Ordering::Relaxed);
    }
}

/// `affine_map<…>` and `affine_set<…>` in `text`: their byte ranges and the
/// alias prefix (`map`, `set`).
pub fn find(text: &str) -> Vec<(Range<usize>, &'static str)> {
    let b = text.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' {
            i += crate::parser::lex::string_len(&b[i..]).max(1);
            continue;
        }
        let word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        let kind = if !word_start {
            None
        } else if b[i..].starts_with(b"affine_map<") {
            Some("map")
        } else if b[i..].starts_with(b"affine_set<") {
            Some("set")
        } else {
            None
        };
        if let Some(kind) = kind {
            let open = i + "affine_map".len();
            if let Some(end) = closing_angle(b, open) {
                out.push((i..end, kind));
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The end (after `>`) of the `<…>` opening at `open`; `->` and `>=` close nothing.
fn closing_angle(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'"' => i += crate::parser::lex::string_len(&b[i..]).max(1) - 1,
            b'<' => depth += 1,
            b'>' if (i > 0 && b[i - 1] == b'-') || b.get(i + 1) == Some(&b'=') => {}
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The aliases of one printed module.
pub struct AffineAliases {
    /// An affine map's or set's text → its alias (`#map2`).
    by_text: HashMap<Box<str>, Box<str>>,
    /// Definitions in the order they are printed: maps, then sets.
    defs: Vec<(Box<str>, Box<str>)>,
}

impl AffineAliases {
    /// Aliases for the generic form of `m`, or `None` if it has no affine
    /// map or set.
    pub fn collect(m: &Module) -> Option<AffineAliases> {
        if !SEEN.load(Ordering::Relaxed) {
            return None;
        }
        let mut found: Vec<(&'static str, Box<str>)> = vec![];
        let mut known: HashMap<Box<str>, ()> = HashMap::default();
        let mut note_text = |text: &str| {
            for (r, kind) in find(text) {
                let t: Box<str> = text[r].into();
                if known.insert(t.clone(), ()).is_none() {
                    found.push((kind, t));
                }
            }
        };
        for_each_in_print_order(&m.outer, m.op, &mut |item| visit(item, &mut note_text));
        if found.is_empty() {
            return None;
        }
        let mut by_text = HashMap::default();
        let mut defs = vec![];
        for prefix in ["map", "set"] {
            for (n, (_, text)) in found.iter().filter(|(k, _)| *k == prefix).enumerate() {
                let name: Box<str> = if n == 0 {
                    format!("#{prefix}").into()
                } else {
                    format!("#{prefix}{n}").into()
                };
                by_text.insert(text.clone(), name.clone());
                defs.push((name, text.clone()));
            }
        }
        Some(AffineAliases { by_text, defs })
    }

    /// `#map = affine_map<…>` lines.
    pub fn write_defs(&self, out: &mut String) {
        for (name, text) in &self.defs {
            out.push_str(name);
            out.push_str(" = ");
            out.push_str(text);
            out.push('\n');
        }
    }

    /// `text` with every affine map and set written as its alias.
    pub fn write_substituted(&self, f: &mut dyn fmt::Write, text: &str) -> fmt::Result {
        let mut at = 0;
        for (r, _) in find(text) {
            if let Some(alias) = self.by_text.get(&text[r.clone()]) {
                f.write_str(&text[at..r.start])?;
                f.write_str(alias)?;
                at = r.end;
            }
        }
        f.write_str(&text[at..])
    }
}

/// Every attribute and type the generic form of `op` (in `body`) prints, in
/// the order it prints them: per op its properties, what is nested in its
/// regions (block argument types, then the ops), its attributes, then its
/// operand and result types.
fn for_each_in_print_order(body: &Body, op: OpId, f: &mut dyn FnMut(Visit)) {
    enum Step<'a> {
        Op(&'a Body, OpId),
        Tail(&'a Body, OpId),
    }
    let mut stack = vec![Step::Op(body, op)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Tail(b, o) => {
                let (_, rest) = crate::printer::split_properties(b.op(o));
                rest.entries().iter().for_each(|(_, a)| f(Visit::Attr(*a)));
                let d = b.op(o);
                d.operands()
                    .iter()
                    .chain(d.results())
                    .for_each(|&v| f(Visit::Type(b.value_type(v))));
            }
            Step::Op(b, o) => {
                let d = b.op(o);
                if let (Some(p), _) = crate::printer::split_properties(d) {
                    f(Visit::Attr(p));
                }
                stack.push(Step::Tail(b, o));
                let rb = d.region_body(b);
                let mut nested = vec![];
                for &r in d.regions() {
                    for &blk in &rb.region(r).blocks {
                        // Block labels come before the block's ops.
                        for &a in &rb.block(blk).args {
                            f(Visit::Type(rb.value_type(a)));
                        }
                        nested.extend(rb.block_ops(blk).map(|c| Step::Op(rb, c)));
                    }
                }
                stack.extend(nested.into_iter().rev());
            }
        }
    }
}

/// The texts of the verbatim types and attributes in `item`, in print order.
fn visit(item: Visit, f: &mut dyn FnMut(&str)) {
    walk_nested(item, &mut |n| match n {
        Visit::Attr(a) => {
            if let AttrData::Verbatim(text) = a.data() {
                f(text)
            }
        }
        Visit::Type(t) => {
            if let TypeData::Verbatim(text) = t.data() {
                f(text)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_and_sets_are_found_whole() {
        let t = "memref<4xf32, affine_map<(d0) -> (d0 + 1)>>, affine_set<(d0) : (d0 >= 0)>";
        let found: Vec<_> = find(t).into_iter().map(|(r, k)| (&t[r], k)).collect();
        assert_eq!(
            found,
            [
                ("affine_map<(d0) -> (d0 + 1)>", "map"),
                ("affine_set<(d0) : (d0 >= 0)>", "set")
            ]
        );
        assert!(find("my_affine_map<x>").is_empty());
        assert!(find("\"affine_map<x>\"").is_empty());
    }
}
