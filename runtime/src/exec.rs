//! The executor: symbol binding, per-shape plans (cached), execution
//! contexts (workspace arena + per-stream scratch + stream workers), one
//! worker per stream running its tasks in order, events between streams,
//! and traces.

use crate::buffer::{same_dims, AlignedBuf, HostTensor};
use crate::kernels::{concrete, KernelProgram, Par, Slot};
use crate::model::{Binding, Inner, Model, TaskRt};
use crate::pool::Slots;
use crate::shared::Shared;
use crate::split::Mode;
use crate::trace::{Trace, TraceEvent};
use crate::{Error, Site};
use ge_ir::{DType, Dim, Ident, Location};
use ge_om::model::{ArenaRole, Buffer, Operand, Task};
use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// Where a kernel value lives during a run.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// `arena` at byte `offset`.
    Arena(usize, usize),
    /// A weight of the file.
    Weight(u32),
    /// A value folded at load time.
    Folded,
    /// A constant of the kernel (index into `consts`).
    Const(usize),
    /// Per-stream scratch at byte offset.
    Scratch(usize),
    /// Not materialised (inside a fused loop, or not computed).
    None,
}

/// The plan of one launch for one concrete shape.
#[derive(Debug)]
struct TaskPlan {
    shapes: Vec<Vec<usize>>,
    places: Vec<Place>,
    /// Kernel results to copy into their output buffer after the kernel:
    /// (value, arena, offset, bytes).
    copies: Vec<(usize, usize, usize, usize)>,
}

/// Everything that depends on the concrete shape: symbol values, each
/// launch's value shapes and places, scratch sizes, memcpy sizes.
#[derive(Debug)]
pub(crate) struct ShapePlan {
    pub(crate) syms: HashMap<Ident, i64>,
    tasks: Vec<Option<TaskPlan>>,
    /// Bytes of each memcpy / switch buffer at this shape (by task).
    sizes: Vec<usize>,
    scratch: Vec<usize>,
    out_shapes: Vec<Vec<usize>>,
    /// Each arena's length at this shape (`proof::arena_lengths`; with
    /// unbounded symbols the workspace is this shape's plan): a context
    /// grows its own arenas to these before the run.
    arena_lens: Vec<usize>,
    /// Memcpy and switch tasks with their buffers moved to this shape's
    /// workspace plan (models with unbounded symbols only), by task.
    moved: HashMap<usize, Task>,
}

/// The plan a run's tasks read: one for the whole run or, with size
/// symbols (`crate::size_syms`), replaced after each launch that binds one:
/// the streams that read a size-dependent value wait for the producer's
/// event, which it records after the replacement.
pub(crate) struct RunPlan {
    first: Arc<ShapePlan>,
    cur: Option<Mutex<Arc<ShapePlan>>>,
}

impl RunPlan {
    fn new(inner: &Inner, first: Arc<ShapePlan>) -> RunPlan {
        let cur = (!inner.sizes.is_empty()).then(|| Mutex::new(first.clone()));
        RunPlan { first, cur }
    }

    /// The plan now (the last one set).
    fn now(&self) -> Result<Arc<ShapePlan>, Error> {
        match &self.cur {
            None => Ok(self.first.clone()),
            Some(m) => m
                .lock()
                .map(|p| p.clone())
                .map_err(|_| Error("run plan poisoned".into())),
        }
    }
}

/// Plans per concrete shape, least recently used evicted.
pub(crate) struct PlanCache {
    cap: usize,
    entries: VecDeque<(Vec<i64>, Arc<ShapePlan>)>,
    pub(crate) built: usize,
}

impl PlanCache {
    pub(crate) fn new(cap: usize) -> PlanCache {
        PlanCache {
            cap,
            entries: VecDeque::new(),
            built: 0,
        }
    }
}

/// Per-run event state: one counter per record task, and which stream
/// waits for which record. A record wakes only the streams waiting for it:
/// a model has dozens of streams mostly asleep on events, and waking all of
/// them on every record costs more than the kernels of a small layer.
///
/// A run must end (issue 18): a stream blocks only while another stream
/// can still record what it waits for. `running` counts the streams neither
/// blocked nor finished; when it drops to 0 while every blocked stream's
/// record is still short of its count, nothing can ever record again — a
/// deadlock (e.g. a wait inside a `goto` loop whose record is outside it),
/// reported at once by every blocked stream instead of hanging. Waits also
/// end at the run's deadline ([`LoadOptions::timeout`](crate::LoadOptions::timeout)).
struct Events {
    state: Mutex<EventState>,
    /// One per stream: where that stream's thread sleeps.
    wake: Vec<Condvar>,
    abort: AtomicBool,
    deadline: Option<Instant>,
    /// The limit the deadline came from (for messages).
    timeout: Option<std::time::Duration>,
}

struct EventState {
    counts: HashMap<usize, u64>,
    /// record task → the streams waiting for it.
    waiters: HashMap<usize, Vec<usize>>,
    /// Streams neither blocked in a wait nor finished.
    running: usize,
    /// Per stream: the (record, count) it is blocked on.
    blocked: Vec<Option<(usize, u64)>>,
    /// Set when no stream can make progress any more.
    deadlock: bool,
}

impl EventState {
    /// No stream runs and every blocked one still waits for a record.
    fn stuck(&self) -> bool {
        self.running == 0
            && self.blocked.iter().flatten().any(|_| true)
            && self
                .blocked
                .iter()
                .flatten()
                .all(|&(rec, n)| self.counts.get(&rec).copied().unwrap_or(0) < n)
    }
}

impl Events {
    fn new(streams: usize, timeout: Option<std::time::Duration>) -> Events {
        Events {
            state: Mutex::new(EventState {
                counts: HashMap::new(),
                waiters: HashMap::new(),
                running: streams,
                blocked: vec![None; streams],
                deadlock: false,
            }),
            wake: (0..streams).map(|_| Condvar::new()).collect(),
            abort: AtomicBool::new(false),
            deadline: timeout.map(|t| Instant::now() + t),
            timeout,
        }
    }
    /// The table of a new run on this one's memory (a context reuses its
    /// run's events: the maps and lists keep their capacity).
    fn reset(&mut self, streams: usize, timeout: Option<std::time::Duration>) {
        let fresh = match self.state.get_mut() {
            Ok(st) => {
                st.counts.clear();
                st.waiters.values_mut().for_each(Vec::clear);
                st.running = streams;
                st.blocked.clear();
                st.blocked.resize(streams, None);
                st.deadlock = false;
                self.wake.len() != streams
            }
            Err(_) => true,
        };
        if fresh {
            *self = Events::new(streams, timeout);
            return;
        }
        *self.abort.get_mut() = false;
        self.deadline = timeout.map(|t| Instant::now() + t);
        self.timeout = timeout;
    }
    fn signal(&self, rec: usize) {
        if let Ok(mut st) = self.state.lock() {
            *st.counts.entry(rec).or_insert(0) += 1;
            // The list is emptied, not removed: the next run reuses it.
            if let Some(w) = st.waiters.get_mut(&rec) {
                for &s in w.iter() {
                    self.wake[s].notify_one();
                }
                w.clear();
            }
        }
    }
    /// Mark everything stuck: every blocked stream wakes and fails.
    fn declare_deadlock(&self, st: &mut EventState) {
        st.deadlock = true;
        self.abort.store(true, Ordering::Release);
        self.wake.iter().for_each(Condvar::notify_all);
    }
    /// Block stream `s` until record `rec` has fired at least `n` times
    /// (or the run aborts, deadlocks or passes its deadline).
    fn wait(&self, s: usize, rec: usize, n: u64) -> Result<(), String> {
        let mut st = self.state.lock().map_err(|_| "event table poisoned")?;
        let mut blocked = false;
        let result = loop {
            if st.deadlock {
                break Err(format!(
                    "deadlock: waits for the record of task #{rec} (fired {} of {n} times), but every stream is waiting or finished",
                    st.counts.get(&rec).copied().unwrap_or(0)
                ));
            }
            if self.abort.load(Ordering::Acquire) {
                break Err("aborted".into());
            }
            if st.counts.get(&rec).copied().unwrap_or(0) >= n {
                break Ok(());
            }
            if !blocked {
                blocked = true;
                st.running -= 1;
                st.blocked[s] = Some((rec, n));
                if st.stuck() {
                    self.declare_deadlock(&mut st);
                    continue;
                }
            }
            let w = st.waiters.entry(rec).or_default();
            if !w.contains(&s) {
                w.push(s);
            }
            st = match self.deadline {
                None => self.wake[s].wait(st).map_err(|_| "event table poisoned")?,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break Err(self.timeout_message());
                    }
                    self.wake[s]
                        .wait_timeout(st, left)
                        .map_err(|_| "event table poisoned")?
                        .0
                }
            };
        };
        if blocked {
            st.running += 1;
            st.blocked[s] = None;
        }
        result
    }
    /// Stream `s` has finished (or failed): it will record nothing more.
    fn finish(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.running -= 1;
            // A stream that failed has aborted the run: the streams blocked
            // on it are stopping, not deadlocked.
            if st.stuck() && !self.abort.load(Ordering::Acquire) {
                self.declare_deadlock(&mut st);
            }
        }
    }
    fn abort(&self) {
        self.abort.store(true, Ordering::Release);
        let _g = self.state.lock();
        self.wake.iter().for_each(Condvar::notify_all);
    }
}

impl Events {
    fn timeout_message(&self) -> String {
        format!(
            "the run passed its deadline (--timeout {}s)",
            self.timeout.unwrap_or_default().as_secs_f64()
        )
    }
}

/// One execution context: its own workspace (and copied I/O) arenas, scratch
/// per stream, and the stream workers. A run takes a context of its own
/// from the model's pool and gives it back: everything a run needs besides
/// its outputs is kept here and refilled by the next run (issue 20: no
/// allocation per call once a context has run a shape).
pub(crate) struct ExecContext {
    arenas: Vec<Option<AlignedBuf>>,
    /// Scratch of stream 0 (workers own theirs).
    scratch: AlignedBuf,
    /// Stream 0's kernel slots and wait counts (workers own theirs).
    stream0: StreamScratch,
    /// What the last run shared with the workers (`None` before the first
    /// run): the next run refills it in place.
    state: Option<Arc<RunState>>,
    /// Where the workers report that their stream of a run is done.
    replies: Arc<Replies>,
    /// Workers of streams 1.. (stream 0 runs on the calling thread).
    workers: Vec<Worker>,
}

/// What a run shares with its stream workers: the plan it reads, the
/// arenas' base addresses, the events between streams, the compute slots.
/// Kept by the context: once every worker has replied (each drops its
/// reference first), the next run owns it alone and refills it.
struct RunState {
    plan: RunPlan,
    /// Each arena's base address in this run (stale between runs, never
    /// read then: `arena_bases` refills them first).
    bases: Vec<Ptr>,
    events: Events,
    slots: Slots,
    /// The trace clock's start (`None`: no trace).
    t0: Option<Instant>,
}

/// A stream's own scratch of a run, kept for the next run by the thread
/// running the stream (stream 0's by the context): the slots a launch hands
/// its kernel — refilled in place, so no allocation once they have grown to
/// the model's largest kernel — and how often each wait task has waited.
#[derive(Default)]
struct StreamScratch {
    slots: Vec<Slot>,
    waits: HashMap<usize, u64>,
}

// SAFETY: the slots' pointers are stale between runs and never read then:
// `launch` overwrites every slot it hands a kernel with this run's
// pointers first. A context (and the scratch in it) is used by one run at
// a time, on the thread that took it from the pool; `Slot`'s pointers are
// what keeps it from being `Send` on its own.
unsafe impl Send for StreamScratch {}

/// A stream of a run for a worker: the model and the run's shared state.
struct Job {
    inner: Arc<Inner>,
    state: Arc<RunState>,
}

/// One stream's end of a run: its stream, its result, its trace events.
type Reply = (usize, Result<(), Error>, Vec<TraceEvent>);

/// The replies of a context's workers (its list keeps its capacity).
#[derive(Default)]
struct Replies {
    done: Mutex<Vec<Reply>>,
    arrived: Condvar,
}

impl Replies {
    fn push(&self, r: Reply) {
        let mut g = self.done.lock().unwrap_or_else(|p| p.into_inner());
        g.push(r);
        self.arrived.notify_one();
    }
    /// Wait for `n` replies (every worker replies once per job, even when
    /// its stream panicked); the list, to be drained.
    fn wait(&self, n: usize) -> MutexGuard<'_, Vec<Reply>> {
        let mut g = self.done.lock().unwrap_or_else(|p| p.into_inner());
        while g.len() < n {
            g = self.arrived.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        g
    }
}

/// A worker's job slot: one job at a time (a run waits for every reply
/// before the context runs again), or closed.
#[derive(Default)]
struct Mailbox {
    slot: Mutex<(Option<Job>, bool)>,
    posted: Condvar,
}

impl Mailbox {
    fn lock(&self) -> MutexGuard<'_, (Option<Job>, bool)> {
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// Hand the worker a job; `false` when it has stopped.
    fn put(&self, job: Job) -> bool {
        let mut g = self.lock();
        if g.1 {
            return false;
        }
        g.0 = Some(job);
        self.posted.notify_one();
        true
    }
    /// The next job; `None` once closed.
    fn take(&self) -> Option<Job> {
        let mut g = self.lock();
        loop {
            if let Some(j) = g.0.take() {
                return Some(j);
            }
            if g.1 {
                return None;
            }
            g = self.posted.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }
    fn close(&self) {
        self.lock().1 = true;
        self.posted.notify_one();
    }
}

/// A persistent stream worker thread (it owns its stream's scratch).
struct Worker {
    mailbox: Arc<Mailbox>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Dropping a context ends its workers and waits for them, so no thread
/// (or its thread-locals) outlives the model that started it — a loader
/// that creates and drops models in a loop (the fuzzers; LeakSanitizer
/// saw a worker's channel context still alive) keeps no threads behind.
impl Drop for Worker {
    fn drop(&mut self) {
        self.mailbox.close();
        if let Some(t) = self.thread.take() {
            // The worker is idle (every run waits for all of its replies),
            // so it sees the closed mailbox at once.
            let _ = t.join();
        }
    }
}

impl Worker {
    fn start(s: usize, replies: Arc<Replies>) -> Result<Worker, Error> {
        let mailbox = Arc::new(Mailbox::default());
        let jobs = mailbox.clone();
        let thread = std::thread::Builder::new()
            .name(format!("ge-stream-{s}"))
            .spawn(move || {
                let mut scratch = AlignedBuf::zeroed(0);
                let mut mine = StreamScratch::default();
                while let Some(Job { inner, state }) = jobs.take() {
                    let mut tr = vec![];
                    // A panic is this stream's error: the worker lives on
                    // and replies, so the run never waits for it in vain.
                    let r = catch_unwind(AssertUnwindSafe(|| {
                        scratch.ensure(state.plan.first.scratch.get(s).copied().unwrap_or(0));
                        let trace = state.t0.map(|t| (t, &mut tr));
                        run_stream(&inner, &state, s, scratch.as_mut_ptr(), &mut mine, trace)
                    }))
                    .unwrap_or_else(|_| Err(Error(format!("stream {s} panicked"))));
                    if r.is_err() {
                        state.events.abort();
                    }
                    state.events.finish();
                    // Let go of the model and the run before replying (the
                    // caller may drop the model next, or refill the state).
                    drop((inner, state));
                    replies.push((s, r, tr));
                }
            })
            .map_err(|e| Error(format!("cannot start a stream worker: {e}")))?;
        Ok(Worker {
            mailbox,
            thread: Some(thread),
        })
    }
}

/// An arena's base address, shared with the stream workers.
type Ptr = Shared<*mut u8>;

/// Options of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Record a trace of every task.
    pub trace: bool,
}

/// The result of a run.
#[derive(Debug)]
pub struct RunResult {
    pub outputs: Vec<HostTensor>,
    /// The symbol values bound from the inputs (sorted by name).
    pub symbols: Vec<(String, i64)>,
    pub trace: Option<Trace>,
}

/// Runs a model. Create as many as you like (cheap); `run` may be called from
/// several threads at once.
#[derive(Clone)]
pub struct Session {
    model: Model,
}

impl Session {
    pub fn new(model: &Model) -> Session {
        Session {
            model: model.clone(),
        }
    }

    /// Run on `inputs` (in the model's input order); returns the outputs.
    pub fn run(&self, inputs: &[HostTensor]) -> Result<Vec<HostTensor>, Error> {
        Ok(self.run_with(inputs, &RunOptions::default())?.outputs)
    }

    pub fn run_with(&self, inputs: &[HostTensor], opts: &RunOptions) -> Result<RunResult, Error> {
        let mut outputs = Vec::with_capacity(self.model.inner.out_types.len());
        let (symbols, trace) = run(&self.model.inner, inputs, opts, &mut outputs)?;
        Ok(RunResult {
            outputs,
            symbols,
            trace,
        })
    }

    /// Run on `inputs` into `outputs`, reusing the tensors an earlier run
    /// left there: each output is written into the memory of the tensor at
    /// its position when that holds it (no allocation: a loop that reads
    /// each run's outputs before the next run allocates nothing for them
    /// — the Python runner, issue 20); missing tensors are added, extra ones
    /// dropped. The outputs have this run's shapes (a size symbol's actual
    /// count, as [`Session::run`] gives). After an error `outputs` holds
    /// tensors of no meaning.
    ///
    /// Caller-provided output memory: a tensor lent writable
    /// ([`HostTensor::lend_mut`]) with the dtype and shape of the run's
    /// output at its position receives the output in place — the run binds
    /// a zero-copy output arena to it, or copies the arena into it — and is
    /// still [`HostTensor::is_lent_mut`] afterwards; one that does not fit
    /// (another shape, or a size symbol's count below its bound) is given
    /// memory of its own, the loan ended unwritten or partly written.
    pub fn run_reusing(
        &self,
        inputs: &[HostTensor],
        outputs: &mut Vec<HostTensor>,
    ) -> Result<(), Error> {
        run(&self.model.inner, inputs, &RunOptions::default(), outputs).map(|_| ())
    }

    /// Run on inputs given by name, in any order (`[("input_ids", ids),
    /// ("attention_mask", mask)]`), as onnxruntime takes them; returns the
    /// outputs with their names, in the model's output order. Every input is
    /// given exactly once; an unknown, repeated or missing name is an error
    /// listing the model's inputs.
    pub fn run_named<N: AsRef<str>>(
        &self,
        inputs: impl IntoIterator<Item = (N, HostTensor)>,
    ) -> Result<Vec<(String, HostTensor)>, Error> {
        let ordered = self.model.order_inputs(inputs)?;
        let outs = self.run(&ordered)?;
        Ok(self
            .model
            .inner
            .io
            .outputs
            .iter()
            .map(|t| t.name.clone())
            .zip(outs)
            .collect())
    }

    /// How many shape plans were built so far (a plan is built once per
    /// concrete shape and kept in a bounded cache).
    pub fn plans_built(&self) -> usize {
        self.model.inner.plans.lock().map(|p| p.built).unwrap_or(0)
    }

    /// How many shape plans the cache holds now (at most
    /// [`LoadOptions::plan_cache`](crate::LoadOptions::plan_cache)).
    pub fn plans_cached(&self) -> usize {
        self.model
            .inner
            .plans
            .lock()
            .map(|p| p.entries.len())
            .unwrap_or(0)
    }
}

impl Model {
    /// Run once on a fresh session.
    pub fn run(&self, inputs: &[HostTensor]) -> Result<Vec<HostTensor>, Error> {
        self.session().run(inputs)
    }

    /// Run once on a fresh session, inputs by name ([`Session::run_named`]).
    pub fn run_named<N: AsRef<str>>(
        &self,
        inputs: impl IntoIterator<Item = (N, HostTensor)>,
    ) -> Result<Vec<(String, HostTensor)>, Error> {
        self.session().run_named(inputs)
    }

    /// The position of the input called `name`.
    pub fn input_index(&self, name: &str) -> Option<usize> {
        self.inner.io.inputs.iter().position(|t| t.name == name)
    }

    /// The position of the output called `name`.
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.inner.io.outputs.iter().position(|t| t.name == name)
    }

    /// `name, name, ...` of the inputs (or outputs), for messages.
    pub fn io_name_list(&self, outputs: bool) -> String {
        let io = &self.inner.io;
        let list = if outputs { &io.outputs } else { &io.inputs };
        list.iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Named inputs in the model's input order (an unknown, repeated or
    /// missing name is an error listing the inputs), for [`Session::run_with`].
    pub fn order_inputs<N: AsRef<str>>(
        &self,
        inputs: impl IntoIterator<Item = (N, HostTensor)>,
    ) -> Result<Vec<HostTensor>, Error> {
        let mut slots: Vec<Option<HostTensor>> = vec![None; self.inner.io.inputs.len()];
        for (n, t) in inputs {
            let n = n.as_ref();
            let i = self.input_index(n).ok_or_else(|| {
                Error(format!(
                    "the model has no input '{n}' (inputs: {})",
                    self.io_name_list(false)
                ))
            })?;
            if slots[i].replace(t).is_some() {
                return Err(Error(format!("input '{n}' is given more than once")));
            }
        }
        let missing: Vec<&str> = slots
            .iter()
            .zip(&self.inner.io.inputs)
            .filter(|(s, _)| s.is_none())
            .map(|(_, t)| t.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(Error(format!(
                "missing input{} '{}' (inputs: {})",
                if missing.len() > 1 { "s" } else { "" },
                missing.join("', '"),
                self.io_name_list(false)
            )));
        }
        Ok(slots.into_iter().flatten().collect())
    }
}

/// Bind the symbols of the inputs' types to the inputs' shapes.
fn bind(inner: &Inner, inputs: &[HostTensor]) -> Result<HashMap<Ident, i64>, Error> {
    let io = &inner.io.inputs;
    if inputs.len() != io.len() {
        return Err(Error(format!(
            "the model takes {} inputs ({}) but {} were given",
            io.len(),
            io.iter()
                .zip(&inner.in_types)
                .map(|(t, ty)| format!("{}: {ty}", t.name))
                .collect::<Vec<_>>()
                .join(", "),
            inputs.len()
        )));
    }
    let mut syms: HashMap<Ident, i64> = HashMap::new();
    // Where each symbol was bound: (input, axis).
    let mut from: HashMap<Ident, (usize, usize)> = HashMap::new();
    for (i, (x, &t)) in inputs.iter().zip(&inner.in_types).enumerate() {
        let name = &io[i].name;
        let tt = t
            .as_tensor()
            .ok_or_else(|| Error(format!("input '{name}' is not a tensor")))?;
        if x.dtype != tt.dtype {
            return Err(Error(format!(
                "input #{i} '{name}' has element type {} but the model expects '{t}'",
                x.dtype
            )));
        }
        // The run binds (or copies) exactly the bytes the shape says.
        x.check_len()
            .map_err(|m| Error(format!("input #{i} '{name}': {m}")))?;
        let dims = tt.shape();
        if dims.len() != x.shape.len() {
            return Err(Error(format!(
                "input #{i} '{name}' has shape {:?} (rank {}) but the model expects '{t}' (rank {})",
                x.shape,
                x.shape.len(),
                dims.len()
            )));
        }
        for (k, (d, &n)) in dims.iter().zip(&x.shape).enumerate() {
            let n = n as i64;
            match d {
                Dim::Static(s) if *s != n => {
                    return Err(Error(format!(
                        "input #{i} '{name}' has shape {:?} but the model expects '{t}' (dim {k} must be {s})",
                        x.shape
                    )))
                }
                Dim::Sym(s) => {
                    if let ge_ir::dim::DimExpr::Sym(sym) = s.expr() {
                        if let Some(&b) = inner.bounds.get(sym) {
                            if n > b {
                                return Err(Error(format!(
                                    "input #{i} '{name}': {sym} = {n} is above its upper bound {b} (the model's memory plan was made for {sym} <= {b})"
                                )));
                            }
                        }
                        if let Some(&prev) = syms.get(sym) {
                            if prev != n {
                                return Err(Error(format!(
                                    "input #{i} '{name}' has {sym} = {n} but input #{} has {sym} = {prev}",
                                    from[sym].0
                                )));
                            }
                        }
                        syms.insert(*sym, n);
                        from.entry(*sym).or_insert((i, k));
                    }
                }
                _ => {}
            }
        }
    }
    // Compound dims are checked once every symbol is known.
    for (i, (x, &t)) in inputs.iter().zip(&inner.in_types).enumerate() {
        if let Some(tt) = t.as_tensor() {
            for (k, (d, &n)) in tt.shape().iter().zip(&x.shape).enumerate() {
                if let Some(v) = d.eval(&syms) {
                    if v != n as i64 {
                        return Err(Error(format!(
                            "input #{i} '{}' has shape {:?} but the model expects '{t}' (dim {k} must be {d} = {v}{})",
                            io[i].name,
                            x.shape,
                            symbol_sources(*d, &syms, &from, io)
                        )));
                    }
                } else {
                    return Err(Error(format!(
                        "input #{i} '{}': dim {k} of '{t}' cannot be determined from the inputs",
                        io[i].name
                    )));
                }
            }
        }
    }
    Ok(syms)
}

/// Where the symbols of a compound input dim were bound, for a bind error:
/// `, PAST = 7 from input #2 'past' dim 2, S = 1 from input #0 'ids' dim 1`
/// (a learned equality such as a mask's length `= PAST+S` fails here).
fn symbol_sources(
    d: Dim,
    syms: &HashMap<Ident, i64>,
    from: &HashMap<Ident, (usize, usize)>,
    io: &[ge_om::model::IoTensor],
) -> String {
    let mut names = vec![];
    if let Some(e) = d.expr() {
        e.symbols(&mut names);
    }
    names
        .iter()
        .filter_map(|s| {
            let (i, k) = from.get(s)?;
            Some(format!(
                ", {s} = {} from input #{i} '{}' dim {k}",
                syms.get(s)?,
                io.get(*i)?.name
            ))
        })
        .collect()
}

/// The bytes of type `ty` at concrete symbol values (checked arithmetic).
pub(crate) fn bytes_of(ty: &str, syms: &HashMap<Ident, i64>) -> Result<usize, String> {
    let t = ge_ir::parser::parse_type_str(ge_ir::context::bare(), ty)
        .map_err(|d| format!("bad type '{ty}': {}", d.message))?;
    let s = concrete(t, syms)?;
    checked_bytes(&s, t.dtype().map_or(1, |d| d.byte_size()))
        .ok_or_else(|| format!("'{ty}' is too large to address at this shape"))
}

/// `product(shape) * elem`, `None` on overflow.
pub(crate) fn checked_bytes(shape: &[usize], elem: usize) -> Option<usize> {
    shape.iter().try_fold(elem, |acc, &d| acc.checked_mul(d))
}

fn overlap(a: (usize, usize, usize), b: (usize, usize, usize)) -> bool {
    a.0 == b.0 && a.1 < b.1 + b.2 && b.1 < a.1 + a.2 && a.2 > 0 && b.2 > 0
}

/// Build the plan of one concrete shape.
fn build_plan(inner: &Inner, syms: HashMap<Ident, i64>) -> Result<ShapePlan, Error> {
    let ns = inner.streams.len();
    // Buffers are placed with every size symbol at its bound
    // (`crate::size_syms`: memory is planned there, so a run keeps its
    // placements when a count binds the symbol).
    let mut place_syms = syms.clone();
    for b in inner.sizes.values() {
        place_syms.insert(b.sym, b.bound);
    }
    let mut lens =
        crate::proof::arena_lengths(&inner.def, &inner.io, &inner.bindings, &place_syms)?;
    let shape_ws = match &inner.def.replan {
        Some(r) => Some(crate::proof::replan_workspace(
            &inner.def,
            &inner.io,
            &inner.bindings,
            r,
            &place_syms,
            &mut lens,
        )?),
        None => None,
    };
    let place = |b: &Buffer| -> Result<Buffer, Error> {
        match &shape_ws {
            Some(w) => w.place(b, &place_syms),
            None => Ok(b.clone()),
        }
    };
    let within_placed = |b: &Buffer| within_placed(inner, b, &syms, &place_syms);
    let mut scratch = vec![0usize; ns];
    let mut tasks = vec![];
    let mut sizes = vec![0usize; inner.tasks.len()];
    let mut moved = HashMap::new();
    for (ti, rt) in inner.tasks.iter().enumerate() {
        let at = |m: String| Error::at(task_site(ti, None), m);
        match &rt.task {
            Task::Launch {
                ins, outs, stream, ..
            } => {
                let Some(k) = &rt.kernel else {
                    tasks.push(None);
                    continue;
                };
                let ins: Vec<Operand> = ins
                    .iter()
                    .map(|o| match o {
                        Operand::Buffer(b) => place(b).map(Operand::Buffer),
                        Operand::Weight(w) => Ok(Operand::Weight(*w)),
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|e| at(e.message))?;
                let outs: Vec<Buffer> = outs
                    .iter()
                    .map(&place)
                    .collect::<Result<_, _>>()
                    .map_err(|e| at(e.message))?;
                for b in &outs {
                    within_placed(b).map_err(at)?;
                }
                let (plan, bytes) = plan_launch(inner, &lens, rt, k, &ins, &outs, &syms, ti)?;
                let st = *stream as usize;
                scratch[st] = scratch[st].max(bytes);
                tasks.push(Some(plan));
            }
            Task::Memcpy { src, dst, stream } => {
                let (src, dst) = (
                    place(src).map_err(|e| at(e.message))?,
                    place(dst).map_err(|e| at(e.message))?,
                );
                let n = bytes_of(&src.ty, &syms).map_err(at)?;
                let m = bytes_of(&dst.ty, &syms).map_err(at)?;
                within_placed(&dst).map_err(at)?;
                check_in_arena(&lens, ti, &src, n)?;
                check_in_arena(&lens, ti, &dst, m)?;
                sizes[ti] = n.min(m);
                let stream = *stream;
                if shape_ws.is_some() {
                    moved.insert(ti, Task::Memcpy { src, dst, stream });
                }
                tasks.push(None);
            }
            Task::Switch {
                value,
                stream,
                targets,
            } => {
                let value = place(value).map_err(|e| at(e.message))?;
                sizes[ti] = plan_switch(&lens, ti, &value, &syms)?;
                if shape_ws.is_some() {
                    moved.insert(
                        ti,
                        Task::Switch {
                            value,
                            stream: *stream,
                            targets: targets.clone(),
                        },
                    );
                }
                tasks.push(None);
            }
            _ => tasks.push(None),
        }
    }
    let out_shapes = outputs_within_budget(inner, &lens, &scratch, shape_ws.is_some(), &syms)?;
    Ok(ShapePlan {
        syms,
        tasks,
        sizes,
        scratch,
        out_shapes,
        arena_lens: lens,
        moved,
    })
}

/// Below its bound a size symbol must not grow a buffer past the bytes
/// placed for it (at `place_syms`, every size symbol at its bound): that
/// would reach into the next buffer of the plan.
fn within_placed(
    inner: &Inner,
    b: &Buffer,
    syms: &HashMap<Ident, i64>,
    place_syms: &HashMap<Ident, i64>,
) -> Result<(), String> {
    if inner.sizes.is_empty() {
        return Ok(());
    }
    let (now, placed) = (bytes_of(&b.ty, syms)?, bytes_of(&b.ty, place_syms)?);
    if now > placed {
        return Err(format!(
            "'{}' is {now} bytes at these counts, more than the {placed} placed at the bounds",
            b.ty
        ));
    }
    Ok(())
}

/// The output shapes at `syms`, once what a run allocates besides the
/// context's arenas (checked at load) is known to fit the memory budget:
/// scratch of every stream, the output tensors and, with unbounded symbols
/// (`grown`), the copy arenas grown to this shape's lengths.
fn outputs_within_budget(
    inner: &Inner,
    lens: &[usize],
    scratch: &[usize],
    grown: bool,
    syms: &HashMap<Ident, i64>,
) -> Result<Vec<Vec<usize>>, Error> {
    let out_shapes: Vec<Vec<usize>> = inner
        .out_types
        .iter()
        .map(|&t| concrete(t, syms))
        .collect::<Result<_, _>>()
        .map_err(Error)?;
    let mut total: Option<usize> = scratch.iter().try_fold(0usize, |a, &b| a.checked_add(b));
    if grown {
        for (a, &n) in lens.iter().enumerate() {
            if inner.bindings[a] == Binding::Copy {
                total = total.and_then(|t| t.checked_add(n));
            }
        }
    }
    for (s, t) in out_shapes.iter().zip(&inner.out_types) {
        let n = checked_bytes(s, t.dtype().map_or(1, |d| d.byte_size()));
        total = total.zip(n).and_then(|(a, b)| a.checked_add(b));
    }
    ge_ir::budget::check_within(
        inner.limits.max_memory,
        total.map(|n| n as u64),
        &"a run's scratch and outputs at this shape",
    )
    .map_err(Error)?;
    Ok(out_shapes)
}

/// The bytes switch task `ti` reads from `value` (placed for this shape):
/// inside its arena, and exactly one element.
fn plan_switch(
    lens: &[usize],
    ti: usize,
    value: &Buffer,
    syms: &HashMap<Ident, i64>,
) -> Result<usize, Error> {
    let at = |m: String| Error::at(task_site(ti, None), m);
    let n = bytes_of(&value.ty, syms).map_err(at)?;
    check_in_arena(lens, ti, value, n)?;
    // ge-om proved one element of an integer type: `n` is the
    // element's size, the bytes `switch_label` reads.
    if switch_dtype(value).map(|d| d.byte_size()) != Some(n) {
        return Err(at(format!(
            "a switch reads one element, but '{}' is {n} bytes here",
            value.ty
        )));
    }
    Ok(n)
}

/// The element type a switch reads.
fn switch_dtype(value: &Buffer) -> Option<DType> {
    ge_ir::parser::parse_type_str(ge_ir::context::bare(), &value.ty)
        .ok()?
        .dtype()
}

/// `n` bytes of buffer `b` at the concrete shape lie inside its arena as
/// long as it really is in this run (`lens`, from `proof::arena_lengths`:
/// a zero-copy arena is the caller's tensor at its actual shape).
fn check_in_arena(lens: &[usize], ti: usize, b: &Buffer, n: usize) -> Result<(), Error> {
    // ge-om's validation proved the arena id in range.
    let len = lens[b.arena as usize];
    if !crate::proof::in_range(b.offset, n, len) {
        return Err(Error::at(
            task_site(ti, None),
            format!(
                "{n} bytes at offset {} overflow arena {}, which is {len} bytes at this shape",
                b.offset, b.arena
            ),
        ));
    }
    Ok(())
}

/// Where task `ti` is: its index, and for a launch its kernel (with the
/// kernel function's source location, the best the task itself has).
pub(crate) fn task_site(ti: usize, k: Option<&KernelProgram>) -> Site {
    Site {
        task: Some(ti),
        kernel: k.map(|k| k.name.clone()),
        loc: k.map_or_else(Location::unknown, |k| k.loc),
        ..Site::default()
    }
}

/// The plan of one launch at concrete shapes: where each value of its
/// kernel lives (an arena buffer, a weight, a kernel constant, a folded
/// value, or the stream's scratch) and which results are copied out after
/// the kernel; with the scratch bytes it needs.
#[allow(clippy::too_many_arguments)]
fn plan_launch(
    inner: &Inner,
    lens: &[usize],
    rt: &TaskRt,
    k: &KernelProgram,
    ins: &[Operand],
    outs: &[Buffer],
    syms: &HashMap<Ident, i64>,
    ti: usize,
) -> Result<(TaskPlan, usize), Error> {
    let at = |m: String| Error::at(task_site(ti, Some(k)), m);
    let shapes: Vec<Vec<usize>> = k
        .types
        .iter()
        .map(|&t| concrete(t, syms))
        .collect::<Result<_, _>>()
        .map_err(at)?;
    let sizes: Vec<usize> = shapes
        .iter()
        .zip(&k.types)
        .map(|(s, t)| checked_bytes(s, t.dtype().map_or(1, |d| d.byte_size())))
        .collect::<Option<_>>()
        .ok_or_else(|| at("a value is too large to address at this shape".into()))?;
    let nbytes = |v: usize| sizes[v];
    let mut places = vec![Place::None; k.types.len()];
    let mut in_ranges = vec![];
    for (&a, o) in k.args.iter().zip(ins) {
        places[a] = match o {
            Operand::Buffer(b) => {
                check_in_arena(lens, ti, b, nbytes(a))?;
                in_ranges.push((a, (b.arena as usize, b.offset as usize, nbytes(a))));
                Place::Arena(b.arena as usize, b.offset as usize)
            }
            Operand::Weight(w) => Place::Weight(*w),
        };
    }
    for (i, (v, _)) in k.consts.iter().enumerate() {
        places[*v] = Place::Const(i);
    }
    for v in rt.folded.keys() {
        places[*v] = Place::Folded;
    }
    for &(v, a) in &rt.alias {
        places[v] = places[a];
    }
    let (producer, last_read) = producers_and_last_reads(rt, k);
    // A result is written straight into its buffer unless that could clobber
    // an input still to be read (or it is returned twice): then it is copied.
    let mut copies = vec![];
    let mut direct: HashMap<usize, (usize, usize)> = HashMap::new();
    for (&r, b) in k.results.iter().zip(outs) {
        let n = nbytes(r);
        check_in_arena(lens, ti, b, n)?;
        let range = (b.arena as usize, b.offset as usize, n);
        let ok = match producer.get(&r).copied() {
            None => false,
            Some(si) => {
                let step = &k.steps[si];
                !direct.contains_key(&r)
                    && in_ranges.iter().all(|&(a, ir)| {
                        !overlap(ir, range)
                            || (step.in_place_safe()
                                && ir == range
                                && last_read.get(&a).is_none_or(|&lr| lr <= si))
                    })
            }
        };
        if ok {
            places[r] = Place::Arena(range.0, range.1);
            direct.insert(r, (range.0, range.1));
        } else {
            copies.push((r, range.0, range.1, n));
        }
    }
    check_places(inner, lens, rt, k, &places, &sizes).map_err(at)?;
    // Everything else that a step writes lives in scratch.
    let mut off = 0usize;
    for (si, s) in k.steps.iter().enumerate() {
        if rt.skip[si] {
            continue;
        }
        for &v in &s.outs {
            if matches!(places[v], Place::None) {
                places[v] = Place::Scratch(off);
                off = nbytes(v)
                    .checked_next_multiple_of(64)
                    .and_then(|n| off.checked_add(n))
                    .ok_or_else(|| at("scratch too large to address".into()))?;
            }
        }
    }
    Ok((
        TaskPlan {
            shapes,
            places,
            copies,
        },
        off,
    ))
}

/// Every value placed outside scratch has its bytes at this shape, aligned
/// to its element size, where it lives: inside its arena's real length, its weight, its folded buffer or
/// its kernel constant. (Scratch places are carved from a buffer of exactly
/// the summed sizes.) The native steps read and write `sizes[v]` bytes at
/// each value's pointer: this is their bounds proof.
fn check_places(
    inner: &Inner,
    lens: &[usize],
    rt: &TaskRt,
    k: &KernelProgram,
    places: &[Place],
    sizes: &[usize],
) -> Result<(), String> {
    for (v, (p, &n)) in places.iter().zip(sizes).enumerate() {
        let (have, what) = match *p {
            Place::Arena(a, off) => {
                // Kernels read and write typed elements (`*const f32`):
                // the arena base is 64-byte aligned, so the offset must be a
                // multiple of the element size (found by the hostile-model
                // proptest: an f32 read at an odd offset).
                let elem = k.types[v].dtype().map_or(1, |d| d.byte_size());
                if off % elem != 0 {
                    return Err(format!(
                        "value {v} of type '{}' lies at offset {off}, not a multiple of its {elem}-byte elements",
                        k.types[v]
                    ));
                }
                (lens[a].saturating_sub(off), "its arena")
            }
            Place::Weight(w) => (inner.weight_bytes(w), "its weight"),
            Place::Folded => (rt.folded.get(&v).map_or(0, |b| b.len()), "its folded value"),
            Place::Const(i) => (k.consts.get(i).map_or(0, |c| c.1.len()), "its constant"),
            Place::Scratch(_) | Place::None => continue,
        };
        if n > have {
            return Err(format!(
                "value {v} of type '{}' is {n} bytes at this shape, but {what} has {have}",
                k.types[v]
            ));
        }
    }
    Ok(())
}

/// Which step produces each value of a launch's kernel, and the last step
/// reading each (skipped steps left out).
fn producers_and_last_reads(
    rt: &TaskRt,
    k: &KernelProgram,
) -> (HashMap<usize, usize>, HashMap<usize, usize>) {
    let mut producer: HashMap<usize, usize> = HashMap::new();
    let mut last_read: HashMap<usize, usize> = HashMap::new();
    for (si, s) in k.steps.iter().enumerate() {
        if rt.skip.get(si).copied().unwrap_or(false) {
            continue;
        }
        for &v in &s.outs {
            producer.insert(v, si);
        }
        if let crate::kernels::Op::Ew(g) = &s.op {
            for &(_, v) in &g.defs {
                producer.entry(v).or_insert(si);
            }
        }
        for &v in &s.ins {
            last_read.insert(crate::layouts::resolve(&rt.alias, v), si);
        }
    }
    (producer, last_read)
}

fn plan_for(inner: &Inner, syms: HashMap<Ident, i64>) -> Result<Arc<ShapePlan>, Error> {
    let key: Vec<i64> = inner
        .symbols
        .iter()
        .map(|s| syms.get(s).copied().unwrap_or(-1))
        .collect();
    {
        let mut c = inner
            .plans
            .lock()
            .map_err(|_| Error("plan cache poisoned".into()))?;
        if let Some(pos) = c.entries.iter().position(|(k, _)| same_dims(k, &key)) {
            let e = c
                .entries
                .remove(pos)
                .ok_or_else(|| Error("plan cache".into()))?;
            let p = e.1.clone();
            c.entries.push_front(e);
            return Ok(p);
        }
    }
    let p = Arc::new(build_plan(inner, syms)?);
    let mut c = inner
        .plans
        .lock()
        .map_err(|_| Error("plan cache poisoned".into()))?;
    c.built += 1;
    c.entries.push_front((key, p.clone()));
    while c.entries.len() > c.cap {
        c.entries.pop_back();
    }
    Ok(p)
}

fn new_context(inner: &Inner) -> Result<ExecContext, Error> {
    let arenas = inner
        .def
        .arenas
        .iter()
        .zip(&inner.bindings)
        .map(|(a, b)| match (a.role, b) {
            (ArenaRole::Workspace, _) | (_, Binding::Copy) => {
                Some(AlignedBuf::zeroed(a.size as usize))
            }
            _ => None,
        })
        .collect();
    // Streams beyond the first get a worker unless they run serially.
    let ns = match inner.serial {
        Some(_) => 1,
        None => inner.streams.len(),
    };
    let replies = Arc::new(Replies::default());
    let workers = (1..ns)
        .map(|s| Worker::start(s, replies.clone()))
        .collect::<Result<_, _>>()?;
    Ok(ExecContext {
        arenas,
        scratch: AlignedBuf::zeroed(0),
        stream0: StreamScratch::default(),
        state: None,
        replies,
        workers,
    })
}

/// The symbols a run starts at: the inputs' dims, the value symbols, and
/// every size symbol at its bound (`crate::size_syms`).
fn start_symbols(inner: &Inner, inputs: &[HostTensor]) -> Result<HashMap<Ident, i64>, Error> {
    let mut syms = bind(inner, inputs)?;
    crate::value_syms::bind(inner, inputs, &mut syms)?;
    for b in inner.sizes.values() {
        syms.insert(b.sym, b.bound);
    }
    Ok(syms)
}

/// The symbols a run bound (sorted by name) and its trace.
type RunInfo = (Vec<(String, i64)>, Option<Trace>);

/// Run into `outputs` (see [`Session::run_reusing`]).
fn run(
    inner: &Arc<Inner>,
    inputs: &[HostTensor],
    opts: &RunOptions,
    outputs: &mut Vec<HostTensor>,
) -> Result<RunInfo, Error> {
    let plan = plan_for(inner, start_symbols(inner, inputs)?)?;
    outputs.truncate(inner.out_types.len());
    for (i, (t, s)) in inner.out_types.iter().zip(&plan.out_shapes).enumerate() {
        let dt = t.dtype().unwrap_or(DType::F32);
        match outputs.get_mut(i) {
            Some(o) => o.reset_zeros(dt, s),
            None => outputs.push(HostTensor::zeros(dt, s)),
        }
    }
    let mut ctx = {
        let mut pool = inner
            .contexts
            .lock()
            .map_err(|_| Error("context pool poisoned".into()))?;
        pool.pop()
    }
    .map_or_else(|| new_context(inner), Ok)?;
    // Stream 0's scratch, or every stream's when they take turns on this thread.
    let scratch = match inner.serial {
        Some(_) => plan.scratch.iter().copied().max(),
        None => plan.scratch.first().copied(),
    };
    ctx.scratch.ensure(scratch.unwrap_or(0));
    for (buf, &n) in ctx.arenas.iter_mut().zip(&plan.arena_lens) {
        if let Some(buf) = buf {
            buf.ensure(n);
        }
    }
    let state = run_state(inner, &mut ctx, plan, inputs, outputs, opts.trace)?;
    let mut result = copy_inputs(inner, &mut ctx, inputs);
    let mut traces = vec![];
    if result.is_ok() {
        (result, traces) = run_streams(inner, &mut ctx, &state, opts);
    }
    let plan = state.plan.now();
    // Every worker has let go of it: the next run on this context refills it.
    ctx.state = Some(state);
    if let (Ok(()), Ok(p)) = (&result, &plan) {
        result = shrink_outputs(&p.out_shapes, outputs);
    }
    if result.is_ok() {
        result = copy_outputs(inner, &ctx, outputs);
    }
    if let Ok(mut pool) = inner.contexts.lock() {
        pool.push(ctx);
    }
    result?;
    let plan = plan?;
    let trace = opts.trace.then(|| Trace::new(inner, traces));
    let mut symbols: Vec<(String, i64)> =
        plan.syms.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    symbols.sort();
    Ok((symbols, trace))
}

/// Outputs whose shape a size symbol made smaller than planned: their
/// first bytes, which the kernels wrote at the actual shape.
fn shrink_outputs(shapes: &[Vec<usize>], outputs: &mut [HostTensor]) -> Result<(), Error> {
    for (o, s) in outputs.iter_mut().zip(shapes) {
        if !same_dims(&o.shape, s) {
            let n = checked_bytes(s, o.dtype.byte_size())
                .filter(|&n| n <= o.bytes().len())
                .ok_or_else(|| {
                    Error(format!(
                        "output shape {s:?} exceeds its planned {:?}",
                        o.shape
                    ))
                })?;
            *o = HostTensor::from_bytes(o.dtype, s, &o.bytes()[..n]).map_err(Error)?;
        }
    }
    Ok(())
}

/// After launch `ti`, which decides size symbol `b.sym`: read the count it
/// wrote, check it against the bound and switch the run to the plan at the
/// count (placements unchanged: they are at the bounds).
#[allow(clippy::too_many_arguments)]
fn bind_size(
    inner: &Inner,
    plans: &RunPlan,
    plan: &ShapePlan,
    ti: usize,
    rt: &TaskRt,
    b: &crate::size_syms::SizeBinder,
    bases: &[Ptr],
    scratch: *mut u8,
) -> Result<(), String> {
    let k = rt.kernel.as_ref().ok_or("launch without a kernel")?;
    let tp = plan.tasks[ti].as_ref().ok_or("launch without a plan")?;
    let v = b.count;
    let dt = k.types[v]
        .dtype()
        .filter(|d| d.is_int())
        .ok_or_else(|| format!("the count of {} is not an integer", b.op))?;
    if tp.shapes[v].iter().product::<usize>() != 1 {
        return Err(format!("the count of {} is not one element", b.op));
    }
    let p: *const u8 = match tp.places[v] {
        Place::Arena(a, off) => bases[a].0.wrapping_add(off),
        Place::Scratch(off) => scratch.wrapping_add(off),
        Place::Folded => rt.folded.get(&v).map_or(std::ptr::null(), |f| f.as_ptr()),
        _ => std::ptr::null(),
    };
    if p.is_null() {
        return Err(format!("the count of {} has no memory", b.op));
    }
    let mut c = [0i64];
    // SAFETY: the count is one element of `dt` (checked above) and its
    // place holds its bytes at this shape: `check_places` proved arena and
    // folded places, scratch places are carved from this stream's scratch
    // of the plan's size (see `launch`).
    crate::buffer::load_i64(dt, p, 0, &mut c);
    let c = c[0];
    if !(0..=b.bound).contains(&c) {
        return Err(format!(
            "{} counted {c}, outside 0..={} (the bound of its size symbol {})",
            b.op, b.bound, b.sym
        ));
    }
    let mut syms = plan.syms.clone();
    syms.insert(b.sym, c);
    let next = plan_for(inner, syms).map_err(|e| e.message)?;
    // Scratch was allocated for the first plan of the run.
    if let Some(s) = next
        .scratch
        .iter()
        .zip(&plans.first.scratch)
        .position(|(n, have)| n > have)
    {
        return Err(format!(
            "stream {s} needs more scratch at {} = {c} than at its bound",
            b.sym
        ));
    }
    if let Some(m) = &plans.cur {
        *m.lock().map_err(|_| "run plan poisoned")? = next;
    }
    Ok(())
}

/// The base address of every arena of this run: the context's own, or the
/// caller's tensor for a zero-copy input or output.
fn arena_bases(
    inner: &Inner,
    arenas: &mut [Option<AlignedBuf>],
    inputs: &[HostTensor],
    outputs: &mut [HostTensor],
    bases: &mut Vec<Ptr>,
) -> Result<(), Error> {
    bases.clear();
    for (a, arena) in inner.def.arenas.iter().enumerate() {
        let p = match (arena.role, inner.bindings[a], &mut arenas[a]) {
            (_, _, Some(buf)) => buf.as_mut_ptr(),
            (ArenaRole::Input, Binding::ZeroCopy, None) => {
                let i = inner
                    .io
                    .inputs
                    .iter()
                    .position(|t| t.buffer.arena as usize == a)
                    .ok_or_else(|| Error(format!("input arena {a} has no input")))?;
                // Read-only: no task writes a zero-copy input arena.
                inputs[i].as_ptr() as *mut u8
            }
            (ArenaRole::Output, Binding::ZeroCopy, None) => {
                let i = inner
                    .io
                    .outputs
                    .iter()
                    .position(|t| t.buffer.arena as usize == a)
                    .ok_or_else(|| Error(format!("output arena {a} has no output")))?;
                outputs[i].as_mut_ptr()
            }
            _ => return Err(Error(format!("arena {a} is not bound"))),
        };
        bases.push(Shared(p));
    }
    Ok(())
}

/// The context's run state, refilled for this run: allocated on the
/// context's first run only (or, never expected, when a worker still held
/// the last one).
fn run_state(
    inner: &Inner,
    ctx: &mut ExecContext,
    plan: Arc<ShapePlan>,
    inputs: &[HostTensor],
    outputs: &mut [HostTensor],
    trace: bool,
) -> Result<Arc<RunState>, Error> {
    let fresh = |plan: &Arc<ShapePlan>| {
        Arc::new(RunState {
            plan: RunPlan::new(inner, plan.clone()),
            bases: Vec::with_capacity(inner.def.arenas.len()),
            events: Events::new(inner.streams.len(), inner.limits.timeout),
            slots: Slots::new(inner.threads),
            t0: None,
        })
    };
    let mut state = ctx.state.take().unwrap_or_else(|| fresh(&plan));
    if Arc::get_mut(&mut state).is_none() {
        state = fresh(&plan);
    }
    let st = Arc::get_mut(&mut state).ok_or_else(|| Error("run state shared".into()))?;
    st.plan = RunPlan::new(inner, plan);
    arena_bases(inner, &mut ctx.arenas, inputs, outputs, &mut st.bases)?;
    st.events.reset(inner.streams.len(), inner.limits.timeout);
    st.slots = Slots::new(inner.threads);
    st.t0 = trace.then(Instant::now);
    Ok(state)
}

/// The bytes `[offset, offset + n)` of a context arena, checked (a symbolic
/// size at a run's shape need not be below its size at the bounds).
fn arena_range(
    t: &ge_om::model::IoTensor,
    n: usize,
    len: usize,
) -> Result<std::ops::Range<usize>, Error> {
    let off = t.buffer.offset as usize;
    match off.checked_add(n) {
        Some(end) if end <= len => Ok(off..end),
        _ => Err(Error(format!(
            "'{}': {n} bytes at offset {off} overflow its {len}-byte arena at this shape",
            t.name
        ))),
    }
}

/// Inputs whose arena is not the caller's tensor are copied into it.
fn copy_inputs(inner: &Inner, ctx: &mut ExecContext, inputs: &[HostTensor]) -> Result<(), Error> {
    for (i, t) in inner.io.inputs.iter().enumerate() {
        let a = t.buffer.arena as usize;
        if inner.bindings[a] == Binding::Copy {
            if let Some(buf) = &mut ctx.arenas[a] {
                let b = inputs[i].bytes();
                let r = arena_range(t, b.len(), buf.len())?;
                buf.as_mut_slice()[r].copy_from_slice(b);
            }
        }
    }
    Ok(())
}

/// Outputs whose arena is not the caller's tensor are copied out of it.
fn copy_outputs(inner: &Inner, ctx: &ExecContext, outputs: &mut [HostTensor]) -> Result<(), Error> {
    for (i, t) in inner.io.outputs.iter().enumerate() {
        let a = t.buffer.arena as usize;
        if inner.bindings[a] == Binding::Copy {
            if let Some(buf) = &ctx.arenas[a] {
                let r = arena_range(t, outputs[i].bytes().len(), buf.len())?;
                outputs[i].bytes_mut().copy_from_slice(&buf.as_slice()[r]);
            }
        }
    }
    Ok(())
}

/// Run every stream: 1.. on the context's workers, 0 on this thread; wait
/// for all of them. The first real error (not a stream that stopped because
/// another failed), and each stream's trace events (none without a trace).
fn run_streams(
    inner: &Arc<Inner>,
    ctx: &mut ExecContext,
    state: &Arc<RunState>,
    opts: &RunOptions,
) -> (Result<(), Error>, Vec<Vec<TraceEvent>>) {
    let events = &state.events;
    let mut traces: Vec<Vec<TraceEvent>> = match opts.trace {
        true => vec![vec![]; inner.streams.len()],
        false => vec![],
    };
    if let Some(order) = &inner.serial {
        let r = run_serial(
            inner,
            state,
            order,
            ctx.scratch.as_mut_ptr(),
            &mut ctx.stream0,
            &mut traces,
        );
        return (r, traces);
    }
    let mut sent = 0;
    let mut errors: Vec<Error> = vec![];
    for w in &ctx.workers {
        let job = Job {
            inner: inner.clone(),
            state: state.clone(),
        };
        if w.mailbox.put(job) {
            sent += 1;
        } else {
            events.abort();
            errors.push(Error("a stream worker has stopped".into()));
        }
    }
    let mut tr0 = vec![];
    let trace = state.t0.map(|t| (t, &mut tr0));
    let r0 = run_stream(
        inner,
        state,
        0,
        ctx.scratch.as_mut_ptr(),
        &mut ctx.stream0,
        trace,
    );
    if let Err(e) = r0 {
        events.abort();
        errors.push(e);
    }
    events.finish();
    if let Some(t) = traces.first_mut() {
        *t = tr0;
    }
    for (s, r, tr) in ctx.replies.wait(sent).drain(..) {
        if let Some(t) = traces.get_mut(s) {
            *t = tr;
        }
        if let Err(e) = r {
            errors.push(e);
        }
    }
    // The failure that stopped the run comes first: the streams it aborted
    // (and any "deadlock" a stream saw while the run was stopping) say only
    // that they were stopped.
    errors.sort_by_key(|e| {
        let m = e.message.as_str();
        if m == "aborted" || m.ends_with(": aborted") {
            2
        } else if m.starts_with("deadlock:") {
            1
        } else {
            0
        }
    });
    let result = match errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    };
    (result, traces)
}

/// The limits a kernel that loops (graph.while) keeps: the run's step
/// budget and deadline.
fn loop_limits(inner: &Inner, events: &Events) -> crate::kernels::RunLimits {
    crate::kernels::RunLimits {
        max_steps: inner.limits.max_steps,
        deadline: events.deadline,
    }
}

/// What every task of a run reads besides itself: the model, the run's
/// shared state, the scratch its kernels use and how they may split work.
struct Tasks<'a> {
    inner: &'a Inner,
    st: &'a RunState,
    scratch: *mut u8,
    /// Compute kernels split their work over the pool (holding a slot).
    compute: Par<'a>,
    /// Host tasks run on their stream's thread.
    host: Par<'a>,
}

impl<'a> Tasks<'a> {
    fn new(inner: &'a Inner, st: &'a RunState, scratch: *mut u8) -> Tasks<'a> {
        let limits = loop_limits(inner, &st.events);
        Tasks {
            inner,
            st,
            scratch,
            compute: Par {
                pool: Some((&inner.compute, &st.slots)),
                limits,
            },
            host: Par { pool: None, limits },
        }
    }

    /// How task `rt` runs: a compute kernel while it holds one of the run's
    /// slots (taken here, before any trace clock starts: waiting is not
    /// running), anything else on the stream's thread.
    fn par_for(&self, rt: &TaskRt) -> (&Par<'a>, Option<crate::pool::Permit<'a>>) {
        match (&rt.task, rt.compute) {
            (Task::Launch { .. }, true) => (&self.compute, self.compute.enter()),
            _ => (&self.host, None),
        }
    }

    /// Run launch or memcpy task `ti` (`slots`: its stream's kernel slots);
    /// other tasks are the streams' business.
    fn work(&self, ti: usize, par: &Par, slots: &mut Vec<Slot>) -> Result<(), Failure> {
        let (inner, plans) = (self.inner, &self.st.plan);
        let held: Arc<ShapePlan>;
        let plan: &ShapePlan = match &plans.cur {
            None => &plans.first,
            Some(_) => {
                held = plans.now()?;
                &held
            }
        };
        let bases = &self.st.bases[..];
        let rt = &inner.tasks[ti];
        match &rt.task {
            Task::Launch { .. } => {
                // Split over the pool or not, as measured (`crate::split`).
                let mode = match rt.compute && par.threads() > 1 {
                    true => rt.split.mode(),
                    false => Mode::Split,
                };
                let par = if mode.splits() { par } else { &self.host };
                let t0 = mode.timed().then(Instant::now);
                launch(
                    inner,
                    plan,
                    ti,
                    bases,
                    self.scratch,
                    par,
                    self.st.events.deadline,
                    slots,
                )?;
                if let Some(t0) = t0 {
                    rt.split.record(mode, t0.elapsed());
                }
                match inner.sizes.get(&ti) {
                    Some(b) => bind_size(inner, plans, plan, ti, rt, b, bases, self.scratch)
                        .map_err(Failure::from),
                    None => Ok(()),
                }
            }
            Task::Memcpy { src, dst, .. } => {
                let (src, dst) = match plan.moved.get(&ti) {
                    Some(Task::Memcpy { src, dst, .. }) => (src, dst),
                    _ => (src, dst),
                };
                memcpy(bases, src, dst, plan.sizes[ti]);
                Ok(())
            }
            _ => Err("not a launch or memcpy".into()),
        }
    }
}

/// Note task `ti` of stream `s`, started at `start`, in the trace.
fn traced(
    trace: &mut Option<(Instant, &mut Vec<TraceEvent>)>,
    start: Option<std::time::Duration>,
    ti: usize,
    s: usize,
) {
    if let (Some((t0, tr)), Some(start)) = (trace.as_mut(), start) {
        tr.push(TraceEvent {
            task: ti,
            stream: s,
            start_us: start.as_secs_f64() * 1e6,
            end_us: t0.elapsed().as_secs_f64() * 1e6,
        });
    }
}

/// Run the tasks of stream `s` in order (`mine`: its scratch).
fn run_stream(
    inner: &Inner,
    st: &RunState,
    s: usize,
    scratch: *mut u8,
    mine: &mut StreamScratch,
    mut trace: Option<(Instant, &mut Vec<TraceEvent>)>,
) -> Result<(), Error> {
    let events = &st.events;
    let list = &inner.streams[s];
    let waits_done = &mut mine.waits;
    waits_done.clear();
    let mut pc = 0;
    let mut steps = 0u64;
    let tasks = Tasks::new(inner, st, scratch);
    // This thread wants a core while it runs the stream (not while it waits).
    let _awake = inner.compute.awake();
    while pc < list.len() {
        steps += 1;
        within_limits(inner, events, s, steps)?;
        let ti = list[pc];
        pc += 1;
        let rt = &inner.tasks[ti];
        if rt.dead {
            continue;
        }
        let (par, _slot) = tasks.par_for(rt);
        let start = trace.as_ref().map(|(t0, _)| t0.elapsed());
        let res: Result<(), Failure> = match &rt.task {
            Task::Launch { .. } | Task::Memcpy { .. } => tasks.work(ti, par, &mut mine.slots),
            Task::Record { .. } => {
                events.signal(ti);
                Ok(())
            }
            Task::Wait { event, .. } => match rt.wait_for {
                Some(rec) => {
                    let n = waits_done.entry(ti).or_insert(0);
                    *n += 1;
                    let want = *n;
                    inner
                        .compute
                        .asleep(|| events.wait(s, rec, want))
                        .map_err(Failure::from)
                }
                None => Err(format!("wait on event {event} with no record before it").into()),
            },
            Task::Label { .. } => Ok(()),
            Task::Goto { label, .. } => jump(inner, s, *label)
                .map(|p| pc = p)
                .map_err(Failure::from),
            Task::Switch { value, targets, .. } => {
                let plan = st.plan.now()?;
                let value = match plan.moved.get(&ti) {
                    Some(Task::Switch { value, .. }) => value,
                    _ => value,
                };
                switch_label(&st.bases, value, plan.sizes[ti], targets)
                    .and_then(|l| jump(inner, s, l))
                    .map(|p| pc = p)
                    .map_err(Failure::from)
            }
            Task::End => break,
        };
        // The dispatch site: every task failure leaves here with its task,
        // stream, kernel and, from a kernel, the op and its location.
        if let Err(f) = res {
            return Err(task_error(f, ti, rt, s));
        }
        traced(&mut trace, start, ti, s);
    }
    Ok(())
}

/// Run the launches and copies of every stream in the model's serial order
/// (`crate::serial`) on this thread: the order already keeps the events'
/// promises, so records and waits are only traced.
fn run_serial(
    inner: &Inner,
    st: &RunState,
    order: &[crate::serial::Step],
    scratch: *mut u8,
    mine: &mut StreamScratch,
    traces: &mut [Vec<TraceEvent>],
) -> Result<(), Error> {
    // Straight-line streams: each runs exactly its list, so a step budget
    // below a list's length fails the run whatever the order.
    for (s, list) in inner.streams.iter().enumerate() {
        within_limits(inner, &st.events, s, list.len() as u64)?;
    }
    let tasks = Tasks::new(inner, st, scratch);
    let _awake = inner.compute.awake();
    for &crate::serial::Step {
        stream: s,
        task: ti,
        pos,
    } in order
    {
        within_limits(inner, &st.events, s, pos as u64)?;
        let rt = &inner.tasks[ti];
        let mut trace = st.t0.zip(traces.get_mut(s));
        if let Task::Launch { .. } | Task::Memcpy { .. } = rt.task {
            let (par, _slot) = tasks.par_for(rt);
            let start = trace.as_ref().map(|(t0, _)| t0.elapsed());
            tasks
                .work(ti, par, &mut mine.slots)
                .map_err(|f| task_error(f, ti, rt, s))?;
            traced(&mut trace, start, ti, s);
        } else {
            // A record or wait: the order itself keeps it.
            let start = trace.as_ref().map(|(t0, _)| t0.elapsed());
            traced(&mut trace, start, ti, s);
        }
    }
    Ok(())
}

/// The run's limits, checked before each task of stream `s`: its step
/// budget (`steps` tasks so far) and the run's deadline.
fn within_limits(inner: &Inner, events: &Events, s: usize, steps: u64) -> Result<(), Error> {
    let max_steps = inner.limits.max_steps;
    if steps > max_steps {
        return Err(Error(format!(
            "stream {s} ran {max_steps} tasks, its step budget (--max-steps): does a loop never exit?"
        )));
    }
    if events.deadline.is_some_and(|d| Instant::now() >= d) {
        return Err(Error(format!("stream {s}: {}", events.timeout_message())));
    }
    Ok(())
}

/// The error of task `ti` of stream `s` that failed with `f`: its task,
/// stream, kernel and, from a kernel, the op and its location.
fn task_error(f: Failure, ti: usize, rt: &TaskRt, s: usize) -> Error {
    let mut site = task_site(ti, rt.kernel.as_deref());
    site.stream = Some(s);
    if let Some((op, loc)) = f.op {
        site.op = op;
        if !loc.is_unknown() {
            site.loc = loc;
        }
    }
    Error::at(site, f.msg)
}

/// Copy `n` bytes of buffer `src` to buffer `dst` (a memcpy task).
fn memcpy(bases: &[Ptr], src: &Buffer, dst: &Buffer, n: usize) {
    // SAFETY: `n` is `ShapePlan::sizes` of this task, and `build_plan`
    // proved `[offset, offset + n)` of both buffers inside their arenas'
    // real lengths at this shape (`proof::arena_lengths`: a zero-copy arena
    // is the caller's tensor at its actual size), which `bases` point to.
    // `ptr::copy` allows the ranges to overlap.
    unsafe {
        std::ptr::copy(
            bases[src.arena as usize].0.add(src.offset as usize),
            bases[dst.arena as usize].0.add(dst.offset as usize),
            n,
        )
    };
}

/// The position of `label` in stream `s`'s task list.
fn jump(inner: &Inner, s: usize, label: u32) -> Result<usize, String> {
    inner.labels[s]
        .get(&label)
        .copied()
        .ok_or_else(|| format!("jump to missing label {label}"))
}

/// The label a switch jumps to: `targets[value]`.
fn switch_label(bases: &[Ptr], value: &Buffer, n: usize, targets: &[u32]) -> Result<u32, String> {
    let ty = switch_dtype(value)
        .filter(|d| d.byte_size() == n)
        .ok_or("a switch value that is not one element")?;
    let mut v = [0i64];
    // SAFETY: `build_plan` proved `n` bytes at the value's offset inside its
    // arena at this shape and `n` the size of one `ty` element, which is
    // all `load_i64` reads for one output.
    let p = unsafe { bases[value.arena as usize].0.add(value.offset as usize) };
    crate::buffer::load_i64(ty, p, 0, &mut v);
    usize::try_from(v[0])
        .ok()
        .and_then(|k| targets.get(k))
        .copied()
        .ok_or_else(|| {
            format!(
                "switch read {}, outside its {} targets",
                v[0],
                targets.len()
            )
        })
}

#[allow(clippy::too_many_arguments)]
fn launch(
    inner: &Inner,
    plan: &ShapePlan,
    ti: usize,
    bases: &[Ptr],
    scratch: *mut u8,
    par: &Par,
    deadline: Option<Instant>,
    buf: &mut Vec<Slot>,
) -> Result<(), Failure> {
    let rt = &inner.tasks[ti];
    let k = rt.kernel.as_ref().ok_or("launch without a kernel")?;
    let tp = plan.tasks[ti].as_ref().ok_or("launch without a plan")?;
    let ptr_of = |v: usize, p: Place| -> *mut u8 {
        match p {
            Place::Arena(a, off) => bases[a].0.wrapping_add(off),
            Place::Weight(w) => inner.weight_ptr(w).unwrap_or(std::ptr::null_mut()),
            Place::Folded => rt
                .folded
                .get(&v)
                .map_or(std::ptr::null_mut(), |b| b.as_ptr() as *mut u8),
            Place::Const(i) => k.consts[i].1.as_ptr() as *mut u8,
            Place::Scratch(off) => scratch.wrapping_add(off),
            Place::None => std::ptr::null_mut(),
        }
    };
    // Each slot's pointer is valid for `slot.bytes()` bytes: `check_places`
    // proved it for arena, weight, folded and constant places at this shape,
    // and scratch places are carved from this stream's scratch of the
    // plan's size. The native steps rely on exactly that (`Step::run`).
    // The stream's slots are refilled in place (no allocation once grown).
    let n = k.types.len();
    if buf.len() < n {
        buf.resize_with(n, || Slot {
            ptr: std::ptr::null_mut(),
            shape: vec![],
            dtype: DType::U8,
        });
    }
    for (v, slot) in buf[..n].iter_mut().enumerate() {
        slot.ptr = ptr_of(v, tp.places[v]);
        slot.shape.clone_from(&tp.shapes[v]);
        slot.dtype = k.types[v].dtype().unwrap_or(DType::U8);
    }
    let slots = &buf[..n];
    if let Some(v) =
        (0..slots.len()).find(|&v| slots[v].ptr.is_null() && !matches!(tp.places[v], Place::None))
    {
        return Err(format!("value {v} has no memory").into());
    }
    if k.fallback.is_some() {
        return fallback(inner, plan, k, slots, &tp.copies, bases, deadline);
    }
    for (si, s) in k.steps.iter().enumerate() {
        if rt.skip[si] {
            continue;
        }
        // Kernel functions keep their `Result<(), String>`; the op is added here.
        s.run(slots, par).map_err(|msg| Failure {
            msg,
            op: Some((Some(s.name.clone()), s.loc)),
        })?;
    }
    for &(v, a, off, n) in &tp.copies {
        let src = slots[v].ptr;
        if src.is_null() {
            return Err(format!("result value {v} was not computed").into());
        }
        // SAFETY: `n` is the value's size at this shape (`plan_launch`),
        // which its slot holds (see `slots` above); `plan_launch` proved
        // `[off, off + n)` inside arena `a`'s real length (`check_in_arena`).
        // Split across the kernel's threads when large (`par_copy`'s rule).
        unsafe { crate::kernels::movement::par_copy(par, src, bases[a].0.add(off), n)? };
    }
    Ok(())
}

/// Run a kernel on the reference interpreter.
fn fallback(
    inner: &Inner,
    plan: &ShapePlan,
    k: &crate::kernels::KernelProgram,
    slots: &[Slot],
    copies: &[(usize, usize, usize, usize)],
    bases: &[Ptr],
    deadline: Option<Instant>,
) -> Result<(), Failure> {
    let mut args = vec![];
    for &a in &k.args {
        let s = &slots[a];
        // SAFETY: an argument's slot is placed (never `Place::None`: the
        // loader proved one operand per argument) and valid for its
        // `bytes()` (`check_places`).
        let bytes = unsafe { std::slice::from_raw_parts(s.ptr as *const u8, s.bytes()) };
        args.push(ge_dialects::data::tensor_from_bytes(
            bytes,
            s.shape.clone(),
            s.dtype,
        )?);
    }
    let mut interp = ge_ir::interp::Interpreter::new(&inner.kmodule);
    interp.symbols = plan.syms.clone();
    // An op run here may loop (graph.while, graph.loop): the run's limits
    // bound it as they bound the task program — each op counts as a step.
    interp.max_ops = usize::try_from(inner.limits.max_steps).ok();
    interp.deadline = deadline;
    // The interpreter's error is at the op that failed.
    let res = interp.run_function(&k.name, args).map_err(|e| Failure {
        msg: e.msg,
        op: Some((None, e.loc)),
    })?;
    if res.len() != k.results.len() {
        return Err(format!(
            "kernel returned {} results, expected {}",
            res.len(),
            k.results.len()
        )
        .into());
    }
    for (i, t) in res.iter().enumerate() {
        let r = k.results[i];
        let b = ge_dialects::data::tensor_to_bytes(t);
        // Results go to their out buffer (either direct or via a copy entry).
        let dst = match copies.iter().find(|c| c.0 == r) {
            Some(&(_, a, off, n)) => {
                if b.len() != n {
                    return Err(
                        format!("kernel result {i} has {} bytes, expected {n}", b.len()).into(),
                    );
                }
                bases[a].0.wrapping_add(off)
            }
            None => {
                if b.len() != slots[r].bytes() {
                    return Err(format!(
                        "kernel result {i} has {} bytes, expected {}",
                        b.len(),
                        slots[r].bytes()
                    )
                    .into());
                }
                slots[r].ptr
            }
        };
        // SAFETY: `b.len()` was checked equal to the result's planned size,
        // which its out range (a copy entry proved inside its arena) or its
        // slot (`check_places`) holds; `b` is a fresh vector, so they
        // cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), dst, b.len()) };
    }
    Ok(())
}

/// A task's failure as the code running it sees it: the message and, from
/// a kernel, the op that failed (its name when known, its location).
/// `run_stream`, the dispatch site, turns it into an [`Error`] at the task.
struct Failure {
    msg: String,
    op: Option<(Option<String>, Location)>,
}

impl From<String> for Failure {
    fn from(msg: String) -> Failure {
        Failure { msg, op: None }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::from(e.message)
    }
}

impl From<&str> for Failure {
    fn from(msg: &str) -> Failure {
        Failure::from(msg.to_string())
    }
}

impl Session {
    /// Inspection hook for tests (runtime/tests/suite/launch_placement.rs): per
    /// task of the plan at the shape of `inputs`, how many of a launch's
    /// results are copied into their buffer after the kernel instead of
    /// written there directly (`None` for other tasks). Placement is
    /// invisible in the outputs when it is only too careful.
    #[doc(hidden)]
    pub fn launch_copies(&self, inputs: &[HostTensor]) -> Result<Vec<Option<usize>>, Error> {
        let inner = &self.model.inner;
        let plan = plan_for(inner, start_symbols(inner, inputs)?)?;
        Ok(plan
            .tasks
            .iter()
            .map(|t| t.as_ref().map(|p| p.copies.len()))
            .collect())
    }
}
