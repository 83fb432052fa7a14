//! eqsat runs on every model of the zoo (testdata/models) and every other
//! .air file under testdata/, and keeps what each function computes: `main`
//! gives the same results in the reference interpreter before and after, on
//! seeded random inputs. (Calls, control flow and other ops eqsat does not
//! model are opaque nodes; before, a function with a `graph.call` failed.)

use ge_ir::interp::Interpreter;
use ge_ir::pass::{parse_pipeline, run_pipeline, Instrumentation, PassContext, PassManagerOptions};
use ge_ir::tensor::Tensor;
use ge_ir::{Context, DType, Dim, Module, Type};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};

fn ctx() -> Context {
    let mut c = Context::new();
    ge_dialects::register(&mut c);
    ge_rewrites::register(&mut c);
    c
}

/// Every .air file under `dir`, sorted.
fn air_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            air_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "air") {
            out.push(p);
        }
    }
}

/// Seeded inputs for a signature: symbolic dims 1, floats in [-1, 1),
/// booleans either way, other integers in [1, 3) (non-zero divisors, valid
/// indices for every file here).
fn inputs(types: &[Type], seed: u64) -> Vec<Tensor> {
    let mut rng = SmallRng::seed_from_u64(seed);
    types
        .iter()
        .map(|t| {
            let tt = t.as_tensor().expect("tensor input");
            let shape: Vec<usize> = tt
                .shape()
                .iter()
                .map(|d| match d {
                    Dim::Static(n) => *n as usize,
                    _ => 1,
                })
                .collect();
            let n: usize = shape.iter().product();
            if tt.dtype.is_float() {
                Tensor::from_f64(
                    shape,
                    tt.dtype,
                    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect(),
                )
            } else {
                let range = if tt.dtype == DType::I1 { 0..2 } else { 1..3 };
                Tensor::from_i64(
                    shape,
                    tt.dtype,
                    (0..n).map(|_| rng.random_range(range.clone())).collect(),
                )
            }
        })
        .collect()
}

fn run_main(m: &Module, ins: &[Tensor]) -> Result<Vec<Tensor>, String> {
    Interpreter::new(m)
        .run_function("main", ins.to_vec())
        .map_err(|e| e.to_diagnostic().message)
}

#[test]
fn eqsat_preserves_every_testdata_file() {
    let ctx = ctx();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut files = vec![];
    air_files(&root, &mut files);
    assert!(files.len() > 100, "testdata has {} .air files", files.len());
    // Generous time per function so the test exercises saturation, not the
    // clock; the result must be right whatever the limits cut.
    let pm = parse_pipeline(
        &ctx.passes,
        "builtin.module(graph.func(eqsat{time-limit-ms=5000}))",
    )
    .expect("pipeline");
    let mut failures = vec![];
    for path in &files {
        let name = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        let text = std::fs::read_to_string(path).expect("readable");
        let mut m =
            ge_ir::parser::parse_module(&ctx, &name, &text, ge_ir::parser::ParseOptions::default())
                .unwrap_or_else(|d| panic!("{name}: {}", d.message));
        let sig = Interpreter::new(&m)
            .signature("main")
            .map(|(i, _)| i.to_vec());
        let ins = sig.as_deref().map(|s| inputs(s, 7));
        let before = ins.as_ref().map(|ins| run_main(&m, ins));
        let cx = PassContext {
            ctx: &ctx,
            output: Default::default(),
        };
        if let Err(ds) = run_pipeline(
            &pm,
            &mut m,
            &cx,
            &PassManagerOptions::default(),
            &Instrumentation::default(),
        ) {
            let msgs: Vec<_> = ds.iter().map(|d| d.message.clone()).collect();
            failures.push(format!("{name}: eqsat failed: {msgs:?}"));
            continue;
        }
        let diags = ge_ir::verifier::verify_module(&m);
        if diags.iter().any(|d| d.is_error()) {
            let msgs: Vec<_> = diags.iter().map(|d| d.message.clone()).collect();
            failures.push(format!("{name}: invalid IR after eqsat: {msgs:?}"));
            continue;
        }
        let (Some(ins), Some(before)) = (ins, before) else {
            continue;
        };
        let before = match before {
            Ok(b) => b,
            Err(e) => panic!("{name}: the input program does not run on these inputs: {e}"),
        };
        match run_main(&m, &ins) {
            Err(e) => failures.push(format!("{name}: no longer runs after eqsat: {e}")),
            Ok(after) => {
                for (i, (b, a)) in before.iter().zip(&after).enumerate() {
                    if !a.allclose(b, 1e-3, 1e-4) {
                        failures.push(format!("{name}: output #{i} differs after eqsat"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
