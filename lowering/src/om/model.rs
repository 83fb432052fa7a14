//! What an `.om` holds, as Rust values (the JSON partitions are these,
//! serialised with serde), and their validation: a model that passes
//! [`OmModel::validate`] can be executed without bounds checks failing —
//! every buffer lies inside its arena, every weight inside the weights blob,
//! every kernel, stream, event and label id is in range, and every wait
//! follows a record.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// The model definition partition.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelDef {
    pub name: String,
    pub soc: String,
    /// The entry function the model was compiled from.
    pub entry: String,
    /// The arenas the task program works on, in program-operand order.
    pub arenas: Vec<ArenaDef>,
    pub num_streams: u32,
    pub num_events: u32,
    /// Upper bounds the plan was made for (`B = 64`).
    #[serde(default)]
    pub symbol_bounds: BTreeMap<String, i64>,
    /// Bytes of the weights partition.
    pub weights_size: u64,
    /// Engines the program launches kernels on.
    #[serde(default)]
    pub engines: Vec<String>,
    /// Memory plan summary (workspace, lower bound, strategy, …).
    #[serde(default)]
    pub memory_plan: BTreeMap<String, serde_json::Value>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ArenaRole {
    /// A model input: the caller's buffer (zero copy).
    Input,
    /// A model output: the caller's buffer (zero copy).
    Output,
    /// Intermediates.
    Workspace,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ArenaDef {
    pub role: ArenaRole,
    /// Input/output number (for inputs and outputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    pub size: u64,
    pub alignment: u64,
}

/// A buffer in an arena.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct Buffer {
    pub arena: u32,
    pub offset: u64,
    /// The tensor type in `.air` syntax (`tensor<Bx64xf16>`); symbolic dims
    /// take their run-time values, `bytes` is the size at the bounds.
    #[serde(rename = "type")]
    pub ty: String,
    pub bytes: u64,
    /// The logical buffer (as `ge.buffer` in the IR).
    pub id: i64,
}

/// A kernel input: a buffer or a weight.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Operand {
    Buffer(Buffer),
    /// Index into [`TaskProgram::weights`].
    Weight(u32),
}

/// One task, in program order. Tasks of one stream run in order; streams
/// synchronise only through events. A `wait` refers to the latest `record`
/// of its event before it in program order; an event id is recorded again
/// only after every wait of its previous record has happened.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
pub enum Task {
    /// Run kernel `kernel` reading `ins`, writing `outs` (an out may be the
    /// same bytes as an in: elementwise kernels run in place).
    Launch {
        kernel: u32,
        stream: u32,
        engine: String,
        ins: Vec<Operand>,
        outs: Vec<Buffer>,
    },
    Memcpy {
        stream: u32,
        src: Buffer,
        dst: Buffer,
    },
    Record {
        event: u32,
        stream: u32,
    },
    Wait {
        event: u32,
        stream: u32,
    },
    Label {
        label: u32,
        stream: u32,
    },
    Goto {
        label: u32,
        stream: u32,
    },
    /// Jump to `targets[value]` (value: one i1/i32/i64/index element).
    Switch {
        value: Buffer,
        stream: u32,
        targets: Vec<u32>,
    },
    End,
}

/// A weight in the weights partition.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WeightDef {
    pub offset: u64,
    pub bytes: u64,
    #[serde(rename = "type")]
    pub ty: String,
}

/// A kernel: a function of the kernels partition.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KernelDef {
    /// Function name in the kernels module (without `@`).
    pub name: String,
    /// Fusion pattern, if the kernel was fused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// The task program partition.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct TaskProgram {
    pub weights: Vec<WeightDef>,
    pub kernels: Vec<KernelDef>,
    pub tasks: Vec<Task>,
}

/// A model input or output.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IoTensor {
    pub name: String,
    pub buffer: Buffer,
}

/// The I/O description partition.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct IoDesc {
    pub inputs: Vec<IoTensor>,
    pub outputs: Vec<IoTensor>,
}

/// A whole model, owned.
#[derive(Clone, Debug, PartialEq)]
pub struct OmModel {
    pub def: ModelDef,
    pub weights: Vec<u8>,
    pub program: TaskProgram,
    /// The kernel functions (and what they call) as `.air` text.
    pub kernels: String,
    pub io: IoDesc,
}

/// The byte size at the bounds of a type string, checked.
pub fn type_bytes(ty: &str, bounds: &BTreeMap<String, i64>) -> Result<u64, String> {
    let t = ge_ir::parser::parse_type_str(ge_ir::context::bare(), ty)
        .map_err(|d| format!("bad type '{ty}': {}", d.message))?;
    let b: crate::funcs::Bounds = bounds
        .iter()
        .map(|(k, v)| (ge_ir::Ident::new(k), *v))
        .collect();
    let n = ge_dialects::memory::byte_size_bound(t, &b).map_err(|m| format!("type '{ty}': {m}"))?;
    u64::try_from(n).map_err(|_| format!("type '{ty}' has a negative size"))
}

impl OmModel {
    /// Check every reference and range (see the module docs).
    pub fn validate(&self) -> Result<(), String> {
        validate(
            &self.def,
            self.weights.len() as u64,
            &self.program,
            &self.kernels,
            &self.io,
        )
    }
}

/// Check every reference and range of a model's parts.
pub fn validate(
    d: &ModelDef,
    weights_len: u64,
    program: &TaskProgram,
    kernels: &str,
    io: &IoDesc,
) -> Result<(), String> {
    {
        let bounds = &d.symbol_bounds;
        if d.num_streams == 0 {
            return Err("model def: num_streams must be at least 1".into());
        }
        if d.weights_size != weights_len {
            return Err(format!(
                "model def says the weights are {} bytes, but the weights partition has {weights_len}",
                d.weights_size,
            ));
        }
        for (i, a) in d.arenas.iter().enumerate() {
            if !a.alignment.is_power_of_two() {
                return Err(format!(
                    "arena #{i}: alignment {} is not a power of two",
                    a.alignment
                ));
            }
            if a.role != ArenaRole::Workspace && a.index.is_none() {
                return Err(format!("arena #{i}: an input/output arena needs an index"));
            }
        }
        let buffer = |what: &str, b: &Buffer| -> Result<(), String> {
            let a = d.arenas.get(b.arena as usize).ok_or_else(|| {
                format!(
                    "{what}: arena {} does not exist ({} arenas)",
                    b.arena,
                    d.arenas.len()
                )
            })?;
            let n = type_bytes(&b.ty, bounds).map_err(|m| format!("{what}: {m}"))?;
            if n != b.bytes {
                return Err(format!("{what}: '{}' is {n} bytes, not {}", b.ty, b.bytes));
            }
            let end = b
                .offset
                .checked_add(b.bytes)
                .ok_or_else(|| format!("{what}: offset overflows"))?;
            if end > a.size {
                return Err(format!(
                    "{what}: bytes [{}, {end}) lie outside arena {} ({} bytes)",
                    b.offset, b.arena, a.size
                ));
            }
            Ok(())
        };
        for (i, w) in program.weights.iter().enumerate() {
            let n = type_bytes(&w.ty, bounds).map_err(|m| format!("weight #{i}: {m}"))?;
            if n != w.bytes {
                return Err(format!(
                    "weight #{i}: '{}' is {n} bytes, not {}",
                    w.ty, w.bytes
                ));
            }
            let end = w
                .offset
                .checked_add(w.bytes)
                .ok_or("weight offset overflows")?;
            if end > weights_len {
                return Err(format!(
                    "weight #{i}: bytes [{}, {end}) lie outside the {}-byte weights partition",
                    w.offset, weights_len
                ));
            }
            if w.offset % 64 != 0 {
                return Err(format!(
                    "weight #{i}: offset {} is not 64-byte aligned",
                    w.offset
                ));
            }
        }
        let labels: HashSet<(u32, u32)> = program
            .tasks
            .iter()
            .filter_map(|t| match t {
                Task::Label { label, stream } => Some((*label, *stream)),
                _ => None,
            })
            .collect();
        let mut recorded: HashSet<u32> = HashSet::new();
        let stream_ok = |i: usize, s: u32| -> Result<(), String> {
            if s >= d.num_streams {
                return Err(format!(
                    "task #{i}: stream {s} out of range (num_streams = {})",
                    d.num_streams
                ));
            }
            Ok(())
        };
        let mut ended = false;
        for (i, t) in program.tasks.iter().enumerate() {
            let what = format!("task #{i}");
            match t {
                Task::Launch {
                    kernel,
                    stream,
                    ins,
                    outs,
                    ..
                } => {
                    stream_ok(i, *stream)?;
                    if *kernel as usize >= program.kernels.len() {
                        return Err(format!("{what}: kernel {kernel} does not exist"));
                    }
                    for o in ins {
                        match o {
                            Operand::Buffer(b) => buffer(&what, b)?,
                            Operand::Weight(w) if (*w as usize) < program.weights.len() => {}
                            Operand::Weight(w) => {
                                return Err(format!("{what}: weight {w} does not exist"))
                            }
                        }
                    }
                    if outs.is_empty() {
                        return Err(format!("{what}: a launch writes at least one buffer"));
                    }
                    for b in outs {
                        buffer(&what, b)?;
                    }
                }
                Task::Memcpy { stream, src, dst } => {
                    stream_ok(i, *stream)?;
                    buffer(&what, src)?;
                    buffer(&what, dst)?;
                    if src.bytes != dst.bytes {
                        return Err(format!(
                            "{what}: memcpy of {} bytes into {}",
                            src.bytes, dst.bytes
                        ));
                    }
                }
                Task::Record { event, stream } | Task::Wait { event, stream } => {
                    stream_ok(i, *stream)?;
                    if *event >= d.num_events {
                        return Err(format!(
                            "{what}: event {event} out of range (num_events = {})",
                            d.num_events
                        ));
                    }
                    if matches!(t, Task::Record { .. }) {
                        recorded.insert(*event);
                    } else if !recorded.contains(event) {
                        return Err(format!(
                            "{what}: waits for event {event} before any record of it"
                        ));
                    }
                }
                Task::Label { stream, .. } => stream_ok(i, *stream)?,
                Task::Goto { label, stream } => {
                    stream_ok(i, *stream)?;
                    if !labels.contains(&(*label, *stream)) {
                        return Err(format!(
                            "{what}: jumps to label {label}, which is not on stream {stream}"
                        ));
                    }
                }
                Task::Switch {
                    value,
                    stream,
                    targets,
                } => {
                    stream_ok(i, *stream)?;
                    buffer(&what, value)?;
                    for l in targets {
                        if !labels.contains(&(*l, *stream)) {
                            return Err(format!(
                                "{what}: jumps to label {l}, which is not on stream {stream}"
                            ));
                        }
                    }
                }
                Task::End => {
                    ended = true;
                }
            }
        }
        if !ended {
            return Err("the task program has no end task".into());
        }
        for (k, list, role) in [
            ("input", &io.inputs, ArenaRole::Input),
            ("output", &io.outputs, ArenaRole::Output),
        ] {
            for (i, t) in list.iter().enumerate() {
                buffer(&format!("{k} #{i} '{}'", t.name), &t.buffer)?;
                let a = &d.arenas[t.buffer.arena as usize];
                if a.role != role {
                    return Err(format!("{k} #{i} '{}' is not in an {k} arena", t.name));
                }
            }
        }
        for (i, k) in program.kernels.iter().enumerate() {
            let plain = format!("@{}(", k.name);
            let quoted = format!("@\"{}\"(", k.name);
            if !kernels.contains(&plain) && !kernels.contains(&quoted) {
                return Err(format!(
                    "kernel #{i} '@{}' is not in the kernels partition",
                    k.name
                ));
            }
        }
        Ok(())
    }
}
