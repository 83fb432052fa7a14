//! `ge-conformance`: run the ONNX backend node tests (written to a folder by
//! tools/conformance/generate.py) through import and execution, compare every
//! output with ONNX's tolerances, and report pass / fail / unsupported per
//! test and per op.
//!
//! Execution is pluggable ([`Executor`]): `--executor=runtime` (the default)
//! compiles the imported graph with the `atc` pipeline to an `.om` and runs it
//! on the runtime, end to end; `--executor=interpreter` runs the imported
//! graph with the reference interpreter (to tell importer bugs from compiler
//! or runtime bugs).
//!
//! Each case runs as a user would run the model: inputs fed by name, nothing
//! bound. A graph input that an op needs as a compile-time constant (Reshape's
//! shape, Slice's starts, …) stays an input, and the case is unsupported until
//! the importer handles it. `--bind-constant-inputs` brings back the old mode
//! (bind such inputs to the test's values and import again, as tract's runner
//! does), for a look at what lies behind those cases.
//!
//! A pass whose compiled model ran any kernel on the reference interpreter
//! is counted apart ("pass (interpreter kernels)"), and so is a case whose
//! outputs come from random ops, checked by type, shape and value set since
//! no implementation draws ONNX's numbers ("checked (random outputs)",
//! [`random`]). Every case's status is checked against
//! tools/conformance/expected.tsv ([`expected`]).

pub mod expected;
pub mod random;
pub mod report;
pub mod scope;

use clap::Parser as ClapParser;
pub use expected::Status;
use ge_frontends::onnx::{decode_model, decode_named_tensor, import_bytes, ImportOptions};
use ge_frontends::ImportErrorKind;
use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use ge_ir::{Context, Module};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

#[derive(ClapParser, Debug, Clone)]
#[command(
    name = "ge-conformance",
    version,
    about = "Run the ONNX backend node tests through import and execution"
)]
pub struct ConformanceArgs {
    /// Folder with one sub-folder per test case (tools/conformance/generate.py writes it)
    pub cases: String,
    /// Only run cases whose name contains this
    #[arg(long)]
    pub filter: Option<String>,
    /// How to execute imported models
    #[arg(long, default_value = "runtime", value_parser = ["runtime", "interpreter"])]
    pub executor: String,
    /// Write the Markdown report here (e.g. docs/conformance.md; '-' for stdout)
    #[arg(long, value_name = "FILE")]
    pub report: Option<String>,
    /// The expected status of every case (tools/conformance/expected.tsv): exit 1 when
    /// any case is worse than it says (pass > pass-interp > unsupported > fail)
    #[arg(long, value_name = "FILE")]
    pub expected: Option<String>,
    /// Rewrite the --expected file with this run's statuses (after an improvement)
    #[arg(long, requires = "expected")]
    pub update_expected: bool,
    /// onnxruntime's status per case (tools/conformance/onnxruntime.tsv, written by
    /// tools/conformance/onnxruntime_status.py): the report shows it beside ge's
    #[arg(long, value_name = "FILE")]
    pub onnxruntime: Option<String>,
    /// Bind graph inputs that an op needs as a constant (Reshape's shape, …) to the
    /// test's values and import again; a user's model cannot do this (off by default)
    #[arg(long)]
    pub bind_constant_inputs: bool,
    /// Print every test's result
    #[arg(short, long)]
    pub verbose: bool,
    /// Worker threads (default: the number of cores)
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Stop the interpreter after this many executed ops per test
    #[arg(long, default_value_t = 2_000_000)]
    pub max_ops: usize,
}

/// What an executor gives back.
pub struct Run {
    pub outputs: Vec<Tensor>,
    /// Ops whose kernels ran on the reference interpreter (compiled path).
    pub interpreted: Vec<String>,
    /// No kernel was native.
    pub all_interpreted: bool,
}

/// Runs an imported model on input tensors given by name (the graph input
/// names the model's `main` keeps as `ge.name`), as onnxruntime takes them.
pub trait Executor: Sync {
    fn name(&self) -> &'static str;
    fn run(&self, m: &Module, inputs: Vec<(String, Tensor)>, max_ops: usize)
        -> Result<Run, String>;
}

/// The compiled path: the `atc` pipeline, the `.om` writer, the runtime.
pub struct RuntimeExecutor;

impl Executor for RuntimeExecutor {
    fn name(&self) -> &'static str {
        "atc pipeline + runtime"
    }
    fn run(
        &self,
        m: &Module,
        inputs: Vec<(String, Tensor)>,
        _max_ops: usize,
    ) -> Result<Run, String> {
        use ge_compile::{compile_module, context, to_bytes, CompileOptions};
        let ctx = context();
        let mut m = m.clone();
        let om = compile_module(&ctx, &mut m, &CompileOptions::default())
            .map_err(|e| format!("compile: {e}"))?;
        let bytes = to_bytes(&om).map_err(|e| format!("compile: {e}"))?;
        let model = ge_runtime::Model::from_bytes(&bytes, &ge_runtime::LoadOptions::default())
            .map_err(|e| format!("load: {}", e.brief()))?;
        let ins = inputs
            .iter()
            .map(|(n, t)| (n, ge_runtime::HostTensor::from_tensor(t)));
        let outs: Vec<ge_runtime::HostTensor> = model
            .session()
            .run_named(ins)
            .map_err(|e| e.brief())?
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        let (native, _) = model.kernel_counts();
        let interpreted = model.fallback_ops();
        Ok(Run {
            outputs: outs
                .iter()
                .map(|h| h.to_tensor())
                .collect::<Result<_, _>>()?,
            all_interpreted: native == 0 && !interpreted.is_empty(),
            interpreted,
        })
    }
}

/// The reference interpreter.
pub struct InterpreterExecutor;

impl Executor for InterpreterExecutor {
    fn name(&self) -> &'static str {
        "reference interpreter"
    }
    fn run(
        &self,
        m: &Module,
        inputs: Vec<(String, Tensor)>,
        max_ops: usize,
    ) -> Result<Run, String> {
        let names = m
            .lookup_symbol("main")
            .map(|f| ge_dialects::graph::func::io_names_or_default(m.body().op(f)).0)
            .unwrap_or_default();
        let inputs = names
            .iter()
            .map(|n| {
                inputs
                    .iter()
                    .find(|(k, _)| k == n)
                    .map(|(_, t)| t.clone())
                    .ok_or_else(|| format!("missing input '{n}' (inputs: {})", names.join(", ")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut interp = Interpreter::new(m);
        interp.max_ops = Some(max_ops);
        let outputs = interp
            .run_function("main", inputs)
            .map_err(|e| format!("{} (at {})", e.msg, e.loc))?;
        // The interpreter is the executor here, not a fallback.
        Ok(Run {
            outputs,
            interpreted: vec![],
            all_interpreted: false,
        })
    }
}

#[derive(Clone, Debug, Default)]
pub struct CaseResult {
    /// `test_abs` for a node test, `SUITE/NAME` for the other suites.
    pub name: String,
    /// `node`, `pytorch-converted`, `pytorch-operator` or `simple`.
    pub suite: String,
    /// Why the case is out of ge's scope (training, sequences, optionals,
    /// strings: [`scope`]), if it is.
    pub out_of_scope: Option<String>,
    pub status: Status,
    /// Why it failed or is unsupported, or which ops ran on the interpreter (first line).
    pub reason: String,
    /// Graph inputs bound as constants to import it (--bind-constant-inputs).
    pub bound_inputs: Vec<String>,
    /// The ONNX op types the model uses.
    pub ops: Vec<String>,
    /// Ops whose kernels ran on the reference interpreter.
    pub interpreted: Vec<String>,
    /// Every kernel ran on the interpreter.
    pub all_interpreted: bool,
    /// The sets the random outputs were checked against (none: every output
    /// was compared with ONNX's values).
    pub random_sets: Vec<String>,
}

struct DataSet {
    inputs: Vec<(String, Tensor)>,
    outputs: Vec<Tensor>,
}

/// Per input and per output of the model, why its test data cannot be read
/// as a tensor ([`scope::non_tensor_io`]).
type NonTensorIo = (Vec<Option<String>>, Vec<Option<String>>);

fn read_dataset(dir: &Path, io: &NonTensorIo) -> Result<DataSet, String> {
    let read_all = |kind: &str, why: &[Option<String>]| -> Result<Vec<(String, Tensor)>, String> {
        let mut out = vec![];
        for i in 0.. {
            let p = dir.join(format!("{kind}_{i}.pb"));
            if !p.exists() {
                break;
            }
            // Its file holds a SequenceProto or OptionalProto, which would
            // decode as a meaningless TensorProto: refused by the model's type.
            if let Some(Some(why)) = why.get(i) {
                return Err(format!("{kind} #{i} {why}: not supported"));
            }
            let bytes = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            let t = decode_named_tensor(&bytes, dir)
                .map_err(|e| format!("{kind} #{i}: {}", e.message))?;
            out.push(t);
        }
        Ok(out)
    };
    Ok(DataSet {
        inputs: read_all("input", &io.0)?,
        outputs: read_all("output", &io.1)?
            .into_iter()
            .map(|(_, t)| t)
            .collect(),
    })
}

fn tolerances(dir: &Path) -> (f64, f64) {
    let text = std::fs::read_to_string(dir.join("meta.json")).unwrap_or_default();
    let num = |key: &str, default: f64| {
        regex::Regex::new(&format!(r#""{key}":\s*([-+0-9.eE]+)"#))
            .ok()
            .and_then(|re| re.captures(&text))
            .and_then(|c| c[1].parse::<f64>().ok())
            .unwrap_or(default)
    };
    (num("rtol", 1e-3), num("atol", 1e-7))
}

/// A message on one line (its lines joined), at most 200 bytes: the report's
/// and the expected file's reason.
fn one_line(s: &str) -> String {
    let l = s
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if l.len() > 200 {
        let mut cut = 200;
        while !l.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}…", &l[..cut])
    } else {
        l
    }
}

/// Compare one output; `None` when it matches: element type and shape
/// exactly, integers and bools exactly, floats within the case's tolerance.
fn compare(got: &Tensor, want: &Tensor, rtol: f64, atol: f64) -> Option<String> {
    got.mismatch(want, rtol, atol)
        .map(|why| why.replace("but expected", "but ONNX gives"))
}

/// One case folder to run.
#[derive(Clone, Debug)]
pub struct Case {
    pub dir: PathBuf,
    /// `test_abs` for a node test, `SUITE/NAME` for the other suites.
    pub name: String,
    pub suite: String,
}

/// The suite of the cases written directly under the root.
pub const NODE_SUITE: &str = "node";

/// Run one case folder.
pub fn run_case(
    ctx: &Context,
    case: &Case,
    exec: &dyn Executor,
    max_ops: usize,
    bind: bool,
) -> CaseResult {
    let mut res = CaseResult {
        name: case.name.clone(),
        suite: case.suite.clone(),
        status: Status::Fail,
        ..CaseResult::default()
    };
    let run = CaseRun {
        ctx,
        case,
        exec,
        max_ops,
        bind,
    };
    if let Err((status, reason)) = run.run_sets(&mut res) {
        res.status = status;
        res.reason = reason;
        return res;
    }
    if !res.random_sets.is_empty() {
        res.status = Status::RandomChecked;
        let kernels = if res.interpreted.is_empty() {
            String::new()
        } else {
            format!(
                "; kernels on the interpreter: {}",
                res.interpreted.join(", ")
            )
        };
        res.reason = one_line(&format!(
            "random outputs checked by type, shape and values in {}{kernels}",
            res.random_sets.join(", ")
        ));
    } else if res.interpreted.is_empty() {
        res.status = Status::Pass;
    } else {
        res.status = Status::PassInterpreted;
        res.reason = one_line(&format!(
            "{} on the interpreter: {}",
            if res.all_interpreted {
                "every kernel"
            } else {
                "kernels"
            },
            res.interpreted.join(", ")
        ));
    }
    res
}

/// Why a case stopped: its status and the reason.
type Stop = (Status, String);

/// One case being run, with what `run_case` was given.
struct CaseRun<'a> {
    ctx: &'a Context,
    case: &'a Case,
    exec: &'a dyn Executor,
    max_ops: usize,
    bind: bool,
}

impl CaseRun<'_> {
    /// Import and run the model on every test data set, comparing the
    /// outputs; records the model's ops, bound inputs and interpreted ops in
    /// `res`.
    fn run_sets(&self, res: &mut CaseResult) -> Result<(), Stop> {
        let dir = self.case.dir.as_path();
        let bytes = std::fs::read(dir.join("model.onnx"))
            .map_err(|e| (Status::Fail, format!("cannot read model: {e}")))?;
        let mut io = NonTensorIo::default();
        if let Ok(m) = decode_model(&bytes, &self.case.name) {
            res.ops = model_ops(&m);
            res.out_of_scope = scope::out_of_scope(&m);
            io = scope::non_tensor_io(&m);
        }
        let sets = read_datasets(dir, &io)
            .map_err(|e| (Status::Unsupported, format!("test data: {}", one_line(&e))))?;
        let (rtol, atol) = tolerances(dir);
        for set in &sets {
            let (module, opts) = self.import(&bytes, set, res)?;
            let kinds = random::outputs(&module);
            let inputs = named_inputs(&module, set, &opts);
            let args = random::arg_values(&module, &inputs);
            let run = self
                .exec
                .run(&module, inputs, self.max_ops)
                .map_err(|e| (Status::Fail, format!("run: {}", one_line(&e))))?;
            for op in run.interpreted {
                if !res.interpreted.contains(&op) {
                    res.interpreted.push(op);
                }
            }
            res.all_interpreted |= run.all_interpreted;
            let runs = Checks {
                kinds: &kinds,
                args: &args,
                tol: (rtol, atol),
            };
            compare_outputs(&run.outputs, &set.outputs, &runs, res)
                .map_err(|why| (Status::Fail, why))?;
        }
        Ok(())
    }

    /// Import the model; with `--bind-constant-inputs`, each input an op
    /// needs as a constant is bound to the data set's value (recorded in
    /// `res`) and the import retried.
    fn import(
        &self,
        bytes: &[u8],
        set: &DataSet,
        res: &mut CaseResult,
    ) -> Result<(Module, ImportOptions), Stop> {
        let (name, dir) = (&self.case.name, self.case.dir.as_path());
        let mut opts = ImportOptions::default();
        loop {
            let e = match import_bytes(self.ctx, bytes, &format!("{name}/model.onnx"), dir, &opts) {
                Ok(m) => return Ok((m, opts)),
                Err(e) => e,
            };
            let reason = format!("import: {}", one_line(&e.message));
            match &e.kind {
                ImportErrorKind::NotConstant(v)
                    if self.bind
                        && !opts.constant_inputs.contains_key(v)
                        && set.inputs.iter().any(|(n, _)| n == v) =>
                {
                    if let Some((_, t)) = set.inputs.iter().find(|(n, _)| n == v) {
                        opts.constant_inputs.insert(v.clone(), t.clone());
                        if !res.bound_inputs.contains(v) {
                            res.bound_inputs.push(v.clone());
                        }
                    }
                }
                ImportErrorKind::Unsupported | ImportErrorKind::NotConstant(_) => {
                    return Err((Status::Unsupported, reason))
                }
                _ => return Err((Status::Fail, reason)),
            }
        }
    }
}

/// The distinct ONNX op types of a model, in order of first use.
fn model_ops(m: &ge_frontends::proto::onnx::ModelProto) -> Vec<String> {
    let mut ops: Vec<String> = vec![];
    if let Some(g) = &m.graph {
        ge_frontends::onnx::graph::walk_nodes(g, &mut |n| {
            let op = n.op_type.clone().unwrap_or_default();
            if !ops.contains(&op) {
                ops.push(op);
            }
        });
    }
    ops
}

/// The case's `test_data_set_K` folders, K = 0, 1, ... while they exist.
fn read_datasets(dir: &Path, io: &NonTensorIo) -> Result<Vec<DataSet>, String> {
    let mut sets = vec![];
    for k in 0.. {
        let d = dir.join(format!("test_data_set_{k}"));
        if !d.is_dir() {
            break;
        }
        sets.push(read_dataset(&d, io)?);
    }
    Ok(sets)
}

/// Every test input by its name, as onnxruntime takes them (a nameless one
/// is the model's input at its position, as ONNX's backend runner passes a
/// list); inputs bound as constants are no longer inputs.
fn named_inputs(module: &Module, set: &DataSet, opts: &ImportOptions) -> Vec<(String, Tensor)> {
    let (arg_names, _) = module
        .lookup_symbol("main")
        .map(|f| ge_dialects::graph::func::io_names_or_default(module.body().op(f)))
        .unwrap_or_default();
    set.inputs
        .iter()
        .enumerate()
        .filter(|(_, (n, _))| !opts.constant_inputs.contains_key(n))
        .map(|(i, (n, t))| {
            let n = if n.is_empty() {
                arg_names.get(i).cloned().unwrap_or_default()
            } else {
                n.clone()
            };
            (n, t.clone())
        })
        .collect()
}

/// How a run's outputs are checked: what each is ([`random::outputs`]),
/// `main`'s arguments in the run (for the dropout checks) and the case's
/// tolerance (rtol, atol).
struct Checks<'a> {
    kinds: &'a [random::Output],
    args: &'a [Option<Tensor>],
    tol: (f64, f64),
}

/// The set a dropout's drawn outputs are checked against, as the report names it.
const DROPOUT_SET: &str = "{0, x/(1-ratio)} (dropout)";

/// Compare a run's outputs with the data set's: their number, then each
/// ([`compare`]; an output of a random op by [`random::check`], its set
/// recorded in `res`; a dropout's by [`random::check_dropout`] unless it
/// dropped nothing); Err names the first difference.
fn compare_outputs(
    got: &[Tensor],
    want: &[Tensor],
    c: &Checks,
    res: &mut CaseResult,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{} outputs but ONNX gives {}",
            got.len(),
            want.len()
        ));
    }
    let (rtol, atol) = c.tol;
    let mut record = |set: String| {
        if !res.random_sets.contains(&set) {
            res.random_sets.push(set);
        }
    };
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let why = match c.kinds.get(i) {
            Some(random::Output::Random(dom)) => {
                record(dom.to_string());
                random::check(g, w, dom)
            }
            Some(random::Output::Unbounded) => {
                Some("drawn by a random op along a path whose values ge cannot bound".to_string())
            }
            Some(random::Output::Dropout(d)) => match random::dropout_run(d, c.args) {
                Err(e) => Some(e),
                Ok(run) if !run.drops => compare(g, w, rtol, atol),
                Ok(run) => {
                    record(DROPOUT_SET.to_string());
                    // The result of the same dropout, when it is an output.
                    let y = c.kinds.iter().zip(got).find_map(|(k, t)| match k {
                        random::Output::Dropout(o) if o.op == d.op && !o.mask => Some(t),
                        _ => None,
                    });
                    random::check_dropout(g, w, &run, y, c.tol)
                }
            },
            _ => compare(g, w, rtol, atol),
        };
        if let Some(why) = why {
            return Err(format!("output #{i}: {why}"));
        }
    }
    Ok(())
}

/// The sub-folders of `dir`, sorted.
fn sub_dirs(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| {
            format!(
                "cannot read '{}': {e} (run tools/conformance/run.sh to generate the cases)",
                dir.display()
            )
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    Ok(v)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The cases under `root`: folders holding a `model.onnx` are node tests;
/// other folders are suites whose sub-folders are cases (`SUITE/NAME`).
pub fn find_cases(root: &Path, filter: Option<&str>) -> Result<Vec<Case>, String> {
    let mut cases = vec![];
    for d in sub_dirs(root)? {
        if d.join("model.onnx").exists() {
            cases.push(Case {
                name: file_name(&d),
                suite: NODE_SUITE.into(),
                dir: d,
            });
            continue;
        }
        let suite = file_name(&d);
        for c in sub_dirs(&d)? {
            if c.join("model.onnx").exists() {
                cases.push(Case {
                    name: format!("{suite}/{}", file_name(&c)),
                    suite: suite.clone(),
                    dir: c,
                });
            }
        }
    }
    cases.retain(|c| filter.is_none_or(|f| c.name.contains(f)));
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(cases)
}

/// Run every case under `root` ([`find_cases`]) on `jobs` threads.
pub fn run_all(
    root: &Path,
    filter: Option<&str>,
    exec: &dyn Executor,
    jobs: usize,
    max_ops: usize,
    bind: bool,
    verbose: bool,
) -> Result<Vec<CaseResult>, String> {
    let dirs = find_cases(root, filter)?;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<CaseResult>> = Mutex::new(vec![]);
    // Panics inside op kernels are reported as failures, quietly.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                let ctx = ge_compile::context();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(dir) = dirs.get(i) else { break };
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_case(&ctx, dir, exec, max_ops, bind)
                    }))
                    .unwrap_or_else(|p| {
                        let msg = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default();
                        CaseResult {
                            name: dir.name.clone(),
                            suite: dir.suite.clone(),
                            status: Status::Fail,
                            reason: format!("panic: {}", one_line(&msg)),
                            ..CaseResult::default()
                        }
                    });
                    if verbose {
                        eprintln!("{} {} {}", r.status.name().to_uppercase(), r.name, r.reason);
                    }
                    if let Ok(mut v) = results.lock() {
                        v.push(r);
                    }
                }
            });
        }
    });
    std::panic::set_hook(hook);
    let mut v = results.into_inner().unwrap_or_default();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(v)
}

pub(crate) fn onnx_version(root: &Path) -> String {
    find_cases(root, None)
        .ok()
        .and_then(|c| c.into_iter().next())
        .and_then(|c| std::fs::read_to_string(c.dir.join("meta.json")).ok())
        .and_then(|t| {
            regex::Regex::new(r#""onnx":\s*"([^"]+)""#)
                .ok()?
                .captures(&t)
                .map(|c| c[1].to_string())
        })
        .unwrap_or_else(|| "?".into())
}

/// "onnxruntime 1.32.0" from the status file's header comment.
fn onnxruntime_version(path: &str) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| {
            t.lines()
                .filter(|l| l.starts_with('#'))
                .find_map(|l| l.split_once("# onnxruntime ").map(|(_, v)| v.to_string()))
        })
        .and_then(|v| {
            v.split(',')
                .next()
                .map(|v| format!("onnxruntime {}", v.trim()))
        })
        .unwrap_or_else(|| "onnxruntime".into())
}

pub fn main_with(args: ConformanceArgs) -> i32 {
    let exec: &dyn Executor = match args.executor.as_str() {
        "interpreter" => &InterpreterExecutor,
        _ => &RuntimeExecutor,
    };
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    // Read the expected file first: a bad one is an error before a long run.
    let expected = match &args.expected {
        Some(p) if !args.update_expected || Path::new(p).exists() => {
            match std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read '{p}': {e}"))
                .and_then(|t| expected::parse(&t, p))
            {
                Ok(e) => Some(e),
                Err(e) => {
                    eprintln!("error: {e}");
                    return 1;
                }
            }
        }
        _ => None,
    };
    let ort = match &args.onnxruntime {
        None => None,
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| format!("cannot read '{p}': {e}"))
            .and_then(|t| expected::parse(&t, p))
        {
            Ok(e) => Some(report::Peer {
                name: onnxruntime_version(p),
                status: e,
            }),
            Err(e) => {
                eprintln!("error: {e}");
                return 1;
            }
        },
    };
    let root = Path::new(&args.cases);
    let results = match run_all(
        root,
        args.filter.as_deref(),
        exec,
        jobs,
        args.max_ops,
        args.bind_constant_inputs,
        args.verbose,
    ) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    for (suite, rs) in report::by_suite(&results) {
        let s = report::Summary::of(&rs);
        println!("{}", s.line(&suite, args.bind_constant_inputs));
    }
    if let Some(p) = &args.report {
        let text = report::report(
            &results,
            exec,
            &onnx_version(root),
            args.bind_constant_inputs,
            ort.as_ref(),
        );
        if let Err(e) = ge_ir::output::write(Path::new(p), text.as_bytes()) {
            eprintln!("error: cannot write '{p}': {e}");
            return 1;
        }
    }
    let mut code = 0;
    if let (Some(p), Some(exp)) = (&args.expected, &expected) {
        code = check_expected(
            &results,
            exp,
            p,
            args.filter.is_none(),
            args.update_expected,
        );
    }
    if args.update_expected {
        if let Some(p) = &args.expected {
            if args.filter.is_some() {
                eprintln!("error: --update-expected rewrites the whole file: run without --filter");
                return 1;
            }
            let text = expected::render(&results);
            if let Err(e) = ge_ir::output::write(Path::new(p), text.as_bytes()) {
                eprintln!("error: cannot write '{p}': {e}");
                return 1;
            }
            println!("wrote {} case statuses to {p}", results.len());
        }
    }
    let _ = std::io::stdout().flush();
    code
}

/// Report how the run differs from the expected file; 1 when a case got worse
/// (0 when `accepting`, i.e. the file is being rewritten).
fn check_expected(
    results: &[CaseResult],
    exp: &std::collections::BTreeMap<String, expected::Expected>,
    path: &str,
    all: bool,
    accepting: bool,
) -> i32 {
    let d = expected::diff(results, exp, all);
    let was = |w: &Option<Status>| w.map_or("not listed".to_string(), |s| s.name().to_string());
    if !d.better.is_empty() || !d.gone.is_empty() {
        println!(
            "note: {} cases are better than {path} says{}:",
            d.better.len(),
            if d.gone.is_empty() {
                String::new()
            } else {
                format!(" and {} listed cases did not run", d.gone.len())
            }
        );
        for (n, w, now) in &d.better {
            println!("  {n}: {} -> {now}", was(w));
        }
        for n in &d.gone {
            println!("  {n}: listed, not run");
        }
        if !accepting {
            println!(
                "note: record them with `tools/conformance/run.sh --update-expected` (rewrites {path})"
            );
        }
    }
    if d.worse.is_empty() {
        println!("no case is worse than {path} says");
        return 0;
    }
    let tag = if accepting { "warning" } else { "error" };
    eprintln!("{tag}: {} cases are worse than {path} says:", d.worse.len());
    for (n, w, now, why) in &d.worse {
        eprintln!("  {n}: {} -> {now}: {why}", was(w));
    }
    i32::from(!accepting)
}

pub fn main() -> i32 {
    main_with(ConformanceArgs::parse())
}
