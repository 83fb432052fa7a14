//! Unique and NonMaxSuppression as size ops (issue 15 item 3,
//! docs/architecture.md "Execution modes", size symbols): each names a
//! fresh symbol for its data-dependent length, memory is planned at the
//! bound, and the executor binds the symbol to the count right after the
//! producing launch. One compiled model per op runs at several input
//! values — the least count, the bound and in between — on 1 and 2
//! threads, equal to the reference interpreter, with every output at its
//! actual shape and one plan per count.

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_ir::tensor::Tensor;
use ge_ir::DType;
use ge_runtime::HostTensor;

/// Run `src` compiled at `values` (each a set of inputs and the expected
/// length of the size symbol's dim in output #0 at `dim`), on 1 and 2
/// threads; `plans` plans are built per session.
fn check(
    name: &str,
    src: &str,
    sizes: &str,
    cases: &[(Vec<Tensor>, usize)],
    dim: usize,
    plans: usize,
) {
    let bytes = om_bytes(name, src, &CompileOptions::default());
    for threads in [1, 2] {
        let model = load(&bytes, threads);
        assert_eq!(model.size_symbols(), vec![sizes.to_string()]);
        let (_, m) = signature(src, "main");
        let session = model.session();
        for (c, (ins, k)) in cases.iter().enumerate() {
            let want = interpret(&m, "main", ins);
            let hs: Vec<HostTensor> = ins.iter().map(HostTensor::from_tensor).collect();
            let got: Vec<Tensor> = session
                .run(&hs)
                .unwrap_or_else(|e| panic!("{name} case {c}: {e}"))
                .iter()
                .map(|t| t.to_tensor().unwrap())
                .collect();
            assert_eq!(got[0].shape[dim], *k, "{name} case {c}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g.shape, w.shape, "{name} case {c}");
            }
            assert_close(&got, &want, &format!("{name} case {c} ({threads} threads)"));
        }
        assert_eq!(session.plans_built(), plans, "{name}: {threads} threads");
    }
}

const UNIQUE: &str = r#"
module attributes {ge.symbol_bounds = {K = 8 : i64}} {
  graph.func @main(%x: tensor<2x4xf32>) -> (tensor<Kxf32>, tensor<Kxi64>, tensor<8xi64>, tensor<Kxi64>, tensor<Kxf32>, tensor<2x4xf32>) {
    %a = graph.relu %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %u:5 = data.unique %a {count = "K", sorted = 0} : (tensor<2x4xf32>) -> (tensor<Kxf32>, tensor<Kxi64>, tensor<8xi64>, tensor<Kxi64>, tensor<i64>)
    %c = graph.cast %u#3 {to = f32} : (tensor<Kxi64>) -> tensor<Kxf32>
    %y = graph.mul %u#0, %c : (tensor<Kxf32>, tensor<Kxf32>) -> tensor<Kxf32>
    %s = graph.sigmoid %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
    graph.return %u#0, %u#1, %u#2, %u#3, %y, %s : tensor<Kxf32>, tensor<Kxi64>, tensor<8xi64>, tensor<Kxi64>, tensor<Kxf32>, tensor<2x4xf32>
  }
}
"#;

#[test]
fn unique_binds_its_count_and_matches_the_interpreter() {
    let x = |v: [f64; 8]| vec![Tensor::from_f64(vec![2, 4], DType::F32, v.to_vec())];
    let cases = vec![
        (x([1.0, 3.0, 1.0, -2.0, 3.0, 5.0, -1.0, 1.0]), 4),
        (x([-1.0; 8]), 1),
        (x([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]), 8),
        (x([2.0, 2.0, 2.0, 2.0, 7.0, 7.0, 7.0, 7.0]), 2),
        (x([1.0, 3.0, 1.0, -2.0, 3.0, 5.0, -1.0, 1.0]), 4),
    ];
    // The bound (8, also a case), 4, 1 and 2: the repeated 4 reuses its plan.
    check(
        "unique",
        UNIQUE,
        "K <= 8: data.unique at loc(\"unique\":5:5)",
        &cases,
        0,
        4,
    );
}

const UNIQUE_AXIS: &str = r#"
module attributes {ge.symbol_bounds = {K = 3 : i64}} {
  graph.func @main(%x: tensor<2x3x2xi32>) -> (tensor<2xKx2xi32>, tensor<3xi64>, tensor<Kxi64>) {
    %u:5 = data.unique %x {axis = -2 : i64, count = "K"} : (tensor<2x3x2xi32>) -> (tensor<2xKx2xi32>, tensor<Kxi64>, tensor<3xi64>, tensor<Kxi64>, tensor<i64>)
    graph.return %u#0, %u#2, %u#3 : tensor<2xKx2xi32>, tensor<3xi64>, tensor<Kxi64>
  }
}
"#;

#[test]
fn unique_along_an_axis_writes_its_slices_at_the_count() {
    let x = |v: [i64; 12]| vec![Tensor::from_i64(vec![2, 3, 2], DType::I32, v.to_vec())];
    let cases = vec![
        (x([1, 2, 0, 0, 1, 2, 5, 6, 7, 8, 5, 6]), 2),
        (x([1, 2, 1, 2, 1, 2, 3, 3, 3, 3, 3, 3]), 1),
        (x([9, 2, 0, 0, 1, 2, 5, 6, 7, 8, 5, 6]), 3),
    ];
    check(
        "unique_axis",
        UNIQUE_AXIS,
        "K <= 3: data.unique at loc(\"unique_axis\":4:5)",
        &cases,
        1,
        3,
    );
}

const NMS: &str = r#"
module attributes {ge.symbol_bounds = {K = 8 : i64}} {
  graph.func @main(%b: tensor<2x4x4xf32>, %s: tensor<2x1x4xf32>, %m: tensor<1xi64>, %th: tensor<1xf32>) -> (tensor<Kx3xi64>, tensor<Kx3xf32>) {
    %iou = data.constant dense<0.5> : tensor<1xf32>
    %r:2 = data.non_max_suppression %b, %s, %m, %iou, %th {count = "K", center_point_box = 1} : (tensor<2x4x4xf32>, tensor<2x1x4xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> (tensor<Kx3xi64>, tensor<i64>)
    %f = graph.cast %r#0 {to = f32} : (tensor<Kx3xi64>) -> tensor<Kx3xf32>
    %y = graph.add %f, %f : (tensor<Kx3xf32>, tensor<Kx3xf32>) -> tensor<Kx3xf32>
    graph.return %r#0, %y : tensor<Kx3xi64>, tensor<Kx3xf32>
  }
}
"#;

#[test]
fn nms_binds_its_count_and_matches_the_interpreter() {
    // Centre boxes: batch 0 four overlapping unit boxes (shift 0.1), batch 1
    // four disjoint ones.
    let mut boxes = vec![];
    for i in 0..4 {
        boxes.extend([0.1 * i as f64, 0.0, 1.0, 1.0]);
    }
    for i in 0..4 {
        boxes.extend([3.0 * i as f64, 0.0, 1.0, 1.0]);
    }
    let b = Tensor::from_f64(vec![2, 4, 4], DType::F32, boxes);
    let s = Tensor::from_f64(
        vec![2, 1, 4],
        DType::F32,
        vec![0.9, 0.8, 0.7, 0.6, 0.2, 0.4, 0.6, 0.8],
    );
    let case = |m: i64, th: f64| {
        vec![
            b.clone(),
            s.clone(),
            Tensor::from_i64(vec![1], DType::I64, vec![m]),
            Tensor::from_f64(vec![1], DType::F32, vec![th]),
        ]
    };
    let cases = vec![
        (case(4, 0.0), 5),  // batch 0 keeps 1 of 4, batch 1 all 4
        (case(4, 0.95), 0), // every score under the threshold
        (case(0, 0.0), 0),  // no box per class
        (case(2, 0.5), 3),  // batch 1: 0.6, 0.8 only, at most 2
        (case(4, 0.0), 5),
    ];
    check(
        "nms",
        NMS,
        "K <= 8: data.non_max_suppression at loc(\"nms\":5:5)",
        &cases,
        0,
        4,
    );
}
