//! The `eqsat` pass.

use super::analysis::{Graph, GraphAnalysis};
use super::build::{rebuild, to_egraph};
use super::compile::compile;
use super::cost::CostModel;
use super::extract::{acyclic, dag_cost, greedy_dag};
use super::lang::Node;
use crate::library::library_rules;
use crate::rr::Rule;
use ge_dialects::graph::func::Func;
use ge_ir::diagnostics::{Diagnostic, Pos, Severity};
use ge_ir::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
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
    anchor: Some(Func::NAME),
    options: EqsatOptions::DEFS,
};

#[derive(ge_ir::PassOptions)]
struct EqsatOptions {
    /// stop when the e-graph has this many e-nodes
    #[option("node-limit", default = 50000)]
    node_limit: i64,
    /// saturation iterations
    #[option("iter-limit", default = 30)]
    iter_limit: i64,
    /// saturation time budget per function
    #[option("time-limit-ms", default = 1000)]
    time_limit_ms: i64,
    /// iterations that also apply multi-root rules (TENSAT's k_multi): their matches multiply, so they run first and briefly
    #[option("multi-iters", default = 2)]
    multi_iters: i64,
    /// extraction: DAG-aware greedy, egg's tree-cost extractor, or optimal ILP (needs the `ilp` build feature and CBC)
    #[option("extract", default = "greedy", one_of = ["greedy", "tree", "ilp"])]
    extract: String,
    /// time limit of the ILP solver per function (extract=ilp)
    #[cfg_attr(not(feature = "ilp"), allow(dead_code))]
    #[option("ilp-time-limit-ms", default = 10000)]
    ilp_time_limit_ms: i64,
    /// only these rules or labels (default: the whole library)
    #[option("rules")]
    rules: Vec<String>,
    /// SoC profile (name or JSON path) for the cost model
    #[option("soc", default = "Ascend910B")]
    soc: String,
    /// values of symbolic dims for costing, e.g. B=64 (default 1)
    #[option("symbol-values")]
    symbol_values: Vec<String>,
    /// print a report per function
    #[option("report", default = false)]
    report: bool,
}

/// `ge-opt --eqsat-report` turns on reporting for every eqsat pass.
#[derive(Debug, Default)]
pub struct ReportAll;

struct Eqsat {
    o: EqsatOptions,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    let o = EqsatOptions::from_options(o);
    Soc::load(o.soc.as_str())?;
    if o.extract.as_str() == "ilp" && !super::ilp_available() {
        return Err("extract=ilp needs ge built with the ILP solver: \
                    `cargo build --features ge-rewrites/ilp` (Debian: coinor-libcbc-dev)"
            .into());
    }
    Ok(Box::new(Eqsat { o }))
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
        let soc = Soc::load(self.o.soc.as_str()).map_err(fail)?;
        let symbols = symbol_values(&self.o.symbol_values).map_err(fail)?;
        let cost = CostModel::new(soc, symbols);
        let loc = op.loc;
        let Some(body) = op.inner.as_deref_mut() else {
            return Ok(());
        };
        let report = self.o.report || cx.ctx.extension::<ReportAll>().is_some();
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
        // The input program's cost, measured before saturation merges classes.
        let cost_before = {
            let choice = t.original_choice();
            dag_cost(&t.egraph, &cost, &choice, &t.extraction_roots())
        };
        let (runner, iterations) = self.saturate(cx.ctx, t.egraph, t0);
        let stop = self.stop_reason(&runner.stop_reason);
        let t = super::build::Translated {
            egraph: runner.egraph,
            ..t
        };
        let roots = t.extraction_roots();
        let choice = self.extract(&t.egraph, &cost, &roots).map_err(fail)?;
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

/// `symbol-values=B=8,S=128` as a map.
fn symbol_values(given: &[String]) -> Result<HashMap<Ident, i64>, String> {
    let mut symbols = HashMap::new();
    for kv in given {
        match kv.split_once('=').map(|(k, v)| (k, v.parse::<i64>())) {
            Some((k, Ok(v))) => {
                symbols.insert(Ident::new(k), v);
            }
            _ => return Err(format!("symbol-values: expected SYM=N, got '{kv}'")),
        }
    }
    Ok(symbols)
}

impl Eqsat {
    /// Saturate `egraph` within the limits: every rule for `multi-iters`
    /// iterations, then the single-root rules. The last runner and the
    /// iterations of both phases.
    fn saturate(
        &self,
        ctx: &ge_ir::Context,
        egraph: Graph,
        t0: Instant,
    ) -> (egg::Runner<Node, GraphAnalysis>, usize) {
        let selected = eqsat_rules(ctx, &self.o.rules);
        let compiled = |keep: &dyn Fn(&Rule) -> bool| -> Vec<_> {
            selected
                .iter()
                .filter(|r| keep(r))
                .filter_map(|r| compile(ctx, r).ok())
                .collect()
        };
        let all_rules = compiled(&|_| true);
        let single_rules = compiled(&|r| r.roots.len() == 1);
        let node_limit = self.o.node_limit.max(1) as usize;
        let iter_limit = self.o.iter_limit.max(1) as usize;
        let time_limit = self.time_limit();
        let multi_iters = (self.o.multi_iters.max(0) as usize).min(iter_limit);
        // Phase 1: every rule, for `multi-iters` iterations; phase 2: single-root rules.
        let mut runner = egg::Runner::default()
            .with_egraph(egraph)
            .with_node_limit(node_limit)
            .with_iter_limit(multi_iters.max(1))
            .with_time_limit(time_limit)
            .run(if multi_iters > 0 {
                &all_rules
            } else {
                &single_rules
            });
        let mut iterations = runner.iterations.len();
        let phase1_stopped_hard = !matches!(
            runner.stop_reason,
            Some(egg::StopReason::IterationLimit(_)) | Some(egg::StopReason::Saturated)
        );
        if iter_limit > iterations && !phase1_stopped_hard {
            let left = time_limit.saturating_sub(t0.elapsed());
            let eg = std::mem::take(&mut runner.egraph);
            runner = egg::Runner::default()
                .with_egraph(eg)
                .with_node_limit(node_limit)
                .with_iter_limit(iter_limit - iterations)
                .with_time_limit(left.max(Duration::from_millis(1)))
                .run(&single_rules);
            iterations += runner.iterations.len();
        }
        (runner, iterations)
    }

    fn time_limit(&self) -> Duration {
        Duration::from_millis(self.o.time_limit_ms.max(1) as u64)
    }

    /// Why saturation stopped, for the report.
    fn stop_reason(&self, reason: &Option<egg::StopReason>) -> String {
        match reason {
            Some(egg::StopReason::Saturated) => "saturated".to_string(),
            Some(egg::StopReason::IterationLimit(n)) => format!("iteration limit ({n})"),
            Some(egg::StopReason::NodeLimit(n)) => format!("node limit ({n})"),
            // egg records the time elapsed when it noticed (after a whole
            // iteration, so load-dependent); the report names the budget.
            Some(egg::StopReason::TimeLimit(_)) => {
                format!("time limit ({} ms)", self.time_limit().as_millis())
            }
            Some(egg::StopReason::Other(o)) => o.clone(),
            None => "none".to_string(),
        }
    }

    /// The selection of the chosen extractor.
    fn extract(
        &self,
        egraph: &Graph,
        cost: &CostModel,
        roots: &[egg::Id],
    ) -> Result<HashMap<egg::Id, Node>, String> {
        Ok(match self.o.extract.as_str() {
            "tree" => tree_choice(egraph, cost, roots),
            #[cfg(feature = "ilp")]
            "ilp" => {
                let limit = self.o.ilp_time_limit_ms.max(1) as f64 / 1e3;
                super::ilp::ilp_dag(egraph, cost, roots, limit)?
            }
            _ => greedy_dag(egraph, cost, roots).0,
        })
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
