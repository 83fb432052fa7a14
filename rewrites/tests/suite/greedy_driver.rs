//! The greedy driver's options as a pipeline sets them. Added for a mutant
//! cargo-mutants found surviving the crate's other tests (docs/testing.md,
//! "Measuring test strength"): `test-convergence` was only exercised by lit.

use ge_ir::pass::{parse_pipeline, run_pipeline, Instrumentation, PassContext, PassManagerOptions};
use ge_ir::Context;

fn ctx() -> Context {
    let mut c = ge_dialects::context();
    ge_rewrites::register(&mut c);
    c
}

/// Run `pipeline` on `text`: the printed module or the diagnostics.
fn run(text: &str, pipeline: &str) -> Result<String, String> {
    let ctx = ctx();
    let mut m = ge_ir::parser::parse_module(&ctx, "t.air", text, Default::default())
        .unwrap_or_else(|d| panic!("{}", d.message));
    let pm = parse_pipeline(&ctx.passes, pipeline).map_err(|e| e.message)?;
    let cx = PassContext {
        ctx: &ctx,
        output: Default::default(),
    };
    let opts = PassManagerOptions {
        threading: false,
        ..Default::default()
    };
    run_pipeline(&pm, &mut m, &cx, &opts, &Instrumentation::default()).map_err(|ds| {
        ds.iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    Ok(ge_ir::printer::print_module(&m, Default::default()))
}

const TWO_CHAINS: &str = r#"
graph.func @two_chains(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.neg %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.neg %y : (tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.neg %2 : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %1, %3 : tensor<4xf32>, tensor<4xf32>
}
"#;

/// A run that reaches a fixed point passes the extra `test-convergence`
/// iteration (which finds nothing left to do) and gives the same IR as a run
/// without it.
#[test]
fn test_convergence_accepts_a_fixed_point() {
    let plain = run(TWO_CHAINS, "builtin.module(graph.func(canonicalize))").unwrap();
    assert!(!plain.contains("graph.neg"), "{plain}");
    let tested = run(
        TWO_CHAINS,
        "builtin.module(graph.func(canonicalize{test-convergence=true}))",
    )
    .unwrap_or_else(|e| panic!("a converged run was refused: {e}"));
    assert_eq!(tested, plain);
}

/// A run cut short by `max-iterations` (neg(neg(x)) needs a second
/// iteration to see nothing is left) is refused under `test-convergence`,
/// naming the limit; without it, it stops with the work done so far.
#[test]
fn test_convergence_refuses_a_run_cut_short() {
    run(
        TWO_CHAINS,
        "builtin.module(graph.func(canonicalize{max-iterations=1}))",
    )
    .unwrap();
    let e = run(
        TWO_CHAINS,
        "builtin.module(graph.func(canonicalize{max-iterations=1 test-convergence=true}))",
    )
    .expect_err("a run stopped by max-iterations is not a fixed point");
    assert!(e.contains("did not converge in 1 iterations"), "{e}");
}

/// Two equal constants in the entry block, each used once.
const TWO_ONES: &str = r#"
graph.func @share(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = data.constant dense<1.0> : tensor<4xf32>
  %b = data.constant dense<1.0> : tensor<4xf32>
  %0 = graph.sub %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.sub %y, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  graph.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
"#;

/// Whatever constant sharing does in either walk order, its result is a
/// fixed point: the `test-convergence` iteration changes nothing. (A
/// representative constant that moved to the earlier copy without merging
/// the later one would merge it only on a later visit.) Top-down, the later
/// copy is merged into the earlier one.
#[test]
fn constant_sharing_reaches_a_fixed_point_in_both_orders() {
    for top_down in [true, false] {
        let out = run(
            TWO_ONES,
            &format!(
                "builtin.module(graph.func(canonicalize{{top-down={top_down} test-convergence=true}}))"
            ),
        )
        .unwrap_or_else(|e| panic!("top-down={top_down}: {e}"));
        if top_down {
            assert_eq!(out.matches("data.constant").count(), 1, "{out}");
        }
    }
}
