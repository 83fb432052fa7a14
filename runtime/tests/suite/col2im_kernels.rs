//! The Col2Im kernel (runtime/src/kernels/col2im.rs) against the reference
//! interpreter. Each case compiles a one-op function (with and without
//! Ascend storage formats), loads it with every kernel native
//! (`common::load` fails when one runs on the interpreter), runs it at 1 and
//! 2 threads and compares with the interpreter: 1-, 2- and 3-D images, pads,
//! strides, dilations, several batch entries and channels, f16 and f64, and
//! one large enough to split over threads. A kernel made wrong on purpose
//! (every task writing plane 0's columns) fails every case with more than
//! one plane here (checked once).

use crate::common;
use common::*;

#[test]
fn col2im_matches_the_interpreter() {
    // (input shape, dtype, attributes, result shape)
    let cases = [
        ("1x4x1", "f32", "{block_shape = [2, 2], image_shape = [2, 2]}", "1x1x2x2"),
        (
            "2x12x9",
            "f32",
            "{block_shape = [2, 3], dilations = [1, 2], image_shape = [5, 6], pads = [1, 0, 0, 1], strides = [2, 1]}",
            "2x2x5x6",
        ),
        (
            "1x10x12",
            "f32",
            "{block_shape = [1, 1, 5], image_shape = [3, 4, 5]}",
            "1x2x3x4x5",
        ),
        (
            "2x8x6",
            "f32",
            "{block_shape = [2, 2, 2], image_shape = [3, 3, 4], pads = [0, 0, 1, 0, 0, 1], strides = [1, 2, 2]}",
            "2x1x3x3x4",
        ),
        ("3x8x9", "f16", "{block_shape = [2, 2], image_shape = [4, 4]}", "3x2x4x4"),
        ("1x3x5", "f64", "{block_shape = [3], image_shape = [7]}", "1x1x7"),
        ("2x6x2", "f32", "{block_shape = [3], image_shape = [5], dilations = [2], pads = [2, 1], strides = [3]}", "2x2x5"),
        ("2x27x4096", "f32", "{block_shape = [3, 3], image_shape = [66, 66]}", "2x3x66x66"),
    ];
    for (shape, dt, attrs, out) in cases {
        let x = format!("tensor<{shape}x{dt}>");
        let y = format!("tensor<{out}x{dt}>");
        let text = format!(
            "graph.func @main(%x: {x}) -> {y} {{\n  %y = graph.col2im %x {attrs} : ({x}) -> {y}\n  graph.return %y : {y}\n}}\n"
        );
        let (types, m) = signature(&text, "main");
        let ins = random_inputs(&types, &[], 16);
        native_matches_interpreter(&text, &m, &ins, &format!("col2im {shape}x{dt} {attrs}"));
    }
}
