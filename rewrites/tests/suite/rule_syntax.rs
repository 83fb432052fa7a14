//! What a `.rr` syntax error says: the rule file's author is told which kind
//! of token was expected, by name. Added for a mutant cargo-mutants found
//! surviving (docs/testing.md, "Measuring test strength"): the crate's own
//! tests parsed only valid rule files.

fn syntax_error(text: &str) -> (String, std::ops::Range<usize>) {
    let ctx = ge_dialects::context();
    match ge_rewrites::rr::parse_rules(&ctx, "t.rr", 0, text) {
        Ok(_) => panic!("{text:?} parsed"),
        Err(d) => match d.pos {
            ge_ir::diagnostics::Pos::Span { range, .. } => (d.message, range),
            p => panic!("no span: {p:?}"),
        },
    }
}

#[test]
fn syntax_errors_name_the_expected_token() {
    for (text, want, at) in [
        (
            "rule r: (3 ?x) => ?x",
            "expected an op name like graph.add",
            9,
        ),
        ("rule 7", "expected a name", 5),
        ("rule r: (graph.neg ?x) => ?", "expected a token", 26),
    ] {
        let (msg, range) = syntax_error(text);
        assert_eq!(msg, format!("rule syntax error: {want}"), "{text:?}");
        assert_eq!(range.start, at, "{text:?}");
    }
}

/// Each operator of a condition parses to its own `BinOp` (a missing one
/// would fall through to `%`).
#[test]
fn condition_operators_parse_to_their_ops() {
    use ge_rewrites::rr::ast::{AExpr, BinOp};
    let ctx = ge_dialects::context();
    for (op, want) in [
        ("||", BinOp::Or),
        ("&&", BinOp::And),
        ("==", BinOp::Eq),
        ("!=", BinOp::Ne),
        ("<", BinOp::Lt),
        ("<=", BinOp::Le),
        (">", BinOp::Gt),
        (">=", BinOp::Ge),
        ("+", BinOp::Add),
        ("-", BinOp::Sub),
        ("*", BinOp::Mul),
        ("/", BinOp::Div),
        ("%", BinOp::Rem),
    ] {
        let text = format!("rule r: (graph.neg ?x) => ?x\n  if rank(?x) {op} 1\n");
        let rules = ge_rewrites::rr::parse_rules(&ctx, "t.rr", 0, &text)
            .unwrap_or_else(|d| panic!("{op}: {}", d.message));
        match &rules[0].cond {
            Some(AExpr::Bin(got, _, rhs)) => {
                assert_eq!(*got, want, "{op}");
                assert_eq!(**rhs, AExpr::Int(1), "{op}");
            }
            c => panic!("{op}: condition {c:?}"),
        }
    }
}
