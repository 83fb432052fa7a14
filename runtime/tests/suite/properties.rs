//! Properties of the executor beyond "equals the interpreter":
//!
//! - multi-stream and single-stream compiles of one model give bitwise
//!   identical outputs (same kernels, different schedule and memory plan);
//! - one loaded model run from 8 threads × 50 runs, each thread with its own
//!   inputs, gives bitwise the outputs of a sequential run;
//! - a corrupted memory plan (a buffer moved onto one that is still live)
//!   gives wrong answers, while the intact plan is right — the arena really
//!   is where intermediates live;
//! - seeded random graphs (elementwise chains, matmuls, branches) compiled
//!   with random options equal the interpreter;
//! - dynamic shapes: inputs above a symbol's bound are refused with a clear
//!   error, and the per-shape plan cache stays within its bound.

use crate::common;
use common::*;
use ge_compile::{compile_text, CompileOptions};
use ge_ir::tensor::Tensor;
use ge_om::model::{ArenaRole, Buffer, Operand, Task};
use ge_om::OmModel;
use ge_runtime::{HostTensor, LoadOptions, Model, RunOptions};
use rand::{Rng, SeedableRng};
use std::collections::HashMap;

fn host(inputs: &[Tensor]) -> Vec<HostTensor> {
    inputs.iter().map(HostTensor::from_tensor).collect()
}

fn run_host(model: &Model, inputs: &[HostTensor]) -> Vec<HostTensor> {
    model
        .session()
        .run(inputs)
        .unwrap_or_else(|e| panic!("run: {e}"))
}

// ---- multi-stream vs single-stream ----------------------------------------------------

#[test]
fn multi_stream_and_single_stream_are_bitwise_identical() {
    for name in ["inception_v3", "nasnet_a", "bert_base"] {
        let text = read(&format!("testdata/models/{name}.air"));
        let multi = om_bytes(name, &text, &CompileOptions::default());
        let single = om_bytes(
            name,
            &text,
            &CompileOptions {
                single_stream: true,
                ..Default::default()
            },
        );
        let (types, _) = signature(&text, "main");
        for threads in [1, 2] {
            let m = load(&multi, threads);
            let s = load(&single, threads);
            assert!(
                m.num_streams() > 1,
                "{name}: the default compile should use several streams"
            );
            assert_eq!(s.num_streams(), 1, "{name}: single-stream compile");
            for b in [1, 2] {
                let ins = host(&random_inputs(&types, &[("B", b)], 5 + b as u64));
                let a = run_host(&m, &ins);
                let c = run_host(&s, &ins);
                assert_eq!(a.len(), c.len());
                for (i, (x, y)) in a.iter().zip(&c).enumerate() {
                    assert!(
                        x == y,
                        "{name} B={b} threads={threads}: output #{i} differs between {} streams and 1 stream",
                        m.num_streams()
                    );
                }
            }
        }
    }
}

// ---- --threads bounds the cores of a run, whatever its streams --------------------------

/// The most compute-kernel slices of one traced run that overlap in time.
fn most_concurrent_kernels(model: &Model, inputs: &[HostTensor]) -> usize {
    let r = model
        .session()
        .run_with(inputs, &RunOptions { trace: true })
        .unwrap_or_else(|e| panic!("run: {e}"));
    let trace = r.trace.expect("a trace was asked for");
    let mut edges: Vec<(f64, i32)> = vec![];
    for e in &trace.events {
        if matches!(trace.engine(e.task), Some("AICore" | "VectorCore")) {
            edges.push((e.start_us, 1));
            edges.push((e.end_us, -1));
        }
    }
    // Ends before starts at the same instant: touching slices do not overlap.
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    most as usize
}

#[test]
fn streams_share_the_threads_of_a_run() {
    // NasNet-A's cells put independent branches on many streams.
    let text = read("testdata/models/nasnet_a.air");
    let om = om_bytes("nasnet_a", &text, &CompileOptions::default());
    let (types, _) = signature(&text, "main");
    let ins = host(&random_inputs(&types, &[("B", 2)], 3));
    for threads in [1, 2] {
        let m = load(&om, threads);
        assert!(m.num_streams() > 2, "the model should use several streams");
        for _ in 0..5 {
            let most = most_concurrent_kernels(&m, &ins);
            assert!(
                most <= threads,
                "{most} kernels ran at once on {threads} thread(s)"
            );
        }
    }
}

// ---- many threads on one loaded model -------------------------------------------------

#[test]
fn eight_threads_times_fifty_runs_give_identical_outputs() {
    let name = "inception_v3";
    let text = read(&format!("testdata/models/{name}.air"));
    let om = om_bytes(name, &text, &CompileOptions::default());
    let model = load(&om, 2);
    assert!(model.num_streams() > 1);
    let (types, m) = signature(&text, "main");
    // Each thread has its own inputs (so a context or arena shared between
    // runs would show up as one thread's data in another's outputs).
    let inputs: Vec<Vec<Tensor>> = (0..8)
        .map(|t| random_inputs(&types, &[("B", 1 + (t % 2))], 100 + t as u64))
        .collect();
    let want: Vec<Vec<HostTensor>> = inputs
        .iter()
        .map(|ins| run_host(&model, &host(ins)))
        .collect();
    // The sequential reference is itself right.
    let first: Vec<Tensor> = want[0].iter().map(|t| t.to_tensor().unwrap()).collect();
    assert_close(&first, &interpret(&m, "main", &inputs[0]), "reference run");
    std::thread::scope(|sc| {
        for (t, (ins, want)) in inputs.iter().zip(&want).enumerate() {
            let model = model.clone();
            sc.spawn(move || {
                let session = model.session();
                let ins = host(ins);
                for r in 0..50 {
                    let got = session
                        .run(&ins)
                        .unwrap_or_else(|e| panic!("thread {t} run {r}: {e}"));
                    assert!(
                        got == *want,
                        "thread {t} run {r}: outputs differ from the sequential run"
                    );
                }
            });
        }
    });
}

#[test]
fn models_and_sessions_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Model>();
    check::<ge_runtime::Session>();
}

// ---- a corrupted memory plan is caught -----------------------------------------------

/// Buffer references of a task (reads and writes).
fn task_buffers(t: &mut Task) -> Vec<&mut Buffer> {
    match t {
        Task::Launch { ins, outs, .. } => ins
            .iter_mut()
            .filter_map(|o| match o {
                Operand::Buffer(b) => Some(b),
                Operand::Weight(_) => None,
            })
            .chain(outs.iter_mut())
            .collect(),
        Task::Memcpy { src, dst, .. } => vec![src, dst],
        Task::Switch { value, .. } => vec![value],
        _ => vec![],
    }
}

/// Live range (first write, last read) in program order of each workspace
/// buffer id, with its arena, offset and size.
#[derive(Debug, Clone, Copy)]
struct Live {
    id: i64,
    arena: u32,
    offset: u64,
    bytes: u64,
    first_write: usize,
    last_read: usize,
}

fn live_ranges(om: &OmModel) -> Vec<Live> {
    let ws = |a: u32| om.def.arenas[a as usize].role == ArenaRole::Workspace;
    let mut m: HashMap<i64, Live> = HashMap::new();
    for (ti, t) in om.program.tasks.iter().enumerate() {
        let (reads, writes): (Vec<&Buffer>, Vec<&Buffer>) = match t {
            Task::Launch { ins, outs, .. } => (
                ins.iter()
                    .filter_map(|o| match o {
                        Operand::Buffer(b) => Some(b),
                        Operand::Weight(_) => None,
                    })
                    .collect(),
                outs.iter().collect(),
            ),
            Task::Memcpy { src, dst, .. } => (vec![src], vec![dst]),
            _ => (vec![], vec![]),
        };
        for b in writes.into_iter().filter(|b| ws(b.arena)) {
            m.entry(b.id).or_insert(Live {
                id: b.id,
                arena: b.arena,
                offset: b.offset,
                bytes: b.bytes,
                first_write: ti,
                last_read: ti,
            });
        }
        for b in reads.into_iter().filter(|b| ws(b.arena)) {
            if let Some(l) = m.get_mut(&b.id) {
                l.last_read = l.last_read.max(ti);
            }
        }
    }
    let mut v: Vec<Live> = m.into_values().collect();
    v.sort_by_key(|l| (l.first_write, l.id));
    v
}

/// Move every reference to buffer `id` to `offset`.
fn move_buffer(om: &mut OmModel, id: i64, offset: u64) {
    for t in &mut om.program.tasks {
        for b in task_buffers(t) {
            if b.id == id {
                b.offset = offset;
            }
        }
    }
}

fn bytes_of(om: &OmModel) -> Vec<u8> {
    ge_om::format::to_bytes_unchecked(om).expect("serialise")
}

#[test]
fn a_corrupted_memory_plan_gives_wrong_answers() {
    // One stream: program order is execution order, so the clobbering below
    // happens deterministically.
    let opts = CompileOptions {
        single_stream: true,
        formats: false,
        ..Default::default()
    };
    let mut checked = 0;
    for name in ["resnet50", "bert_base"] {
        let text = read(&format!("testdata/models/{name}.air"));
        let om = compile_text(name, &text, &opts).expect("compile");
        let (types, m) = signature(&text, "main");
        let inputs = random_inputs(&types, &[("B", 1)], 3);
        let want = interpret(&m, "main", &inputs);
        // The intact plan is right.
        let intact = load(&bytes_of(&om), 1);
        let good: Vec<Tensor> = run(&intact, &inputs);
        assert_close(&good, &want, &format!("{name}: intact plan"));
        let good_host = host(&good);
        // Pairs (a, b): b is first written while a is still to be read, and
        // in the intact plan they do not overlap. Moving b onto a's offset
        // makes b's writer clobber a before a's last reader.
        let lives = live_ranges(&om);
        let arena_size = |a: u32| om.def.arenas[a as usize].size;
        let mut pairs = vec![];
        for a in &lives {
            for b in &lives {
                let disjoint = a.arena != b.arena
                    || a.offset + a.bytes <= b.offset
                    || b.offset + b.bytes <= a.offset;
                if a.id != b.id
                    && a.arena == b.arena
                    && disjoint
                    && a.first_write < b.first_write
                    && b.first_write < a.last_read
                    && a.offset + b.bytes <= arena_size(a.arena)
                    && b.bytes >= 64
                {
                    pairs.push((*a, *b));
                }
            }
        }
        assert!(!pairs.is_empty(), "{name}: no live pair to corrupt");
        // Spread the tried pairs over the program.
        let step = (pairs.len() / 6).max(1);
        for (a, b) in pairs.iter().step_by(step).take(6) {
            let mut bad = om.clone();
            move_buffer(&mut bad, b.id, a.offset);
            let model = Model::from_bytes(&bytes_of(&bad), &LoadOptions::default())
                .expect("the corrupted plan is structurally valid");
            assert_native(&model, &[]);
            match model.session().run(&host(&inputs)) {
                Err(_) => {}
                Ok(out) => assert!(
                    out != good_host,
                    "{name}: moving buffer {} (written by task #{}) onto buffer {} (live over tasks #{}..#{}) did not change the outputs: intermediates do not live in the arena",
                    b.id,
                    b.first_write,
                    a.id,
                    a.first_write,
                    a.last_read
                ),
            }
            checked += 1;
        }
        // Everything in the workspace at offset 0: certainly wrong.
        let mut bad = om.clone();
        for l in &lives {
            move_buffer(&mut bad, l.id, 0);
        }
        let model = Model::from_bytes(&bytes_of(&bad), &LoadOptions::default()).expect("load");
        assert_native(&model, &[]);
        if let Ok(out) = model.session().run(&host(&inputs)) {
            assert!(
                out != good_host,
                "{name}: all at offset 0 gave right answers"
            );
        }
    }
    assert!(checked >= 2);
}

// ---- random graphs --------------------------------------------------------------------

const N: usize = 16;

/// A random graph over `tensor<BxNxf32>` values: unary and binary
/// elementwise ops, matmuls with constant weights, broadcast bias adds;
/// values are reused, so there are branches (several streams).
fn random_graph(seed: u64) -> String {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let t = format!("tensor<Bx{N}xf32>");
    let mut body = String::new();
    let inputs = rng.random_range(1..=3);
    let mut vals: Vec<String> = (0..inputs).map(|i| format!("%in{i}")).collect();
    let mut next = 0;
    let mut fresh = |body: &mut String, rhs: String| {
        let v = format!("%v{next}");
        next += 1;
        body.push_str(&format!("    {v} = {rhs}\n"));
        v
    };
    let ops = rng.random_range(4..=14);
    for _ in 0..ops {
        let pick = |rng: &mut rand::rngs::SmallRng, vals: &[String]| {
            // Prefer recent values (chains) but reach back sometimes (branches).
            let n = vals.len();
            if rng.random_bool(0.6) {
                vals[n - 1].clone()
            } else {
                vals[rng.random_range(0..n)].clone()
            }
        };
        let x = pick(&mut rng, &vals);
        let v = match rng.random_range(0..10) {
            0..=3 => {
                let op = ["relu", "tanh", "sigmoid", "abs"][rng.random_range(0..4)];
                fresh(&mut body, format!("graph.{op} {x} : ({t}) -> {t}"))
            }
            4..=6 => {
                let y = vals[rng.random_range(0..vals.len())].clone();
                let op = ["add", "sub", "mul", "max", "min"][rng.random_range(0..5)];
                fresh(
                    &mut body,
                    format!("graph.{op} {x}, {y} : ({t}, {t}) -> {t}"),
                )
            }
            7..=8 => {
                let rows: Vec<String> = (0..N)
                    .map(|_| {
                        let r: Vec<String> = (0..N)
                            .map(|_| format!("{:.4}", rng.random_range(-0.4..0.4)))
                            .collect();
                        format!("[{}]", r.join(", "))
                    })
                    .collect();
                let w = fresh(
                    &mut body,
                    format!(
                        "data.constant dense<[{}]> : tensor<{N}x{N}xf32>",
                        rows.join(", ")
                    ),
                );
                fresh(
                    &mut body,
                    format!("graph.matmul {x}, {w} : ({t}, tensor<{N}x{N}xf32>) -> {t}"),
                )
            }
            _ => {
                let r: Vec<String> = (0..N)
                    .map(|_| format!("{:.4}", rng.random_range(-1.0..1.0)))
                    .collect();
                let c = fresh(
                    &mut body,
                    format!("data.constant dense<[{}]> : tensor<{N}xf32>", r.join(", ")),
                );
                fresh(
                    &mut body,
                    format!("graph.add {x}, {c} : ({t}, tensor<{N}xf32>) -> {t}"),
                )
            }
        };
        vals.push(v);
    }
    let last = vals[vals.len() - 1].clone();
    let mut rets = vec![last];
    if rng.random_bool(0.5) {
        rets.push(vals[rng.random_range(0..vals.len())].clone());
    }
    let args: Vec<String> = (0..inputs).map(|i| format!("%in{i}: {t}")).collect();
    format!(
        "module attributes {{ge.symbol_bounds = {{B = 8 : i64}}}} {{\n  graph.func @main({}) -> ({}) {{\n{body}    graph.return {} : {}\n  }}\n}}\n",
        args.join(", "),
        vec![t.clone(); rets.len()].join(", "),
        rets.join(", "),
        vec![t.clone(); rets.len()].join(", ")
    )
}

#[test]
fn random_graphs_match_the_interpreter() {
    for seed in 0..40u64 {
        let text = random_graph(seed);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1000 + seed);
        let opts = CompileOptions {
            fuse: rng.random_bool(0.7),
            single_stream: rng.random_bool(0.3),
            formats: rng.random_bool(0.5),
            ..Default::default()
        };
        let om = compile_text("random", &text, &opts)
            .unwrap_or_else(|e| panic!("seed {seed} {opts:?}: compile: {e}\n{text}"));
        let bytes = ge_compile::to_bytes(&om).expect("serialise");
        let threads = rng.random_range(1..=2);
        let model = load(&bytes, threads);
        let (types, m) = signature(&text, "main");
        for b in [1, 3, 8] {
            let ins = random_inputs(&types, &[("B", b)], seed * 10 + b as u64);
            let want = interpret(&m, "main", &ins);
            let got = run(&model, &ins);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                let c = closeness(g, w, 1e-3, 1e-4);
                assert!(
                    c <= 1.0,
                    "seed {seed} B={b} {opts:?}: output #{i} differs from the interpreter (closeness {c:.3})\n{text}"
                );
            }
            assert_eq!(got.len(), want.len());
        }
    }
}

// ---- dynamic shapes -------------------------------------------------------------------

#[test]
fn inputs_above_a_symbol_bound_are_refused() {
    let text = read("testdata/models/demo_block.air");
    let model = load_allowing(
        &om_bytes("demo", &text, &CompileOptions::default()),
        1,
        DEMO_BLOCK_INTERPRETED,
    );
    assert_eq!(model.symbol_bounds(), vec![("B".to_string(), 64)]);
    let (types, m) = signature(&text, "main");
    // At the bound: fine.
    let ins = random_inputs(&types, &[("B", 64)], 1);
    assert_close(&run(&model, &ins), &interpret(&m, "main", &ins), "B=64");
    // Above: a clear error naming the symbol and the bound.
    let ins = host(&random_inputs(&types, &[("B", 65)], 1));
    let e = model
        .session()
        .run(&ins)
        .expect_err("B=65 is above the bound");
    assert!(
        e.message.contains("B = 65 is above its upper bound 64"),
        "unexpected message: {e}"
    );
    // Wrong static dim, wrong dtype, wrong count: errors, not panics.
    let mut bad = random_inputs(&types, &[("B", 2)], 1);
    bad[1] = Tensor::from_f64(vec![63], ge_ir::DType::F32, vec![0.0; 63]);
    let e = model.session().run(&host(&bad)).expect_err("wrong shape");
    assert!(e.message.contains("dim 0 must be 64"), "{e}");
    let mut bad = random_inputs(&types, &[("B", 2)], 1);
    bad[1] = Tensor::from_i64(vec![64], ge_ir::DType::I32, vec![0; 64]);
    let e = model.session().run(&host(&bad)).expect_err("wrong dtype");
    assert!(e.message.contains("element type i32"), "{e}");
    let e = model.session().run(&[]).expect_err("no inputs");
    assert!(e.message.contains("takes 3 inputs"), "{e}");
}

#[test]
fn the_plan_cache_is_bounded() {
    let text = read("testdata/models/demo_block.air");
    let om = om_bytes("demo", &text, &CompileOptions::default());
    let model = Model::from_bytes(
        &om,
        &LoadOptions {
            plan_cache: 2,
            ..Default::default()
        },
    )
    .expect("load");
    assert_native(&model, DEMO_BLOCK_INTERPRETED);
    let session = model.session();
    let (types, m) = signature(&text, "main");
    let step = |b: i64, built: usize| {
        let ins = random_inputs(&types, &[("B", b)], b as u64);
        let got = run(&model, &ins);
        assert_close(&got, &interpret(&m, "main", &ins), &format!("B={b}"));
        assert_eq!(session.plans_built(), built, "plans built after B={b}");
        assert!(session.plans_cached() <= 2, "cache over its bound");
    };
    step(1, 1);
    step(1, 1); // cached
    step(2, 2);
    step(3, 3); // evicts B=1 (least recently used)
    assert_eq!(session.plans_cached(), 2);
    step(3, 3); // cached
    step(2, 3); // cached
    step(1, 4); // rebuilt
    step(2, 4); // still cached (used more recently than 3)
    step(3, 5); // 3 was evicted by 1
    for b in 4..=20 {
        step(b, 5 + (b as usize - 3));
    }
    assert_eq!(session.plans_cached(), 2);
}
