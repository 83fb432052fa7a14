//! The kernels of their own files (runtime/src/kernels/<op>.rs) against the
//! reference interpreter, the oracle: each case compiles a one-op function
//! (with and without Ascend storage formats), loads it with every kernel
//! native (`common::load` fails the test when one runs on the interpreter,
//! so a case never compares the interpreter with itself), runs it on random
//! inputs at 1 and 2 threads and compares with the interpreter's result.

use crate::common;
use common::*;

/// Compile `text`'s `@main`, run it natively and on the interpreter, compare.
fn check(text: &str, what: &str) {
    check_bound(text, what, &[]);
}

/// [`check`] with symbolic dims of the inputs bound to sizes.
fn check_bound(text: &str, what: &str, binds: &[(&str, i64)]) {
    let (types, m) = signature(text, "main");
    let ins = random_inputs(&types, binds, 7);
    native_matches_interpreter(text, &m, &ins, what);
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
        // Planes of one value (a BatchNorm1d), channels past a vector.
        ("40x37", 37, "f32"),
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
fn a_relu_after_a_batch_norm_runs_in_its_pass() {
    // (return, fused relus): the relu only (fused), the batch norm's result
    // too (kept as two steps), f16 (fused: the relu commutes with the
    // rounding). Channel means on both sides of the inputs, so the relu
    // zeroes some of each channel and keeps the rest.
    // Planes of 35 values, and of one and four (a sample at a time).
    for (shape, dt, ret, fused) in [
        ("2x6x5x7", "f32", "%r", 1),
        ("2x6x5x7", "f32", "%r, %y", 0),
        ("2x6x5x7", "f16", "%r", 1),
        ("9x6", "f32", "%r", 1),
        ("3x6x2x2", "f32", "%r", 1),
    ] {
        let x = format!("tensor<{shape}x{dt}>");
        let p = format!("tensor<6x{dt}>");
        let rets = ret
            .split(", ")
            .map(|_| x.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let text = format!(
            "graph.func @main(%x: {x}, %s: {p}, %b: {p}) -> ({rets}) {{\n  \
             %v = data.constant dense<0.75> : {p}\n  \
             %m = data.constant dense<[0.0, 0.5, -0.5, 0.25, 1.0, -1.0]> : {p}\n  \
             %y = graph.batch_norm %x, %s, %b, %m, %v {{epsilon = 1.0e-03 : f64}} : ({x}, {p}, {p}, {p}, {p}) -> {x}\n  \
             %r = graph.relu %y : ({x}) -> {x}\n  \
             graph.return {ret} : {rets}\n}}\n"
        );
        let (types, m) = signature(&text, "main");
        let ins = random_inputs(&types, &[], 5);
        native_matches_interpreter(
            &text,
            &m,
            &ins,
            &format!("batch_norm + relu {shape} {dt} -> {ret}"),
        );
        let om = om_bytes("bn", &text, &Default::default());
        assert_eq!(load(&om, 1).fused_relus(), fused, "{shape} {dt} -> {ret}");
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
            for dt in ["f32", "f16", "f64", "i64", "i32", "i8", "i1"] {
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
        for dt in ["f32", "f16", "f64", "i64", "i8", "i1"] {
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
                for dt in ["f32", "f16", "f64", "i64", "i32", "i8"] {
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
            for dt in ["f32", "f16", "f64", "i64", "i32"] {
                // f64 natively only without a reduction (a byte copy).
                if dt == "f64" && red != "none" {
                    continue;
                }
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

#[test]
fn grid_sample_matches_the_interpreter() {
    // (input shape, grid shape): 1-, 2- and 3-D images. The grid is scaled
    // by 1.5 so that points fall outside the image and padding decides.
    let shapes = [
        ("2x3x5x7", "2x4x6x2"),
        ("1x2x6x4", "1x3x3x2"),
        ("1x2x3x4x5", "1x2x3x2x3"),
        ("2x3x9", "2x7x1"),
    ];
    for (xs, gs) in shapes {
        let rank = xs.split('x').count();
        let ys = {
            let x: Vec<&str> = xs.split('x').collect();
            let g: Vec<&str> = gs.split('x').collect();
            let mut y = vec![x[0], x[1]];
            y.extend_from_slice(&g[1..g.len() - 1]);
            y.join("x")
        };
        for mode in ["linear", "nearest", "cubic"] {
            if mode == "cubic" && rank != 4 {
                continue;
            }
            for padding in ["zeros", "border", "reflection"] {
                for align in [0, 1] {
                    for dt in ["f32", "f16"] {
                        let (x, g, y) = (
                            format!("tensor<{xs}x{dt}>"),
                            format!("tensor<{gs}x{dt}>"),
                            format!("tensor<{ys}x{dt}>"),
                        );
                        let text = format!(
                            "graph.func @main(%x: {x}, %g: {g}) -> {y} {{\n  \
                             %k = data.constant dense<1.5> : tensor<{dt}>\n  \
                             %g2 = graph.mul %g, %k : ({g}, tensor<{dt}>) -> {g}\n  \
                             %y = graph.grid_sample %x, %g2 {{mode = \"{mode}\", padding_mode = \"{padding}\", align_corners = {align} : i64}} : ({x}, {g}) -> {y}\n  \
                             graph.return %y : {y}\n}}\n"
                        );
                        check(
                            &text,
                            &format!("grid_sample {xs} {gs} {mode} {padding} {align} {dt}"),
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn conv_transpose2d_matches_the_interpreter() {
    // (N, C, H, W, O/group, kH, kW, group, strides, pads [t, l, b, r], dilations, output_padding)
    type Case = (
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
        [usize; 2],
        [usize; 4],
        [usize; 2],
        [usize; 2],
    );
    let cases: [Case; 6] = [
        (1, 2, 3, 3, 3, 3, 3, 1, [1, 1], [0, 0, 0, 0], [1, 1], [0, 0]),
        (2, 4, 5, 4, 3, 3, 2, 2, [2, 2], [1, 0, 1, 1], [1, 1], [1, 0]),
        (1, 3, 4, 6, 2, 2, 3, 1, [3, 2], [0, 1, 2, 0], [2, 1], [2, 1]),
        (2, 6, 3, 3, 1, 3, 3, 6, [2, 1], [1, 1, 1, 1], [1, 2], [0, 0]),
        (1, 2, 1, 7, 2, 1, 4, 1, [1, 3], [0, 0, 0, 1], [1, 1], [0, 2]),
        (1, 1, 2, 2, 1, 5, 5, 1, [1, 1], [2, 2, 2, 2], [1, 1], [0, 0]),
    ];
    for (n, c, h, w, mg, kh, kw, g, s, p, d, op) in cases {
        let m = mg * g;
        let oh = (h - 1) * s[0] + op[0] + d[0] * (kh - 1) + 1 - p[0] - p[2];
        let ow = (w - 1) * s[1] + op[1] + d[1] * (kw - 1) + 1 - p[1] - p[3];
        for dt in ["f32", "f16"] {
            for bias in [false, true] {
                let x = format!("tensor<{n}x{c}x{h}x{w}x{dt}>");
                let f = format!("tensor<{c}x{mg}x{kh}x{kw}x{dt}>");
                let b = format!("tensor<{m}x{dt}>");
                let y = format!("tensor<{n}x{m}x{oh}x{ow}x{dt}>");
                let mut args = vec![("x", x.as_str()), ("f", f.as_str())];
                if bias {
                    args.push(("b", b.as_str()));
                }
                let attrs = format!(
                    "{{strides = [{}, {}], pads = [{}, {}, {}, {}], dilations = [{}, {}], group = {g} : i64, output_padding = [{}, {}]}}",
                    s[0], s[1], p[0], p[1], p[2], p[3], d[0], d[1], op[0], op[1]
                );
                let text = one_op(
                    &args,
                    &format!("graph.conv_transpose2d $OPERANDS {attrs}"),
                    &y,
                );
                check(
                    &text,
                    &format!("conv_transpose2d {x} {f} group {g} {attrs} bias {bias}"),
                );
            }
        }
    }
}

#[test]
fn tile_matches_the_interpreter() {
    // (input shape, repeats, output shape)
    let cases = [
        ("2x3", "[2, 3]", "4x9"),
        ("3x1x2", "[1, 4, 2]", "3x4x4"),
        ("5", "[3]", "15"),
        ("2x2x3x1", "[2, 1, 1, 5]", "4x2x3x5"),
        ("0x3", "[2, 2]", "0x6"),
    ];
    for (xs, reps, ys) in cases {
        for dt in ["f32", "f16", "i64", "i8", "i1"] {
            let (x, y) = (format!("tensor<{xs}x{dt}>"), format!("tensor<{ys}x{dt}>"));
            let text = one_op(
                &[("x", &x)],
                &format!("data.tile $OPERANDS {{repeats = {reps}}}"),
                &y,
            );
            check(&text, &format!("tile {xs} {reps} {dt}"));
        }
    }
}

#[test]
fn f64_elementwise_matches_the_interpreter() {
    // f64 computes in f64 (not through f32): unary and binary ops with
    // broadcasting, comparisons, where and clip on f64 values.
    let (a, b) = ("tensor<3x5xf64>", "tensor<5xf64>");
    for op in ["add", "sub", "mul", "div", "pow", "max", "min"] {
        let text = one_op(&[("a", a), ("b", b)], &format!("graph.{op} $OPERANDS"), a);
        check(&text, &format!("{op} f64"));
    }
    // Floats take fmod = 1 only (the importer builds Python's mod from it).
    let text = one_op(
        &[("a", a), ("b", b)],
        "graph.mod $OPERANDS {fmod = 1 : i64}",
        a,
    );
    check(&text, "mod f64");
    for op in [
        "neg", "abs", "exp", "tanh", "sigmoid", "erf", "floor", "ceil", "round", "sign", "sin",
        "cos", "atan", "square", "relu", "silu",
    ] {
        let text = one_op(&[("a", a)], &format!("graph.{op} $OPERANDS"), a);
        check(&text, &format!("{op} f64"));
    }
    for op in ["equal", "less", "greater", "less_equal", "greater_equal"] {
        let text = one_op(
            &[("a", a), ("b", b)],
            &format!("graph.{op} $OPERANDS"),
            "tensor<3x5xi1>",
        );
        check(&text, &format!("{op} f64"));
    }
    let text = one_op(
        &[("c", "tensor<3x5xi1>"), ("a", a), ("b", b)],
        "graph.where $OPERANDS",
        a,
    );
    check(&text, "where f64");
    // A chain: small values, so that an f32 computation would be caught.
    let text = format!(
        "graph.func @main(%a: {a}, %b: {b}) -> {a} {{\n  \
         %k = data.constant dense<1.0e-09> : tensor<f64>\n  \
         %m = graph.mul %a, %k : ({a}, tensor<f64>) -> {a}\n  \
         %s = graph.add %m, %b : ({a}, {b}) -> {a}\n  \
         %y = graph.sub %s, %b : ({a}, {b}) -> {a}\n  \
         graph.return %y : {a}\n}}\n"
    );
    check(&text, "mul+add+sub f64 at 1e-9");
}

#[test]
fn f64_casts_match_the_interpreter() {
    // To and from f64: every other float type, integers and booleans.
    for other in ["f32", "f16", "bf16", "i64", "i32", "i8", "ui8", "i1"] {
        let (d, o) = ("tensor<4x6xf64>", format!("tensor<4x6x{other}>"));
        let text = one_op(
            &[("x", d)],
            &format!("graph.cast $OPERANDS {{to = {other}}}"),
            &o,
        );
        check(&text, &format!("cast f64 -> {other}"));
        let text = one_op(&[("x", &o)], "graph.cast $OPERANDS {to = f64}", d);
        check(&text, &format!("cast {other} -> f64"));
    }
}

#[test]
fn f64_data_movement_and_reductions_match_the_interpreter() {
    let x = "tensor<3x4x5xf64>";
    let text = one_op(
        &[("x", x)],
        "data.transpose $OPERANDS {perm = [2, 0, 1]}",
        "tensor<5x3x4xf64>",
    );
    check(&text, "transpose f64");
    let text = one_op(
        &[("x", x)],
        "data.tile $OPERANDS {repeats = [1, 2, 3]}",
        "tensor<3x8x15xf64>",
    );
    check(&text, "tile f64");
    for op in [
        "reduce_sum",
        "reduce_mean",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
    ] {
        let text = one_op(
            &[("x", x)],
            &format!("graph.{op} $OPERANDS {{axes = [1], keepdims = 0 : i64}}"),
            "tensor<3x5xf64>",
        );
        check(&text, &format!("{op} f64"));
    }
}

#[test]
fn f64_matmul_and_softmax_match_the_interpreter() {
    // (lhs, rhs, result): plain, batched, broadcast batch, vector operands.
    let products = [
        ("5x7", "7x3", "5x3"),
        ("2x4x6", "2x6x3", "2x4x3"),
        ("3x1x4x5", "2x5x2", "3x2x4x2"),
        ("6", "6x4", "4"),
        ("4x6", "6", "4"),
    ];
    for (a, b, y) in products {
        let (a, b, y) = (
            format!("tensor<{a}xf64>"),
            format!("tensor<{b}xf64>"),
            format!("tensor<{y}xf64>"),
        );
        let text = one_op(&[("a", &a), ("b", &b)], "graph.matmul $OPERANDS", &y);
        check(&text, &format!("matmul {a} {b} f64"));
    }
    let text = one_op(
        &[("a", "tensor<2x6x4xf64>"), ("b", "tensor<2x3x6xf64>")],
        "graph.batch_matmul $OPERANDS {transpose_a = true, transpose_b = true}",
        "tensor<2x4x3xf64>",
    );
    check(&text, "batch_matmul transposed f64");
    for op in ["softmax", "log_softmax"] {
        for axis in [-1, 0, 1] {
            let x = "tensor<3x5x4xf64>";
            let text = one_op(
                &[("x", x)],
                &format!("graph.{op} $OPERANDS {{axis = {axis} : i64}}"),
                x,
            );
            check(&text, &format!("{op} axis {axis} f64"));
        }
    }
}

#[test]
fn shape_of_and_iota_match_the_interpreter() {
    // Symbolic dims: static ones would fold to constants before any kernel.
    for b in [1, 4, 9] {
        let text = "graph.func @main(%x: tensor<Bx3xNxf32>) -> tensor<3xi64> {\n  \
                    %y = data.shape_of %x : (tensor<Bx3xNxf32>) -> tensor<3xi64>\n  \
                    graph.return %y : tensor<3xi64>\n}\n";
        check_bound(
            text,
            &format!("shape_of B={b}"),
            &[("B", b), ("N", 2 * b + 1)],
        );
        for (start, delta) in [(0, 1), (3, -2), (-5, 7)] {
            let text = format!(
                "graph.func @main(%x: tensor<Bxf32>) -> tensor<Bxi64> {{\n  \
                 %y = data.iota {{count = \"B\", start = {start} : i64, delta = {delta} : i64}} : () -> tensor<Bxi64>\n  \
                 graph.return %y : tensor<Bxi64>\n}}\n"
            );
            check_bound(&text, &format!("iota B={b} {start} {delta}"), &[("B", b)]);
        }
    }
}

#[test]
fn topk_matches_the_interpreter() {
    // (input shape, axis, k, result shape); integers 0..8 give ties.
    let cases = [
        ("4x9", 1, 3, "4x3"),
        ("9x5", 0, 9, "9x5"),
        ("2x7x3", 1, 1, "2x1x3"),
        ("2x3x8", -1, 5, "2x3x5"),
        ("6", 0, 0, "0"),
    ];
    for (xs, axis, k, ys) in cases {
        for largest in [0, 1] {
            for dt in ["f32", "f16", "f64", "i64", "i32", "i8"] {
                let (x, v, i) = (
                    format!("tensor<{xs}x{dt}>"),
                    format!("tensor<{ys}x{dt}>"),
                    format!("tensor<{ys}xi64>"),
                );
                let text = format!(
                    "graph.func @main(%x: {x}) -> ({v}, {i}) {{\n  \
                     %v, %i = graph.topk %x {{k = {k} : i64, axis = {axis} : i64, largest = {largest} : i64}} : ({x}) -> ({v}, {i})\n  \
                     graph.return %v, %i : {v}, {i}\n}}\n"
                );
                check(
                    &text,
                    &format!("topk {xs} axis {axis} k {k} largest {largest} {dt}"),
                );
            }
        }
    }
}

#[test]
fn resize_matches_the_interpreter() {
    // (input shape, scales or sizes attribute, output shape)
    let cases = [
        ("1x2x3x4", "scales = [1.0, 1.0, 2.0, 1.5]", "1x2x6x6"),
        ("2x3x8x6", "scales = [1.0, 1.0, 0.5, 0.75]", "2x3x4x4"),
        ("1x2x5x5", "sizes = [1, 2, 7, 3]", "1x2x7x3"),
        ("3x4", "scales = [2.0, 0.5]", "6x2"),
        ("2x3x4x2x3", "sizes = [2, 3, 3, 4, 5]", "2x3x3x4x5"),
        ("7", "sizes = [10]", "10"),
    ];
    let coords = [
        "half_pixel",
        "pytorch_half_pixel",
        "align_corners",
        "asymmetric",
    ];
    for (xs, size, ys) in cases {
        for coord in coords {
            let mut modes: Vec<String> =
                ["floor", "ceil", "round_prefer_floor", "round_prefer_ceil"]
                    .iter()
                    .map(|n| format!("mode = \"nearest\", nearest_mode = \"{n}\""))
                    .collect();
            modes.push("mode = \"linear\"".into());
            for mode in &modes {
                for dt in ["f32", "f16", "f64", "i64"] {
                    if dt == "i64" && mode.contains("linear") {
                        continue;
                    }
                    let (x, y) = (format!("tensor<{xs}x{dt}>"), format!("tensor<{ys}x{dt}>"));
                    let op = format!(
                        "graph.resize $OPERANDS {{{mode}, {size}, coordinate_transformation_mode = \"{coord}\"}}"
                    );
                    let text = one_op(&[("x", &x)], &op, &y);
                    check(&text, &format!("resize {xs} {size} {mode} {coord} {dt}"));
                }
            }
        }
    }
}

#[test]
fn attention_matches_the_interpreter() {
    // (query, key, value, mask or "", result): batch broadcast (grouped
    // heads), float and i1 masks that broadcast, vectors of one position.
    let cases = [
        ("2x3x4x8", "2x3x6x8", "2x3x6x5", "", "2x3x4x5"),
        ("2x4x4x8", "2x1x6x8", "1x4x6x5", "4x6xf32", "2x4x4x5"),
        ("2x4x5x3", "2x4x5x3", "2x4x5x3", "2x1x5x5xi1", "2x4x5x3"),
        ("3x1x7", "3x9x7", "3x9x2", "9xf32", "3x1x2"),
    ];
    for (q, k, v, m, y) in cases {
        for attrs in [
            "",
            " {causal = true}",
            " {scale = 0.25 : f64, causal = true}",
        ] {
            for dt in ["f32", "f16"] {
                let t = |s: &str| format!("tensor<{s}x{dt}>");
                let (tq, tk, tv, ty) = (t(q), t(k), t(v), t(y));
                let mask = match m {
                    "" => None,
                    m if m.ends_with("xi1") => Some(format!("tensor<{m}>")),
                    m => Some(format!("tensor<{}x{dt}>", m.trim_end_matches("xf32"))),
                };
                let mut args = vec![("q", tq.as_str()), ("k", tk.as_str()), ("v", tv.as_str())];
                if let Some(mt) = &mask {
                    args.push(("m", mt.as_str()));
                }
                let text = one_op(
                    &args,
                    &format!("graph.scaled_dot_product_attention $OPERANDS{attrs}"),
                    &ty,
                );
                check(
                    &text,
                    &format!("attention {q} {k} {v} mask {m}{attrs} {dt}"),
                );
            }
        }
    }
}

#[test]
fn integer_matmul_matches_the_interpreter() {
    // Wrapping integer products (i8 overflows with values up to 7 x 7 x k).
    let products = [
        ("5x7", "7x3", "5x3"),
        ("3x1x4x9", "2x9x2", "3x2x4x2"),
        ("6", "6x4", "4"),
    ];
    for dt in ["i64", "i32", "i8", "ui8"] {
        for (a, b, y) in products {
            let (a, b, y) = (
                format!("tensor<{a}x{dt}>"),
                format!("tensor<{b}x{dt}>"),
                format!("tensor<{y}x{dt}>"),
            );
            let text = one_op(&[("a", &a), ("b", &b)], "graph.matmul $OPERANDS", &y);
            check(&text, &format!("matmul {a} {b}"));
        }
        let (a, b, y) = (
            format!("tensor<2x6x4x{dt}>"),
            format!("tensor<2x3x6x{dt}>"),
            format!("tensor<2x4x3x{dt}>"),
        );
        let text = one_op(
            &[("a", &a), ("b", &b)],
            "graph.batch_matmul $OPERANDS {transpose_a = true, transpose_b = true}",
            &y,
        );
        check(&text, &format!("batch_matmul transposed {dt}"));
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

/// conv3d with a constant filter: packed at load for the packed GEMM
/// (`Kernel::prepare`), in panels of 16 rows when the output has at most
/// 12 positions, else of 4 — with groups, strides, pads, dilations, output
/// channels not a multiple of a panel, and 1 and 2 threads (the GEMM split
/// in blocks of output channels starting on a panel's first row).
#[test]
fn conv3d_with_a_constant_filter_is_packed_at_load_and_matches() {
    // (input, filter, output, attributes)
    let convs = [
        ("1x3x5x6x7", "20x3x3x3x3", "1x20x3x4x5", "{pads = [0, 0, 0, 0, 0, 0]}"),
        ("1x8x1x3x3", "37x8x3x3x3", "1x37x1x3x3", "{pads = [1, 1, 1, 1, 1, 1]}"),
        ("2x4x6x5x5", "34x2x2x3x1", "2x34x3x2x5", "{group = 2 : i64, strides = [2, 2, 1], pads = [0, 1, 0, 1, 0, 0], dilations = [1, 1, 2]}"),
        ("1x6x4x9x9", "18x6x1x3x3", "1x18x4x5x5", "{strides = [1, 2, 2], pads = [0, 1, 1, 0, 1, 1]}"),
    ];
    for (xs, ws, ys, attrs) in convs {
        let (x, w, y) = (
            format!("tensor<{xs}xf32>"),
            format!("tensor<{ws}xf32>"),
            format!("tensor<{ys}xf32>"),
        );
        let dims: Vec<usize> = ws.split('x').filter_map(|d| d.parse().ok()).collect();
        let values: Vec<String> = (0..dims.iter().product::<usize>())
            .map(|i| format!("{:.3}", ((i * 37 % 101) as f64 - 50.0) / 100.0))
            .collect();
        let text = format!(
            "graph.func @main(%x: {x}) -> {y} {{\n  \
             %w = data.constant dense<{}> : {w}\n  \
             %y = graph.conv3d %x, %w {attrs} : ({x}, {w}) -> {y}\n  \
             graph.return %y : {y}\n}}\n",
            nest(&values, &dims)
        );
        let (types, m) = signature(&text, "main");
        let ins = random_inputs(&types, &[], 5);
        let want = interpret(&m, "main", &ins);
        let om = om_bytes(
            "conv3d_const",
            &text,
            &ge_compile::CompileOptions::default(),
        );
        for threads in [1, 2] {
            let model = load(&om, threads);
            assert!(
                model.prepared_bytes() > 0,
                "conv3d {xs} {ws}: the constant filter is packed at load"
            );
            assert_close(
                &run(&model, &ins),
                &want,
                &format!("conv3d {xs} {ws} {attrs} threads={threads}"),
            );
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
/// and reverse, floats (f64 at its own precision: ONNX's CumProd tests are
/// f64) and wrapping integers, signed and unsigned.
#[test]
fn cumprod_matches_the_interpreter() {
    for dt in [
        "f64", "f32", "f16", "bf16", "i64", "i32", "i8", "ui8", "ui64",
    ] {
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

/// graph.matmul_integer and graph.qlinear_matmul (runtime/src/kernels/qlinear.rs):
/// i8/ui8 operands, batched and 1-D forms, per-tensor and per-row/column zero
/// points and scales.
#[test]
fn quantized_matmul_matches_the_interpreter() {
    // (a, b, result, a's per-row count, b's per-column count)
    let shapes = [
        ("3x4", "4x5", "3x5", 3, 5),
        ("2x3x4", "4x5", "2x3x5", 3, 5),
        ("4", "4x5", "5", 1, 5),
        ("2x3x4", "2x4x1", "2x3x1", 3, 1),
    ];
    for (ta, tb) in [("ui8", "i8"), ("i8", "ui8"), ("ui8", "ui8")] {
        for (a, b, y, m, n) in shapes {
            for per in [false, true] {
                let (za, zb) = if per {
                    (format!("tensor<{m}x{ta}>"), format!("tensor<{n}x{tb}>"))
                } else {
                    (format!("tensor<{ta}>"), format!("tensor<{tb}>"))
                };
                let (a, b) = (format!("tensor<{a}x{ta}>"), format!("tensor<{b}x{tb}>"));
                let text = one_op(
                    &[("a", &a), ("b", &b), ("za", &za), ("zb", &zb)],
                    "graph.matmul_integer $OPERANDS",
                    &format!("tensor<{y}xi32>"),
                );
                check(&text, &format!("matmul_integer {a} {b} {za} {zb}"));
                let (sa, sb) = if per {
                    (format!("tensor<{m}xf32>"), format!("tensor<{n}xf32>"))
                } else {
                    ("tensor<f32>".to_string(), "tensor<f32>".to_string())
                };
                let r = format!("tensor<{y}x{ta}>");
                let text = format!(
                    "graph.func @main(%a: {a}, %sa: {sa}, %za: {za}, %b: {b}, %sb: {sb}, %zb: {zb}, %zy: tensor<{ta}>) -> {r} {{\n  \
                     %sy = data.constant dense<0.03> : tensor<f32>\n  \
                     %y = graph.qlinear_matmul %a, %sa, %za, %b, %sb, %zb, %sy, %zy : ({a}, {sa}, {za}, {b}, {sb}, {zb}, tensor<f32>, tensor<{ta}>) -> {r}\n  \
                     graph.return %y : {r}\n}}\n"
                );
                check(&text, &format!("qlinear_matmul {a} {b} per={per}"));
            }
        }
    }
}

/// graph.conv_integer and graph.qlinear_conv (runtime/src/kernels/qlinear.rs):
/// groups, strides, pads and dilations; per-tensor and per-channel filter zero
/// points and scales.
#[test]
fn quantized_conv_matches_the_interpreter() {
    // (input, filter, result, attributes, output channels)
    let cases = [
        ("1x3x6x6", "4x3x3x3", "1x4x4x4", "", 4),
        (
            "2x4x7x5",
            "6x2x2x3",
            "2x6x4x2",
            "{pads = [1, 0, 0, 1], strides = [2, 2], group = 2 : i64}",
            6,
        ),
        ("1x2x6x6", "2x2x2x2", "1x2x4x4", "{dilations = [2, 2]}", 2),
    ];
    for (tx, tw) in [("ui8", "i8"), ("i8", "ui8"), ("ui8", "ui8")] {
        for (x, w, y, attrs, m) in cases {
            for per in [false, true] {
                let (x, w) = (format!("tensor<{x}x{tx}>"), format!("tensor<{w}x{tw}>"));
                let xz = format!("tensor<{tx}>");
                let (wz, sw) = if per {
                    (format!("tensor<{m}x{tw}>"), format!("tensor<{m}xf32>"))
                } else {
                    (format!("tensor<{tw}>"), "tensor<f32>".to_string())
                };
                let text = one_op(
                    &[("x", &x), ("w", &w), ("xz", &xz), ("wz", &wz)],
                    &format!("graph.conv_integer $OPERANDS {attrs}"),
                    &format!("tensor<{y}xi32>"),
                );
                check(&text, &format!("conv_integer {x} {w} {attrs} per={per}"));
                let r = format!("tensor<{y}x{tx}>");
                let b = format!("tensor<{m}xi32>");
                let text = format!(
                    "graph.func @main(%x: {x}, %sx: tensor<f32>, %xz: {xz}, %w: {w}, %sw: {sw}, %wz: {wz}, %yz: {xz}, %b: {b}) -> {r} {{\n  \
                     %sy = data.constant dense<0.07> : tensor<f32>\n  \
                     %y = graph.qlinear_conv %x, %sx, %xz, %w, %sw, %wz, %sy, %yz, %b {attrs} : ({x}, tensor<f32>, {xz}, {w}, {sw}, {wz}, tensor<f32>, {xz}, {b}) -> {r}\n  \
                     graph.return %y : {r}\n}}\n"
                );
                check(&text, &format!("qlinear_conv {x} {w} {attrs} per={per}"));
            }
        }
    }
}

#[test]
fn seeded_random_draws_match_the_interpreter() {
    // The kernels call the ops' own draw functions: a seeded draw is the
    // interpreter's, bit for bit, in every element type.
    for dt in ["f32", "f16", "bf16", "f64"] {
        let t = format!("tensor<3x7x{dt}>");
        let text = one_op(
            &[],
            &format!(
                "graph.random_uniform {{shape = [3, 7], low = -2.0, high = 5.0, seed = 3.0, dtype = {dt}}}"
            ),
            &t,
        );
        check(&text, &format!("random_uniform {dt}"));
        let like = one_op(
            &[("x", &t)],
            "graph.random_normal $OPERANDS {mean = 1.0, scale = 2.0, seed = 4.0}",
            &t,
        );
        check(&like, &format!("random_normal like {dt}"));
        for out in ["f32", "i64", "i1"] {
            let text = one_op(
                &[("p", &t)],
                &format!("graph.bernoulli $OPERANDS {{seed = 5.0, dtype = {out}}}"),
                &format!("tensor<3x7x{out}>"),
            );
            check(&text, &format!("bernoulli {dt} -> {out}"));
        }
        let text = one_op(
            &[("l", &t)],
            "graph.multinomial $OPERANDS {sample_size = 9 : i64, seed = 6.0}",
            "tensor<3x9xi32>",
        );
        check(&text, &format!("multinomial {dt}"));
    }
}

#[test]
fn rounding_casts_to_e8m0_match_the_interpreter() {
    for from in ["f32", "f16", "f64", "i32"] {
        for mode in ["up", "down", "nearest"] {
            for sat in [0, 1] {
                let text = format!(
                    "graph.func @main(%x: tensor<5x6x{from}>) -> tensor<5x6xf32> {{\n  \
                     %e = graph.cast %x {{to = f8E8M0FNU, round_mode = \"{mode}\", saturate = {sat} : i64}} : (tensor<5x6x{from}>) -> tensor<5x6xf8E8M0FNU>\n  \
                     %y = graph.cast %e {{to = f32}} : (tensor<5x6xf8E8M0FNU>) -> tensor<5x6xf32>\n  \
                     graph.return %y : tensor<5x6xf32>\n}}\n"
                );
                check(&text, &format!("cast {from} -> e8m0 {mode} saturate={sat}"));
            }
        }
    }
}

/// f32 reductions over one run of adjacent axes take the vector loops of
/// `Reduce::reduce_f32` (norm.rs): a global pool's `[2, 3]`, the last axis,
/// a middle one, the first, all of them; runs long enough for the eight
/// partial sums and their remainder. Other axis sets (`[0, 2]`) and
/// products keep the generic loop. All against the interpreter.
#[test]
fn f32_reductions_over_adjacent_axes_match_the_interpreter() {
    let x = "tensor<2x3x7x9xf32>";
    let cases: [(&str, &str, &str); 6] = [
        ("[2, 3]", "tensor<2x3xf32>", "global pool"),
        ("[3]", "tensor<2x3x7xf32>", "last axis"),
        ("[1]", "tensor<2x7x9xf32>", "middle axis"),
        ("[0]", "tensor<3x7x9xf32>", "first axis"),
        ("[0, 1, 2, 3]", "tensor<f32>", "every axis"),
        ("[0, 2]", "tensor<3x9xf32>", "apart (generic)"),
    ];
    for op in [
        "reduce_sum",
        "reduce_mean",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
    ] {
        for (axes, y, what) in cases {
            let text = one_op(
                &[("x", x)],
                &format!("graph.{op} $OPERANDS {{axes = {axes}, keepdims = 0 : i64}}"),
                y,
            );
            check(&text, &format!("{op} {what}"));
        }
    }
}

#[test]
fn scalar_operands_hold_across_tiles_chunks_and_threads() {
    // HardSwish as its five-op decomposition (TensorFlow graphs write it so;
    // the ONNX importer did before graph.hard_swish), with its constants as
    // arguments (scalar loads of the fused element-wise kernel, filled once
    // per chunk and read by its later tiles): 160000 elements are 4 chunks
    // and a part, 79 tiles, enough for the chunks to run in parallel.
    let t = "tensor<1x16x100x100xf32>";
    let s = "tensor<f32>";
    let text = format!(
        "graph.func @main(%x: {t}, %a: {s}, %b: {s}, %hi: {s}, %lo: {s}) -> {t} {{\n  \
         %0 = graph.mul %x, %a : ({t}, {s}) -> {t}\n  \
         %1 = graph.add %0, %b : ({t}, {s}) -> {t}\n  \
         %2 = graph.min %1, %hi : ({t}, {s}) -> {t}\n  \
         %3 = graph.max %2, %lo : ({t}, {s}) -> {t}\n  \
         %4 = graph.mul %x, %3 : ({t}, {t}) -> {t}\n  \
         graph.return %4 : {t}\n}}\n"
    );
    // One model run with new scalars each time: no tile may keep the last
    // run's value.
    let (types, m) = signature(&text, "main");
    let om = om_bytes("k", &text, &Default::default());
    for threads in [1, 2] {
        let model = load(&om, threads);
        for seed in [1, 2, 3] {
            let ins = random_inputs(&types, &[], seed);
            let want = interpret(&m, "main", &ins);
            assert_close(
                &run(&model, &ins),
                &want,
                &format!("seed {seed} threads={threads}"),
            );
        }
    }
}

#[test]
fn layer_and_rms_norms_match_the_interpreter() {
    // Rows of 1 to 37 floats (off the eight partial sums of the kernel's
    // statistics), over the last axis and the last two, with and without a
    // bias; a scale that broadcasts. (input, axis, scale, normalised shape)
    for (x, axis, scale, normed) in [
        ("3x13", -1, "13", "13"),
        ("4x24", -1, "24", "24"),
        ("2x3x37", -1, "37", "37"),
        ("2x5x3", -2, "5x3", "5x3"),
        ("6x1", -1, "1", "1"),
        ("2x3x4", -2, "1x4", "3x4"),
    ] {
        let (xs, ss, bs) = (
            format!("tensor<{x}xf32>"),
            format!("tensor<{scale}xf32>"),
            format!("tensor<{normed}xf32>"),
        );
        let attrs = format!("{{axis = {axis} : i64, epsilon = 1.0e-05 : f32}}");
        let op = format!("graph.layer_norm $OPERANDS {attrs}");
        let with_bias = [("x", xs.as_str()), ("s", ss.as_str()), ("b", bs.as_str())];
        check(
            &one_op(&with_bias, &op, &xs),
            &format!("layer_norm {x} axis {axis} with a bias"),
        );
        check(
            &one_op(&with_bias[..2], &op, &xs),
            &format!("layer_norm {x} axis {axis}"),
        );
        let op = format!("graph.rms_norm $OPERANDS {attrs}");
        check(
            &one_op(&with_bias[..2], &op, &xs),
            &format!("rms_norm {x} axis {axis}"),
        );
    }
}

#[test]
fn a_value_per_channel_broadcasts_along_its_rows() {
    // One value per channel over its H x W (a squeeze-excite scale, a
    // per-channel bias): `ew::Bcast::load_rows`, 64 channels' values a
    // chunk. 70 channels are a chunk and a part; 100 x 7 x 7 on three
    // images is split into tiles that start inside a channel's row; the
    // batch-broadcast scale takes the general runs. Floats and integers.
    for (x, s, op, dt) in [
        ("1x70x2x2", "1x70x1x1", "mul", "f32"),
        ("3x100x7x7", "3x100x1x1", "mul", "f32"),
        ("2x5x3x3", "5x1x1", "add", "f32"),
        ("1x70x2x2", "1x70x1x1", "add", "i64"),
        ("1x70x2x2", "1x70x1x1", "sub", "f64"),
    ] {
        let (tx, ts) = (format!("tensor<{x}x{dt}>"), format!("tensor<{s}x{dt}>"));
        // Both orders: the broadcast operand first and second.
        for (a, b) in [(&tx, &ts), (&ts, &tx)] {
            let text = one_op(&[("a", a), ("b", b)], &format!("graph.{op} $OPERANDS"), &tx);
            check(&text, &format!("{op} {a} {b}"));
        }
    }
}
