//! Extraction: pick one node per needed class. DAG-aware greedy (a shared
//! subgraph is paid once: a class's cost set is the union of its children's
//! sets), plus egg's tree-cost extractor for comparison. Selection is
//! well-founded (a node is chosen only after all its children have a finite
//! cost), so the result is always acyclic even when the e-graph has cycles.

use super::analysis::Graph;
use super::cost::CostModel;
use super::lang::Node;
use egg::{Id, Language};
use std::collections::HashMap;

/// Fixed-size bitset over class indices.
#[derive(Clone)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn union(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= *b;
        }
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits & (1 << b) != 0)
                .map(move |b| w * 64 + b)
        })
    }
}

/// DAG-aware greedy extraction. Returns the choice per class and the cost of
/// the DAG needed by `roots`.
pub fn greedy_dag(eg: &Graph, cost: &CostModel, roots: &[Id]) -> (HashMap<Id, Node>, f64) {
    let classes: Vec<Id> = eg.classes().map(|c| c.id).collect();
    let index: HashMap<Id, usize> = classes.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let n = classes.len();
    let mut own: Vec<f64> = vec![f64::INFINITY; n];
    let mut best: Vec<Option<(Node, Bits, f64)>> = vec![None; n];
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds < 10_000 {
        changed = false;
        rounds += 1;
        for (ci, &c) in classes.iter().enumerate() {
            for node in eg[c].iter() {
                if node
                    .children()
                    .iter()
                    .any(|k| best[index[&eg.find(*k)]].is_none())
                {
                    continue;
                }
                let nc = cost.node_cost(eg, c, node);
                if !nc.is_finite() {
                    continue;
                }
                let mut set = Bits::new(n);
                for k in node.children() {
                    if let Some((_, s, _)) = &best[index[&eg.find(*k)]] {
                        set.union(s);
                    }
                }
                // A node whose children already need this class would be a cycle.
                if set.iter().any(|i| i == ci) {
                    continue;
                }
                set.set(ci);
                let total: f64 = set.iter().map(|i| if i == ci { nc } else { own[i] }).sum();
                let better = match &best[ci] {
                    None => true,
                    Some((_, _, t)) => total + 1e-12 < *t,
                };
                if better {
                    own[ci] = nc;
                    best[ci] = Some((node.clone(), set, total));
                    changed = true;
                }
            }
        }
    }
    let mut choice = HashMap::new();
    let mut need = Bits::new(n);
    for r in roots {
        if let Some((_, s, _)) = &best[index[&eg.find(*r)]] {
            need.union(s);
        }
    }
    let mut total = 0.0;
    for i in need.iter() {
        if let Some((node, _, _)) = &best[i] {
            choice.insert(classes[i], node.clone());
            total += own[i];
        }
    }
    (choice, total)
}

/// Cost of the DAG reachable from `roots` under a given choice.
pub fn dag_cost(eg: &Graph, cost: &CostModel, choice: &HashMap<Id, Node>, roots: &[Id]) -> f64 {
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<Id> = roots.iter().map(|r| eg.find(*r)).collect();
    let mut total = 0.0;
    while let Some(c) = stack.pop() {
        if !seen.insert(c) {
            continue;
        }
        if let Some(n) = choice.get(&c) {
            total += cost.node_cost(eg, c, n);
            stack.extend(n.children().iter().map(|k| eg.find(*k)));
        }
    }
    total
}
