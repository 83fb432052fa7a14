//! Whether a run releases the GIL (issue 20).
//!
//! Releasing the GIL around a run and taking it back costs a fixed
//! ~0.1–0.2 µs (docs/benchmarks.md): nothing for a model that runs for
//! milliseconds, a few percent of a model that runs for a few
//! microseconds — which no other Python thread could use anyway. The rule
//! ([`Gil::Auto`], the default of `Session.run` and `Session.runner()`): a
//! run releases the GIL unless the last timed run of the same session (or
//! runner) took less than [`HOLD_BELOW_NS`]. The first runs are timed,
//! then every [`RETIME`]th, so a model whose runs grow (another input
//! shape) releases again within that many calls; a run is timed inside,
//! without the GIL's release and re-acquisition. Holding the GIL is
//! correct for any caller — a run never calls back into Python — it only
//! keeps other Python threads waiting, here for less than 20 µs at a time
//! (their switch interval is 5 ms). `release_gil=True` / `False` forces
//! either.

use pyo3::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// A run shorter than this (last timed) holds the GIL: releasing it would
/// cost ~1 % or more of the run.
pub const HOLD_BELOW_NS: u64 = 20_000;
/// After the first [`TIMED_FIRST`] calls, every `RETIME`th call is timed.
pub const RETIME: u64 = 64;
const TIMED_FIRST: u64 = 4;

/// What a session or runner does with the GIL while the model runs.
pub enum Gil {
    Release,
    Hold,
    /// By the last timed run (see the module doc).
    Auto {
        last_ns: AtomicU64,
        calls: AtomicU64,
    },
}

impl Gil {
    /// `release_gil=` of the Python API: `None` is [`Gil::Auto`].
    pub fn of(release: Option<bool>) -> Gil {
        match release {
            Some(true) => Gil::Release,
            Some(false) => Gil::Hold,
            None => Gil::Auto {
                // Unknown until timed: release.
                last_ns: AtomicU64::new(u64::MAX),
                calls: AtomicU64::new(0),
            },
        }
    }

    /// Whether the next run releases the GIL.
    pub fn releases(&self) -> bool {
        match self {
            Gil::Release => true,
            Gil::Hold => false,
            Gil::Auto { last_ns, .. } => last_ns.load(Relaxed) >= HOLD_BELOW_NS,
        }
    }

    /// Run `f` (a model run, which never needs the GIL) with the GIL
    /// released or held by the rule (a failed run is not timed: it may
    /// have stopped early).
    pub fn run<T: Send, E: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce() -> Result<T, E> + Send,
    ) -> Result<T, E> {
        let timer = match self {
            Gil::Auto { calls, .. } => {
                // A load and a store, not an atomic add: two threads'
                // calls may count once, which only moves the next timed
                // run — and a locked add costs as much as the rest of
                // this function on a call of a few microseconds.
                let n = calls.load(Relaxed);
                calls.store(n.wrapping_add(1), Relaxed);
                n < TIMED_FIRST || n % RETIME == 0
            }
            _ => false,
        };
        let run = move || {
            let t0 = timer.then(Instant::now);
            let r = f();
            if let (Some(t0), Gil::Auto { last_ns, .. }, true) = (t0, self, r.is_ok()) {
                let ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
                last_ns.store(ns, Relaxed);
            }
            r
        };
        match self.releases() {
            true => py.detach(run),
            false => run(),
        }
    }

    /// The nanoseconds of the last timed run (`None`: none yet, or the
    /// GIL is forced either way).
    pub fn last_ns(&self) -> Option<u64> {
        match self {
            Gil::Auto { last_ns, .. } => Some(last_ns.load(Relaxed)).filter(|&n| n != u64::MAX),
            _ => None,
        }
    }

    /// For `__repr__`: `None` for the rule.
    pub fn forced(&self) -> Option<bool> {
        match self {
            Gil::Release => Some(true),
            Gil::Hold => Some(false),
            Gil::Auto { .. } => None,
        }
    }
}
