//! Control flow on native kernels (runtime/src/kernels/control_flow.rs):
//! `graph.if`, `graph.case` and `graph.while` models compiled with every
//! kernel native (`common::load` fails when one runs on the interpreter) and
//! compared with the interpreter on random inputs — conditions both ways,
//! trip counts from 0 up, values captured from the enclosing function,
//! nested control flow, a scan written into an accumulator, and a loop whose
//! carried value grows every iteration (one region program per shape).

use crate::common;
use common::*;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

/// Compare native and interpreter on `seeds` random input sets, with the
/// integer inputs (conditions, counts) replaced by each of `ints`.
fn check(text: &str, ints: &[i64], what: &str) {
    let (types, m) = signature(text, "main");
    for (seed, &k) in ints.iter().enumerate() {
        let mut ins = random_inputs(&types, &[], seed as u64 + 1);
        for t in ins.iter_mut() {
            if !t.dtype.is_float() {
                let n = t.len();
                *t = Tensor::from_i64(t.shape.clone(), t.dtype, vec![k; n]);
            }
        }
        native_matches_interpreter(text, &m, &ins, &format!("{what} with {k}"));
    }
}

const IF_MODEL: &str = r#"
graph.func @main(%c: tensor<i1>, %x: tensor<4x3xf32>, %w: tensor<3x5xf32>) -> (tensor<4x5xf32>, tensor<4x3xf32>) {
  %r:2 = graph.if %c : (tensor<i1>) -> (tensor<4x5xf32>, tensor<4x3xf32>) {
    %m = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
    %e = graph.exp %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
    %t = graph.tanh %e : (tensor<4x3xf32>) -> tensor<4x3xf32>
    graph.yield %m, %t : tensor<4x5xf32>, tensor<4x3xf32>
  } else {
    %one = data.constant dense<1.5> : tensor<4x5xf32>
    graph.yield %one, %x : tensor<4x5xf32>, tensor<4x3xf32>
  }
  graph.return %r#0, %r#1 : tensor<4x5xf32>, tensor<4x3xf32>
}
"#;

#[test]
fn if_takes_either_branch_natively() {
    check(IF_MODEL, &[1, 0], "graph.if");
}

const CASE_MODEL: &str = r#"
graph.func @main(%i: tensor<i32>, %x: tensor<6xf32>) -> tensor<6xf32> {
  %r = graph.case %i : (tensor<i32>) -> tensor<6xf32> {
    %a = graph.relu %x : (tensor<6xf32>) -> tensor<6xf32>
    graph.yield %a : tensor<6xf32>
  }, {
    %b = graph.neg %x : (tensor<6xf32>) -> tensor<6xf32>
    graph.yield %b : tensor<6xf32>
  }, {
    %c = graph.mul %x, %x : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    graph.yield %c : tensor<6xf32>
  }
  graph.return %r : tensor<6xf32>
}
"#;

#[test]
fn case_runs_the_indexed_branch_and_the_last_out_of_range() {
    check(CASE_MODEL, &[0, 1, 2, 7, -1], "graph.case");
}

/// `s = tanh(s * 0.5 + x)` `n` times (n an input), the counter carried.
const WHILE_MODEL: &str = r#"
graph.func @main(%n: tensor<i64>, %x: tensor<4x3xf32>) -> (tensor<i64>, tensor<4x3xf32>) {
  %i0 = data.constant dense<0> : tensor<i64>
  %r:2 = graph.while %i0, %x : (tensor<i64>, tensor<4x3xf32>) -> (tensor<i64>, tensor<4x3xf32>) {
  ^bb0(%i: tensor<i64>, %s: tensor<4x3xf32>):
    %go = graph.less %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    graph.condition %go, %i, %s : tensor<i1>, tensor<i64>, tensor<4x3xf32>
  } do {
  ^bb0(%i: tensor<i64>, %s: tensor<4x3xf32>):
    %one = data.constant dense<1> : tensor<i64>
    %j = graph.add %i, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %h = data.constant dense<0.5> : tensor<f32>
    %a = graph.mul %s, %h : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
    %b = graph.add %a, %x : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %t = graph.tanh %b : (tensor<4x3xf32>) -> tensor<4x3xf32>
    graph.yield %j, %t : tensor<i64>, tensor<4x3xf32>
  }
  graph.return %r#0, %r#1 : tensor<i64>, tensor<4x3xf32>
}
"#;

#[test]
fn while_iterates_with_carried_and_captured_values() {
    check(WHILE_MODEL, &[0, 1, 5], "graph.while");
}

/// A loop whose body branches: even iterations add `x`, odd ones scale by it.
const NESTED_MODEL: &str = r#"
graph.func @main(%n: tensor<i64>, %x: tensor<5xf32>) -> tensor<5xf32> {
  %i0 = data.constant dense<0> : tensor<i64>
  %r:2 = graph.while %i0, %x : (tensor<i64>, tensor<5xf32>) -> (tensor<i64>, tensor<5xf32>) {
  ^bb0(%i: tensor<i64>, %s: tensor<5xf32>):
    %go = graph.less %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    graph.condition %go, %i, %s : tensor<i1>, tensor<i64>, tensor<5xf32>
  } do {
  ^bb0(%i: tensor<i64>, %s: tensor<5xf32>):
    %one = data.constant dense<1> : tensor<i64>
    %two = data.constant dense<2> : tensor<i64>
    %m = graph.mod %i, %two : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %z = data.constant dense<0> : tensor<i64>
    %even = graph.equal %m, %z : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %t = graph.if %even : (tensor<i1>) -> tensor<5xf32> {
      %a = graph.add %s, %x : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
      graph.yield %a : tensor<5xf32>
    } else {
      %b = graph.mul %s, %x : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
      graph.yield %b : tensor<5xf32>
    }
    %j = graph.add %i, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
    graph.yield %j, %t : tensor<i64>, tensor<5xf32>
  }
  graph.return %r#1 : tensor<5xf32>
}
"#;

#[test]
fn nested_if_in_a_loop_runs_natively() {
    check(NESTED_MODEL, &[0, 1, 4], "graph.while with graph.if");
}

/// As ONNX Scan imports: row `i` of `x` gathered, a running sum carried,
/// each step's sum scattered into row `i` of an accumulator.
const SCAN_MODEL: &str = r#"
graph.func @main(%x: tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  %i0 = data.constant dense<0> : tensor<i64>
  %s0 = data.constant dense<0.0> : tensor<3xf32>
  %acc0 = data.constant dense<0.0> : tensor<4x3xf32>
  %r:3 = graph.while %i0, %s0, %acc0 : (tensor<i64>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<i64>, tensor<3xf32>, tensor<4x3xf32>) {
  ^bb0(%i: tensor<i64>, %s: tensor<3xf32>, %acc: tensor<4x3xf32>):
    %n = data.constant dense<4> : tensor<i64>
    %go = graph.less %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    graph.condition %go, %i, %s, %acc : tensor<i1>, tensor<i64>, tensor<3xf32>, tensor<4x3xf32>
  } do {
  ^bb0(%i: tensor<i64>, %s: tensor<3xf32>, %acc: tensor<4x3xf32>):
    %row = graph.gather %x, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<i64>) -> tensor<3xf32>
    %s1 = graph.add %s, %row : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %u = data.unsqueeze %s1 {axes = [0]} : (tensor<3xf32>) -> tensor<1x3xf32>
    %idx = data.broadcast_to %i {shape = [1, 3]} : (tensor<i64>) -> tensor<1x3xi64>
    %acc1 = graph.scatter_elements %acc, %idx, %u {axis = 0 : i64} : (tensor<4x3xf32>, tensor<1x3xi64>, tensor<1x3xf32>) -> tensor<4x3xf32>
    %one = data.constant dense<1> : tensor<i64>
    %j = graph.add %i, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
    graph.yield %j, %s1, %acc1 : tensor<i64>, tensor<3xf32>, tensor<4x3xf32>
  }
  graph.return %r#1, %r#2 : tensor<3xf32>, tensor<4x3xf32>
}
"#;

#[test]
fn scan_into_an_accumulator_runs_natively() {
    check(SCAN_MODEL, &[0], "scan");
}

/// A carried value that grows by one element per iteration (its type is
/// `?` inside the loop): three iterations give the declared 4 elements.
const GROWING_MODEL: &str = r#"
graph.func @main(%n: tensor<i64>, %a: tensor<1xf32>) -> tensor<4xf32> {
  %i0 = data.constant dense<0> : tensor<i64>
  %r:2 = graph.while %i0, %a : (tensor<i64>, tensor<1xf32>) -> (tensor<i64>, tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %acc: tensor<?xf32>):
    %go = graph.less %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    graph.condition %go, %i, %acc : tensor<i1>, tensor<i64>, tensor<?xf32>
  } do {
  ^bb0(%i: tensor<i64>, %acc: tensor<?xf32>):
    %e = graph.exp %a : (tensor<1xf32>) -> tensor<1xf32>
    %c = data.concat %acc, %e {axis = 0 : i64} : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
    %one = data.constant dense<1> : tensor<i64>
    %j = graph.add %i, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
    graph.yield %j, %c : tensor<i64>, tensor<?xf32>
  }
  graph.return %r#1 : tensor<4xf32>
}
"#;

#[test]
fn a_growing_carried_value_runs_one_program_per_shape() {
    check(GROWING_MODEL, &[3], "growing concat");
}

#[test]
fn a_loop_ending_at_another_shape_than_declared_is_an_error() {
    let om = om_bytes("k", GROWING_MODEL, &Default::default());
    let model = load(&om, 1);
    let ins = [
        Tensor::from_i64(vec![], DType::I64, vec![2]),
        Tensor::from_f64(vec![1], DType::F32, vec![0.5]),
    ];
    let ins: Vec<_> = ins
        .iter()
        .map(ge_runtime::HostTensor::from_tensor)
        .collect();
    let err = model.session().run(&ins).unwrap_err().to_string();
    assert!(
        err.contains(
            "result #1 is 'tensor<3xf32>' at the end, but the model planned 'tensor<4xf32>'"
        ),
        "{err}"
    );
}

#[test]
fn a_loop_that_never_exits_ends_at_the_step_budget() {
    let om = om_bytes("k", WHILE_MODEL, &Default::default());
    let model = ge_runtime::Model::from_bytes(
        &om,
        &ge_runtime::LoadOptions {
            max_steps: 1000,
            ..Default::default()
        },
    )
    .unwrap();
    common::assert_native(&model, &[]);
    let ins = [
        Tensor::from_i64(vec![], DType::I64, vec![i64::MAX]),
        Tensor::from_f64(vec![4, 3], DType::F32, vec![0.5; 12]),
    ];
    let ins: Vec<_> = ins
        .iter()
        .map(ge_runtime::HostTensor::from_tensor)
        .collect();
    let err = model.session().run(&ins).unwrap_err().to_string();
    assert!(err.contains("stopped after 1000 ops"), "{err}");
}
