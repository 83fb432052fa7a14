//! The compute pool: `threads - 1` workers plus the thread that asks, which
//! all take indices of one parallel region at a time; and the compute
//! [`Slots`] of a run, which keep the threads computing its kernels — the
//! streams' own threads and the workers that help them — at `threads`.
//!
//! An inference runs hundreds of short parallel regions (a pointwise
//! convolution of MobileNetV2 takes 0.1 ms). Between them rayon's workers go
//! to sleep, and waking one costs about as much as such a region; so these
//! workers spin for a while after each region (yielding their core now and
//! then) and only park when nothing came for [`SPIN`], or as soon as every
//! core is wanted: the pool counts the threads that want one (stream
//! threads not blocked on an event or a slot, workers in a region), so a
//! spinning worker never keeps a woken stream off its core.
//!
//! A worker joins a region only with a free slot of the region's run, and
//! may join late: when a slot or a core comes free during a long region (a
//! stream's kernel ends, a stream blocks), idle workers look again. Up to
//! [`REGIONS`] regions are open at once (the streams of a run, two sessions
//! of one model), each joinable: a region that starts while another
//! stream's kernel holds the run's other slot gets the worker as soon as
//! that kernel ends (with one region at a time it ran on its caller's thread
//! to the end — Inception's 10 ms convolutions at 1x on 2 threads). Only a
//! region started while all [`REGIONS`] are open runs on its caller alone.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicPtr, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an idle worker spins (while a core is idle) before it parks.
pub const SPIN: Duration = Duration::from_micros(500);

/// Parallel regions open at once; a region started while all are taken
/// runs on its caller's thread.
pub const REGIONS: usize = 8;

type Body = dyn Fn(usize) -> Result<(), String> + Sync;

/// One parallel region, on the stack of the thread that runs it.
struct Job {
    n: usize,
    /// A take is `1 / parts` of the indices left (guided scheduling):
    /// neighbouring indices often write neighbouring memory (a channel of
    /// NC1HWC0 blocks shares its cache lines with the next), so each thread
    /// takes a contiguous run, long at first; the runs shrink to single
    /// indices at the end, so the threads finish together, and a worker that
    /// joins late (a slot came free) still finds its share — with fixed
    /// quarters, a worker joining SqueezeNet's 3x3 expand after the 1x1 one
    /// found at most one quarter left.
    parts: usize,
    /// The region's body; the pointer outlives no use (see [`Pool::run`]).
    f: *const Body,
    /// The run's slots: a worker computes on the region holding one.
    slots: *const Slots,
    next: AtomicUsize,
    err: Mutex<Option<String>>,
}

impl Job {
    /// Take indices until none are left (or one failed).
    fn work(&self) {
        // SAFETY: `f` is alive while the region runs (`Pool::run` waits
        // for every worker to leave it before returning).
        let f = unsafe { &*self.f };
        loop {
            let Some(run) = self.take() else {
                return;
            };
            let r = catch_unwind(AssertUnwindSafe(|| run.clone().try_for_each(f)))
                .unwrap_or_else(|_| Err(format!("kernel tasks {run:?} panicked")));
            if let Err(e) = r {
                self.next.store(self.n, Relaxed);
                if let Ok(mut slot) = self.err.lock() {
                    slot.get_or_insert(e);
                }
                return;
            }
        }
    }

    /// The next run of indices: `1 / parts` of those left, at least one.
    fn take(&self) -> Option<std::ops::Range<usize>> {
        let mut i0 = self.next.load(Relaxed);
        loop {
            if i0 >= self.n {
                return None;
            }
            let end = i0 + (self.n - i0).div_ceil(self.parts);
            match self.next.compare_exchange_weak(i0, end, Relaxed, Relaxed) {
                Ok(_) => return Some(i0..end),
                Err(now) => i0 = now,
            }
        }
    }

    fn exhausted(&self) -> bool {
        self.next.load(Relaxed) >= self.n
    }
}

/// One open region: its job, and the workers looking at or working on it.
struct Entry {
    /// Claimed by a region's caller from start to the moment no worker
    /// looks at it any more (so a worker never finds a later region here
    /// while the earlier one's caller still waits for it).
    owned: AtomicBool,
    /// The region in progress (null when none).
    job: AtomicPtr<Job>,
    /// Workers looking at or working on `job`.
    active: AtomicUsize,
}

struct Shared {
    /// Bumped when a region starts, when a core or slot may have come free
    /// during one, and to stop: parked workers wait for it to move.
    epoch: AtomicU64,
    /// The open regions.
    entries: [Entry; REGIONS],
    /// Open regions (a quick "nothing to do" for [`Shared::freed`]).
    open: AtomicUsize,
    /// Threads that want a core now: stream threads not blocked (see
    /// [`Pool::awake`]) and workers in a region.
    awake: AtomicIsize,
    threads: usize,
    stop: AtomicBool,
    sleeping: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Shared {
    /// Make parked workers look again.
    fn notify(&self) {
        self.epoch.fetch_add(1, SeqCst);
        if self.sleeping.load(SeqCst) > 0 {
            let _g = self.lock.lock();
            self.wake.notify_all();
        }
    }

    /// A core or a slot may have come free: with a region in progress, idle
    /// workers try to join it.
    fn freed(&self) {
        if self.open.load(SeqCst) > 0 {
            self.notify();
        }
    }

    /// Help an open region that has work left and its run a free slot;
    /// whether this worker did.
    fn try_join(&self) -> bool {
        if self.open.load(SeqCst) == 0 {
            return false;
        }
        self.entries.iter().any(|e| Shared::join(e, &self.awake))
    }

    /// Help the region of `e`, if any; whether this worker did.
    fn join(e: &Entry, awake: &AtomicIsize) -> bool {
        if e.job.load(Acquire).is_null() {
            return false;
        }
        // Counted in before `job` is read again: the region's caller clears
        // `job` and then waits for `active` to drop to zero, so a job read
        // here stays alive until the decrement below.
        e.active.fetch_add(1, SeqCst);
        let j = e.job.load(SeqCst);
        let mut joined = false;
        if !j.is_null() {
            // SAFETY: see above; the slots outlive the region.
            let (job, slots) = unsafe { (&*j, &*(*j).slots) };
            if !job.exhausted() && slots.try_take(1) == 1 {
                awake.fetch_add(1, SeqCst);
                job.work();
                awake.fetch_sub(1, SeqCst);
                slots.release(1);
                joined = true;
            }
        }
        e.active.fetch_sub(1, Release);
        joined
    }
}

pub struct Pool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

impl Pool {
    /// A pool of `threads` (the caller included) whose idle workers spin
    /// for `spin` before they park.
    pub fn new(threads: usize, spin: Duration) -> std::io::Result<Pool> {
        let shared = Arc::new(Shared {
            epoch: AtomicU64::new(0),
            entries: std::array::from_fn(|_| Entry {
                owned: AtomicBool::new(false),
                job: AtomicPtr::new(std::ptr::null_mut()),
                active: AtomicUsize::new(0),
            }),
            open: AtomicUsize::new(0),
            awake: AtomicIsize::new(0),
            threads: threads.max(1),
            stop: AtomicBool::new(false),
            sleeping: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        });
        let mut pool = Pool {
            shared: shared.clone(),
            workers: vec![],
        };
        for i in 1..threads.max(1) {
            let s = shared.clone();
            let h = std::thread::Builder::new()
                .name(format!("ge-compute-{i}"))
                .spawn(move || worker(&s, spin))?;
            pool.workers.push(h);
        }
        Ok(pool)
    }

    /// Threads that run a region (the caller included).
    pub fn threads(&self) -> usize {
        self.workers.len() + 1
    }

    /// Count this thread as wanting a core until the guard drops (a stream
    /// thread while it runs its stream).
    pub fn awake(&self) -> Awake<'_> {
        self.shared.awake.fetch_add(1, SeqCst);
        Awake(&self.shared)
    }

    /// Run `f`, which blocks (an event wait), with this thread not counted
    /// as wanting a core.
    pub fn asleep<R>(&self, f: impl FnOnce() -> R) -> R {
        self.shared.awake.fetch_sub(1, SeqCst);
        self.shared.freed();
        let r = f();
        self.shared.awake.fetch_add(1, SeqCst);
        r
    }

    /// Take a compute slot of `slots` for the kernel this thread is about
    /// to run (waiting while all are taken); it is given back on drop.
    pub fn enter<'a>(&'a self, slots: &'a Slots) -> Permit<'a> {
        if slots.try_take(1) == 0 {
            self.asleep(|| slots.acquire());
        }
        Permit { pool: self, slots }
    }

    /// Run `f(0..n)` on this thread and the workers that get a free slot of
    /// `slots` (the caller holds one of its own, from [`Pool::enter`]); the
    /// first error.
    pub fn run<'f>(
        &self,
        n: usize,
        f: &'f (dyn Fn(usize) -> Result<(), String> + Sync + 'f),
        slots: &Slots,
    ) -> Result<(), String> {
        let s = &*self.shared;
        // A free entry, or (all taken, or nobody to help) this thread alone.
        let entry = match self.workers.is_empty() || n < 2 {
            true => None,
            false => s.entries.iter().find(|e| {
                e.owned
                    .compare_exchange(false, true, SeqCst, Relaxed)
                    .is_ok()
            }),
        };
        let Some(e) = entry else {
            return (0..n).try_for_each(f);
        };
        // SAFETY (lifetime): workers use `f` only while counted in the
        // entry's `active` with its `job` set, and this function clears
        // `job` and waits for `active` to reach zero before it returns.
        let f: *const Body = unsafe {
            std::mem::transmute::<
                &'f (dyn Fn(usize) -> Result<(), String> + Sync + 'f),
                &'static Body,
            >(f)
        };
        let job = Job {
            n,
            parts: 2 * self.threads(),
            f,
            slots,
            next: AtomicUsize::new(0),
            err: Mutex::new(None),
        };
        e.job.store(&job as *const Job as *mut Job, SeqCst);
        s.open.fetch_add(1, SeqCst);
        s.notify();
        job.work();
        e.job.store(std::ptr::null_mut(), SeqCst);
        s.open.fetch_sub(1, SeqCst);
        // Wait for the workers to leave the region; a worker may be off its
        // core, so give the core away now and then while waiting.
        let mut spins = 0u32;
        while e.active.load(SeqCst) != 0 {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        e.owned.store(false, SeqCst);
        match job.err.into_inner() {
            Ok(Some(e)) => Err(e),
            _ => Ok(()),
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let s = &*self.shared;
        s.stop.store(true, SeqCst);
        {
            let _g = s.lock.lock();
            s.epoch.fetch_add(1, SeqCst);
            s.wake.notify_all();
        }
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
    }
}

fn worker(s: &Shared, spin: Duration) {
    let mut idle_since = Instant::now();
    let mut spins = 0u32;
    // The epoch of the last look at the region that did not let this
    // worker in: no new look until something changed.
    let mut refused: Option<u64> = None;
    loop {
        if s.stop.load(SeqCst) {
            return;
        }
        let epoch = s.epoch.load(SeqCst);
        if refused != Some(epoch) {
            if s.try_join() {
                idle_since = Instant::now();
                refused = None;
                continue;
            }
            refused = Some(epoch);
        }
        spins = spins.wrapping_add(1);
        if !spins.is_multiple_of(64) {
            std::hint::spin_loop();
            continue;
        }
        if idle_since.elapsed() < spin && s.awake.load(SeqCst) < s.threads as isize {
            std::thread::yield_now();
            continue;
        }
        // Park until the epoch moves past the one looked at above.
        let mut g = match s.lock.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        s.sleeping.fetch_add(1, SeqCst);
        while s.epoch.load(SeqCst) == epoch && !s.stop.load(SeqCst) {
            g = match s.wake.wait(g) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
        s.sleeping.fetch_sub(1, SeqCst);
        idle_since = Instant::now();
    }
}

/// A thread counted as wanting a core ([`Pool::awake`]).
pub struct Awake<'a>(&'a Shared);

impl Drop for Awake<'_> {
    fn drop(&mut self) {
        self.0.awake.fetch_sub(1, SeqCst);
        self.0.freed();
    }
}

/// The compute slots of one run: at most this many of its threads compute
/// kernels at once — stream threads (one slot each, from [`Pool::enter`])
/// and the workers their regions recruit — so `--threads N` means N cores
/// however many streams the model has.
pub struct Slots {
    free: AtomicUsize,
    waiting: AtomicUsize,
    lock: Mutex<()>,
    freed: Condvar,
}

impl Slots {
    pub fn new(n: usize) -> Slots {
        Slots {
            free: AtomicUsize::new(n.max(1)),
            waiting: AtomicUsize::new(0),
            lock: Mutex::new(()),
            freed: Condvar::new(),
        }
    }

    /// Take up to `max` free slots without waiting; how many were taken.
    fn try_take(&self, max: usize) -> usize {
        match self.free.fetch_update(SeqCst, SeqCst, |f| {
            (f > 0 && max > 0).then(|| f - f.min(max))
        }) {
            Ok(f) => f.min(max),
            Err(_) => 0,
        }
    }

    /// Take one slot, waiting for one to be given back.
    fn acquire(&self) {
        if self.try_take(1) == 1 {
            return;
        }
        let mut g = match self.lock.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        // Counted before the check: `release` adds to `free` before it reads
        // `waiting`, so one of the two sees the other (no lost wake-up).
        self.waiting.fetch_add(1, SeqCst);
        while self.try_take(1) == 0 {
            g = match self.freed.wait(g) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
        self.waiting.fetch_sub(1, SeqCst);
    }

    fn release(&self, n: usize) {
        if n == 0 {
            return;
        }
        self.free.fetch_add(n, SeqCst);
        if self.waiting.load(SeqCst) > 0 {
            let _g = self.lock.lock();
            self.freed.notify_all();
        }
    }
}

/// A compute slot held for one kernel ([`Pool::enter`]).
pub struct Permit<'a> {
    pool: &'a Pool,
    slots: &'a Slots,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.slots.release(1);
        self.pool.shared.freed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn every_index_runs_once_on_each_region() {
        for (threads, spin) in [(3, SPIN), (2, Duration::ZERO)] {
            every_index_once(
                &Pool::new(threads, spin).expect("pool"),
                &Slots::new(threads),
            );
        }
    }

    fn every_index_once(pool: &Pool, slots: &Slots) {
        for n in [0, 1, 2, 7, 1000] {
            let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            pool.run(
                n,
                &|i| {
                    hits[i].fetch_add(1, Relaxed);
                    Ok(())
                },
                slots,
            )
            .expect("run");
            assert!(hits.iter().all(|h| h.load(Relaxed) == 1), "n = {n}");
        }
    }

    /// Guided takes: a quarter of what is left on 2 threads, long runs
    /// first, single indices at the end.
    #[test]
    fn takes_shrink_to_single_indices() {
        let f = |_: usize| Ok(());
        let body: &Body = &f;
        let slots = Slots::new(2);
        let job = Job {
            n: 8,
            parts: 4,
            f: body,
            slots: &slots,
            next: AtomicUsize::new(0),
            err: Mutex::new(None),
        };
        let runs: Vec<_> = std::iter::from_fn(|| job.take()).collect();
        assert_eq!(runs, [0..2, 2..4, 4..5, 5..6, 6..7, 7..8]);
        assert!(job.exhausted());
    }

    #[test]
    fn errors_and_panics_come_back_as_errors() {
        let pool = Pool::new(2, SPIN).expect("pool");
        let slots = Slots::new(2);
        let e = pool.run(
            100,
            &|i| {
                if i == 37 {
                    Err("bad 37".into())
                } else {
                    Ok(())
                }
            },
            &slots,
        );
        assert_eq!(e, Err("bad 37".to_string()));
        let p = pool.run(
            100,
            &|i| {
                assert!(i != 5, "boom");
                Ok(())
            },
            &slots,
        );
        assert!(p.is_err_and(|m| m.contains("panicked")));
        // Still usable after both, with its slots given back.
        assert_eq!(pool.run(10, &|_| Ok(()), &slots), Ok(()));
        assert_eq!(slots.free.load(SeqCst), 2);
    }

    /// How many threads worked on a region of `n` 1 ms indices.
    fn threads_that_worked(pool: &Pool, slots: &Slots, n: usize) -> usize {
        let seen: Mutex<std::collections::HashSet<std::thread::ThreadId>> = Mutex::default();
        pool.run(
            n,
            &|_| {
                std::thread::sleep(Duration::from_millis(1));
                if let Ok(mut s) = seen.lock() {
                    s.insert(std::thread::current().id());
                }
                Ok(())
            },
            slots,
        )
        .expect("run");
        let threads = seen.lock().map(|s| s.len()).unwrap_or(0);
        threads
    }

    #[test]
    fn parked_workers_wake_for_the_next_region() {
        let pool = Pool::new(2, SPIN).expect("pool");
        let slots = Slots::new(2);
        std::thread::sleep(SPIN * 4);
        let _slot = pool.enter(&slots);
        assert_eq!(
            threads_that_worked(&pool, &slots, 64),
            2,
            "both threads worked"
        );
    }

    #[test]
    fn concurrent_callers_each_finish() {
        let pool = Pool::new(2, SPIN).expect("pool");
        let total = AtomicUsize::new(0);
        std::thread::scope(|sc| {
            for _ in 0..4 {
                sc.spawn(|| {
                    // Each caller its own run.
                    let slots = Slots::new(2);
                    for _ in 0..50 {
                        let _slot = pool.enter(&slots);
                        pool.run(
                            16,
                            &|_| {
                                total.fetch_add(1, Relaxed);
                                Ok(())
                            },
                            &slots,
                        )
                        .expect("run");
                    }
                });
            }
        });
        assert_eq!(total.load(Relaxed), 4 * 50 * 16);
    }

    /// A region that starts while its run has no slot to spare gets help
    /// as soon as one comes free (another stream's kernel ends).
    #[test]
    fn workers_join_a_region_late_when_a_slot_frees() {
        let pool = Pool::new(2, SPIN).expect("pool");
        let slots = Slots::new(2);
        let (held, go) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        let threads = std::thread::scope(|sc| {
            sc.spawn(|| {
                // Another stream's kernel: the run's second slot for 20 ms.
                let _slot = pool.enter(&slots);
                held.wait();
                go.wait();
                std::thread::sleep(Duration::from_millis(20));
            });
            held.wait();
            let _slot = pool.enter(&slots);
            go.wait();
            threads_that_worked(&pool, &slots, 80)
        });
        assert_eq!(threads, 2, "the worker never joined");
    }

    /// Two streams' regions open at once, each on its stream's own slot:
    /// when the first ends (its stream's kernel with it), the worker joins
    /// the second, though it started while the first was open.
    #[test]
    fn workers_join_a_region_that_started_during_another() {
        let pool = Pool::new(2, SPIN).expect("pool");
        let slots = Slots::new(2);
        let (held, started) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        let threads = std::thread::scope(|sc| {
            sc.spawn(|| {
                // The first stream: a 20 ms region on its own slot.
                let slot = pool.enter(&slots);
                held.wait();
                pool.run(
                    2,
                    &|i| {
                        if i == 0 {
                            started.wait();
                        }
                        std::thread::sleep(Duration::from_millis(10));
                        Ok(())
                    },
                    &slots,
                )
                .expect("run");
                drop(slot);
            });
            held.wait();
            let _slot = pool.enter(&slots);
            started.wait();
            threads_that_worked(&pool, &slots, 80)
        });
        assert_eq!(threads, 2, "the worker never joined the second region");
    }

    /// Four streams of one run, each running parallel regions: never more
    /// threads in kernel code than the run has slots.
    #[test]
    fn a_run_computes_on_at_most_its_slots() {
        for threads in [1, 2, 3] {
            let pool = Pool::new(threads, SPIN).expect("pool");
            let slots = Slots::new(threads);
            let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let body = |_| {
                let k = now.fetch_add(1, SeqCst) + 1;
                most.fetch_max(k, SeqCst);
                std::thread::sleep(Duration::from_micros(200));
                now.fetch_sub(1, SeqCst);
                Ok(())
            };
            std::thread::scope(|sc| {
                for _ in 0..4 {
                    sc.spawn(|| {
                        for _ in 0..10 {
                            let _slot = pool.enter(&slots);
                            pool.run(6, &body, &slots).expect("run");
                        }
                    });
                }
            });
            let most = most.load(SeqCst);
            assert!(
                most <= threads,
                "{most} threads computed with {threads} slots"
            );
            if threads > 1 {
                assert!(most > 1, "the workers never helped");
            }
            assert_eq!(slots.free.load(SeqCst), threads, "every slot given back");
        }
    }
}
