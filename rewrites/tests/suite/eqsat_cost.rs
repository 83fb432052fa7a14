//! eqsat's cost model against the roofline it claims: a memory-bound op costs
//! one launch plus its bytes over the SoC's bandwidth. Added for a mutant
//! cargo-mutants found surviving (docs/testing.md, "Measuring test
//! strength"): the other eqsat tests compare costs only with each other, so
//! a model that ignored bytes altogether passed them.

use ge_dialects::graph::func::Func;
use ge_ir::pass::{PassContext, PassOptions};
use ge_soc::Soc;

/// The cost eqsat reports for `@f` before rewriting (µs).
fn cost_before(text: &str) -> f64 {
    let mut ctx = ge_dialects::context();
    ge_rewrites::register(&mut ctx);
    let mut m = ge_ir::parser::parse_module(&ctx, "t.air", text, Default::default())
        .unwrap_or_else(|d| panic!("{}", d.message));
    let info = &ge_rewrites::eqsat::pass::INFO;
    let given = vec![("report".to_string(), Some("true".to_string()))];
    let pass = ge_rewrites::eqsat::pass::make(&PassOptions::parse(info, &given).expect("options"))
        .expect("pass");
    let cx = PassContext {
        ctx: &ctx,
        output: Default::default(),
    };
    let body = m.body_mut();
    for f in body.all_ops(ge_ir::WalkOrder::Pre) {
        if Func::is(body.op(f)) {
            pass.run(body.op_mut(f), &cx)
                .unwrap_or_else(|d| panic!("{d:?}"));
        }
    }
    let report = cx
        .output
        .lock()
        .map(|o| o.report.clone())
        .unwrap_or_default();
    let after = report
        .split("cost ")
        .nth(1)
        .unwrap_or_else(|| panic!("no cost in {report:?}"));
    after
        .split(" us -> ")
        .next()
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("no cost in {report:?}"))
}

#[test]
fn a_memory_bound_op_costs_its_bytes_over_the_bandwidth() {
    let soc = Soc::load("Ascend910B").expect("soc");
    // 2^20 f32 elements: 4 MiB per operand and result, 12 MiB moved; the
    // 2^20 additions take far less time than that on the vector unit.
    let text = r#"
graph.func @f(%x: tensor<1024x1024xf32>, %y: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = graph.add %x, %y : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  graph.return %0 : tensor<1024x1024xf32>
}
"#;
    let want = soc.task_launch_us + (12 << 20) as f64 / soc.bytes_per_us();
    let got = cost_before(text);
    assert!(
        (got - want).abs() < 2e-3,
        "cost {got} us, roofline {want} us"
    );
    // An f16 add moves half the bytes.
    let half = cost_before(&text.replace("f32", "f16"));
    let want = soc.task_launch_us + (6 << 20) as f64 / soc.bytes_per_us();
    assert!(
        (half - want).abs() < 2e-3,
        "f16 cost {half} us, roofline {want} us"
    );
}
