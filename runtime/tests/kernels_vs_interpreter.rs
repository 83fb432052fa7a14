//! The kernels of their own files (runtime/src/kernels/<op>.rs) against the
//! reference interpreter, the oracle: each case compiles a one-op function
//! (with and without Ascend storage formats), loads it with every kernel
//! native (`common::load` fails the test when one runs on the interpreter,
//! so a case never compares the interpreter with itself), runs it on random
//! inputs at 1 and 2 threads and compares with the interpreter's result.

mod common;
use common::*;
use ge_compile::CompileOptions;

/// Compile `text`'s `@main`, run it natively and on the interpreter, compare.
fn check(text: &str, what: &str) {
    let (types, m) = signature(text, "main");
    let ins = random_inputs(&types, &[], 7);
    let want = interpret(&m, "main", &ins);
    for formats in [false, true] {
        let opts = CompileOptions {
            formats,
            ..Default::default()
        };
        let om = om_bytes("k", text, &opts);
        for threads in [1, 2] {
            let got = run(&load(&om, threads), &ins);
            assert_close(
                &got,
                &want,
                &format!("{what} formats={formats} threads={threads}"),
            );
        }
    }
}

/// A function of one op: `args` are `(name, type)`, `op` the op's text.
fn one_op(args: &[(&str, &str)], op: &str, result: &str) -> String {
    let params: Vec<String> = args.iter().map(|(n, t)| format!("%{n}: {t}")).collect();
    let operand_types: Vec<&str> = args.iter().map(|(_, t)| *t).collect();
    let operands: Vec<String> = args.iter().map(|(n, _)| format!("%{n}")).collect();
    format!(
        "graph.func @main({}) -> {result} {{\n  %y = {} : ({}) -> {result}\n  graph.return %y : {result}\n}}\n",
        params.join(", "),
        op.replace("$OPERANDS", &operands.join(", ")),
        operand_types.join(", "),
    )
}

#[test]
fn batch_norm_matches_the_interpreter() {
    for (shape, c, dt) in [
        ("2x6x5x7", 6, "f32"),
        ("3x4x9", 4, "f32"),
        ("5x8", 8, "f32"),
        ("1x3x2x2x3", 3, "f32"),
        ("2x6x5x7", 6, "f16"),
        ("2x4x3x3", 4, "bf16"),
    ] {
        let x = format!("tensor<{shape}x{dt}>");
        let p = format!("tensor<{c}x{dt}>");
        // The variance is a positive constant (random operands may be negative).
        let text = format!(
            "graph.func @main(%x: {x}, %s: {p}, %b: {p}, %m: {p}) -> {x} {{\n  \
             %v = data.constant dense<0.75> : {p}\n  \
             %y = graph.batch_norm %x, %s, %b, %m, %v {{epsilon = 1.0e-03 : f64}} : ({x}, {p}, {p}, {p}, {p}) -> {x}\n  \
             graph.return %y : {x}\n}}\n"
        );
        check(&text, &format!("batch_norm {shape} {dt}"));
    }
}

#[test]
fn pad_matches_the_interpreter() {
    // (input shape, pads, output shape)
    let shapes = [
        ("2x5x6", "[0, 1, 2, 0, 2, 1]", "2x8x9"),
        ("1x4x5x6", "[0, 2, 0, 0, 0, 2, 0, 0]", "1x8x5x6"),
        ("1x3x5x6", "[0, 0, 1, 3, 0, 0, 2, 0]", "1x3x8x9"),
        ("3x7", "[-1, 2, 1, -3]", "3x6"),
        ("9", "[3, 4]", "16"),
    ];
    for (xs, pads, ys) in shapes {
        for mode in ["constant", "reflect", "edge", "wrap"] {
            for dt in ["f32", "f16", "i64", "i32", "i8", "i1"] {
                // Reflect may not reach further than the dim (the interpreter's rule).
                if mode == "reflect" && xs == "9" && dt != "f32" {
                    continue;
                }
                let (x, y) = (format!("tensor<{xs}x{dt}>"), format!("tensor<{ys}x{dt}>"));
                let op = format!(
                    "graph.pad $OPERANDS {{pads = {pads}, mode = \"{mode}\", value = 1.5 : f64}}"
                );
                let text = one_op(&[("x", &x)], &op, &y);
                check(&text, &format!("pad {xs} {pads} {mode} {dt}"));
            }
        }
    }
}

#[test]
fn gather_elements_matches_the_interpreter() {
    // Random indices are 0..8: the indexed dim has 9 elements.
    // (input shape, indices shape, axis)
    let cases = [
        ("4x9", "4x5", 1),
        ("9x3", "6x3", 0),
        ("2x9x5", "2x7x4", 1),
        ("2x3x9", "2x2x11", 2),
        ("9", "13", -1),
    ];
    for (xs, is, axis) in cases {
        for dt in ["f32", "f16", "i64", "i8", "i1"] {
            for it in ["i64", "i32"] {
                let (x, i, y) = (
                    format!("tensor<{xs}x{dt}>"),
                    format!("tensor<{is}x{it}>"),
                    format!("tensor<{is}x{dt}>"),
                );
                let op = format!("graph.gather_elements $OPERANDS {{axis = {axis} : i64}}");
                let text = one_op(&[("x", &x), ("i", &i)], &op, &y);
                check(
                    &text,
                    &format!("gather_elements {xs} {is} axis {axis} {dt} {it}"),
                );
            }
        }
    }
    // Negative indices count from the end.
    let text = "graph.func @main(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {\n  \
                %i = data.constant dense<[[-1, 0], [-3, 2]]> : tensor<2x2xi64>\n  \
                %y = graph.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>\n  \
                graph.return %y : tensor<2x2xf32>\n}\n";
    check(text, "gather_elements negative indices");
}

#[test]
fn argmax_and_argmin_match_the_interpreter() {
    // (input shape, axis, keepdims, result shape)
    let cases = [
        ("5x7", 1, 1, "5x1"),
        ("5x7", 0, 0, "7"),
        ("3x6x4", 1, 1, "3x1x4"),
        ("3x6x4", -1, 0, "3x6"),
        ("11", 0, 0, ""),
    ];
    for (xs, axis, keep, ys) in cases {
        for op in ["argmax", "argmin"] {
            for last in [0, 1] {
                // Integers 0..8 give ties (select_last_index decides them).
                for dt in ["f32", "f16", "i64", "i32", "i8"] {
                    let x = format!("tensor<{xs}x{dt}>");
                    let y = if ys.is_empty() {
                        "tensor<i64>".to_string()
                    } else {
                        format!("tensor<{ys}xi64>")
                    };
                    let text = one_op(
                        &[("x", &x)],
                        &format!("graph.{op} $OPERANDS {{axis = {axis} : i64, keepdims = {keep} : i64, select_last_index = {last} : i64}}"),
                        &y,
                    );
                    check(&text, &format!("{op} {xs} axis {axis} last {last} {dt}"));
                }
            }
        }
    }
}

#[test]
fn bitwise_and_trig_ops_match_the_interpreter() {
    // Bitwise ops on every integer width (random 0..8 values; not flips every bit).
    for dt in ["i64", "i32", "i16", "i8", "ui8", "ui16"] {
        let (a, b) = (format!("tensor<3x5x{dt}>"), format!("tensor<5x{dt}>"));
        for op in ["bitwise_and", "bitwise_or", "bitwise_xor"] {
            let text = one_op(
                &[("a", &a), ("b", &b)],
                &format!("graph.{op} $OPERANDS"),
                &a,
            );
            check(&text, &format!("{op} {dt}"));
        }
        let text = one_op(&[("a", &a)], "graph.bitwise_not $OPERANDS", &a);
        check(&text, &format!("bitwise_not {dt}"));
    }
    // Inverse trigonometry on [-1, 1) (random inputs), f32 and f16.
    for dt in ["f32", "f16"] {
        let x = format!("tensor<4x7x{dt}>");
        for op in ["asin", "acos", "atan"] {
            let text = one_op(&[("x", &x)], &format!("graph.{op} $OPERANDS"), &x);
            check(&text, &format!("{op} {dt}"));
        }
    }
}

#[test]
fn scatter_elements_matches_the_interpreter() {
    // Random indices are 0..8: the indexed dim has 9 elements.
    // (data shape, indices shape, axis)
    let cases = [
        ("4x9", "4x5", 1),
        ("9x3", "6x3", 0),
        ("2x9x5", "2x7x4", 1),
        ("9", "13", 0),
    ];
    for (xs, is, axis) in cases {
        for red in ["none", "add", "mul", "max", "min"] {
            // `none` with duplicate indices: the last update wins (in order).
            for dt in ["f32", "f16", "i64", "i32"] {
                let (x, i, u) = (
                    format!("tensor<{xs}x{dt}>"),
                    format!("tensor<{is}xi64>"),
                    format!("tensor<{is}x{dt}>"),
                );
                let op = format!(
                    "graph.scatter_elements $OPERANDS {{axis = {axis} : i64, reduction = \"{red}\"}}"
                );
                let text = one_op(&[("x", &x), ("i", &i), ("u", &u)], &op, &x);
                check(
                    &text,
                    &format!("scatter_elements {xs} {is} {axis} {red} {dt}"),
                );
            }
        }
    }
}

#[test]
fn instance_norm_matches_the_interpreter() {
    for (shape, c, dt) in [
        ("2x3x5x7", 3, "f32"),
        ("3x4x9", 4, "f32"),
        ("1x2x3x2x4", 2, "f32"),
        ("2x3x5x7", 3, "f16"),
    ] {
        let (x, p) = (format!("tensor<{shape}x{dt}>"), format!("tensor<{c}x{dt}>"));
        let text = one_op(
            &[("x", &x), ("s", &p), ("b", &p)],
            "graph.instance_norm $OPERANDS {epsilon = 1.0e-03 : f64}",
            &x,
        );
        check(&text, &format!("instance_norm {shape} {dt}"));
    }
}

/// The recurrent layers (runtime/src/kernels/rnn.rs): every cell, both
/// directions at once, bias, initial states, peepholes, both layouts and
/// sequence lengths (a constant: random lengths would be out of range).
#[test]
fn recurrent_layers_match_the_interpreter() {
    // (op, gates, extra attributes, layout, dtype)
    let cases = [
        ("rnn", 1, "", 0, "f32"),
        (
            "rnn",
            1,
            ", activations = [\"Relu\", \"HardSigmoid\"], clip = 2.0 : f64",
            1,
            "f32",
        ),
        ("gru", 3, "", 0, "f32"),
        ("gru", 3, ", linear_before_reset = 1 : i64", 1, "f16"),
        ("lstm", 4, "", 0, "f32"),
        ("lstm", 4, ", input_forget = 1 : i64", 1, "f32"),
    ];
    let (seq, batch, input, hidden) = (4, 3, 5, 6);
    for (op, g, extra, layout, dt) in cases {
        let t = |dims: &[usize]| {
            let d: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
            format!("tensor<{}x{dt}>", d.join("x"))
        };
        let (x, state, y) = if layout == 1 {
            (
                t(&[batch, seq, input]),
                t(&[batch, 2, hidden]),
                t(&[batch, seq, 2, hidden]),
            )
        } else {
            (
                t(&[seq, batch, input]),
                t(&[2, batch, hidden]),
                t(&[seq, 2, batch, hidden]),
            )
        };
        let w = t(&[2, g * hidden, input]);
        let r = t(&[2, g * hidden, hidden]);
        let b = t(&[2, 2 * g * hidden]);
        let p = t(&[2, 3 * hidden]);
        let lstm = op == "lstm";
        let mut args = vec![
            ("x", x.clone()),
            ("w", w.clone()),
            ("r", r.clone()),
            ("b", b.clone()),
            ("h", state.clone()),
        ];
        let mut types = vec![x, w, r, b, "tensor<3xi32>".to_string(), state.clone()];
        let mut seg = "1, 1, 1, 1, 1, 1".to_string();
        if lstm {
            args.push(("c", state.clone()));
            args.push(("p", p.clone()));
            types.push(state.clone());
            types.push(p);
            seg.push_str(", 1, 1");
        }
        let results = if lstm {
            format!("({y}, {state}, {state})")
        } else {
            format!("({y}, {state})")
        };
        let params: Vec<String> = args.iter().map(|(n, t)| format!("%{n}: {t}")).collect();
        let mut operands: Vec<&str> = vec!["%x", "%w", "%r", "%b", "%len", "%h"];
        if lstm {
            operands.extend(["%c", "%p"]);
        }
        let n = if lstm { 3 } else { 2 };
        let outs: Vec<String> = (0..n).map(|i| format!("%y#{i}")).collect();
        let text = format!(
            "graph.func @main({}) -> {results} {{\n  \
             %len = data.constant dense<[4, 1, 3]> : tensor<3xi32>\n  \
             %y:{n} = graph.{op} {} {{hidden_size = {hidden} : i64, direction = \"bidirectional\", layout = {layout} : i64, operand_segment_sizes = [{seg}]{extra}}} : ({}) -> {results}\n  \
             graph.return {} : {}\n}}\n",
            params.join(", "),
            operands.join(", "),
            types.join(", "),
            outs.join(", "),
            results.trim_matches(|c| c == '(' || c == ')'),
        );
        check(&text, &format!("{op} layout {layout} {dt}{extra}"));
    }
}

/// The volumetric kernels (runtime/src/kernels/volume.rs): conv3d with
/// groups, bias, strides, pads and dilations (im2col + GEMM against the
/// reference's direct sum), max and average pools with ceil mode and pads.
#[test]
fn volumetric_ops_match_the_interpreter() {
    // (input, filter, output, attributes, bias)
    let convs = [
        ("1x3x5x6x7", "4x3x3x3x3", "1x4x3x4x5", "", true),
        ("2x4x6x5x5", "6x2x2x3x1", "2x6x3x2x5", "{group = 2 : i64, strides = [2, 2, 1], pads = [0, 1, 0, 1, 0, 0], dilations = [1, 1, 2]}", false),
        ("1x2x4x4x4", "3x2x1x1x1", "1x3x4x4x4", "", true),
    ];
    for dt in ["f32", "f16"] {
        for (xs, ws, ys, attrs, bias) in convs {
            let (x, w, y) = (
                format!("tensor<{xs}x{dt}>"),
                format!("tensor<{ws}x{dt}>"),
                format!("tensor<{ys}x{dt}>"),
            );
            let m = ws.split('x').next().unwrap_or("1");
            let b = format!("tensor<{m}x{dt}>");
            let mut args = vec![("x", x.as_str()), ("w", w.as_str())];
            if bias {
                args.push(("b", b.as_str()));
            }
            let text = one_op(&args, &format!("graph.conv3d $OPERANDS {attrs}"), &y);
            check(&text, &format!("conv3d {xs} {ws} {attrs} {dt}"));
        }
    }
    // (op, input, output, attributes)
    let pools = [
        ("max_pool3d", "2x3x5x6x7", "2x3x2x3x3", "kernel_shape = [2, 2, 3], strides = [2, 2, 2]"),
        ("max_pool3d", "1x2x5x5x5", "1x2x3x3x3", "kernel_shape = [3, 3, 3], strides = [2, 2, 2], pads = [1, 1, 1, 1, 1, 1], dilations = [1, 1, 1], ceil_mode = 1 : i64"),
        ("avg_pool3d", "2x3x5x6x7", "2x3x3x3x4", "kernel_shape = [2, 2, 2], strides = [2, 2, 2], ceil_mode = 1 : i64"),
        ("avg_pool3d", "1x2x4x4x4", "1x2x4x4x4", "kernel_shape = [3, 3, 3], pads = [1, 1, 1, 1, 1, 1], count_include_pad = 1 : i64"),
        ("avg_pool3d", "1x2x6x6x6", "1x2x2x2x2", "kernel_shape = [2, 2, 2], strides = [2, 2, 2], dilations = [2, 2, 2]"),
    ];
    for dt in ["f32", "f16"] {
        for (op, xs, ys, attrs) in pools {
            let (x, y) = (format!("tensor<{xs}x{dt}>"), format!("tensor<{ys}x{dt}>"));
            let text = one_op(
                &[("x", &x)],
                &format!("graph.{op} $OPERANDS {{{attrs}}}"),
                &y,
            );
            check(&text, &format!("{op} {xs} {attrs} {dt}"));
        }
    }
}

/// graph.bit_shift (runtime/src/kernels/bit_shift.rs): both directions on
/// signed and unsigned types with broadcasting; random amounts 0..8 reach
/// the width of the 8-bit types (the out-of-range rule).
#[test]
fn bit_shift_matches_the_interpreter() {
    for dt in ["i8", "ui8", "i32", "ui16", "i64"] {
        let (a, b) = (format!("tensor<3x5x{dt}>"), format!("tensor<5x{dt}>"));
        for dir in ["left", "right"] {
            let text = one_op(
                &[("a", &a), ("b", &b)],
                &format!("graph.bit_shift $OPERANDS {{direction = \"{dir}\"}}"),
                &a,
            );
            check(&text, &format!("bit_shift {dir} {dt}"));
        }
    }
}

/// graph.cumprod (runtime/src/kernels/cumulative.rs): every axis, exclusive
/// and reverse, floats and wrapping integers.
#[test]
fn cumprod_matches_the_interpreter() {
    for dt in ["f32", "f16", "i32", "i8"] {
        let x = format!("tensor<3x4x5x{dt}>");
        for axis in [0, 1, -1] {
            for (ex, rev) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let op = format!(
                    "graph.cumprod $OPERANDS {{axis = {axis} : i64, exclusive = {ex} : i64, reverse = {rev} : i64}}"
                );
                let text = one_op(&[("x", &x)], &op, &x);
                check(&text, &format!("cumprod {dt} axis {axis} {ex} {rev}"));
            }
        }
    }
}
