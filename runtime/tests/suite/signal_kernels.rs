//! The signal kernels (runtime/src/kernels/signal.rs: DFT and STFT by FFT,
//! the windows, the mel matrix) against the reference interpreter, whose DFT
//! is the direct sum of the definition — so every case compares two
//! independent computations. Each case compiles a one-op function (with and
//! without Ascend storage formats), loads it with every kernel native
//! (`common::load` fails when one runs on the interpreter), runs it at 1 and 2
//! threads and compares with the interpreter. Windows and the mel matrix take
//! their sizes from values (a `graph.specialize`), as an imported model does:
//! with constant sizes the compiler folds them into constants.
//! A kernel made wrong on purpose (the FFT's direction swapped) fails every
//! DFT and STFT case here.

use crate::common;
use common::*;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

/// Compile `text`'s `@main`, run it natively and on the interpreter on
/// `ins` (random inputs when `None`), compare.
fn check_inputs(text: &str, ins: Option<Vec<Tensor>>, what: &str) {
    let (types, m) = signature(text, "main");
    let ins = ins.unwrap_or_else(|| random_inputs(&types, &[], 11));
    native_matches_interpreter(text, &m, &ins, what);
}

#[test]
fn dft_matches_the_interpreter() {
    // (input shape, dtype, attributes, result shape)
    let cases = [
        ("3x8x1", "f32", "{axis = 1 : i64}", "3x8x2"),
        ("2x5x3x2", "f32", "{axis = 1 : i64}", "2x5x3x2"),
        ("2x5x3x2", "f32", "{axis = -3 : i64}", "2x5x3x2"),
        ("4x7x2", "f32", "{inverse = 1 : i64}", "4x7x2"),
        ("2x6x1", "f32", "{onesided = 1 : i64}", "2x4x2"),
        ("2x13x1", "f32", "{onesided = 1 : i64}", "2x7x2"),
        (
            "2x5x2",
            "f32",
            "{inverse = 1 : i64, onesided = 1 : i64}",
            "2x8x1",
        ),
        (
            "2x5x2",
            "f32",
            "{inverse = 1 : i64, onesided = 1 : i64, dft_length = 9 : i64}",
            "2x9x1",
        ),
        (
            "5x1",
            "f32",
            "{axis = 0 : i64, dft_length = 8 : i64}",
            "8x2",
        ),
        (
            "5x2",
            "f32",
            "{axis = 0 : i64, dft_length = 3 : i64}",
            "3x2",
        ),
        ("64x3x2", "f64", "{axis = 0 : i64}", "64x3x2"),
        ("2x12x1", "f16", "{axis = 1 : i64}", "2x12x2"),
        (
            "1x97x2",
            "f32",
            "{axis = 1 : i64, inverse = 1 : i64}",
            "1x97x2",
        ),
    ];
    for (shape, dt, attrs, out) in cases {
        let x = format!("tensor<{shape}x{dt}>");
        let y = format!("tensor<{out}x{dt}>");
        let text = format!(
            "graph.func @main(%x: {x}) -> {y} {{\n  %y = graph.dft %x {attrs} : ({x}) -> {y}\n  graph.return %y : {y}\n}}\n"
        );
        check_inputs(&text, None, &format!("dft {shape}x{dt} {attrs}"));
    }
}

#[test]
fn stft_matches_the_interpreter() {
    // (signal shape, window length or 0, attributes, result shape)
    let cases = [
        ("2x64x1", 16, "{frame_step = 8 : i64}", "2x7x9x2"),
        (
            "1x40x2",
            0,
            "{frame_step = 5 : i64, frame_length = 12 : i64, onesided = 0 : i64}",
            "1x6x12x2",
        ),
        ("3x20x1", 0, "{frame_step = 3 : i64}", "3x1x11x2"),
        (
            "1x30x1",
            7,
            "{frame_step = 4 : i64, frame_length = 7 : i64, onesided = 0 : i64}",
            "1x6x7x2",
        ),
    ];
    for (shape, w, attrs, out) in cases {
        let x = format!("tensor<{shape}xf32>");
        let y = format!("tensor<{out}xf32>");
        let text = if w > 0 {
            let wt = format!("tensor<{w}xf32>");
            format!(
                "graph.func @main(%x: {x}, %w: {wt}) -> {y} {{\n  %y = graph.stft %x, %w {attrs} : ({x}, {wt}) -> {y}\n  graph.return %y : {y}\n}}\n"
            )
        } else {
            format!(
                "graph.func @main(%x: {x}) -> {y} {{\n  %y = graph.stft %x {attrs} : ({x}) -> {y}\n  graph.return %y : {y}\n}}\n"
            )
        };
        check_inputs(&text, None, &format!("stft {shape} window {w} {attrs}"));
    }
}

#[test]
fn windows_match_the_interpreter() {
    for op in [
        "graph.hann_window",
        "graph.hamming_window",
        "graph.blackman_window",
    ] {
        for (size, periodic, dt) in [
            (1, 1, "f32"),
            (10, 1, "f32"),
            (10, 0, "f32"),
            (33, 0, "f64"),
            (16, 1, "f16"),
            (8, 1, "i32"),
        ] {
            let y = format!("tensor<{size}x{dt}>");
            let text = format!(
                "graph.func @main(%n: tensor<i64>) -> {y} {{\n  %y = graph.specialize %n {{op = \"{op}\", static_attrs = {{dtype = {dt}, periodic = {periodic} : i64}}, from_values = [\"size:int\"]}} : (tensor<i64>) -> {y}\n  graph.return %y : {y}\n}}\n"
            );
            let n = Tensor::from_i64(vec![], DType::I64, vec![size]);
            check_inputs(
                &text,
                Some(vec![n]),
                &format!("{op} {size} {periodic} {dt}"),
            );
        }
    }
}

#[test]
fn mel_weight_matrix_matches_the_interpreter() {
    // (bands, dft length, sample rate, lower and upper edge)
    for (bands, len, rate, lo, hi) in [
        (8, 16, 8192, 0.0, 4096.0),
        (3, 16, 16, 1.0, 7.0),
        (20, 512, 16000, 20.0, 7600.0),
    ] {
        let y = format!("tensor<{}x{bands}xf32>", len / 2 + 1);
        let text = format!(
            "graph.func @main(%b: tensor<i32>, %lo: tensor<f32>, %hi: tensor<f32>) -> {y} {{\n  %y = graph.specialize %b, %lo, %hi {{op = \"graph.mel_weight_matrix\", static_attrs = {{dft_length = {len} : i64, sample_rate = {rate} : i64, dtype = f32}}, from_values = [\"num_mel_bins:int\", \"lower_edge_hertz:float\", \"upper_edge_hertz:float\"]}} : (tensor<i32>, tensor<f32>, tensor<f32>) -> {y}\n  graph.return %y : {y}\n}}\n"
        );
        let ins = vec![
            Tensor::from_i64(vec![], DType::I32, vec![bands]),
            Tensor::from_f64(vec![], DType::F32, vec![lo]),
            Tensor::from_f64(vec![], DType::F32, vec![hi]),
        ];
        check_inputs(&text, Some(ins), &format!("mel {bands} {len} {rate}"));
    }
}
