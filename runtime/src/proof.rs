//! The loader's proof: what a model must satisfy, on top of ge-om's
//! validation ([`ge_om::validate`]: every id in range, every buffer inside
//! its declared arena, every weight inside the weights partition, counts
//! bounded), before the executor's `unsafe` code may touch it.
//!
//! At load ([`check_model`], one line naming the task or kernel):
//!
//! - the kernels partition verifies (op verifiers: types and operand counts
//!   of every op inside a kernel agree, so the shapes the native steps
//!   compute from are consistent);
//! - every launch passes exactly as many operands as its kernel function
//!   takes arguments and names exactly as many out buffers as it returns
//!   results (before: missing operands were null pointers in the plan);
//! - every weight operand holds at least the bytes of the kernel argument it
//!   is bound to, and every buffer operand or out buffer at least those of
//!   its kernel value, with symbols at their bounds (before: a 4-byte weight
//!   bound to a `tensor<4096xf32>` argument was read past the mapped file);
//! - every constant inside a kernel has its type's size;
//! - everything the model sizes fits the memory budget: each kernel value at
//!   the bounds and the arenas an execution context allocates
//!   ([`LoadOptions::max_memory`](crate::LoadOptions::max_memory)).
//!
//! At each concrete shape (the executor's plan, `exec.rs`), because a
//! symbolic size at a run's shape need not be below its size at the bounds
//! and a zero-copy arena *is* the caller's tensor: every byte range a task
//! touches is checked, in checked arithmetic, against the real buffer it
//! indexes — a zero-copy input or output arena is as long as the caller's
//! tensor at its actual shape, not the arena size the file declares
//! ([`arena_lengths`]); weights against their bytes; a switch reads exactly
//! one element. The `// SAFETY:` comments of the executor and the kernels
//! cite this module.
//!
//! A model with unbounded symbols (a `replan` section) carries no usable
//! workspace offsets: at each concrete shape the workspace is planned
//! again ([`replan_workspace`], `ge_om::plan::replan`), and that plan is
//! checked before use — conflicting units disjoint and aligned, every
//! workspace buffer inside its unit at this shape
//! ([`ShapeWorkspace::place`]), and then every byte range against the
//! arena lengths of the shape, as above.

use crate::kernels::KernelProgram;
use crate::model::{Binding, LoadOptions};
use crate::Error;
use ge_ir::{Ident, Type};
use ge_om::model::{ArenaRole, Buffer, IoDesc, ModelDef, Operand, Task, TaskProgram};
use std::collections::HashMap;
use std::sync::Arc;

/// The memory budget of a load: the option, else the process's
/// (`ge_ir::budget`, `--max-memory`).
pub(crate) fn budget(opts: &LoadOptions) -> u64 {
    opts.max_memory.unwrap_or_else(ge_ir::budget::max_memory)
}

/// The kernels module verifies, and no kernel value is larger than the
/// budget at the symbols' bounds (checked before the kernels are compiled:
/// a kernel constant is materialised then).
pub(crate) fn check_kernels_module(
    kmodule: &ge_ir::module::Module,
    bounds: &HashMap<Ident, i64>,
    max: u64,
) -> Result<(), Error> {
    let diags = ge_ir::verifier::verify_module(kmodule);
    if let Some(d) = diags.iter().find(|d| d.is_error()) {
        return Err(Error(format!("kernels partition: {}", d.message)));
    }
    let too_big = ge_ir::budget::check_result_sizes_within(max, kmodule.body(), bounds);
    if let Some(d) = too_big.first() {
        return Err(Error(format!("kernels partition: {}", d.message)));
    }
    Ok(())
}

/// The byte size of kernel value type `t` with symbols at `bounds`
/// (checked arithmetic; `None` when it cannot be sized).
fn bytes_at(t: Type, bounds: &HashMap<Ident, i64>) -> Result<u64, String> {
    let n = ge_dialects::memory::byte_size_bound(t, bounds)?;
    u64::try_from(n).map_err(|_| format!("'{t}' has a negative size"))
}

/// Every launch against its compiled kernel; every kernel constant against
/// its type; the arenas of an execution context against the budget.
pub(crate) fn check_model(
    def: &ModelDef,
    program: &TaskProgram,
    kernels: &[Arc<KernelProgram>],
    bounds: &HashMap<Ident, i64>,
    bindings: &[Binding],
    max: u64,
) -> Result<(), Error> {
    for k in kernels {
        check_consts(k)?;
    }
    for (i, t) in program.tasks.iter().enumerate() {
        if let Task::Launch {
            kernel, ins, outs, ..
        } = t
        {
            // ge-om's validation proved the kernel id in range.
            let k = &kernels[*kernel as usize];
            check_launch(program, k, bounds, ins, outs)
                .map_err(|m| Error(format!("task #{i} (kernel @{}): {m}", k.name)))?;
        }
    }
    check_arenas(def, bindings, max)
}

/// A launch's operands match its kernel's signature, each large enough.
fn check_launch(
    program: &TaskProgram,
    k: &KernelProgram,
    bounds: &HashMap<Ident, i64>,
    ins: &[Operand],
    outs: &[ge_om::model::Buffer],
) -> Result<(), String> {
    if ins.len() != k.args.len() {
        return Err(format!(
            "the launch passes {} operands but the kernel takes {} arguments",
            ins.len(),
            k.args.len()
        ));
    }
    if outs.len() != k.results.len() {
        return Err(format!(
            "the launch names {} out buffers but the kernel returns {} results",
            outs.len(),
            k.results.len()
        ));
    }
    for (j, (&a, o)) in k.args.iter().zip(ins).enumerate() {
        let t = k.types[a];
        let need = bytes_at(t, bounds).map_err(|m| format!("argument #{j}: {m}"))?;
        let (have, what) = match o {
            // ge-om's validation proved the weight id in range.
            Operand::Weight(w) => (program.weights[*w as usize].bytes, format!("weight {w}")),
            Operand::Buffer(b) => (b.bytes, format!("buffer '{}'", b.ty)),
        };
        if have < need {
            return Err(format!(
                "argument #{j} of type '{t}' needs {need} bytes but {what} has {have}"
            ));
        }
    }
    for (j, (&r, b)) in k.results.iter().zip(outs).enumerate() {
        let t = k.types[r];
        let need = bytes_at(t, bounds).map_err(|m| format!("result #{j}: {m}"))?;
        if b.bytes < need {
            return Err(format!(
                "result #{j} of type '{t}' needs {need} bytes but its out buffer '{}' has {}",
                b.ty, b.bytes
            ));
        }
    }
    Ok(())
}

/// Every constant of a kernel has exactly its (static) type's bytes.
fn check_consts(k: &KernelProgram) -> Result<(), Error> {
    let empty = HashMap::new();
    for (v, b) in &k.consts {
        let t = k.types[*v];
        let n = bytes_at(t, &empty)
            .map_err(|m| Error(format!("kernel @{}: a constant: {m}", k.name)))?;
        if n != b.len() as u64 {
            return Err(Error(format!(
                "kernel @{}: a constant of type '{t}' holds {} bytes, not {n}",
                k.name,
                b.len()
            )));
        }
    }
    Ok(())
}

/// The arenas an execution context allocates (workspace, and inputs and
/// outputs that are copied) fit the budget, each and together.
fn check_arenas(def: &ModelDef, bindings: &[Binding], max: u64) -> Result<(), Error> {
    let mut total: Option<u64> = Some(0);
    for (i, (a, b)) in def.arenas.iter().zip(bindings).enumerate() {
        if a.role != ArenaRole::Workspace && *b == Binding::ZeroCopy {
            continue;
        }
        let what = format!("arena #{i} ({:?})", a.role).to_lowercase();
        ge_ir::budget::check_within(max, Some(a.size), &what).map_err(Error)?;
        total = total.and_then(|t| t.checked_add(a.size));
    }
    ge_ir::budget::check_within(max, total, &"the arenas of one execution context").map_err(Error)
}

/// The length of every arena in a run at one concrete shape: a zero-copy
/// input or output arena is the caller's tensor, as long as its I/O
/// buffer's type at `syms` (what `bind` proved the caller's input to be, and
/// what the run allocates for an output); any other arena is its declared
/// size (the context allocated exactly that).
pub(crate) fn arena_lengths(
    def: &ModelDef,
    io: &IoDesc,
    bindings: &[Binding],
    syms: &HashMap<Ident, i64>,
) -> Result<Vec<usize>, Error> {
    let mut lens = vec![];
    for (a, (arena, b)) in def.arenas.iter().zip(bindings).enumerate() {
        let n = match (arena.role, b) {
            (ArenaRole::Input | ArenaRole::Output, Binding::ZeroCopy) => {
                let list = if arena.role == ArenaRole::Input {
                    &io.inputs
                } else {
                    &io.outputs
                };
                let t = list
                    .iter()
                    .find(|t| t.buffer.arena as usize == a)
                    .ok_or_else(|| Error(format!("arena {a} has no I/O tensor")))?;
                crate::exec::bytes_of(&t.buffer.ty, syms)
                    .map_err(|m| Error(format!("{} '{}': {m}", "I/O tensor", t.name)))?
            }
            _ => usize::try_from(arena.size)
                .map_err(|_| Error(format!("arena {a} is too large to address")))?,
        };
        lens.push(n);
    }
    Ok(lens)
}

/// The workspace plan of a model with unbounded symbols at one concrete
/// shape ([`replan_workspace`]): where each unit lies, and how large it is.
pub(crate) struct ShapeWorkspace {
    arena: u32,
    /// Per unit: (offset in the file's static plan, offset here, bytes here).
    units: Vec<(u64, u64, u64)>,
    buffers: std::collections::BTreeMap<i64, u32>,
}

/// Plan the workspace of a model with unbounded symbols for one concrete
/// shape (`ge_om::plan::replan`, which checks that conflicting units are
/// disjoint, aligned and inside the arena) and set the arena lengths of
/// this shape in `lens`: the workspace is the plan's size, an input or
/// output arena the context allocates is as long as its tensors here.
pub(crate) fn replan_workspace(
    def: &ModelDef,
    io: &IoDesc,
    bindings: &[Binding],
    r: &ge_om::model::Replan,
    syms: &HashMap<Ident, i64>,
    lens: &mut [usize],
) -> Result<ShapeWorkspace, Error> {
    let bytes = |ty: &str| -> Result<u64, Error> {
        crate::exec::bytes_of(ty, syms)
            .map(|n| n as u64)
            .map_err(|m| Error(format!("workspace plan at this shape: {m}")))
    };
    let sizes: Vec<u64> = r
        .units
        .iter()
        .map(|u| bytes(&u.ty))
        .collect::<Result<_, _>>()?;
    let sol = ge_om::plan::replan(r, &sizes)
        .map_err(|m| Error(format!("workspace plan at this shape: {m}")))?;
    // ge-om's validation proved exactly one workspace arena.
    let arena = def
        .arenas
        .iter()
        .position(|a| a.role == ArenaRole::Workspace)
        .ok_or_else(|| Error("a model to plan per shape has no workspace arena".into()))?;
    lens[arena] = usize::try_from(sol.size)
        .map_err(|_| Error("the workspace is too large to address at this shape".into()))?;
    for (a, (arena_def, b)) in def.arenas.iter().zip(bindings).enumerate() {
        if arena_def.role == ArenaRole::Workspace || *b != Binding::Copy {
            continue;
        }
        for t in io.inputs.iter().chain(&io.outputs) {
            if t.buffer.arena as usize == a {
                let end = bytes(&t.buffer.ty)?
                    .checked_add(t.buffer.offset)
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| Error(format!("'{}' is too large to address", t.name)))?;
                lens[a] = lens[a].max(end);
            }
        }
    }
    let a = r.alignment.max(1);
    let units = r
        .units
        .iter()
        .zip(&sol.offsets)
        .zip(&sizes)
        // `replan` proved the aligned size addressable.
        .map(|((u, &off), &n)| (u.offset, off, n.next_multiple_of(a)))
        .collect();
    Ok(ShapeWorkspace {
        arena: arena as u32,
        units,
        buffers: r.buffers.clone(),
    })
}

impl ShapeWorkspace {
    /// Buffer `b` at this shape: a workspace buffer moves with its unit (it
    /// lies `k` bytes into its unit in the file's plan, so `k` bytes into
    /// it here), and must lie inside its unit at this shape — so the
    /// disjointness `replan` proved for units holds for buffers. Other
    /// arenas' buffers stay where they are.
    pub(crate) fn place(&self, b: &Buffer, syms: &HashMap<Ident, i64>) -> Result<Buffer, Error> {
        if b.arena != self.arena {
            return Ok(b.clone());
        }
        let unit = *self.buffers.get(&b.id).ok_or_else(|| {
            Error(format!(
                "workspace buffer {} ('{}') belongs to no planned unit",
                b.id, b.ty
            ))
        })?;
        // ge-om's validation proved every unit index in range.
        let (old, new, size) = self.units[unit as usize];
        let n = crate::exec::bytes_of(&b.ty, syms).map_err(Error)? as u64;
        let k = b
            .offset
            .checked_sub(old)
            .filter(|k| k.checked_add(n).is_some_and(|end| end <= size));
        let Some(k) = k else {
            return Err(Error(format!(
                "workspace buffer {} ('{}', {n} bytes at offset {}) does not lie inside its unit {unit} ({size} bytes at offset {old}) at this shape",
                b.id, b.ty, b.offset
            )));
        };
        Ok(Buffer {
            offset: new + k,
            ..b.clone()
        })
    }
}

/// `[offset, offset + n)` lies inside an arena of `len` bytes (checked).
pub(crate) fn in_range(offset: u64, n: usize, len: usize) -> bool {
    usize::try_from(offset)
        .ok()
        .and_then(|o| o.checked_add(n))
        .is_some_and(|end| end <= len)
}
