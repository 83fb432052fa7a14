//! Random graphs over two symbolic dims (`B`, `S`) whose intermediate shapes
//! are dim expressions — `(B*S)x8` from a reshape to a symbolic target,
//! `Bx(2*S)x8` from a concat, `SxBx8` from a transpose — compile once and
//! then run at random concrete shapes, equal to the reference interpreter at
//! those shapes. Without bounds (issue 15 item 2) the same graphs compile
//! with no flag and run at sizes beyond the compile-time sample (64): the
//! workspace is planned per concrete shape at run time.

use crate::common;
use common::*;
use ge_compile::{compile_text, CompileOptions};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

const C: usize = 8;

/// A random op chain from `x: tensor<BxSx8xf32>`; every value is
/// `tensor<BxSx8xf32>` between steps, through shapes with expressions.
/// [`random_graph`], with `ge.symbol_bounds` (B <= 4, S <= 6) or without.
fn random_graph_with(seed: u64, bounded: bool) -> String {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let t = format!("tensor<BxSx{C}xf32>");
    let mut body = String::new();
    let mut n = 0;
    let mut fresh = |body: &mut String, rhs: String| {
        let v = format!("%v{n}");
        n += 1;
        body.push_str(&format!("    {v} = {rhs}\n"));
        v
    };
    let mut x = "%x".to_string();
    for _ in 0..rng.random_range(2..=7) {
        x = match rng.random_range(0..5) {
            0 => {
                let op = ["relu", "tanh", "sigmoid", "abs"][rng.random_range(0..4)];
                fresh(&mut body, format!("graph.{op} {x} : ({t}) -> {t}"))
            }
            1 => {
                // Merge then split again, both with symbolic targets.
                let m = format!("tensor<(B*S)x{C}xf32>");
                let a = fresh(
                    &mut body,
                    format!(
                        "data.reshape {x} {{shape = [], sym_shape = \"(B*S)x{C}\"}} : ({t}) -> {m}"
                    ),
                );
                let b = fresh(&mut body, format!("graph.sigmoid {a} : ({m}) -> {m}"));
                fresh(
                    &mut body,
                    format!(
                        "data.reshape {b} {{shape = [], sym_shape = \"BxSx{C}\"}} : ({m}) -> {t}"
                    ),
                )
            }
            2 => {
                let s = format!("tensor<SxBx{C}xf32>");
                let a = fresh(
                    &mut body,
                    format!("data.transpose {x} {{perm = [1, 0, 2]}} : ({t}) -> {s}"),
                );
                let b = fresh(&mut body, format!("graph.tanh {a} : ({s}) -> {s}"));
                fresh(
                    &mut body,
                    format!("data.transpose {b} {{perm = [1, 0, 2]}} : ({s}) -> {t}"),
                )
            }
            3 => {
                // Bx(2*S)x8, split into [B, 2, S, 8] and summed over the 2.
                let y = format!("tensor<Bx(2*S)x{C}xf32>");
                let z = format!("tensor<Bx2xSx{C}xf32>");
                let a = fresh(
                    &mut body,
                    format!("data.concat {x}, {x} {{axis = 1 : i64}} : ({t}, {t}) -> {y}"),
                );
                let b = fresh(
                    &mut body,
                    format!(
                        "data.reshape {a} {{shape = [], sym_shape = \"Bx2xSx{C}\"}} : ({y}) -> {z}"
                    ),
                );
                fresh(
                    &mut body,
                    format!("graph.reduce_sum {b} {{axes = [1], keepdims = 0}} : ({z}) -> {t}"),
                )
            }
            _ => {
                let r: Vec<String> = (0..C)
                    .map(|_| format!("{:.3}", rng.random_range(-1.0..1.0)))
                    .collect();
                let c = fresh(
                    &mut body,
                    format!("data.constant dense<[{}]> : tensor<{C}xf32>", r.join(", ")),
                );
                fresh(
                    &mut body,
                    format!("graph.add {x}, {c} : ({t}, tensor<{C}xf32>) -> {t}"),
                )
            }
        };
    }
    let attrs = if bounded {
        " attributes {ge.symbol_bounds = {B = 4 : i64, S = 6 : i64}}"
    } else {
        ""
    };
    format!(
        "module{attrs} {{\n  graph.func @main(%x: {t}) -> {t} {{\n{body}    graph.return {x} : {t}\n  }}\n}}\n"
    )
}

/// Compile `random_graph_with(seed, bounded)` once and run it at each
/// `(B, S)`, equal to the interpreter there.
fn compile_once_run_at(
    seed: u64,
    bounded: bool,
    fuse: bool,
    shapes: &[(i64, i64)],
) -> Result<(), TestCaseError> {
    let text = random_graph_with(seed, bounded);
    let opts = CompileOptions {
        fuse,
        ..Default::default()
    };
    let om = compile_text("random", &text, &opts)
        .map_err(|e| TestCaseError::fail(format!("compile: {e}\n{text}")))?;
    prop_assert_eq!(
        om.def.replan.is_some(),
        !bounded,
        "replan section\n{}",
        text
    );
    let bytes = ge_compile::to_bytes(&om).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let model = load(&bytes, 1);
    let (types, m) = signature(&text, "main");
    for &(b, s) in shapes {
        let ins = random_inputs(&types, &[("B", b), ("S", s)], seed ^ (b * 31 + s) as u64);
        let want = interpret(&m, "main", &ins);
        let got = run(&model, &ins);
        prop_assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            let c = closeness(g, w, 1e-3, 1e-4);
            prop_assert!(c <= 1.0, "B={} S={}: closeness {:.3}\n{}", b, s, c, text);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn symbolic_graphs_compile_once_and_match_the_interpreter(
        seed in 0u64..10_000,
        fuse in any::<bool>(),
        shapes in proptest::collection::vec((1i64..=4, 1i64..=6), 1..4),
    ) {
        compile_once_run_at(seed, true, fuse, &shapes)?;
    }

    /// No bounds: planned per shape at run time, at sizes beyond the
    /// compile-time sample (64) too.
    #[test]
    fn unbounded_graphs_compile_without_bounds_and_match_at_any_size(
        seed in 0u64..10_000,
        fuse in any::<bool>(),
        shapes in proptest::collection::vec((1i64..=70, 1i64..=70), 1..4),
    ) {
        compile_once_run_at(seed, false, fuse, &shapes)?;
    }
}

/// The runtime's checks of a per-shape plan fail on a replan section that
/// lies: a unit smaller than its buffers, a workspace buffer in no unit.
#[test]
fn a_lying_replan_section_is_refused_at_run_time() {
    let text = "module {\n  graph.func @main(%x: tensor<Bx16xf32>) -> tensor<Bx16xf32> {\n    %a = graph.relu %x : (tensor<Bx16xf32>) -> tensor<Bx16xf32>\n    %b = graph.exp %a : (tensor<Bx16xf32>) -> tensor<Bx16xf32>\n    %c = graph.add %a, %b : (tensor<Bx16xf32>, tensor<Bx16xf32>) -> tensor<Bx16xf32>\n    graph.return %c : tensor<Bx16xf32>\n  }\n}\n";
    // Unfused: the relu and the exp write workspace buffers.
    let opts = CompileOptions {
        fuse: false,
        ..Default::default()
    };
    let om = compile_text("lying", text, &opts).expect("compile");
    assert!(!om.def.replan.as_ref().expect("replan").units.is_empty());
    let (types, _) = signature(text, "main");
    let ins: Vec<ge_runtime::HostTensor> = random_inputs(&types, &[("B", 100)], 1)
        .iter()
        .map(ge_runtime::HostTensor::from_tensor)
        .collect();
    let run_with = |om: &ge_om::OmModel| -> Result<(), String> {
        let bytes = ge_compile::to_bytes(om).map_err(|e| e.to_string())?;
        let model = ge_runtime::Model::from_bytes(&bytes, &Default::default())
            .map_err(|e| e.to_string())?;
        model
            .session()
            .run(&ins)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    run_with(&om).expect("the honest model runs");
    let mut small = om.clone();
    for u in &mut small.def.replan.as_mut().expect("replan").units {
        u.ty = "tensor<16xf32>".into();
    }
    let e = run_with(&small).expect_err("units too small");
    assert!(e.contains("does not lie inside its unit"), "{e}");
    let mut lost = om.clone();
    lost.def.replan.as_mut().expect("replan").buffers.clear();
    let e = run_with(&lost).expect_err("buffers in no unit");
    assert!(e.contains("belongs to no planned unit"), "{e}");
}

/// With unbounded symbols a plan is built once per concrete shape and then
/// taken from the cache.
#[test]
fn per_shape_plans_are_built_once() {
    let text = random_graph_with(7, false);
    let om = compile_text("cached", &text, &CompileOptions::default()).expect("compile");
    let model = load(&ge_compile::to_bytes(&om).expect("bytes"), 1);
    let (types, _) = signature(&text, "main");
    let session = model.session();
    for (b, s) in [(3, 5), (90, 2), (3, 5), (90, 2), (3, 5)] {
        let ins: Vec<ge_runtime::HostTensor> = random_inputs(&types, &[("B", b), ("S", s)], 1)
            .iter()
            .map(ge_runtime::HostTensor::from_tensor)
            .collect();
        session.run(&ins).expect("runs");
    }
    assert_eq!(session.plans_built(), 2);
}
