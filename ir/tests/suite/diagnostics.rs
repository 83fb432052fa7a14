//! What the parser's and verifier's diagnostics say, not only that there is
//! one. Added for mutants cargo-mutants found surviving the other tests
//! (docs/testing.md, "Measuring test strength"): an empty "found ..." in
//! every "expected X, found Y" message, and a verifier that never looked
//! inside a module.

use ge_ir::diagnostics::Pos;
use ge_ir::parser::{parse_module, ParseOptions};
use ge_ir::verifier::verify_module;
use ge_ir::Context;

fn ctx() -> Context {
    let mut c = Context::new();
    c.allow_unregistered = true;
    c
}

fn parse_error(src: &str) -> String {
    match parse_module(&ctx(), "t.air", src, ParseOptions::default()) {
        Ok(_) => panic!("{src:?} parsed"),
        Err(d) => d.message,
    }
}

/// Each kind of item is named in "expected X, found Y" (`Item::describe`).
#[test]
fn expected_messages_name_what_was_found() {
    for (found, text) in [
        ("value '%x'", "%x"),
        ("string \"s\"", "\"s\""),
        ("block '^bb'", "^bb"),
        ("integer '42'", "42"),
        ("float '1.5'", "1.5"),
        ("type 'f32'", "f32"),
        ("symbol '@b'", "@a @b"),
        ("':'", ":"),
        ("attribute '#x.y'", "#x.y"),
    ] {
        let msg = parse_error(&format!("module {text} {{}}"));
        assert_eq!(
            msg,
            format!("expected region, found {found}"),
            "for {text:?}"
        );
    }
}

/// (message, line) of each diagnostic of verifying `src`.
fn verify(src: &str) -> Vec<(String, u32)> {
    let m = parse_module(&ctx(), "t.air", src, ParseOptions::default())
        .unwrap_or_else(|d| panic!("{}", d.message));
    verify_module(&m)
        .into_iter()
        .map(|d| {
            let line = match &d.pos {
                Pos::Loc(l) => l.file_line_col().map_or(0, |(_, l, _)| l),
                _ => 0,
            };
            (d.message, line)
        })
        .collect()
}

/// The top-level module is an isolated op: its body is verified through
/// `verify_inner`, as is every nested module's — one diagnostic per
/// problem, in source order, from both nested modules.
#[test]
fn problems_inside_modules_are_reported() {
    let twice = |s: &str| {
        format!("\"x.f\"() {{sym_name = \"{s}\"}} : () -> ()\n\"x.g\"() {{sym_name = \"{s}\"}} : () -> ()\n")
    };
    assert_eq!(
        verify(&twice("a")),
        vec![("redefinition of symbol named 'a'".to_string(), 2)]
    );
    let nested = format!(
        "module {{\n module {{\n{}}}\n module {{\n{}}}\n}}",
        twice("a"),
        twice("b")
    );
    assert_eq!(
        verify(&nested),
        vec![
            ("redefinition of symbol named 'a'".to_string(), 4),
            ("redefinition of symbol named 'b'".to_string(), 8),
        ]
    );
    // The same module with distinct names is valid.
    assert_eq!(
        verify(&nested.replace("x.g\"() {sym_name = \"a", "x.g\"() {sym_name = \"c")).len(),
        1
    );
}
