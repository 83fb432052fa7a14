//! Modules big enough to be parsed on several threads (ge_ir::parser's
//! `parallel` module) give exactly what the serial parser gives: the same IR,
//! locations included, and the same first diagnostic when a function is broken.

use ge_ir::parser::{parallel_ops_parsed, parse_module, ParseOptions};
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::Context;
use proptest::prelude::*;
use std::sync::Mutex;

/// The parallel-op counter is process-wide: one test at a time reads it.
static SERIAL: Mutex<()> = Mutex::new(());

const FUNCS: usize = 300;

fn context(threading: bool) -> Context {
    let mut ctx = ge_dialects::context();
    ctx.allow_unregistered = true;
    ctx.threading = threading;
    ctx
}

/// One function of ~1.5 KB: aliases, an attribute alias, a resource, strings
/// with braces in them, comments, explicit locations and a nested region.
fn function(i: usize) -> String {
    let mut f = format!(
        "  graph.func @f{i}(%x: !t, %y: tensor<4xf32>) -> !t attributes {{cfg = #cfg, doc = \"{{not a region}} // nor a comment\"}} {{\n"
    );
    f += "    // a comment with } and { and \"\n";
    f += &format!(
        "    %w = data.constant dense_resource<blob{}> : tensor<4xf32>\n",
        i % 3
    );
    let mut last = "%x".to_string();
    for k in 0..12 {
        f += &format!(
            "    %v{k} = graph.add {last}, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(\"model.py\":{i}:{k})\n"
        );
        last = format!("%v{k}");
    }
    f += &format!("    %c = \"x.op\"({last}) ({{\n    ^bb0(%a: tensor<4xf32>):\n      \"x.yield\"(%a) : (tensor<4xf32>) -> ()\n    }}) : (tensor<4xf32>) -> tensor<4xf32>\n");
    f += "    graph.return %c : !t\n  }\n";
    f
}

const RESOURCES: &str = "{-#\n  dialect_resources: {\n    builtin: {\n      blob0: \"0x040000000000803F0000803F0000803F0000803F\",\n      blob1: \"0x0400000000000040000000400000004000000040\",\n      blob2: \"0x0400000000004040000040400000404000004040\"\n    }\n  }\n#-}\n";

/// A module of `FUNCS` functions; `wrap` puts them in `module { }`.
fn module(wrap: bool, edit: impl Fn(usize, String) -> String) -> String {
    let mut s = String::from("!t = tensor<4xf32>\n#cfg = {mode = \"fast\"}\n");
    if wrap {
        s += "module {\n";
    }
    for i in 0..FUNCS {
        s += &edit(i, function(i));
    }
    if wrap {
        s += "}\n";
    }
    s + RESOURCES
}

/// Parse on a 4-thread pool with threading on or off: printed IR (with
/// locations) or the first diagnostic's message and span, and how many ops
/// went through the parallel path.
fn parse(text: &str, threading: bool) -> (Result<String, String>, usize) {
    let ctx = context(threading);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .expect("pool");
    let before = parallel_ops_parsed();
    let r = pool.install(|| parse_module(&ctx, "m.air", text, ParseOptions::default()));
    let parallel = parallel_ops_parsed() - before;
    let opts = PrintOptions {
        debuginfo: true,
        ..PrintOptions::default()
    };
    let out = r
        .map(|m| print_module(&m, opts))
        .map_err(|d| format!("{} at {:?}", d.message, d.pos));
    (out, parallel)
}

#[test]
fn big_modules_parse_in_parallel_to_the_same_ir() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for wrap in [true, false] {
        let text = module(wrap, |_, f| f);
        assert!(
            text.len() > 300_000,
            "input must be big enough to go parallel"
        );
        let (serial, n) = parse(&text, false);
        assert_eq!(n, 0, "threading off must parse serially");
        let (parallel, n) = parse(&text, true);
        assert_eq!(
            n, FUNCS,
            "every function goes through the parallel path (wrap {wrap})"
        );
        let serial = serial.expect("valid module");
        assert_eq!(parallel.expect("valid module"), serial);

        // The generic form of the same module takes the same path.
        let ctx = context(false);
        let m = parse_module(&ctx, "m.air", &text, ParseOptions::default()).expect("valid");
        let opts = PrintOptions {
            generic: true,
            debuginfo: true,
            ..PrintOptions::default()
        };
        let generic = print_module(&m, opts);
        let (g_serial, _) = parse(&generic, false);
        let (g_parallel, n) = parse(&generic, true);
        assert!(n >= FUNCS, "generic-form functions go parallel too");
        assert_eq!(g_parallel, g_serial);
    }
}

/// Ways to break function `i`: each must give the serial parser's diagnostic.
fn breakage(kind: usize, f: String) -> String {
    match kind {
        0 => f.replacen("%v3 = graph.add %v2", "%v3 = graph.add %nope", 1),
        1 => f.replacen("-> !t attributes", "-> !t attributes (", 1),
        2 => f.replacen("\"model.py\"", "\"model.py", 1),
        3 => f.replacen("graph.return %c : !t\n  }", "graph.return %c : !t\n", 1),
        4 => f.replacen("dense_resource<blob", "dense_resource<missing", 1),
        5 => f.replacen("%x: !t,", "%x: !undefined,", 1),
        _ => f.replacen("graph.add", "graph.nonexistent", 1),
    }
}

/// The serial and the parallel parser's first diagnostic for function `at`
/// broken in way `kind`.
fn diagnostics(
    at: usize,
    kind: usize,
    wrap: bool,
) -> (Result<String, String>, Result<String, String>) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = module(wrap, |i, f| if i == at { breakage(kind, f) } else { f });
    let (serial, _) = parse(&text, false);
    let (parallel, _) = parse(&text, true);
    (serial, parallel)
}

/// Every breakage, wrapped and not, in the first, a middle and the last
/// function (the batches' edges): 14 cases, always all of them.
#[test]
fn every_breakage_gives_the_serial_diagnostic() {
    for kind in 0..7 {
        for wrap in [false, true] {
            let at = [0, FUNCS / 2 + kind, FUNCS - 1][(2 * kind + usize::from(wrap)) % 3];
            let (serial, parallel) = diagnostics(at, kind, wrap);
            assert!(serial.is_err(), "breakage {kind} must be an error");
            assert_eq!(parallel, serial, "breakage {kind} at f{at} (wrap {wrap})");
        }
    }
}

/// Cases: `PROPTEST_CASES` when set, else `default` (each case parses a
/// 450 KB module twice, ~0.5-1 s in a debug build; the sweep above already
/// covers every kind).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(32)))]

    #[test]
    fn a_broken_function_gives_the_serial_diagnostic(
        at in 0..FUNCS, kind in 0usize..7, wrap: bool,
    ) {
        let (serial, parallel) = diagnostics(at, kind, wrap);
        prop_assert!(serial.is_err(), "breakage {kind} must be an error");
        prop_assert_eq!(parallel, serial);
    }
}

/// A module of ops of an unregistered dialect shaped like functions: nobody
/// knows they are isolated, so the workers check that each uses only values
/// it defines. `edit` changes op `i`'s text. `%top` is a value of the module.
fn unregistered_module(edit: impl Fn(usize, String) -> String) -> String {
    let mut s =
        String::from("\"builtin.module\"() ({\n  %top = \"u.const\"() : () -> tensor<4xf32>\n");
    for i in 0..FUNCS {
        let mut f = String::from("  \"u.func\"() ({\n  ^bb0(%a: tensor<4xf32>):\n");
        // A use before its definition (the regions of unregistered ops may be graph regions).
        f += "    %early = \"u.neg\"(%late) : (tensor<4xf32>) -> tensor<4xf32>\n";
        f += "    %late = \"u.neg\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n";
        let mut last = "%early".to_string();
        for k in 0..12 {
            f += &format!(
                "    %v{k} = \"u.add\"({last}, %a) {{k = {k} : i64, s = \"}} {{\"}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(\"u.py\":{i}:{k})\n"
            );
            last = format!("%v{k}");
        }
        f += &format!("    \"u.inner\"() ({{\n      \"u.use\"({last}) : (tensor<4xf32>) -> ()\n    }}) : () -> ()\n");
        f += &format!("    \"u.ret\"({last}) : (tensor<4xf32>) -> ()\n  }}) {{sym_name = \"f{i}\"}} : () -> ()\n");
        s += &edit(i, f);
    }
    s + "}) : () -> ()\n"
}

/// Ways to change op `i` of [`unregistered_module`]: some valid, some not,
/// all needing the serial parser's answer.
fn unregistered_edit(kind: usize, f: String) -> String {
    match kind {
        // Valid: a value of the module used inside (the worker must give up).
        0 => f.replacen("\"u.add\"(%early, %a)", "\"u.add\"(%top, %a)", 1),
        // A name the module already defines: a redefinition.
        1 => f
            .replacen("%late =", "%top =", 1)
            .replacen("(%late)", "(%top)", 1),
        // Undefined.
        2 => f.replacen("(%v3, %a)", "(%nope, %a)", 1),
        // A successor outside the op.
        3 => f.replacen(
            "\"u.ret\"(",
            "\"u.br\"()[^outer] : () -> ()\n    \"u.ret\"(",
            1,
        ),
        // Unterminated string.
        _ => f.replacen("\"} {\"", "\"} {", 1),
    }
}

#[test]
fn unregistered_ops_parse_in_parallel_to_the_same_ir() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = unregistered_module(|_, f| f);
    assert!(
        text.len() > 300_000,
        "input must be big enough to go parallel"
    );
    let (serial, n) = parse(&text, false);
    assert_eq!(n, 0, "threading off must parse serially");
    let (parallel, n) = parse(&text, true);
    assert_eq!(
        n, FUNCS,
        "every op of the run goes through the parallel path"
    );
    assert_eq!(parallel, serial);
    assert!(serial.is_ok(), "{serial:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn an_edited_unregistered_op_gives_the_serial_answer(at in 0..FUNCS, kind in 0usize..5) {
        let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let text = unregistered_module(|i, f| if i == at { unregistered_edit(kind, f) } else { f });
        let (serial, _) = parse(&text, false);
        prop_assert_eq!(serial.is_ok(), kind == 0, "edit {} validity: {:?}", kind, serial);
        let (parallel, _) = parse(&text, true);
        prop_assert_eq!(parallel, serial);
    }
}
