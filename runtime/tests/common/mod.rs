//! Helpers of the runtime tests: compile `.air`, run the reference
//! interpreter on the source, make random inputs, compare within tolerances.
#![allow(dead_code)]

use ge_compile::{compile_text, to_bytes, CompileOptions};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim, Ident};
use ge_runtime::{HostTensor, LoadOptions, Model};
use rand::{Rng, SeedableRng};
use std::collections::HashMap;

pub fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

pub fn om_bytes(name: &str, text: &str, opts: &CompileOptions) -> Vec<u8> {
    let m = compile_text(name, text, opts).unwrap_or_else(|e| panic!("compile {name}: {e}"));
    to_bytes(&m).unwrap()
}

/// Load a model whose every kernel is native: a kernel on the reference
/// interpreter would make a differential test compare the interpreter with
/// itself, so it fails the test (use [`load_allowing`] to name the ops a
/// model really needs the interpreter for today).
pub fn load(bytes: &[u8], threads: usize) -> Model {
    load_allowing(bytes, threads, &[])
}

/// The ops testdata/models/demo_block.air runs on the interpreter today: the
/// atc pipeline has no inliner, so the kernel holding its `graph.call
/// @residual` has no native kernel. Its tests compare that kernel's result
/// with the interpreter's own (the rest of the block is native).
pub const DEMO_BLOCK_INTERPRETED: &[&str] = &["graph.call"];

/// Load a model; only the ops in `allowed` may run on the interpreter.
///
/// With one thread its streams take turns on the calling thread (the
/// default, `ge_runtime::StreamExecution::Serial`), with more they run on
/// worker threads, so the tests that run a model at 1 and 2 threads check
/// both ways of running streams.
pub fn load_allowing(bytes: &[u8], threads: usize, allowed: &[&str]) -> Model {
    let stream_execution = match threads {
        1 => ge_runtime::StreamExecution::Serial,
        _ => ge_runtime::StreamExecution::Workers,
    };
    let model = Model::from_bytes(
        bytes,
        &LoadOptions {
            threads,
            stream_execution,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("load: {e}"));
    assert_native(&model, allowed);
    model
}

/// Panic when a kernel of `model` runs on the interpreter, unless its op is in `allowed`.
pub fn assert_native(model: &Model, allowed: &[&str]) {
    if let Err(e) = model.require_native(allowed) {
        panic!("{e}: the test would compare the interpreter with itself");
    }
}

/// The entry function's argument types, from the source.
pub fn signature(text: &str, entry: &str) -> (Vec<ge_ir::Type>, ge_ir::Module) {
    let ctx = ge_compile::context();
    let m = ge_ir::parser::parse_module(&ctx, "src", text, ge_ir::parser::ParseOptions::default())
        .unwrap();
    let ins = {
        let interp = ge_ir::interp::Interpreter::new(&m);
        interp.signature(entry).unwrap().0.to_vec()
    };
    (ins, m)
}

pub fn random_inputs(types: &[ge_ir::Type], binds: &[(&str, i64)], seed: u64) -> Vec<Tensor> {
    let b: HashMap<Ident, i64> = binds.iter().map(|(k, v)| (Ident::new(k), *v)).collect();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    types
        .iter()
        .map(|t| {
            let tt = t.as_tensor().unwrap();
            let shape: Vec<usize> = tt
                .shape()
                .iter()
                .map(|d: &Dim| d.eval(&b).unwrap_or(1) as usize)
                .collect();
            let n: usize = shape.iter().product();
            if tt.dtype.is_float() {
                Tensor::from_f64(
                    shape,
                    tt.dtype,
                    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect(),
                )
            } else if tt.dtype == DType::I1 {
                Tensor::from_i64(
                    shape,
                    tt.dtype,
                    (0..n).map(|_| rng.random_range(0..2)).collect(),
                )
            } else {
                Tensor::from_i64(
                    shape,
                    tt.dtype,
                    (0..n).map(|_| rng.random_range(0..8)).collect(),
                )
            }
        })
        .collect()
}

/// Compile `text`'s `@main` with and without storage formats, run it with
/// every kernel native at 1 and 2 threads on `ins` and compare with the
/// interpreter's result on the source (`m`).
pub fn native_matches_interpreter(text: &str, m: &ge_ir::Module, ins: &[Tensor], what: &str) {
    let want = interpret(m, "main", ins);
    for formats in [false, true] {
        let opts = CompileOptions {
            formats,
            ..Default::default()
        };
        let om = om_bytes("k", text, &opts);
        for threads in [1, 2] {
            let got = run(&load(&om, threads), ins);
            assert_close(
                &got,
                &want,
                &format!("{what} formats={formats} threads={threads}"),
            );
        }
    }
}

pub fn interpret(m: &ge_ir::Module, entry: &str, inputs: &[Tensor]) -> Vec<Tensor> {
    let interp = ge_ir::interp::Interpreter::new(m);
    interp
        .run_function(entry, inputs.to_vec())
        .unwrap_or_else(|e| panic!("interpreter: {} at {}", e.msg, e.loc))
}

pub fn run(model: &Model, inputs: &[Tensor]) -> Vec<Tensor> {
    let ins: Vec<HostTensor> = inputs.iter().map(HostTensor::from_tensor).collect();
    model
        .session()
        .run(&ins)
        .unwrap_or_else(|e| panic!("run: {e}"))
        .iter()
        .map(|t| t.to_tensor().unwrap())
        .collect()
}

/// Largest |got - want| / (atol + rtol |want|) (<= 1 means close).
pub fn closeness(got: &Tensor, want: &Tensor, rtol: f64, atol: f64) -> f64 {
    assert_eq!(got.shape, want.shape, "shapes differ");
    assert_eq!(got.dtype, want.dtype, "dtypes differ");
    let mut worst: f64 = 0.0;
    for i in 0..got.len() {
        let (g, w) = (got.get_f(i), want.get_f(i));
        // Equal values are close even at zero tolerance (integers: 0/0).
        if (g.is_nan() && w.is_nan()) || g == w {
            continue;
        }
        let r = (g - w).abs() / (atol + rtol * w.abs());
        if r.is_nan() {
            return f64::INFINITY;
        }
        worst = worst.max(r);
    }
    worst
}

pub fn tolerance(d: DType) -> (f64, f64) {
    match d {
        DType::F16 => (1e-2, 1e-2),
        DType::BF16 => (4e-2, 4e-2),
        DType::F32 => (1e-3, 1e-4),
        // f64 kernels compute in f64 (summation order and formulas may differ).
        DType::F64 => (1e-12, 1e-12),
        _ => (0.0, 0.0),
    }
}

pub fn assert_close(got: &[Tensor], want: &[Tensor], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: output count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (rt, at) = tolerance(w.dtype);
        let c = closeness(g, w, rt, at);
        assert!(
            c <= 1.0,
            "{what}: output #{i} differs from the interpreter (closeness {c:.3})"
        );
    }
}

/// A size symbol `K` (data.nonzero's count of `relu(x)`, bound 12) feeding a
/// transpose, cast and mul, and a branch beside it (sigmoid, tanh) that does
/// not depend on the count — on another stream. Used by the size-symbol and
/// `run_reusing` tests.
pub const NONZERO_MODEL: &str = r#"
module attributes {ge.symbol_bounds = {K = 12 : i64}} {
  graph.func @main(%x: tensor<3x4xf32>) -> (tensor<2xKxi64>, tensor<Kx2xf32>, tensor<3x4xf32>) {
    %w = data.constant dense<[0.5, -2.0]> : tensor<2xf32>
    %a = graph.relu %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %i:2 = data.nonzero %a {count = "K"} : (tensor<3x4xf32>) -> (tensor<2xKxi64>, tensor<i64>)
    %t = data.transpose %i#0 {perm = [1, 0]} : (tensor<2xKxi64>) -> tensor<Kx2xi64>
    %f = graph.cast %t {to = f32} : (tensor<Kx2xi64>) -> tensor<Kx2xf32>
    %z = graph.mul %f, %w : (tensor<Kx2xf32>, tensor<2xf32>) -> tensor<Kx2xf32>
    %s = graph.sigmoid %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %u = graph.tanh %s : (tensor<3x4xf32>) -> tensor<3x4xf32>
    graph.return %i#0, %z, %u : tensor<2xKxi64>, tensor<Kx2xf32>, tensor<3x4xf32>
  }
}
"#;

/// `len` values in [-1, 1] from `seed` (the values of [`dense`]).
pub fn seeded(len: usize, seed: u64) -> impl Iterator<Item = f64> {
    (0..len as u64).map(move |i| {
        let v = (i
            .wrapping_mul(2654435761)
            .wrapping_add(seed.wrapping_mul(97)))
            % 1001;
        (v as f64 - 500.0) / 500.0
    })
}

/// A `dense<...>` literal of `len` values from `seed`, nested in `shape`.
pub fn dense(len: usize, shape: &[usize], seed: u64) -> String {
    let values: Vec<String> = seeded(len, seed).map(|v| format!("{v:.3}")).collect();
    nest(&values, shape)
}

/// An optional constant vector operand `%name` of `n` floats from `seed`,
/// as the pieces a test's `.air` text splices in: its definition line, the
/// `, %name` of the operand list and the `, tensor<nxf32>` of the operand
/// types (all empty when absent).
pub fn optional_vector(name: &str, present: bool, n: usize, seed: u64) -> (String, String, String) {
    match present {
        true => (
            format!(
                "  %{name} = data.constant dense<{}> : tensor<{n}xf32>\n",
                dense(n, &[n], seed)
            ),
            format!(", %{name}"),
            format!(", tensor<{n}xf32>"),
        ),
        false => (String::new(), String::new(), String::new()),
    }
}

/// `[[...], ...]` of `values` in `shape`.
pub fn nest(values: &[String], shape: &[usize]) -> String {
    match shape {
        [] | [_] => format!("[{}]", values.join(", ")),
        [n, rest @ ..] => {
            let chunk = values.len() / n;
            let parts: Vec<String> = values.chunks(chunk).map(|c| nest(c, rest)).collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

/// Two independent branches (matmul; relu then matmul): two streams, a
/// worker thread with `StreamExecution::Workers`, events.
pub const TWO_STREAMS: &str = "module {
  graph.func @main(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
    %w = data.constant dense<0.5> : tensor<8x8xf32>
    %a = graph.matmul %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %b = graph.relu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %c = graph.matmul %b, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %d = graph.add %a, %c : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    graph.return %d, %b : tensor<2x8xf32>, tensor<2x8xf32>
  }
}";
