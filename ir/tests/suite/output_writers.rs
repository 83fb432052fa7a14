//! Lint: only `ge_ir::output` (ir/src/output.rs) creates or replaces files.
//!
//! Writing a temporary file and renaming it over a user's path replaced `/dev/null`
//! when run as root (issue 22); `ge_ir::output` writes a device, FIFO or link in place.
//! This test lexes every Rust source of the workspace (not tests, benches or
//! `#[cfg(test)]` items) and fails on any other call that writes a file:
//! `fs::write`, `fs::rename`, `fs::copy`, `fs::hard_link`, `File::create`,
//! `File::create_new`, `File::options`, `OpenOptions`, `MmapMut`/`map_mut`.
//! A legitimate use elsewhere goes into `ALLOWED` with the reason.
//!
//! It fails as it should: with a stray `std::fs::write(path, b"")` added to
//! driver/src/npy.rs it reported `driver/src/npy.rs:143: fs::write` (tried once);
//! the `scanner_*` tests below pin what the scanner sees and skips.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Files that may write files themselves, and why.
const ALLOWED: &[(&str, &str)] = &[
    (
        "ir/src/output.rs",
        "the output writer: its temporary file, rename and in-place opens",
    ),
    (
        "rewrites/build.rs",
        "a build script: the rule library's generated Rust into cargo's OUT_DIR, never a user's path",
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

/// `prefix :: name` paths that write a file.
const WRITING_PATHS: &[(&str, &[&str])] = &[
    ("fs", &["write", "rename", "copy", "hard_link"]),
    ("File", &["create", "create_new", "options"]),
];

/// Names that write a file wherever they appear.
const WRITING_NAMES: &[&str] = &["OpenOptions", "MmapMut", "map_mut"];

#[derive(Debug, PartialEq)]
struct Hit {
    line: usize,
    what: String,
}

/// What one file writes, and the files of `#[cfg(test)] mod NAME;` declarations in it.
fn scan(text: &str) -> Result<(Vec<Hit>, Vec<String>), String> {
    let tokens = TokenStream::from_str(text).map_err(|e| format!("does not lex: {e}"))?;
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut hits = vec![];
    let mut test_mods = vec![];
    // `#![cfg(test)]` at the top: the whole file is test code.
    if let [TokenTree::Punct(h), TokenTree::Punct(b), TokenTree::Group(g), ..] = tts.as_slice() {
        if h.as_char() == '#' && b.as_char() == '!' && is_cfg_test(g) {
            return Ok((hits, test_mods));
        }
    }
    walk(&tts, &mut hits, &mut test_mods);
    Ok((hits, test_mods))
}

fn is_cfg_test(attr: &proc_macro2::Group) -> bool {
    attr.delimiter() == Delimiter::Bracket
        && attr.stream().to_string().replace(' ', "") == "cfg(test)"
}

fn is_punct(t: Option<&TokenTree>, c: char) -> bool {
    matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c)
}

fn is_path_sep(tts: &[TokenTree], i: usize) -> bool {
    matches!(tts.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ':' && p.spacing() == Spacing::Joint)
        && is_punct(tts.get(i + 1), ':')
}

fn walk(tts: &[TokenTree], hits: &mut Vec<Hit>, test_mods: &mut Vec<String>) {
    let mut i = 0;
    while i < tts.len() {
        match &tts[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = tts.get(i + 1) {
                    if is_cfg_test(g) {
                        i = skip_item(tts, i + 2, test_mods);
                        continue;
                    }
                }
            }
            TokenTree::Group(g) => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                walk(&inner, hits, test_mods);
            }
            TokenTree::Ident(id) => {
                let name = id.to_string();
                let line = id.span().start().line;
                if WRITING_NAMES.contains(&name.as_str()) {
                    hits.push(Hit { line, what: name });
                } else if let Some((_, calls)) = WRITING_PATHS.iter().find(|(p, _)| *p == name) {
                    if is_path_sep(tts, i + 1) {
                        let called: Vec<String> = match tts.get(i + 3) {
                            Some(TokenTree::Ident(f)) => vec![f.to_string()],
                            // `use std::fs::{write, …}`
                            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => g
                                .stream()
                                .into_iter()
                                .filter_map(|t| match t {
                                    TokenTree::Ident(f) => Some(f.to_string()),
                                    _ => None,
                                })
                                .collect(),
                            _ => vec![],
                        };
                        for f in called.iter().filter(|f| calls.contains(&f.as_str())) {
                            hits.push(Hit {
                                line,
                                what: format!("{name}::{f}"),
                            });
                        }
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// Skip the item after a `#[cfg(test)]` (from `start`, past further attributes): up to
/// and including its `{ … }` body or its `;`. Records `mod NAME;` in `test_mods`.
fn skip_item(tts: &[TokenTree], start: usize, test_mods: &mut Vec<String>) -> usize {
    let mut i = start;
    while i < tts.len() {
        match &tts[i] {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => return i + 1,
            TokenTree::Punct(p) if p.as_char() == ';' => {
                if let [.., TokenTree::Ident(m), TokenTree::Ident(n)] = &tts[start..i] {
                    if m == "mod" {
                        test_mods.push(n.to_string());
                    }
                }
                return i + 1;
            }
            _ => i += 1,
        }
    }
    i
}

/// Where `mod name;` in `file` lives.
fn module_files(file: &Path, name: &str) -> [PathBuf; 2] {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let dir = file.parent().unwrap_or(Path::new(""));
    let dir = if matches!(stem, "mod" | "lib" | "main") {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ]
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

#[test]
fn only_ge_ir_output_writes_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = vec![];
    rust_files(&root, &mut files);
    files.sort();
    // Not a test that passes because it saw nothing: the tools' writers are scanned.
    for must in ["driver/src/opt.rs", "driver/src/run.rs", "om/src/format.rs"] {
        assert!(
            files.iter().any(|f| f.ends_with(must)),
            "{must} not found under {}",
            root.display()
        );
    }
    let mut test_files: Vec<PathBuf> = vec![];
    let mut found = vec![];
    let mut allowed_used = vec![false; ALLOWED.len()];
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap_or(f);
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let (hits, mods) = scan(&text).unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
        for m in mods {
            test_files.extend(module_files(f, &m));
        }
        if hits.is_empty() {
            continue;
        }
        let rel_s = rel.to_string_lossy().replace('\\', "/");
        if let Some(k) = ALLOWED.iter().position(|(a, _)| *a == rel_s) {
            allowed_used[k] = true;
            continue;
        }
        for h in hits {
            found.push((f.clone(), format!("{rel_s}:{}: {}", h.line, h.what)));
        }
    }
    let found: Vec<String> = found
        .into_iter()
        .filter(|(f, _)| !test_files.contains(f))
        .map(|(_, s)| s)
        .collect();
    assert!(
        found.is_empty(),
        "files are written outside ge_ir::output (use ge_ir::output::write / write_with, \
         or add the file to ALLOWED in ir/tests/suite/output_writers.rs with the reason):\n{}",
        found.join("\n")
    );
    for ((path, _), used) in ALLOWED.iter().zip(allowed_used) {
        assert!(used, "ALLOWED names {path}, which writes no file any more");
    }
}

#[test]
fn scanner_finds_writes() {
    let text = "use std::fs::{self, write};\n\
                fn f(p: &str) {\n\
                    std::fs::write(p, b\"\").ok();\n\
                    let _ = std::fs::OpenOptions::new().append(true).open(p);\n\
                    fs::rename(p, \"b\").ok();\n\
                    let _ = std::fs::File::create(p);\n\
                    println!(\"{:?}\", fs::copy(p, \"c\"));\n\
                }\n";
    let (hits, _) = scan(text).unwrap();
    let got: Vec<(usize, &str)> = hits.iter().map(|h| (h.line, h.what.as_str())).collect();
    assert_eq!(
        got,
        [
            (1, "fs::write"),
            (3, "fs::write"),
            (4, "OpenOptions"),
            (5, "fs::rename"),
            (6, "File::create"),
            (7, "fs::copy"),
        ]
    );
}

#[test]
fn scanner_skips_comments_strings_reads_and_test_code() {
    let text = "//! std::fs::write(\"x\", b\"\")\n\
                // fs::rename(a, b)\n\
                fn f() { let _ = std::fs::read(\"fs::write\"); let _ = std::fs::File::open(\"a\"); }\n\
                #[cfg(test)]\n\
                mod tests { fn g() { std::fs::write(\"a\", b\"\").unwrap(); } }\n\
                #[cfg(test)]\n\
                #[path = \"t.rs\"]\n\
                mod more;\n";
    let (hits, mods) = scan(text).unwrap();
    assert_eq!(hits, []);
    assert_eq!(mods, ["more"]);
    let (hits, _) =
        scan("#![cfg(test)]\nfn g() { std::fs::write(\"a\", b\"\").unwrap(); }\n").unwrap();
    assert_eq!(hits, []);
}
