//! Shared by the lowering property tests: a random graph generator, running
//! pipelines and the interpreter.

#![allow(dead_code)]

use ge_ir::interp::Interpreter;
use ge_ir::pass::{parse_pipeline, run_pipeline, Instrumentation, PassContext, PassManagerOptions};
use ge_ir::tensor::Tensor;
use ge_ir::{Context, DType, Module};
use std::sync::OnceLock;

/// Every dialect and pass (what ge-opt has).
pub fn ctx() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(ge_compile::context)
}

pub fn parse(text: &str) -> Module {
    match ge_ir::parser::parse_module(
        ctx(),
        "<test>",
        text,
        ge_ir::parser::ParseOptions::default(),
    ) {
        Ok(m) => m,
        Err(d) => panic!("generated IR does not parse: {}\n{text}", d.message),
    }
}

/// Run a pipeline; `Err` carries the diagnostics' messages.
pub fn run(m: &mut Module, pipeline: &str) -> Result<(), String> {
    let pm = parse_pipeline(&ctx().passes, pipeline).map_err(|e| e.message)?;
    let cx = PassContext {
        ctx: ctx(),
        output: Default::default(),
    };
    let opts = PassManagerOptions {
        threading: false,
        ..Default::default()
    };
    run_pipeline(&pm, m, &cx, &opts, &Instrumentation::default()).map_err(|ds| {
        ds.iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

pub fn print(m: &Module) -> String {
    ge_ir::printer::print_module(m, Default::default())
}

/// Deterministic pseudo-random inputs for `main`'s arguments.
pub fn inputs(m: &Module, seed: u64) -> Vec<Tensor> {
    let interp = Interpreter::new(m);
    let (ins, _) = interp.signature("main").expect("main has a signature");
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ins.iter()
        .map(|t| {
            let tt = t.as_tensor().expect("tensor input");
            let shape: Vec<usize> = tt
                .shape()
                .iter()
                .map(|d| d.as_static().unwrap_or(2) as usize)
                .collect();
            let n: usize = shape.iter().product();
            let v: Vec<f64> = (0..n)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((state >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
                })
                .collect();
            Tensor::from_f64(shape, tt.dtype, v)
        })
        .collect()
}

pub fn interpret(m: &Module, args: Vec<Tensor>) -> Result<Vec<Tensor>, String> {
    let mut interp = Interpreter::new(m);
    interp.max_ops = Some(5_000_000);
    interp.run_function("main", args).map_err(|e| e.msg)
}

/// Compare two runs (f32: 1e-4 relative).
pub fn same(a: &[Tensor], b: &[Tensor]) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} outputs vs {}", a.len(), b.len()));
    }
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let (rt, at) = match x.dtype {
            DType::F16 | DType::BF16 => (2e-2, 1e-2),
            _ => (1e-4, 1e-5),
        };
        if let Some(why) = y.mismatch(x, rt, at) {
            return Err(format!(
                "output #{i} differs ({why}): {:?} vs {:?}",
                &x.to_f64()[..x.len().min(8)],
                &y.to_f64()[..y.len().min(8)]
            ));
        }
    }
    Ok(())
}

/// A random graph over `tensor<1x4x4x4xf32>` values built from `ops` (each
/// an op choice and operand picks): elementwise ops, convolutions, matmuls
/// through reshapes, concat + split (views), reductions, broadcasts, and
/// outputs that are inputs, constants or repeated values.
pub fn random_graph(ops: &[(u8, u16, u16)], outs: &[u16], batch_symbolic: bool) -> String {
    let n = if batch_symbolic { "B" } else { "1" };
    let t = format!("tensor<{n}x4x4x4xf32>");
    let mut lines = vec![];
    let mut vals: Vec<String> = vec!["%x".into(), "%y".into()];
    let mut k = 0usize;
    let fresh = |k: &mut usize, lines: &mut Vec<String>, s: String| -> String {
        *k += 1;
        let v = format!("%v{k}");
        lines.push(format!("  {v} = {s}"));
        v
    };
    lines.push("  %w = data.constant dense<0.05> : tensor<4x4x3x3xf32>".to_string());
    lines.push("  %m = data.constant dense<0.25> : tensor<4x4xf32>".to_string());
    lines.push(
        "  %b = data.constant dense<[[[[0.5]], [[-0.5]], [[1.0]], [[0.0]]]]> : tensor<1x4x1x1xf32>"
            .to_string(),
    );
    for &(op, a, bsel) in ops {
        let a = vals[a as usize % vals.len()].clone();
        let b = vals[bsel as usize % vals.len()].clone();
        let v = match op % 12 {
            0 => fresh(&mut k, &mut lines, format!("graph.relu {a} : ({t}) -> {t}")),
            1 => fresh(&mut k, &mut lines, format!("graph.neg {a} : ({t}) -> {t}")),
            2 => fresh(&mut k, &mut lines, format!("graph.tanh {a} : ({t}) -> {t}")),
            3 => fresh(&mut k, &mut lines, format!("graph.add {a}, {b} : ({t}, {t}) -> {t}")),
            4 => fresh(&mut k, &mut lines, format!("graph.mul {a}, {b} : ({t}, {t}) -> {t}")),
            5 => fresh(&mut k, &mut lines, format!("graph.max {a}, {b} : ({t}, {t}) -> {t}")),
            6 => fresh(
                &mut k,
                &mut lines,
                format!("graph.conv2d {a}, %w {{pads = [1, 1, 1, 1]}} : ({t}, tensor<4x4x3x3xf32>) -> {t}"),
            ),
            7 => fresh(
                &mut k,
                &mut lines,
                format!("graph.add {a}, %b : ({t}, tensor<1x4x1x1xf32>) -> {t}"),
            ),
            8 if !batch_symbolic => {
                let r = fresh(&mut k, &mut lines, format!("data.reshape {a} {{shape = [16, 4]}} : ({t}) -> tensor<16x4xf32>"));
                let mm = fresh(&mut k, &mut lines, format!("graph.matmul {r}, %m : (tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<16x4xf32>"));
                fresh(&mut k, &mut lines, format!("data.reshape {mm} {{shape = [1, 4, 4, 4]}} : (tensor<16x4xf32>) -> {t}"))
            }
            9 => {
                let ct = format!("tensor<{n}x8x4x4xf32>");
                let c = fresh(&mut k, &mut lines, format!("data.concat {a}, {b} {{axis = 1}} : ({t}, {t}) -> {ct}"));
                k += 1;
                let s = format!("%v{k}");
                lines.push(format!("  {s}:2 = data.split {c} {{axis = 1, num_outputs = 2}} : ({ct}) -> ({t}, {t})"));
                let s0 = format!("{s}#0");
                let s1 = format!("{s}#1");
                fresh(&mut k, &mut lines, format!("graph.sub {s1}, {s0} : ({t}, {t}) -> {t}"))
            }
            10 => {
                let r = fresh(&mut k, &mut lines, format!("graph.reduce_mean {a} {{axes = [1], keepdims = 1 : i64}} : ({t}) -> tensor<{n}x1x4x4xf32>"));
                fresh(&mut k, &mut lines, format!("graph.mul {b}, {r} : ({t}, tensor<{n}x1x4x4xf32>) -> {t}"))
            }
            _ => fresh(&mut k, &mut lines, format!("graph.sigmoid {a} : ({t}) -> {t}")),
        };
        vals.push(v);
    }
    let mut rets: Vec<String> = outs
        .iter()
        .map(|&o| vals[o as usize % vals.len()].clone())
        .collect();
    rets.push(vals.last().cloned().unwrap_or_else(|| "%x".into()));
    let mut ret_types = vec![t.clone(); rets.len()];
    // Sometimes a constant output.
    if outs.len() % 3 == 2 {
        rets.push("%m".into());
        ret_types.push("tensor<4x4xf32>".into());
    }
    let attrs = if batch_symbolic {
        "module attributes {ge.symbol_bounds = {B = 3 : i64}} {\n"
    } else {
        "module {\n"
    };
    format!(
        "{attrs}graph.func @main(%x: {t}, %y: {t}) -> ({}) {{\n{}\n  graph.return {} : {}\n}}\n}}\n",
        ret_types.join(", "),
        lines.join("\n"),
        rets.join(", "),
        ret_types.join(", ")
    )
}
