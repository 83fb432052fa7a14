//! The `eqsat` pass.

use super::build::{rebuild, to_egraph};
use super::compile::compile;
use super::cost::CostModel;
use super::extract::{acyclic, dag_cost, greedy_dag};
use crate::library::library_rules;
use crate::rr::Rule;
use ge_ir::diagnostics::{Diagnostic, Pos, Severity};
use ge_ir::pass::{OptKind, OptionDef, Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::{Ident, OpData};
use ge_soc::Soc;
use std::collections::HashMap;
use std::time::{Duration, Instant};

pub static INFO: PassInfo = PassInfo {
    name: "eqsat",
    summary: "Equality saturation: explore equivalent graphs with the rule library and extract the cheapest",
    description: "Builds an e-graph of each function's dataflow, saturates it with the rule library \
                  (`rules=`), bounded by node, iteration and time limits, and extracts the program \
                  with the lowest cost under the SoC profile's roofline model (DAG-aware greedy \
                  extraction). The function is only replaced if the extracted cost is lower. \
                  `report=true` (or `ge-opt --eqsat-report`) prints iterations, e-graph size, stop \
                  reason, cost before/after and time per function.",
    anchor: Some("graph.func"),
    options: &[
        OptionDef { name: "node-limit", kind: OptKind::Int, default: "50000", doc: "stop when the e-graph has this many e-nodes" },
        OptionDef { name: "iter-limit", kind: OptKind::Int, default: "30", doc: "saturation iterations" },
        OptionDef { name: "time-limit-ms", kind: OptKind::Int, default: "1000", doc: "saturation time budget per function" },
        OptionDef { name: "multi-iters", kind: OptKind::Int, default: "2", doc: "iterations that also apply multi-root rules (TENSAT's k_multi): their matches multiply, so they run first and briefly" },
        OptionDef { name: "extract", kind: OptKind::Enum(&["greedy", "tree", "ilp"]), default: "greedy", doc: "extraction: DAG-aware greedy, egg's tree-cost extractor, or optimal ILP (needs the `ilp` build feature and CBC)" },
        OptionDef { name: "ilp-time-limit-ms", kind: OptKind::Int, default: "10000", doc: "time limit of the ILP solver per function (extract=ilp)" },
        OptionDef { name: "rules", kind: OptKind::List, default: "", doc: "only these rules or labels (default: the whole library)" },
        OptionDef { name: "soc", kind: OptKind::Str, default: "Ascend910B", doc: "SoC profile (name or JSON path) for the cost model" },
        OptionDef { name: "symbol-values", kind: OptKind::List, default: "", doc: "values of symbolic dims for costing, e.g. B=64 (default 1)" },
        OptionDef { name: "report", kind: OptKind::Bool, default: "false", doc: "print a report per function" },
    ],
};

/// `ge-opt --eqsat-report` turns on reporting for every eqsat pass.
#[derive(Debug, Default)]
pub struct ReportAll;

struct Eqsat {
    o: PassOptions,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Soc::load(o.str("soc"))?;
    if o.str("extract") == "ilp" && !super::ilp_available() {
        return Err("extract=ilp needs ge built with the ILP solver: \
                    `cargo build --features ge-rewrites/ilp` (Debian: coinor-libcbc-dev)"
            .into());
    }
    Ok(Box::new(Eqsat { o: o.clone() }))
}

/// The rules eqsat uses: library rules (all labels), filtered by names/labels.
pub fn eqsat_rules(ctx: &ge_ir::Context, filter: &[String]) -> Vec<Rule> {
    library_rules(ctx)
        .iter()
        .filter(|r| {
            filter.is_empty()
                || filter
                    .iter()
                    .any(|f| *f == r.name || r.labels.iter().any(|l| l == f))
        })
        .cloned()
        .collect()
}

impl Pass for Eqsat {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&self, op: &mut OpData, cx: &PassContext) -> PassResult {
        let t0 = Instant::now();
        let name = op
            .attr("sym_name")
            .and_then(|a| a.as_str())
            .unwrap_or("?")
            .to_string();
        let fail = |m: String| vec![Diagnostic::error(format!("eqsat: {m}"), Pos::Loc(op.loc))];
        let soc = Soc::load(self.o.str("soc")).map_err(fail)?;
        let mut symbols: HashMap<Ident, i64> = HashMap::new();
        for kv in self.o.list("symbol-values") {
            match kv.split_once('=').map(|(k, v)| (k, v.parse::<i64>())) {
                Some((k, Ok(v))) => {
                    symbols.insert(Ident::new(k), v);
                }
                _ => return Err(fail(format!("symbol-values: expected SYM=N, got '{kv}'"))),
            }
        }
        let cost = CostModel::new(soc, symbols);
        let loc = op.loc;
        let Some(body) = op.inner.as_deref_mut() else {
            return Ok(());
        };
        let report = self.o.bool("report") || cx.ctx.extension::<ReportAll>().is_some();
        let t = match to_egraph(cx.ctx, body) {
            Ok(t) => t,
            Err(why) => {
                cx.emit(Diagnostic::at_loc(
                    Severity::Remark,
                    format!("eqsat skipped @{name}: {why}"),
                    loc,
                ));
                return Ok(());
            }
        };
        let selected = eqsat_rules(cx.ctx, &self.o.list("rules"));
        let compiled = |keep: &dyn Fn(&Rule) -> bool| -> Vec<_> {
            selected
                .iter()
                .filter(|r| keep(r))
                .filter_map(|r| compile(cx.ctx, r).ok())
                .collect()
        };
        let all_rules = compiled(&|_| true);
        let single_rules = compiled(&|r| r.roots.len() == 1);
        // The input program's cost, measured before saturation merges classes.
        let cost_before = {
            let choice = t.original_choice();
            dag_cost(&t.egraph, &cost, &choice, &t.extraction_roots())
        };
        let node_limit = self.o.int("node-limit").max(1) as usize;
        let iter_limit = self.o.int("iter-limit").max(1) as usize;
        let time_limit = Duration::from_millis(self.o.int("time-limit-ms").max(1) as u64);
        let multi_iters = (self.o.int("multi-iters").max(0) as usize).min(iter_limit);
        // Phase 1: every rule, for `multi-iters` iterations; phase 2: single-root rules.
        let mut runner = egg::Runner::default()
            .with_egraph(t.egraph)
            .with_node_limit(node_limit)
            .with_iter_limit(multi_iters.max(1))
            .with_time_limit(time_limit)
            .run(if multi_iters > 0 {
                &all_rules
            } else {
                &single_rules
            });
        let mut iterations_done = runner.iterations.len();
        let phase1_stopped_hard = !matches!(
            runner.stop_reason,
            Some(egg::StopReason::IterationLimit(_)) | Some(egg::StopReason::Saturated)
        );
        if iter_limit > iterations_done && !phase1_stopped_hard {
            let left = time_limit.saturating_sub(t0.elapsed());
            let eg = std::mem::take(&mut runner.egraph);
            runner = egg::Runner::default()
                .with_egraph(eg)
                .with_node_limit(node_limit)
                .with_iter_limit(iter_limit - iterations_done)
                .with_time_limit(left.max(Duration::from_millis(1)))
                .run(&single_rules);
            iterations_done += runner.iterations.len();
        }
        let iterations = iterations_done;
        let stop = match &runner.stop_reason {
            Some(egg::StopReason::Saturated) => "saturated".to_string(),
            Some(egg::StopReason::IterationLimit(n)) => format!("iteration limit ({n})"),
            Some(egg::StopReason::NodeLimit(n)) => format!("node limit ({n})"),
            // egg records the time elapsed when it noticed (after a whole
            // iteration, so load-dependent); the report names the budget.
            Some(egg::StopReason::TimeLimit(_)) => {
                format!("time limit ({} ms)", time_limit.as_millis())
            }
            Some(egg::StopReason::Other(o)) => o.clone(),
            None => "none".to_string(),
        };
        let t = super::build::Translated {
            egraph: runner.egraph,
            ..t
        };
        let roots = t.extraction_roots();
        let (choice, _) = match self.o.str("extract") {
            "tree" => (tree_choice(&t.egraph, &cost, &roots), 0.0),
            #[cfg(feature = "ilp")]
            "ilp" => {
                let limit = self.o.int("ilp-time-limit-ms").max(1) as f64 / 1e3;
                let choice = super::ilp::ilp_dag(&t.egraph, &cost, &roots, limit).map_err(fail)?;
                (choice, 0.0)
            }
            _ => greedy_dag(&t.egraph, &cost, &roots),
        };
        let cost_after = dag_cost(&t.egraph, &cost, &choice, &roots);
        let mut improved = acyclic(&t.egraph, &choice, &roots) && cost_after + 1e-9 < cost_before;
        if improved {
            // Rebuilt on a copy: a selection that cannot be built leaves the
            // function as it was (with a remark), never half rewritten.
            let mut rebuilt = body.clone();
            match rebuild(cx.ctx, &mut rebuilt, &t, &choice) {
                Ok(()) => *body = rebuilt,
                Err(why) => {
                    improved = false;
                    cx.emit(Diagnostic::at_loc(
                        Severity::Remark,
                        format!("eqsat kept @{name} unchanged: {why}"),
                        loc,
                    ));
                }
            }
        }
        if report {
            let final_cost = if improved { cost_after } else { cost_before };
            let gain = if cost_before > 0.0 {
                100.0 * (cost_before - final_cost) / cost_before
            } else {
                0.0
            };
            cx.report(&format!(
                "eqsat @{name}: {iterations} iterations, {} e-nodes, {} e-classes, stop: {stop}, cost {cost_before:.3} us -> {final_cost:.3} us ({gain:.1}% gain), {:.1} ms\n",
                t.egraph.total_number_of_nodes(),
                t.egraph.number_of_classes(),
                t0.elapsed().as_secs_f64() * 1e3
            ));
        }
        Ok(())
    }
}

/// egg's tree-cost extraction: the best node of each class the roots reach.
/// egg panics when asked about a class it found no cost for (all its nodes
/// reach the class itself), so those are found first and left unselected —
/// `acyclic` then keeps the input program.
fn tree_choice(
    eg: &super::analysis::Graph,
    cost: &CostModel,
    roots: &[egg::Id],
) -> HashMap<egg::Id, super::lang::Node> {
    use egg::Language;
    // The classes with a finite-depth term: a fixpoint from the leaves.
    let mut costed = std::collections::HashSet::new();
    loop {
        let before = costed.len();
        for c in eg.classes() {
            if !costed.contains(&c.id) && c.iter().any(|n| n.all(|k| costed.contains(&eg.find(k))))
            {
                costed.insert(c.id);
            }
        }
        if costed.len() == before {
            break;
        }
    }
    let ext = egg::Extractor::new(eg, TreeCost(cost, eg));
    let mut choice = HashMap::new();
    let mut stack: Vec<egg::Id> = roots.to_vec();
    while let Some(c) = stack.pop() {
        let c = eg.find(c);
        if choice.contains_key(&c) || !costed.contains(&c) {
            continue;
        }
        let n = ext.find_best_node(c).clone();
        stack.extend(n.children().iter().copied());
        choice.insert(c, n);
    }
    choice
}

/// egg's tree-cost extraction with the same per-node costs.
struct TreeCost<'a>(&'a CostModel, &'a super::analysis::Graph);

impl egg::CostFunction<super::lang::Node> for TreeCost<'_> {
    type Cost = f64;
    fn cost<C>(&mut self, enode: &super::lang::Node, mut costs: C) -> f64
    where
        C: FnMut(egg::Id) -> f64,
    {
        use egg::Language;
        // Tree cost has no class context; cost the node in the class holding it.
        let class = self
            .1
            .lookup(enode.clone())
            .unwrap_or(egg::Id::from(0usize));
        let own = self.0.node_cost(self.1, class, enode);
        enode.children().iter().fold(own, |s, &c| s + costs(c))
    }
}
