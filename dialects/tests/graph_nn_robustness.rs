//! Hostile attributes and inputs for the nn / linalg / index ops of the graph
//! dialect: verification and interpretation must answer with diagnostics or
//! errors, never a panic (overflowing pads, strides, scales, sizes...).

use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

const BIG: &str = "9223372036854775807";
const NEG: &str = "-9223372036854775808";

/// `(op text with %x of type tensor<1x2x4x4xf32>, declared result type)`.
fn cases() -> Vec<(String, &'static str)> {
    let mut v = vec![];
    for attr in [
        format!("{{pads = [{BIG}, 0, {BIG}, 0]}}"),
        format!("{{pads = [{NEG}, 0, 0, 0]}}"),
        format!("{{strides = [{BIG}, 1]}}"),
        format!("{{dilations = [{BIG}, 1]}}"),
        format!("{{group = {BIG} : i64}}"),
        "{group = 0 : i64}".to_string(),
    ] {
        v.push((
            format!("graph.conv2d %x, %w {attr} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>"),
            "tensor<1x2x4x4xf32>",
        ));
        v.push((
            format!("graph.conv_transpose2d %x, %w {attr} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>"),
            "tensor<1x2x4x4xf32>",
        ));
    }
    for attr in [
        format!("{{kernel_shape = [{BIG}, 1]}}"),
        format!("{{kernel_shape = [2, 2], strides = [{BIG}, {BIG}], ceil_mode = 1 : i64}}"),
        format!("{{kernel_shape = [2, 2], dilations = [{BIG}, 1]}}"),
        format!("{{kernel_shape = [{NEG}, 1]}}"),
    ] {
        for op in ["max_pool2d", "avg_pool2d"] {
            v.push((
                format!("graph.{op} %x {attr} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>"),
                "tensor<1x2x4x4xf32>",
            ));
        }
    }
    for attr in [
        format!("{{pads = [0, 0, 0, {BIG}, 0, 0, 0, 0]}}"),
        format!("{{pads = [0, 0, 0, {NEG}, 0, 0, 0, {BIG}]}}"),
        format!("{{pads = [0, 0, 0, {BIG}, 0, 0, 0, 0], mode = \"reflect\"}}"),
    ] {
        v.push((
            format!("graph.pad %x {attr} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>"),
            "tensor<1x2x4x4xf32>",
        ));
    }
    for attr in [
        "{scales = [1.0, 1.0, 1.0e300, 1.0]}".to_string(),
        format!("{{sizes = [1, 2, {BIG}, 4]}}"),
        format!("{{sizes = [1, 2, {BIG}, {BIG}], mode = \"linear\"}}"),
        "{scales = [1.0, 1.0, 1.0e-300, 1.0]}".to_string(),
    ] {
        v.push((
            format!("graph.resize %x {attr} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>"),
            "tensor<1x2x4x4xf32>",
        ));
    }
    for attr in [
        format!("{{axis = {BIG} : i64}}"),
        format!("{{axis = {NEG} : i64}}"),
    ] {
        for op in ["softmax", "log_softmax"] {
            v.push((
                format!("graph.{op} %x {attr} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>"),
                "tensor<1x2x4x4xf32>",
            ));
        }
    }
    v
}

#[test]
fn hostile_attributes_never_panic() {
    let ctx = ge_dialects::context();
    let x = Tensor::from_f64(
        vec![1, 2, 4, 4],
        DType::F32,
        (0..32).map(f64::from).collect(),
    );
    let w = Tensor::from_f64(vec![2, 2, 1, 1], DType::F32, vec![1.0; 4]);
    for (op, ty) in cases() {
        let two = op.contains("%w");
        let args = if two {
            "%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>"
        } else {
            "%x: tensor<1x2x4x4xf32>"
        };
        let text = format!(
            "graph.func @main({args}) -> {ty} {{\n  %0 = {op}\n  graph.return %0 : {ty}\n}}\n"
        );
        let m = ge_ir::parser::parse_module(
            &ctx,
            "t.air",
            &text,
            ge_ir::parser::ParseOptions::default(),
        )
        .unwrap_or_else(|d| panic!("{op}: parse error {}", d.message));
        // Whatever the verifier says, running must not panic either.
        let _ = ge_ir::verifier::verify_module(&m);
        let inputs = if two {
            vec![x.clone(), w.clone()]
        } else {
            vec![x.clone()]
        };
        let _ = Interpreter::new(&m).run_function("main", inputs);
    }
}

#[test]
fn out_of_range_indices_are_errors() {
    let ctx = ge_dialects::context();
    let text = r#"
graph.func @main(%d: tensor<2x3xf32>, %i: tensor<2x2xi64>, %u: tensor<2x2xf32>, %t: tensor<4x3xf32>) -> (tensor<2x2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x2x3xf32>) {
  %0 = graph.gather %d, %i : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
  %1 = graph.gather_elements %d, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
  %2 = graph.scatter_elements %d, %i, %u {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> tensor<2x3xf32>
  %3 = graph.embedding %t, %i : (tensor<4x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
  graph.return %0, %1, %2, %3 : tensor<2x2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x2x3xf32>
}
"#;
    let m =
        ge_ir::parser::parse_module(&ctx, "t.air", text, ge_ir::parser::ParseOptions::default())
            .expect("parses");
    assert!(ge_ir::verifier::verify_module(&m).is_empty());
    let d = Tensor::from_f64(vec![2, 3], DType::F32, vec![0.0; 6]);
    let u = Tensor::from_f64(vec![2, 2], DType::F32, vec![0.0; 4]);
    let t = Tensor::from_f64(vec![4, 3], DType::F32, vec![0.0; 12]);
    for bad in [i64::MAX, i64::MIN, 7, -7] {
        let i = Tensor::from_i64(vec![2, 2], DType::I64, vec![0, bad, 1, 0]);
        let err = Interpreter::new(&m)
            .run_function("main", vec![d.clone(), i, u.clone(), t.clone()])
            .expect_err("out-of-range index must fail");
        assert!(err.msg.contains("out of range"), "{}", err.msg);
    }
}
