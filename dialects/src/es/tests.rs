//! The ES API can never drift from the op definitions: every method's
//! operands, attributes and results are checked against its `OpDef`, and every
//! graph/data op is either exposed or excluded with a reason.

use super::*;
use ge_ir::opdef::Arity;
use ge_ir::tensor::Tensor as HostTensor;
use std::collections::HashSet;

#[test]
fn es_methods_match_their_op_definitions() {
    let mut problems = vec![];
    let mut methods = HashSet::new();
    for e in ES_OPS {
        let def = e.def;
        let mut bad = |m: String| problems.push(format!("{} (b.{}): {m}", e.op, e.method));
        if def.name != e.op {
            bad(format!(
                "names op '{}' but uses the definition of '{}'",
                e.op, def.name
            ));
        }
        if !methods.insert(e.method) {
            bad("method name used twice".into());
        }
        // Operands: same names, arities and order.
        let want: Vec<(&str, Arity)> = def.operands.iter().map(|o| (o.name, o.arity)).collect();
        if want != e.operands {
            bad(format!(
                "operands {:?}, definition has {want:?}",
                e.operands
            ));
        }
        // Attributes: each exactly once, of a matching kind.
        let mut seen = HashSet::new();
        for (p, positional) in e
            .positional
            .iter()
            .map(|p| (p, true))
            .chain(e.fields.iter().map(|f| (f, false)))
        {
            if !seen.insert(p.name) {
                bad(format!("attribute '{}' appears twice", p.name));
            }
            let Some(ad) = def.attr_def(p.name) else {
                bad(format!("attribute '{}' is not in the definition", p.name));
                continue;
            };
            if !(p.kind_ok)(ad.kind) {
                bad(format!(
                    "attribute '{}' is {:?} but the Rust type is {}",
                    p.name, ad.kind, p.rust_type
                ));
            }
            let required = ad.default.is_none() && !ad.optional;
            if required && (!positional || p.is_option) {
                bad(format!(
                    "required attribute '{}' must be a non-Option positional argument",
                    p.name
                ));
            }
            if !positional && !p.is_option && ad.default.is_none() {
                bad(format!(
                    "field '{}' has no default in the definition; make it an Option",
                    p.rust_name
                ));
            }
            if let (Some(parses), Some(dv)) = (p.parses_default, attr::default_attr(def, p.name)) {
                if !parses(dv) {
                    bad(format!(
                        "field '{}: {}' cannot hold the default '{dv}'",
                        p.rust_name, p.rust_type
                    ));
                }
            }
        }
        for ad in def.attrs {
            if !seen.contains(ad.name) {
                bad(format!(
                    "attribute '{}' of the definition is not exposed",
                    ad.name
                ));
            }
        }
        if e.fields.is_empty() != e.attrs_struct.is_none() {
            bad("an attributes struct must have fields".into());
        }
        // Results.
        let results: Vec<(&str, Arity)> = def.results.iter().map(|r| (r.name, r.arity)).collect();
        let ok = match e.results {
            EsResults::One => matches!(results.as_slice(), [(_, Arity::One)]),
            EsResults::Many => matches!(results.as_slice(), [(_, Arity::Variadic)]),
            EsResults::Struct { fields, .. } => {
                results.len() == fields.len()
                    && results
                        .iter()
                        .zip(fields)
                        .all(|((n, a), f)| n == f && *a == Arity::One)
            }
        };
        if !ok {
            bad(format!(
                "returns {:?}, definition has {results:?}",
                e.results
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "ES API drifted:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_graph_and_data_op_is_exposed_or_excluded() {
    let mut problems = vec![];
    let mut registered = HashSet::new();
    for d in [&crate::graph::DIALECT, &crate::data::DIALECT] {
        for op in d.ops() {
            registered.insert(op.name);
            match (
                es_op(op.name).is_some(),
                exclusion_reason(op.name).is_some(),
            ) {
                (true, true) => problems.push(format!("{} is exposed and excluded", op.name)),
                (false, false) => problems.push(format!(
                    "{} has no ES method; add it to es/ops.rs or to EXCLUDED with a reason",
                    op.name
                )),
                _ => {}
            }
        }
    }
    for (name, _) in EXCLUDED {
        if !registered.contains(name) {
            problems.push(format!("excluded op {name} is not a graph/data op"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn attrs_defaults_come_from_the_definitions() {
    let c = Conv2dAttrs::default();
    assert_eq!(c.strides, vec![1, 1]);
    assert_eq!(c.pads, vec![0, 0, 0, 0]);
    assert_eq!(c.group, 1);
    assert_eq!(LayerNormAttrs::default().axis, -1);
    assert!((LayerNormAttrs::default().epsilon - 1e-5).abs() < 1e-9);
    assert_eq!(GeluAttrs::default().approximate, "none");
    assert_eq!(GemmAttrs::default().trans_b, 0);
    assert_eq!(SplitAttrs::default().num_outputs, None);
    assert_eq!(
        es_op("graph.conv2d").map(|e| e.signature()).as_deref(),
        Some("b.conv2d(input, filter, bias: Option, Conv2dAttrs) -> Tensor")
    );
    assert_eq!(
        es_op("data.reshape").map(|e| e.signature()).as_deref(),
        Some("b.reshape(input, shape: &[i64], ReshapeAttrs) -> Tensor")
    );
    assert_eq!(
        es_op("graph.topk").map(|e| e.signature()).as_deref(),
        Some("b.topk(input, k: i64, TopkAttrs) -> TopK { values, indices }")
    );
}

fn run(m: &Module, inputs: Vec<HostTensor>) -> Vec<HostTensor> {
    ge_ir::interp::Interpreter::new(m)
        .run_function("main", inputs)
        .expect("runs")
}

#[test]
fn builds_runs_and_round_trips() -> EsResult<()> {
    let b = GraphBuilder::new("main");
    b.symbol_bound("B", 64);
    let x = b.input("x", "tensor<Bx4xf32>")?;
    let w = b.weight(
        "w",
        &HostTensor::from_f64(vec![4, 2], DType::F32, (0..8).map(f64::from).collect()),
    )?;
    let y = b.matmul(x, w)?;
    assert_eq!(y.ty().to_string(), "tensor<Bx2xf32>");
    let z = b.relu(((y * 2.0)? - 1.0)?)?;
    let parts = b.split(
        x,
        SplitAttrs {
            axis: 1,
            num_outputs: Some(2),
            ..Default::default()
        },
    )?;
    assert_eq!(parts.len(), 2);
    let top = b.topk(parts[1], 1, TopkAttrs::default())?;
    let six = b.scalar(6.0, DType::F32)?;
    let clipped = b.clip(z, None, Some(six))?;
    b.output(&[clipped, top.values, top.indices])?;
    let m = b.finish()?;
    let text = ge_ir::printer::print_module(&m, Default::default());
    assert!(text.contains("ge.symbol_bounds = {B = 64 : i64}"), "{text}");
    assert!(text.contains("dense_resource<w>"), "{text}");
    // The printed module parses back to the same text.
    let ctx = crate::context();
    let back =
        ge_ir::parser::parse_module(&ctx, "es", &text, ge_ir::parser::ParseOptions::default())
            .expect("parses");
    assert_eq!(
        ge_ir::printer::print_module(&back, Default::default()),
        text
    );
    // And computes what it says.
    let x = HostTensor::from_f64(vec![1, 4], DType::F32, vec![1.0, 0.0, -1.0, 2.0]);
    let out = run(&m, vec![x]);
    // x·w = [1*0 + 0*2 - 1*4 + 2*6, 1*1 + 0*3 - 1*5 + 2*7] = [8, 10]; 2v - 1 = [15, 19] → clip 6.
    assert_eq!(out[0].to_f64(), vec![6.0, 6.0]);
    assert_eq!(out[1].to_f64(), vec![2.0]);
    assert_eq!(out[2].to_i64(), vec![1]);
    Ok(())
}

#[test]
fn shape_errors_are_results_naming_the_op_and_types() -> EsResult<()> {
    let b = GraphBuilder::new("main");
    let x = b.input("x", "tensor<2x3xf32>")?;
    let y = b.input("y", "tensor<4x5xf32>")?;
    let e = b.matmul(x, y).expect_err("mismatched matmul");
    assert!(e.msg.contains("b.matmul ('graph.matmul')"), "{e}");
    assert!(
        e.msg.contains("tensor<2x3xf32>") && e.msg.contains("tensor<4x5xf32>"),
        "{e}"
    );
    let e = (x + y).expect_err("mismatched add");
    assert!(e.msg.contains("graph.add"), "{e}");
    let e = b
        .conv2d(x, y, None, Conv2dAttrs::default())
        .expect_err("rank");
    assert!(e.msg.contains("graph.conv2d"), "{e}");
    let e = b
        .reshape(x, &[5, -1], ReshapeAttrs::default())
        .expect_err("reshape");
    assert!(e.msg.contains("data.reshape"), "{e}");
    let e = b
        .gelu(
            x,
            GeluAttrs {
                approximate: "fast".into(),
            },
        )
        .expect_err("enum");
    assert!(e.msg.contains("approximate"), "{e}");
    // A failed op leaves nothing behind.
    assert_eq!(b.num_ops(), 0);
    // Tensors of another builder are rejected.
    let other = GraphBuilder::new("other");
    let o = other.input("o", "tensor<2x3xf32>")?;
    assert!(b.add(x, o).is_err());
    // Nothing can be built after output, and finish needs output.
    b.output(&[x])?;
    assert!(b.relu(x).is_err());
    assert!(b.output(&[x]).is_err());
    assert!(other.finish().is_err());
    assert!(b.input("bad", "tensor<2x").is_err());
    Ok(())
}

#[test]
fn external_weights_are_returned_with_offsets() -> EsResult<()> {
    let b = GraphBuilder::new("main");
    b.set_weight_storage(WeightStorage::External {
        path: "w.bin".into(),
    });
    let x = b.input("x", "tensor<3xf32>")?;
    let w1 = b.weight(
        "a",
        &HostTensor::from_f64(vec![3], DType::F32, vec![1.0, 2.0, 3.0]),
    )?;
    let w2 = b.weight(
        "b",
        &HostTensor::from_f64(vec![3], DType::F32, vec![4.0, 5.0, 6.0]),
    )?;
    let y = ((x + w1)? * w2)?;
    let n = (-y)?;
    b.output(&[n])?;
    let (m, bytes) = b.finish_with_weights()?;
    assert_eq!(bytes.len(), 64 + 12);
    let text = ge_ir::printer::print_module(&m, Default::default());
    assert!(
        text.contains("#ge.external<\"w.bin\", offset = 64, length = 12"),
        "{text}"
    );
    Ok(())
}
