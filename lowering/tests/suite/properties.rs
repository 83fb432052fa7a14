//! Properties of the lowering stages on random graphs:
//!
//! - memory plans always pass the independent checker (`verify-memory`),
//!   whatever the streams and strategy, and are never below the LOAD bound;
//! - the stream program respects every data dependency (replayed with vector
//!   clocks);
//! - the whole `atc` pipeline preserves what the interpreter computes, and so
//!   does a round trip through the `.om` format.

use crate::common;

use common::*;
use ge_lowering::memory_plan::strategies::{self, Problem};
use ge_lowering::sync::Schedule;
use proptest::prelude::*;

fn ops() -> impl Strategy<Value = Vec<(u8, u16, u16)>> {
    prop::collection::vec((any::<u8>(), any::<u16>(), any::<u16>()), 1..18)
}

fn outs() -> impl Strategy<Value = Vec<u16>> {
    prop::collection::vec(any::<u16>(), 0..4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn memory_plans_pass_the_checker(ops in ops(), outs in outs(), streams in 0usize..4, strategy in 0usize..5, sym in any::<bool>()) {
        let text = random_graph(&ops, &outs, sym);
        let mut m = parse(&text);
        let strat = ["best", "greedy-by-size", "greedy-by-breadth", "greedy-by-lifetime", "first-fit"][strategy];
        let streams = if streams == 0 { "single-stream".to_string() } else { format!("max-streams={}", streams * 2 - 2) };
        let pipeline = format!(
            "builtin.module(fuse-kernels, partition-engines, select-formats, assign-streams{{{streams}}}, plan-memory{{strategy={strat}}}, verify-memory, emit-tasks, verify-memory)"
        );
        if let Err(e) = run(&mut m, &pipeline) {
            return Err(TestCaseError::fail(format!("{e}\n{text}")));
        }
    }

    #[test]
    fn stream_programs_respect_every_dependency(ops in ops(), outs in outs(), max in 0usize..4) {
        let text = random_graph(&ops, &outs, false);
        let mut m = parse(&text);
        let pipeline = format!("builtin.module(fuse-kernels, partition-engines, assign-streams{{max-streams={max}}})");
        run(&mut m, &pipeline).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let mb = m.body();
        let f = m.lookup_symbol("main").ok_or_else(|| TestCaseError::fail("no main"))?;
        let fd = mb.op(f);
        let body = fd.inner.as_deref().ok_or_else(|| TestCaseError::fail("no body"))?;
        let block = ge_lowering::funcs::func_block(fd).ok_or_else(|| TestCaseError::fail("no block"))?;
        let g = ge_lowering::taskgraph::TaskGraph::build(body, block, &Default::default())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let sched: Schedule = ge_lowering::memory_plan::schedule_of(body, &g.tasks).map_err(TestCaseError::fail)?;
        for (t, deps) in g.deps.iter().enumerate() {
            for &p in deps {
                prop_assert!(sched.hb(p, t), "task {t} may start before its input's producer {p}\n{}", print(&m));
            }
        }
    }

    #[test]
    fn atc_preserves_semantics(ops in ops(), outs in outs(), sym in any::<bool>(), seed in any::<u64>()) {
        let text = random_graph(&ops, &outs, sym);
        let original = parse(&text);
        let want = interpret(&original, inputs(&original, seed)).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let mut m = parse(&text);
        run(&mut m, "atc").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let got = interpret(&m, inputs(&original, seed)).map_err(|e| TestCaseError::fail(format!("{e}\n{}", print(&m))))?;
        same(&want, &got).map_err(|e| TestCaseError::fail(format!("{e}\n{text}\n{}", print(&m))))?;
        // And through an .om file and back.
        let om = ge_lowering::om::from_module(m.body(), Some(&m), &ge_lowering::om::OmOptions { soc: "Ascend910B".into(), ..Default::default() })
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let bytes = ge_om::format::to_bytes(&om).map_err(TestCaseError::fail)?;
        let parsed = ge_om::parse(&bytes).map_err(|e| TestCaseError::fail(e.0))?;
        prop_assert_eq!(parsed.to_model(), om);
        let back = ge_lowering::om::to_module(ctx(), &parsed).map_err(TestCaseError::fail)?;
        let again = interpret(&back, inputs(&original, seed)).map_err(|e| TestCaseError::fail(format!("{e}\n{}", print(&back))))?;
        same(&want, &again).map_err(TestCaseError::fail)?;
    }

    /// Random interval lifetimes: every strategy gives a valid plan, never
    /// below the LOAD bound, and `best` is the smallest of them.
    #[test]
    fn strategies_are_valid_and_bounded(bufs in prop::collection::vec((1u64..64, 0usize..30, 0usize..8), 1..60)) {
        let n = bufs.len();
        let iv: Vec<(usize, usize)> = bufs.iter().map(|&(_, s, l)| (s, s + l)).collect();
        let mut conflicts = vec![vec![]; n];
        for i in 0..n {
            for j in 0..n {
                if i != j && iv[i].0 <= iv[j].1 && iv[j].0 <= iv[i].1 {
                    conflicts[i].push(j);
                }
            }
        }
        let p = Problem { sizes: bufs.iter().map(|b| b.0 * 64).collect(), conflicts, intervals: iv };
        let lb = strategies::load_bound(&p);
        let (best, all) = strategies::run(&p, "best").map_err(TestCaseError::fail)?;
        strategies::check(&p, &best).map_err(TestCaseError::fail)?;
        prop_assert!(best.size >= lb);
        prop_assert!(best.size >= strategies::clique_bound(&p));
        // The order search starts from greedy-by-size's order and keeps only no-worse orders.
        prop_assert!(strategies::order_search(&p).size <= strategies::greedy_by_size(&p).size);
        for (name, size) in all {
            let (s, _) = strategies::run(&p, name).map_err(TestCaseError::fail)?;
            strategies::check(&p, &s).map_err(TestCaseError::fail)?;
            // Alone, a strategy's plan is always compacted; within `best` only
            // if it can still win — so alone it is never larger.
            prop_assert!(s.size <= size);
            prop_assert!(best.size <= size);
        }
    }
}
