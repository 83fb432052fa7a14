//! `runtime/src/split.rs`: at 2 threads each compute launch times itself
//! split over the pool and alone in its first runs, then keeps the faster.
//! Every run — the timed ones of either way and the ones after the choice —
//! gives the interpreter's outputs (a block of MobileNetV2: 1x1 expand, 3x3
//! depthwise, 1x1 project, each large enough that its kernel splits).

use crate::common;
use common::*;
use ge_compile::CompileOptions;

#[test]
fn every_run_around_the_measured_choice_matches_the_interpreter() {
    let text = "graph.func @main(%x: tensor<1x24x16x16xf32>, %e: tensor<144x24x1x1xf32>, \
         %d: tensor<144x1x3x3xf32>, %p: tensor<24x144x1x1xf32>) -> tensor<1x24x16x16xf32> {\n  \
         %a = graph.conv2d %x, %e {activation = \"relu6\"} : (tensor<1x24x16x16xf32>, tensor<144x24x1x1xf32>) -> tensor<1x144x16x16xf32>\n  \
         %b = graph.conv2d %a, %d {group = 144 : i64, pads = [1, 1, 1, 1], activation = \"relu6\"} : (tensor<1x144x16x16xf32>, tensor<144x1x3x3xf32>) -> tensor<1x144x16x16xf32>\n  \
         %y = graph.conv2d %b, %p : (tensor<1x144x16x16xf32>, tensor<24x144x1x1xf32>) -> tensor<1x24x16x16xf32>\n  \
         graph.return %y : tensor<1x24x16x16xf32>\n}\n";
    let om = om_bytes("block", text, &CompileOptions::default());
    let (types, m) = signature(text, "main");
    let model = load(&om, 2);
    let ins = random_inputs(&types, &[], 5);
    let want = interpret(&m, "main", &ins);
    // Past the timed runs (`split::TRIALS`, 8: both ways in turn) into the
    // runs after the choice.
    for i in 0..24 {
        assert_close(&run(&model, &ins), &want, &format!("run {i}"));
    }
}
