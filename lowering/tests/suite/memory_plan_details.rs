//! Details of plan-memory that the property tests do not pin down (each test
//! here was added for a mutant cargo-mutants found surviving; docs/testing.md,
//! "Measuring test strength").

use crate::common;

use common::{parse, print, run};

/// A concat's second slice starts 32 bytes into its buffer: the arena the
/// slices live in can only promise 32-byte alignment, not the planned 64
/// (`set_arena_alignments`). Without the lowering every arena says 64.
#[test]
fn view_slices_lower_the_arena_alignment() {
    let mut m = parse(
        r#"
graph.func @f(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<16xf32> {
  %a = graph.relu %x : (tensor<8xf32>) -> tensor<8xf32>
  %b = graph.sigmoid %y : (tensor<8xf32>) -> tensor<8xf32>
  %c = data.concat %a, %b {axis = 0} : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
  graph.return %c : tensor<16xf32>
}
"#,
    );
    run(&mut m, "builtin.module(plan-memory, verify-memory)").unwrap();
    let out = print(&m);
    let arena = |role: &str| {
        out.lines()
            .find(|l| l.contains("memory.arena") && l.contains(&format!("ge.role = \"{role}\"")))
            .unwrap_or_else(|| panic!("no {role} arena in\n{out}"))
            .to_string()
    };
    // The inputs keep the planned 64; the output arena holding both slices
    // is lowered to 32, memory.arena's default, which the printer elides.
    assert!(arena("input").contains("alignment = 64 : i64"), "{out}");
    assert!(!arena("output").contains("alignment ="), "{out}");
}

/// `symbol-bounds=B=8` plans a symbolic dim at 8 (4 f32 per row: 128
/// bytes) and records the bound on the arena; a bound must be positive.
/// (lit-tests/lowering/options.air runs the same through ge-opt.)
#[test]
fn symbol_bounds_option_sets_the_planned_size() {
    let text = r#"
graph.func @main(%x: tensor<Bx4xf32>) -> tensor<Bx4xf32> {
  %r = graph.relu %x : (tensor<Bx4xf32>) -> tensor<Bx4xf32>
  graph.return %r : tensor<Bx4xf32>
}
"#;
    let mut m = parse(text);
    run(
        &mut m,
        "builtin.module(plan-memory{symbol-bounds=B=8}, verify-memory)",
    )
    .unwrap();
    let out = print(&m);
    assert!(
        out.contains("ge.role = \"input\", size = 128 : i64, symbol_bounds = {B = 8 : i64}"),
        "{out}"
    );
    for bad in ["0", "-3", "x"] {
        let e = run(
            &mut parse(text),
            &format!("builtin.module(plan-memory{{symbol-bounds=B={bad}}})"),
        )
        .expect_err(bad);
        assert!(
            e.contains(&format!(
                "bound of 'B' must be a positive integer, got '{bad}'"
            )),
            "{e}"
        );
    }
}

/// Without a stream limit every chain of the cover gets its own stream, even
/// chains that cost nothing (views): packing by cost is only for more chains
/// than allowed streams; packing two zero-cost chains would put both on the
/// least loaded stream, the same one.
#[test]
fn chains_keep_their_streams_when_they_fit() {
    use ge_lowering::chain_cover::{assign, StreamOptions};
    let deps = vec![vec![], vec![]];
    for max_streams in [0, 2] {
        let p = assign(
            &deps,
            &[0.0, 0.0],
            &StreamOptions {
                max_streams,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(p.min_streams, 2);
        assert_eq!(p.num_streams, 2, "max_streams {max_streams}: {p:?}");
        assert_ne!(p.stream[0], p.stream[1], "max_streams {max_streams}: {p:?}");
    }
}

/// A split's second half is a view 32 bytes into its input's buffer: that
/// arena, too, can only promise 32-byte alignment (the view arm of
/// `set_arena_alignments`; the concat test above covers the store arm).
#[test]
fn split_views_lower_the_arena_alignment() {
    let mut m = parse(
        r#"
graph.func @f(%x: tensor<16xf32>) -> tensor<8xf32> {
  %a = graph.relu %x : (tensor<16xf32>) -> tensor<16xf32>
  %s:2 = data.split %a {axis = 0, num_outputs = 2} : (tensor<16xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  %m = graph.mul %s#0, %s#1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  graph.return %m : tensor<8xf32>
}
"#,
    );
    run(&mut m, "builtin.module(plan-memory, verify-memory)").unwrap();
    let out = print(&m);
    let ws = out
        .lines()
        .find(|l| l.contains("memory.arena") && l.contains("ge.role = \"workspace\""))
        .unwrap_or_else(|| panic!("no workspace arena in\n{out}"));
    assert!(!ws.contains("alignment ="), "{out}");
}

/// In place: a pointwise task whose input dies there writes over it, so the
/// four-op chain needs two 64-byte buffers, not three (`no_reuse` counts the
/// buffers after in-place merging; lit-tests/lowering/plan-memory.air @chain).
#[test]
fn in_place_merges_a_dying_input_of_the_same_type() {
    let text = r#"
graph.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = graph.neg %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = graph.exp %a : (tensor<16xf32>) -> tensor<16xf32>
  %c = graph.sigmoid %b : (tensor<16xf32>) -> tensor<16xf32>
  %d = graph.add %c, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  graph.return %d : tensor<16xf32>
}
"#;
    for (in_place, no_reuse) in [(true, 128), (false, 192)] {
        let mut m = parse(text);
        run(
            &mut m,
            &format!("builtin.module(plan-memory{{in-place={in_place}}}, verify-memory)"),
        )
        .unwrap();
        let out = print(&m);
        assert!(
            out.contains(&format!("no_reuse = {no_reuse} : i64")),
            "in-place={in_place}: {out}"
        );
    }
}

/// verify-memory on a hand-made plan (lit-tests/lowering/verify-memory.air
/// @good and @clobber): the good plan passes; in the bad one the exp writes
/// over a buffer the add still reads, and the message names both.
#[test]
fn verify_memory_accepts_a_good_plan_and_finds_a_clobber() {
    let head = r#"
graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %in = memory.arena {size = 64, ge.role = "input", ge.index = 0} : !memory.arena
  %out = memory.arena {size = 64, ge.role = "output", ge.index = 0} : !memory.arena
  %ws = memory.arena {size = 64, ge.role = "workspace"} : !memory.arena
  %i1 = memory.store %x into %in[0] {ge.buffer = 0} : tensor<4xf32>
  %v0 = memory.view %i1[0] {ge.buffer = 0} : tensor<4xf32>
  %a = graph.neg %v0 {ge.stream = 0} : (tensor<4xf32>) -> tensor<4xf32>
  %w1 = memory.store %a into %ws[0] {ge.buffer = 1} : tensor<4xf32>
  %v1 = memory.view %w1[0] {ge.buffer = 1} : tensor<4xf32>
  %b = graph.exp %v1 {ge.stream = 0} : (tensor<4xf32>) -> tensor<4xf32>
  %w2 = memory.store %b into %w1[0] {ge.buffer = 2} : tensor<4xf32>
  %v2 = memory.view %w2[0] {ge.buffer = 2} : tensor<4xf32>
"#;
    let good = format!(
        "{head}  %c = graph.relu %v2 {{ge.stream = 0}} : (tensor<4xf32>) -> tensor<4xf32>\n{}",
        "  %o1 = memory.store %c into %out[0] {ge.buffer = 3} : tensor<4xf32>\n  %y = memory.view %o1[0] {ge.buffer = 3} : tensor<4xf32>\n  graph.return %y : tensor<4xf32>\n}\n"
    );
    run(&mut parse(&good), "builtin.module(verify-memory)").unwrap();
    let bad = format!(
        "{head}  %v3 = memory.view %w2[0] {{ge.buffer = 1}} : tensor<4xf32>\n  %c = graph.add %v2, %v3 {{ge.stream = 0}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n{}",
        "  %o1 = memory.store %c into %out[0] {ge.buffer = 3} : tensor<4xf32>\n  %y = memory.view %o1[0] {ge.buffer = 3} : tensor<4xf32>\n  graph.return %y : tensor<4xf32>\n}\n"
    );
    let e = run(&mut parse(&bad), "builtin.module(verify-memory)").expect_err("clobber");
    assert!(
        e.contains("'graph.add'")
            && e.contains("reads buffer #1")
            && e.contains("written by 'graph.exp'"),
        "{e}"
    );
}
