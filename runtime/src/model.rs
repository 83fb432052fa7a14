//! Loading an `.om`: map the file, validate it with ge-om's
//! reader, check the SoC, bind the weights in place, compile the kernels,
//! fold weight-only kernel subexpressions, and prepare the per-stream task
//! lists and event pairings the executor runs.

use crate::buffer::AlignedBuf;
use crate::kernels::{self, KernelProgram, Op, Par, Slot};
use crate::Error;
use ge_ir::module::Module;
use ge_ir::{DType, Ident, Type};
use ge_om::model::{ArenaRole, Buffer, IoDesc, ModelDef, Operand, Task, TaskProgram};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// How a model is loaded.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Compute threads for AICore/VectorCore kernels: at most this many
    /// threads of a run compute at once, across all its streams.
    pub threads: usize,
    /// Refuse a model compiled for another SoC (`None`: accept any SoC this
    /// runtime knows).
    pub soc: Option<String>,
    /// Fold weight-only parts of kernels at load time (format conversions
    /// of weights, constant subexpressions).
    pub fold_weights: bool,
    /// Largest number of concrete shapes whose plans are kept.
    pub plan_cache: usize,
    /// Keep activations that only convolutions or matrix products read in
    /// NCHW / ND between kernels instead of the NC1HWC0 / FRACTAL_NZ blocks
    /// the model names (see `crate::layouts`).
    pub plain_layouts: bool,
    /// Whether convolutions read and write the NC1HWC0 blocks as they are
    /// where that pays (AVX-512; see `crate::blocked_reads`).
    pub blocked_reads: BlockedReads,
    /// Memory budget in bytes for everything the model or a run's inputs
    /// size (kernel values at the symbols' bounds, the arenas of an
    /// execution context, scratch and outputs of a run), checked before it
    /// is allocated. `None`: the process's budget (`ge_ir::budget`, ge-run's
    /// `--max-memory`; by default the machine's available memory).
    pub max_memory: Option<u64>,
    /// Most tasks one stream may run in one run (loops in the task program
    /// count every iteration); beyond it the run fails.
    pub max_steps: u64,
    /// Wall-clock limit of one run, time blocked on events included; `None`:
    /// none. (A run where every stream waits for an event no running
    /// stream can record fails at once as a deadlock, with or without it.)
    pub timeout: Option<std::time::Duration>,
    /// Whether the streams run one after another on the calling thread or
    /// on worker threads (`crate::serial`).
    pub stream_execution: crate::StreamExecution,
}

/// The default [`LoadOptions::max_steps`].
pub const DEFAULT_MAX_STEPS: u64 = 10_000_000;

/// When convolutions read and write NC1HWC0 blocks as they are
/// ([`LoadOptions::blocked_reads`]; `crate::blocked_reads`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockedReads {
    /// Never: every convolution converts its input to NCHW.
    Never,
    /// Where the shapes admit it and this CPU measured the blocks kernel
    /// faster (`kernels::blocks_probe`, once per process).
    Measured,
    /// Wherever the shapes admit it, unmeasured (tests, A/B runs).
    Always,
}

impl std::str::FromStr for BlockedReads {
    type Err = String;
    fn from_str(s: &str) -> Result<BlockedReads, String> {
        match s {
            "never" => Ok(BlockedReads::Never),
            "measured" => Ok(BlockedReads::Measured),
            "always" => Ok(BlockedReads::Always),
            _ => Err(format!(
                "unknown blocked-reads mode '{s}' (measured, always or never)"
            )),
        }
    }
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            threads: 1,
            soc: None,
            fold_weights: true,
            plan_cache: 8,
            plain_layouts: true,
            blocked_reads: BlockedReads::Measured,
            max_memory: None,
            max_steps: DEFAULT_MAX_STEPS,
            timeout: None,
            stream_execution: crate::StreamExecution::Serial,
        }
    }
}

/// The limits a run is held to (from [`LoadOptions`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub max_memory: u64,
    pub max_steps: u64,
    pub timeout: Option<std::time::Duration>,
}

/// The bytes of the file: an mmap (normal case) or an owned image.
pub(crate) enum Backing {
    Map(memmap2::Mmap),
    Owned(AlignedBuf),
}

impl Backing {
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Backing::Map(m) => m,
            Backing::Owned(b) => b.as_slice(),
        }
    }
}

/// A task of the program after loading.
#[derive(Debug)]
pub(crate) struct TaskRt {
    pub task: Task,
    /// For launches: the kernel.
    pub kernel: Option<Arc<KernelProgram>>,
    /// For launches: values computed at load time (value → bytes).
    pub folded: HashMap<usize, Arc<AlignedBuf>>,
    /// For launches: steps not run (results folded, or a conversion elided).
    pub skip: Vec<bool>,
    /// For launches: (value, argument) — the value lives in the argument's
    /// buffer (its conversion from blocks was elided, `crate::layouts`).
    pub alias: Vec<(usize, usize)>,
    /// For waits: the record task (program index) it waits for.
    pub wait_for: Option<usize>,
    /// Runs on the compute pool (AICore / VectorCore) rather than a host thread.
    pub compute: bool,
    /// A launch whose results were all folded at load time and that nobody
    /// reads from the arena: not run.
    pub dead: bool,
    /// For compute launches of a run with more than one thread: whether
    /// the kernel splits its work over the pool, as measured
    /// ([`crate::split`]).
    pub split: crate::split::SplitChoice,
}

/// How a model input or output arena is bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Binding {
    /// The caller's tensor is the arena (no copy).
    ZeroCopy,
    /// A context-owned arena, copied in (inputs) or out (outputs).
    Copy,
}

pub(crate) struct Inner {
    pub backing: Backing,
    pub weights_offset: usize,
    pub weights_len: usize,
    pub name: String,
    pub soc: String,
    pub def: ModelDef,
    pub program: TaskProgram,
    pub io: IoDesc,
    pub kmodule: Module,
    pub tasks: Vec<TaskRt>,
    /// Program task indices of each stream, in order.
    pub streams: Vec<Vec<usize>>,
    /// label → position in the stream's list, per stream.
    pub labels: Vec<HashMap<u32, usize>>,
    /// Per arena: its binding (inputs/outputs) — workspace arenas are `Copy`.
    pub bindings: Vec<Binding>,
    pub in_types: Vec<Type>,
    pub out_types: Vec<Type>,
    /// Symbols bound from the inputs (sorted by name), then the value
    /// symbols in binding order: the plan-cache key order.
    pub symbols: Vec<Ident>,
    /// The `graph.specialize`s that bind value symbols at run start
    /// (`crate::value_syms`), in binding order.
    pub binders: Vec<crate::value_syms::Binder>,
    /// Launches that bind a size symbol after they ran (`crate::size_syms`),
    /// by task index.
    pub sizes: HashMap<usize, crate::size_syms::SizeBinder>,
    pub bounds: HashMap<Ident, i64>,
    pub fallback_ops: BTreeSet<String>,
    pub compute: crate::pool::Pool,
    pub threads: usize,
    /// Buffers kept in NCHW instead of NC1HWC0 (`crate::layouts`).
    pub plain_buffers: usize,
    /// Convolutions that read NC1HWC0 blocks as they are
    /// (`crate::blocked_reads`).
    pub blocked_reads: usize,
    /// This CPU's measurement of the blocks kernel, when the choice asked
    /// for it ([`BlockedReads::Measured`] and a convolution could take it).
    pub blocks_verdict: Option<crate::kernels::blocks_probe::Verdict>,
    /// Copies left by those elisions and dropped (`layouts::forward_copies`).
    pub forwarded_copies: usize,
    /// Bytes of constant operands prepared at load (filters packed for the
    /// GEMM: `Conv::prepare`, `Kernel::prepare`).
    pub prepared_bytes: usize,
    pub plans: Mutex<crate::exec::PlanCache>,
    pub contexts: Mutex<Vec<crate::exec::ExecContext>>,
    pub limits: Limits,
    /// The serial order of the streams' tasks (`crate::serial`); `None`:
    /// one worker thread per stream beyond the first.
    pub serial: Option<Vec<crate::serial::Step>>,
}

/// A loaded model. Cheap to clone (shared); `Send + Sync`: any number of
/// threads may run it at once, each run on its own execution context (own
/// workspace arena and scratch), taken from a pool.
#[derive(Clone)]
pub struct Model {
    pub(crate) inner: Arc<Inner>,
}

fn ty(s: &str) -> Result<Type, Error> {
    ge_ir::parser::parse_type_str(ge_ir::context::bare(), s)
        .map_err(|d| Error(format!("bad type '{s}' in the model: {}", d.message)))
}

/// The SoCs this runtime can execute models for.
pub fn supported_socs() -> Vec<&'static str> {
    ge_soc::BUILTIN.iter().map(|(n, _)| *n).collect()
}

impl Model {
    /// Load an `.om` file (memory-mapped; weights are used in place).
    pub fn load(path: impl AsRef<Path>) -> Result<Model, Error> {
        Model::load_with(path, &LoadOptions::default())
    }

    pub fn load_with(path: impl AsRef<Path>, opts: &LoadOptions) -> Result<Model, Error> {
        let path = path.as_ref();
        let f = std::fs::File::open(path)
            .map_err(|e| Error(format!("cannot read '{}': {e}", path.display())))?;
        // SAFETY: the map is read-only; a file changed under a running model
        // is outside what we guard against (as with any mmap-based loader).
        let map = unsafe { memmap2::Mmap::map(&f) }
            .map_err(|e| Error(format!("cannot map '{}': {e}", path.display())))?;
        Model::from_backing(Backing::Map(map), opts)
            .map_err(|e| e.in_model(&path.display().to_string()))
    }

    /// Load from an in-memory image (copied once into an aligned buffer).
    pub fn from_bytes(bytes: &[u8], opts: &LoadOptions) -> Result<Model, Error> {
        Model::from_backing(Backing::Owned(AlignedBuf::from_bytes(bytes)), opts)
    }

    /// Load: validate ([`ge_om::parse`]), check the SoC, compile the
    /// kernels, lay out the streams, bind the I/O arenas, then fold weights
    /// and elide layout conversions.
    fn from_backing(backing: Backing, opts: &LoadOptions) -> Result<Model, Error> {
        let bytes = backing.bytes();
        let om = ge_om::parse(bytes).map_err(|e| Error(e.0))?;
        check_soc(&om.soc, opts)?;
        let weights_offset = om.weights_offset as usize;
        let weights_len = om.weights.len();
        let (def, program, io) = (om.def.clone(), om.program.clone(), om.io.clone());
        let name = om.name.clone();
        let soc = om.soc.clone();
        let ctx = ge_dialects::context();
        let kmodule = ge_ir::parser::parse_module(
            &ctx,
            "<kernels>",
            om.kernels,
            ge_ir::parser::ParseOptions::default(),
        )
        .map_err(|d| Error(format!("kernels partition: {}", d.message)))?;
        drop(om);
        let bounds: HashMap<Ident, i64> = def
            .symbol_bounds
            .iter()
            .map(|(k, v)| (Ident::new(k), *v))
            .collect();
        let max_memory = crate::proof::budget(opts);
        crate::proof::check_kernels_module(&kmodule, &bounds, max_memory)?;
        let (kernels, fallback_ops) = compile_kernels(&kmodule, &program)?;
        let bindings = arena_bindings(&def, &program, &io);
        crate::proof::check_model(&def, &program, &kernels, &bounds, &bindings, max_memory)?;
        let Streams {
            tasks,
            streams,
            labels,
        } = Streams::of(&def, &program, &kernels);
        let in_types: Vec<Type> = io
            .inputs
            .iter()
            .map(|t| ty(&t.buffer.ty))
            .collect::<Result<_, _>>()?;
        let out_types: Vec<Type> = io
            .outputs
            .iter()
            .map(|t| ty(&t.buffer.ty))
            .collect::<Result<_, _>>()?;
        let mut symbols = input_symbols(&in_types);
        let binders = crate::value_syms::binders(&kmodule, &program, &io, &symbols)?;
        symbols.extend(binders.iter().flat_map(|b| b.binds.iter().copied()));
        let threads = opts.threads.max(1);
        let compute = crate::pool::Pool::new(threads, crate::pool::SPIN)
            .map_err(|e| Error(format!("cannot start the compute pool: {e}")))?;
        let def_replan = def.replan.clone();
        let mut inner = Inner {
            backing,
            weights_offset,
            weights_len,
            name,
            soc,
            def,
            program,
            io,
            kmodule,
            tasks,
            streams,
            labels,
            bindings,
            in_types,
            out_types,
            symbols,
            binders,
            sizes: HashMap::new(),
            // Unbounded symbols were planned at a sample in the file: no
            // limit at run time (the workspace is planned per shape).
            bounds: bounds
                .into_iter()
                .filter(|(k, _)| !def_unbounded(&def_replan).contains(&k.to_string()))
                .collect(),
            fallback_ops,
            compute,
            threads,
            plain_buffers: 0,
            blocked_reads: 0,
            blocks_verdict: None,
            forwarded_copies: 0,
            prepared_bytes: 0,
            plans: Mutex::new(crate::exec::PlanCache::new(opts.plan_cache.max(1))),
            contexts: Mutex::new(vec![]),
            limits: Limits {
                max_memory,
                max_steps: opts.max_steps,
                timeout: opts.timeout,
            },
            serial: None,
        };
        if opts.fold_weights {
            fold(&mut inner)?;
        }
        choose_layouts(&mut inner, opts);
        inner.sizes = crate::size_syms::binders(&inner.tasks, &inner.bounds, &inner.symbols)?;
        if opts.plain_layouts {
            inner.forwarded_copies = crate::layouts::forward_copies(&mut inner);
        }
        // The plan cache keys on the counts too (a plan per count seen).
        let mut sized: Vec<Ident> = inner.sizes.values().map(|b| b.sym).collect();
        sized.sort();
        inner.symbols.extend(sized);
        inner.serial = crate::serial::chosen(opts.stream_execution, &inner.tasks, &inner.streams)
            .map(|order| {
                order
                    .into_iter()
                    .filter(|s| !inner.tasks[s.task].dead)
                    .collect()
            });
        Ok(Model {
            inner: Arc::new(inner),
        })
    }

    /// How many activation buffers run in NCHW / ND instead of the blocks
    /// the model names, their conversions elided ([`LoadOptions::plain_layouts`]).
    pub fn plain_buffers(&self) -> usize {
        self.inner.plain_buffers
    }

    /// How many convolutions read and write NC1HWC0 blocks as they are
    /// ([`LoadOptions::blocked_reads`]).
    pub fn blocked_reads(&self) -> usize {
        self.inner.blocked_reads
    }

    /// What this CPU measured when the loader weighed blocks for this
    /// model's convolutions ([`BlockedReads::Measured`]; `None` when it did
    /// not need to).
    pub fn blocks_verdict(&self) -> Option<crate::kernels::blocks_probe::Verdict> {
        self.inner.blocks_verdict
    }

    /// How many copies between plain buffers (a conversion elided on both
    /// sides, around a concatenation) were dropped at load: the producer
    /// writes the destination, or the reader reads the source.
    pub fn forwarded_copies(&self) -> usize {
        self.inner.forwarded_copies
    }

    /// How many convolutions add a residual in their epilogue (an
    /// elementwise add after them folded in when the kernel was compiled,
    /// `Conv::residual`).
    pub fn fused_residuals(&self) -> usize {
        self.native_steps()
            .filter(|s| matches!(&s.op, kernels::Op::Conv(c) if c.residual.is_some()))
            .count()
    }

    /// The steps of the live tasks' native kernels.
    fn native_steps(&self) -> impl Iterator<Item = &kernels::Step> {
        self.inner
            .tasks
            .iter()
            .filter(|t| !t.dead)
            .filter_map(|t| t.kernel.as_ref().filter(|k| k.fallback.is_none()))
            .flat_map(|k| &k.steps)
    }

    /// How many kernel steps apply a following `graph.relu` in their own
    /// pass (`Kernel::with_relu`: a batch norm's), not as a step of its own.
    pub fn fused_relus(&self) -> usize {
        self.native_steps()
            .filter(|s| matches!(&s.op, kernels::Op::Kernel(_)) && s.name.ends_with(" + relu"))
            .count()
    }

    /// The model's name (from the header).
    pub fn name(&self) -> &str {
        &self.inner.name
    }
    /// The SoC the model was compiled for.
    pub fn soc(&self) -> &str {
        &self.inner.soc
    }
    pub fn num_streams(&self) -> usize {
        self.inner.streams.len()
    }
    /// Whether the streams run one after another on the calling thread
    /// (`crate::serial`) rather than on worker threads.
    pub fn runs_streams_serially(&self) -> bool {
        self.inner.serial.is_some()
    }
    pub fn num_events(&self) -> usize {
        self.inner.def.num_events as usize
    }
    pub fn num_tasks(&self) -> usize {
        self.inner.program.tasks.len()
    }
    /// Workspace bytes of one execution context.
    pub fn workspace_bytes(&self) -> u64 {
        self.inner
            .def
            .arenas
            .iter()
            .filter(|a| a.role == ArenaRole::Workspace)
            .map(|a| a.size)
            .sum()
    }
    pub fn weights_bytes(&self) -> usize {
        self.inner.weights_len
    }
    /// Input names and types (`.air` syntax).
    pub fn inputs(&self) -> Vec<(String, String)> {
        self.inner
            .io
            .inputs
            .iter()
            .map(|t| (t.name.clone(), t.buffer.ty.clone()))
            .collect()
    }
    pub fn outputs(&self) -> Vec<(String, String)> {
        self.inner
            .io
            .outputs
            .iter()
            .map(|t| (t.name.clone(), t.buffer.ty.clone()))
            .collect()
    }
    /// Per input: whether a run reads the caller's tensor in place (its
    /// arena is bound to it, zero copy) rather than copying it into the
    /// context's arena.
    pub fn zero_copy_inputs(&self) -> Vec<bool> {
        let inner = &self.inner;
        inner
            .io
            .inputs
            .iter()
            .map(|t| inner.bindings.get(t.buffer.arena as usize) == Some(&Binding::ZeroCopy))
            .collect()
    }
    /// Upper bounds of the symbolic dims (unbounded symbols left out).
    pub fn symbol_bounds(&self) -> Vec<(String, i64)> {
        let free = def_unbounded(&self.inner.def.replan);
        self.inner
            .def
            .symbol_bounds
            .iter()
            .filter(|(k, _)| !free.contains(*k))
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    }
    /// Symbols without an upper bound: the workspace is planned for each
    /// concrete shape when it is first seen.
    pub fn unbounded_symbols(&self) -> Vec<String> {
        def_unbounded(&self.inner.def.replan)
    }
    /// The value symbols (dims decided by values the model reads at run
    /// start, `crate::value_syms`), each with the op that binds it:
    /// `SYMBOL: CONCRETE at LOC`.
    pub fn value_symbols(&self) -> Vec<String> {
        self.inner
            .binders
            .iter()
            .flat_map(|b| {
                b.binds
                    .iter()
                    .map(move |s| format!("{s}: {} at {}", b.spec.def.name, b.loc))
            })
            .collect()
    }
    /// The size symbols (`crate::size_syms`): `SYM <= BOUND: OP at LOC`,
    /// sorted.
    pub fn size_symbols(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .inner
            .sizes
            .values()
            .map(|b| format!("{} <= {}: {} at {}", b.sym, b.bound, b.op, b.loc))
            .collect();
        v.sort();
        v
    }
    /// The ops whose attributes are read from tensor values at run time
    /// (`graph.specialize`; hybrid execution), with their locations.
    pub fn hybrid_ops(&self) -> Vec<String> {
        ge_dialects::graph::specialize::hybrid_ops(&self.inner.kmodule)
    }
    /// Ops whose kernels run on the reference interpreter (no native kernel
    /// yet): known at load time, and the concrete ops of `graph.specialize`
    /// kernels that ran on it in the runs so far.
    pub fn fallback_ops(&self) -> Vec<String> {
        let mut all = self.inner.fallback_ops.clone();
        for t in &self.inner.tasks {
            for s in t.kernel.iter().flat_map(|k| &k.steps) {
                if let kernels::Op::Kernel(k) = &s.op {
                    all.extend(k.run_time_fallbacks());
                }
            }
        }
        all.into_iter().collect()
    }
    /// `Err` naming every op whose kernel runs on the reference interpreter,
    /// except ops named in `allowed` (e.g. `graph.erf`): differential tests
    /// call it so a test never compares the interpreter with itself unseen.
    pub fn require_native(&self, allowed: &[&str]) -> Result<(), String> {
        let bad: Vec<&str> = self
            .inner
            .fallback_ops
            .iter()
            .map(String::as_str)
            .filter(|f| {
                let op = f.split_whitespace().next().unwrap_or(f);
                !allowed.contains(&op)
            })
            .collect();
        if bad.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "kernels run on the reference interpreter for: {}",
                bad.join(", ")
            ))
        }
    }
    /// Kernels that run natively / on the interpreter.
    pub fn kernel_counts(&self) -> (usize, usize) {
        let mut seen = BTreeSet::new();
        let (mut native, mut fb) = (0, 0);
        for t in &self.inner.tasks {
            if let Some(k) = &t.kernel {
                if seen.insert(k.name.clone()) {
                    if k.fallback.is_some() {
                        fb += 1;
                    } else {
                        native += 1;
                    }
                }
            }
        }
        (native, fb)
    }
    /// Bytes of constant operands prepared at load: filters packed into
    /// the GEMM's panels (2-D and 3-D convolutions), within the memory
    /// budget.
    pub fn prepared_bytes(&self) -> usize {
        self.inner.prepared_bytes
    }

    /// How the convolutions of the model's launches compute (by
    /// `Conv::algorithm`, sorted by name): (algorithm, convolutions, of
    /// those whose Winograd filter transform was folded at load time).
    pub fn conv_algorithms(&self) -> Vec<(String, usize, usize)> {
        let mut counts: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
        for t in self.inner.tasks.iter().filter(|t| !t.dead) {
            let Some(k) = t.kernel.as_ref().filter(|k| k.fallback.is_none()) else {
                continue;
            };
            for (si, s) in k.steps.iter().enumerate() {
                if let (kernels::Op::Conv(c), Some(&x), Some(&w), Some(&o)) =
                    (&s.op, s.ins.first(), s.ins.get(1), s.outs.first())
                {
                    let e = counts
                        .entry(c.algorithm([&k.types[x], &k.types[w], &k.types[o]]))
                        .or_default();
                    e.0 += 1;
                    let folded = c.winograd.is_some_and(|w| {
                        let u = s.ins.get(w.input);
                        k.steps[..si].iter().enumerate().any(|(fi, f)| {
                            f.outs.first() == u && t.skip.get(fi).copied().unwrap_or(false)
                        })
                    });
                    e.1 += folded as usize;
                }
            }
        }
        counts.into_iter().map(|(a, (n, f))| (a, n, f)).collect()
    }
    /// Kernel values computed once at load time (weight-only subexpressions,
    /// such as a filter's FRACTAL_Z -> NCHW transdata) rather than at each run.
    pub fn folded_values(&self) -> usize {
        self.inner
            .tasks
            .iter()
            .filter(|t| !t.dead)
            .map(|t| t.folded.len())
            .sum()
    }
    /// Compute threads.
    pub fn threads(&self) -> usize {
        self.inner.threads
    }
    /// A session: runs the model (many sessions may run concurrently).
    pub fn session(&self) -> crate::Session {
        crate::Session::new(self)
    }
}

/// Which activations stay in blocks: convolutions that read them as they
/// are (`crate::blocked_reads`; before the conversions go, so that a
/// value read so stays in blocks; needs the filters folded), then the
/// plain layouts between the other kernels (`crate::layouts::elide`).
fn choose_layouts(inner: &mut Inner, opts: &LoadOptions) {
    if opts.blocked_reads != BlockedReads::Never && opts.fold_weights {
        let (chosen, verdict) = crate::blocked_reads::choose(inner, opts.blocked_reads);
        inner.blocked_reads = chosen;
        inner.blocks_verdict = verdict;
    }
    if opts.plain_layouts {
        inner.plain_buffers = crate::layouts::elide(inner);
    }
}

/// The model's SoC is one this runtime executes, and the one asked for.
fn check_soc(soc: &str, opts: &LoadOptions) -> Result<(), Error> {
    let known = supported_socs();
    if !known.contains(&soc) {
        return Err(Error(format!(
            "the model was compiled for SoC '{soc}', which this runtime cannot execute (it runs {})",
            known.join(", ")
        )));
    }
    if let Some(want) = &opts.soc {
        if want != soc {
            return Err(Error(format!(
                "SoC mismatch: the model was compiled for '{soc}' but '{want}' was requested"
            )));
        }
    }
    Ok(())
}

/// Every kernel of the program compiled to native steps (in kernel order),
/// and the ops that made some fall back to the interpreter.
fn compile_kernels(
    kmodule: &Module,
    program: &TaskProgram,
) -> Result<(Vec<Arc<KernelProgram>>, BTreeSet<String>), Error> {
    let mut kernels = vec![];
    let mut fallback_ops = BTreeSet::new();
    for k in &program.kernels {
        let p = kernels::compile(kmodule, &k.name).map_err(Error)?;
        if let Some(op) = &p.fallback {
            fallback_ops.insert(op.clone());
        }
        kernels.push(Arc::new(p));
    }
    Ok((kernels, fallback_ops))
}

/// The program laid out for the stream workers.
struct Streams {
    /// Every task with what the executor needs (kernel, record it waits for).
    tasks: Vec<TaskRt>,
    /// Program task indices of each stream, in order.
    streams: Vec<Vec<usize>>,
    /// label → position in the stream's list, per stream.
    labels: Vec<HashMap<u32, usize>>,
}

impl Streams {
    fn of(def: &ModelDef, program: &TaskProgram, kernels: &[Arc<KernelProgram>]) -> Streams {
        let ns = def.num_streams as usize;
        let mut out = Streams {
            tasks: vec![],
            streams: vec![vec![]; ns],
            labels: vec![HashMap::new(); ns],
        };
        let mut last_record: HashMap<u32, usize> = HashMap::new();
        for (i, t) in program.tasks.iter().enumerate() {
            let mut rt = TaskRt {
                task: t.clone(),
                kernel: None,
                folded: HashMap::new(),
                skip: vec![],
                alias: vec![],
                wait_for: None,
                compute: false,
                dead: false,
                split: Default::default(),
            };
            let stream = match t {
                Task::Launch {
                    kernel,
                    stream,
                    engine,
                    ..
                } => {
                    let k = kernels[*kernel as usize].clone();
                    rt.skip = vec![false; k.steps.len()];
                    rt.kernel = Some(k);
                    rt.compute = matches!(engine.as_str(), "AICore" | "VectorCore");
                    Some(*stream)
                }
                Task::Memcpy { stream, .. } => Some(*stream),
                Task::Record { event, stream } => {
                    last_record.insert(*event, i);
                    Some(*stream)
                }
                Task::Wait { event, stream } => {
                    rt.wait_for = last_record.get(event).copied();
                    Some(*stream)
                }
                Task::Label { label, stream } => {
                    let s = *stream as usize;
                    out.labels[s].insert(*label, out.streams[s].len());
                    Some(*stream)
                }
                Task::Goto { stream, .. } | Task::Switch { stream, .. } => Some(*stream),
                Task::End => None,
            };
            if let Some(s) = stream {
                out.streams[s as usize].push(i);
            }
            out.tasks.push(rt);
        }
        out
    }
}

/// Arena bindings: zero copy when the arena holds exactly its I/O buffer at
/// offset 0 and (for inputs) no task writes into it.
fn arena_bindings(def: &ModelDef, program: &TaskProgram, io: &IoDesc) -> Vec<Binding> {
    let mut bindings = vec![Binding::Copy; def.arenas.len()];
    let mut refs: Vec<Vec<(u64, bool)>> = vec![vec![]; def.arenas.len()];
    for t in &program.tasks {
        let mut note = |b: &Buffer, w: bool| refs[b.arena as usize].push((b.offset, w));
        match t {
            Task::Launch { ins, outs, .. } => {
                for o in ins {
                    if let Operand::Buffer(b) = o {
                        note(b, false);
                    }
                }
                outs.iter().for_each(|b| note(b, true));
            }
            Task::Memcpy { src, dst, .. } => {
                note(src, false);
                note(dst, true);
            }
            Task::Switch { value, .. } => note(value, false),
            _ => {}
        }
    }
    for (list, role) in [
        (&io.inputs, ArenaRole::Input),
        (&io.outputs, ArenaRole::Output),
    ] {
        for t in list {
            let a = t.buffer.arena as usize;
            let shared = list
                .iter()
                .filter(|u| u.buffer.arena == t.buffer.arena)
                .count()
                > 1;
            let only_self = refs[a]
                .iter()
                .all(|&(off, w)| off == t.buffer.offset && (role == ArenaRole::Output || !w));
            if !shared && t.buffer.offset == 0 && only_self {
                bindings[a] = Binding::ZeroCopy;
            }
        }
    }
    bindings
}

/// The symbols of the input types, sorted by name (the plan-cache key order).
/// The unbounded symbols of a model's replan section.
fn def_unbounded(r: &Option<ge_om::model::Replan>) -> Vec<String> {
    r.as_ref()
        .map(|r| r.unbounded.keys().cloned().collect())
        .unwrap_or_default()
}

fn input_symbols(in_types: &[Type]) -> Vec<Ident> {
    let mut syms: BTreeSet<String> = BTreeSet::new();
    for t in in_types {
        if let Some(tt) = t.as_tensor() {
            for d in tt.shape() {
                if let ge_ir::Dim::Sym(s) = d {
                    let mut v = vec![];
                    s.expr().symbols(&mut v);
                    syms.extend(v.iter().map(|x| x.to_string()));
                }
            }
        }
    }
    syms.iter().map(|s| Ident::new(s)).collect()
}

impl Inner {
    /// Pointer to weight `w` in the mapped file, valid for its `bytes`
    /// (checked again here, in checked arithmetic, though ge-om's
    /// validation proved the weight inside the weights partition).
    pub(crate) fn weight_ptr(&self, w: u32) -> Option<*mut u8> {
        // A read-only mapping: kernels never write through weight pointers
        // (weights are operands, never out buffers).
        self.weight_slice(w).map(|s| s.as_ptr() as *mut u8)
    }
    /// The bytes of weight `w` in the mapped file.
    pub(crate) fn weight_slice(&self, w: u32) -> Option<&[u8]> {
        let wd = self.program.weights.get(w as usize)?;
        let off = usize::try_from(wd.offset)
            .ok()?
            .checked_add(self.weights_offset)?;
        let end = off.checked_add(usize::try_from(wd.bytes).ok()?)?;
        self.backing.bytes().get(off..end)
    }
    /// The bytes of weight `w`.
    pub(crate) fn weight_bytes(&self, w: u32) -> usize {
        self.program
            .weights
            .get(w as usize)
            .map_or(0, |wd| wd.bytes as usize)
    }
}

/// A buffer whose contents are known at load time (written by a launch
/// whose inputs are all constants), valid until a later task overwrites it.
struct ConstBuf {
    arena: u32,
    offset: u64,
    bytes: u64,
    ty: String,
    data: Arc<AlignedBuf>,
    producer: usize,
    /// Every reader so far took it as a folded argument.
    readers_ok: bool,
}

fn overlaps(a: &Buffer, off: u64, bytes: u64, arena: u32) -> bool {
    a.arena == arena
        && a.offset < off + bytes
        && off < a.offset + a.bytes
        && a.bytes > 0
        && bytes > 0
}

/// Evaluate weight-only steps of every launch once (static shapes only),
/// following constants across tasks in program order (a valid sequential
/// order of the program): a launch whose inputs are all constants produces
/// constant buffers that later launches take as folded arguments, and a
/// launch whose every reader did so is not run at all.
fn fold(inner: &mut Inner) -> Result<(), Error> {
    let mut consts: Vec<ConstBuf> = vec![];
    let mut dead: Vec<usize> = vec![];
    // Bytes of filters packed at load so far (counted against the budget).
    let mut packed = 0usize;
    let io_arenas: Vec<u32> = inner.io.outputs.iter().map(|t| t.buffer.arena).collect();
    let retire = |c: ConstBuf, dead: &mut Vec<usize>| {
        if c.readers_ok && !io_arenas.contains(&c.arena) {
            dead.push(c.producer);
        }
    };
    for ti in 0..inner.tasks.len() {
        let task = inner.tasks[ti].task.clone();
        let kernel = inner.tasks[ti].kernel.clone();
        let native = kernel.as_ref().is_some_and(|k| k.fallback.is_none());
        let arg_consts = const_args(&task, kernel.as_deref(), native, &mut consts);
        let fully_const = match (&kernel, &task) {
            (Some(k), Task::Launch { ins, outs, .. }) if native => {
                fold_launch(inner, ti, k, ins, outs, arg_consts, &mut packed)?
            }
            _ => vec![],
        };
        // Writes end the life of overlapping constants.
        let writes: Vec<Buffer> = match &task {
            Task::Launch { outs, .. } => outs.clone(),
            Task::Memcpy { dst, .. } => vec![dst.clone()],
            _ => vec![],
        };
        let mut keep = vec![];
        for c in consts.drain(..) {
            if writes
                .iter()
                .any(|w| overlaps(w, c.offset, c.bytes, c.arena))
            {
                retire(c, &mut dead);
            } else {
                keep.push(c);
            }
        }
        consts = keep;
        for (b, data) in fully_const {
            consts.push(ConstBuf {
                arena: b.arena,
                offset: b.offset,
                bytes: b.bytes,
                ty: b.ty.clone(),
                data,
                producer: ti,
                readers_ok: true,
            });
        }
    }
    inner.prepared_bytes = packed;
    for c in consts {
        retire(c, &mut dead);
    }
    // A producer with several outputs is dead only if all of them are.
    let mut count: HashMap<usize, usize> = HashMap::new();
    for d in &dead {
        *count.entry(*d).or_insert(0) += 1;
    }
    for (t, n) in count {
        if let Task::Launch { outs, .. } = &inner.tasks[t].task {
            if outs.len() == n {
                inner.tasks[t].dead = true;
            }
        }
    }
    Ok(())
}

/// The constant buffers a task reads, as folded kernel arguments (value →
/// bytes) when a native kernel reads one exactly; a constant read any other
/// way keeps its producer alive (`readers_ok = false`).
fn const_args(
    task: &Task,
    kernel: Option<&KernelProgram>,
    native: bool,
    consts: &mut [ConstBuf],
) -> HashMap<usize, Arc<AlignedBuf>> {
    let mut arg_consts: HashMap<usize, Arc<AlignedBuf>> = HashMap::new();
    let reads: Vec<Buffer> = match task {
        Task::Launch { ins, .. } => ins
            .iter()
            .filter_map(|o| match o {
                Operand::Buffer(b) => Some(b.clone()),
                _ => None,
            })
            .collect(),
        Task::Memcpy { src, .. } => vec![src.clone()],
        Task::Switch { value, .. } => vec![value.clone()],
        _ => vec![],
    };
    for r in &reads {
        for c in consts.iter_mut() {
            if !overlaps(r, c.offset, c.bytes, c.arena) {
                continue;
            }
            let exact = c.offset == r.offset && c.ty == r.ty && c.arena == r.arena;
            if exact && native {
                if let (Some(k), Task::Launch { ins, .. }) = (kernel, task) {
                    for (&a, o) in k.args.iter().zip(ins) {
                        if matches!(o, Operand::Buffer(b) if b == r) {
                            // The argument reads at most the folded bytes
                            // (its type is static here; the plan checks
                            // again at every shape).
                            let fits = kernels::concrete(k.types[a], &HashMap::new())
                                .ok()
                                .and_then(|s| {
                                    let dt = k.types[a].dtype()?.byte_size();
                                    crate::exec::checked_bytes(&s, dt)
                                })
                                .is_some_and(|n| n <= c.data.len());
                            if fits {
                                arg_consts.insert(a, c.data.clone());
                            } else {
                                c.readers_ok = false;
                            }
                        }
                    }
                }
            } else {
                c.readers_ok = false;
            }
        }
    }
    arg_consts
}

/// Pack the constant filters of the launch's convolutions for their GEMM
/// (`kernels::conv::Conv::prepare`) and let its other kernels prepare
/// their constant operands (`Kernel::prepare`: a 3-D convolution's
/// filter), while the copies fit in the memory budget (`packed`: bytes
/// packed so far in the model).
fn pack_filters(
    inner: &Inner,
    k: &KernelProgram,
    known: &HashMap<usize, *mut u8>,
    shapes: &[Option<Vec<usize>>],
    skip: &[bool],
    packed: &mut usize,
) {
    for (si, s) in k.steps.iter().enumerate() {
        if skip[si] {
            continue;
        }
        let constant = |v: usize| {
            let (Some(&p), Some(Some(shape)), Some(dtype)) =
                (known.get(&v), shapes.get(v), k.types[v].dtype())
            else {
                return None;
            };
            Some(Slot {
                ptr: p,
                shape: shape.clone(),
                dtype,
            })
        };
        let max = usize::try_from(inner.limits.max_memory).unwrap_or(usize::MAX);
        match &s.op {
            kernels::Op::Conv(c) => {
                if let Some(slot) = s.ins.get(1).and_then(|&w| constant(w)) {
                    *packed += c.prepare(&slot, max.saturating_sub(*packed));
                }
            }
            // A product's constant right operand, for the rows its left
            // operand has (all but the last dim: the batch folds into the rows).
            kernels::Op::MatMul(kernels::linalg::MatMul {
                ta,
                tb,
                packed: cache,
            })
            | kernels::Op::Gemm(kernels::linalg::Gemm {
                ta,
                tb,
                packed: cache,
                ..
            }) => {
                let rows = s.ins.first().and_then(|&a| match shapes.get(a) {
                    Some(Some(sh)) if !sh.is_empty() => Some(sh[..sh.len() - 1].iter().product()),
                    _ => None,
                });
                if let (Some(rows), Some(slot)) = (rows, s.ins.get(1).and_then(|&b| constant(b))) {
                    let budget = max.saturating_sub(*packed);
                    *packed += cache.prepare(&slot, (*ta, *tb), rows, budget);
                }
            }
            kernels::Op::Kernel(kern) => {
                for (i, &v) in s.ins.iter().enumerate() {
                    if let Some(slot) = constant(v) {
                        *packed += kern.prepare(i, &slot, max.saturating_sub(*packed));
                    }
                }
            }
            _ => {}
        }
    }
}

/// Run the steps of launch `ti` whose inputs are all known (weights,
/// kernel constants, folded arguments) once, recording what it may skip;
/// returns its results when every one of them is constant.
fn fold_launch(
    inner: &mut Inner,
    ti: usize,
    k: &KernelProgram,
    ins: &[Operand],
    outs: &[Buffer],
    arg_consts: HashMap<usize, Arc<AlignedBuf>>,
    packed: &mut usize,
) -> Result<Vec<(Buffer, Arc<AlignedBuf>)>, Error> {
    let empty = HashMap::new();
    let mut known: HashMap<usize, *mut u8> = HashMap::new();
    let mut weights: HashMap<usize, (*mut u8, usize)> = HashMap::new();
    for (a, o) in k.args.iter().zip(ins) {
        if let Operand::Weight(w) = o {
            if let Some(p) = inner.weight_ptr(*w) {
                known.insert(*a, p);
                let n = inner.program.weights[*w as usize].bytes as usize;
                weights.insert(*a, (p, n));
            }
        }
    }
    for (v, b) in &arg_consts {
        known.insert(*v, b.as_ptr() as *mut u8);
    }
    for (v, b) in &k.consts {
        known.insert(*v, b.as_ptr() as *mut u8);
    }
    let mut folded: HashMap<usize, Arc<AlignedBuf>> = arg_consts;
    let mut skip = vec![false; k.steps.len()];
    // Shapes that need no symbol: a kernel with symbolic activations (a
    // dynamic batch) still folds its weight-only steps (a FRACTAL_Z filter
    // back to NCHW), whose values are all static.
    let shapes: Vec<Option<Vec<usize>>> = (0..k.types.len())
        .map(|v| kernels::concrete(k.types[v], &empty).ok())
        .collect();
    for (si, s) in k.steps.iter().enumerate() {
        if !s.pure || s.ins.is_empty() || !s.ins.iter().all(|v| known.contains_key(v)) {
            continue;
        }
        if !s.ins.iter().chain(&s.outs).all(|&v| shapes[v].is_some()) {
            continue;
        }
        if matches!(s.op, Op::Ew(_)) && s.outs.is_empty() {
            skip[si] = true;
            continue;
        }
        let mut slots: Vec<Slot> = (0..k.types.len())
            .map(|v| Slot {
                ptr: std::ptr::null_mut(),
                shape: shapes[v].clone().unwrap_or_default(),
                dtype: k.types[v].dtype().unwrap_or(DType::U8),
            })
            .collect();
        for (&v, &p) in &known {
            slots[v].ptr = p;
        }
        let mut bufs = vec![];
        for &v in &s.outs {
            let mut b = AlignedBuf::zeroed(slots[v].bytes());
            slots[v].ptr = b.as_mut_ptr();
            bufs.push((v, b));
        }
        s.run(&slots, &Par::NONE).map_err(|m| {
            let mut site = crate::exec::task_site(ti, Some(k));
            site.op = Some(s.name.clone());
            if !s.loc.is_unknown() {
                site.loc = s.loc;
            }
            Error::at(site, format!("folding weights: {m}"))
        })?;
        for (v, b) in bufs {
            let b = Arc::new(b);
            known.insert(v, b.as_ptr() as *mut u8);
            folded.insert(v, b);
        }
        skip[si] = true;
    }
    pack_filters(inner, k, &known, &shapes, &skip, packed);
    // A launch is constant when every result is known.
    let mut all = skip.iter().all(|&x| x);
    let mut results = vec![];
    for (&r, b) in k.results.iter().zip(outs) {
        let data = if let Some(d) = folded.get(&r) {
            Some(d.clone())
        } else if let Some(&(p, n)) = weights.get(&r) {
            // SAFETY: `p` is `weight_ptr`'s pointer, valid for the weight's
            // `n` bytes inside the mapped file (checked there).
            Some(Arc::new(AlignedBuf::from_bytes(unsafe {
                std::slice::from_raw_parts(p, n)
            })))
        } else {
            k.consts
                .iter()
                .find(|(v, _)| *v == r)
                .map(|(_, b)| Arc::new(b.clone()))
        };
        match data {
            Some(d) => results.push((b.clone(), d)),
            None => all = false,
        }
    }
    let t = &mut inner.tasks[ti];
    t.folded = folded;
    t.skip = skip;
    Ok(if all && k.results.iter().all(|&r| shapes[r].is_some()) {
        results
    } else {
        vec![]
    })
}
