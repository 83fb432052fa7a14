//! The kernels of graph.max_pool2d_indices, graph.max_pool3d_indices and graph.max_unpool
//! (runtime/src/kernels/max_unpool.rs) against the reference interpreter.
//! Each case compiles a one- or two-op function (with and without Ascend
//! storage formats), loads it with every kernel native (`common::load` fails
//! when one runs on the interpreter), runs it at 1 and 2 threads and
//! compares with the interpreter. The unpooling takes the indices of a pool
//! of the same input, so they are valid. A kernel made wrong on purpose
//! (every task pooling plane 0) fails every case with more than one plane
//! here (checked once).

use crate::common;
use common::*;

fn check(text: &str, what: &str) {
    let (types, m) = signature(text, "main");
    let ins = random_inputs(&types, &[], 17);
    native_matches_interpreter(text, &m, &ins, what);
}

#[test]
fn max_pool_indices_matches_the_interpreter() {
    // (input shape, dtype, attributes, result shape)
    let cases = [
        ("1x1x3x3", "f32", "{kernel_shape = [2, 2]}", "1x1x2x2"),
        (
            "2x3x5x5",
            "f32",
            "{kernel_shape = [3, 3], pads = [1, 1, 1, 1], storage_order = 1 : i64}",
            "2x3x5x5",
        ),
        (
            "1x4x7x6",
            "f32",
            "{kernel_shape = [2, 3], strides = [2, 2], dilations = [2, 1]}",
            "1x4x3x2",
        ),
        (
            "2x2x6x6",
            "f32",
            "{ceil_mode = 1 : i64, kernel_shape = [3, 3], strides = [2, 2]}",
            "2x2x3x3",
        ),
        (
            "1x2x4x4",
            "f16",
            "{kernel_shape = [2, 2], strides = [2, 2], storage_order = 1 : i64}",
            "1x2x2x2",
        ),
        (
            "1x3x5x4",
            "ui8",
            "{kernel_shape = [2, 2], pads = [1, 0, 0, 1]}",
            "1x3x5x4",
        ),
        (
            "2x2x4x5",
            "i8",
            "{kernel_shape = [3, 2], strides = [1, 2]}",
            "2x2x2x2",
        ),
        (
            "4x8x64x64",
            "f32",
            "{kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}",
            "4x8x32x32",
        ),
    ];
    for (shape, dt, attrs, out) in cases {
        let x = format!("tensor<{shape}x{dt}>");
        let (y, i) = (format!("tensor<{out}x{dt}>"), format!("tensor<{out}xi64>"));
        let text = format!(
            "graph.func @main(%x: {x}) -> ({y}, {i}) {{\n  %y, %i = graph.max_pool2d_indices %x {attrs} : ({x}) -> ({y}, {i})\n  graph.return %y, %i : {y}, {i}\n}}\n"
        );
        check(&text, &format!("max_pool2d_indices {shape}x{dt} {attrs}"));
    }
}

#[test]
fn max_unpool_matches_the_interpreter() {
    // (input shape, dtype, window, pooled shape, unpool attributes, result shape)
    let cases = [
        ("1x1x4x4", "f32", "[2, 2]", "1x1x2x2", "", "1x1x4x4"),
        ("2x3x6x4", "f32", "[3, 2]", "2x3x2x2", "", "2x3x6x4"),
        (
            "1x2x4x4",
            "f32",
            "[2, 2]",
            "1x2x2x2",
            ", output_shape = [1, 2, 5, 6]",
            "1x2x5x6",
        ),
        ("1x2x4x6", "f16", "[2, 2]", "1x2x2x3", "", "1x2x4x6"),
        (
            "1x2x4x6",
            "f64",
            "[2, 2]",
            "1x2x2x3",
            ", output_shape = [1, 2, 4, 7]",
            "1x2x4x7",
        ),
        ("2x4x64x32", "f32", "[2, 2]", "2x4x32x16", "", "2x4x64x32"),
    ];
    for (shape, dt, k, pooled, extra, out) in cases {
        let x = format!("tensor<{shape}x{dt}>");
        let (p, i) = (
            format!("tensor<{pooled}x{dt}>"),
            format!("tensor<{pooled}xi64>"),
        );
        let y = format!("tensor<{out}x{dt}>");
        let text = format!(
            "graph.func @main(%x: {x}) -> {y} {{\n  %p, %i = graph.max_pool2d_indices %x {{kernel_shape = {k}, strides = {k}}} : ({x}) -> ({p}, {i})\n  %y = graph.max_unpool %p, %i {{kernel_shape = {k}, strides = {k}{extra}}} : ({p}, {i}) -> {y}\n  graph.return %y : {y}\n}}\n"
        );
        check(&text, &format!("max_unpool {shape}x{dt} {k}{extra}"));
    }
}

#[test]
fn max_pool3d_indices_matches_the_interpreter() {
    // (input shape, dtype, attributes, result shape)
    let cases = [
        ("1x1x2x2x2", "f32", "{kernel_shape = [2, 2, 2]}", "1x1x1x1x1"),
        (
            "2x3x4x5x6",
            "f32",
            "{kernel_shape = [2, 3, 2], pads = [0, 1, 1, 1, 1, 0], storage_order = 1 : i64}",
            "2x3x4x5x6",
        ),
        (
            "1x2x5x6x7",
            "f16",
            "{ceil_mode = 1 : i64, dilations = [1, 2, 1], kernel_shape = [2, 2, 3], strides = [2, 1, 2]}",
            "1x2x3x4x3",
        ),
        ("1x2x3x4x4", "f64", "{kernel_shape = [1, 2, 2], strides = [1, 2, 2]}", "1x2x3x2x2"),
        ("2x4x16x16x16", "f32", "{kernel_shape = [2, 2, 2], strides = [2, 2, 2]}", "2x4x8x8x8"),
    ];
    for (shape, dt, attrs, out) in cases {
        let x = format!("tensor<{shape}x{dt}>");
        let (y, i) = (format!("tensor<{out}x{dt}>"), format!("tensor<{out}xi64>"));
        let text = format!(
            "graph.func @main(%x: {x}) -> ({y}, {i}) {{\n  %y, %i = graph.max_pool3d_indices %x {attrs} : ({x}) -> ({y}, {i})\n  graph.return %y, %i : {y}, {i}\n}}\n"
        );
        check(&text, &format!("max_pool3d_indices {shape}x{dt} {attrs}"));
    }
}
