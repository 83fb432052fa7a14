//! Incremental compilation: which queries re-run after an edit (counted from
//! salsa's events), that incremental results equal a from-scratch ge-opt
//! run, `--watch`, and the on-disk compile cache.

use clap::Parser as _;
use ge_driver::incremental::cache::{CompileCache, KeyBuilder, Lookup};
use ge_driver::incremental::{Session, Settings};
use ge_driver::opt::{main_with, OptArgs};
use std::path::{Path, PathBuf};

const TY: &str = "tensor<Bx16xf32>";

/// Function `i`: a chain with a CSE duplicate and a double negation; every
/// tenth has a log(exp(x)) for the rule tests.
fn func(i: usize, variant: usize) -> String {
    let bin = format!("({TY}, {TY}) -> {TY}");
    let un = format!("({TY}) -> {TY}");
    let mut s = format!("  graph.func @f{i}(%x: {TY}, %y: {TY}) -> {TY} {{\n");
    s += &format!("    %0 = graph.add %x, %y : {bin}\n");
    s += &format!("    %1 = graph.add %x, %y : {bin}\n");
    s += &format!("    %2 = graph.mul %0, %1 : {bin}\n");
    s += &format!("    %3 = graph.neg %2 : {un}\n");
    s += &format!("    %4 = graph.neg %3 : {un}\n");
    let act = if i.is_multiple_of(2) {
        "relu"
    } else {
        "sigmoid"
    };
    s += &format!("    %5 = graph.{act} %4 : {un}\n");
    let mut last = "%5".to_string();
    if i.is_multiple_of(10) {
        s += &format!("    %6 = graph.exp %5 : {un}\n");
        s += &format!("    %7 = graph.log %6 : {un}\n");
        last = "%7".to_string();
    }
    for v in 0..variant {
        s += &format!("    %v{v} = graph.tanh {last} : {un}\n");
        s += &format!("    %w{v} = graph.add %v{v}, %y : {bin}\n");
        last = format!("%w{v}");
    }
    s += &format!("    graph.return {last} : {TY}\n  }}\n");
    s
}

fn module(n: usize, edited: Option<(usize, usize)>) -> String {
    let mut s = String::from("// A synthetic module for the incremental tests.\nmodule attributes {ge.symbol_bounds = {B = 64 : i64}} {\n");
    for i in 0..n {
        let v = match edited {
            Some((j, v)) if j == i => v,
            _ => 0,
        };
        s += &func(i, v);
    }
    s += "}\n";
    s
}

const CSE: &str = "builtin.module(graph.func(canonicalize, cse))";

fn settings(pipeline: &str) -> Settings {
    Settings {
        pipeline: Some(pipeline.to_string()),
        verify_each: true,
        ..Default::default()
    }
}

/// What plain ge-opt prints for the same input.
fn reference(text: &str, pipeline: &str, rules: &[(&str, &str)]) -> String {
    let dir = tempdir("ref");
    let input = dir.join("in.air");
    std::fs::write(&input, text).expect("write input");
    let mut argv = vec![
        "ge-opt".to_string(),
        input.display().to_string(),
        format!("--pass-pipeline={pipeline}"),
    ];
    for (i, (_, r)) in rules.iter().enumerate() {
        let p = dir.join(format!("r{i}.rr"));
        std::fs::write(&p, r).expect("write rules");
        argv.push(format!("--rewrite-rules={}", p.display()));
    }
    let args = OptArgs::try_parse_from(argv).expect("args");
    let mut ctx = ge_compile::context();
    let out = main_with(args, &mut ctx);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout.to_string()
}

fn tempdir(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "ge-incremental-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn cold_compile_matches_ge_opt_and_runs_every_function_once() {
    let text = module(20, None);
    let mut s = Session::new("m.air", &text, &settings(CSE));
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    assert_eq!(c.stdout.as_str(), reference(&text, CSE, &[]));
    assert_eq!(c.stats.count("optimize_unit"), 20);
    // Parsed function by function, not as a whole.
    assert_eq!(c.stats.count("parse_slice"), 20, "{:?}", c.stats);
    assert_eq!(c.stats.count("check_slice"), 20, "{:?}", c.stats);
    assert_eq!(c.stats.count("parse"), 0, "{:?}", c.stats);
    assert_eq!(c.units, 20);
}

#[test]
fn no_op_edit_reruns_no_function_query() {
    let text = module(200, None);
    let mut s = Session::new("m.air", &text, &settings(CSE));
    assert!(!s.compile().failed);
    // Comments and whitespace everywhere: lines move, nothing else changes.
    let edited = text
        .replace("graph.func @f1(", "\n\n   graph.func    @f1(")
        .replace("// A synthetic", "// An edited comment\n// A synthetic")
        + "\n// trailing comment\n";
    s.set_source(&edited);
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    // Only the two slices whose text changed are parsed again (@f0 got the
    // blank lines at its end); the header comment is not in any key.
    assert_eq!(c.stats.count("parse_slice"), 2, "{:?}", c.stats);
    assert_eq!(c.stats.count("check_slice"), 2, "{:?}", c.stats);
    assert_eq!(c.stats.count("parse"), 0, "{:?}", c.stats);
    assert_eq!(c.stats.count("unit_ir"), 0, "{:?}", c.stats);
    assert_eq!(c.stats.count("optimize_unit"), 0, "{:?}", c.stats);
    assert!(c.stats.optimized.is_empty());
    // The parse result is unchanged, so the module is not even reassembled.
    assert_eq!(c.stats.count("module_output"), 0, "{:?}", c.stats);
    assert_eq!(c.stdout.as_str(), reference(&edited, CSE, &[]));
}

#[test]
fn editing_one_of_200_functions_reruns_only_its_chain() {
    let text = module(200, None);
    let mut s = Session::new("m.air", &text, &settings(CSE));
    assert!(!s.compile().failed);
    let edited = module(200, Some((117, 2)));
    s.set_source(&edited);
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    assert_eq!(c.stats.optimized, vec!["@f117".to_string()]);
    // No rule files: nothing to select, so no `unit_ir` (one parse less).
    assert_eq!(c.stats.count("unit_ir"), 0, "{:?}", c.stats);
    assert_eq!(c.stats.count("optimize_unit"), 1, "{:?}", c.stats);
    assert_eq!(c.stats.count("parse_slice"), 1, "{:?}", c.stats);
    assert_eq!(c.stats.count("check_slice"), 1, "{:?}", c.stats);
    assert_eq!(c.stats.count("parse"), 0, "{:?}", c.stats);
    assert_eq!(c.stats.count("module_output"), 1);
    assert_eq!(c.stdout.as_str(), reference(&edited, CSE, &[]));
    // Editing it back reuses nothing new but is correct, too.
    s.set_source(&text);
    let c = s.compile();
    assert!(c.stats.count("optimize_unit") <= 1, "{:?}", c.stats);
    assert_eq!(c.stdout.as_str(), reference(&text, CSE, &[]));
}

#[test]
fn atc_lowering_is_incremental_per_function_and_matches_ge_opt() {
    let text = module(12, None);
    let mut s = Session::new("m.air", &text, &settings("atc"));
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    assert_eq!(c.stdout.as_str(), reference(&text, "atc", &[]));
    let edited = module(12, Some((5, 1)));
    s.set_source(&edited);
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    assert_eq!(c.stats.optimized, vec!["@f5".to_string()]);
    assert_eq!(c.stdout.as_str(), reference(&edited, "atc", &[]));
}

const RULES: &str = "rule log_exp: (graph.log (graph.exp ?x)) => ?x\nrule tanh_twice: (graph.tanh (graph.tanh ?x)) => (graph.tanh ?x)\n";
const RULES_EDITED: &str = "rule log_exp_renamed [mine]: (graph.log (graph.exp ?x)) => ?x\nrule tanh_twice: (graph.tanh (graph.tanh ?x)) => (graph.tanh ?x)\n";
const APPLY: &str = "builtin.module(graph.func(apply-rules, cse))";

#[test]
fn changing_a_rule_reruns_only_the_functions_it_can_match() {
    let text = module(200, None);
    let mut s = Session::new("m.air", &text, &settings(APPLY));
    s.set_rules(vec![("r.rr".into(), RULES.into())]);
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    assert_eq!(
        c.stdout.as_str(),
        reference(&text, APPLY, &[("r.rr", RULES)])
    );
    assert!(!c.stdout.contains("graph.log"), "log_exp applied");
    s.set_rules(vec![("r.rr".into(), RULES_EDITED.into())]);
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    // Only the functions with a graph.log (every tenth) depend on log_exp.
    let expected: Vec<String> = {
        let mut v: Vec<String> = (0..200).step_by(10).map(|i| format!("@f{i}")).collect();
        v.sort();
        v
    };
    assert_eq!(c.stats.optimized, expected);
    assert_eq!(
        c.stdout.as_str(),
        reference(&text, APPLY, &[("r.rr", RULES_EDITED)])
    );
    // Moving a rule within its file (a new position, same rule) re-runs nothing.
    let moved = format!("// moved\n\n{}", RULES_EDITED);
    s.set_rules(vec![("r.rr".into(), moved)]);
    let c = s.compile();
    assert!(c.stats.optimized.is_empty(), "{:?}", c.stats);
    // A rule rooted at an op no function has re-runs nothing either.
    let extra = format!("{RULES_EDITED}rule exp_exp: (graph.exp (graph.exp ?x)) => ?x\n");
    s.set_rules(vec![("r.rr".into(), extra.clone())]);
    let c = s.compile();
    let expected_exp: Vec<String> = expected.clone();
    // Functions with graph.exp could match it: exactly the tenth ones again.
    assert_eq!(c.stats.optimized, expected_exp);
    assert_eq!(
        c.stdout.as_str(),
        reference(&text, APPLY, &[("r.rr", &extra)])
    );
}

#[test]
fn a_bad_rule_file_is_a_diagnostic_then_recovers() {
    let text = module(3, None);
    let mut s = Session::new("m.air", &text, &settings(APPLY));
    s.set_rules(vec![("r.rr".into(), "rule broken: (graph.log".into())]);
    let c = s.compile();
    assert!(c.failed);
    assert!(c.stderr.contains("r.rr"), "{}", c.stderr);
    s.set_rules(vec![("r.rr".into(), RULES.into())]);
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
}

#[test]
fn parse_and_pass_errors_are_values_and_the_session_recovers() {
    let text = module(3, None);
    let mut s = Session::new("m.air", &text, &settings(CSE));
    assert!(!s.compile().failed);
    s.set_source(&text.replace("graph.mul %0, %1", "graph.mul %0, %nope"));
    let c = s.compile();
    assert!(c.failed);
    assert!(c.stderr.contains("m.air:"), "{}", c.stderr);
    s.set_source(&text);
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    // Back to the first version: every function result is still memoized.
    assert_eq!(c.stats.count("optimize_unit"), 0, "{:?}", c.stats);
}

/// Aliases, a named module, and a call between functions.
fn calls_module(callee_result: &str, callee_op: &str) -> String {
    format!(
        "// header comment\n!t = tensor<Bx16xf32>\n#cfg = {{mode = \"fast\"}}\n\
         module @m attributes {{ge.symbol_bounds = {{B = 8 : i64}}}} {{\n\
         \x20 graph.func @callee(%x: !t) -> {callee_result} attributes {{cfg = #cfg}} {{\n\
         \x20   %0 = graph.{callee_op} %x : (!t) -> {callee_result}\n\
         \x20   graph.return %0 : {callee_result}\n\
         \x20 }}\n\
         \x20 graph.func @caller(%x: !t) -> !t {{\n\
         \x20   %0 = graph.call @callee(%x) : (!t) -> !t\n\
         \x20   %1 = graph.neg %0 : (!t) -> !t\n\
         \x20   graph.return %1 : !t\n\
         \x20 }}\n\
         }}\n"
    )
}

#[test]
fn functions_are_parsed_alone_and_checked_against_their_callees() {
    let t = "tensor<Bx16xf32>";
    let text = calls_module(t, "relu");
    let mut s = Session::new("m.air", &text, &settings(CSE));
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    assert_eq!(c.stdout.as_str(), reference(&text, CSE, &[]));
    assert_eq!(c.stats.count("parse_slice"), 2, "{:?}", c.stats);
    assert_eq!(c.stats.count("parse"), 0, "{:?}", c.stats);
    // A body edit of the callee: its signature (the caller's context) is
    // the same, so only the callee is parsed and checked again.
    let edited = calls_module(t, "sigmoid");
    s.set_source(&edited);
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    assert_eq!(c.stats.count("check_slice"), 1, "{:?}", c.stats);
    assert_eq!(c.stats.optimized, vec!["@callee".to_string()]);
    assert_eq!(c.stdout.as_str(), reference(&edited, CSE, &[]));
    // A signature edit: the caller is checked again and its call no longer
    // matches. The diagnostic comes from parsing the whole file, so it
    // points at the call's line in m.air.
    let broken = calls_module("tensor<Bx8xf32>", "relu").replace(
        "graph.relu %x : (!t) -> tensor<Bx8xf32>",
        "data.slice %x {axes = [1], ends = [8], starts = [0]} : (!t) -> tensor<Bx8xf32>",
    );
    s.set_source(&broken);
    let c = s.compile();
    assert!(c.failed);
    assert_eq!(
        c.stats.count("check_slice"),
        2,
        "{:?} {}",
        c.stats,
        c.stderr
    );
    assert_eq!(c.stats.count("parse"), 1, "{:?}", c.stats);
    assert!(c.stderr.contains("m.air:10:"), "{}", c.stderr);
    // The same functions without the module around them.
    let bare = text
        .replace(
            "module @m attributes {ge.symbol_bounds = {B = 8 : i64}} {\n",
            "",
        )
        .replace("  }\n}\n", "  }\n")
        .replace("Bx16", "4x16");
    let mut s = Session::new("bare.air", &bare, &settings(CSE));
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    assert_eq!(c.stats.count("parse"), 0, "{:?}", c.stats);
    assert_eq!(c.stdout.as_str(), reference(&bare, CSE, &[]));
}

#[test]
fn atc_kernels_named_like_another_function_compile_the_module_as_a_whole() {
    let f = |name: &str, body: &str| {
        format!(
            "  graph.func @{name}(%x: tensor<4xf32>) -> tensor<4xf32> {{\n\
             \x20   %0 = graph.{body} %x : (tensor<4xf32>) -> tensor<4xf32>\n\
             \x20   %1 = graph.exp %0 : (tensor<4xf32>) -> tensor<4xf32>\n\
             \x20   graph.return %1 : tensor<4xf32>\n  }}\n"
        )
    };
    // Alone, @m's fused kernel is @m_t0_fused_neg; in the module that name
    // is taken, so emit-tasks calls it @m_t0_fused_neg_1.
    let text = format!(
        "module {{\n{}{}}}\n",
        f("m", "neg"),
        f("m_t0_fused_neg", "relu")
    );
    let mut s = Session::new("m.air", &text, &settings("atc"));
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    assert!(c.stdout.contains("@m_t0_fused_neg_1("), "{}", c.stdout);
    assert_eq!(c.stdout.as_str(), reference(&text, "atc", &[]));
}

#[test]
fn calls_and_resources_survive_the_cut_into_units() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/models/demo_block.air"),
    )
    .expect("demo_block.air");
    for p in [CSE, "atc", "builtin.module(symbol-dce)"] {
        let mut s = Session::new("demo_block.air", &text, &settings(p));
        let c = s.compile();
        assert!(!c.failed, "{p}: {}", c.stderr);
        assert_eq!(c.stdout.as_str(), reference(&text, p, &[]), "{p}");
    }
    let sq = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/models/squeezenet.air"),
    )
    .expect("squeezenet.air");
    let mut s = Session::new("squeezenet.air", &sq, &settings(CSE));
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    assert_eq!(c.stdout.as_str(), reference(&sq, CSE, &[]));
}

/// Three functions sharing blobs, listed in the file in another order than
/// the IR meets them; `f1`'s constant is dead, so canonicalize drops its
/// blob from the output.
fn blobs_module(f2_scale: &str) -> String {
    let ty = "tensor<4xf32>";
    let mut s = String::from("module {\n");
    s += &format!("  graph.func @f0(%x: {ty}) -> {ty} {{\n    %c = data.constant dense_resource<b2> : {ty}\n    %d = data.constant dense_resource<b0> : {ty}\n    %0 = graph.add %x, %c : ({ty}, {ty}) -> {ty}\n    %1 = graph.mul %0, %d : ({ty}, {ty}) -> {ty}\n    graph.return %1 : {ty}\n  }}\n");
    s += &format!("  graph.func @f1(%x: {ty}) -> {ty} {{\n    %dead = data.constant dense_resource<b3> : {ty}\n    %0 = graph.relu %x : ({ty}) -> {ty}\n    graph.return %0 : {ty}\n  }}\n");
    s += &format!("  graph.func @f2(%x: {ty}) -> {ty} {{\n    %c = data.constant dense_resource<b1> : {ty}\n    %e = data.constant dense_resource<b2> : {ty}\n    %0 = graph.{f2_scale} %x, %c : ({ty}, {ty}) -> {ty}\n    %1 = graph.add %0, %e : ({ty}, {ty}) -> {ty}\n    graph.return %1 : {ty}\n  }}\n");
    s += "}\n\n{-#\n  dialect_resources: {\n    builtin: {\n";
    let blobs: Vec<String> = (0..4)
        .map(|i| format!("      b{i}: \"0x040000000000803F{i:02X}00004000004040000080C0\""))
        .collect();
    s += &blobs.join(",\n");
    s += "\n    }\n  }\n#-}\n";
    s
}

#[test]
fn a_module_with_blobs_is_cut_per_function_and_prints_them_as_ge_opt_does() {
    let text = blobs_module("mul");
    let mut s = Session::new("blobs.air", &text, &settings(CSE));
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    let want = reference(&text, CSE, &[]);
    assert_eq!(c.stdout.as_str(), want);
    // The dead constant's blob is gone; the rest in the order the IR meets them.
    let order: Vec<usize> = ["b2:", "b0:", "b1:"]
        .iter()
        .filter_map(|b| want.find(b))
        .collect();
    assert!(
        order.len() == 3 && order.windows(2).all(|w| w[0] < w[1]),
        "{want}"
    );
    assert!(!want.contains("b3:"), "{want}");
    assert_eq!(c.units, 3, "one unit per function");
    // Editing one function re-optimises only it, and the blobs follow.
    s.set_source(&blobs_module("sub"));
    let c = s.compile();
    assert!(!c.failed, "{}", c.stderr);
    assert_eq!(c.stdout.as_str(), reference(&blobs_module("sub"), CSE, &[]));
    assert_eq!(c.stats.optimized, vec!["@f2".to_string()]);
}

#[test]
fn om_bytes_come_from_the_lowered_module() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/models/demo_block.air"),
    )
    .expect("demo_block.air");
    let mut s = Session::new("demo_block.air", &text, &settings("atc"));
    let om = s.om_bytes(None, "Ascend910B").expect("om");
    assert!(ge_om::parse(&om).is_ok());
    // Asking again is a memoized answer.
    let _ = s.take_stats();
    let again = s.om_bytes(None, "Ascend910B").expect("om");
    assert_eq!(om, again);
    assert_eq!(s.take_stats().count("om_bytes"), 0);
}

// ---- --watch ------------------------------------------------------------------

#[test]
fn watch_recompiles_each_simulated_save() {
    let dir = tempdir("watch");
    let input = dir.join("m.air");
    std::fs::write(&input, module(30, None)).expect("write");
    let v2 = dir.join("v2.air");
    std::fs::write(&v2, module(30, Some((7, 1)))).expect("write");
    let v3 = dir.join("v3.air");
    std::fs::write(&v3, module(30, Some((7, 1))) + "// only a comment\n").expect("write");
    let args = OptArgs::try_parse_from([
        "ge-opt".to_string(),
        input.display().to_string(),
        format!("--pass-pipeline={CSE}"),
        "--watch".into(),
        "--watch-iterations=3".into(),
        "--watch-poll-ms=5".into(),
        format!("--watch-simulate-edits={},{}", v2.display(), v3.display()),
        "--incremental-stats".into(),
    ])
    .expect("args");
    let mut ctx = ge_compile::context();
    let out = main_with(args, &mut ctx);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("ge-opt --watch:"))
        .collect();
    assert_eq!(lines.len(), 3, "{}", out.stderr);
    assert!(
        lines[0].contains("(30 of 30 functions re-optimised)"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("(1 of 30 functions re-optimised)"),
        "{}",
        out.stderr
    );
    assert!(
        lines[2].contains("(0 of 30 functions re-optimised)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("functions re-optimised: @f7\n"),
        "{}",
        out.stderr
    );
    // Three printed modules.
    assert_eq!(out.stdout.matches("graph.func @f29").count(), 3);
}

#[test]
fn watch_rejects_flags_it_cannot_honour() {
    let args = OptArgs::try_parse_from(["ge-opt", "x.air", "--watch", "--split-input-file"])
        .expect("args");
    let out = main_with(args, &mut ge_compile::context());
    assert_eq!(out.code, 1);
    assert!(out
        .stderr
        .contains("--watch does not support --split-input-file"));
}

// ---- the compile cache --------------------------------------------------------

fn opt(args: &[String]) -> ge_driver::opt::OptOutput {
    let mut argv = vec!["ge-opt".to_string()];
    argv.extend(args.iter().cloned());
    let args = OptArgs::try_parse_from(argv).expect("args");
    main_with(args, &mut ge_compile::context())
}

#[test]
fn cache_miss_then_hit_then_corrupt_entry_is_recompiled() {
    let dir = tempdir("cache");
    let input = dir.join("m.air");
    std::fs::write(&input, module(10, None)).expect("write");
    let cache = dir.join("cache");
    let args = vec![
        input.display().to_string(),
        format!("--pass-pipeline={CSE}"),
        format!("--cache-dir={}", cache.display()),
        "--incremental-stats".into(),
    ];
    let first = opt(&args);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(first.stderr.contains("cache: miss"), "{}", first.stderr);
    let second = opt(&args);
    assert!(second.stderr.contains("cache: hit"), "{}", second.stderr);
    assert_eq!(first.stdout, second.stdout);
    // Corrupt every entry (flip the last payload byte).
    let mut n = 0;
    for sub in std::fs::read_dir(&cache).expect("cache dir").flatten() {
        for e in std::fs::read_dir(sub.path()).expect("sub dir").flatten() {
            let mut b = std::fs::read(e.path()).expect("entry");
            let last = b.len() - 1;
            b[last] ^= 0x55;
            std::fs::write(e.path(), b).expect("write entry");
            n += 1;
        }
    }
    assert_eq!(n, 1);
    let third = opt(&args);
    assert_eq!(third.code, 0);
    assert!(third.stderr.contains("corrupt entry"), "{}", third.stderr);
    assert!(third.stderr.contains("checksum"), "{}", third.stderr);
    assert_eq!(third.stdout, first.stdout);
    // ... and stored again.
    assert!(opt(&args).stderr.contains("cache: hit"));
    // Another pipeline is another key; --no-cache bypasses.
    let mut other = args.clone();
    other[1] = "--pass-pipeline=builtin.module(graph.func(cse))".into();
    assert!(opt(&other).stderr.contains("cache: miss"));
    let mut off = args.clone();
    off.push("--no-cache".into());
    assert!(!opt(&off).stderr.contains("cache:"));
}

#[test]
fn cache_entries_reject_truncation_and_foreign_keys() {
    let dir = tempdir("entries");
    let c = CompileCache::open(&dir).expect("open");
    let k1 = KeyBuilder::new("t").field("x", b"1").finish();
    let k2 = KeyBuilder::new("t").field("x", b"2").finish();
    assert_eq!(c.get(&k1), Lookup::Miss);
    c.put(&k1, b"payload").expect("put");
    assert!(matches!(c.get(&k1), Lookup::Hit(e) if &*e == b"payload"));
    // k1's entry copied to k2's place: wrong key inside.
    std::fs::create_dir_all(c.entry_path(&k2).parent().expect("parent")).expect("dir");
    std::fs::copy(c.entry_path(&k1), c.entry_path(&k2)).expect("copy");
    assert!(matches!(c.get(&k2), Lookup::Corrupt(m) if m.contains("another key")));
    assert_eq!(c.get(&k2), Lookup::Miss, "a corrupt entry is removed");
    // Truncated.
    let p = c.entry_path(&k1);
    let b = std::fs::read(&p).expect("read");
    std::fs::write(&p, &b[..b.len() - 3]).expect("write");
    assert!(matches!(c.get(&k1), Lookup::Corrupt(_)));
}

#[test]
fn concurrent_compiles_of_one_key_in_threads() {
    let dir = tempdir("threads");
    let input = dir.join("m.air");
    std::fs::write(&input, module(40, None)).expect("write");
    let cache = dir.join("cache");
    let args = vec![
        input.display().to_string(),
        format!("--pass-pipeline={CSE}"),
        format!("--cache-dir={}", cache.display()),
    ];
    let outs: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4).map(|_| s.spawn(|| opt(&args))).collect();
        hs.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    for o in &outs {
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert_eq!(o.stdout, outs[0].stdout);
    }
    let mut a = args.clone();
    a.push("--incremental-stats".into());
    let o = opt(&a);
    assert!(o.stderr.contains("cache: hit"), "{}", o.stderr);
    // No temporary files are left behind.
    for sub in std::fs::read_dir(&cache).expect("cache").flatten() {
        for e in std::fs::read_dir(sub.path()).expect("sub").flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(!name.starts_with('.'), "left over: {name}");
        }
    }
}

#[test]
fn concurrent_compiles_of_one_key_in_processes() {
    let dir = tempdir("procs");
    let input = dir.join("m.air");
    std::fs::write(&input, module(40, None)).expect("write");
    let cache = dir.join("cache");
    let exe = env!("CARGO_BIN_EXE_ge-opt");
    let spawn = || {
        std::process::Command::new(exe)
            .arg(&input)
            .arg(format!("--pass-pipeline={CSE}"))
            .arg(format!("--cache-dir={}", cache.display()))
            .arg("--incremental-stats")
            .output()
            .expect("run ge-opt")
    };
    let outs: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..3).map(|_| s.spawn(spawn)).collect();
        hs.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    for o in &outs {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.stdout, outs[0].stdout);
    }
    let o = spawn();
    assert!(String::from_utf8_lossy(&o.stderr).contains("cache: hit"));
    assert_eq!(o.stdout, outs[0].stdout);
}
