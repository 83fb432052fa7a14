//! The det and reverse_sequence kernels (runtime/src/kernels/det.rs,
//! reverse_sequence.rs) against the reference interpreter at several shapes
//! and dtypes: each case compiles a one-op function, loads it with every
//! kernel native (`common::load` fails when one runs on the interpreter),
//! runs it at 1 and 2 threads and compares. Sequence lengths are valid
//! random values (0..=time); a kernel that reverses the whole time dim
//! instead fails the reverse_sequence cases (checked once).

use crate::common;
use common::*;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

#[test]
fn det_matches_the_interpreter() {
    let cases = [
        ("2x2", "f32", ""),
        ("3x3", "f32", ""),
        ("5x4x4", "f32", "5"),
        ("2x3x6x6", "f32", "2x3"),
        ("7x1x1", "f16", "7"),
        ("4x0x0", "f32", "4"),
        ("40x9x9", "f32", "40"),
    ];
    for (shape, dt, out) in cases {
        let x = format!("tensor<{shape}x{dt}>");
        let y = if out.is_empty() {
            format!("tensor<{dt}>")
        } else {
            format!("tensor<{out}x{dt}>")
        };
        let text = format!(
            "graph.func @main(%x: {x}) -> {y} {{\n  %y = graph.det %x : ({x}) -> {y}\n  graph.return %y : {y}\n}}\n"
        );
        let (types, m) = signature(&text, "main");
        let ins = random_inputs(&types, &[], 11);
        native_matches_interpreter(&text, &m, &ins, &format!("det {shape}x{dt}"));
    }
}

#[test]
fn reverse_sequence_matches_the_interpreter() {
    // (input shape, dtype, batch_axis, time_axis)
    let cases = [
        (vec![4usize, 3], "f32", 1, 0),
        (vec![4, 3], "i32", 0, 1),
        (vec![6, 5, 7], "f32", 1, 0),
        (vec![5, 6, 2, 3], "bf16", 0, 1),
        (vec![9, 2], "i1", 1, 0),
        (vec![3, 8, 4], "f64", 0, 1),
    ];
    for (shape, dt, b, t) in cases {
        let s: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        let x = format!("tensor<{}x{dt}>", s.join("x"));
        let batch = shape[b as usize];
        let time = shape[t as usize] as i64;
        let l = format!("tensor<{batch}xi64>");
        let text = format!(
            "graph.func @main(%x: {x}, %l: {l}) -> {x} {{\n  %y = graph.reverse_sequence %x, %l {{batch_axis = {b} : i64, time_axis = {t} : i64}} : ({x}, {l}) -> {x}\n  graph.return %y : {x}\n}}\n"
        );
        let (types, m) = signature(&text, "main");
        let mut ins = random_inputs(&types[..1], &[], 11);
        let lens: Vec<i64> = (0..batch as i64)
            .map(|i| (i * 5 + 3) % (time + 1))
            .collect();
        ins.push(Tensor::from_i64(vec![batch], DType::I64, lens));
        native_matches_interpreter(&text, &m, &ins, &format!("reverse_sequence {x} {b} {t}"));
    }
}
