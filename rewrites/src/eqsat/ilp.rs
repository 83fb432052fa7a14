//! ILP extraction (`eqsat{extract=ilp}`, cargo feature `ilp`): egg's
//! `LpExtractor` over CBC (Debian `coinor-libcbc-dev`) picks one node per
//! needed class minimising the summed node costs of the selected DAG — the
//! optimum the greedy extractor approximates — with cycles excluded and a
//! time limit (the best solution found so far is used when it runs out).

use super::analysis::{Graph, GraphAnalysis};
use super::cost::CostModel;
use super::lang::Node;
use egg::{Id, Language, LpCostFunction, LpExtractor};
use std::collections::HashMap;

/// Cost of nodes the model cannot cost: never chosen when anything else works.
const UNCOSTABLE: f64 = 1e12;

struct Costs<'a>(&'a CostModel);

impl LpCostFunction<Node, GraphAnalysis> for Costs<'_> {
    fn node_cost(&mut self, eg: &Graph, class: Id, node: &Node) -> f64 {
        let c = self.0.node_cost(eg, class, node);
        if c.is_finite() {
            c
        } else {
            UNCOSTABLE
        }
    }
}

/// The choice per class of an optimal (or, at the time limit, the best
/// found) extraction of `roots`; errors say why the solver gave none.
pub fn ilp_dag(
    eg: &Graph,
    cost: &CostModel,
    roots: &[Id],
    time_limit_s: f64,
) -> Result<HashMap<Id, Node>, String> {
    // egg panics when the solver fails or returns a cyclic term: contain it.
    let solved = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        LpExtractor::new(eg, Costs(cost)).solve_multiple_with_timeout(
            roots,
            good_lp::default_solver,
            time_limit_s,
        )
    }))
    .map_err(|p| {
        let why = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "the ILP solver failed".into());
        format!("ILP extraction failed: {why}")
    })?;
    let (expr, _) = solved;
    // Map the term back to classes: each term node is a canonical e-node.
    let nodes = expr.as_ref();
    let mut class_of: Vec<Id> = Vec::with_capacity(nodes.len());
    let mut choice = HashMap::new();
    for n in nodes {
        let enode = n.clone().map_children(|c| class_of[usize::from(c)]);
        let class = eg
            .lookup(enode.clone())
            .ok_or("ILP extraction returned a node that is not in the e-graph")?;
        class_of.push(class);
        choice.insert(class, enode);
    }
    Ok(choice)
}
