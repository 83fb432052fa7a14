//! A loop body whose shapes depend on values it computes (ONNX
//! `test_loop11`'s pattern; docs/architecture.md "Execution modes", values
//! inside control flow): a `graph.specialize` of `data.slice` with `starts`
//! and `ends` from the iteration number, and of `data.reshape` with a target
//! from it, both `?` in the body. The native control-flow kernel computes
//! those values on the host per iteration (its region programs keyed by the
//! iteration number) and compiles the body at the resulting shapes. One
//! compiled model runs at several trip counts equal to the reference
//! interpreter, with every kernel native.

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

const SRC: &str = r#"
graph.func @main(%x: tensor<8xf32>, %m: tensor<i64>) -> (tensor<1xf32>, tensor<f32>) {
  %zero = data.constant dense<0> : tensor<i64>
  %t = data.constant dense<true> : tensor<i1>
  %a0 = data.constant dense<0.0> : tensor<1xf32>
  %q0 = data.constant dense<0.0> : tensor<f32>
  %r:4 = graph.while %zero, %t, %a0, %q0 : (tensor<i64>, tensor<i1>, tensor<1xf32>, tensor<f32>) -> (tensor<i64>, tensor<i1>, tensor<1xf32>, tensor<f32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %a: tensor<1xf32>, %q: tensor<f32>):
    %lt = graph.less %i, %m : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %go = graph.and %lt, %ci : (tensor<i1>, tensor<i1>) -> tensor<i1>
    graph.condition %go, %i, %ci, %a, %q : tensor<i1>, tensor<i64>, tensor<i1>, tensor<1xf32>, tensor<f32>
  } do {
  ^bb0(%j: tensor<i64>, %cj: tensor<i1>, %b: tensor<1xf32>, %p: tensor<f32>):
    %one = data.constant dense<1> : tensor<i64>
    %two = data.constant dense<2> : tensor<i64>
    %e = graph.add %j, %two : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %st = data.reshape %j {shape = [1]} : (tensor<i64>) -> tensor<1xi64>
    %en = data.reshape %e {shape = [1]} : (tensor<i64>) -> tensor<1xi64>
    %s = graph.specialize %x, %st, %en {op = "data.slice", static_attrs = {axes = [0]}, from_values = ["starts:ints", "ends:ints"]} : (tensor<8xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
    %rs = graph.reduce_sum %s {axes = [0], keepdims = 1 : i64} : (tensor<?xf32>) -> tensor<1xf32>
    %b2 = graph.add %b, %rs : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %par = graph.mod %j, %two : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %rows = graph.add %par, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %rows1 = data.reshape %rows {shape = [1]} : (tensor<i64>) -> tensor<1xi64>
    %m1 = data.constant dense<[-1]> : tensor<1xi64>
    %tgt = data.concat %rows1, %m1 {axis = 0} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %xr = graph.specialize %x, %tgt {op = "data.reshape", static_attrs = {}, from_values = ["shape:ints"]} : (tensor<8xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    %mx = graph.reduce_max %xr {axes = [1], keepdims = 0 : i64} : (tensor<?x?xf32>) -> tensor<?xf32>
    %ms = graph.reduce_sum %mx {axes = [0], keepdims = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
    %p2 = graph.add %p, %ms : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %j1 = graph.add %j, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
    graph.yield %j1, %cj, %b2, %p2 : tensor<i64>, tensor<i1>, tensor<1xf32>, tensor<f32>
  }
  graph.return %r#2, %r#3 : tensor<1xf32>, tensor<f32>
}
"#;

#[test]
fn body_shapes_from_the_iteration_number_match_the_interpreter() {
    let (types, src) = signature(SRC, "main");
    // Trip counts: the slice is 2 long, 1 at i = 7, empty past the end.
    for (i, m) in [0i64, 1, 3, 8, 10].into_iter().enumerate() {
        let x = random_inputs(&types, &[], i as u64)[0].clone();
        let ins = vec![x, Tensor::from_i64(vec![], DType::I64, vec![m])];
        native_matches_interpreter(SRC, &src, &ins, &format!("m = {m}"));
    }
}

#[test]
fn a_model_runs_every_trip_count_natively() {
    let bytes = om_bytes("loop_body_values", SRC, &CompileOptions::default());
    let model = load(&bytes, 1);
    assert_eq!(model.fallback_ops().len(), 0, "{:?}", model.fallback_ops());
    let (types, src) = signature(SRC, "main");
    for m in [4i64, 9, 4] {
        let x = random_inputs(&types, &[], 7)[0].clone();
        let ins = vec![x, Tensor::from_i64(vec![], DType::I64, vec![m])];
        let want = interpret(&src, "main", &ins);
        assert_close(&run(&model, &ins), &want, &format!("m = {m}"));
    }
}
