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
    /// Set bits, in order (cost proportional to the number of set bits).
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            let mut rest = bits;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let b = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(w * 64 + b)
            })
        })
    }
    fn contains(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
}

/// DAG-aware greedy extraction. Returns the choice per class and the cost of
/// the DAG needed by `roots`. Nodes are processed from a worklist: when a
/// class improves, the nodes that use it are revisited (so the work follows
/// the graph instead of sweeping it until nothing changes).
pub fn greedy_dag(eg: &Graph, cost: &CostModel, roots: &[Id]) -> (HashMap<Id, Node>, f64) {
    let classes: Vec<Id> = eg.classes().map(|c| c.id).collect();
    let index: HashMap<Id, usize> = classes.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let n = classes.len();
    // Every node, with its class index and canonical child class indices.
    let mut nodes: Vec<(usize, &Node, Vec<usize>)> = vec![];
    let mut users: Vec<Vec<usize>> = vec![vec![]; n];
    for (ci, &c) in classes.iter().enumerate() {
        for node in eg[c].iter() {
            let kids: Vec<usize> = node
                .children()
                .iter()
                .map(|k| index[&eg.find(*k)])
                .collect();
            let ni = nodes.len();
            for &k in &kids {
                users[k].push(ni);
            }
            nodes.push((ci, node, kids));
        }
    }
    let mut own: Vec<f64> = vec![f64::INFINITY; n];
    let mut best: Vec<Option<(usize, Bits, f64)>> = vec![None; n];
    let mut queue: std::collections::VecDeque<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].2.is_empty())
        .collect();
    let mut queued = vec![false; nodes.len()];
    for &i in &queue {
        queued[i] = true;
    }
    let mut steps = 0usize;
    while let Some(ni) = queue.pop_front() {
        queued[ni] = false;
        steps += 1;
        if steps > 50 * nodes.len() + 1000 {
            break;
        }
        let (ci, node, kids) = &nodes[ni];
        if kids.iter().any(|&k| best[k].is_none()) {
            continue;
        }
        let nc = cost.node_cost(eg, classes[*ci], node);
        if !nc.is_finite() {
            continue;
        }
        let mut set = Bits::new(n);
        for &k in kids {
            if let Some((_, s, _)) = &best[k] {
                set.union(s);
            }
        }
        // A node whose children already need this class would be a cycle.
        if set.contains(*ci) {
            continue;
        }
        let total: f64 = nc + set.iter().map(|i| own[i]).sum::<f64>();
        set.set(*ci);
        let better = match &best[*ci] {
            None => true,
            Some((_, _, t)) => total + 1e-12 < *t,
        };
        if better {
            own[*ci] = nc;
            best[*ci] = Some((ni, set, total));
            for &u in &users[*ci] {
                if !queued[u] {
                    queued[u] = true;
                    queue.push_back(u);
                }
            }
        }
    }
    // Best node of every class (not only the needed ones): the sharing pass
    // below may switch to nodes whose children are outside the first selection.
    let mut choice: HashMap<Id, Node> = HashMap::new();
    for (i, b) in best.iter().enumerate() {
        if let Some((ni, _, _)) = b {
            choice.insert(classes[i], nodes[*ni].1.clone());
        }
    }
    improve_sharing(eg, cost, roots, &mut choice);
    let total = dag_cost(eg, cost, &choice, roots);
    (choice, total)
}

/// Greedy choices are made class by class and miss savings that only appear
/// when several classes share one new child (merged convs: both results read
/// slices of one bigger conv). For every class `k` that alternatives of two or
/// more selected classes use, try switching all of them at once and keep the
/// switch if the whole DAG gets cheaper. The choice stays acyclic: a switch
/// that would make a class reach itself is rejected.
fn improve_sharing(eg: &Graph, cost: &CostModel, roots: &[Id], choice: &mut HashMap<Id, Node>) {
    let roots: Vec<Id> = roots.iter().map(|r| eg.find(*r)).collect();
    for _round in 0..8 {
        let selected = reachable(eg, choice, &roots);
        let current = dag_cost(eg, cost, choice, &roots);
        // shared child class -> [(selected class, alternative node)]
        let mut by_child: HashMap<Id, Vec<(Id, Node)>> = HashMap::new();
        for &c in &selected {
            for node in eg[c].iter() {
                if choice.get(&c) == Some(node) {
                    continue;
                }
                for k in node.children() {
                    let k = eg.find(*k);
                    if !selected.contains(&k) {
                        let e = by_child.entry(k).or_default();
                        if !e.iter().any(|(cc, _)| *cc == c) {
                            e.push((c, node.clone()));
                        }
                    }
                }
            }
        }
        let mut improved = false;
        let mut candidates: Vec<(Id, Vec<(Id, Node)>)> =
            by_child.into_iter().filter(|(_, v)| v.len() >= 2).collect();
        candidates.sort_by_key(|(k, _)| *k);
        for (_, switches) in candidates {
            let mut trial = choice.clone();
            for (c, n) in &switches {
                trial.insert(*c, n.clone());
            }
            if !acyclic(eg, &trial, &roots) {
                continue;
            }
            let t = dag_cost(eg, cost, &trial, &roots);
            if t + 1e-9 < current {
                *choice = trial;
                improved = true;
                break;
            }
        }
        if !improved {
            break;
        }
    }
}

fn reachable(
    eg: &Graph,
    choice: &HashMap<Id, Node>,
    roots: &[Id],
) -> std::collections::HashSet<Id> {
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<Id> = roots.to_vec();
    while let Some(c) = stack.pop() {
        if seen.insert(c) {
            if let Some(n) = choice.get(&c) {
                stack.extend(n.children().iter().map(|k| eg.find(*k)));
            }
        }
    }
    seen
}

/// Whether the choice restricted to what `roots` need is a DAG with every class chosen.
pub fn acyclic(eg: &Graph, choice: &HashMap<Id, Node>, roots: &[Id]) -> bool {
    // 0 = unvisited, 1 = on stack, 2 = done
    let mut state: HashMap<Id, u8> = HashMap::new();
    let mut stack: Vec<(Id, bool)> = roots.iter().map(|&r| (r, false)).collect();
    while let Some((c, leaving)) = stack.pop() {
        if leaving {
            state.insert(c, 2);
            continue;
        }
        match state.get(&c) {
            Some(2) => continue,
            Some(1) => return false,
            _ => {}
        }
        let Some(n) = choice.get(&c) else {
            return false;
        };
        state.insert(c, 1);
        stack.push((c, true));
        for k in n.children() {
            let k = eg.find(*k);
            match state.get(&k) {
                Some(1) => return false,
                Some(2) => {}
                _ => stack.push((k, false)),
            }
        }
    }
    true
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
