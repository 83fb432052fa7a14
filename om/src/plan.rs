//! Offset assignment: place buffers of known sizes in one arena so that no
//! two *conflicting* buffers (ones that may be live at the same time) share
//! a byte, using as small an arena as possible. The problem is NP-hard
//! (dynamic storage allocation); like GE's hybrid memory assigner and TFLite's
//! planners, several greedy strategies run and the smallest result wins.
//!
//! Conflicts are an arbitrary symmetric relation (with several streams,
//! lifetimes are not intervals of one timeline); each buffer also has a
//! program-order interval, used by the breadth/lifetime orderings and by the
//! lower bound.

/// A planning problem.
#[derive(Clone, Debug, Default)]
pub struct Problem {
    /// Sizes in bytes (multiples of `alignment`).
    pub sizes: Vec<u64>,
    /// `conflicts[i]`: buffers that may not overlap buffer `i` (symmetric).
    pub conflicts: Vec<Vec<usize>>,
    /// First and last program position at which each buffer is accessed.
    pub intervals: Vec<(usize, usize)>,
}

/// Offsets for every buffer and the arena size.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    pub offsets: Vec<u64>,
    pub size: u64,
    pub strategy: &'static str,
}

/// The strategies, by name.
pub const STRATEGIES: &[&str] = &[
    "greedy-by-size",
    "greedy-by-breadth",
    "greedy-by-lifetime",
    "first-fit",
    "order-search",
];

/// Place buffers one at a time in `order`: each at the offset (among the
/// gaps left by already-placed conflicting buffers) that fits best — the
/// smallest gap it fits in, or the top — or, with `first_fit`, the lowest.
fn place_in_order(p: &Problem, order: &[usize], first_fit: bool, name: &'static str) -> Solution {
    let n = p.sizes.len();
    let mut off: Vec<Option<u64>> = vec![None; n];
    let mut top = 0u64;
    let mut busy: Vec<(u64, u64)> = vec![];
    for &i in order {
        if off[i].is_some() {
            continue;
        }
        let size = p.sizes[i];
        busy.clear();
        busy.extend(
            p.conflicts[i]
                .iter()
                .filter_map(|&j| off[j].map(|o| (o, o + p.sizes[j])))
                .filter(|(a, b)| a < b),
        );
        busy.sort_unstable();
        let mut best: Option<(u64, u64)> = None; // (gap size, offset)
        let mut cursor = 0u64;
        let mut chosen = None;
        for &(a, b) in &busy {
            if a > cursor {
                let gap = a - cursor;
                if gap >= size {
                    if first_fit {
                        chosen = Some(cursor);
                        break;
                    }
                    if best.is_none_or(|(g, _)| gap < g) {
                        best = Some((gap, cursor));
                    }
                }
            }
            cursor = cursor.max(b);
        }
        let o = chosen.or(best.map(|(_, o)| o)).unwrap_or(cursor);
        off[i] = Some(o);
        top = top.max(o + size);
    }
    Solution {
        offsets: off.into_iter().map(|o| o.unwrap_or(0)).collect(),
        size: top,
        strategy: name,
    }
}

/// Greedy by size: largest first, best fit (TFLite's "greedy by size").
pub fn greedy_by_size(p: &Problem) -> Solution {
    let mut order: Vec<usize> = (0..p.sizes.len()).collect();
    order.sort_by(|&a, &b| {
        p.sizes[b]
            .cmp(&p.sizes[a])
            .then(p.intervals[a].0.cmp(&p.intervals[b].0))
            .then(a.cmp(&b))
    });
    place_in_order(p, &order, false, "greedy-by-size")
}

/// Greedy by breadth: visit program positions by how many bytes are live
/// there (widest first) and place the buffers live at each, largest first
/// (TFLite's "greedy by breadth").
pub fn greedy_by_breadth(p: &Problem) -> Solution {
    let n = p.sizes.len();
    let positions = p.intervals.iter().map(|iv| iv.1 + 1).max().unwrap_or(0);
    let mut live: Vec<Vec<usize>> = vec![vec![]; positions];
    let mut breadth = vec![0u64; positions];
    for i in 0..n {
        let (a, b) = p.intervals[i];
        for t in a..=b.min(positions.saturating_sub(1)) {
            live[t].push(i);
            breadth[t] += p.sizes[i];
        }
    }
    let mut steps: Vec<usize> = (0..positions).collect();
    steps.sort_by(|&a, &b| breadth[b].cmp(&breadth[a]).then(a.cmp(&b)));
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for t in steps {
        let mut here = live[t].clone();
        here.sort_by(|&a, &b| p.sizes[b].cmp(&p.sizes[a]).then(a.cmp(&b)));
        for i in here {
            if !seen[i] {
                seen[i] = true;
                order.push(i);
            }
        }
    }
    order.extend((0..n).filter(|&i| !seen[i]));
    place_in_order(p, &order, false, "greedy-by-breadth")
}

/// Greedy by lifetime: longest-lived first, then largest, best fit.
pub fn greedy_by_lifetime(p: &Problem) -> Solution {
    let mut order: Vec<usize> = (0..p.sizes.len()).collect();
    let len = |i: usize| p.intervals[i].1 - p.intervals[i].0;
    order.sort_by(|&a, &b| {
        len(b)
            .cmp(&len(a))
            .then(p.sizes[b].cmp(&p.sizes[a]))
            .then(a.cmp(&b))
    });
    place_in_order(p, &order, false, "greedy-by-lifetime")
}

/// First fit in program order (what an online allocator would do).
pub fn first_fit(p: &Problem) -> Solution {
    let mut order: Vec<usize> = (0..p.sizes.len()).collect();
    order.sort_by(|&a, &b| {
        p.intervals[a]
            .0
            .cmp(&p.intervals[b].0)
            .then(p.sizes[b].cmp(&p.sizes[a]))
            .then(a.cmp(&b))
    });
    place_in_order(p, &order, true, "first-fit")
}

/// Local search over placement orders: starting from greedy-by-size's
/// order, swap a few random pairs and place again, keeping any order that
/// is no worse (plateaus are walked), for a budget of placements that keeps
/// the total work near `WORK` conflict visits, stopping early at a lower
/// bound (LOAD or the heaviest clique found). Greedy orders are stuck when
/// one early large buffer splits the arena badly; a swap lets it go
/// elsewhere. Deterministic (fixed seed).
pub fn order_search(p: &Problem) -> Solution {
    let lb = load_bound(p).max(clique_bound(p));
    // Debug builds (the test suite) search less; release builds are ~20x faster.
    const WORK: usize = if cfg!(debug_assertions) {
        2_000_000
    } else {
        120_000_000
    };
    let n = p.sizes.len();
    let edges: usize = p.conflicts.iter().map(Vec::len).sum::<usize>() + n;
    let trials = (WORK / edges.max(1)).min(2_000);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        p.sizes[b]
            .cmp(&p.sizes[a])
            .then(p.intervals[a].0.cmp(&p.intervals[b].0))
            .then(a.cmp(&b))
    });
    let mut best = place_in_order(p, &order, false, "order-search");
    if n < 2 || best.size <= lb {
        return best;
    }
    let mut rng: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |m: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % m as u64) as usize
    };
    let mut cand = order.clone();
    for _ in 0..trials {
        cand.copy_from_slice(&order);
        for _ in 0..1 + next(3) {
            let (a, b) = (next(n), next(n));
            cand.swap(a, b);
        }
        let s = place_in_order(p, &cand, false, "order-search");
        if s.size <= best.size {
            best = s;
            order.copy_from_slice(&cand);
            if best.size <= lb {
                break; // optimal: nothing is smaller than a lower bound
            }
        }
    }
    best
}

/// No reuse at all: every buffer at its own offset, one after the other in
/// program order (ATC's `--disable_reuse_memory=1`, for debugging a plan).
pub fn no_reuse(p: &Problem) -> Solution {
    let mut order: Vec<usize> = (0..p.sizes.len()).collect();
    order.sort_by_key(|&i| (p.intervals[i].0, i));
    let mut offsets = vec![0; p.sizes.len()];
    let mut top = 0u64;
    for i in order {
        offsets[i] = top;
        top += p.sizes[i];
    }
    Solution {
        offsets,
        size: top,
        strategy: "no-reuse",
    }
}

/// The arena size each strategy reached.
pub type StrategySizes = Vec<(&'static str, u64)>;

/// Run one strategy by name (`best` runs them all and keeps the smallest).
pub fn run(p: &Problem, strategy: &str) -> Result<(Solution, StrategySizes), String> {
    let all: Vec<Solution> = match strategy {
        "best" => vec![
            greedy_by_size(p),
            greedy_by_breadth(p),
            greedy_by_lifetime(p),
            first_fit(p),
            order_search(p),
        ],
        "order-search" => vec![order_search(p)],
        "greedy-by-size" => vec![greedy_by_size(p)],
        "greedy-by-breadth" => vec![greedy_by_breadth(p)],
        "greedy-by-lifetime" => vec![greedy_by_lifetime(p)],
        "first-fit" => vec![first_fit(p)],
        // Nothing to compact: the point is that no two buffers share a byte.
        "no-reuse" => {
            let s = no_reuse(p);
            let sizes = vec![(s.strategy, s.size)];
            return Ok((s, sizes));
        }
        s => {
            return Err(format!(
                "unknown memory strategy '{s}' (expected best, {}, no-reuse)",
                STRATEGIES.join(", ")
            ))
        }
    };
    // Compaction is the expensive part: only for results above the bound
    // that are within 5% of the best raw result (the others cannot win).
    let lb = load_bound(p).max(clique_bound(p));
    let raw_best = all.iter().map(|s| s.size).min().unwrap_or(0);
    let all: Vec<Solution> = all
        .into_iter()
        .map(|s| {
            if s.size > lb && s.size as f64 <= raw_best as f64 * 1.05 {
                compact(p, s)
            } else {
                s
            }
        })
        .collect();
    let sizes = all.iter().map(|s| (s.strategy, s.size)).collect();
    let best = all.into_iter().min_by_key(|s| s.size).unwrap_or(Solution {
        offsets: vec![],
        size: 0,
        strategy: "none",
    });
    Ok((best, sizes))
}

/// Improve a solution by moving buffers down: highest-ending first, each to
/// the lowest offset where it fits among its conflicts, until nothing moves
/// (a few rounds). Never makes the arena larger.
pub fn compact(p: &Problem, mut s: Solution) -> Solution {
    let n = p.sizes.len();
    let mut busy: Vec<(u64, u64)> = vec![];
    for _ in 0..3 {
        let mut moved = false;
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| {
            (s.offsets[b] + p.sizes[b])
                .cmp(&(s.offsets[a] + p.sizes[a]))
                .then(a.cmp(&b))
        });
        for i in order {
            busy.clear();
            busy.extend(
                p.conflicts[i]
                    .iter()
                    .map(|&j| (s.offsets[j], s.offsets[j] + p.sizes[j]))
                    .filter(|(a, b)| a < b),
            );
            busy.sort_unstable();
            let mut cursor = 0u64;
            let mut at = None;
            for &(a, b) in &busy {
                if a >= cursor + p.sizes[i] {
                    at = Some(cursor);
                    break;
                }
                cursor = cursor.max(b);
            }
            let at = at.unwrap_or(cursor);
            if at < s.offsets[i] {
                s.offsets[i] = at;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    s.size = (0..n).map(|i| s.offsets[i] + p.sizes[i]).max().unwrap_or(0);
    s
}

/// The LOAD lower bound: the most bytes live at one program position
/// (buffers live at the same position always conflict, so no plan is smaller).
pub fn load_bound(p: &Problem) -> u64 {
    let positions = p.intervals.iter().map(|iv| iv.1 + 2).max().unwrap_or(0);
    let mut delta = vec![0i128; positions + 1];
    for (i, &(a, b)) in p.intervals.iter().enumerate() {
        delta[a] += p.sizes[i] as i128;
        delta[b + 1] -= p.sizes[i] as i128;
    }
    let mut cur = 0i128;
    let mut best = 0i128;
    for d in delta {
        cur += d;
        best = best.max(cur);
    }
    best as u64
}

/// A lower bound from the conflict graph itself: the heaviest clique a greedy
/// search finds (buffers that pairwise conflict must all be disjoint, so any
/// clique's total size is a valid bound). With several streams, conflicts are
/// not intervals of one timeline and this can exceed [`load_bound`].
pub fn clique_bound(p: &Problem) -> u64 {
    let n = p.sizes.len();
    let words = n.div_ceil(64);
    // Adjacency as bit rows: the common neighbours of a growing clique are
    // one AND per member.
    let mut adj = vec![0u64; n * words];
    for (i, cs) in p.conflicts.iter().enumerate() {
        for &j in cs {
            adj[i * words + j / 64] |= 1 << (j % 64);
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| p.sizes[b].cmp(&p.sizes[a]).then(a.cmp(&b)));
    let mut best = 0u64;
    let mut common = vec![0u64; words];
    for &seed in order.iter().take(256) {
        common.copy_from_slice(&adj[seed * words..(seed + 1) * words]);
        let mut total = p.sizes[seed];
        for &c in &order {
            if common[c / 64] >> (c % 64) & 1 == 1 {
                total += p.sizes[c];
                for (x, y) in common.iter_mut().zip(&adj[c * words..(c + 1) * words]) {
                    *x &= y;
                }
            }
        }
        best = best.max(total);
    }
    best
}

/// Check a solution: every pair of conflicting buffers is disjoint.
pub fn check(p: &Problem, s: &Solution) -> Result<(), String> {
    for (i, cs) in p.conflicts.iter().enumerate() {
        let (a0, a1) = (s.offsets[i], s.offsets[i] + p.sizes[i]);
        if a1 > s.size {
            return Err(format!(
                "buffer {i} ends at {a1}, past the arena size {}",
                s.size
            ));
        }
        for &j in cs {
            let (b0, b1) = (s.offsets[j], s.offsets[j] + p.sizes[j]);
            if a0 < b1 && b0 < a1 && p.sizes[i] > 0 && p.sizes[j] > 0 {
                return Err(format!(
                    "conflicting buffers {i} [{a0}, {a1}) and {j} [{b0}, {b1}) overlap"
                ));
            }
        }
    }
    Ok(())
}

/// The workspace plan of a [`Replan`](crate::model::Replan) section for
/// one concrete shape, given each unit's bytes there: the greedy
/// strategies (not the local search — this runs when a shape is first seen),
/// the best compacted, and [`check`]ed — conflicting units disjoint, every
/// unit inside the arena, offsets aligned. The runtime's proof for models
/// with unbounded dims (offsets are not in the file for them).
pub fn replan(r: &crate::model::Replan, unit_bytes: &[u64]) -> Result<Solution, String> {
    if unit_bytes.len() != r.units.len() {
        return Err(format!(
            "replan: {} unit sizes for {} units",
            unit_bytes.len(),
            r.units.len()
        ));
    }
    let a = r.alignment.max(1);
    let sizes: Vec<u64> = unit_bytes
        .iter()
        .map(|&n| n.checked_next_multiple_of(a))
        .collect::<Option<_>>()
        .ok_or("replan: a unit is too large to address")?;
    // Every offset a strategy computes is at most the sum of all sizes.
    sizes
        .iter()
        .try_fold(0u64, |t, &n| t.checked_add(n))
        .ok_or("replan: the units are too large to address together")?;
    let p = Problem {
        sizes,
        conflicts: r
            .units
            .iter()
            .map(|u| u.conflicts.iter().map(|&j| j as usize).collect())
            .collect(),
        intervals: r
            .units
            .iter()
            .map(|u| (u.first as usize, u.last as usize))
            .collect(),
    };
    let best = [
        greedy_by_size(&p),
        greedy_by_breadth(&p),
        greedy_by_lifetime(&p),
        first_fit(&p),
    ]
    .into_iter()
    .min_by_key(|s| s.size)
    .ok_or("replan: no strategy")?;
    let s = compact(&p, best);
    check(&p, &s)?;
    if let Some(i) = s.offsets.iter().position(|&o| o % a != 0) {
        return Err(format!(
            "replan: unit {i} at offset {} is not {a}-byte aligned",
            s.offsets[i]
        ));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buffers on one timeline: conflicts = overlapping intervals.
    fn interval_problem(bufs: &[(u64, usize, usize)]) -> Problem {
        let n = bufs.len();
        let mut conflicts = vec![vec![]; n];
        for i in 0..n {
            for j in 0..n {
                if i != j && bufs[i].1 <= bufs[j].2 && bufs[j].1 <= bufs[i].2 {
                    conflicts[i].push(j);
                }
            }
        }
        Problem {
            sizes: bufs.iter().map(|b| b.0).collect(),
            conflicts,
            intervals: bufs.iter().map(|b| (b.1, b.2)).collect(),
        }
    }

    #[test]
    fn chain_reuses_two_buffers() {
        // a -> b -> c -> d, each live from its producer to its consumer.
        let p = interval_problem(&[(64, 0, 1), (64, 1, 2), (64, 2, 3), (64, 3, 4)]);
        for name in [
            "best",
            "greedy-by-size",
            "greedy-by-breadth",
            "greedy-by-lifetime",
            "first-fit",
        ] {
            let (s, _) = run(&p, name).unwrap();
            check(&p, &s).unwrap();
            assert_eq!(s.size, 128, "{name}");
        }
        assert_eq!(load_bound(&p), 128);
    }

    #[test]
    fn best_fit_fills_holes() {
        let p = interval_problem(&[(128, 0, 1), (64, 0, 3), (64, 2, 3), (64, 2, 3)]);
        let (s, _) = run(&p, "best").unwrap();
        check(&p, &s).unwrap();
        assert_eq!(s.size, load_bound(&p));
    }

    #[test]
    fn unknown_strategy_is_an_error() {
        assert!(run(&Problem::default(), "magic")
            .unwrap_err()
            .contains("unknown memory strategy 'magic'"));
    }
}
