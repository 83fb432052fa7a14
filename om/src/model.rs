//! What an `.om` holds, as Rust values: the JSON partitions are these,
//! serialised with serde. Their validation is [`crate::validate`].

use crate::format::Parts;
use crate::weights::Weights;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// Present when some symbols have no upper bound: the workspace is then
    /// planned again for each concrete shape at run time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replan: Option<Replan>,
}

/// What a runtime needs to plan the workspace arena for a concrete shape:
/// the planned units (a buffer and its views, or buffers merged in place)
/// with their sizes as types and which units may not overlap. The static
/// plan of the file (its buffer offsets, the workspace arena size) was
/// made with each unbounded symbol at its sample value (in
/// [`ModelDef::symbol_bounds`], which thus holds real bounds and samples).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Replan {
    /// The symbols without an upper bound and the value each was planned
    /// at in the file (the same values as in `symbol_bounds`).
    pub unbounded: BTreeMap<String, i64>,
    /// Byte alignment of every unit's offset and size.
    pub alignment: u64,
    pub units: Vec<ReplanUnit>,
    /// Logical buffer id (`Buffer::id`) of each workspace buffer → its unit.
    pub buffers: BTreeMap<i64, u32>,
}

/// One planned unit of the workspace.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReplanUnit {
    /// The type whose bytes (rounded up to the alignment) the unit holds.
    #[serde(rename = "type")]
    pub ty: String,
    /// The unit's offset in the file's static plan (a buffer of the unit
    /// lies at `offset + k`; at a new shape at `new offset + k`).
    pub offset: u64,
    /// Units that may be live at the same time as this one.
    pub conflicts: Vec<u32>,
    /// First and last program position accessing it (for the planner's orders).
    pub first: u32,
    pub last: u32,
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
    type_layout(ty, bounds).map(|(n, _)| n)
}

/// The byte size at the bounds of a type string and the byte size of one
/// element (what a buffer of the type must be aligned to: kernels access it
/// through typed pointers).
pub fn type_layout(ty: &str, bounds: &BTreeMap<String, i64>) -> Result<(u64, u64), String> {
    type_layout_at(ty, &symbol_values(bounds))
}

/// `symbol_bounds` keyed as [`type_layout_at`] takes them.
pub(crate) fn symbol_values(
    bounds: &BTreeMap<String, i64>,
) -> std::collections::HashMap<ge_ir::Ident, i64> {
    bounds
        .iter()
        .map(|(k, v)| (ge_ir::Ident::new(k), *v))
        .collect()
}

/// [`type_layout`] with the bounds keyed by symbol ([`symbol_values`]).
pub(crate) fn type_layout_at(
    ty: &str,
    bounds: &std::collections::HashMap<ge_ir::Ident, i64>,
) -> Result<(u64, u64), String> {
    let t = ge_ir::parser::parse_type_str(ge_ir::context::bare(), ty)
        .map_err(|d| format!("bad type '{ty}': {}", d.message))?;
    let elem = t.dtype().map_or(1, |d| d.byte_size().max(1)) as u64;
    let n =
        ge_dialects::memory::byte_size_bound(t, bounds).map_err(|m| format!("type '{ty}': {m}"))?;
    let n = u64::try_from(n).map_err(|_| format!("type '{ty}' has a negative size"))?;
    Ok((n, elem))
}

impl OmModel {
    /// Check every reference and range (see the module docs).
    pub fn validate(&self) -> Result<(), String> {
        crate::validate::validate(
            &self.def,
            self.weights.len() as u64,
            &self.program,
            &self.kernels,
            &self.io,
        )
    }

    /// The parts the writer serialises, with `weights` (this model's, as
    /// [`Weights::from_bytes`] makes them).
    pub fn parts<'m>(&'m self, weights: &'m Weights<'m>) -> Parts<'m> {
        Parts {
            def: &self.def,
            weights,
            program: &self.program,
            kernels: &self.kernels,
            io: &self.io,
        }
    }
}

/// A whole model whose weights partition is streamed by the writer
/// ([`crate::format::write_stream`]) from where each weight already is —
/// what the compiler writes: the partition is never built in memory.
#[derive(Clone, Debug, PartialEq)]
pub struct OmStream<'a> {
    pub def: ModelDef,
    pub weights: Weights<'a>,
    pub program: TaskProgram,
    /// The kernel functions (and what they call) as `.air` text.
    pub kernels: String,
    pub io: IoDesc,
}

impl<'a> OmStream<'a> {
    /// Check every reference and range, as [`OmModel::validate`].
    pub fn validate(&self) -> Result<(), String> {
        crate::validate::validate(
            &self.def,
            self.weights.len(),
            &self.program,
            &self.kernels,
            &self.io,
        )
    }

    /// The model, [`validate`](Self::validate)d: what the writers take.
    pub fn validated(self) -> Result<ValidStream<'a>, String> {
        self.validate()?;
        Ok(ValidStream(self))
    }

    /// The parts the writer serialises.
    pub fn parts(&self) -> Parts<'_> {
        Parts {
            def: &self.def,
            weights: &self.weights,
            program: &self.program,
            kernels: &self.kernels,
            io: &self.io,
        }
    }

    /// The model with its weights partition in one buffer (its size checked
    /// against the memory budget).
    pub fn to_model(&self) -> Result<OmModel, String> {
        Ok(OmModel {
            def: self.def.clone(),
            weights: self.weights.to_vec()?,
            program: self.program.clone(),
            kernels: self.kernels.clone(),
            io: self.io.clone(),
        })
    }
}

/// An [`OmStream`] that passed [`OmStream::validate`]: the only way to make
/// one is [`OmStream::validated`], and it gives no mutable access, so a
/// writer taking it (`crate::format::write_stream`) need not check the model
/// again (ge-atc validated every model twice, a sixth of a small model's
/// compile).
#[derive(Clone, Debug, PartialEq)]
pub struct ValidStream<'a>(OmStream<'a>);

impl<'a> ValidStream<'a> {
    /// The model, no longer known to be valid (to change it).
    pub fn into_inner(self) -> OmStream<'a> {
        self.0
    }
}

impl<'a> std::ops::Deref for ValidStream<'a> {
    type Target = OmStream<'a>;
    fn deref(&self) -> &OmStream<'a> {
        &self.0
    }
}
