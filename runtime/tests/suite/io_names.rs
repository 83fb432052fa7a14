//! Inputs and outputs by name: the names a function gives its arguments and
//! results (`ge.name`) are the `.om`'s, and `Session::run_named` takes inputs
//! by them in any order. The names below are deliberately the default names
//! of other positions ("arg1" is input #0), so a name mistaken for a position
//! gives a wrong answer or an error.

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_runtime::HostTensor;

const NAMED: &str = r#"
graph.func @main(%a: tensor<2x3xf32> {ge.name = "arg1"}, %b: tensor<3xf32> {ge.name = "arg0"})
    -> (tensor<2x3xf32> {ge.name = "out1"}, tensor<3xf32> {ge.name = "out0"}) {
  %0 = graph.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = graph.relu %b : (tensor<3xf32>) -> tensor<3xf32>
  graph.return %0, %1 : tensor<2x3xf32>, tensor<3xf32>
}
"#;

fn model() -> ge_runtime::Model {
    load(&om_bytes("named", NAMED, &CompileOptions::default()), 1)
}

fn a() -> HostTensor {
    HostTensor::from_f32(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).expect("tensor")
}

fn b() -> HostTensor {
    HostTensor::from_f32(&[3], &[0.5, -1.0, 2.0]).expect("tensor")
}

#[test]
fn the_om_keeps_the_functions_names() {
    let m = model();
    let names = |v: Vec<(String, String)>| v.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    assert_eq!(names(m.inputs()), ["arg1", "arg0"]);
    assert_eq!(names(m.outputs()), ["out1", "out0"]);
    assert_eq!(m.input_index("arg0"), Some(1));
    assert_eq!(m.output_index("out1"), Some(0));
    assert_eq!(m.input_index("nope"), None);
}

#[test]
fn run_named_takes_inputs_in_any_order_and_names_the_outputs() {
    let m = model();
    let by_position = m.session().run(&[a(), b()]).expect("runs");
    for order in [
        [("arg1", a()), ("arg0", b())],
        [("arg0", b()), ("arg1", a())],
    ] {
        let named = m.session().run_named(order).expect("runs");
        let names: Vec<&str> = named.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["out1", "out0"]);
        for ((_, got), want) in named.iter().zip(&by_position) {
            assert_eq!(got.to_f32_vec(), want.to_f32_vec());
        }
    }
    // a - b, relu(b): the values prove the inputs went to the right places.
    let out = m.run_named([("arg0", b()), ("arg1", a())]).expect("runs");
    assert_eq!(out[0].1.to_f32_vec(), [0.5, 3.0, 1.0, 3.5, 6.0, 4.0]);
    assert_eq!(out[1].1.to_f32_vec(), [0.5, 0.0, 2.0]);
}

#[test]
fn bad_names_are_errors_listing_the_models_inputs() {
    let m = model();
    let s = m.session();
    let e = s
        .run_named([("x", a()), ("arg0", b())])
        .expect_err("unknown");
    assert_eq!(e.message, "the model has no input 'x' (inputs: arg1, arg0)");
    let e = s
        .run_named([("arg0", b()), ("arg0", b())])
        .expect_err("twice");
    assert_eq!(e.message, "input 'arg0' is given more than once");
    let e = s.run_named([("arg0", b())]).expect_err("missing");
    assert_eq!(e.message, "missing input 'arg1' (inputs: arg1, arg0)");
    let e = s
        .run_named(Vec::<(&str, HostTensor)>::new())
        .expect_err("none");
    assert_eq!(
        e.message,
        "missing inputs 'arg1', 'arg0' (inputs: arg1, arg0)"
    );
    // A tensor under the wrong name is refused naming that input.
    let e = s
        .run_named([("arg1", b()), ("arg0", a())])
        .expect_err("swapped");
    assert!(
        e.message.starts_with("input #0 'arg1' has shape [3]"),
        "{}",
        e.message
    );
}

#[test]
fn unnamed_functions_get_positional_names() {
    let text = "graph.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
      graph.return %0 : tensor<4xf32>
    }";
    let m = load(&om_bytes("plain", text, &CompileOptions::default()), 1);
    assert_eq!(m.inputs()[0].0, "arg0");
    assert_eq!(m.outputs()[0].0, "out0");
    let x = HostTensor::from_f32(&[4], &[-1.0, 1.0, -2.0, 2.0]).expect("tensor");
    let out = m.run_named([("arg0", x)]).expect("runs");
    assert_eq!(out[0].0, "out0");
}
