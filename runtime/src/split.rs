//! Whether a kernel launch splits its work over the compute pool, decided by
//! measuring it (issue 17: 2-thread scaling).
//!
//! A parallel region pays off only when its work outweighs moving its data
//! between the cores, and what that costs depends on the machine — and, on a
//! virtual machine, on where the host puts the virtual CPUs at the moment: on
//! the AVX-512 VM of docs/benchmarks.md a 24 -> 144 1x1 convolution on 16x16
//! ran in 12 µs on one thread and in 12 µs or 36 µs on two, from one minute
//! to the next (a cache line's round trip between the two vCPUs: 80 ns to
//! 320 ns). No threshold on the work fits both. So each launch of a run with
//! more than one thread times itself both ways now and then and keeps the
//! faster: every [`PERIOD`] runs of a launch, its first [`TRIALS`] runs
//! alternate between splitting (the kernel's own rule: small work runs on its
//! caller anyway) and running on the calling thread alone, and the fastest of
//! each decides the runs up to the next period. Either way is the kernel's
//! own code at 1 or at N threads, whose results agree as a model's at 1 and
//! N threads do (`--threads`).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Runs of a launch between two calibrations.
pub const PERIOD: u32 = 512;
/// Timed runs at the start of each period, half of them split.
pub const TRIALS: u32 = 8;

/// Running alone is chosen when it took less than this share of the
/// split runs' time.
pub const MARGIN: f64 = 0.8;

/// Whether `alone_ns` beats `split_ns` by [`MARGIN`].
fn alone_wins(split_ns: u64, alone_ns: u64) -> bool {
    (alone_ns as f64) < MARGIN * split_ns as f64
}

/// How one run of a launch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Split over the pool, untimed.
    Split,
    /// On the calling thread alone, untimed.
    Alone,
    /// A calibration run: split, timed.
    TrySplit,
    /// A calibration run: alone, timed.
    TryAlone,
}

impl Mode {
    /// Whether this run uses the pool.
    pub fn splits(self) -> bool {
        matches!(self, Mode::Split | Mode::TrySplit)
    }

    /// Whether this run is timed ([`SplitChoice::record`]).
    pub fn timed(self) -> bool {
        matches!(self, Mode::TrySplit | Mode::TryAlone)
    }
}

/// The measured choice of one launch (shared by every run and session of
/// the model; the counters are relaxed: two runs at once may count once or
/// time the same mode twice, which only shifts a calibration).
#[derive(Debug)]
pub struct SplitChoice {
    runs: AtomicU32,
    split_ns: AtomicU64,
    alone_ns: AtomicU64,
    alone: AtomicBool,
}

impl Default for SplitChoice {
    fn default() -> SplitChoice {
        SplitChoice {
            runs: AtomicU32::new(0),
            split_ns: AtomicU64::new(u64::MAX),
            alone_ns: AtomicU64::new(u64::MAX),
            alone: AtomicBool::new(false),
        }
    }
}

impl SplitChoice {
    /// How this run of the launch runs.
    pub fn mode(&self) -> Mode {
        let r = self.runs.load(Relaxed);
        self.runs.store(r.wrapping_add(1), Relaxed);
        let phase = r % PERIOD;
        if phase == 0 {
            self.split_ns.store(u64::MAX, Relaxed);
            self.alone_ns.store(u64::MAX, Relaxed);
        }
        if phase < TRIALS {
            return match phase % 2 {
                0 => Mode::TrySplit,
                _ => Mode::TryAlone,
            };
        }
        if phase == TRIALS {
            let (s, a) = (self.split_ns.load(Relaxed), self.alone_ns.load(Relaxed));
            // Split unless running alone measured clearly faster: by more
            // than [`MARGIN`], so the noise of a few timed runs (another
            // stream's kernel on the other core) does not take a kernel
            // that splits well off the pool; where splitting loses, it
            // loses by far more (12 against 36 µs above).
            self.alone.store(alone_wins(s, a), Relaxed);
        }
        match self.alone.load(Relaxed) {
            true => Mode::Alone,
            false => Mode::Split,
        }
    }

    /// The time of a timed run.
    pub fn record(&self, mode: Mode, took: Duration) {
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        match mode {
            Mode::TrySplit => self.split_ns.fetch_min(ns, Relaxed),
            Mode::TryAlone => self.alone_ns.fetch_min(ns, Relaxed),
            Mode::Split | Mode::Alone => return,
        };
    }

    /// Whether the runs between calibrations run alone (the last decision).
    #[cfg(test)]
    pub fn runs_alone(&self) -> bool {
        self.alone.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibrate(c: &SplitChoice, split_us: u64, alone_us: u64) -> Vec<Mode> {
        (0..TRIALS + 2)
            .map(|_| {
                let m = c.mode();
                let us = if m.splits() { split_us } else { alone_us };
                c.record(m, Duration::from_micros(us));
                m
            })
            .collect()
    }

    #[test]
    fn the_faster_way_is_kept_until_the_next_period() {
        let c = SplitChoice::default();
        let modes = calibrate(&c, 36, 12);
        assert_eq!(modes[0], Mode::TrySplit);
        assert_eq!(modes[1], Mode::TryAlone);
        assert!(modes[..TRIALS as usize].iter().all(|m| m.timed()));
        assert_eq!(modes[TRIALS as usize..], [Mode::Alone, Mode::Alone]);
        assert!(c.runs_alone());
        // Untimed runs to the end of the period stay alone...
        for _ in TRIALS + 2..PERIOD {
            assert_eq!(c.mode(), Mode::Alone);
        }
        // ...and the next period measures again: now splitting wins.
        let modes = calibrate(&c, 8, 12);
        assert_eq!(modes[TRIALS as usize..], [Mode::Split, Mode::Split]);
        assert!(!c.runs_alone());
    }

    #[test]
    fn a_tie_or_a_small_lead_of_alone_splits() {
        for (split, alone) in [(10, 10), (10, 9)] {
            let c = SplitChoice::default();
            let modes = calibrate(&c, split, alone);
            assert_eq!(modes[TRIALS as usize], Mode::Split, "{split} vs {alone}");
        }
    }
}
