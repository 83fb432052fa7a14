//! Weight-only kernel steps (a filter's FRACTAL_Z -> NCHW transdata) run
//! once at load time, also in a kernel whose activations have a symbolic
//! batch: a dynamic-batch CNN once converted its filters back at every run
//! (2.4x the static model's latency at batch 1, tools/bench/dynamic.py).

use crate::common;
use common::*;
use ge_compile::CompileOptions;

/// A convolution with constant filters over `x: tensor<{batch}x3x8x8xf32>`.
fn conv_text(batch: &str) -> String {
    let values: Vec<String> = (0..16 * 3 * 3 * 3)
        .map(|i| format!("{:.3}", ((i * 37 % 101) as f64 - 50.0) / 100.0))
        .collect();
    let (x, f, y) = (
        format!("tensor<{batch}x3x8x8xf32>"),
        "tensor<16x3x3x3xf32>",
        format!("tensor<{batch}x16x8x8xf32>"),
    );
    format!(
        "graph.func @main(%x: {x}) -> {y} {{\n  \
         %f = data.constant dense<{}> : {f}\n  \
         %y = graph.conv2d %x, %f {{pads = [1, 1, 1, 1], activation = \"relu\"}} : ({x}, {f}) -> {y}\n  \
         graph.return %y : {y}\n}}\n",
        nest(&values, &[16, 3, 3, 3])
    )
}

#[test]
fn a_symbolic_batch_folds_the_same_weight_steps_as_a_static_one() {
    let opts = CompileOptions::default();
    let fixed = load(&om_bytes("conv_static", &conv_text("2"), &opts), 1);
    let dynamic = load(&om_bytes("conv_dyn", &conv_text("B"), &opts), 1);
    assert!(
        fixed.folded_values() > 0,
        "the static model folds its filter conversion"
    );
    assert_eq!(
        dynamic.folded_values(),
        fixed.folded_values(),
        "a symbolic batch folds what a static batch folds"
    );
    // And the folded filters compute what the interpreter computes.
    let text = conv_text("B");
    let (types, m) = signature(&text, "main");
    for batch in [1, 3] {
        let ins = random_inputs(&types, &[("B", batch)], 5);
        let want = interpret(&m, "main", &ins);
        assert_close(&run(&dynamic, &ins), &want, &format!("batch {batch}"));
    }
}

/// A random draw from a weight is not weight-only work: it is not `Pure`, so
/// the loader never folds it (an unseeded Bernoulli of constant
/// probabilities draws anew on every run).
#[test]
fn a_random_draw_from_a_weight_is_never_folded() {
    let text = "graph.func @main(%x: tensor<256xf32>) -> (tensor<256xf32>, tensor<256xf32>) {\n  \
         %p = data.constant dense<0.5> : tensor<256xf32>\n  \
         %b = graph.bernoulli %p : (tensor<256xf32>) -> tensor<256xf32>\n  \
         %y = graph.add %b, %x : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>\n  \
         graph.return %y, %b : tensor<256xf32>, tensor<256xf32>\n}\n";
    let model = load(&om_bytes("bernoulli", text, &CompileOptions::default()), 1);
    assert_eq!(model.folded_values(), 0, "nothing folded");
    let x = ge_ir::tensor::Tensor::from_f64(vec![256], ge_ir::DType::F32, vec![0.0; 256]);
    let (a, b) = (run(&model, std::slice::from_ref(&x)), run(&model, &[x]));
    assert_ne!(a[1].to_f64(), b[1].to_f64(), "two runs draw differently");
    assert_eq!(
        a[0].to_f64(),
        a[1].to_f64(),
        "the sum reads this run's draw"
    );
}
