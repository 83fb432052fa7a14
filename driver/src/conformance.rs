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
//! Inputs that an op needs as a compile-time constant (Reshape's shape,
//! Slice's starts, …) but that the test feeds as graph inputs are bound to
//! the test's values and the model is imported again (tract's runner does the
//! same); such passes are counted separately in the report.

use clap::Parser as ClapParser;
use ge_frontends::onnx::{decode_model, decode_named_tensor, import_bytes, ImportOptions};
use ge_frontends::ImportErrorKind;
use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use ge_ir::{Context, Module};
use std::collections::BTreeMap;
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
    /// Write the Markdown report here (e.g. docs/conformance.md)
    #[arg(long, value_name = "FILE")]
    pub report: Option<String>,
    /// Fail (exit 1) if the pass rate is below the percentage in this file
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<String>,
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

/// Runs an imported model on input tensors (in function-argument order).
pub trait Executor: Sync {
    fn name(&self) -> &'static str;
    fn run(&self, m: &Module, inputs: Vec<Tensor>, max_ops: usize) -> Result<Vec<Tensor>, String>;
}

/// The compiled path: the `atc` pipeline, the `.om` writer, the runtime.
pub struct RuntimeExecutor;

impl Executor for RuntimeExecutor {
    fn name(&self) -> &'static str {
        "atc pipeline + runtime"
    }
    fn run(&self, m: &Module, inputs: Vec<Tensor>, _max_ops: usize) -> Result<Vec<Tensor>, String> {
        use ge_compile::{compile_module, context, to_bytes, CompileOptions};
        let ctx = context();
        let mut m = m.clone();
        let om = compile_module(&ctx, &mut m, &CompileOptions::default())
            .map_err(|e| format!("compile: {e}"))?;
        let bytes = to_bytes(&om).map_err(|e| format!("compile: {e}"))?;
        let model = ge_runtime::Model::from_bytes(&bytes, &ge_runtime::LoadOptions::default())
            .map_err(|e| format!("load: {e}"))?;
        let ins: Vec<ge_runtime::HostTensor> = inputs
            .iter()
            .map(ge_runtime::HostTensor::from_tensor)
            .collect();
        let outs = model.session().run(&ins).map_err(|e| e.0)?;
        outs.iter().map(|h| h.to_tensor()).collect()
    }
}

/// The reference interpreter.
pub struct InterpreterExecutor;

impl Executor for InterpreterExecutor {
    fn name(&self) -> &'static str {
        "reference interpreter"
    }
    fn run(&self, m: &Module, inputs: Vec<Tensor>, max_ops: usize) -> Result<Vec<Tensor>, String> {
        let mut interp = Interpreter::new(m);
        interp.max_ops = Some(max_ops);
        interp
            .run_function("main", inputs)
            .map_err(|e| format!("{} (at {})", e.msg, e.loc))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Pass,
    Fail,
    Unsupported,
}

#[derive(Clone, Debug)]
pub struct CaseResult {
    pub name: String,
    pub outcome: Outcome,
    /// Why it failed or is unsupported (first line).
    pub reason: String,
    /// Graph inputs bound as constants to import it.
    pub bound_inputs: Vec<String>,
    /// The ONNX op types the model uses.
    pub ops: Vec<String>,
}

struct DataSet {
    inputs: Vec<(String, Tensor)>,
    outputs: Vec<Tensor>,
}

fn read_dataset(dir: &Path) -> Result<DataSet, String> {
    let read_all = |kind: &str| -> Result<Vec<(String, Tensor)>, String> {
        let mut out = vec![];
        for i in 0.. {
            let p = dir.join(format!("{kind}_{i}.pb"));
            if !p.exists() {
                break;
            }
            let bytes = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            let t = decode_named_tensor(&bytes, dir)
                .map_err(|e| format!("{kind} #{i}: {}", e.message))?;
            out.push(t);
        }
        Ok(out)
    };
    Ok(DataSet {
        inputs: read_all("input")?,
        outputs: read_all("output")?.into_iter().map(|(_, t)| t).collect(),
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

fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("").trim();
    if l.len() > 160 {
        let mut cut = 160;
        while !l.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}…", &l[..cut])
    } else {
        l.to_string()
    }
}

/// Compare one output; `None` when it matches.
fn compare(got: &Tensor, want: &Tensor, rtol: f64, atol: f64) -> Option<String> {
    if got.dtype != want.dtype {
        return Some(format!(
            "element type {} but ONNX gives {}",
            got.dtype, want.dtype
        ));
    }
    if got.shape != want.shape {
        return Some(format!(
            "shape {:?} but ONNX gives {:?}",
            got.shape, want.shape
        ));
    }
    let (rtol, atol) = if got.dtype.is_float() {
        (rtol, atol)
    } else {
        (0.0, 0.0)
    };
    if got.allclose(want, rtol, atol) {
        return None;
    }
    let worst = (0..got.len())
        .map(|k| (k, (got.get_f(k) - want.get_f(k)).abs()))
        .fold((0, 0.0f64), |m, x| {
            if x.1 > m.1 || (x.1.is_nan() && !m.1.is_nan()) {
                x
            } else {
                m
            }
        });
    Some(format!(
        "element {} is {} but ONNX gives {} (rtol {rtol}, atol {atol})",
        worst.0,
        got.get_f(worst.0),
        want.get_f(worst.0)
    ))
}

/// Run one case folder.
pub fn run_case(ctx: &Context, dir: &Path, exec: &dyn Executor, max_ops: usize) -> CaseResult {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut res = CaseResult {
        name: name.clone(),
        outcome: Outcome::Fail,
        reason: String::new(),
        bound_inputs: vec![],
        ops: vec![],
    };
    let model_path = dir.join("model.onnx");
    let bytes = match std::fs::read(&model_path) {
        Ok(b) => b,
        Err(e) => {
            res.reason = format!("cannot read model: {e}");
            return res;
        }
    };
    if let Ok(m) = decode_model(&bytes, &name) {
        let mut ops: Vec<String> = vec![];
        if let Some(g) = &m.graph {
            ge_frontends::onnx::graph::walk_nodes(g, &mut |n| {
                let op = n.op_type.clone().unwrap_or_default();
                if !ops.contains(&op) {
                    ops.push(op);
                }
            });
        }
        res.ops = ops;
    }
    let mut sets = vec![];
    for k in 0.. {
        let d = dir.join(format!("test_data_set_{k}"));
        if !d.is_dir() {
            break;
        }
        match read_dataset(&d) {
            Ok(s) => sets.push(s),
            Err(e) => {
                res.outcome = Outcome::Unsupported;
                res.reason = format!("test data: {}", first_line(&e));
                return res;
            }
        }
    }
    let (rtol, atol) = tolerances(dir);
    for set in &sets {
        let mut opts = ImportOptions::default();
        let module = loop {
            match import_bytes(ctx, &bytes, &format!("{name}/model.onnx"), dir, &opts) {
                Ok(m) => break m,
                Err(e) => match &e.kind {
                    ImportErrorKind::NotConstant(v)
                        if !opts.constant_inputs.contains_key(v)
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
                        res.outcome = Outcome::Unsupported;
                        res.reason = format!("import: {}", first_line(&e.message));
                        return res;
                    }
                    _ => {
                        res.reason = format!("import: {}", first_line(&e.message));
                        return res;
                    }
                },
            }
        };
        let arg_names: Vec<String> = module
            .lookup_symbol("main")
            .and_then(|f| module.body().op(f).attr("ge.input_names"))
            .and_then(|a| a.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let mut inputs = vec![];
        for n in &arg_names {
            match set.inputs.iter().find(|(m, _)| m == n) {
                Some((_, t)) => inputs.push(t.clone()),
                None => {
                    res.reason = format!("no test data for input '{n}'");
                    return res;
                }
            }
        }
        let outs = match exec.run(&module, inputs, max_ops) {
            Ok(o) => o,
            Err(e) => {
                res.reason = format!("run: {}", first_line(&e));
                return res;
            }
        };
        if outs.len() != set.outputs.len() {
            res.reason = format!(
                "{} outputs but ONNX gives {}",
                outs.len(),
                set.outputs.len()
            );
            return res;
        }
        for (i, (g, w)) in outs.iter().zip(&set.outputs).enumerate() {
            if let Some(why) = compare(g, w, rtol, atol) {
                res.reason = format!("output #{i}: {why}");
                return res;
            }
        }
    }
    res.outcome = Outcome::Pass;
    res
}

/// Run every case folder under `root` on `jobs` threads.
pub fn run_all(
    root: &Path,
    filter: Option<&str>,
    exec: &dyn Executor,
    jobs: usize,
    max_ops: usize,
    verbose: bool,
) -> Result<Vec<CaseResult>, String> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .map_err(|e| {
            format!(
                "cannot read '{}': {e} (run tools/conformance/run.sh to generate the cases)",
                root.display()
            )
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("model.onnx").exists())
        .filter(|p| {
            filter.is_none_or(|f| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().contains(f))
            })
        })
        .collect();
    dirs.sort();
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
                        run_case(&ctx, dir, exec, max_ops)
                    }))
                    .unwrap_or_else(|p| {
                        let msg = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default();
                        CaseResult {
                            name: dir
                                .file_name()
                                .map(|n| n.to_string_lossy().into_owned())
                                .unwrap_or_default(),
                            outcome: Outcome::Fail,
                            reason: format!("panic: {}", first_line(&msg)),
                            bound_inputs: vec![],
                            ops: vec![],
                        }
                    });
                    if verbose {
                        let tag = match r.outcome {
                            Outcome::Pass => "PASS",
                            Outcome::Fail => "FAIL",
                            Outcome::Unsupported => "UNSUPPORTED",
                        };
                        eprintln!("{tag} {} {}", r.name, r.reason);
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

pub struct Summary {
    pub total: usize,
    pub pass: usize,
    pub fail: usize,
    pub unsupported: usize,
    pub pass_bound: usize,
}

impl Summary {
    pub fn of(results: &[CaseResult]) -> Summary {
        let count = |o: Outcome| results.iter().filter(|r| r.outcome == o).count();
        Summary {
            total: results.len(),
            pass: count(Outcome::Pass),
            fail: count(Outcome::Fail),
            unsupported: count(Outcome::Unsupported),
            pass_bound: results
                .iter()
                .filter(|r| r.outcome == Outcome::Pass && !r.bound_inputs.is_empty())
                .count(),
        }
    }
    pub fn rate(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            100.0 * self.pass as f64 / self.total as f64
        }
    }
}

/// The Markdown report (docs/conformance.md).
pub fn report(results: &[CaseResult], exec: &dyn Executor, onnx_version: &str) -> String {
    let s = Summary::of(results);
    let mut out = String::new();
    out.push_str("# ONNX conformance\n\n");
    out.push_str("<!-- Generated by tools/conformance/run.sh (ge-conformance --report); do not edit. -->\n\n");
    out.push_str(&format!(
        "The ONNX backend node tests of `onnx` {onnx_version} ({} cases), each imported with \
         `ge-frontends` and run by the {}, every output compared with the case's tolerances \
         (rtol 1e-3, atol 1e-7 unless the case says otherwise).\n\n",
        s.total,
        exec.name()
    ));
    out.push_str("```sh\ntools/conformance/run.sh          # generate the cases, run them, check the baseline\n```\n\n");
    out.push_str("| result | tests | share |\n|---|---:|---:|\n");
    let pct = |n: usize| {
        if s.total == 0 {
            0.0
        } else {
            100.0 * n as f64 / s.total as f64
        }
    };
    out.push_str(&format!("| pass | {} | {:.1}% |\n", s.pass, pct(s.pass)));
    out.push_str(&format!("| fail | {} | {:.1}% |\n", s.fail, pct(s.fail)));
    out.push_str(&format!(
        "| unsupported | {} | {:.1}% |\n\n",
        s.unsupported,
        pct(s.unsupported)
    ));
    out.push_str(&format!(
        "**Pass rate: {:.1}%** ({} of {}). {} of the passes bind graph inputs that an op needs \
         as a constant (a Reshape shape, Slice starts, …) to the test's values before import; \
         the rest run every input through the executor.\n\n",
        s.rate(),
        s.pass,
        s.total,
        s.pass_bound
    ));
    out.push_str("## Per op\n\nA test counts for every op its model uses.\n\n");
    out.push_str("| op | tests | pass | fail | unsupported |\n|---|---:|---:|---:|---:|\n");
    let mut per_op: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    for r in results {
        for op in &r.ops {
            let e = per_op.entry(op.as_str()).or_default();
            e[r.outcome as usize] += 1;
        }
    }
    for (op, c) in &per_op {
        out.push_str(&format!(
            "| {op} | {} | {} | {} | {} |\n",
            c[0] + c[1] + c[2],
            c[0],
            c[1],
            c[2]
        ));
    }
    for (title, o) in [
        ("Failures", Outcome::Fail),
        ("Unsupported", Outcome::Unsupported),
    ] {
        out.push_str(&format!("\n## {title}\n\n"));
        let list: Vec<&CaseResult> = results.iter().filter(|r| r.outcome == o).collect();
        if list.is_empty() {
            out.push_str("None.\n");
            continue;
        }
        out.push_str("| test | reason |\n|---|---|\n");
        for r in list {
            out.push_str(&format!(
                "| {} | {} |\n",
                r.name,
                r.reason.replace('|', "\\|")
            ));
        }
    }
    out
}

fn onnx_version(root: &Path) -> String {
    std::fs::read_dir(root)
        .ok()
        .and_then(|mut it| it.find_map(|e| e.ok()))
        .and_then(|e| std::fs::read_to_string(e.path().join("meta.json")).ok())
        .and_then(|t| {
            regex::Regex::new(r#""onnx":\s*"([^"]+)""#)
                .ok()?
                .captures(&t)
                .map(|c| c[1].to_string())
        })
        .unwrap_or_else(|| "?".into())
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
    let root = Path::new(&args.cases);
    let results = match run_all(
        root,
        args.filter.as_deref(),
        exec,
        jobs,
        args.max_ops,
        args.verbose,
    ) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let s = Summary::of(&results);
    println!(
        "{} passed, {} failed, {} unsupported of {} ONNX node tests: pass rate {:.1}% ({} passes bind constant inputs)",
        s.pass,
        s.fail,
        s.unsupported,
        s.total,
        s.rate(),
        s.pass_bound
    );
    if let Some(p) = &args.report {
        let text = report(&results, exec, &onnx_version(root));
        if let Err(e) = ge_ir::fsutil::write_atomic(Path::new(p), text.as_bytes()) {
            eprintln!("error: cannot write '{p}': {e}");
            return 1;
        }
    }
    if let Some(b) = &args.baseline {
        let want = match std::fs::read_to_string(b).map(|t| {
            t.lines()
                .find(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
                .and_then(|l| l.trim().trim_end_matches('%').parse::<f64>().ok())
        }) {
            Ok(Some(v)) => v,
            _ => {
                eprintln!("error: '{b}' does not hold a pass rate (a percentage)");
                return 1;
            }
        };
        if s.rate() + 1e-9 < want {
            eprintln!(
                "error: the pass rate {:.1}% is below the baseline {want:.1}% in {b}",
                s.rate()
            );
            return 1;
        }
        println!("pass rate {:.1}% >= baseline {want:.1}%", s.rate());
    }
    let _ = std::io::stdout().flush();
    0
}

pub fn main() -> i32 {
    main_with(ConformanceArgs::parse())
}
