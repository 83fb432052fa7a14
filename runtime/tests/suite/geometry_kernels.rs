//! The geometry kernels (runtime/src/kernels/geometry.rs: center crop-or-pad
//! through the pad kernel, the affine grid) against the reference
//! interpreter. Each case compiles a one-op function (with and without
//! Ascend storage formats), loads it with every kernel native
//! (`common::load` fails when one runs on the interpreter), runs it at 1 and
//! 2 threads and compares with the interpreter. A kernel made wrong on
//! purpose (the begin and end amounts of its pads swapped) fails the center
//! crop-or-pad cases here (checked once).

use crate::common;
use common::*;

fn check(text: &str, what: &str) {
    let (types, m) = signature(text, "main");
    let ins = random_inputs(&types, &[], 11);
    native_matches_interpreter(text, &m, &ins, what);
}

#[test]
fn center_crop_pad_matches_the_interpreter() {
    // (input shape, dtype, attributes, result shape)
    let cases = [
        ("3x4", "f32", "{shape = [2, 6]}", "2x6"),
        ("5x7", "f32", "{shape = [2, 3]}", "2x3"),
        ("5x7", "f32", "{shape = [8, 10]}", "8x10"),
        (
            "2x5x7x3",
            "f32",
            "{axes = [1, 2], shape = [4, 9]}",
            "2x4x9x3",
        ),
        ("2x5x7x3", "f32", "{axes = [-2], shape = [2]}", "2x5x2x3"),
        ("6x1x4", "f16", "{shape = [3, 3, 4]}", "3x3x4"),
        ("6x5", "i32", "{axes = [0], shape = [9]}", "9x5"),
        ("6x5", "i64", "{shape = [1, 0]}", "1x0"),
        ("4x4", "f64", "{shape = [3, 5]}", "3x5"),
        ("300x65", "f32", "{shape = [511, 33]}", "511x33"),
    ];
    for (shape, dt, attrs, out) in cases {
        let x = format!("tensor<{shape}x{dt}>");
        let y = format!("tensor<{out}x{dt}>");
        let text = format!(
            "graph.func @main(%x: {x}) -> {y} {{\n  %y = graph.center_crop_pad %x {attrs} : ({x}) -> {y}\n  graph.return %y : {y}\n}}\n"
        );
        check(&text, &format!("center_crop_pad {shape}x{dt} {attrs}"));
    }
}

#[test]
fn affine_grid_matches_the_interpreter() {
    // (theta shape, dtype, attributes, result shape)
    let cases = [
        ("1x2x3", "f32", "{size = [1, 1, 2, 3]}", "1x2x3x2"),
        (
            "2x2x3",
            "f32",
            "{align_corners = 1 : i64, size = [2, 3, 5, 4]}",
            "2x5x4x2",
        ),
        ("3x2x3", "f32", "{size = [3, 1, 1, 1]}", "3x1x1x2"),
        ("2x3x4", "f32", "{size = [2, 1, 3, 4, 5]}", "2x3x4x5x3"),
        (
            "1x3x4",
            "f32",
            "{align_corners = 1 : i64, size = [1, 2, 2, 1, 6]}",
            "1x2x1x6x3",
        ),
        ("2x2x3", "f16", "{size = [2, 1, 4, 4]}", "2x4x4x2"),
        ("4x2x3", "f32", "{size = [4, 1, 64, 80]}", "4x64x80x2"),
    ];
    for (shape, dt, attrs, out) in cases {
        let x = format!("tensor<{shape}x{dt}>");
        let y = format!("tensor<{out}x{dt}>");
        let text = format!(
            "graph.func @main(%t: {x}) -> {y} {{\n  %y = graph.affine_grid %t {attrs} : ({x}) -> {y}\n  graph.return %y : {y}\n}}\n"
        );
        check(&text, &format!("affine_grid {shape}x{dt} {attrs}"));
    }
}
