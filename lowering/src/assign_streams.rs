//! `assign-streams`: decide the stream of every task, the cross-stream events
//! and the program order (see `chain_cover.rs` for the algorithm).
//!
//! The decision is recorded on the task ops — `ge.stream = S`, `ge.wait =
//! [events waited for before the task]`, `ge.record = [events recorded after
//! it]` — and the function gets `ge.num_streams` / `ge.num_events`; the ops
//! are reordered into program order. Memory planning reads this schedule
//! (buffer lifetimes depend on it, as in GE, where streams are assigned before
//! memory), and `emit-tasks` turns it into the `stream` dialect. The IR stays
//! runnable: the attributes do not change what any op computes.
//!
//! Before assigning, model outputs that cannot be written in place by their
//! producer (model inputs, constants, slices, repeated outputs) get a copy
//! task (`data.identity {ge.copy}`).

use crate::chain_cover::{assign, StreamOptions, StreamPlan};
use crate::cost::{bytes, task_us};
use crate::error::LowerResult;
use crate::funcs::{error_at, for_each_function, func_block, Bounds};
use crate::partition_engines::SOC_OPTION;
use crate::sync::{NUM_EVENTS_ATTR, NUM_STREAMS_ATTR, RECORD_ATTR, STREAM_ATTR, WAIT_ATTR};
use crate::taskgraph::{prepare_outputs, Node, TaskGraph, COPY_ATTR};
use ge_ir::body::{BlockId, Body, OpData, OpId};
use ge_ir::pass::{OptKind, OptionDef, Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::{Attribute, Context};
use ge_soc::Soc;
use std::collections::HashMap;

pub static INFO: PassInfo = PassInfo {
    name: "assign-streams",
    summary: "Assign tasks to streams with the fewest events (Nimble's chain cover)",
    description: "Computes the transitive reduction of the task graph, a maximum bipartite \
                  matching on it (chains = streams, unmatched edges = events), packs chains onto \
                  `max-streams` streams if set, orders tasks by list scheduling on the SoC cost \
                  model and adds only the events not implied by others, reusing event ids. \
                  Records `ge.stream`, `ge.wait`, `ge.record` on tasks and `ge.num_streams`, \
                  `ge.num_events` on the function; reorders ops into program order. Model outputs \
                  that cannot be written in place get a copy task first.",
    anchor: None,
    options: &[
        OptionDef {
            name: "max-streams",
            kind: OptKind::Int,
            default: "0",
            doc: "use at most this many streams (0: as many as the chain cover needs)",
        },
        OptionDef {
            name: "single-stream",
            kind: OptKind::Bool,
            default: "false",
            doc: "put every task on stream 0 (GE's --enable-single-stream)",
        },
        SOC_OPTION,
        OptionDef {
            name: "report",
            kind: OptKind::Bool,
            default: "false",
            doc:
                "print stream statistics (streams, events, chain-cover minimum, makespan) on stderr",
        },
    ],
};

struct AssignStreams {
    opts: StreamOptions,
    soc: String,
    report: bool,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    let m = o.int("max-streams");
    if m < 0 {
        return Err(format!(
            "option 'max-streams' must not be negative, got {m}"
        ));
    }
    Soc::load(o.str("soc"))?;
    Ok(Box::new(AssignStreams {
        opts: StreamOptions {
            max_streams: m as usize,
            single_stream: o.bool("single-stream"),
            event_us: 0.0,
        },
        soc: o.str("soc").to_string(),
        report: o.bool("report"),
    }))
}

impl Pass for AssignStreams {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, cx: &PassContext) -> PassResult {
        let soc = Soc::load(&self.soc).map_err(|m| error_at(op.loc, m))?;
        let opts = StreamOptions {
            event_us: soc.event_sync_us,
            ..self.opts.clone()
        };
        for_each_function(op, INFO.name, |f, bounds| {
            let loc = f.loc;
            let name = crate::funcs::func_name(f);
            let Some(block) = func_block(f) else {
                return Ok(());
            };
            let Some(body) = f.inner.as_deref_mut() else {
                return Ok(());
            };
            let plan = assign_block(cx.ctx, body, block, bounds, &soc, &opts)
                .map_err(|e| vec![e.diagnostic("assign-streams", loc)])?;
            f.attrs = f
                .attrs
                .with(
                    ge_ir::Ident::new(NUM_STREAMS_ATTR),
                    Attribute::i64(plan.num_streams as i64),
                )
                .with(
                    ge_ir::Ident::new(NUM_EVENTS_ATTR),
                    Attribute::i64(plan.num_events as i64),
                );
            if self.report {
                cx.report(&format!(
                    "assign-streams @{name}: tasks={} streams={} events={} syncs={} min_streams={} min_syncs={} reduced_edges={} makespan_us={:.3} critical_path_us={:.3} serial_us={:.3}\n",
                    plan.stream.len(),
                    plan.num_streams,
                    plan.num_events,
                    plan.syncs,
                    plan.min_streams,
                    plan.min_syncs,
                    plan.reduced_edges,
                    plan.makespan_us,
                    plan.critical_path_us,
                    plan.serial_us
                ));
            }
            Ok(())
        })
    }
}

/// Estimated duration (µs) of each task of `g`.
pub fn durations(body: &Body, g: &TaskGraph, soc: &Soc, bounds: &Bounds) -> Vec<f64> {
    g.tasks
        .iter()
        .map(|&t| {
            let d = body.op(t);
            if d.attr(COPY_ATTR).is_some() {
                let b = d
                    .results()
                    .first()
                    .map_or(0.0, |&r| bytes(body.value_type(r), bounds));
                return soc.task_launch_us + 2.0 * b / (soc.hbm_bandwidth_gbps * 1e3);
            }
            let engine = d
                .attr("engine")
                .and_then(|a| a.as_str())
                .unwrap_or("AICore");
            task_us(body, t, engine, soc, bounds)
        })
        .collect()
}

/// Assign streams in one function block, annotate and reorder it.
pub fn assign_block(
    ctx: &Context,
    body: &mut Body,
    block: BlockId,
    bounds: &Bounds,
    soc: &Soc,
    opts: &StreamOptions,
) -> LowerResult<StreamPlan> {
    prepare_outputs(ctx, body, block, bounds)?;
    let g = TaskGraph::build(body, block, bounds)?;
    let dur = durations(body, &g, soc, bounds);
    let plan = assign(&g.deps, &dur, opts)?;
    for (i, &t) in g.tasks.iter().enumerate() {
        for a in [STREAM_ATTR, WAIT_ATTR, RECORD_ATTR] {
            body.remove_attr(t, a);
        }
        body.set_attr(t, STREAM_ATTR, Attribute::i64(plan.stream[i] as i64));
        if !plan.waits[i].is_empty() {
            body.set_attr(t, WAIT_ATTR, Attribute::i64_array(&plan.waits[i]));
        }
        if !plan.records[i].is_empty() {
            body.set_attr(t, RECORD_ATTR, Attribute::i64_array(&plan.records[i]));
        }
    }
    reorder(body, &g, &plan.order);
    Ok(plan)
}

/// Put the block's ops in program order: tasks in `order`, every other op
/// right after the last task it depends on (constants first), the return last.
pub fn reorder(body: &mut Body, g: &TaskGraph, order: &[usize]) {
    let mut slot: HashMap<OpId, usize> = HashMap::new();
    for (p, &t) in order.iter().enumerate() {
        slot.insert(g.tasks[t], 2 * p + 1);
    }
    let mut keyed: Vec<(usize, usize, OpId)> = vec![];
    for (i, &o) in g.ops.iter().enumerate() {
        let k = match g.node.get(&o) {
            Some(Node::Task) => slot[&o],
            Some(Node::Return) => usize::MAX,
            _ => {
                let s = crate::funcs::inputs_of(body, o)
                    .iter()
                    .filter_map(|&v| body.defining_op(v))
                    .filter_map(|d| slot.get(&d).copied())
                    .max()
                    .unwrap_or(0);
                slot.insert(o, s);
                s
            }
        };
        keyed.push((k, i, o));
    }
    keyed.sort();
    for &(_, _, o) in &keyed {
        body.detach_op(o);
    }
    for &(_, _, o) in &keyed {
        body.append_op(g.block, o);
    }
}
