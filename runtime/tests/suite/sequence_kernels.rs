//! The kernels of the transformer-era ops (runtime/src/kernels/
//! sequence_mixing.rs, swiglu.rs, tensor_scatter.rs) against the reference
//! interpreter (the ops' semantics in f64) at several shapes, rules and
//! element types. Each case compiles a one-op function (with and without
//! Ascend storage formats), loads it with every kernel native
//! (`common::load` fails when one runs on the interpreter), runs it at 1
//! and 2 threads and compares.

use crate::common;
use common::*;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

fn check(text: &str, ins: Option<Vec<Tensor>>, what: &str) {
    let (types, m) = signature(text, "main");
    let ins = ins.unwrap_or_else(|| random_inputs(&types, &[], 5));
    native_matches_interpreter(text, &m, &ins, what);
}

#[test]
fn linear_attention_matches_the_interpreter() {
    // (B, T, H_q, H_kv, d_k, d_v, rule, decay last dim per KV head (0: none),
    // beta last dim (0: none), with past state, dtype)
    let cases = [
        (2, 3, 2, 2, 4, 3, "linear", 0, 0, false, "f32"),
        (1, 4, 4, 2, 2, 2, "gated", 2, 0, true, "f32"),
        (2, 2, 2, 2, 3, 3, "gated", 1, 0, false, "f32"),
        (1, 5, 3, 1, 2, 4, "delta", 0, 1, false, "f32"),
        (2, 3, 4, 2, 4, 4, "gated_delta", 4, 2, true, "f32"),
        (2, 1, 2, 2, 4, 4, "gated_delta", 1, 1, true, "f32"),
        (1, 3, 2, 1, 4, 2, "gated_delta", 4, 1, false, "f16"),
        (1, 2, 2, 2, 2, 2, "linear", 0, 0, true, "bf16"),
    ];
    for (b, t, hq, hkv, dk, dv, rule, dec, beta, past, dt) in cases {
        let ty = |d: &[usize]| {
            let s: Vec<String> = d.iter().map(|x| x.to_string()).collect();
            format!("tensor<{}x{dt}>", s.join("x"))
        };
        let mut args = vec![
            ("q", ty(&[b, t, hq * dk])),
            ("k", ty(&[b, t, hkv * dk])),
            ("v", ty(&[b, t, hkv * dv])),
        ];
        let mut seg = vec![1, 1, 1];
        for (on, name, shape) in [
            (past, "p", vec![b, hkv, dk, dv]),
            (dec > 0, "g", vec![b, t, hkv * dec.max(1)]),
            (beta > 0, "s", vec![b, t, beta]),
        ] {
            seg.push(on as i32);
            if on {
                args.push((name, ty(&shape)));
            }
        }
        let params: Vec<String> = args.iter().map(|(n, t)| format!("%{n}: {t}")).collect();
        let names: Vec<String> = args.iter().map(|(n, _)| format!("%{n}")).collect();
        let types: Vec<String> = args.iter().map(|(_, t)| t.clone()).collect();
        let (out, st) = (ty(&[b, t, hq * dv]), ty(&[b, hkv, dk, dv]));
        let seg: Vec<String> = seg.iter().map(|x| x.to_string()).collect();
        let text = format!(
            "graph.func @main({}) -> ({out}, {st}) {{\n  %y:2 = graph.linear_attention {} {{q_num_heads = {hq} : i64, kv_num_heads = {hkv} : i64, update_rule = \"{rule}\", operand_segment_sizes = [{}]}} : ({}) -> ({out}, {st})\n  graph.return %y#0, %y#1 : {out}, {st}\n}}\n",
            params.join(", "),
            names.join(", "),
            seg.join(", "),
            types.join(", "),
        );
        check(
            &text,
            None,
            &format!("linear_attention {rule} {b}x{t} {hq}/{hkv} heads {dk}x{dv} {dt}"),
        );
    }
}

#[test]
fn causal_conv_matches_the_interpreter() {
    // (B, C, L, k, bias, past, activation, dtype)
    let cases = [
        (2, 3, 8, 4, false, false, "none", "f32"),
        (1, 2, 5, 1, true, false, "silu", "f32"),
        (2, 4, 1, 4, true, true, "none", "f32"),
        (1, 3, 2, 5, false, true, "swish", "f32"),
        (2, 2, 6, 3, true, true, "silu", "f16"),
        (1, 2, 4, 2, false, false, "silu", "bf16"),
    ];
    for (b, c, l, k, bias, past, act, dt) in cases {
        let x = format!("tensor<{b}x{c}x{l}x{dt}>");
        let w = format!("tensor<{c}x1x{k}x{dt}>");
        let bt = format!("tensor<{c}x{dt}>");
        let st = format!("tensor<{b}x{c}x{}x{dt}>", k - 1);
        let mut params = vec![format!("%x: {x}"), format!("%w: {w}")];
        let (mut names, mut types) = (vec!["%x", "%w"], vec![x.clone(), w.clone()]);
        if bias {
            params.push(format!("%b: {bt}"));
            names.push("%b");
            types.push(bt.clone());
        }
        if past {
            params.push(format!("%p: {st}"));
            names.push("%p");
            types.push(st.clone());
        }
        let text = format!(
            "graph.func @main({}) -> ({x}, {st}) {{\n  %y:2 = graph.causal_conv_with_state {} {{activation = \"{act}\", operand_segment_sizes = [1, 1, {}, {}]}} : ({}) -> ({x}, {st})\n  graph.return %y#0, %y#1 : {x}, {st}\n}}\n",
            params.join(", "),
            names.join(", "),
            bias as i32,
            past as i32,
            types.join(", "),
        );
        check(
            &text,
            None,
            &format!("causal_conv {b}x{c}x{l} k={k} {act} {dt}"),
        );
    }
}

#[test]
fn swiglu_matches_the_interpreter() {
    for (shape, dt, alpha) in [
        ("2x4", "f32", "1.0"),
        ("3x5x7", "f32", "0.5"),
        ("16", "f16", "1.0"),
        ("4x9", "bf16", "1.702"),
        ("6", "f64", "1.0"),
    ] {
        let t = format!("tensor<{shape}x{dt}>");
        let text = format!(
            "graph.func @main(%a: {t}, %b: {t}) -> {t} {{\n  %y = graph.swiglu %a, %b {{alpha = {alpha} : f64}} : ({t}, {t}) -> {t}\n  graph.return %y : {t}\n}}\n"
        );
        check(&text, None, &format!("swiglu {shape}x{dt} alpha {alpha}"));
    }
}

#[test]
fn tensor_scatter_matches_the_interpreter() {
    // (cache shape, update shape, axis, mode, write indices, dtype)
    type Case<'a> = (
        &'a [usize],
        &'a [usize],
        i64,
        &'a str,
        Option<&'a [i64]>,
        &'a str,
    );
    let cases: [Case; 6] = [
        (
            &[2, 1, 4, 5],
            &[2, 1, 1, 5],
            -2,
            "linear",
            Some(&[0, 3]),
            "f32",
        ),
        (
            &[3, 4, 5],
            &[3, 2, 5],
            -2,
            "linear",
            Some(&[2, 0, 1]),
            "f32",
        ),
        (
            &[2, 1, 4, 5],
            &[2, 1, 2, 5],
            -2,
            "circular",
            Some(&[3, -1]),
            "f32",
        ),
        (&[2, 6, 3], &[2, 6, 2], 2, "circular", Some(&[2, 7]), "i32"),
        (&[2, 3, 4], &[2, 2, 4], 1, "linear", None, "f64"),
        (&[2, 4, 2], &[2, 4, 2], 1, "linear", Some(&[0, 0]), "bf16"),
    ];
    for (past, upd, axis, mode, ix, dt) in cases {
        let ty = |d: &[usize]| {
            let s: Vec<String> = d.iter().map(|x| x.to_string()).collect();
            format!("tensor<{}x{dt}>", s.join("x"))
        };
        let (tp, tu) = (ty(past), ty(upd));
        let n = past[0];
        let it = format!("tensor<{n}xi64>");
        let (params, operands, types) = match ix {
            Some(_) => (
                format!("%p: {tp}, %u: {tu}, %i: {it}"),
                "%p, %u, %i",
                format!("{tp}, {tu}, {it}"),
            ),
            None => (
                format!("%p: {tp}, %u: {tu}"),
                "%p, %u",
                format!("{tp}, {tu}"),
            ),
        };
        let text = format!(
            "graph.func @main({params}) -> {tp} {{\n  %y = graph.tensor_scatter {operands} {{axis = {axis} : i64, mode = \"{mode}\"}} : ({types}) -> {tp}\n  graph.return %y : {tp}\n}}\n"
        );
        let (sig, _) = signature(&text, "main");
        let mut ins = random_inputs(&sig[..2], &[], 9);
        if let Some(ix) = ix {
            ins.push(Tensor::from_i64(vec![n], DType::I64, ix.to_vec()));
        }
        check(
            &text,
            Some(ins),
            &format!("tensor_scatter {tp} {mode} axis {axis}"),
        );
    }
}
