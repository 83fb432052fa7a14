//! The parser's parallel path within ge-ir alone (functions of an
//! unregistered dialect, no ge-dialects): a module big enough to be cut into
//! batches parses to the same IR as the serial parser. Each batch's values,
//! ops and blocks are shifted past the previous batches'; a wrong shift
//! merges values of different functions (a mutant cargo-mutants found
//! surviving ge-ir's own tests; dialects/tests/suite/parallel_parse.rs covers the
//! path with registered ops and broken inputs).

use ge_ir::parser::{parallel_ops_parsed, parse_module, ParseOptions};
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::Context;

const FUNCS: usize = 600;

/// A function with block arguments, results and a nested block, ~700 bytes.
fn function(i: usize) -> String {
    let mut f = String::from("\"x.func\"() ({\n^bb0(%a: i64, %b: i64):\n");
    let mut last = "%a".to_string();
    for k in 0..10 {
        f += &format!("  %v{k} = \"x.add\"({last}, %b) {{k = {k} : i64}} : (i64, i64) -> i64\n");
        last = format!("%v{k}");
    }
    f += &format!("  \"x.br\"({last})[^bb1] : (i64) -> ()\n^bb1(%c: i64):\n  \"x.ret\"(%c, %a) : (i64, i64) -> ()\n}}) {{sym_name = \"f{i}\"}} : () -> ()\n");
    f
}

fn parse(text: &str, threading: bool) -> (String, usize) {
    let mut ctx = Context::new();
    ctx.allow_unregistered = true;
    ctx.threading = threading;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .expect("pool");
    let before = parallel_ops_parsed();
    let m = pool
        .install(|| parse_module(&ctx, "m.air", text, ParseOptions::default()))
        .unwrap_or_else(|d| panic!("{}", d.message));
    let n = parallel_ops_parsed() - before;
    let printed = print_module(
        &m,
        PrintOptions {
            debuginfo: true,
            ..PrintOptions::default()
        },
    );
    (printed, n)
}

#[test]
fn a_big_module_parses_in_parallel_to_the_serial_ir() {
    let text: String = (0..FUNCS).map(function).collect();
    assert!(text.len() > 300_000, "big enough to go parallel");
    let (serial, n) = parse(&text, false);
    assert_eq!(n, 0);
    let (parallel, n) = parse(&text, true);
    assert!(
        n >= FUNCS,
        "the functions went through the parallel path ({n})"
    );
    assert_eq!(parallel, serial);
}
