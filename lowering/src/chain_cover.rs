//! Stream assignment by minimum chain cover, as Nimble does.
//!
//! 1. Take the transitive reduction G' of the task DAG (petgraph `tred`):
//!    the dependencies that are not implied by others.
//! 2. Find a maximum matching M in the bipartite graph (tasks as sources ×
//!    tasks as sinks, one edge per edge of G'), by max flow (petgraph
//!    `dinics`, which is Hopcroft–Karp on unit capacities). A matched edge
//!    `u → v` puts `v` right after `u` on one stream. Size-preserving swaps
//!    then move the matching onto the edges with the least slack, so the
//!    critical path runs on one stream and its events fall where there is
//!    slack ([`prefer_critical_edges`]).
//! 3. The matched edges form `n − |M|` chains — a minimum path cover of G' —
//!    and every unmatched edge of G' crosses streams and needs one event: with
//!    maximum logical concurrency, `|E(G')| − |M|` synchronisations is the
//!    minimum (Nimble, Theorem 1).
//! 4. With `max-streams`, chains are packed onto that many streams by total
//!    cost (longest first onto the least loaded stream).
//! 5. Program order comes from list scheduling on the SoC cost model, and an
//!    event is added only where a cross-stream dependency is not already
//!    implied by earlier events (vector clocks). Event ids are reused once
//!    every wait of their previous record has happened before the new record.

use petgraph::algo::tred::{dag_to_toposorted_adjacency_list, dag_transitive_reduction_closure};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::IntoNeighbors;

#[derive(Clone, Debug)]
pub struct StreamOptions {
    /// At most this many streams (0: as many as the chain cover needs).
    pub max_streams: usize,
    /// Put everything on stream 0 in the given order.
    pub single_stream: bool,
    /// Cost of one event, µs (for list scheduling).
    pub event_us: f64,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            max_streams: 0,
            single_stream: false,
            event_us: 0.0,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct StreamPlan {
    /// Stream of each task.
    pub stream: Vec<usize>,
    pub num_streams: usize,
    /// Task indices in program order.
    pub order: Vec<usize>,
    /// Events each task waits for before it runs.
    pub waits: Vec<Vec<i64>>,
    /// Events each task records after it runs.
    pub records: Vec<Vec<i64>>,
    /// Distinct event ids.
    pub num_events: usize,
    /// Number of waits (cross-stream synchronisations).
    pub syncs: usize,
    /// Number of records.
    pub recorded: usize,
    /// Streams of the minimum chain cover (n − |M|).
    pub min_streams: usize,
    /// Synchronisations of the minimum chain cover (|E(G')| − |M|).
    pub min_syncs: usize,
    /// Edges of the transitive reduction.
    pub reduced_edges: usize,
    /// Simulated makespan (µs) of the program on its streams.
    pub makespan_us: f64,
    /// Longest path through the DAG (µs): no schedule is faster.
    pub critical_path_us: f64,
    /// Sum of all task durations (µs): the one-stream makespan.
    pub serial_us: f64,
}

/// The transitive reduction of a DAG given as predecessor lists (every
/// predecessor index smaller than its task's): successor lists of G'.
pub fn transitive_reduction(deps: &[Vec<usize>]) -> Result<Vec<Vec<usize>>, String> {
    let n = deps.len();
    let mut g = DiGraph::<(), ()>::with_capacity(n, 0);
    let nodes: Vec<NodeIndex> = (0..n).map(|_| g.add_node(())).collect();
    for (t, ps) in deps.iter().enumerate() {
        for &p in ps {
            if p >= t {
                return Err(format!(
                    "task #{t} depends on task #{p}, which does not come before it"
                ));
            }
            g.update_edge(nodes[p], nodes[t], ());
        }
    }
    let (list, revmap) = dag_to_toposorted_adjacency_list::<_, u32>(&g, &nodes);
    let (tred, _closure) = dag_transitive_reduction_closure(&list);
    // `list` numbers nodes by topological position; map back.
    let mut back = vec![0usize; n];
    for (old, &new) in revmap.iter().enumerate() {
        back[new as usize] = old;
    }
    let mut succ = vec![vec![]; n];
    for i in 0..n {
        for x in tred.neighbors(i as u32) {
            succ[back[i]].push(back[x as usize]);
        }
    }
    for s in &mut succ {
        s.sort_unstable();
    }
    Ok(succ)
}

/// Maximum bipartite matching over the edges `u → v` of `succ`: `next[u] = Some(v)`.
pub fn max_matching(succ: &[Vec<usize>]) -> Vec<Option<usize>> {
    let n = succ.len();
    let mut net = DiGraph::<(), u32>::new();
    let src = net.add_node(());
    let sink = net.add_node(());
    let outs: Vec<NodeIndex> = (0..n).map(|_| net.add_node(())).collect();
    let ins: Vec<NodeIndex> = (0..n).map(|_| net.add_node(())).collect();
    for i in 0..n {
        net.add_edge(src, outs[i], 1);
        net.add_edge(ins[i], sink, 1);
    }
    let mut pair_edges = vec![];
    for (u, vs) in succ.iter().enumerate() {
        for &v in vs {
            let e = net.add_edge(outs[u], ins[v], 1);
            pair_edges.push((e, u, v));
        }
    }
    let (_, flows) = petgraph::algo::dinics(&net, src, sink);
    let mut next = vec![None; n];
    for (e, u, v) in pair_edges {
        if flows[e.index()] > 0 {
            next[u] = Some(v);
        }
    }
    next
}

/// Among maximum matchings, prefer one whose chains follow the critical
/// path: an event on it delays the whole program, one off it is absorbed by
/// slack. Swaps that keep the matching's size (so the chain cover stays
/// minimal) replace a matched edge by an unmatched one with less slack:
/// `u→x` by `u→v` when `v` has no matched predecessor (and symmetrically),
/// or the pair `u→x`, `y→v` by `u→v`, `y→x` when `y→x` is an edge.
/// Slack of `u→v`: latest start of `v` minus earliest finish of `u`.
pub fn prefer_critical_edges(
    succ: &[Vec<usize>],
    preds: &[Vec<usize>],
    dur: &[f64],
    next: &mut [Option<usize>],
) {
    let n = succ.len();
    // Tasks are topologically ordered (predecessors come first).
    let mut eft = vec![0.0f64; n];
    for v in 0..n {
        let est = preds[v].iter().map(|&u| eft[u]).fold(0.0, f64::max);
        eft[v] = est + dur[v];
    }
    let end = eft.iter().copied().fold(0.0, f64::max);
    let mut lst = vec![0.0f64; n];
    for u in (0..n).rev() {
        let lft = succ[u].iter().map(|&v| lst[v]).fold(end, f64::min);
        lst[u] = lft - dur[u];
    }
    let slack = |u: usize, v: usize| lst[v] - eft[u];
    let mut prev: Vec<Option<usize>> = vec![None; n];
    for (u, m) in next.iter().enumerate() {
        if let Some(v) = *m {
            prev[v] = Some(u);
        }
    }
    let mut edges: Vec<(usize, usize)> = succ
        .iter()
        .enumerate()
        .flat_map(|(u, vs)| vs.iter().map(move |&v| (u, v)))
        .collect();
    edges.sort_by(|a, b| slack(a.0, a.1).total_cmp(&slack(b.0, b.1)).then(a.cmp(b)));
    const EPS: f64 = 1e-9;
    for _ in 0..3 {
        let mut changed = false;
        for &(u, v) in &edges {
            if next[u] == Some(v) {
                continue;
            }
            let s = slack(u, v);
            match (next[u], prev[v]) {
                (Some(x), None) if s + EPS < slack(u, x) => {
                    prev[x] = None;
                    next[u] = Some(v);
                    prev[v] = Some(u);
                    changed = true;
                }
                (None, Some(y)) if s + EPS < slack(y, v) => {
                    next[y] = None;
                    next[u] = Some(v);
                    prev[v] = Some(u);
                    changed = true;
                }
                (Some(x), Some(y))
                    if succ[y].binary_search(&x).is_ok()
                        && s + slack(y, x) + EPS < slack(u, x) + slack(y, v) =>
                {
                    next[u] = Some(v);
                    prev[v] = Some(u);
                    next[y] = Some(x);
                    prev[x] = Some(y);
                    changed = true;
                }
                _ => {}
            }
        }
        if !changed {
            break;
        }
    }
}

/// Assign streams, order and events to tasks with dependencies `deps`
/// (predecessors, all earlier in the list) and durations `dur` (µs): chains
/// from a maximum matching of the transitive reduction, chains packed onto
/// streams, list scheduling, then the fewest events the vector clocks need.
pub fn assign(
    deps: &[Vec<usize>],
    dur: &[f64],
    opts: &StreamOptions,
) -> Result<StreamPlan, String> {
    let n = deps.len();
    let succ = transitive_reduction(deps)?;
    let reduced_edges: usize = succ.iter().map(Vec::len).sum();
    let mut preds = vec![vec![]; n];
    for (u, vs) in succ.iter().enumerate() {
        for &v in vs {
            preds[v].push(u);
        }
    }
    let mut next = max_matching(&succ);
    prefer_critical_edges(&succ, &preds, dur, &mut next);
    let matched = next.iter().filter(|x| x.is_some()).count();
    let (chain, chains) = chains_of(&next);
    let (stream, num_streams) = streams_of_chains(&chain, &chains, dur, opts);
    let (order, makespan) = if num_streams == 1 {
        // A single stream: the given order.
        ((0..n).collect(), dur.iter().sum())
    } else {
        list_schedule(deps, dur, &stream, num_streams, opts.event_us)?
    };
    let ev = events(&order, &preds, &stream, num_streams);
    // Critical path.
    let mut longest = vec![0.0f64; n];
    for t in 0..n {
        let start = deps[t].iter().map(|&p| longest[p]).fold(0.0, f64::max);
        longest[t] = start + dur[t];
    }
    Ok(StreamPlan {
        stream,
        num_streams,
        order,
        waits: ev.waits,
        records: ev.records,
        num_events: ev.num_events,
        syncs: ev.syncs,
        recorded: ev.recorded,
        min_streams: n - matched,
        min_syncs: reduced_edges - matched,
        reduced_edges,
        makespan_us: makespan,
        critical_path_us: longest.iter().copied().fold(0.0, f64::max),
        serial_us: dur.iter().sum(),
    })
}

/// Chains: follow matched edges (`next`) from the chain heads. Returns each
/// task's chain and the chains' tasks.
fn chains_of(next: &[Option<usize>]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let n = next.len();
    let mut has_prev = vec![false; n];
    for v in next.iter().flatten() {
        has_prev[*v] = true;
    }
    let mut chain = vec![usize::MAX; n];
    let mut chains: Vec<Vec<usize>> = vec![];
    for (h, &prev) in has_prev.iter().enumerate() {
        if prev {
            continue;
        }
        let id = chains.len();
        let mut c = vec![];
        let mut cur = Some(h);
        while let Some(u) = cur {
            chain[u] = id;
            c.push(u);
            cur = next[u];
        }
        chains.push(c);
    }
    (chain, chains)
}

/// Each task's stream: one per chain, or the chains packed by cost onto
/// the allowed number of streams; streams numbered by their first task.
fn streams_of_chains(
    chain: &[usize],
    chains: &[Vec<usize>],
    dur: &[f64],
    opts: &StreamOptions,
) -> (Vec<usize>, usize) {
    let limit = if opts.single_stream {
        1
    } else if opts.max_streams == 0 {
        chains.len().max(1)
    } else {
        opts.max_streams
    };
    let mut stream_of_chain: Vec<usize> = (0..chains.len()).collect();
    if chains.len() > limit {
        let mut by_cost: Vec<usize> = (0..chains.len()).collect();
        let cost = |c: usize| -> f64 { chains[c].iter().map(|&t| dur[t]).sum() };
        by_cost.sort_by(|&a, &b| cost(b).total_cmp(&cost(a)).then(a.cmp(&b)));
        let mut load = vec![0.0f64; limit];
        for c in by_cost {
            let s = (0..limit)
                .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
                .unwrap_or(0);
            load[s] += cost(c);
            stream_of_chain[c] = s;
        }
    }
    let mut stream: Vec<usize> = chain.iter().map(|&c| stream_of_chain[c]).collect();
    // Number streams by their first task.
    let mut renum: Vec<Option<usize>> = vec![None; limit.max(chains.len())];
    let mut count = 0;
    for s in stream.iter_mut() {
        let r = *renum[*s].get_or_insert_with(|| {
            count += 1;
            count - 1
        });
        *s = r;
    }
    (stream, count.max(1))
}

/// Program order by list scheduling on the streams: the ready task that can
/// start earliest (its stream free, its predecessors finished, `event_us`
/// for each cross-stream one) goes next. Returns the order and the makespan.
fn list_schedule(
    deps: &[Vec<usize>],
    dur: &[f64],
    stream: &[usize],
    num_streams: usize,
    event_us: f64,
) -> Result<(Vec<usize>, f64), String> {
    let n = deps.len();
    let mut finish = vec![0.0f64; n];
    let mut order = Vec::with_capacity(n);
    let mut makespan: f64 = 0.0;
    let mut remaining: Vec<usize> = deps.iter().map(|d| d.len()).collect();
    let mut dependents = vec![vec![]; n];
    for (t, ds) in deps.iter().enumerate() {
        for &p in ds {
            dependents[p].push(t);
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&t| remaining[t] == 0).collect();
    let mut free = vec![0.0f64; num_streams];
    while !ready.is_empty() {
        let est = |t: usize| -> f64 {
            let mut e = free[stream[t]];
            for &p in &deps[t] {
                let sync = if stream[p] != stream[t] {
                    event_us
                } else {
                    0.0
                };
                e = e.max(finish[p] + sync);
            }
            e
        };
        let (k, _) = ready
            .iter()
            .enumerate()
            .map(|(k, &t)| (k, (est(t), t)))
            .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0).then(a.1 .1.cmp(&b.1 .1)))
            .unwrap_or((0, (0.0, 0)));
        let t = ready.swap_remove(k);
        let start = est(t);
        finish[t] = start + dur[t];
        free[stream[t]] = finish[t];
        makespan = makespan.max(finish[t]);
        order.push(t);
        for &d in &dependents[t] {
            remaining[d] -= 1;
            if remaining[d] == 0 {
                ready.push(d);
            }
        }
    }
    if order.len() != n {
        return Err("the task graph has a cycle".into());
    }
    Ok((order, makespan))
}

/// The waits and records of each task, and their counts.
struct Events {
    waits: Vec<Vec<i64>>,
    records: Vec<Vec<i64>>,
    num_events: usize,
    syncs: usize,
    recorded: usize,
}

/// Events over the program order: a task waits for a predecessor on
/// another stream unless the vector clocks already order them; an event id
/// is reused once every wait of its latest record happened before.
fn events(order: &[usize], preds: &[Vec<usize>], stream: &[usize], num_streams: usize) -> Events {
    let n = order.len();
    let mut pos = vec![0usize; n];
    for (i, &t) in order.iter().enumerate() {
        pos[t] = i;
    }
    let mut vc = vec![vec![0u64; num_streams]; num_streams];
    let mut epoch = vec![0u64; n];
    let mut snap: Vec<Vec<u64>> = vec![vec![]; n];
    // For each task that records: the tasks waiting for that record.
    let mut waiters: Vec<Vec<usize>> = vec![vec![]; n];
    let mut wait_on: Vec<Vec<usize>> = vec![vec![]; n];
    for &t in order {
        let s = stream[t];
        let mut ps = preds[t].clone();
        ps.sort_by_key(|&p| std::cmp::Reverse(pos[p]));
        for p in ps {
            let sp = stream[p];
            if sp != s && vc[s][sp] < epoch[p] {
                for (x, &y) in vc[s].iter_mut().zip(&snap[p]) {
                    *x = (*x).max(y);
                }
                waiters[p].push(t);
                wait_on[t].push(p);
            }
        }
        vc[s][s] += 1;
        epoch[t] = vc[s][s];
        snap[t] = vc[s].clone();
    }
    // Event ids: reuse an id once all waits of its last record happened before.
    let mut ids: Vec<Vec<usize>> = vec![]; // id -> waiting tasks of its latest record
    let mut event_of = vec![None; n];
    for &u in order {
        if waiters[u].is_empty() {
            continue;
        }
        let free_id = ids
            .iter()
            .position(|ws| ws.iter().all(|&v| snap[u][stream[v]] >= epoch[v]));
        let id = match free_id {
            Some(i) => {
                ids[i] = waiters[u].clone();
                i
            }
            None => {
                ids.push(waiters[u].clone());
                ids.len() - 1
            }
        };
        event_of[u] = Some(id as i64);
    }
    let mut ev = Events {
        waits: vec![vec![]; n],
        records: vec![vec![]; n],
        num_events: ids.len(),
        syncs: 0,
        recorded: 0,
    };
    for t in 0..n {
        if let Some(e) = event_of[t] {
            ev.records[t].push(e);
            ev.recorded += 1;
        }
        for &p in &wait_on[t] {
            if let Some(e) = event_of[p] {
                ev.waits[t].push(e);
                ev.syncs += 1;
            }
        }
    }
    ev
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(deps: &[Vec<usize>]) -> StreamPlan {
        assign(deps, &vec![1.0; deps.len()], &StreamOptions::default()).unwrap()
    }

    #[test]
    fn chain_is_one_stream_without_events() {
        let p = plan(&[vec![], vec![0], vec![1], vec![2]]);
        assert_eq!((p.num_streams, p.num_events, p.syncs), (1, 0, 0));
    }

    #[test]
    fn fork_join_from_inputs_is_two_streams_one_event() {
        // b and c read model inputs; d joins them.
        let p = plan(&[vec![], vec![], vec![0, 1]]);
        assert_eq!((p.num_streams, p.num_events, p.syncs), (2, 1, 1));
        assert_eq!(p.min_syncs, 1);
    }

    #[test]
    fn diamond_is_two_streams_two_syncs() {
        let p = plan(&[vec![], vec![0], vec![0], vec![1, 2]]);
        assert_eq!((p.num_streams, p.syncs), (2, 2));
        assert_eq!(p.min_syncs, 2);
    }

    #[test]
    fn transitive_edges_need_no_event() {
        // 0 -> 1 -> 2 and 0 -> 2: the reduction drops 0 -> 2.
        let p = plan(&[vec![], vec![0], vec![0, 1]]);
        assert_eq!(p.reduced_edges, 2);
        assert_eq!((p.num_streams, p.syncs), (1, 0));
    }

    #[test]
    fn chains_follow_the_critical_path() {
        // 0 forks to a long task 2 and a short task 1; either edge gives a
        // minimum cover, but only 0→2 on one stream keeps the event off the
        // critical path.
        let deps = vec![vec![], vec![0], vec![0]];
        let dur = [1.0, 1.0, 10.0];
        let mut next = vec![Some(1), None, None];
        let succ = vec![vec![1, 2], vec![], vec![]];
        let preds = vec![vec![], vec![0], vec![0]];
        prefer_critical_edges(&succ, &preds, &dur, &mut next);
        assert_eq!(next, vec![Some(2), None, None]);
        let p = assign(
            &deps,
            &dur,
            &StreamOptions {
                event_us: 2.0,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(p.min_syncs, 1);
        assert_eq!(p.stream[0], p.stream[2]);
        assert!((p.makespan_us - p.critical_path_us).abs() < 1e-9, "{p:?}");
    }

    #[test]
    fn max_streams_packs_chains() {
        let deps = vec![vec![], vec![], vec![], vec![], vec![0, 1, 2, 3]];
        let p = assign(
            &deps,
            &[1.0; 5],
            &StreamOptions {
                max_streams: 2,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(p.num_streams, 2);
        assert_eq!(p.min_streams, 4);
        let single = assign(
            &deps,
            &[1.0; 5],
            &StreamOptions {
                single_stream: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!((single.num_streams, single.syncs), (1, 0));
    }
}
