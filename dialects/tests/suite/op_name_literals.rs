//! Lint: an op's name is spelled only in its declaration (issue 19).
//!
//! Knowledge about an op lives with the op: passes, lowering and the runtime
//! find an op by its typed handle (`Conv2d::is(op)`, `Conv2d::matches(body,
//! op)`, `Conv2d::NAME` where a name is needed) or ask its interfaces, never by
//! spelling `"graph.conv2d"`. This test lexes every Rust source of the
//! workspace and fails on a string literal that is exactly the name of a
//! registered op, outside:
//! - `def_op!` invocations (the declarations) and the dialects' own sources
//!   (`dialects/src`, where the declarations and their helpers live);
//! - the importers' name tables (`frontends/src`: ONNX/TF/MLIR op names map
//!   to ge op names there);
//! - tests: `tests/`, `benches/`, lit tests and `#[cfg(test)]` items.
//!
//! It fails as it should: with `let _ = "graph.conv2d";` planted in
//! lowering/src/cost.rs it reported `lowering/src/cost.rs:31: "graph.conv2d"`
//! (tried once); the `scanner_*` tests pin what the scanner sees and skips.

use proc_macro2::{Delimiter, Literal, TokenStream, TokenTree};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Source trees where op names may be spelled, and why.
const EXEMPT_DIRS: &[(&str, &str)] = &[
    ("dialects/src", "the op declarations and their helpers"),
    (
        "frontends/src",
        "the importers' name tables (ONNX, TF, MLIR → ge ops)",
    ),
    (
        "capi/src/es_ops.rs",
        "the C ES functions, generated from the op declarations by ge-capi-gen \
         (capi's generated_files_are_up_to_date fails when it is not current)",
    ),
    (
        "capi/src/tests.rs",
        "the C API's unit tests (a #[cfg(test)] module in a file of its own)",
    ),
    (
        "capi/src/tests_tf_trace.rs",
        "the C API's TensorFlow and trace unit tests (a #[cfg(test)] module in a file of its own)",
    ),
];

/// Directories never scanned: build output, tools' environments, and test code.
const SKIP_DIRS: &[&str] = &[
    "target",
    ".git",
    ".venv",
    "tests",
    "benches",
    "examples",
    "lit-tests",
    "testdata",
];

#[derive(Debug, PartialEq)]
struct Hit {
    line: usize,
    name: String,
}

/// The content of a plain string literal (`"…"` without escapes), if it is one.
fn plain_str(l: &Literal) -> Option<String> {
    let s = l.to_string();
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('\\')).then(|| inner.to_string())
}

fn is_cfg_test(attr: &proc_macro2::Group) -> bool {
    attr.delimiter() == Delimiter::Bracket
        && attr.stream().to_string().replace(' ', "") == "cfg(test)"
}

/// Op-name literals in one file.
fn scan(text: &str, names: &HashSet<String>) -> Result<Vec<Hit>, String> {
    let tokens = TokenStream::from_str(text).map_err(|e| format!("does not lex: {e}"))?;
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    if let [TokenTree::Punct(h), TokenTree::Punct(b), TokenTree::Group(g), ..] = tts.as_slice() {
        if h.as_char() == '#' && b.as_char() == '!' && is_cfg_test(g) {
            return Ok(vec![]);
        }
    }
    let mut hits = vec![];
    walk(&tts, names, &mut hits);
    Ok(hits)
}

fn walk(tts: &[TokenTree], names: &HashSet<String>, hits: &mut Vec<Hit>) {
    let mut i = 0;
    while i < tts.len() {
        match &tts[i] {
            // `#[cfg(test)] item`: skip the item.
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = tts.get(i + 1) {
                    if is_cfg_test(g) {
                        i = skip_item(tts, i + 2);
                        continue;
                    }
                }
            }
            // `def_op! { … }`: a declaration.
            TokenTree::Ident(id) if id == "def_op" => {
                if matches!(tts.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!') {
                    i += 3;
                    continue;
                }
            }
            TokenTree::Group(g) => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                walk(&inner, names, hits);
            }
            TokenTree::Literal(l) => {
                if let Some(s) = plain_str(l).filter(|s| names.contains(s)) {
                    hits.push(Hit {
                        line: l.span().start().line,
                        name: s,
                    });
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// Skip the item after a `#[cfg(test)]` (from `start`): up to and including
/// its `{ … }` body or its `;`.
fn skip_item(tts: &[TokenTree], start: usize) -> usize {
    let mut i = start;
    while i < tts.len() {
        match &tts[i] {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => return i + 1,
            TokenTree::Punct(p) if p.as_char() == ';' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if !SKIP_DIRS.iter().any(|s| name == *s) {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn op_names() -> HashSet<String> {
    ge_dialects::context()
        .ops()
        .into_iter()
        .map(|d| d.name.to_string())
        .collect()
}

#[test]
fn op_names_are_spelled_only_in_their_declarations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let names = op_names();
    assert!(names.contains("graph.conv2d") && names.contains("builtin.module"));
    let mut files = vec![];
    rust_files(&root, &mut files);
    files.sort();
    // Not a test that passes because it saw nothing: the former name tables are scanned.
    for must in [
        "lowering/src/engines.rs",
        "lowering/src/precision.rs",
        "runtime/src/kernels/mod.rs",
        "rewrites/src/eqsat/cost.rs",
    ] {
        assert!(
            files.iter().any(|f| f.ends_with(must)),
            "{must} not found under {}",
            root.display()
        );
    }
    let mut found = vec![];
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap_or(f);
        let rel_s = rel.to_string_lossy().replace('\\', "/");
        if EXEMPT_DIRS.iter().any(|(d, _)| rel_s.starts_with(d)) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let hits = scan(&text, &names).unwrap_or_else(|e| panic!("{rel_s}: {e}"));
        for h in hits {
            found.push(format!("{rel_s}:{}: \"{}\"", h.line, h.name));
        }
    }
    assert!(
        found.is_empty(),
        "op names spelled outside their declarations (use the op's typed handle: \
         `Op::is(d)`, `Op::matches(body, op)`, `Op::NAME`, or ask an op interface):\n{}",
        found.join("\n")
    );
}

#[test]
fn scanner_finds_op_names_and_skips_declarations_and_tests() {
    let names: HashSet<String> = ["graph.relu".to_string()].into_iter().collect();
    let text = "fn f(n: &str) -> bool {\n\
                    n == \"graph.relu\" || n == \"graph.relux\"\n\
                }\n\
                /// \"graph.relu\" in a doc comment is prose\n\
                def_op! { pub Relu = \"graph.relu\" {} }\n\
                #[cfg(test)]\n\
                mod tests { const X: &str = \"graph.relu\"; }\n\
                const Y: &[&str] = &[\"graph.relu\"];\n";
    let hits = scan(text, &names).unwrap();
    let got: Vec<usize> = hits.iter().map(|h| h.line).collect();
    assert_eq!(got, [2, 8]);
}

#[test]
fn scanner_skips_test_files() {
    let names: HashSet<String> = ["graph.relu".to_string()].into_iter().collect();
    let text = "#![cfg(test)]\nconst X: &str = \"graph.relu\";\n";
    assert!(scan(text, &names).unwrap().is_empty());
}
