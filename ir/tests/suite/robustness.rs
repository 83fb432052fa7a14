//! Robustness: very deep nesting and very large inputs give a result or a
//! clean diagnostic — never a crash (stack overflow) or a panic.
//!
//! These run on the test harness's small (2 MiB) thread stacks on purpose: the
//! parser, verifier, printer and `Drop` must not depend on a big main stack.

use ge_ir::parser::nesting::MAX_NESTING;
use ge_ir::parser::{parse_module, ParseOptions};
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::verifier::verify_module;
use ge_ir::{Context, Module};

const DEPTH: usize = 10_000;

fn ctx() -> Context {
    let mut c = Context::new();
    c.allow_unregistered = true;
    c
}

fn print(m: &Module, generic: bool) -> String {
    print_module(
        m,
        PrintOptions {
            generic,
            ..Default::default()
        },
    )
}

/// Parse; on success verify, print both forms and check the printed text
/// parses back to the same text. On failure the error must be a diagnostic
/// with a position inside the input. Returns the parse error message, if any.
fn parse_or_diagnose(src: &str, reparse: bool) -> Option<String> {
    let c = ctx();
    match parse_module(&c, "deep.air", src, ParseOptions::default()) {
        Ok(m) => {
            let diags = verify_module(&m);
            assert!(
                diags.is_empty(),
                "unexpected verifier errors: {:?}",
                diags.first()
            );
            for generic in [false, true] {
                let out = print(&m, generic);
                if reparse {
                    let again = match parse_module(&c, "out.air", &out, ParseOptions::default()) {
                        Ok(a) => a,
                        Err(d) => panic!("printed deep IR does not parse: {}", d.message),
                    };
                    assert!(print(&again, generic) == out, "printing is not stable");
                }
            }
            None
        }
        Err(d) => {
            match &d.pos {
                ge_ir::diagnostics::Pos::Span { range, .. } => {
                    assert!(range.start <= src.len(), "diagnostic points past the input")
                }
                p => panic!("parse error without a source span: {p:?}"),
            }
            Some(d.message.clone())
        }
    }
}

fn nested_regions(depth: usize) -> String {
    "\"x.op\"() ({\n".repeat(depth) + "\"x.leaf\"() : () -> ()\n" + &"}) : () -> ()\n".repeat(depth)
}

#[test]
fn ten_thousand_nested_regions_parse_verify_and_print() {
    let c = ctx();
    let src = nested_regions(DEPTH);
    let m = match parse_module(&c, "deep.air", &src, ParseOptions::default()) {
        Ok(m) => m,
        Err(d) => panic!("{}", d.message),
    };
    assert!(verify_module(&m).is_empty());
    let out = print(&m, true);
    // One line per op open and close, plus the module's two lines.
    assert_eq!(out.lines().count(), 2 * DEPTH + 3);
    assert!(out
        .lines()
        .nth(DEPTH + 1)
        .is_some_and(|l| l.trim() == "\"x.leaf\"() : () -> ()"));
}

#[test]
fn nested_regions_round_trip() {
    assert_eq!(parse_or_diagnose(&nested_regions(1_000), true), None);
}

#[test]
fn ten_thousand_nested_isolated_modules() {
    // `builtin.module` is isolated from above: each level owns a nested body,
    // which exercises the verifier's and `Drop`'s recursion over bodies.
    let src = "module {\n".repeat(DEPTH) + &"}\n".repeat(DEPTH);
    let c = ctx();
    let m = match parse_module(&c, "deep.air", &src, ParseOptions::default()) {
        Ok(m) => m,
        Err(d) => panic!("{}", d.message),
    };
    assert!(verify_module(&m).is_empty());
    let out = print(&m, false);
    assert_eq!(out.lines().count(), 2 * DEPTH);
    let generic = print(&m, true);
    // The innermost (empty) module's block is labelled `^bb0:` in generic form.
    assert_eq!(generic.lines().count(), 2 * DEPTH + 1);
    drop(m);
    let shallow = "module {\n".repeat(1_000) + &"}\n".repeat(1_000);
    assert_eq!(parse_or_diagnose(&shallow, true), None);
}

fn attr_op(attr: &str) -> String {
    format!("\"x.op\"() {{a = {attr}}} : () -> ()\n")
}

#[test]
fn ten_thousand_nested_arrays() {
    let src = attr_op(&("[".repeat(DEPTH) + &"]".repeat(DEPTH)));
    assert_eq!(parse_or_diagnose(&src, true), None);
}

#[test]
fn ten_thousand_nested_dicts() {
    let src = attr_op(&("{a = ".repeat(DEPTH) + "1" + &"}".repeat(DEPTH)));
    assert_eq!(parse_or_diagnose(&src, true), None);
}

#[test]
fn ten_thousand_nested_arrays_and_dicts_mixed() {
    let src = attr_op(&("[{a = ".repeat(DEPTH) + "unit" + &"}]".repeat(DEPTH)));
    assert_eq!(parse_or_diagnose(&src, true), None);
}

#[test]
fn ten_thousand_nested_dense_lists() {
    let ty = "1x".repeat(DEPTH);
    let src = attr_op(&format!(
        "dense<{}7{}> : tensor<{ty}i32>",
        "[".repeat(DEPTH),
        "]".repeat(DEPTH)
    ));
    assert_eq!(parse_or_diagnose(&src, true), None);
}

#[test]
fn ten_thousand_nested_function_types() {
    let src = attr_op(&("() -> (".repeat(DEPTH) + "i32" + &")".repeat(DEPTH)));
    assert_eq!(parse_or_diagnose(&src, true), None);
}

#[test]
fn ten_thousand_nested_tensor_encodings() {
    // A tensor whose encoding is a type attribute of a tensor whose encoding ...
    let src = attr_op(&("tensor<2xf32, ".repeat(DEPTH) + "unit" + &">".repeat(DEPTH)));
    assert_eq!(parse_or_diagnose(&src, true), None);
}

#[test]
fn ten_thousand_nested_dim_parentheses() {
    let dim = "(".repeat(DEPTH) + "B" + &")".repeat(DEPTH);
    let src = format!("\"x.op\"() : () -> tensor<{dim}x4xf32>\n");
    assert_eq!(parse_or_diagnose(&src, true), None);
}

#[test]
fn deeply_nested_dim_expressions() {
    // ((((B+1)/2+1)/2+1)/2 ...): division keeps the tree from flattening.
    let mut e = String::from("B");
    for _ in 0..200 {
        e = format!("({e}+1)/2");
    }
    let src = format!("\"x.op\"() : () -> tensor<({e})xf32>\n");
    assert_eq!(parse_or_diagnose(&src, true), None);
}

#[test]
fn ten_thousand_nested_name_locations() {
    let loc = "\"n\"(".repeat(DEPTH) + "\"f\":1:2" + &")".repeat(DEPTH);
    let src = format!("\"x.op\"() : () -> () loc({loc})\n");
    let c = ctx();
    let m = match parse_module(&c, "deep.air", &src, ParseOptions::default()) {
        Ok(m) => m,
        Err(d) => panic!("{}", d.message),
    };
    let out = print_module(
        &m,
        PrintOptions {
            debuginfo: true,
            ..Default::default()
        },
    );
    assert!(out.contains(&format!("loc({loc})")));
}

#[test]
fn ten_thousand_nested_callsite_locations() {
    let loc = "callsite(\"a\":1:1 at ".repeat(DEPTH) + "\"b\":2:2" + &")".repeat(DEPTH);
    let src = format!("\"x.op\"() : () -> () loc({loc})\n");
    assert_eq!(parse_or_diagnose(&src, true), None);
}

#[test]
fn ten_thousand_nested_dialect_bodies() {
    let body = "<".repeat(DEPTH) + &">".repeat(DEPTH);
    let src = format!("\"x.op\"() {{t = !x.ty{body}, a = #x.at{body}}} : () -> ()\n");
    assert_eq!(parse_or_diagnose(&src, true), None);
}

/// The diagnostic for an input nested past `MAX_NESTING`: its message, and
/// the line and column it points at (1-based, as printed).
fn too_deep(src: &str) -> (String, usize, usize) {
    let c = ctx();
    let d = match parse_module(&c, "deep.air", src, ParseOptions::default()) {
        Ok(_) => panic!("nesting past the limit must be refused"),
        Err(d) => d,
    };
    let mut sm = ge_ir::SourceMap::new();
    sm.add("deep.air", std::sync::Arc::from(src));
    let (_, line) = sm.line_of(&d.pos).expect("a position");
    let col = match &d.pos {
        ge_ir::diagnostics::Pos::Span { range, .. } => {
            let line_start = src[..range.start].rfind('\n').map_or(0, |i| i + 1);
            range.start - line_start + 1
        }
        p => panic!("no span: {p:?}"),
    };
    (d.message.clone(), line, col)
}

/// Where the bracket one past the limit is, in `open` repeated on one line.
fn col_past_limit(prefix: &str, open: &str, brackets_per_open: usize) -> usize {
    let n = MAX_NESTING / brackets_per_open;
    // `n` copies reach the limit exactly; the next copy's bracket is the first past it.
    prefix.len() + n * open.len() + open.find(['(', '[', '{', '<']).unwrap_or(0) + 1
}

#[test]
fn hundred_thousand_nested_arrays_are_refused_at_the_limit() {
    let src = attr_op(&("[".repeat(100_000) + &"]".repeat(100_000)));
    let (msg, line, col) = too_deep(&src);
    assert!(msg.contains("nested too deeply"), "{msg}");
    assert!(
        msg.contains(&MAX_NESTING.to_string()),
        "the limit is named: {msg}"
    );
    // `"x.op"() {a = ` holds three brackets: `(`, `)` closed, `{`.
    assert_eq!((line, col), (1, "\"x.op\"() {a = ".len() + MAX_NESTING));
}

#[test]
fn hundred_thousand_nested_tensors_are_refused_at_the_limit() {
    let prefix = "\"x.op\"() {a = ";
    let src = attr_op(&("tensor<2xf32, ".repeat(100_000) + "unit" + &">".repeat(100_000)));
    let (msg, line, col) = too_deep(&src);
    assert!(msg.contains("nested too deeply"), "{msg}");
    // The dictionary's `{` is one level: the tensor at depth MAX_NESTING + 1 is the last to open.
    assert_eq!(
        (line, col),
        (
            1,
            col_past_limit(prefix, "tensor<2xf32, ", 1) - "tensor<2xf32, ".len()
        )
    );
}

#[test]
fn hundred_thousand_nested_dicts_are_refused_at_the_limit() {
    let src = attr_op(&("{a = ".repeat(100_000) + "1" + &"}".repeat(100_000)));
    let (msg, _, col) = too_deep(&src);
    assert!(msg.contains("nested too deeply"), "{msg}");
    assert_eq!(
        col,
        "\"x.op\"() {a = ".len() + (MAX_NESTING - 1) * "{a = ".len() + 1
    );
}

#[test]
fn hundred_thousand_nested_modules_are_refused_at_the_limit() {
    let src = "module {\n".repeat(100_000) + &"}\n".repeat(100_000);
    let (msg, line, col) = too_deep(&src);
    assert!(msg.contains("nested too deeply"), "{msg}");
    assert_eq!((line, col), (MAX_NESTING + 1, "module {".len()));
}

#[test]
fn nesting_at_the_limit_still_parses() {
    // Exactly MAX_NESTING brackets: the deepest accepted (arrays, whose
    // elements are parsed and built recursively).
    let src = attr_op(&("[".repeat(MAX_NESTING - 1) + &"]".repeat(MAX_NESTING - 1)));
    assert_eq!(parse_or_diagnose(&src, false), None);
}

#[test]
fn the_nesting_scan_stops_at_the_limit() {
    // Linear work for any input: the scan gives up at the first bracket past
    // the limit, however much nesting follows.
    for n in [MAX_NESTING + 1, 10 * MAX_NESTING] {
        let src = "(".repeat(n);
        let r = ge_ir::parser::nesting::scan(&src, MAX_NESTING);
        assert_eq!(r.too_deep_at, Some(MAX_NESTING));
    }
}

#[test]
fn deep_dimension_expressions_are_refused() {
    let mut e = String::from("B");
    for _ in 0..2000 {
        e = format!("({e}+1)/2");
    }
    let src = format!("\"x.op\"() : () -> tensor<({e})xf32>\n");
    let msg = parse_or_diagnose(&src, false).expect("too deep");
    assert!(
        msg.contains("dimension expression nested more than"),
        "{msg}"
    );
}

#[test]
fn thirty_thousand_unclosed_regions_fail_cleanly() {
    let src = "\"x.op\"() ({\n".repeat(30_000);
    let msg = parse_or_diagnose(&src, false).expect("unterminated regions must fail");
    assert!(
        msg.contains("nested too deeply") || msg.contains("unterminated region"),
        "{msg}"
    );
}

#[test]
fn unclosed_deep_nesting_is_a_diagnostic() {
    for open in ["[", "{a = ", "(", "tensor<2xf32, ", "dense<[", "() -> ("] {
        let src = attr_op(&open.repeat(DEPTH));
        let msg = parse_or_diagnose(&src, false).expect("unclosed nesting must fail");
        assert!(!msg.is_empty());
    }
}

/// About 100 MB of text in one module, shaped like a model with its weights
/// inline: functions of ops interleaved with 2 MiB hex `dense` constants,
/// long strings, a 30k-element `array<i64>` and comment blocks. (Debug builds
/// of the pest parser read ops at well under 1 MB/s, so most bytes are
/// literals; `million_op_module_parses` covers op throughput.)
fn large_input(target: usize) -> String {
    let mut s = String::with_capacity(target + (4 << 20));
    let hex: String = "0123456789ABCDEF".repeat(1 << 17); // 2 MiB of hex = 1 MiB of data
    let n = hex.len() / 2;
    s.push_str(&format!(
        "\"x.list\"() {{xs = array<i64: {}0>}} : () -> ()\n",
        "123456789, ".repeat(30_000)
    ));
    let mut f = 0;
    while s.len() < target {
        s.push_str(&format!(
            "\"x.func\"() ({{\n^bb0(%a: tensor<Bx16xf32>, %b: tensor<16xf32>):\n  %w = \"x.const\"() {{value = dense<\"0x{hex}\"> : tensor<{n}xui8>}} : () -> tensor<{n}xui8>\n  %0 = \"x.add\"(%a, %b, %w) {{k = {f} : i64, doc = \"{doc}\"}} : (tensor<Bx16xf32>, tensor<16xf32>, tensor<{n}xui8>) -> tensor<Bx16xf32>\n  \"x.return\"(%0) : (tensor<Bx16xf32>) -> ()\n}}) {{sym_name = \"f{f}\"}} : () -> ()\n",
            doc = "lorem ipsum \\\"dolor\\\" sit amet\\n".repeat(1 << 12)
        ));
        s.push_str(&"// a comment line between functions\n".repeat(100));
        f += 1;
    }
    s
}

#[test]
fn hundred_megabyte_input_parses() {
    let src = large_input(100 << 20);
    assert!(src.len() >= 100 << 20);
    let c = ctx();
    let m = match parse_module(&c, "big.air", &src, ParseOptions::default()) {
        Ok(m) => m,
        Err(d) => panic!("{}", d.message),
    };
    assert!(verify_module(&m).is_empty());
    let out = print_module(
        &m,
        PrintOptions {
            hex_elements_over: Some(1024),
            ..Default::default()
        },
    );
    let funcs = src.matches("\"x.func\"").count();
    assert!(funcs > 40);
    assert!(
        out.contains(&format!("sym_name = \"f{}\"", funcs - 1)),
        "every function is printed"
    );
    assert!(out.len() > 90 << 20, "printed only {} bytes", out.len());
}

#[test]
fn error_at_the_end_of_a_hundred_megabyte_input_has_the_right_line() {
    let mut src = large_input(100 << 20);
    let lines = src.lines().count();
    src.push_str("\"x.bad\"(%nope) : (i32) -> ()\n");
    let c = ctx();
    let d = match parse_module(&c, "big.air", &src, ParseOptions::default()) {
        Ok(_) => panic!("the undefined value must be reported"),
        Err(d) => d,
    };
    assert!(d.message.contains("%nope"), "{}", d.message);
    let mut sm = ge_ir::SourceMap::new();
    sm.add("big.air", std::sync::Arc::from(src.as_str()));
    let (_, line) = sm.line_of(&d.pos).expect("a position");
    assert_eq!(line, lines + 1);
}

/// The benchmark shape: 1,000 functions × 1,000 elementwise ops (≈100 MB).
/// Slow in debug builds (pest is unoptimised there); run with
/// `cargo test --release -p ge-ir --test robustness -- --ignored`.
#[test]
#[ignore = "a million ops take minutes in a debug build; run with --release -- --ignored"]
fn million_op_module_parses() {
    let mut s = String::with_capacity(110 << 20);
    for f in 0..1000 {
        s.push_str("\"x.func\"() ({\n^bb0(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>):\n");
        for i in 0..1000 {
            let prev = if i == 0 {
                "%a".to_string()
            } else {
                format!("%v{}", i - 1)
            };
            s.push_str(&format!(
                "  %v{i} = \"x.add\"({prev}, %b) {{k = {i} : i64}} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>\n"
            ));
        }
        s.push_str(&format!(
            "  \"x.return\"(%v999) : (tensor<8x16xf32>) -> ()\n}}) {{sym_name = \"f{f}\"}} : () -> ()\n"
        ));
    }
    assert!(s.len() > 100 << 20);
    let c = ctx();
    let m = match parse_module(&c, "big.air", &s, ParseOptions::default()) {
        Ok(m) => m,
        Err(d) => panic!("{}", d.message),
    };
    assert!(verify_module(&m).is_empty());
    assert_eq!(m.body().deep_op_count(), 1000 * 1002);
}

#[test]
fn printing_deep_nesting_grows_linearly() {
    // Indentation stops growing past 64 levels: printed size grows with the
    // number of ops, not with their square (100,000 levels printed 23 GB).
    let size = |depth: usize| {
        let c = ctx();
        let m = parse_module(
            &c,
            "deep.air",
            &nested_regions(depth),
            ParseOptions::default(),
        )
        .unwrap_or_else(|d| panic!("{}", d.message));
        (print(&m, false).len(), print(&m, true).len())
    };
    let (small, small_g) = size(1_000);
    let (big, big_g) = size(10_000);
    assert!(big < 11 * small, "custom form: {small} -> {big} bytes");
    assert!(
        big_g < 11 * small_g,
        "generic form: {small_g} -> {big_g} bytes"
    );
}

#[test]
fn every_walk_survives_ten_thousand_nested_modules() {
    // On the test harness's 2 MiB stack: cloning, walking, counting, the
    // resource walks (ge-run's inline_resources overflowed at 100,000 levels)
    // and the generic printer's numbering must not recurse per level unguarded.
    let src = "module {\n".repeat(DEPTH)
        + "\"x.use\"() {w = dense_resource<blob> : tensor<2xi8>, n = [dense_resource<kept> : tensor<3xi8>]} : () -> ()\n"
        + &"}\n".repeat(DEPTH)
        + "{-#\n  dialect_resources: {\n    builtin: {\n      blob: \"0x010000000102\",\n      kept: \"0x01000000030405\"\n    }\n  }\n#-}\n";
    let c = ctx();
    let mut m = parse_module(&c, "deep.air", &src, ParseOptions::default())
        .unwrap_or_else(|d| panic!("{}", d.message));
    assert_eq!(m.op_count(), DEPTH + 1);
    let copy = m.clone();
    let mut n = 0;
    copy.outer
        .walk_deep(ge_ir::WalkOrder::Post, &mut |_, _| n += 1);
    assert_eq!(n, DEPTH + 1);
    assert_eq!(m.referenced_resources().len(), 2);
    // The top-level blob is inlined; the one inside an array stays, referenced.
    assert_eq!(m.inline_resources(), 1);
    assert_eq!(m.resources.keys().collect::<Vec<_>>(), ["kept"]);
    let generic = print(&m, true);
    assert!(generic.contains("dense<[1, 2]> : tensor<2xi8>"), "inlined");
    assert!(
        generic.contains("kept: \"0x01000000030405\""),
        "still referenced, still printed"
    );
}
