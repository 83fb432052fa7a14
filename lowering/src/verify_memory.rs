//! `verify-memory`: an independent check of a memory plan.
//!
//! It does not trust the planner's lifetimes: it reads the planned IR — which
//! task writes which byte range of which arena (`memory.store`, `outs` views)
//! and which task reads which range (`memory.view`s, `ins`), with the logical
//! buffer each access means (`ge.buffer`) — and the synchronisation of the
//! tasks (stream order and events, as vector clocks). Then for every read of
//! buffer X by task t and every write W of another buffer overlapping the
//! bytes read, W must happen before the write of X it would clobber, or after
//! t. Every read must also see X written (before it). Together: no two buffers
//! that are live at the same time share a byte, on any interleaving of the
//! streams.
//!
//! Works on the output of `plan-memory` (graph-level tasks with `ge.stream`
//! attributes) and of `emit-tasks` (a `stream.program`).

use crate::funcs::{error_at, for_each_function, func_block, Bounds};
use crate::memory_plan::BUFFER_ATTR;
use crate::sync::{Schedule, Step};
use ge_dialects::memory::{arena_info_of_op, arena_root, byte_size_bound};
use ge_ir::body::{BlockId, Body, OpData, OpId, ValueDef, ValueId};
use ge_ir::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::Location;
use std::collections::HashMap;

pub static INFO: PassInfo = PassInfo {
    name: "verify-memory",
    summary: "Check a memory plan: no two simultaneously live buffers overlap",
    description: "Reads the planned accesses (stores, views, launches with their `ge.buffer` ids) \
                  and the stream synchronisation, and proves that every read sees the buffer it \
                  means: no write of another buffer to the same bytes can happen between that \
                  buffer's write and the read, on any interleaving of the streams. Fails with the \
                  two buffers and ops involved. Runs after `plan-memory` or `emit-tasks`.",
    anchor: None,
    options: &[],
};

pub fn make(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(VerifyMemory))
}

struct VerifyMemory;

impl Pass for VerifyMemory {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, _: &PassContext) -> PassResult {
        for_each_function(op, INFO.name, |f, bounds| {
            let Some(block) = func_block(f) else {
                return Ok(());
            };
            let Some(body) = f.inner.as_deref() else {
                return Ok(());
            };
            check_function(body, block, bounds).map_err(|(loc, m)| error_at(loc, m))
        })
    }
}

/// Who performs an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// Before the program (the caller filling an input).
    Pre,
    Task(usize),
    /// After the program (the caller reading an output).
    Post,
}

/// One access of a byte range of an arena.
#[derive(Clone, Debug)]
pub struct Access {
    pub arena: usize,
    pub lo: i64,
    pub hi: i64,
    pub buffer: i64,
    pub who: Who,
    /// The accessing op, for messages: where and what.
    pub loc: Location,
    pub desc: String,
}

/// All accesses of a planned function and its synchronisation.
pub struct Trace {
    pub reads: Vec<Access>,
    pub writes: Vec<Access>,
    pub sched: Schedule,
    pub arena_names: Vec<String>,
    /// Task index → op.
    pub tasks: Vec<OpId>,
}

type CheckError = (Location, String);

fn hb(s: &Schedule, a: Who, b: Who) -> bool {
    match (a, b) {
        (Who::Pre, Who::Pre) | (Who::Post, _) | (Who::Task(_), Who::Pre) => false,
        (Who::Pre, _) | (_, Who::Post) => true,
        (Who::Task(x), Who::Task(y)) => s.hb(x, y),
    }
}

/// `'graph.add' (line 12)` for messages.
pub fn describe(body: &Body, op: OpId) -> String {
    let d = body.op(op);
    match d.loc.file_line_col() {
        Some((_, l, _)) => format!("'{}' (line {l})", d.name),
        None => format!("'{}'", d.name),
    }
}

/// Check the plan of one function.
pub fn check_function(body: &Body, block: BlockId, bounds: &Bounds) -> Result<(), CheckError> {
    let trace = match trace_of(body, block, bounds)? {
        Some(t) => t,
        None => return Ok(()),
    };
    check_trace(&trace)
}

/// Check every read of a trace.
pub fn check_trace(t: &Trace) -> Result<(), CheckError> {
    let mut by_arena: HashMap<usize, Vec<&Access>> = HashMap::new();
    for w in &t.writes {
        by_arena.entry(w.arena).or_default().push(w);
    }
    for r in &t.reads {
        if r.lo >= r.hi {
            continue;
        }
        let ws = by_arena.get(&r.arena).map(Vec::as_slice).unwrap_or(&[]);
        let overlapping: Vec<&&Access> = ws.iter().filter(|w| w.lo < r.hi && r.lo < w.hi).collect();
        let what = |a: &Access| {
            format!(
                "buffer #{} (bytes [{}, {}) of the {} arena)",
                a.buffer, a.lo, a.hi, t.arena_names[a.arena]
            )
        };
        // The buffer's own writes must cover the read and happen before it.
        let own: Vec<&&&Access> = overlapping
            .iter()
            .filter(|w| w.buffer == r.buffer)
            .collect();
        let mut covered: Vec<(i64, i64)> = own
            .iter()
            .map(|w| (w.lo.max(r.lo), w.hi.min(r.hi)))
            .collect();
        covered.sort_unstable();
        let mut upto = r.lo;
        for (a, b) in covered {
            if a <= upto {
                upto = upto.max(b);
            }
        }
        if upto < r.hi {
            return Err((
                r.loc,
                format!(
                    "verify-memory: {} reads {} but bytes [{upto}, {}) of it are never written",
                    r.desc,
                    what(r),
                    r.hi
                ),
            ));
        }
        for w in &own {
            if !hb(&t.sched, w.who, r.who) {
                return Err((
                    r.loc,
                    format!(
                        "verify-memory: {} reads {} without waiting for its write by {}",
                        r.desc,
                        what(r),
                        w.desc
                    ),
                ));
            }
        }
        for w in overlapping.iter().filter(|w| w.buffer != r.buffer) {
            if w.who == r.who || hb(&t.sched, r.who, w.who) {
                continue;
            }
            let clobbers = own
                .iter()
                .any(|x| x.lo < w.hi && w.lo < x.hi && !hb(&t.sched, w.who, x.who));
            if clobbers {
                return Err((
                    r.loc,
                    format!(
                        "verify-memory: {} reads {}, but {} written by {} overlaps it while it is live",
                        r.desc,
                        what(r),
                        what(w),
                        w.desc
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn buffer_id(body: &Body, op: OpId) -> Result<i64, CheckError> {
    body.op(op)
        .attr(BUFFER_ATTR)
        .and_then(|a| a.as_int())
        .ok_or_else(|| {
            (
                body.op(op).loc,
                format!(
                    "verify-memory: '{}' has no '{BUFFER_ATTR}' id (verify-memory checks plans made by plan-memory)",
                    body.op(op).name
                ),
            )
        })
}

fn bytes_of(body: &Body, v: ValueId, arena_bounds: &Bounds, op: OpId) -> Result<i64, CheckError> {
    byte_size_bound(body.value_type(v), arena_bounds)
        .map_err(|m| (body.op(op).loc, format!("verify-memory: {m}")))
}

fn is_task(body: &Body, op: OpId) -> bool {
    let d = body.op(op);
    let n = d.name.as_str();
    !(n.starts_with("memory.")
        || n == "data.constant"
        || d.has_trait(ge_ir::opdef::Trait::ReturnLike)
        || n == "stream.program")
}

/// Extract the accesses of a planned function: `None` if it has no plan.
pub fn trace_of(body: &Body, block: BlockId, bounds: &Bounds) -> Result<Option<Trace>, CheckError> {
    let ops: Vec<OpId> = body.block_ops(block).collect();
    let at = ArenaTable::of(body, &ops, bounds);
    if at.index.is_empty() {
        return Ok(None);
    }
    if let Some(&p) = ops
        .iter()
        .find(|&&o| body.op(o).name.as_str() == "stream.program")
    {
        return program_trace(body, &ops, p, &at).map(Some);
    }
    graph_trace(body, block, &ops, &at).map(Some)
}

/// The arenas of a planned function: their order, names (`input #0`, `workspace`)
/// and symbol bounds.
struct ArenaTable {
    index: HashMap<OpId, usize>,
    names: Vec<String>,
    bounds: Vec<Bounds>,
}

impl ArenaTable {
    fn of(body: &Body, ops: &[OpId], bounds: &Bounds) -> ArenaTable {
        let mut at = ArenaTable {
            index: HashMap::new(),
            names: vec![],
            bounds: vec![],
        };
        for &o in ops {
            if body.op(o).name.as_str() != "memory.arena" {
                continue;
            }
            at.index.insert(o, at.index.len());
            let d = body.op(o);
            let role = d
                .attr(crate::memory_plan::ROLE_ATTR)
                .and_then(|a| a.as_str())
                .unwrap_or("arena");
            let name = match d
                .attr(crate::memory_plan::INDEX_ATTR)
                .and_then(|a| a.as_int())
            {
                Some(i) => format!("{role} #{i}"),
                None => role.to_string(),
            };
            at.names.push(name);
            let mut b = bounds.clone();
            if let Some(info) = arena_info_of_op(body, o) {
                b.extend(info.bounds);
            }
            at.bounds.push(b);
        }
        at
    }

    /// The arena arena value `v` (used by op `at`) is in.
    fn arena_of(&self, body: &Body, v: ValueId, at: OpId) -> Result<usize, CheckError> {
        arena_root(body, v)
            .and_then(|a| self.index.get(&a).copied())
            .ok_or_else(|| {
                (
                    body.op(at).loc,
                    "verify-memory: cannot tell which arena an access is in".to_string(),
                )
            })
    }
}

/// The accesses of a planned function whose tasks are still graph ops
/// (after `plan-memory`, before `emit-tasks`).
fn graph_trace(
    body: &Body,
    block: BlockId,
    ops: &[OpId],
    at: &ArenaTable,
) -> Result<Trace, CheckError> {
    let tasks: Vec<OpId> = ops.iter().copied().filter(|&o| is_task(body, o)).collect();
    let index: HashMap<OpId, usize> = tasks.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    let sched = crate::memory_plan::schedule_of(body, &tasks)
        .map_err(|m| (body.op(ops[0]).loc, format!("verify-memory: {m}")))?;
    let mut reads = vec![];
    let mut writes = vec![];
    for &o in ops {
        let d = body.op(o);
        match d.name.as_str() {
            "memory.store" => {
                let v = d.operands()[0];
                let arena = at.arena_of(body, d.operands()[1], o)?;
                let lo = d.attr("offset").and_then(|a| a.as_int()).unwrap_or(0);
                let hi = lo + bytes_of(body, v, &at.bounds[arena], o)?;
                let who = match body.value(v).def {
                    ValueDef::BlockArg { .. } => Who::Pre,
                    ValueDef::Result { op, .. } => match index.get(&op) {
                        Some(&t) => Who::Task(t),
                        None => Who::Pre,
                    },
                };
                let blame = match who {
                    Who::Task(t) => tasks[t],
                    _ => o,
                };
                writes.push(Access {
                    arena,
                    lo,
                    hi,
                    buffer: buffer_id(body, o)?,
                    who,
                    loc: body.op(blame).loc,
                    desc: describe(body, blame),
                });
            }
            "memory.view" => {
                let arena = at.arena_of(body, d.operands()[0], o)?;
                let r = d.results()[0];
                let lo = d.attr("offset").and_then(|a| a.as_int()).unwrap_or(0);
                let hi = lo + bytes_of(body, r, &at.bounds[arena], o)?;
                let id = buffer_id(body, o)?;
                for user in body.users(r) {
                    let mut u = user;
                    while body.op(u).parent_block() != Some(block) {
                        match body.parent_op(u) {
                            Some(p) => u = p,
                            None => break,
                        }
                    }
                    let who = if body.op(u).has_trait(ge_ir::opdef::Trait::ReturnLike) {
                        Who::Post
                    } else if let Some(&t) = index.get(&u) {
                        Who::Task(t)
                    } else {
                        continue;
                    };
                    let blame = match who {
                        Who::Task(t) => tasks[t],
                        _ => u,
                    };
                    reads.push(Access {
                        arena,
                        lo,
                        hi,
                        buffer: id,
                        who,
                        loc: body.op(blame).loc,
                        desc: describe(body, blame),
                    });
                }
            }
            _ => {}
        }
    }
    Ok(Trace {
        reads,
        writes,
        sched,
        arena_names: at.names.clone(),
        tasks,
    })
}

/// The accesses of a function whose tasks are a `stream.program`.
fn program_trace(
    body: &Body,
    ops: &[OpId],
    prog: OpId,
    at: &ArenaTable,
) -> Result<Trace, CheckError> {
    let pd = body.op(prog);
    let err = |o: OpId, m: &str| (body.op(o).loc, format!("verify-memory: {m}"));
    let operand_arena: Vec<usize> = pd
        .operands()
        .iter()
        .map(|&v| at.arena_of(body, v, prog))
        .collect::<Result<_, _>>()?;
    let inner = pd.region_body(body);
    let r = *pd
        .regions()
        .first()
        .ok_or_else(|| err(prog, "stream.program has no region"))?;
    let entry = inner
        .entry_block(r)
        .ok_or_else(|| err(prog, "stream.program has no block"))?;
    let args = inner.block(entry).args.clone();
    let (mut reads, mut writes) = caller_accesses(body, ops, at)?;
    // Inside: views are places; launches and copies access them.
    let mut place: HashMap<ValueId, (usize, i64, i64, i64)> = HashMap::new();
    let mut steps = vec![];
    let mut tasks = vec![];
    for o in inner.block_ops(entry) {
        let d = inner.op(o);
        let stream = d
            .attr("stream")
            .and_then(|a| a.as_int())
            .unwrap_or(0)
            .max(0) as usize;
        match d.name.as_str() {
            "memory.view" => {
                let a = d.operands()[0];
                let k = args.iter().position(|&x| x == a).ok_or_else(|| {
                    err(
                        prog,
                        "a view in the program does not view an arena argument",
                    )
                })?;
                let arena = operand_arena[k];
                let lo = d.attr("offset").and_then(|a| a.as_int()).unwrap_or(0);
                let hi = lo
                    + byte_size_bound(inner.value_type(d.results()[0]), &at.bounds[arena])
                        .map_err(|m| (inner.op(o).loc, format!("verify-memory: {m}")))?;
                let id = inner
                    .op(o)
                    .attr(BUFFER_ATTR)
                    .and_then(|a| a.as_int())
                    .ok_or_else(|| {
                        (
                            inner.op(o).loc,
                            format!("verify-memory: 'memory.view' has no '{BUFFER_ATTR}' id"),
                        )
                    })?;
                place.insert(d.results()[0], (arena, lo, hi, id));
            }
            "stream.launch" | "stream.memcpy" => {
                let t = tasks.len();
                tasks.push(o);
                steps.push((stream, Step::Task));
                let n_in = if d.name.as_str() == "stream.memcpy" {
                    1
                } else {
                    crate::funcs::i64s(d.attr("operand_segment_sizes"))
                        .first()
                        .copied()
                        .unwrap_or(0)
                        .max(0) as usize
                };
                for (i, &v) in d.operands().iter().enumerate() {
                    let Some(&(arena, lo, hi, buffer)) = place.get(&v) else {
                        continue; // a weight
                    };
                    let acc = Access {
                        arena,
                        lo,
                        hi,
                        buffer,
                        who: Who::Task(t),
                        loc: d.loc,
                        desc: describe(inner, o),
                    };
                    if i < n_in {
                        reads.push(acc);
                    } else {
                        writes.push(acc);
                    }
                }
            }
            "stream.record" | "stream.wait" => {
                let e = d.attr("event").and_then(|a| a.as_int()).unwrap_or(0);
                steps.push((
                    stream,
                    if d.name.as_str() == "stream.record" {
                        Step::Record(e)
                    } else {
                        Step::Wait(e)
                    },
                ));
            }
            _ => {}
        }
    }
    let sched = Schedule::from_steps(&steps).map_err(|m| err(prog, &m))?;
    Ok(Trace {
        reads,
        writes,
        sched,
        arena_names: at.names.clone(),
        tasks,
    })
}

/// Outside a program: the caller's writes (stores) before it, its reads
/// (views) after.
fn caller_accesses(
    body: &Body,
    ops: &[OpId],
    at: &ArenaTable,
) -> Result<(Vec<Access>, Vec<Access>), CheckError> {
    let (mut reads, mut writes) = (vec![], vec![]);
    for &o in ops {
        let d = body.op(o);
        match d.name.as_str() {
            "memory.store" => {
                let v = d.operands()[0];
                let arena = at.arena_of(body, d.operands()[1], o)?;
                let lo = d.attr("offset").and_then(|a| a.as_int()).unwrap_or(0);
                let hi = lo + bytes_of(body, v, &at.bounds[arena], o)?;
                writes.push(Access {
                    arena,
                    lo,
                    hi,
                    buffer: buffer_id(body, o)?,
                    who: Who::Pre,
                    loc: d.loc,
                    desc: describe(body, o),
                });
            }
            "memory.view" => {
                let arena = at.arena_of(body, d.operands()[0], o)?;
                let lo = d.attr("offset").and_then(|a| a.as_int()).unwrap_or(0);
                let hi = lo + bytes_of(body, d.results()[0], &at.bounds[arena], o)?;
                reads.push(Access {
                    arena,
                    lo,
                    hi,
                    buffer: buffer_id(body, o)?,
                    who: Who::Post,
                    loc: d.loc,
                    desc: describe(body, o),
                });
            }
            _ => {}
        }
    }
    Ok((reads, writes))
}
