//! graph.resize's native kernel (runtime/src/kernels/resize.rs) against the
//! reference interpreter in every mode the kernel gained for the ONNX node
//! tests — cubic (two coefficients, exclude_outside), antialias (linear and
//! cubic, down and up), half_pixel_symmetric, tf_crop_and_resize with
//! extrapolation, axes and keep_aspect_ratio_policy — at several shapes and
//! dtypes. Each case compiles a one-op function, loads it with every kernel
//! native (`common::load` fails when one runs on the interpreter), runs it at
//! 1 and 2 threads and compares with the interpreter. The kernel and the
//! reference share the taps (`resize_run`), so what this checks is the
//! kernel's walk over them: outer-axis combinations, extrapolated rows and
//! elements, dtype conversion; the taps' values are checked against the ONNX
//! reference in lit-tests/graph/resize-modes.air and by the conformance cases.

use crate::common;
use common::*;

#[test]
fn resize_modes_match_the_interpreter() {
    // (input shape, dtype, attributes, result shape)
    let cases = [
        (
            "1x2x5x6",
            "f32",
            r#"{mode = "cubic", scales = [1.0, 1.0, 0.8, 1.7]}"#,
            "1x2x4x10",
        ),
        (
            "2x3x7",
            "f32",
            r#"{mode = "cubic", cubic_coeff_a = -0.5 : f64, exclude_outside = 1 : i64, sizes = [2, 5, 9]}"#,
            "2x5x9",
        ),
        (
            "1x1x9x8",
            "f32",
            r#"{mode = "linear", antialias = 1 : i64, scales = [1.0, 1.0, 0.3, 0.5]}"#,
            "1x1x2x4",
        ),
        (
            "1x3x9x8",
            "f64",
            r#"{mode = "cubic", antialias = 1 : i64, sizes = [1, 3, 4, 11]}"#,
            "1x3x4x11",
        ),
        (
            "3x4x5",
            "f32",
            r#"{mode = "linear", coordinate_transformation_mode = "half_pixel_symmetric", scales = [1.0, 2.3, 0.7]}"#,
            "3x9x3",
        ),
        (
            "2x6x6",
            "f32",
            r#"{mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", roi = [0.0, -0.2, 0.3, 1.0, 0.9, 1.4], extrapolation_value = 7.0 : f64, sizes = [2, 5, 4]}"#,
            "2x5x4",
        ),
        (
            "2x6x6",
            "f16",
            r#"{mode = "cubic", coordinate_transformation_mode = "tf_crop_and_resize", axes = [2, 1], roi = [0.1, 0.5, 1.3, 0.9], sizes = [3, 4]}"#,
            "2x4x3",
        ),
        (
            "2x6x6",
            "i32",
            r#"{mode = "nearest", coordinate_transformation_mode = "tf_crop_and_resize", roi = [0.0, 0.0, -0.5, 1.0, 1.0, 1.5], extrapolation_value = 3.0 : f64, sizes = [2, 6, 5]}"#,
            "2x6x5",
        ),
        (
            "1x2x4x6",
            "f32",
            r#"{mode = "nearest", axes = [3, 2], keep_aspect_ratio_policy = "not_larger", sizes = [9, 9]}"#,
            "1x2x6x9",
        ),
        (
            "1x2x4x6",
            "i64",
            r#"{mode = "nearest", axes = [-2, -1], keep_aspect_ratio_policy = "not_smaller", sizes = [7, 7]}"#,
            "1x2x7x11",
        ),
        (
            "3x4x6",
            "f32",
            r#"{mode = "linear", axes = [1], coordinate_transformation_mode = "align_corners", scales = [1.6]}"#,
            "3x6x6",
        ),
    ];
    for (shape, dt, attrs, out) in cases {
        let x = format!("tensor<{shape}x{dt}>");
        let y = format!("tensor<{out}x{dt}>");
        let text = format!(
            "graph.func @main(%x: {x}) -> {y} {{\n  %y = graph.resize %x {attrs} : ({x}) -> {y}\n  graph.return %y : {y}\n}}\n"
        );
        let (types, m) = signature(&text, "main");
        let ins = random_inputs(&types, &[], 5);
        native_matches_interpreter(&text, &m, &ins, &format!("resize {shape}x{dt} {attrs}"));
    }
}

#[test]
fn a_resize_run_at_changing_batch_sizes_matches_the_interpreter() {
    // The kernel keeps the taps of the last input shape; one model run at
    // batch sizes that change and come back must use each run's own.
    let text = r#"graph.func @main(%x: tensor<Bx2x3x4xf32>) -> tensor<Bx2x6x6xf32> {
  %y = graph.resize %x {mode = "linear", scales = [1.0, 1.0, 2.0, 1.5]} : (tensor<Bx2x3x4xf32>) -> tensor<Bx2x6x6xf32>
  graph.return %y : tensor<Bx2x6x6xf32>
}
"#;
    let (types, m) = signature(text, "main");
    let om = om_bytes("k", text, &Default::default());
    for threads in [1, 2] {
        let model = load(&om, threads);
        for b in [1, 3, 1, 2] {
            let ins = random_inputs(&types, &[("B", b)], b as u64);
            let want = interpret(&m, "main", &ins);
            assert_close(
                &run(&model, &ins),
                &want,
                &format!("B={b} threads={threads}"),
            );
        }
    }
}
