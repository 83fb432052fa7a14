//! The ES API: every graph/data op declares its method or why it has none,
//! methods build, run and round-trip, and mistakes are errors.

use super::*;
use ge_ir::tensor::Tensor as HostTensor;
use std::collections::HashSet;

#[test]
fn every_graph_and_data_op_is_exposed_or_excluded() {
    let mut problems = vec![];
    let mut methods = HashSet::new();
    for d in [&crate::graph::DIALECT, &crate::data::DIALECT] {
        for op in d.ops() {
            if let Some(e) = es_op(op.name) {
                if !methods.insert(e.method) {
                    problems.push(format!("method b.{} is generated twice", e.method));
                }
            }
            match (
                es_op(op.name).is_some(),
                exclusion_reason(op.name).is_some(),
            ) {
                (true, true) => problems.push(format!("{} is exposed and excluded", op.name)),
                (false, false) => problems.push(format!(
                    "{} has no ES method; give its declaration `es` or `es(none = \"why\")`",
                    op.name
                )),
                _ => {}
            }
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
