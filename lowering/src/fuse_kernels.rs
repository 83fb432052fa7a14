//! `fuse-kernels`: group ops into `graph.fused` kernels by TVM-style op
//! patterns (see `op_pattern.rs`).
//!
//! A group (initially one op) is merged into the group that consumes it when
//!
//! - that consumer group is the *only* consumer of the group's results (no
//!   result escapes elsewhere, none is a model output) — so fusion never
//!   duplicates work, never exposes an intermediate, and never creates a cycle
//!   (every path out of the producer enters the consumer first; the final
//!   group graph is also checked acyclic with petgraph);
//! - both run on the same engine (the op's `engine`, or the engine the
//!   registry would pick);
//! - the patterns compose: an elementwise/broadcast consumer takes any
//!   non-opaque producer (conv/matmul + elementwise epilogue, reduction +
//!   epilogue, injective + elementwise); an injective consumer takes
//!   elementwise/broadcast/injective producers; a reduction takes
//!   elementwise/broadcast/injective producers (its prologue); a group never
//!   holds two out-elementwise-fusable anchors, and opaque ops stay alone;
//! - the merged kernel has at most `max-kernel-size` ops.
//!
//! Groups are visited consumers-first until nothing merges, so a diamond of
//! elementwise ops collapses into one kernel (TVM reaches the same through
//! post-dominators). `data.concat` and `data.split` are left alone: the
//! memory planner turns them into views.

use crate::engines::available;
use crate::error::{AtOp, LowerResult};
use crate::funcs::{error_at, for_each_function, func_block, inputs_of};
use crate::op_pattern::{op_pattern, Pattern};
use crate::partition_engines::{engine_for, is_compute, ENGINES_OPTION, SOC_OPTION};
use ge_ir::body::{Body, OpData, OpId, ValueId};
use ge_ir::pass::{OptKind, OptionDef, Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::{Attribute, Context};
use ge_soc::Soc;
use std::collections::{HashMap, HashSet};

pub static INFO: PassInfo = PassInfo {
    name: "fuse-kernels",
    summary: "Fuse ops into graph.fused kernels by TVM op patterns, within engine boundaries",
    description: "Merges each group of ops into the group consuming it when that is its only \
                  consumer, both run on the same engine, the patterns compose (elementwise and \
                  broadcast epilogues after conv/matmul/pool/reduction/injective ops; \
                  elementwise/injective prologues before reductions and injective ops) and the \
                  kernel stays within `max-kernel-size` ops. Opaque ops, concat and split stay \
                  alone. Kernels get `kind` (the group's pattern) and `engine`.",
    anchor: None,
    options: &[
        OptionDef {
            name: "max-kernel-size",
            kind: OptKind::Int,
            default: "32",
            doc: "largest number of ops in one kernel",
        },
        SOC_OPTION,
        ENGINES_OPTION,
    ],
};

struct FuseKernels {
    max_size: usize,
    soc: String,
    only: Vec<String>,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    let n = o.int("max-kernel-size");
    if n < 1 {
        return Err(format!(
            "option 'max-kernel-size' must be at least 1, got {n}"
        ));
    }
    Soc::load(o.str("soc"))?;
    Ok(Box::new(FuseKernels {
        max_size: n as usize,
        soc: o.str("soc").to_string(),
        only: o.list("engines"),
    }))
}

impl Pass for FuseKernels {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, cx: &PassContext) -> PassResult {
        let soc = Soc::load(&self.soc).map_err(|m| error_at(op.loc, m))?;
        let engines = available(cx.ctx, &self.only, Some(&soc)).map_err(|m| error_at(op.loc, m))?;
        for_each_function(op, INFO.name, |f, _| {
            let loc = f.loc;
            let Some(block) = func_block(f) else {
                return Ok(());
            };
            let Some(body) = f.inner.as_deref_mut() else {
                return Ok(());
            };
            let groups = plan_groups(body, block, self.max_size, |b, o| {
                engine_for(&engines, b, o).ok()
            })
            .map_err(|m| error_at(loc, format!("fuse-kernels: {m}")))?;
            for g in groups {
                build_kernel(cx.ctx, body, &g)
                    .map_err(|e| vec![e.diagnostic("fuse-kernels", loc)])?;
            }
            Ok(())
        })
    }
}

/// One kernel to build: its ops in block order, pattern and engine.
#[derive(Clone, Debug)]
pub struct Group {
    pub ops: Vec<OpId>,
    pub pattern: Pattern,
    pub engine: Option<String>,
}

/// Whether a producer group of pattern `p` may join a consumer group of pattern `c`.
pub fn composes(p: Pattern, c: Pattern) -> Option<Pattern> {
    use Pattern::*;
    if p == Opaque || c == Opaque {
        return None;
    }
    match c {
        Elementwise | Broadcast => Some(p.max(c)),
        Injective if p <= Injective => Some(Injective),
        Reduction if p <= Injective => Some(Reduction),
        _ => None,
    }
}

fn fusable(body: &Body, op: OpId) -> bool {
    let name = body.op(op).name.as_str();
    is_compute(body, op)
        && name != "graph.fused"
        && name != "data.concat"
        && name != "data.split"
        && body.op(op).attr(crate::taskgraph::COPY_ATTR).is_none()
}

/// Decide the kernels of a block (groups of two or more ops).
pub fn plan_groups(
    body: &Body,
    block: ge_ir::BlockId,
    max_size: usize,
    engine_of: impl Fn(&Body, OpId) -> Option<String>,
) -> Result<Vec<Group>, String> {
    let ops: Vec<OpId> = body.block_ops(block).collect();
    let pos: HashMap<OpId, usize> = ops.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    let n = ops.len();
    // Union-find over positions; group data lives at the representative.
    let mut rep: Vec<usize> = (0..n).collect();
    let mut pattern: Vec<Pattern> = ops.iter().map(|&o| op_pattern(body, o)).collect();
    let engine: Vec<Option<String>> = ops.iter().map(|&o| engine_of(body, o)).collect();
    let mut size: Vec<usize> = vec![1; n];
    let candidate: Vec<bool> = ops.iter().map(|&o| fusable(body, o)).collect();
    fn find(rep: &mut [usize], mut i: usize) -> usize {
        while rep[i] != i {
            rep[i] = rep[rep[i]];
            i = rep[i];
        }
        i
    }
    // Top-level consumer positions of each op's results (None: not a fusable op).
    let consumers: Vec<Vec<Option<usize>>> = ops
        .iter()
        .map(|&o| {
            let mut out = vec![];
            for &r in body.op(o).results() {
                for u in body.uses(r) {
                    let mut user = u.op;
                    while body.op(user).parent_block() != Some(block) {
                        match body.parent_op(user) {
                            Some(p) => user = p,
                            None => break,
                        }
                    }
                    out.push(pos.get(&user).copied().filter(|&p| candidate[p]));
                }
            }
            out
        })
        .collect();
    let mut members: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..n).rev() {
            if !candidate[i] || find(&mut rep, i) != i {
                continue;
            }
            // Consumer groups of every member of group i, outside it.
            let mut target: Option<usize> = None;
            let mut ok = true;
            'outer: for &m in &members[i] {
                for c in &consumers[m] {
                    let Some(c) = *c else {
                        ok = false;
                        break 'outer;
                    };
                    let gc = find(&mut rep, c);
                    if gc == i {
                        continue;
                    }
                    match target {
                        None => target = Some(gc),
                        Some(t) if t == gc => {}
                        Some(_) => {
                            ok = false;
                            break 'outer;
                        }
                    }
                }
            }
            let Some(t) = target.filter(|_| ok) else {
                continue;
            };
            if engine[i].is_none() || engine[i] != engine[t] || size[i] + size[t] > max_size {
                continue;
            }
            let Some(p) = composes(pattern[i], pattern[t]) else {
                continue;
            };
            rep[i] = t;
            pattern[t] = p;
            size[t] += size[i];
            let moved = std::mem::take(&mut members[i]);
            members[t].extend(moved);
            changed = true;
        }
    }
    // Check the grouped graph is acyclic (it is by construction).
    let mut g = petgraph::graph::DiGraph::<usize, ()>::new();
    let nodes: Vec<_> = (0..n).map(|i| g.add_node(i)).collect();
    for (i, cs) in consumers.iter().enumerate() {
        let gi = find(&mut rep, i);
        for c in cs.iter().flatten() {
            let gc = find(&mut rep, *c);
            if gi != gc {
                g.update_edge(nodes[gi], nodes[gc], ());
            }
        }
    }
    if petgraph::algo::is_cyclic_directed(&g) {
        return Err("internal error: fusion produced a cyclic kernel graph".into());
    }
    let mut out = vec![];
    for i in 0..n {
        if find(&mut rep, i) != i || members[i].len() < 2 {
            continue;
        }
        let mut m = members[i].clone();
        m.sort_unstable();
        out.push(Group {
            ops: m.iter().map(|&p| ops[p]).collect(),
            pattern: pattern[i],
            engine: engine[i].clone(),
        });
    }
    Ok(out)
}

/// Replace the ops of `g` by one `graph.fused` kernel placed at the last of
/// them (errors are at that op unless a cloned op has its own).
pub fn build_kernel(ctx: &Context, body: &mut Body, g: &Group) -> LowerResult<OpId> {
    let last = *g.ops.last().ok_or("empty group")?;
    let loc = body.op(last).loc;
    let set: HashSet<OpId> = g.ops.iter().copied().collect();
    let inside = |body: &Body, o: OpId| -> bool {
        let mut cur = o;
        loop {
            if set.contains(&cur) {
                return true;
            }
            match body.parent_op(cur) {
                Some(p) => cur = p,
                None => return false,
            }
        }
    };
    // Inputs: values the ops read that are defined outside the group.
    let mut inputs: Vec<ValueId> = vec![];
    let mut defined: HashSet<ValueId> = HashSet::new();
    for &o in &g.ops {
        for v in inputs_of(body, o) {
            if !defined.contains(&v) && !inputs.contains(&v) {
                inputs.push(v);
            }
        }
        defined.extend(body.op(o).results().iter().copied());
    }
    // Outputs: results used outside the group.
    let mut outputs: Vec<ValueId> = vec![];
    for &o in &g.ops {
        for &r in body.op(o).results() {
            if body.uses(r).iter().any(|u| !inside(body, u.op)) {
                outputs.push(r);
            }
        }
    }
    if outputs.is_empty() {
        // Dead code: nothing would read the kernel; leave the ops alone.
        return Ok(last);
    }
    let mut attrs = vec![];
    if let Some(k) = g.pattern.kind() {
        attrs.push(("kind", Attribute::string(k)));
    }
    if let Some(e) = &g.engine {
        attrs.push(("engine", Attribute::string(e)));
    }
    let result_types: Vec<_> = outputs.iter().map(|&v| body.value_type(v)).collect();
    let mut b = ge_ir::builder::Builder::before(ctx, body, last);
    b.loc = loc;
    let k = b
        .create("graph.fused", &inputs, attrs, Some(result_types), 1)
        .at_op(loc)?;
    // The kernel body: a block whose arguments are the inputs, the ops cloned, a yield.
    let mut inner = body
        .take_inner(k)
        .ok_or("graph.fused has no body")
        .at_op(loc)?;
    let region = *body
        .op(k)
        .regions()
        .first()
        .ok_or("graph.fused has no region")
        .at_op(loc)?;
    let blk = inner.add_block(region);
    let mut map = HashMap::new();
    for &v in &inputs {
        let a = inner.add_block_arg(blk, body.value_type(v), body.value(v).loc);
        map.insert(v, a);
    }
    for &o in &g.ops {
        let c = crate::funcs::clone_op_into(body, o, &mut inner, blk, &mut map)?;
        // The kernel carries the engine and schedule, not its ops.
        for a in [
            "engine",
            crate::sync::STREAM_ATTR,
            crate::sync::WAIT_ATTR,
            crate::sync::RECORD_ATTR,
        ] {
            inner.remove_attr(c, a);
        }
    }
    let yielded: Vec<ValueId> = outputs
        .iter()
        .map(|v| map.get(v).copied().ok_or("kernel output was not cloned"))
        .collect::<Result<_, _>>()
        .at_op(loc)?;
    {
        let mut yb = ge_ir::builder::Builder::at_end(ctx, &mut inner, blk);
        yb.loc = loc;
        yb.create("graph.yield", &yielded, vec![], Some(vec![]), 0)
            .at_op(loc)?;
    }
    body.put_inner(k, inner);
    let results = body.op(k).results().to_vec();
    for (&old, &new) in outputs.iter().zip(&results) {
        body.replace_all_uses(old, new);
    }
    for &o in g.ops.iter().rev() {
        body.erase_op(o);
    }
    Ok(k)
}
