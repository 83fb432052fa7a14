//! Details of plan-memory that the property tests do not pin down (each test
//! here was added for a mutant cargo-mutants found surviving; docs/testing.md,
//! "Measuring test strength").

mod common;

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
