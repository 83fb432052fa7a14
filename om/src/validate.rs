//! Validation of an `.om`'s contents: a model that passes [`validate`] can
//! be executed without an index going out of range — every buffer lies
//! inside its arena, every weight inside the weights blob, every kernel,
//! stream, event and label id is in range, and every wait follows a record.
//!
//! Each check is one function per part of the model (the model def, the
//! weights, the task program, the I/O description, the kernels), run in
//! that order; the first failure is the error, one line naming the item.
//!
//! Counts that size something a runtime creates (stream threads, event
//! tables, arenas) are bounded ([`MAX_STREAMS`], [`MAX_EVENTS`],
//! [`MAX_ARENAS`]), and every offset + size is checked arithmetic. What
//! needs the compiled kernels (operand counts against kernel signatures,
//! weights against kernel argument types) or the concrete shapes of a run
//! (zero-copy I/O tensors at their actual size) the runtime's loader and
//! planner check on top of this (`ge_runtime`'s `proof` module).

use crate::model::{
    symbol_values, type_layout_at, ArenaRole, Buffer, IoDesc, ModelDef, Operand, Task, TaskProgram,
    WeightDef,
};
use std::collections::{HashMap, HashSet};

/// At most this many streams (a runtime starts one worker thread per stream).
pub const MAX_STREAMS: u32 = 1024;
/// At most this many events.
pub const MAX_EVENTS: u32 = 1 << 20;
/// At most this many arenas.
pub const MAX_ARENAS: usize = 1 << 16;

/// Check every reference and range of a model's parts.
pub fn validate(
    d: &ModelDef,
    weights_len: u64,
    program: &TaskProgram,
    kernels: &str,
    io: &IoDesc,
) -> Result<(), String> {
    check_def(d, weights_len)?;
    let mut layouts = Layouts {
        bounds: symbol_values(&d.symbol_bounds),
        known: HashMap::new(),
    };
    check_weights(&mut layouts, &program.weights, weights_len)?;
    check_tasks(d, &mut layouts, program)?;
    check_io(d, &mut layouts, io)?;
    check_kernels(program, kernels)
}

/// The byte sizes (at the model's symbol bounds) and element sizes of the
/// buffers' types, each distinct type string parsed once: a model has many
/// buffers of few types.
struct Layouts<'m> {
    bounds: HashMap<ge_ir::Ident, i64>,
    known: HashMap<&'m str, (u64, u64)>,
}

impl<'m> Layouts<'m> {
    /// [`crate::model::type_layout`] of `ty`.
    fn of(&mut self, ty: &'m str) -> Result<(u64, u64), String> {
        if let Some(&l) = self.known.get(ty) {
            return Ok(l);
        }
        let l = type_layout_at(ty, &self.bounds)?;
        self.known.insert(ty, l);
        Ok(l)
    }
}

/// The model def on its own: streams, the weights size, the arenas.
fn check_def(d: &ModelDef, weights_len: u64) -> Result<(), String> {
    if d.num_streams == 0 {
        return Err("model def: num_streams must be at least 1".into());
    }
    if d.num_streams > MAX_STREAMS {
        return Err(format!(
            "model def: num_streams {} is more than {MAX_STREAMS}",
            d.num_streams
        ));
    }
    if d.num_events > MAX_EVENTS {
        return Err(format!(
            "model def: num_events {} is more than {MAX_EVENTS}",
            d.num_events
        ));
    }
    if d.arenas.len() > MAX_ARENAS {
        return Err(format!(
            "model def: {} arenas is more than {MAX_ARENAS}",
            d.arenas.len()
        ));
    }
    if let Some((s, b)) = d.symbol_bounds.iter().find(|(_, &b)| b < 0) {
        return Err(format!("model def: symbol {s} has a negative bound {b}"));
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
    if let Some(r) = &d.replan {
        check_replan(d, r)?;
    }
    Ok(())
}

/// At most this many planned units in a replan section (a runtime plans
/// them per shape, quadratic in the worst case).
pub const MAX_REPLAN_UNITS: usize = 1 << 16;

/// The replan section: its symbols are the sampled ones of
/// `symbol_bounds`, every index is in range, conflicts are symmetric, and
/// there is one workspace arena to plan. (Whether a per-shape plan keeps
/// conflicting units apart and every buffer inside its unit, the runtime
/// checks at each shape.)
fn check_replan(d: &ModelDef, r: &crate::model::Replan) -> Result<(), String> {
    let n = r.units.len();
    if n > MAX_REPLAN_UNITS {
        return Err(format!("replan: {n} units is more than {MAX_REPLAN_UNITS}"));
    }
    if !r.alignment.is_power_of_two() {
        return Err(format!(
            "replan: alignment {} is not a power of two",
            r.alignment
        ));
    }
    for (s, v) in &r.unbounded {
        if d.symbol_bounds.get(s) != Some(v) || *v < 0 {
            return Err(format!(
                "replan: unbounded symbol {s} was planned at {v}, but symbol_bounds says {:?}",
                d.symbol_bounds.get(s)
            ));
        }
    }
    let ws = d
        .arenas
        .iter()
        .filter(|a| a.role == ArenaRole::Workspace)
        .count();
    if ws != 1 {
        return Err(format!(
            "replan: the model has {ws} workspace arenas, not one"
        ));
    }
    let mut edges: HashSet<(u32, u32)> = HashSet::new();
    for (i, u) in r.units.iter().enumerate() {
        // Program positions: the planner's orders index arrays by them.
        if u.first > u.last || u.last as usize > MAX_REPLAN_UNITS * 64 {
            return Err(format!(
                "replan: unit #{i} has the program interval [{}, {}]",
                u.first, u.last
            ));
        }
        for &j in &u.conflicts {
            if j as usize >= n || j as usize == i {
                return Err(format!(
                    "replan: unit #{i} conflicts with unit {j} ({n} units)"
                ));
            }
            edges.insert((i as u32, j));
            if edges.len() > MAX_REPLAN_UNITS * 64 {
                return Err("replan: too many conflicts".into());
            }
        }
    }
    if let Some((i, j)) = edges.iter().find(|(i, j)| !edges.contains(&(*j, *i))) {
        return Err(format!(
            "replan: the conflict of unit #{i} with unit {j} is not symmetric"
        ));
    }
    if let Some((b, u)) = r.buffers.iter().find(|(_, &u)| u as usize >= n) {
        return Err(format!(
            "replan: buffer {b} is in unit {u}, which does not exist ({n} units)"
        ));
    }
    Ok(())
}

/// A buffer (`what` names its user in errors): its arena exists, its size is
/// its type's at the bounds, and its bytes lie inside the arena.
fn check_buffer<'m>(
    d: &ModelDef,
    layouts: &mut Layouts<'m>,
    what: &str,
    b: &'m Buffer,
) -> Result<(), String> {
    let a = d.arenas.get(b.arena as usize).ok_or_else(|| {
        format!(
            "{what}: arena {} does not exist ({} arenas)",
            b.arena,
            d.arenas.len()
        )
    })?;
    let (n, elem) = layouts.of(&b.ty).map_err(|m| format!("{what}: {m}"))?;
    if n != b.bytes {
        return Err(format!("{what}: '{}' is {n} bytes, not {}", b.ty, b.bytes));
    }
    // Kernels and copies access elements through typed pointers from a
    // 64-byte-aligned arena base: an offset that is not a multiple of the
    // element size is a misaligned access (undefined behaviour), refused
    // here for every shape instead of per shape when a run is planned.
    if !b.offset.is_multiple_of(elem) {
        return Err(format!(
            "{what}: '{}' lies at offset {} of arena {}, not a multiple of its {elem}-byte elements",
            b.ty, b.offset, b.arena
        ));
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
}

/// Every weight is its type's size, 64-byte aligned, inside the partition.
fn check_weights<'m>(
    layouts: &mut Layouts<'m>,
    weights: &'m [WeightDef],
    weights_len: u64,
) -> Result<(), String> {
    for (i, w) in weights.iter().enumerate() {
        let (n, _) = layouts.of(&w.ty).map_err(|m| format!("weight #{i}: {m}"))?;
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
    Ok(())
}

/// The task program: every id in range, every buffer inside its arena,
/// every jump to a label of its own stream, every wait after a record of its
/// event, and an end task.
fn check_tasks<'m>(
    d: &ModelDef,
    layouts: &mut Layouts<'m>,
    program: &'m TaskProgram,
) -> Result<(), String> {
    let labels: HashSet<(u32, u32)> = program
        .tasks
        .iter()
        .filter_map(|t| match t {
            Task::Label { label, stream } => Some((*label, *stream)),
            _ => None,
        })
        .collect();
    let jump = |what: &str, label: u32, stream: u32| -> Result<(), String> {
        if labels.contains(&(label, stream)) {
            Ok(())
        } else {
            Err(format!(
                "{what}: jumps to label {label}, which is not on stream {stream}"
            ))
        }
    };
    let mut recorded: HashSet<u32> = HashSet::new();
    let mut ended = false;
    for (i, t) in program.tasks.iter().enumerate() {
        let what = format!("task #{i}");
        if let Some(s) = task_stream(t) {
            if s >= d.num_streams {
                return Err(format!(
                    "{what}: stream {s} out of range (num_streams = {})",
                    d.num_streams
                ));
            }
        }
        match t {
            Task::Launch {
                kernel, ins, outs, ..
            } => check_launch(d, layouts, program, &what, (*kernel, ins, outs))?,
            Task::Memcpy { src, dst, .. } => {
                check_buffer(d, layouts, &what, src)?;
                check_buffer(d, layouts, &what, dst)?;
                if src.bytes != dst.bytes {
                    return Err(format!(
                        "{what}: memcpy of {} bytes into {}",
                        src.bytes, dst.bytes
                    ));
                }
            }
            Task::Record { event, .. } | Task::Wait { event, .. } => {
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
            Task::Label { .. } => {}
            Task::Goto { label, stream } => jump(&what, *label, *stream)?,
            Task::Switch {
                value,
                stream,
                targets,
            } => {
                check_buffer(d, layouts, &what, value)?;
                check_switch_value(&what, value)?;
                for l in targets {
                    jump(&what, *l, *stream)?;
                }
            }
            Task::End => ended = true,
        }
    }
    if !ended {
        return Err("the task program has no end task".into());
    }
    Ok(())
}

/// A switch reads one element of an integer or boolean type: its type has
/// static dims, all 1 (the runtime reads exactly that element).
fn check_switch_value(what: &str, value: &Buffer) -> Result<(), String> {
    use ge_ir::Dim;
    let t = ge_ir::parser::parse_type_str(ge_ir::context::bare(), &value.ty)
        .map_err(|d| format!("{what}: bad type '{}': {}", value.ty, d.message))?;
    let one = t
        .as_tensor()
        .and_then(|tt| tt.dims.as_ref())
        .is_some_and(|dims| dims.iter().all(|d| matches!(d, Dim::Static(1))));
    let int = t.dtype().is_some_and(|d| !d.is_float());
    if !one || !int {
        return Err(format!(
            "{what}: a switch reads one integer or boolean element, not '{}'",
            value.ty
        ));
    }
    Ok(())
}

/// The stream a task runs on (`None` for the end task).
fn task_stream(t: &Task) -> Option<u32> {
    match t {
        Task::Launch { stream, .. }
        | Task::Memcpy { stream, .. }
        | Task::Record { stream, .. }
        | Task::Wait { stream, .. }
        | Task::Label { stream, .. }
        | Task::Goto { stream, .. }
        | Task::Switch { stream, .. } => Some(*stream),
        Task::End => None,
    }
}

/// A launch: its kernel and weights exist, its buffers lie in their arenas,
/// and it writes something.
fn check_launch<'m>(
    d: &ModelDef,
    layouts: &mut Layouts<'m>,
    program: &TaskProgram,
    what: &str,
    (kernel, ins, outs): (u32, &'m [Operand], &'m [Buffer]),
) -> Result<(), String> {
    if kernel as usize >= program.kernels.len() {
        return Err(format!("{what}: kernel {kernel} does not exist"));
    }
    for o in ins {
        match o {
            Operand::Buffer(b) => check_buffer(d, layouts, what, b)?,
            Operand::Weight(w) if (*w as usize) < program.weights.len() => {}
            Operand::Weight(w) => return Err(format!("{what}: weight {w} does not exist")),
        }
    }
    if outs.is_empty() {
        return Err(format!("{what}: a launch writes at least one buffer"));
    }
    for b in outs {
        check_buffer(d, layouts, what, b)?;
    }
    Ok(())
}

/// Inputs and outputs lie in arenas of their role, and their names (which
/// callers address them by) are well-formed and distinct.
fn check_io<'m>(d: &ModelDef, layouts: &mut Layouts<'m>, io: &'m IoDesc) -> Result<(), String> {
    for (k, list, role) in [
        ("input", &io.inputs, ArenaRole::Input),
        ("output", &io.outputs, ArenaRole::Output),
    ] {
        ge_dialects::graph::func::check_io_names(k, list.iter().map(|t| t.name.as_str()))?;
        for (i, t) in list.iter().enumerate() {
            check_buffer(d, layouts, &format!("{k} #{i} '{}'", t.name), &t.buffer)?;
            // check_buffer proved the arena exists.
            let a = &d.arenas[t.buffer.arena as usize];
            if a.role != role {
                return Err(format!("{k} #{i} '{}' is not in an {k} arena", t.name));
            }
        }
    }
    Ok(())
}

/// Every kernel of the program is a function of the kernels partition.
fn check_kernels(program: &TaskProgram, kernels: &str) -> Result<(), String> {
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
