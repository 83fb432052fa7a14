//! A loop whose trip count the model computes (ONNX Loop with `M = k + 1`
//! and a body that passes its condition through, docs/architecture.md
//! "Execution modes"): each scan accumulator is zeros of `[N, 2, 3]`, `N` a
//! value symbol the host prefix binds at run start, written one row per
//! iteration by the native control-flow kernel. One compiled model runs at
//! several trip counts equal to the reference interpreter, one plan per
//! count; a count of 0 gives an empty scan output.

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_ir::tensor::Tensor;
use ge_ir::DType;
use ge_runtime::HostTensor;

const SRC: &str = r#"
graph.func @main(%x: tensor<2x3xf32>, %k: tensor<i64>) -> (tensor<2x3xf32>, tensor<Nx2x3xf32>) {
  %one = data.constant dense<1> : tensor<i64>
  %zero = data.constant dense<0> : tensor<i64>
  %t = data.constant dense<true> : tensor<i1>
  %s0 = data.constant dense<0.0> : tensor<2x3xf32>
  %m = graph.add %k, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %p = graph.max %m, %zero : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %c = graph.where %t, %p, %zero : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
  %n = data.reshape %c {shape = [1]} : (tensor<i64>) -> tensor<1xi64>
  %rest = data.constant dense<[2, 3]> : tensor<2xi64>
  %shape = data.concat %n, %rest {axis = 0} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  %z = data.constant dense<0.0> : tensor<f32>
  %acc = graph.specialize %z, %shape {op = "data.expand", static_attrs = {}, from_values = ["shape:ints"]} : (tensor<f32>, tensor<3xi64>) -> tensor<Nx2x3xf32>
  %r:4 = graph.while %zero, %t, %s0, %acc : (tensor<i64>, tensor<i1>, tensor<2x3xf32>, tensor<Nx2x3xf32>) -> (tensor<i64>, tensor<i1>, tensor<2x3xf32>, tensor<Nx2x3xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %s: tensor<2x3xf32>, %a: tensor<Nx2x3xf32>):
    %lt = graph.less %i, %m : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %go = graph.and %lt, %ci : (tensor<i1>, tensor<i1>) -> tensor<i1>
    graph.condition %go, %i, %ci, %s, %a : tensor<i1>, tensor<i64>, tensor<i1>, tensor<2x3xf32>, tensor<Nx2x3xf32>
  } do {
  ^bb0(%j: tensor<i64>, %cj: tensor<i1>, %u: tensor<2x3xf32>, %b: tensor<Nx2x3xf32>):
    %u2 = graph.add %u, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %fj = graph.cast %j {to = f32} : (tensor<i64>) -> tensor<f32>
    %y = graph.mul %u2, %fj : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    %j1 = graph.add %j, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %row = data.unsqueeze %y {axes = [0]} : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
    %idx = data.broadcast_to %j {shape = [1, 2, 3]} : (tensor<i64>) -> tensor<1x2x3xi64>
    %b2 = graph.scatter_elements %b, %idx, %row {axis = 0} : (tensor<Nx2x3xf32>, tensor<1x2x3xi64>, tensor<1x2x3xf32>) -> tensor<Nx2x3xf32>
    graph.yield %j1, %cj, %u2, %b2 : tensor<i64>, tensor<i1>, tensor<2x3xf32>, tensor<Nx2x3xf32>
  }
  graph.return %r#2, %r#3 : tensor<2x3xf32>, tensor<Nx2x3xf32>
}
"#;

#[test]
fn loop_trip_counts_bind_per_run_and_match_the_interpreter() {
    let bytes = om_bytes("loop_trips", SRC, &CompileOptions::default());
    let model = load(&bytes, 1);
    assert_eq!(model.fallback_ops().len(), 0, "{:?}", model.fallback_ops());
    let syms = model.value_symbols();
    assert!(
        syms.iter().any(|s| s.starts_with("N: data.expand")),
        "{syms:?}"
    );
    let (types, src) = signature(SRC, "main");
    let session = model.session();
    // (k, trips): k + 1 iterations, none for k < 0; a count seen before
    // reuses its plan.
    let cases: &[(i64, usize)] = &[(0, 1), (2, 3), (6, 7), (-3, 0), (2, 3)];
    for (i, &(k, trips)) in cases.iter().enumerate() {
        let x = random_inputs(&types, &[], i as u64)[0].clone();
        let ins = vec![x, Tensor::from_i64(vec![], DType::I64, vec![k])];
        let want = interpret(&src, "main", &ins);
        let host: Vec<HostTensor> = ins.iter().map(HostTensor::from_tensor).collect();
        let got: Vec<Tensor> = session
            .run(&host)
            .unwrap_or_else(|e| panic!("run {i}: {e}"))
            .iter()
            .map(|t| t.to_tensor().unwrap())
            .collect();
        assert_eq!(got[1].shape, vec![trips, 2, 3], "case {i}");
        assert_close(&got, &want, &format!("case {i}"));
    }
    assert_eq!(session.plans_built(), 4);
}
