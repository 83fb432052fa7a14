//! The greedy pattern driver (MLIR's `applyPatternsGreedily`): a worklist of
//! ops; each is erased if dead, folded if possible, else offered to the
//! patterns rooted at it (best benefit first). Changes re-queue exactly the
//! ops they affect. It never loops forever: runaway rewriting within an
//! iteration and cycles across iterations are detected and reported with the
//! names of the patterns involved.

use crate::fold::try_fold;
use crate::pattern::PatternSet;
use crate::rewriter::{Event, Rewriter};
use ge_ir::attributes::Attribute;
use ge_ir::body::{Body, OpData, OpId, ValueId, WalkOrder};
use ge_ir::opdef::Trait;
use ge_ir::Context;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

#[derive(Clone, Debug)]
pub struct GreedyConfig {
    pub max_iterations: usize,
    /// Stop after this many rewrites in total (`None`: no limit).
    pub max_num_rewrites: Option<usize>,
    /// Seed the worklist in pre-order (top-down) instead of post-order.
    pub top_down: bool,
    /// Fold ops (op folders and constant evaluation through semantics).
    pub fold: bool,
    /// Largest folded constant, in elements.
    pub fold_size_limit: usize,
    /// Erase dead pure ops.
    pub dce: bool,
    /// After converging, run once more and fail if anything still applies.
    pub test_convergence: bool,
}

impl Default for GreedyConfig {
    fn default() -> Self {
        GreedyConfig {
            max_iterations: 10,
            max_num_rewrites: None,
            top_down: true,
            fold: true,
            fold_size_limit: 1 << 16,
            dce: true,
            test_convergence: false,
        }
    }
}

/// What a run did.
#[derive(Debug, Default, Clone)]
pub struct GreedyStats {
    pub iterations: usize,
    pub rewrites: usize,
    pub folds: usize,
    pub erased: usize,
    pub converged: bool,
    /// Applications per pattern name.
    pub applied: HashMap<String, usize>,
}

/// Apply `patterns` to every op of `body` (and of nested isolated bodies, in parallel).
pub fn apply_greedily(
    ctx: &Context,
    body: &mut Body,
    patterns: &PatternSet,
    cfg: &GreedyConfig,
) -> Result<GreedyStats, String> {
    let mut stats = run_body(ctx, body, patterns, cfg)?;
    let nested_of = |d: &mut OpData| match d.inner.as_deref_mut() {
        Some(inner) => apply_greedily(ctx, inner, patterns, cfg),
        None => Ok(GreedyStats::default()),
    };
    let has_inner = |d: &&mut OpData| d.is_alive() && d.inner.is_some();
    // Most bodies (a function's) have at most one nested body: handing that
    // to rayon only wakes its threads (a fifth of an incremental re-compile).
    let ops = body.ops_mut();
    let nested: Vec<Result<GreedyStats, String>> = match ops
        .iter()
        .filter(|d| d.is_alive() && d.inner.is_some())
        .count()
    {
        0 | 1 => ops.iter_mut().filter(has_inner).map(nested_of).collect(),
        _ => ops
            .par_iter_mut()
            .filter(has_inner)
            .map(nested_of)
            .collect(),
    };
    for r in nested {
        let s = r?;
        stats.rewrites += s.rewrites;
        stats.folds += s.folds;
        stats.erased += s.erased;
        for (k, v) in s.applied {
            *stats.applied.entry(k).or_default() += v;
        }
    }
    Ok(stats)
}

struct Worklist {
    stack: Vec<OpId>,
    queued: Vec<bool>,
}

impl Worklist {
    fn push(&mut self, op: OpId) {
        let i = op.index();
        if i >= self.queued.len() {
            self.queued.resize(i + 1, false);
        }
        if !self.queued[i] {
            self.queued[i] = true;
            self.stack.push(op);
        }
    }
    fn pop(&mut self) -> Option<OpId> {
        let op = self.stack.pop()?;
        self.queued[op.index()] = false;
        Some(op)
    }
}

fn is_trivially_dead(body: &Body, op: OpId) -> bool {
    let d = body.op(op);
    d.has_trait(Trait::Pure)
        && !d.has_trait(Trait::Terminator)
        && body.results_unused(op)
        && d.inner.is_none()
}

/// A fingerprint of a body's structure (op names, attributes, result types,
/// and operands as (position of the defining op in the walk, result index))
/// for cycle detection. Op ids are not part of it: rewrites create new ops, so
/// a rule pair that recreates an earlier state must still be recognised.
fn fingerprint(body: &Body) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    let ops = body.all_ops(WalkOrder::Pre);
    let mut position = vec![usize::MAX; body.op_capacity()];
    for (i, &o) in ops.iter().enumerate() {
        position[o.index()] = i;
    }
    for &op in &ops {
        let d = body.op(op);
        d.name.hash(&mut h);
        d.attrs.hash(&mut h);
        body.result_types(op).hash(&mut h);
        for &v in d.operands() {
            match body.defining_op(v) {
                Some(o) => {
                    let k = body.op(o).results().iter().position(|&r| r == v);
                    (0u8, position[o.index()], k).hash(&mut h)
                }
                None => (1u8, v.0).hash(&mut h),
            }
        }
    }
    h.finish()
}

fn run_body(
    ctx: &Context,
    body: &mut Body,
    patterns: &PatternSet,
    cfg: &GreedyConfig,
) -> Result<GreedyStats, String> {
    let mut stats = GreedyStats::default();
    let mut constants: HashMap<Attribute, ValueId> = HashMap::new();
    let mut seen_states: HashSet<u64> = HashSet::new();
    for iter in 0..cfg.max_iterations.max(1) {
        stats.iterations = iter + 1;
        let before = stats.rewrites + stats.folds + stats.erased;
        let mut iteration_applied: HashMap<String, usize> = HashMap::new();
        run_iteration(
            ctx,
            body,
            patterns,
            cfg,
            &mut constants,
            &mut stats,
            &mut iteration_applied,
        )?;
        let changed = stats.rewrites + stats.folds + stats.erased != before;
        if !changed {
            stats.converged = true;
            break;
        }
        if cfg.max_num_rewrites.is_some_and(|m| stats.rewrites >= m) {
            break;
        }
        let fp = fingerprint(body);
        if !seen_states.insert(fp) {
            return Err(format!(
                "patterns rewrite in a cycle (the IR returned to an earlier state); involved: {}",
                names_by_count(&iteration_applied)
            ));
        }
        if iter + 1 == cfg.max_iterations {
            // Best effort, as MLIR's canonicalizer: stop with the work done so
            // far; only test-convergence makes this an error.
            if cfg.test_convergence {
                return Err(format!(
                    "greedy rewriting did not converge in {} iterations; still applying: {}",
                    cfg.max_iterations,
                    names_by_count(&iteration_applied)
                ));
            }
            break;
        }
    }
    if cfg.test_convergence && stats.converged {
        let mut extra = GreedyStats::default();
        let mut applied = HashMap::new();
        run_iteration(
            ctx,
            body,
            patterns,
            cfg,
            &mut constants,
            &mut extra,
            &mut applied,
        )?;
        if extra.rewrites + extra.folds + extra.erased > 0 {
            return Err(format!(
                "rewriting reported convergence but more changes apply (not a fixed point): {}",
                if applied.is_empty() {
                    "folding/dead-code erasure".to_string()
                } else {
                    names_by_count(&applied)
                }
            ));
        }
    }
    Ok(stats)
}

fn names_by_count(m: &HashMap<String, usize>) -> String {
    let mut v: Vec<_> = m.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter()
        .map(|(k, n)| format!("{k} ({n}×)"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn run_iteration(
    ctx: &Context,
    body: &mut Body,
    patterns: &PatternSet,
    cfg: &GreedyConfig,
    constants: &mut HashMap<Attribute, ValueId>,
    stats: &mut GreedyStats,
    applied: &mut HashMap<String, usize>,
) -> Result<(), String> {
    let order = if cfg.top_down {
        WalkOrder::Pre
    } else {
        WalkOrder::Post
    };
    let mut ops = body.all_ops(order);
    // The stack pops from the end. Top-down: reverse so the first op in
    // pre-order is tried first. Bottom-up (as in MLIR): the last op of the
    // post-order first, so users are tried before the ops defining their operands.
    if cfg.top_down {
        ops.reverse();
    }
    let mut wl = Worklist {
        stack: vec![],
        queued: vec![false; body.op_capacity()],
    };
    for op in ops {
        wl.push(op);
    }
    // Runaway guard: a pattern pair undoing each other would loop forever in one iteration.
    let budget = 64 * (body.op_capacity() + 64);
    let mut work = 0usize;
    while let Some(op) = wl.pop() {
        if !body.op(op).is_alive() {
            continue;
        }
        work += 1;
        if work > budget {
            return Err(format!(
                "rewriting does not terminate (over {budget} rewrites in one iteration); the patterns involved: {}",
                names_by_count(applied)
            ));
        }
        if cfg.dce && is_trivially_dead(body, op) {
            let defs: Vec<OpId> = body
                .op(op)
                .operands()
                .iter()
                .filter_map(|&v| body.defining_op(v))
                .collect();
            body.erase_op(op);
            stats.erased += 1;
            for d in defs {
                wl.push(d);
            }
            continue;
        }
        if cfg.fold && share_constant(body, op, constants) {
            stats.folds += 1;
            continue;
        }
        let mut rw = Rewriter::new(ctx, body, constants);
        rw.set_insertion_point_before(op);
        let mut changed = false;
        if cfg.fold && !rw.is_constant(op) && try_fold(&mut rw, op, cfg.fold_size_limit)? {
            stats.folds += 1;
            changed = true;
        }
        if !changed {
            let name = rw.body.op(op).name;
            for p in patterns.for_op(name) {
                if p.match_and_rewrite(op, &mut rw)? {
                    stats.rewrites += 1;
                    count(&mut stats.applied, p.name());
                    count(applied, p.name());
                    changed = true;
                    break;
                }
            }
        }
        let events = rw.take_events();
        if changed {
            requeue(body, &mut wl, op, events);
        }
        if cfg.max_num_rewrites.is_some_and(|m| stats.rewrites >= m) {
            break;
        }
    }
    Ok(())
}

/// One more application of the pattern `name` (allocating its key only once).
fn count(applied: &mut HashMap<String, usize>, name: &str) {
    match applied.get_mut(name) {
        Some(n) => *n += 1,
        None => {
            applied.insert(name.to_string(), 1);
        }
    }
}

/// Constant sharing: a constant equal to one already known (same value and
/// type) in the same body is replaced by it, if that one dominates it
/// (both in the entry block, the known one first).
fn share_constant(body: &mut Body, op: OpId, constants: &mut HashMap<Attribute, ValueId>) -> bool {
    let d = body.op(op);
    if !d.has_trait(Trait::ConstantLike) || d.results().len() != 1 {
        return false;
    }
    let Some(value) = d.attr("value") else {
        return false;
    };
    let me = d.results()[0];
    let block = d.parent_block();
    match constants.get(&value).copied() {
        Some(prev) if prev != me => {
            let Some(p) = body.defining_op(prev) else {
                return false;
            };
            let pd = body.op(p);
            let same_block = pd.is_alive() && pd.parent_block() == block;
            let entry = block
                .and_then(|b| body.block_parent(b))
                .and_then(|r| body.entry_block(r))
                == block;
            if same_block
                && entry
                && body.position_in_block(p) < body.position_in_block(op)
                && body.value_type(prev) == body.value_type(me)
            {
                body.replace_op(op, &[prev]);
                return true;
            }
            // The known one is gone, or sits in a nested region while this one
            // is in the body's entry block: this one represents the value now.
            if !pd.is_alive() || (in_root_entry(body, op) && !in_root_entry(body, p)) {
                constants.insert(value, me);
            }
            false
        }
        Some(_) => false,
        None => {
            constants.insert(value, me);
            false
        }
    }
}

/// Whether `op` is in the entry block of the body's first root region (where
/// constants dominate every other op of the body).
pub(crate) fn in_root_entry(body: &Body, op: OpId) -> bool {
    let entry = body
        .root_regions()
        .first()
        .and_then(|&r| body.entry_block(r));
    entry.is_some() && body.op(op).parent_block() == entry
}

fn requeue(body: &Body, wl: &mut Worklist, op: OpId, events: Vec<Event>) {
    if body.op(op).is_alive() {
        wl.push(op);
    }
    for e in events {
        match e {
            Event::Inserted(o) | Event::Modified(o) => {
                if body.op(o).is_alive() {
                    wl.push(o);
                    for r in body.op(o).results() {
                        for u in body.users(*r) {
                            wl.push(u);
                        }
                    }
                }
            }
            Event::Erased(_) => {}
        }
    }
}
