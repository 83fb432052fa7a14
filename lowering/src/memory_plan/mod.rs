//! `plan-memory`: place every intermediate buffer in one workspace arena and
//! rewrite the function into the `memory` dialect.
//!
//! **Buffers.** The task graph (`taskgraph.rs`) says which values are written
//! by tasks and which are views: reshapes share their source's bytes, a
//! concat's parts are written straight into slices of the concat's buffer,
//! split outputs are slices of the input. Each *root* buffer is planned; views
//! follow it.
//!
//! **Lifetimes over the schedule.** Tasks run in program order on the streams
//! `assign-streams` chose (`ge.stream`, `ge.wait`, `ge.record`; one stream if
//! absent). Two buffers may share bytes only if every access of one happens
//! before the first write of the other — happens-before through stream order
//! and events (vector clocks), so a buffer read on another stream lives until
//! the event that orders that read before the reuse.
//!
//! **In place.** A pointwise task (elementwise/broadcast kernel or op) writes
//! its result over an input of the same type when every other access of that
//! input happens before it.
//!
//! **Zero copy.** Model inputs are read where the caller put them (one input
//! arena each); each model output is written by its producer straight into
//! its output arena (`assign-streams`/this pass add a copy where that is
//! impossible). Constants become `memory.weight`s laid out 64-byte aligned.
//!
//! **Strategies.** greedy-by-size (best fit), greedy-by-breadth,
//! greedy-by-lifetime, first-fit and a bounded local search over placement
//! orders run; the smallest arena wins (`ge_om::plan`). Symbolic dims are planned at their bounds
//! (`ge.symbol_bounds`); a symbol with no bound at a sample (`funcs::SAMPLE_BOUND`), and
//! then the planning problem is left on the function (`ge.replan`) for the runtime to
//! plan each concrete shape (checked here at [`CHECK_SAMPLES`]).
//!
//! **Output.** Each task reads `memory.view`s of the current arena values and
//! its results are `memory.store`d at their offsets, so the planned function
//! still runs in the interpreter — and a wrong plan computes wrong answers.
//! Views and stores carry `ge.buffer = N` (the logical buffer) for
//! `verify-memory`.

/// The offset-assignment strategies live in ge-om, where the runtime plans
/// models with unbounded dims per shape with the same code.
pub use ge_om::plan as strategies;

use crate::error::{AtOp, LowerError, LowerResult};
use crate::funcs::{bounds_attr, error_at, for_each_function, func_block, inputs_of, Bounds};
use crate::op_pattern::op_pattern;
use crate::sync::{Schedule, RECORD_ATTR, STREAM_ATTR, WAIT_ATTR};
use crate::taskgraph::{prepare_outputs, Node, RootKind, TaskGraph};
use ge_dialects::memory::ops as mem_ops;
use ge_dialects::stream::ops as stream_ops;
use ge_ir::attributes::AttrDict;
use ge_ir::body::{BlockId, Body, OpData, OpId, ValueId};
use ge_ir::builder::Builder;
use ge_ir::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::{Attribute, Context, Ident};
use std::collections::{HashMap, HashSet};
use strategies::{load_bound, Problem};

/// Alignment of weights in the weights blob (and the .om file).
pub const WEIGHT_ALIGN: u64 = 64;
/// The logical-buffer attribute on stores and views.
pub const BUFFER_ATTR: &str = "ge.buffer";
/// Role of an arena: `"input"`, `"output"` or `"workspace"`.
pub const ROLE_ATTR: &str = "ge.role";
/// Index of an input/output arena.
pub const INDEX_ATTR: &str = "ge.index";
/// The plan summary on the function.
pub const PLAN_ATTR: &str = "ge.memory_plan";
/// The workspace's planning problem (a [`ge_om::model::Replan`] as JSON) on
/// a function with unbounded symbols: the runtime plans it per shape.
pub const REPLAN_ATTR: &str = "ge.replan";

pub static INFO: PassInfo = PassInfo {
    name: "plan-memory",
    summary: "Plan buffer offsets in one workspace arena and lower to the memory dialect",
    description: "Lifetimes over the stream schedule (happens-before through stream order and \
                  events), in-place reuse for pointwise tasks, no-copy concat/split/reshape views, \
                  zero-copy model inputs and outputs (one arena each), 64-byte aligned weights; \
                  runs greedy-by-size, greedy-by-breadth, greedy-by-lifetime, first-fit and a \
                  local search over placement orders and keeps the smallest arena. Symbolic dims are planned at `ge.symbol_bounds`; symbols with no \
                  bound at a sample, with the problem recorded (`ge.replan`) for per-shape planning at run time. \
                  Tasks then read `memory.view`s and `memory.store` their results.",
    anchor: None,
    options: MemoryPlanOptions::DEFS,
};

#[derive(ge_ir::PassOptions)]
struct MemoryPlanOptions {
    /// byte alignment of every buffer offset and size (a power of two)
    #[option("alignment", default = 64)]
    alignment: i64,
    /// offset assignment strategy (best: run all, keep the smallest arena; no-reuse: every buffer its own bytes)
    #[option("strategy", default = "best", one_of = ["best", "greedy-by-size", "greedy-by-breadth", "greedy-by-lifetime", "first-fit", "order-search", "no-reuse"])]
    strategy: String,
    /// let pointwise tasks overwrite a dying input
    #[option("in-place", default = true)]
    in_place: bool,
    /// upper bounds of symbolic dims, e.g. B=64,S=512 (added to ge.symbol_bounds)
    #[option("symbol-bounds")]
    symbol_bounds: Vec<String>,
    /// print the plan's sizes (arena, LOAD bound, no-reuse, per strategy) on stderr
    #[option("report", default = false)]
    report: bool,
}

struct PlanMemory {
    opts: PlanOptions,
    report: bool,
}

/// Planner settings.
#[derive(Clone, Debug)]
pub struct PlanOptions {
    pub alignment: u64,
    pub strategy: String,
    pub in_place: bool,
    pub extra_bounds: Bounds,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            alignment: 64,
            strategy: "best".into(),
            in_place: true,
            extra_bounds: Bounds::new(),
        }
    }
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    let o = MemoryPlanOptions::from_options(o);
    let a = o.alignment;
    if a <= 0 || (a & (a - 1)) != 0 {
        return Err(format!(
            "option 'alignment' must be a power of two, got {a}"
        ));
    }
    let mut extra = Bounds::new();
    for kv in o.symbol_bounds.clone() {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("option 'symbol-bounds' expects SYM=N entries, got '{kv}'"))?;
        let n: i64 = v
            .trim()
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("bound of '{k}' must be a positive integer, got '{v}'"))?;
        extra.insert(Ident::new(k.trim()), n);
    }
    Ok(Box::new(PlanMemory {
        opts: PlanOptions {
            alignment: a as u64,
            strategy: o.strategy.as_str().to_string(),
            in_place: o.in_place,
            extra_bounds: extra,
        },
        report: o.report,
    }))
}

impl Pass for PlanMemory {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, cx: &PassContext) -> PassResult {
        for_each_function(op, INFO.name, |f, bounds| {
            let loc = f.loc;
            let name = crate::funcs::func_name(f);
            let Some(block) = func_block(f) else {
                return Ok(());
            };
            let mut bounds = bounds.clone();
            bounds.extend(self.opts.extra_bounds.iter().map(|(k, v)| (*k, *v)));
            let mut unbounded = crate::funcs::unbounded_symbols(f);
            unbounded.retain(|k, _| !self.opts.extra_bounds.contains_key(k));
            let Some(body) = f.inner.as_deref_mut() else {
                return Ok(());
            };
            let stats = plan_block(cx.ctx, body, block, &bounds, &unbounded, &self.opts)
                .map_err(|e| vec![e.diagnostic("plan-memory", loc)])?;
            f.attrs = f.attrs.with(Ident::new(PLAN_ATTR), stats.to_attr());
            if let Some(r) = &stats.replan {
                let json = serde_json::to_string(r).map_err(|e| {
                    error_at(
                        loc,
                        format!("plan-memory: cannot record the replan section: {e}"),
                    )
                })?;
                f.attrs = f
                    .attrs
                    .with(Ident::new(REPLAN_ATTR), Attribute::string(&json));
            }
            if self.report {
                let per: Vec<String> = stats
                    .per_strategy
                    .iter()
                    .map(|(n, s)| format!("{n}={s}"))
                    .collect();
                cx.report(&format!(
                    "plan-memory @{name}: buffers={} workspace={} lower_bound={} no_reuse={} in_place={} views={} strategy={} {}\n",
                    stats.buffers,
                    stats.workspace,
                    stats.lower_bound,
                    stats.no_reuse,
                    stats.in_place,
                    stats.views,
                    stats.strategy,
                    per.join(" ")
                ));
            }
            Ok(())
        })
    }
}

/// What a plan achieved.
#[derive(Clone, Debug, Default)]
pub struct PlanStats {
    /// Planned workspace units (after in-place merging).
    pub buffers: usize,
    pub workspace: u64,
    /// LOAD bound: most bytes live at once.
    pub lower_bound: u64,
    /// Sum of all buffer sizes (no reuse at all).
    pub no_reuse: u64,
    pub in_place: usize,
    pub views: usize,
    pub strategy: String,
    pub per_strategy: Vec<(&'static str, u64)>,
    pub weights: u64,
    /// The planning problem, for a runtime to plan per shape (with
    /// unbounded symbols only).
    pub replan: Option<ge_om::model::Replan>,
}

impl PlanStats {
    fn to_attr(&self) -> Attribute {
        let e = |k: &str, v: Attribute| (Ident::new(k), v);
        Attribute::dict(AttrDict::new(vec![
            e("workspace", Attribute::i64(self.workspace as i64)),
            e("lower_bound", Attribute::i64(self.lower_bound as i64)),
            e("no_reuse", Attribute::i64(self.no_reuse as i64)),
            e("weights", Attribute::i64(self.weights as i64)),
            e("strategy", Attribute::string(&self.strategy)),
        ]))
    }
}

fn align(x: i64, a: u64) -> u64 {
    let x = x.max(0) as u64;
    x.div_ceil(a) * a
}

/// The stream schedule of the tasks (from `ge.stream`/`ge.wait`/`ge.record`).
pub fn schedule_of(body: &Body, tasks: &[OpId]) -> Result<Schedule, String> {
    let stream: Vec<usize> = tasks
        .iter()
        .map(|&t| {
            body.op(t)
                .attr(STREAM_ATTR)
                .and_then(|a| a.as_int())
                .unwrap_or(0)
                .max(0) as usize
        })
        .collect();
    let list = |a: &str| -> Vec<Vec<i64>> {
        tasks
            .iter()
            .map(|&t| crate::funcs::i64s(body.op(t).attr(a)))
            .collect()
    };
    Schedule::new(&stream, &list(WAIT_ATTR), &list(RECORD_ATTR))
}

/// A planned buffer (several logical buffers when in-place merged).
struct Unit {
    size: u64,
    /// Latest access epoch on each stream that accesses the buffer.
    last: Vec<(usize, u64)>,
    writers: Vec<usize>,
    accesses: Vec<usize>,
}

/// Plan one function block and rewrite it into the memory dialect.
pub fn plan_block(
    ctx: &Context,
    body: &mut Body,
    block: BlockId,
    bounds: &Bounds,
    unbounded: &Bounds,
    opts: &PlanOptions,
) -> LowerResult<PlanStats> {
    if body.block_ops(block).any(|o| {
        body.op(o).name.as_str().starts_with("memory.") || stream_ops::Program::is(body.op(o))
    }) {
        return Err("the function is already planned (it has memory/stream ops)".into());
    }
    prepare_outputs(ctx, body, block, bounds)?;
    let g = TaskGraph::build(body, block, bounds)?;
    let sched = schedule_of(body, &g.tasks)?;
    // Roots of the model outputs (placed in the output arenas, not planned).
    let outputs = g.outputs(body);
    let mut out_root: HashMap<ValueId, usize> = HashMap::new();
    for (i, &v) in outputs.iter().enumerate() {
        out_root.insert(g.place(v).0, i);
    }
    let mut u = Units::collect(body, &g, &sched, &out_root, opts.alignment)?;
    let in_place = if opts.in_place {
        u.merge_in_place(body, &g, &sched)
    } else {
        0
    };
    // The planned units (merged ones dropped).
    let live_units: Vec<usize> = (0..u.units.len())
        .filter(|&x| u.merged_into[x] == x)
        .collect();
    let index_of: HashMap<usize, usize> = live_units
        .iter()
        .enumerate()
        .map(|(i, &x)| (x, i))
        .collect();
    let problem = problem_of(&u.units, &live_units, &sched);
    let (solution, per_strategy) = strategies::run(&problem, &opts.strategy)?;
    strategies::check(&problem, &solution)?;
    let stats = PlanStats {
        buffers: live_units.len(),
        workspace: solution.size,
        lower_bound: load_bound(&problem)
            .max(timeline_bound(&u.units, &live_units, &sched, &problem))
            .max(strategies::clique_bound(&problem)),
        no_reuse: problem.sizes.iter().sum(),
        in_place,
        views: g
            .node
            .values()
            .filter(|n| {
                matches!(
                    n,
                    Node::Alias { .. } | Node::ConcatView { .. } | Node::SplitView { .. }
                )
            })
            .count(),
        strategy: solution.strategy.to_string(),
        per_strategy,
        weights: 0,
        replan: None,
    };
    let unit_offset = |root: ValueId| -> Option<u64> {
        let x = resolve(&u.merged_into, *u.unit_of.get(&root)?);
        Some(solution.offsets[*index_of.get(&x)?])
    };
    let root_types: Vec<ge_ir::Type> = live_units
        .iter()
        .map(|&x| {
            u.roots_of_unit[x]
                .first()
                .map(|&r| body.value_type(r))
                .ok_or_else(|| LowerError::from("internal error: a planned unit has no buffer"))
        })
        .collect::<LowerResult<_>>()?;
    let (mut stats, ids) = rewrite(
        ctx,
        body,
        &g,
        bounds,
        opts,
        &out_root,
        &unit_offset,
        solution.size,
        stats,
    )?;
    if !unbounded.is_empty() {
        let mut buffers = std::collections::BTreeMap::new();
        for (root, id) in ids {
            if let Some(&x) = u.unit_of.get(&root) {
                if let Some(&i) = index_of.get(&resolve(&u.merged_into, x)) {
                    buffers.insert(id, i as u32);
                }
            }
        }
        let r = ge_om::model::Replan {
            unbounded: unbounded.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            alignment: opts.alignment,
            units: (0..live_units.len())
                .map(|i| ge_om::model::ReplanUnit {
                    ty: root_types[i].to_string(),
                    offset: solution.offsets[i],
                    conflicts: problem.conflicts[i].iter().map(|&j| j as u32).collect(),
                    first: problem.intervals[i].0 as u32,
                    last: problem.intervals[i].1 as u32,
                })
                .collect(),
            buffers,
        };
        check_replan_samples(&r, bounds)?;
        stats.replan = Some(r);
    }
    Ok(stats)
}

/// The values at which [`check_replan_samples`] plans the workspace again
/// (besides the compile-time sample): below, odd, and above it.
pub const CHECK_SAMPLES: &[i64] = &[1, 7, 200];

/// Plan the workspace again with every unbounded symbol at each of
/// [`CHECK_SAMPLES`], as the runtime will per shape, and check each plan
/// (`ge_om::plan::replan`: conflicting units disjoint, aligned): a model
/// with unbounded dims is verified at several sizes at compile time.
fn check_replan_samples(r: &ge_om::model::Replan, bounds: &Bounds) -> LowerResult<()> {
    for &n in CHECK_SAMPLES {
        let mut at = bounds.clone();
        for k in r.unbounded.keys() {
            at.insert(Ident::new(k), n);
        }
        let sizes: Vec<u64> = r
            .units
            .iter()
            .map(|un| {
                let t = ge_ir::parser::parse_type_str(ge_ir::context::bare(), &un.ty)
                    .map_err(|d| d.message)?;
                ge_dialects::memory::byte_size_bound(t, &at).map(|b| b.max(0) as u64)
            })
            .collect::<Result<_, String>>()
            .map_err(|m| format!("replan check at {n}: {m}"))?;
        ge_om::plan::replan(r, &sizes).map_err(|m| format!("replan check at {n}: {m}"))?;
    }
    Ok(())
}

/// The workspace buffers to plan: one unit per task-written root (not a
/// model output), with the tasks that access it; in-place merging joins
/// units (`merged_into`).
struct Units {
    units: Vec<Unit>,
    /// Workspace root → its unit.
    unit_of: HashMap<ValueId, usize>,
    roots_of_unit: Vec<Vec<ValueId>>,
    /// Per unit: the unit it was merged into (itself if planned).
    merged_into: Vec<usize>,
}

impl Units {
    fn collect(
        body: &Body,
        g: &TaskGraph,
        sched: &Schedule,
        out_root: &HashMap<ValueId, usize>,
        alignment: u64,
    ) -> LowerResult<Units> {
        let mut u = Units {
            units: vec![],
            unit_of: HashMap::new(),
            roots_of_unit: vec![],
            merged_into: vec![],
        };
        let mut reads: Vec<Vec<ValueId>> = vec![]; // per task: roots read
        for (ti, &t) in g.tasks.iter().enumerate() {
            let mut rs = vec![];
            for &r in body.op(t).results() {
                let root = g.place(r).0;
                if out_root.contains_key(&root) {
                    continue;
                }
                let x = match u.unit_of.get(&root) {
                    Some(&x) => x,
                    None => {
                        u.units.push(Unit {
                            size: align(g.size[&root], alignment),
                            last: vec![],
                            writers: vec![],
                            accesses: vec![],
                        });
                        u.roots_of_unit.push(vec![root]);
                        u.unit_of.insert(root, u.units.len() - 1);
                        u.units.len() - 1
                    }
                };
                touch(&mut u.units[x], sched, ti, true);
            }
            for v in inputs_of(body, t) {
                let root = g.place(v).0;
                if g.root_kind(body, root) == RootKind::Task && !out_root.contains_key(&root) {
                    rs.push(root);
                }
            }
            reads.push(rs);
        }
        for (ti, rs) in reads.iter().enumerate() {
            for root in rs {
                let x = *u
                    .unit_of
                    .get(root)
                    .ok_or("internal error: a task reads a buffer no task writes")?;
                touch(&mut u.units[x], sched, ti, false);
            }
        }
        u.merged_into = (0..u.units.len()).collect();
        Ok(u)
    }

    /// In place: a pointwise task overwrites an input that dies at it.
    /// Returns how many results were merged into an input.
    fn merge_in_place(&mut self, body: &Body, g: &TaskGraph, sched: &Schedule) -> usize {
        let Units {
            units,
            unit_of,
            roots_of_unit,
            merged_into,
        } = self;
        let mut in_place = 0;
        for (ti, &t) in g.tasks.iter().enumerate() {
            if !op_pattern(body, t).is_pointwise()
                || body.op(t).attr(crate::taskgraph::COPY_ATTR).is_some()
            {
                continue;
            }
            let operands = body.op(t).operands().to_vec();
            let mut used_bases = HashSet::new();
            for &r in body.op(t).results() {
                let Some(&ur) = unit_of.get(&r) else { continue };
                if g.place(r).0 != r || units[ur].writers != [ti] || roots_of_unit[ur].len() != 1 {
                    continue;
                }
                if g.parent.values().any(|&(p, _)| p == r) {
                    // r has views of its own: keep it a separate buffer.
                    continue;
                }
                for &x in &operands {
                    let (root, off) = g.place(x);
                    let Some(&ux) = unit_of.get(&root) else {
                        continue;
                    };
                    let ux = resolve(merged_into, ux);
                    let ok = root == x
                        && off == 0
                        && body.value_type(x) == body.value_type(r)
                        && units[ux].size == units[ur].size
                        && !used_bases.contains(&ux)
                        && !operands.iter().any(|&y| {
                            y != x
                                && unit_of.get(&g.place(y).0).map(|&u| resolve(merged_into, u))
                                    == Some(ux)
                        })
                        && units[ux]
                            .accesses
                            .iter()
                            .all(|&acc| acc == ti || sched.hb(acc, ti));
                    if ok {
                        used_bases.insert(ux);
                        // Merge ur into ux.
                        let moved = std::mem::replace(
                            &mut units[ur],
                            Unit {
                                size: 0,
                                last: vec![],
                                writers: vec![],
                                accesses: vec![],
                            },
                        );
                        let dst = &mut units[ux];
                        for (s, e) in moved.last {
                            bump(&mut dst.last, s, e);
                        }
                        dst.writers.extend(moved.writers);
                        for acc in moved.accesses {
                            if !dst.accesses.contains(&acc) {
                                dst.accesses.push(acc);
                            }
                        }
                        let rr = std::mem::take(&mut roots_of_unit[ur]);
                        roots_of_unit[ux].extend(rr);
                        merged_into[ur] = ux;
                        in_place += 1;
                        break;
                    }
                }
            }
        }
        in_place
    }
}

/// Record that task `t` accesses unit `un` (writes it if `write`).
fn touch(un: &mut Unit, sched: &Schedule, t: usize, write: bool) {
    let s = sched.stream[t];
    bump(&mut un.last, s, sched.epoch[t]);
    if write && !un.writers.contains(&t) {
        un.writers.push(t);
    }
    if !un.accesses.contains(&t) {
        un.accesses.push(t);
    }
}

/// The offset-planning problem of the live units: sizes, conflicts (two
/// units conflict unless every access of one happens before every write of
/// the other) and program-order intervals.
fn problem_of(units: &[Unit], live_units: &[usize], sched: &Schedule) -> Problem {
    let m = live_units.len();
    // before(U, V): every access of U happens before every write of V.
    let before = |u: &Unit, v: &Unit| -> bool {
        v.writers.iter().all(|&w| {
            let sw = sched.stream[w];
            u.last.iter().all(|&(s, e)| {
                if s == sw {
                    e < sched.epoch[w]
                } else {
                    sched.clock[w][s] >= e
                }
            })
        })
    };
    let mut conflicts = vec![vec![]; m];
    for i in 0..m {
        for j in i + 1..m {
            let (ui, uj) = (&units[live_units[i]], &units[live_units[j]]);
            if !(before(ui, uj) || before(uj, ui)) {
                conflicts[i].push(j);
                conflicts[j].push(i);
            }
        }
    }
    let intervals: Vec<(usize, usize)> = live_units
        .iter()
        .map(|&u| {
            let acc = &units[u].accesses;
            (
                acc.iter().copied().min().unwrap_or(0),
                acc.iter().copied().max().unwrap_or(0),
            )
        })
        .collect();
    Problem {
        sizes: live_units.iter().map(|&u| units[u].size).collect(),
        conflicts,
        intervals,
    }
}

/// A second valid lower bound: the bytes live at once in one legal
/// execution of the streams (unit-time tasks, as early as events allow).
fn timeline_bound(
    units: &[Unit],
    live_units: &[usize],
    sched: &Schedule,
    problem: &Problem,
) -> u64 {
    let mut ev: Vec<(u64, i128)> = vec![];
    for (i, &u) in live_units.iter().enumerate() {
        let acc = &units[u].accesses;
        let (Some(a), Some(b)) = (
            acc.iter().map(|&t| sched.start[t]).min(),
            acc.iter().map(|&t| sched.start[t] + 1).max(),
        ) else {
            continue;
        };
        ev.push((a, problem.sizes[i] as i128));
        ev.push((b, -(problem.sizes[i] as i128)));
    }
    ev.sort_by_key(|&(t, d)| (t, d));
    let (mut cur, mut best) = (0i128, 0i128);
    for (_, d) in ev {
        cur += d;
        best = best.max(cur);
    }
    best.max(0) as u64
}

/// Raise the latest epoch recorded for stream `s`.
fn bump(last: &mut Vec<(usize, u64)>, s: usize, e: u64) {
    match last.iter_mut().find(|(x, _)| *x == s) {
        Some(p) => p.1 = p.1.max(e),
        None => last.push((s, e)),
    }
}

fn resolve(merged: &[usize], mut u: usize) -> usize {
    while merged[u] != u {
        u = merged[u];
    }
    u
}

/// Where each arena lives while rewriting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Arena {
    Input(usize),
    Output(usize),
    Workspace,
}

/// Rewrite the planned function into the memory dialect: arenas and the
/// stores of the inputs, weights, per task views of its inputs and stores of
/// its results, views of the outputs; then the arenas' alignments and the
/// erasure of the view ops.
#[allow(clippy::too_many_arguments)]
fn rewrite(
    ctx: &Context,
    body: &mut Body,
    g: &TaskGraph,
    bounds: &Bounds,
    opts: &PlanOptions,
    out_root: &HashMap<ValueId, usize>,
    unit_offset: &dyn Fn(ValueId) -> Option<u64>,
    workspace: u64,
    mut stats: PlanStats,
) -> LowerResult<(PlanStats, HashMap<ValueId, i64>)> {
    let first = *g.ops.first().ok_or("empty function body")?;
    let mut rw = Rewrite {
        ctx,
        g,
        out_root,
        unit_offset,
        outputs: g.outputs(body),
        ids: HashMap::new(),
        cur: HashMap::new(),
    };
    rw.arenas(body, first, bounds, opts.alignment, workspace)?;
    stats.weights = rw.weights(body)?;
    for &t in &g.tasks {
        rw.task(body, t)?;
    }
    rw.outputs(body)?;
    set_arena_alignments(body, g.block, opts.alignment);
    // View ops are now unused.
    for &o in g.ops.iter().rev() {
        if matches!(
            g.node.get(&o),
            Some(Node::Alias { .. } | Node::ConcatView { .. } | Node::SplitView { .. })
        ) {
            if !body.results_unused(o) {
                return Err(LowerError::at(
                    body.op(o).loc,
                    format!(
                        "internal error: view op '{}' is still used after planning",
                        body.op(o).name
                    ),
                ));
            }
            body.erase_op(o);
        }
    }
    Ok((stats, rw.ids))
}

/// The state of [`rewrite`].
struct Rewrite<'a> {
    ctx: &'a Context,
    g: &'a TaskGraph,
    out_root: &'a HashMap<ValueId, usize>,
    unit_offset: &'a dyn Fn(ValueId) -> Option<u64>,
    /// The model outputs (the return's operands before the rewrite).
    outputs: Vec<ValueId>,
    /// Logical buffer ids: one per root.
    ids: HashMap<ValueId, i64>,
    /// Each arena's current value (its last store).
    cur: HashMap<Arena, ValueId>,
}

impl Rewrite<'_> {
    fn id_of(&mut self, root: ValueId) -> i64 {
        let n = self.ids.len() as i64;
        *self.ids.entry(root).or_insert(n)
    }

    /// One arena per input and output and the workspace (before `first`),
    /// and the stores of the inputs into theirs.
    fn arenas(
        &mut self,
        body: &mut Body,
        first: OpId,
        bounds: &Bounds,
        a: u64,
        workspace: u64,
    ) -> LowerResult<()> {
        let (ctx, g) = (self.ctx, self.g);
        let args = body.block(g.block).args.clone();
        let outputs = self.outputs.clone();
        let symbolic = args.iter().chain(g.size.keys()).any(|&v| {
            body.value_type(v)
                .as_tensor()
                .is_some_and(|t| t.has_symbolic_dims())
        });
        let bounds_a = (!bounds.is_empty() && symbolic).then(|| bounds_attr(bounds));
        let loc = body.op(first).loc;
        let make_arena = |body: &mut Body,
                          size: u64,
                          role: &str,
                          index: Option<usize>|
         -> LowerResult<ValueId> {
            let mut attrs = vec![
                ("size", Attribute::i64(size as i64)),
                ("alignment", Attribute::i64(a as i64)),
                (ROLE_ATTR, Attribute::string(role)),
            ];
            if let Some(i) = index {
                attrs.push((INDEX_ATTR, Attribute::i64(i as i64)));
            }
            if let Some(b) = bounds_a {
                attrs.push(("symbol_bounds", b));
            }
            let mut b = Builder::before(ctx, body, first);
            b.loc = loc;
            b.create_value(mem_ops::Arena::NAME, &[], attrs).at_op(loc)
        };
        for (i, &x) in args.iter().enumerate() {
            let v = make_arena(body, align(g.size[&x], a), "input", Some(i))?;
            self.cur.insert(Arena::Input(i), v);
        }
        for (i, &o) in outputs.iter().enumerate() {
            let v = make_arena(body, align(g.size[&o], a), "output", Some(i))?;
            self.cur.insert(Arena::Output(i), v);
        }
        let ws = make_arena(body, workspace, "workspace", None)?;
        self.cur.insert(Arena::Workspace, ws);
        // Model inputs: the caller's buffers.
        for (i, &x) in args.iter().enumerate() {
            let id = self.id_of(x);
            let arena = self.cur[&Arena::Input(i)];
            let mut b = Builder::before(ctx, body, first);
            b.loc = loc;
            let s = b
                .create_value(
                    mem_ops::Store::NAME,
                    &[x, arena],
                    vec![
                        ("offset", Attribute::i64(0)),
                        (BUFFER_ATTR, Attribute::i64(id)),
                    ],
                )
                .at_op(body.value(x).loc)?;
            self.cur.insert(Arena::Input(i), s);
        }
        Ok(())
    }

    /// Every used constant becomes a `memory.weight` (64-byte aligned
    /// offsets); returns the weights' total bytes.
    fn weights(&mut self, body: &mut Body) -> LowerResult<u64> {
        let g = self.g;
        let mut woff = 0u64;
        for &o in &g.ops {
            if g.node.get(&o) != Some(&Node::Constant) || body.results_unused(o) {
                continue;
            }
            let d = body.op(o);
            let Some(value) = d.attr("value") else {
                continue;
            };
            let r = d.results()[0];
            let size = g.size[&r].max(0) as u64;
            let l = d.loc;
            let mut b = Builder::before(self.ctx, body, o);
            b.loc = l;
            let w = b
                .create_value(
                    mem_ops::Weight::NAME,
                    &[],
                    vec![
                        ("offset", Attribute::i64(woff as i64)),
                        ("value", value),
                        ("alignment", Attribute::i64(WEIGHT_ALIGN as i64)),
                    ],
                )
                .at_op(l)?;
            body.replace_all_uses(r, w);
            body.erase_op(o);
            woff += size.div_ceil(WEIGHT_ALIGN) * WEIGHT_ALIGN;
        }
        Ok(woff)
    }

    /// Where value `v`'s bytes are: its arena, offset and root.
    fn place_of(&self, body: &Body, v: ValueId) -> LowerResult<(Arena, u64, ValueId)> {
        let (root, off) = self.g.place(v);
        let off = off.max(0) as u64;
        match self.g.root_kind(body, root) {
            RootKind::Input(i) => Ok((Arena::Input(i), off, root)),
            RootKind::Constant => Err("internal error: a constant has no arena place".into()),
            RootKind::Task => match self.out_root.get(&root) {
                Some(&i) => Ok((Arena::Output(i), off, root)),
                None => Ok((
                    Arena::Workspace,
                    (self.unit_offset)(root).ok_or("internal error: unplanned buffer")? + off,
                    root,
                )),
            },
        }
    }

    /// A `memory.view` (before op `at`, at `at`'s location) of value `v`'s
    /// bytes in the current value of its arena.
    fn view_before(&mut self, body: &mut Body, at: OpId, v: ValueId) -> LowerResult<ValueId> {
        let loc = body.op(at).loc;
        let (arena, off, root) = self.place_of(body, v).at_op(loc)?;
        let id = self.id_of(root);
        let ty = body.value_type(v);
        let mut b = Builder::before(self.ctx, body, at);
        b.loc = loc;
        let view = b
            .create(
                mem_ops::View::NAME,
                &[self.cur[&arena]],
                vec![
                    ("offset", Attribute::i64(off as i64)),
                    (BUFFER_ATTR, Attribute::i64(id)),
                ],
                Some(vec![ty]),
                0,
            )
            .at_op(loc)?;
        Ok(body.result(view, 0))
    }

    /// Task `t`: views of its inputs before it, stores of its results after.
    fn task(&mut self, body: &mut Body, t: OpId) -> LowerResult<()> {
        let g = self.g;
        let tloc = body.op(t).loc;
        for v in inputs_of(body, t) {
            if body.value_type(v).as_tensor().is_none() {
                continue;
            }
            let (root, _) = g.place(v);
            let is_const = body
                .defining_op(v)
                .is_some_and(|d| mem_ops::Weight::is(body.op(d)))
                || g.root_kind(body, root) == RootKind::Constant;
            if is_const {
                continue;
            }
            let vv = self.view_before(body, t, v)?;
            body.replace_uses_if(v, vv, |b, u| within(b, u.op, t));
        }
        let results = body.op(t).results().to_vec();
        let mut after = t;
        for r in results {
            let (arena, off, root) = self.place_of(body, r).at_op(tloc)?;
            let id = self.id_of(root);
            let st = {
                let mut b = Builder::before(self.ctx, body, t);
                b.loc = tloc;
                b.create(
                    mem_ops::Store::NAME,
                    &[r, self.cur[&arena]],
                    vec![
                        ("offset", Attribute::i64(off as i64)),
                        (BUFFER_ATTR, Attribute::i64(id)),
                    ],
                    None,
                    0,
                )
                .at_op(tloc)?
            };
            body.detach_op(st);
            body.insert_op_after(after, st);
            after = st;
            self.cur.insert(arena, body.result(st, 0));
        }
        Ok(())
    }

    /// Outputs: read back from the output arenas (views before the return).
    fn outputs(&mut self, body: &mut Body) -> LowerResult<()> {
        let Some(ret) = self.g.ret else {
            return Ok(());
        };
        for (i, &o) in self.outputs.clone().iter().enumerate() {
            let vv = self.view_before(body, ret, o)?;
            body.set_operand(ret, i, vv);
        }
        Ok(())
    }
}

/// An arena's alignment is what every offset in it is a multiple of:
/// `alignment` for planned buffers, at least 32 bytes for view slices.
fn set_arena_alignments(body: &mut Body, block: BlockId, a: u64) {
    let mut lowbit: HashMap<OpId, u64> = HashMap::new();
    for o in body.block_ops(block).collect::<Vec<_>>() {
        let d = body.op(o);
        let arena = match d.name.as_str() {
            mem_ops::View::NAME => d.operands()[0],
            mem_ops::Store::NAME => d.operands()[1],
            _ => continue,
        };
        let off = d
            .attr("offset")
            .and_then(|x| x.as_int())
            .unwrap_or(0)
            .max(0) as u64;
        if let Some(root) = ge_dialects::memory::arena_root(body, arena) {
            let e = lowbit.entry(root).or_insert(a);
            if off != 0 {
                *e = (*e).min(1 << off.trailing_zeros());
            }
        }
    }
    for (root, al) in lowbit {
        if al != a {
            body.set_attr(root, "alignment", Attribute::i64(al as i64));
        }
    }
}

/// Whether `op` is `t` or nested in it.
fn within(body: &Body, mut op: OpId, t: OpId) -> bool {
    loop {
        if op == t {
            return true;
        }
        match body.parent_op(op) {
            Some(p) => op = p,
            None => return false,
        }
    }
}
