//! A structure-aware `.om` mutator shared by the `om_runtime` fuzz target
//! (fuzz/fuzz_targets/om_runtime.rs) and the bounded proptest that runs in
//! CI (runtime/tests/suite/hostile_om.rs): bytes pick edits of a compiled model's
//! task program, sizes, offsets, types, counts and kernels text; the model is
//! written with valid checksums (`to_bytes_unchecked`), loaded with tight
//! limits and, when it loads, run on inputs of a random shape. Whatever the
//! bytes, the runtime must answer `Ok` or a one-line `Err` — never panic,
//! abort, hang or touch memory out of bounds (ASan / the fuzzer catch that).

#![allow(dead_code)]

use ge_om::model::{Buffer, OmModel, Operand, Task};
use ge_runtime::{HostTensor, LoadOptions, Model};

/// Models the mutations start from (compiled once): one stream with a
/// weight, and a model with a branch on two streams and events.
pub const SEEDS: [&str; 2] = [
    "module attributes {ge.symbol_bounds = {B = 8 : i64}} {
  graph.func @main(%x: tensor<Bx4xf32>, %scale: tensor<4xf32>) -> tensor<Bx4xf32> {
    %w = data.constant dense<[[0.5, -1.0, 0.25, 2.0], [1.0, 0.0, -0.5, 1.5], [0.0, 1.0, 1.0, -1.0], [2.0, 0.5, 0.0, 1.0]]> : tensor<4x4xf32>
    %a = graph.matmul %x, %w : (tensor<Bx4xf32>, tensor<4x4xf32>) -> tensor<Bx4xf32>
    %b = graph.mul %x, %scale : (tensor<Bx4xf32>, tensor<4xf32>) -> tensor<Bx4xf32>
    %c = graph.sigmoid %b : (tensor<Bx4xf32>) -> tensor<Bx4xf32>
    %d = graph.add %a, %c : (tensor<Bx4xf32>, tensor<Bx4xf32>) -> tensor<Bx4xf32>
    graph.return %d : tensor<Bx4xf32>
  }
}",
    "module attributes {ge.symbol_bounds = {B = 4 : i64}} {
  graph.func @main(%x: tensor<Bx8xf32>) -> (tensor<Bx8xf32>, tensor<Bx8xf32>) {
    %w = data.constant dense<0.5> : tensor<8x8xf32>
    %a = graph.matmul %x, %w : (tensor<Bx8xf32>, tensor<8x8xf32>) -> tensor<Bx8xf32>
    %b = graph.relu %x : (tensor<Bx8xf32>) -> tensor<Bx8xf32>
    %c = graph.matmul %b, %w : (tensor<Bx8xf32>, tensor<8x8xf32>) -> tensor<Bx8xf32>
    %d = graph.add %a, %c : (tensor<Bx8xf32>, tensor<Bx8xf32>) -> tensor<Bx8xf32>
    graph.return %d, %b : tensor<Bx8xf32>, tensor<Bx8xf32>
  }
}",
];

/// Compile the seeds (panics: the seeds are ours, not fuzz input).
pub fn seeds() -> Vec<OmModel> {
    SEEDS
        .iter()
        .enumerate()
        .map(|(i, s)| {
            ge_compile::compile_text(&format!("seed{i}"), s, &Default::default())
                .unwrap_or_else(|e| panic!("seed {i}: {e}"))
        })
        .collect()
}

/// Bytes read front to back; zeros once they run out.
pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    pub fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    pub fn u64(&mut self) -> u64 {
        (0..8).fold(0, |a, _| (a << 8) | self.u8() as u64)
    }
    pub fn done(&self) -> bool {
        self.0.is_empty()
    }
    /// An index below `n` (0 when `n` is 0).
    pub fn pick(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (((self.u8() as usize) << 8) | self.u8() as usize) % n
        }
    }
    /// A size or offset: small, near a power of two, or extreme.
    pub fn size(&mut self) -> u64 {
        match self.u8() % 6 {
            0 => self.u8() as u64,
            1 => 1 << (self.u8() % 64),
            2 => (1u64 << (self.u8() % 64)).wrapping_sub(self.u8() as u64 % 17),
            3 => u64::MAX - self.u8() as u64,
            4 => self.u64(),
            _ => 64 * self.u8() as u64,
        }
    }
}

const TYPES: [&str; 14] = [
    "tensor<0xf32>",
    "tensor<1xf32>",
    "tensor<4xf32>",
    "tensor<Bx4xf32>",
    "tensor<Bx8xf32>",
    "tensor<4x4xf32>",
    "tensor<8x8xf32>",
    "tensor<4096xf32>",
    "tensor<1xi64>",
    "tensor<1xi1>",
    "tensor<0xi64>",
    "tensor<Bxi32>",
    "tensor<2xf16>",
    "tensor<1099511627776xf32>",
];

/// Every buffer of the program (task operands, results, switch values).
fn buffers(m: &mut OmModel) -> Vec<&mut Buffer> {
    let mut out = vec![];
    for t in &mut m.program.tasks {
        match t {
            Task::Launch { ins, outs, .. } => {
                for o in ins {
                    if let Operand::Buffer(b) = o {
                        out.push(b);
                    }
                }
                out.extend(outs.iter_mut());
            }
            Task::Memcpy { src, dst, .. } => {
                out.push(src);
                out.push(dst);
            }
            Task::Switch { value, .. } => out.push(value),
            _ => {}
        }
    }
    for t in m.io.inputs.iter_mut().chain(m.io.outputs.iter_mut()) {
        out.push(&mut t.buffer);
    }
    out
}

/// A type and (mostly) its true size at the bounds, so the edit gets past
/// ge-om's size check and reaches the runtime.
fn typed(m: &OmModel, u: &mut Bytes) -> (String, u64) {
    let ty = TYPES[u.pick(TYPES.len())].to_string();
    let n = ge_om::model::type_bytes(&ty, &m.def.symbol_bounds).unwrap_or(0);
    (ty, if u.u8() < 224 { n } else { u.size() })
}

/// A random task.
fn task(m: &OmModel, u: &mut Bytes) -> Task {
    let stream = u.pick(m.def.num_streams as usize + 1) as u32;
    let (ty, bytes) = typed(m, u);
    let b = |u: &mut Bytes, ty: &str, bytes| Buffer {
        arena: u.pick(m.def.arenas.len() + 1) as u32,
        offset: if u.u8() < 200 {
            64 * (u.u8() as u64 % 4)
        } else {
            u.size()
        },
        ty: ty.to_string(),
        bytes,
        id: 1000,
    };
    let label = u.u8() as u32 % 4;
    let event = u.u8() as u32 % m.def.num_events.saturating_add(1);
    match u.u8() % 8 {
        0 => Task::Memcpy {
            stream,
            src: b(u, &ty, bytes),
            dst: b(u, &ty, bytes),
        },
        1 => Task::Record { event, stream },
        2 => Task::Wait { event, stream },
        3 => Task::Label { label, stream },
        4 => Task::Goto { label, stream },
        5 => Task::Switch {
            value: b(u, &ty, bytes),
            stream,
            targets: (0..u.u8() % 3).map(|k| k as u32).collect(),
        },
        6 => Task::End,
        _ => Task::Launch {
            kernel: u.pick(m.program.kernels.len() + 1) as u32,
            stream,
            engine: "AICore".into(),
            ins: (0..u.u8() % 4)
                .map(|_| {
                    if u.u8().is_multiple_of(3) {
                        Operand::Weight(u.u8() as u32 % 3)
                    } else {
                        Operand::Buffer(b(u, &ty, bytes))
                    }
                })
                .collect(),
            outs: vec![b(u, &ty, bytes)],
        },
    }
}

/// Apply the edits the bytes describe (up to 8).
pub fn mutate(m: &mut OmModel, u: &mut Bytes) {
    for _ in 0..(1 + u.u8() % 8) {
        if u.done() {
            break;
        }
        let ntasks = m.program.tasks.len();
        match u.u8() % 16 {
            0 => {
                let n = m.def.arenas.len();
                if let Some(a) = m.def.arenas.get_mut(u.pick(n)) {
                    a.size = u.size();
                }
            }
            1 => {
                let s = u.size();
                let mut bs = buffers(m);
                let n = bs.len();
                if let Some(b) = bs.get_mut(u.pick(n)) {
                    b.offset = s;
                }
            }
            2 => {
                let (ty, bytes) = typed(m, u);
                let mut bs = buffers(m);
                let n = bs.len();
                if let Some(b) = bs.get_mut(u.pick(n)) {
                    b.ty = ty;
                    b.bytes = bytes;
                }
            }
            3 => {
                let (ty, bytes) = typed(m, u);
                let n = m.program.weights.len();
                if let Some(w) = m.program.weights.get_mut(u.pick(n)) {
                    w.ty = ty;
                    w.bytes = bytes;
                }
            }
            4 => {
                if let Some(Task::Launch { ins, outs, .. }) =
                    m.program.tasks.get_mut(u.pick(ntasks))
                {
                    match u.u8() % 4 {
                        0 => drop(ins.pop()),
                        1 => drop(outs.pop()),
                        2 => ins.reverse(),
                        _ => {
                            if let Some(o) = outs.first().cloned() {
                                outs.push(o);
                            }
                        }
                    }
                }
            }
            5 => m.def.num_streams = [0, 1, 2, 3, 1025, u32::MAX][u.pick(6)],
            6 => m.def.num_events = [0, 1, 2, 1 << 21, u32::MAX][u.pick(5)],
            7 => {
                let t = task(m, u);
                m.program.tasks.insert(u.pick(ntasks + 1), t);
            }
            8 if ntasks > 0 => drop(m.program.tasks.remove(u.pick(ntasks))),
            9 if ntasks > 1 => m.program.tasks.swap(u.pick(ntasks), u.pick(ntasks)),
            10 => {
                let v = [-1, 0, 1, 3, 1 << 20, i64::MAX][u.pick(6)];
                if let Some(b) = m.def.symbol_bounds.values_mut().next() {
                    *b = v;
                }
            }
            11 => {
                // A stream id of a task.
                let s = u.pick(m.def.num_streams as usize + 2) as u32;
                if let Some(
                    Task::Launch { stream, .. }
                    | Task::Memcpy { stream, .. }
                    | Task::Record { stream, .. }
                    | Task::Wait { stream, .. }
                    | Task::Label { stream, .. }
                    | Task::Goto { stream, .. }
                    | Task::Switch { stream, .. },
                ) = m.program.tasks.get_mut(u.pick(ntasks))
                {
                    *stream = s;
                }
            }
            12 => {
                // Kernels text: swap a type for another, or add a constant.
                let (from, to) = (TYPES[u.pick(TYPES.len())], TYPES[u.pick(TYPES.len())]);
                if u.u8().is_multiple_of(2) {
                    m.kernels = m.kernels.replacen(from, to, 1);
                } else if let Some(p) = m.kernels.find(" {\n") {
                    let c = format!("\n    %fz = data.constant dense<1.0> : {to}\n");
                    m.kernels.insert_str(p + 2, &c);
                }
            }
            13 => {
                let n = m.io.inputs.len();
                if let Some(t) = m.io.inputs.get_mut(u.pick(n)) {
                    t.buffer.arena = u.pick(4) as u32;
                }
            }
            14 => {
                let k = u.u8() as usize % (m.weights.len() + 1);
                m.weights.truncate(k * 64);
                m.def.weights_size = m.weights.len() as u64;
            }
            _ => {
                let n = m.def.arenas.len();
                if let Some(a) = m.def.arenas.get_mut(u.pick(n)) {
                    a.alignment = 1 << (u.u8() % 64);
                }
            }
        }
    }
}

/// Tight limits: small budget, few steps, a short deadline.
pub fn limits() -> LoadOptions {
    LoadOptions {
        max_memory: Some(64 << 20),
        max_steps: 10_000,
        timeout: Some(std::time::Duration::from_secs(2)),
        plan_cache: 2,
        ..Default::default()
    }
}

/// Write `m` (valid checksums), load it, and run it on inputs of a shape
/// the bytes pick. `Ok(true)`: it ran. `Err`: the one-line reason.
pub fn load_and_run(m: &OmModel, u: &mut Bytes) -> Result<bool, String> {
    let bytes = ge_om::format::to_bytes_unchecked(m)?;
    let model = Model::from_bytes(&bytes, &limits()).map_err(|e| e.to_string())?;
    run_model(&model, 1 + u.u8() as usize % 9)?;
    Ok(true)
}

/// Run `model` once on inputs whose symbolic dims are `b` (static dims up
/// to 64), filled with a fixed pattern.
pub fn run_model(model: &Model, b: usize) -> Result<(), String> {
    let mut inputs = vec![];
    for (_, ty) in model.inputs() {
        let t = ge_ir::parser::parse_type_str(ge_ir::context::bare(), &ty)
            .map_err(|d| d.message.clone())?;
        let tt = t.as_tensor().ok_or("not a tensor")?;
        let shape: Vec<usize> = tt
            .shape()
            .iter()
            .map(|d| match d {
                ge_ir::Dim::Static(n) => (*n).clamp(0, 64) as usize,
                _ => b,
            })
            .collect();
        let n: usize = shape.iter().product::<usize>() * tt.dtype.byte_size();
        let data: Vec<u8> = (0..n).map(|i| (i * 37 + b) as u8).collect();
        inputs.push(HostTensor::from_bytes(tt.dtype, &shape, &data)?);
    }
    model.run(&inputs).map_err(|e| e.to_string())?;
    Ok(())
}

/// The property: any mutation loads and runs, or fails with one line.
pub fn check(seeds: &[OmModel], data: &[u8]) {
    let mut u = Bytes(data);
    let mut m = seeds[u.pick(seeds.len())].clone();
    mutate(&mut m, &mut u);
    if let Err(e) = load_and_run(&m, &mut u) {
        assert!(!e.contains('\n'), "multi-line error: {e}");
    }
}
