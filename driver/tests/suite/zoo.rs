//! The committed tiny zoo models are exactly what `ge-zoo` generates, verify,
//! and run in the reference interpreter at B = 1 (and B = 2) with finite
//! results.

use ge_driver::zoo::{generate, net::SplitMix64, Size, DEFAULT_SEED, MODELS};
use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use ge_ir::{Dim, Ident, Type};
use std::collections::HashMap;
use std::path::PathBuf;

fn models_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/models")
}

#[test]
fn committed_tiny_models_regenerate_byte_for_byte() {
    let mut stale = vec![];
    for m in MODELS {
        let g = generate(m, Size::Tiny, DEFAULT_SEED, "").expect("the model builds");
        let path = models_dir().join(format!("{}.air", m.name));
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        if on_disk != g.text {
            stale.push(m.name);
        }
        // Deterministic within a process too.
        let again = generate(m, Size::Tiny, DEFAULT_SEED, "").expect("builds again");
        assert!(again.text == g.text, "{}: two generations differ", m.name);
    }
    assert!(
        stale.is_empty(),
        "testdata/models is stale for {stale:?}; run `cargo run -p ge-driver --bin ge-zoo`"
    );
}

/// Seeded inputs for a signature with `B` bound: floats in [-1, 1), integer
/// ids in [0, 10) (every tiny vocabulary is larger).
fn inputs(types: &[Type], batch: i64, seed: u64) -> Vec<Tensor> {
    let binds: HashMap<Ident, i64> = [(Ident::new("B"), batch)].into_iter().collect();
    let mut rng = SplitMix64::new(seed);
    types
        .iter()
        .map(|t| {
            let tt = t.as_tensor().expect("tensor input");
            let shape: Vec<usize> = tt
                .shape()
                .iter()
                .map(|d: &Dim| d.eval(&binds).expect("only B is symbolic") as usize)
                .collect();
            let n: usize = shape.iter().product();
            if tt.dtype.is_float() {
                Tensor::from_f64(
                    shape,
                    tt.dtype,
                    (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect(),
                )
            } else {
                Tensor::from_i64(
                    shape,
                    tt.dtype,
                    (0..n).map(|_| (rng.next_u64() % 10) as i64).collect(),
                )
            }
        })
        .collect()
}

#[test]
fn committed_tiny_models_verify_and_run() {
    let ctx = ge_compile::context();
    for m in MODELS {
        let path = models_dir().join(format!("{}.air", m.name));
        let text = std::fs::read_to_string(&path).expect("committed model");
        let module = ge_ir::parser::parse_module(
            &ctx,
            m.name,
            &text,
            ge_ir::parser::ParseOptions::default(),
        )
        .unwrap_or_else(|d| panic!("{}: {}", m.name, d.message));
        let diags = ge_ir::verifier::verify_module(&module);
        assert!(
            !diags.iter().any(|d| d.is_error()),
            "{}: {:?}",
            m.name,
            diags.iter().map(|d| &d.message).collect::<Vec<_>>()
        );
        let bounds = module
            .outer
            .op(module.op)
            .attr("ge.symbol_bounds")
            .and_then(|a| a.as_dict())
            .and_then(|d| d.get("B"))
            .and_then(|a| a.as_int());
        assert_eq!(bounds, Some(64), "{}: B <= 64", m.name);
        let interp = Interpreter::new(&module);
        let (ins, outs) = interp.signature("main").expect("@main");
        assert!(
            ins.iter().all(|t| t
                .as_tensor()
                .is_some_and(|tt| tt.shape().first() == Some(&Dim::sym("B")))),
            "{}: every input has batch dim B",
            m.name
        );
        let batches: &[i64] = if matches!(m.name, "resnet50" | "bert_base" | "nasrnn") {
            &[1, 2]
        } else {
            &[1]
        };
        for &batch in batches {
            let results = interp
                .run_function("main", inputs(ins, batch, 7))
                .unwrap_or_else(|e| {
                    panic!("{} at B={batch}: {}", m.name, e.to_diagnostic().message)
                });
            assert_eq!(results.len(), outs.len());
            for (i, r) in results.iter().enumerate() {
                assert_eq!(r.shape[0], batch as usize, "{} output #{i}", m.name);
                assert!(
                    r.to_f64().iter().all(|v| v.is_finite()),
                    "{} output #{i} at B={batch} is not finite",
                    m.name
                );
            }
        }
    }
}
