//! Elementwise ops whose operands have different element types (ONNX Pow:
//! a float base with an integer exponent, an integer base with a float
//! exponent) compute in f32 and equal the interpreter; they used to index an
//! empty float tile (a panic).

use crate::common;
use common::*;
use ge_compile::CompileOptions;

#[test]
fn pow_with_mixed_operand_types() {
    for (x, y, r) in [
        ("f32", "i64", "f32"),
        ("f32", "i32", "f32"),
        ("i32", "f32", "i32"),
        ("i64", "f32", "i64"),
    ] {
        let text = format!(
            "graph.func @main(%x: tensor<3xx{x}>, %y: tensor<3xx{y}>) -> tensor<3xx{r}> {{\n  \
             %z = graph.pow %x, %y : (tensor<3xx{x}>, tensor<3xx{y}>) -> tensor<3xx{r}>\n  \
             graph.return %z : tensor<3xx{r}>\n}}\n"
        )
        .replace("xx", "x");
        let om = om_bytes("pow", &text, &CompileOptions::default());
        let (_, m) = signature(&text, "main");
        let model = load(&om, 1);
        // Finite results (random bases would give NaN/inf, whose integer casts differ by design).
        let val = |dt: &str, v: &[f64]| {
            let d = ge_ir::DType::parse(dt).unwrap();
            ge_ir::tensor::Tensor::from_f64(vec![3], d, v.to_vec())
        };
        let exps: &[f64] = if y.starts_with('f') {
            &[2.0, 0.5, -1.0]
        } else {
            &[2.0, 3.0, 0.0]
        };
        let ins = vec![val(x, &[2.0, 3.0, 4.0]), val(y, exps)];
        let want = interpret(&m, "main", &ins);
        let got = run(&model, &ins);
        assert_close(&got, &want, &format!("pow {x} ^ {y}"));
    }
}
