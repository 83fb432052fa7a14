//! Equality saturation: semantics preserved on random graphs, cost never
//! grows, and e-graphs with cycles still extract to valid (acyclic) programs.

use egg::Language;
use ge_ir::attributes::Attribute;
use ge_ir::body::{OpState, ValueId};
use ge_ir::builder::{Builder, InsertPoint};
use ge_ir::interp::Interpreter;
use ge_ir::pass::{PassContext, PassOptions};
use ge_ir::tensor::Tensor;
use ge_ir::{Context, DType, Location, Module, Type};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn ctx() -> Context {
    let mut c = ge_dialects::context();
    ge_rewrites::register(&mut c);
    c
}

fn parse(ctx: &Context, text: &str) -> Module {
    ge_ir::parser::parse_module(ctx, "t.air", text, ge_ir::parser::ParseOptions::default())
        .unwrap_or_else(|d| panic!("{}", d.message))
}

/// Run `eqsat{opts}` on every function; returns the report.
fn eqsat(ctx: &Context, m: &mut Module, opts: &[(&str, &str)]) -> String {
    let info = &ge_rewrites::eqsat::pass::INFO;
    let given: Vec<(String, Option<String>)> = opts
        .iter()
        .map(|(k, v)| (k.to_string(), Some(v.to_string())))
        .chain([("report".to_string(), Some("true".to_string()))])
        .collect();
    let pass = ge_rewrites::eqsat::pass::make(&PassOptions::parse(info, &given).expect("options"))
        .expect("pass");
    let cx = PassContext {
        ctx,
        output: Default::default(),
    };
    let body = m.body_mut();
    let funcs: Vec<_> = body.all_ops(ge_ir::WalkOrder::Pre);
    for f in funcs {
        if body.op(f).name.as_str() == "graph.func" {
            pass.run(body.op_mut(f), &cx)
                .unwrap_or_else(|d| panic!("{:?}", d));
        }
    }
    let diags = ge_ir::verifier::verify_module(m);
    assert!(
        diags.is_empty(),
        "invalid IR after eqsat: {:?}",
        diags.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
    let out = cx
        .output
        .lock()
        .map(|o| o.report.clone())
        .unwrap_or_default();
    out
}

fn run(m: &Module, inputs: &[Tensor]) -> Vec<Tensor> {
    Interpreter::new(m)
        .run_function("main", inputs.to_vec())
        .unwrap_or_else(|e| panic!("{}", e.msg))
}

fn costs(report: &str) -> (f64, f64) {
    let after_cost = report.split("cost ").nth(1).expect("cost in report");
    let mut it = after_cost.split(" us -> ");
    let before: f64 = it.next().and_then(|x| x.parse().ok()).expect("before");
    let after: f64 = it
        .next()
        .and_then(|x| x.split(' ').next())
        .and_then(|x| x.parse().ok())
        .expect("after");
    (before, after)
}

#[test]
fn double_negation_makes_a_cycle_that_extraction_avoids() {
    // neg(neg(x)) = x puts neg(neg-class) in x's class: x's class reaches itself.
    let ctx = ctx();
    let text = "graph.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
      %1 = graph.neg %0 : (tensor<4xf32>) -> tensor<4xf32>
      %2 = graph.relu %1 : (tensor<4xf32>) -> tensor<4xf32>
      graph.return %2 : tensor<4xf32>
    }";
    let mut m = parse(&ctx, text);
    // The e-graph really is cyclic after saturation.
    let func = m.top_ops()[0];
    let body = m.body().inner(func).expect("body");
    let t = ge_rewrites::eqsat::build::to_egraph(&ctx, body).expect("translates");
    let rules: Vec<_> = ge_rewrites::eqsat::pass::eqsat_rules(&ctx, &["double_neg".to_string()])
        .iter()
        .map(|r| ge_rewrites::eqsat::compile::compile(&ctx, r).expect("compiles"))
        .collect();
    let runner = egg::Runner::default().with_egraph(t.egraph).run(&rules);
    let eg = &runner.egraph;
    let has_cycle = eg.classes().any(|c| {
        let mut stack: Vec<egg::Id> = c.iter().flat_map(|n| n.children().to_vec()).collect();
        let mut seen = std::collections::HashSet::new();
        while let Some(k) = stack.pop() {
            let k = eg.find(k);
            if k == c.id {
                return true;
            }
            if seen.insert(k) {
                stack.extend(eg[k].iter().flat_map(|n| n.children().to_vec()));
            }
        }
        false
    });
    assert!(has_cycle, "expected a cyclic e-graph");
    let x = Tensor::from_f64(vec![4], DType::F32, vec![-1.0, 2.0, -3.0, 4.0]);
    let before = run(&m, std::slice::from_ref(&x));
    let report = eqsat(&ctx, &mut m, &[("rules", "double_neg")]);
    let after = run(&m, std::slice::from_ref(&x));
    assert_eq!(before, after);
    let (b, a) = costs(&report);
    assert!(a < b, "{report}");
    assert_eq!(m.count_ops_named("graph.neg"), 0);
}

#[test]
fn merging_dependent_matmuls_would_cycle_and_is_filtered() {
    // TENSAT's case: the second matmul's weight depends on the first matmul,
    // so the merged kernel would need its own output. Extraction must keep a
    // valid order.
    let ctx = ctx();
    let text = "graph.func @main(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
      %0 = graph.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      %1 = graph.relu %0 : (tensor<4x4xf32>) -> tensor<4x4xf32>
      %2 = graph.matmul %x, %1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      %3 = graph.add %2, %0 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      graph.return %3 : tensor<4x4xf32>
    }";
    let mut m = parse(&ctx, text);
    let mut rng = SmallRng::seed_from_u64(1);
    let inputs: Vec<Tensor> = (0..2)
        .map(|_| {
            Tensor::from_f64(
                vec![4, 4],
                DType::F32,
                (0..16).map(|_| rng.random_range(-1.0..1.0)).collect(),
            )
        })
        .collect();
    let before = run(&m, &inputs);
    eqsat(
        &ctx,
        &mut m,
        &[(
            "rules",
            "merge_matmuls,slice_concat_first,slice_concat_second",
        )],
    );
    let after = run(&m, &inputs);
    for (a, b) in before.iter().zip(&after) {
        assert_eq!(b.mismatch(a, 1e-5, 1e-6), None);
    }
}

/// A random graph of square f32 ops (so every op composes with every value).
fn random_module(ctx: &Context, seed: u64) -> Module {
    let mut rng = SmallRng::seed_from_u64(seed);
    let n = rng.random_range(2..=4);
    let ty = Type::tensor_static(&[n, n], DType::F32);
    let mut m = Module::new(ctx, Location::unknown());
    let block = m.block();
    let mut st = OpState::new("graph.func", Location::unknown());
    st.def = ctx.op_def("graph.func");
    st.num_regions = 1;
    let body = m.body_mut();
    let f = body.create_op(st);
    body.append_op(block, f);
    let inner = body.inner_mut(f).expect("isolated");
    let r = inner.root_regions()[0];
    let entry = inner.add_block(r);
    let nargs = rng.random_range(1..=3);
    let mut vals: Vec<ValueId> = (0..nargs)
        .map(|_| inner.add_block_arg(entry, ty, Location::unknown()))
        .collect();
    let mut b = Builder::new(ctx, inner, InsertPoint::End(entry));
    let ops = [
        "graph.add",
        "graph.mul",
        "graph.sub",
        "graph.matmul",
        "graph.relu",
        "graph.neg",
        "graph.exp",
        "data.transpose",
    ];
    for _ in 0..rng.random_range(3..12) {
        let name = ops[rng.random_range(0..ops.len())];
        let a = vals[rng.random_range(0..vals.len())];
        let v = match name {
            "graph.relu" | "graph.neg" | "graph.exp" => b.create_value(name, &[a], vec![]),
            "data.transpose" => {
                b.create_value(name, &[a], vec![("perm", Attribute::i64_array(&[1, 0]))])
            }
            _ => {
                let c = vals[rng.random_range(0..vals.len())];
                b.create_value(name, &[a, c], vec![])
            }
        };
        vals.push(v.expect("valid op"));
    }
    let out = *vals.last().expect("a value");
    b.create("graph.return", &[out], vec![], Some(vec![]), 0)
        .expect("return");
    let in_types = vec![ty; nargs];
    let body = m.body_mut();
    body.set_attr(f, "sym_name", Attribute::string("main"));
    body.set_attr(
        f,
        "function_type",
        Attribute::ty(Type::function(&in_types, &[ty])),
    );
    m
}

/// Cases: `PROPTEST_CASES` when set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    // 256 random graphs take ~20 s in a debug build on 2 busy cores.
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]
    #[test]
    fn eqsat_preserves_semantics_and_never_raises_cost(seed in any::<u64>()) {
        let ctx = ctx();
        let mut m = random_module(&ctx, seed);
        let (ins, _) = Interpreter::new(&m).signature("main").expect("main");
        let mut rng = SmallRng::seed_from_u64(seed ^ 7);
        let inputs: Vec<Tensor> = ins.iter().map(|t| {
            let s: Vec<usize> = t.as_tensor().and_then(|t| t.static_shape()).unwrap_or_default().iter().map(|&d| d as usize).collect();
            let k = s.iter().product();
            Tensor::from_f64(s, DType::F32, (0..k).map(|_| rng.random_range(-1.0..1.0)).collect())
        }).collect();
        let before = run(&m, &inputs);
        let report = eqsat(&ctx, &mut m, &[("node-limit", "3000"), ("iter-limit", "8"), ("time-limit-ms", "1000")]);
        let after = run(&m, &inputs);
        for (a, b) in before.iter().zip(&after) {
            let why = b.mismatch(a, 1e-4, 1e-5);
            prop_assert!(why.is_none(), "results differ ({:?}):\n{:?}\n{:?}", why, a.to_f64(), b.to_f64());
        }
        let (cb, ca) = costs(&report);
        prop_assert!(ca <= cb + 1e-9, "{}", report);
    }
}
