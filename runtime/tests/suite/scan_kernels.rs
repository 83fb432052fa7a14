//! The cumulative kernels (runtime/src/kernels/cumulative.rs: `graph.cumsum`
//! and `graph.cumprod`) against the reference interpreter at several shapes,
//! axes and dtypes, with the axis as an attribute and as an operand read at
//! run time (ONNX CumSum's `axis` left as a graph input). Each case compiles a
//! one-op function, loads it with every kernel native (`common::load` fails
//! when one runs on the interpreter), runs it at 1 and 2 threads and compares
//! with the interpreter. Kernel and reference share the scan (`scan_lines`),
//! so this checks the kernel's wiring — the axis it reads, the flags, the
//! operation, dtype conversion; the scan's values are checked by hand in
//! lit-tests/graph/cumsum.air (which fails with a wrong expected line: tried).

use crate::common;
use common::*;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

fn check(text: &str, ins: Option<Vec<Tensor>>, what: &str) {
    let (types, m) = signature(text, "main");
    let ins = ins.unwrap_or_else(|| random_inputs(&types, &[], 7));
    native_matches_interpreter(text, &m, &ins, what);
}

#[test]
fn cumsum_with_an_axis_attribute_matches_the_interpreter() {
    let cases = [
        ("5", "f32", "{}"),
        ("5", "f64", "{exclusive = 1 : i64}"),
        ("5", "f64", "{reverse = 1 : i64, exclusive = 1 : i64}"),
        ("2x3", "f64", "{axis = -1 : i64}"),
        ("4x3x6", "f32", "{axis = 1 : i64, reverse = 1 : i64}"),
        ("4x3x6", "i32", "{axis = 2 : i64, exclusive = 1 : i64}"),
        ("3x7", "i64", "{axis = 0 : i64}"),
        ("2x9x2", "f16", "{axis = 1 : i64}"),
        ("3x4", "cumprod", "{axis = 1 : i64}"),
    ];
    for (shape, dt, attrs) in cases {
        let (op, dt) = match dt {
            "cumprod" => ("graph.cumprod", "f64"),
            d => ("graph.cumsum", d),
        };
        let x = format!("tensor<{shape}x{dt}>");
        let text = format!(
            "graph.func @main(%x: {x}) -> {x} {{\n  %y = {op} %x {attrs} : ({x}) -> {x}\n  graph.return %y : {x}\n}}\n"
        );
        check(&text, None, &format!("{op} {shape}x{dt} {attrs}"));
    }
}

#[test]
fn cumsum_with_a_run_time_axis_matches_the_interpreter() {
    for (shape, dt, axis, attrs) in [
        ("5", "f64", 0, "{}"),
        ("5", "f64", -1, "{reverse = 1 : i64}"),
        ("2x3", "f64", 0, "{exclusive = 1 : i64}"),
        ("2x3", "i32", 1, "{}"),
        (
            "4x3x6",
            "f32",
            -2,
            "{exclusive = 1 : i64, reverse = 1 : i64}",
        ),
        ("4x3x6", "f32", 2, "{}"),
    ] {
        let x = format!("tensor<{shape}x{dt}>");
        let text = format!(
            "graph.func @main(%x: {x}, %a: tensor<i32>) -> {x} {{\n  %y = graph.cumsum %x, %a {attrs} : ({x}, tensor<i32>) -> {x}\n  graph.return %y : {x}\n}}\n"
        );
        let (types, _) = signature(&text, "main");
        let mut ins = random_inputs(&types[..1], &[], 3);
        ins.push(Tensor::from_i64(vec![], DType::I32, vec![axis]));
        check(
            &text,
            Some(ins),
            &format!("cumsum {shape}x{dt} axis {axis} {attrs}"),
        );
    }
}
