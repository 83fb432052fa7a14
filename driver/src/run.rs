//! `ge-run`: run a model. `ge-run model.om` runs a compiled model on the
//! runtime (ge-runtime: streams, events, the planned arena, native kernels);
//! `ge-run model.air` compiles it in memory with the atc pipeline first;
//! `--interpret model.air` runs a function with the reference interpreter.

use crate::npy::{read_npy, write_npy};
use clap::Parser as ClapParser;
use ge_ir::diagnostics::SourceMap;
use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use ge_ir::{Dim, Ident, Type};
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

#[derive(ClapParser, Debug, Clone)]
#[command(
    name = "ge-run",
    version,
    about = "Run a model on the CPU device (or interpret .air with --interpret)"
)]
pub struct RunArgs {
    /// The model: a compiled .om, or an .air compiled in memory with the atc pipeline
    #[arg(value_name = "MODEL", required_unless_present = "interpret")]
    pub model: Option<String>,
    /// Run this .air file with the reference interpreter instead
    #[arg(long, value_name = "FILE", conflicts_with = "model")]
    pub interpret: Option<String>,
    /// Function to run (default: `main`, else the first public function)
    #[arg(long)]
    pub function: Option<String>,
    /// Input as NAME=FILE.npy (NAME: the model's input name, `argN` or an index) or
    /// FILE.npy (the next input in order); `--info` lists the names
    #[arg(long = "input", value_name = "[NAME=]FILE")]
    pub inputs: Vec<String>,
    /// Fill missing inputs with seeded random values
    #[arg(long)]
    pub random_inputs: bool,
    /// Seed for --random-inputs
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Value for a symbolic dim of random inputs, e.g. B=4 (default 1)
    #[arg(long = "bind", value_name = "SYM=N")]
    pub binds: Vec<String>,
    /// Write an output to FILE.npy: NAME=FILE (NAME: the model's output name, `outN` or an
    /// index) or FILE (output i to the i-th file; '-' for stdout, the report then goes to stderr)
    #[arg(long = "output", value_name = "[NAME=]FILE")]
    pub outputs: Vec<String>,
    /// Compare an output with FILE.npy (NAME=FILE, or output i with the i-th FILE): element
    /// type and shape exactly, integers and bools exactly, floats within --rtol/--atol;
    /// exit 1 naming the first difference
    #[arg(long = "expect", value_name = "[NAME=]FILE")]
    pub expects: Vec<String>,
    /// Relative tolerance for float outputs of --expect (default: by dtype)
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Absolute tolerance for float outputs of --expect (default: by dtype)
    #[arg(long)]
    pub atol: Option<f64>,
    /// Accept unregistered dialects
    #[arg(long)]
    pub allow_unregistered_dialect: bool,
    /// Run the model N times and print a latency summary (p50/p90/p99)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub iterations: usize,
    /// Untimed runs before the timed ones
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub warmup: usize,
    /// Compute threads for AICore/VectorCore kernels: at most N threads compute at once,
    /// whatever the number of streams
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub threads: usize,
    /// Write a Chrome/Perfetto trace of the last run (one track per stream; '-' for stdout)
    #[arg(long, value_name = "FILE")]
    pub trace: Option<String>,
    /// .om models: refuse a model compiled for another SoC; .air models: compile for this
    /// SoC (a built-in name or a profile .json)
    #[arg(long, value_name = "NAME")]
    pub soc: Option<String>,
    /// Print what the model is (inputs, outputs, streams, kernels, fallbacks);
    /// alone it only describes the model, with inputs (--input,
    /// --random-inputs) or outputs to write or check it also runs it
    #[arg(long)]
    pub info: bool,
    /// Print the latency summary as one JSON line
    #[arg(long)]
    pub json: bool,
    /// Fail (exit 1, before running) when a kernel would run on the reference
    /// interpreter instead of a native kernel; the error names the ops
    #[arg(long, conflicts_with = "interpret")]
    pub native_only: bool,
    /// With --native-only: this op may run on the interpreter (repeatable), e.g. graph.erf
    #[arg(long = "allow-fallback", value_name = "OP", requires = "native_only")]
    pub allow_fallback: Vec<String>,
    /// .air models: compile without kernel fusion
    #[arg(long)]
    pub no_fuse: bool,
    /// .air models: compile onto a single stream
    #[arg(long)]
    pub single_stream: bool,
    /// .air models: keep NCHW/ND layouts (no NC1HWC0 / FRACTAL formats)
    #[arg(long)]
    pub no_formats: bool,
    /// Run activations in the NC1HWC0 / FRACTAL_NZ blocks the model names even
    /// where only convolutions or matrix products read them (by default they
    /// stay NCHW / ND between such kernels)
    #[arg(long)]
    pub keep_formats: bool,
    /// When convolutions on large maps read and write NC1HWC0 blocks as they
    /// are (AVX-512 only): 'measured' where their shapes admit it and this
    /// CPU ran the blocks kernel faster than the NCHW one when the first
    /// model was loaded (--info shows the times), 'always' wherever their
    /// shapes admit it, 'never' converts every input to NCHW first
    #[arg(long, value_name = "WHEN", default_value = "measured")]
    pub blocked_reads: ge_runtime::BlockedReads,
    /// The same as --blocked-reads never
    #[arg(long, conflicts_with = "blocked_reads")]
    pub no_blocked_reads: bool,
    /// .air models: also write the compiled .om here ('-' for stdout)
    #[arg(long, value_name = "FILE")]
    pub save_om: Option<String>,
    /// Most tasks one stream may run in one run (every iteration of a loop in
    /// the task program counts); beyond it the run fails
    #[arg(long, value_name = "N", default_value_t = ge_runtime::DEFAULT_MAX_STEPS)]
    pub max_steps: u64,
    /// Fail a run that takes longer than SECONDS (time blocked on events
    /// included; a deadlock fails at once without it)
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// How the model's streams run: 'serial' takes them in turns on the
    /// calling thread (in one order that keeps every event; kernels still
    /// use --threads), 'workers' gives each stream beyond the first a
    /// thread. Serial falls back to workers for a task program with control
    /// flow or an event it cannot meet
    #[arg(long, value_name = "MODE", default_value = "serial")]
    pub streams: ge_runtime::StreamExecution,
    #[command(flatten)]
    pub limits: crate::limits::LimitArgs,
}

pub struct RunOutput {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

/// The model's inputs or outputs, by name, for `--input` / `--output` /
/// `--expect` specs.
struct IoNames<'a> {
    /// `input` or `output`.
    kind: &'static str,
    /// `arg` or `out`: `argN` / `outN` is position N.
    prefix: &'static str,
    names: &'a [String],
    /// `'@f'` or `the model`, for messages.
    what: &'a str,
}

impl IoNames<'_> {
    fn list(&self) -> String {
        self.names.join(", ")
    }

    /// The position and file of a `NAME=FILE` spec, `None` for a plain
    /// `FILE`. NAME is the longest name the spec starts with followed by `=`
    /// (names may hold `=` themselves), else `argN`/`outN` or an index.
    fn named<'s>(&self, flag: &str, spec: &'s str) -> Result<Option<(usize, &'s str)>, String> {
        let by_name = self
            .names
            .iter()
            .enumerate()
            .filter(|(_, n)| {
                spec.strip_prefix(n.as_str())
                    .is_some_and(|r| r.starts_with('='))
            })
            .max_by_key(|(_, n)| n.len());
        if let Some((i, n)) = by_name {
            return Ok(Some((i, &spec[n.len() + 1..])));
        }
        let Some((n, file)) = spec.split_once('=') else {
            return Ok(None);
        };
        match n.strip_prefix(self.prefix).unwrap_or(n).parse::<usize>() {
            Ok(i) if i < self.names.len() => Ok(Some((i, file))),
            Ok(_) => Err(format!(
                "{flag} {spec}: {} has only {} {}s ({})",
                self.what,
                self.names.len(),
                self.kind,
                self.list()
            )),
            Err(_) => Err(format!(
                "{flag} {spec}: {} has no {} '{n}' ({}s: {})",
                self.what,
                self.kind,
                self.kind,
                self.list()
            )),
        }
    }

    /// One file (or none) per input/output from `specs`: `NAME=FILE` goes to
    /// that name, a plain `FILE` to the position it is given at. Plain files
    /// only (the old form) must name every output when `exact`.
    fn assign(
        &self,
        flag: &str,
        specs: &[String],
        exact: bool,
    ) -> Result<Vec<Option<String>>, String> {
        let n = self.names.len();
        let parsed: Vec<Option<(usize, &str)>> = specs
            .iter()
            .map(|s| self.named(flag, s))
            .collect::<Result<_, _>>()?;
        if exact && parsed.iter().all(Option::is_none) && !specs.is_empty() && specs.len() != n {
            return Err(format!(
                "{} has {n} {}s ({}) but {} {flag} files were given",
                self.what,
                self.kind,
                self.list(),
                specs.len()
            ));
        }
        let mut slots: Vec<Option<String>> = vec![None; n];
        for (k, (spec, p)) in specs.iter().zip(parsed).enumerate() {
            let (i, file) = p.unwrap_or((k, spec.as_str()));
            if i >= n {
                return Err(format!(
                    "{flag} {spec}: {} has only {n} {}s ({})",
                    self.what,
                    self.kind,
                    self.list()
                ));
            }
            if slots[i].replace(file.to_string()).is_some() {
                return Err(format!(
                    "{flag} {spec}: {} #{i} '{}' is given more than once",
                    self.kind, self.names[i]
                ));
            }
        }
        Ok(slots)
    }
}

fn fail(stderr: String) -> RunOutput {
    RunOutput {
        stdout: String::new(),
        stderr,
        code: 1,
    }
}

/// Random values for a type (symbols from `binds`, default 1).
fn random_tensor(
    ty: Type,
    binds: &HashMap<Ident, i64>,
    rng: &mut rand::rngs::SmallRng,
) -> Result<Tensor, String> {
    let tt = ty
        .as_tensor()
        .ok_or_else(|| format!("cannot make a random value of type '{ty}'"))?;
    let shape: Vec<usize> = tt
        .shape()
        .iter()
        .map(|d| match d {
            Dim::Static(n) => Ok(*n as usize),
            Dim::Unknown => Ok(1),
            Dim::Sym(s) => {
                // Unbound symbols default to 1.
                let mut syms = vec![];
                s.expr().symbols(&mut syms);
                let mut b = binds.clone();
                for x in syms {
                    b.entry(x).or_insert(1);
                }
                d.eval(&b)
                    .and_then(|v| usize::try_from(v).ok())
                    .ok_or_else(|| format!("cannot size '{ty}' (bind its symbols with --bind)"))
            }
        })
        .collect::<Result<_, _>>()?;
    ge_ir::budget::check(
        ge_ir::budget::bytes_of(shape.iter().map(|&d| d as u64), 8),
        &format_args!("a random value of type '{ty}'"),
    )?;
    let n: usize = shape.iter().product();
    let dt = tt.dtype;
    Ok(if dt.is_float() {
        Tensor::from_f64(
            shape,
            dt,
            (0..n).map(|_| rng.random_range(-1.0..1.0)).collect(),
        )
    } else if dt == ge_ir::DType::I1 {
        Tensor::from_i64(shape, dt, (0..n).map(|_| rng.random_range(0..2)).collect())
    } else {
        Tensor::from_i64(shape, dt, (0..n).map(|_| rng.random_range(0..10)).collect())
    })
}

pub fn summarize(t: &Tensor) -> String {
    let shown: Vec<String> = (0..t.len().min(8))
        .map(|i| {
            if t.dtype.is_float() {
                format!("{:.6}", t.get_f(i))
            } else {
                t.get_i(i).to_string()
            }
        })
        .collect();
    let more = if t.len() > 8 { ", ..." } else { "" };
    format!(
        "tensor<{}{}> [{}{more}]",
        t.shape.iter().map(|d| format!("{d}x")).collect::<String>(),
        t.dtype,
        shown.join(", ")
    )
}

pub fn main_with(args: RunArgs, ctx: &mut ge_ir::Context) -> RunOutput {
    ctx.allow_unregistered = args.allow_unregistered_dialect;
    match (&args.interpret, &args.model) {
        (Some(p), _) => interpret(&args, ctx, p).unwrap_or_else(fail),
        (None, Some(m)) => run_model(&args, m),
        (None, None) => fail("error: give a model (.om or .air) or --interpret FILE\n".into()),
    }
}

/// `--interpret FILE`: parse and verify the module, run one function with
/// the reference interpreter. Err: the whole report for stderr.
fn interpret(args: &RunArgs, ctx: &mut ge_ir::Context, path: &str) -> Result<RunOutput, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("error: cannot read '{path}': {e}\n"))?;
    let mut sm = SourceMap::new();
    let file = sm.add(path, Arc::from(text.as_str()));
    let m = ge_ir::parser::parse_module(ctx, path, &text, ge_ir::parser::ParseOptions::file(file))
        .map_err(|d| sm.render(&d))?;
    let diags = ge_ir::verifier::verify_module(&m);
    if diags.iter().any(|d| d.is_error()) {
        return Err(diags.iter().map(|d| sm.render(d)).collect());
    }
    let name = entry_function(args, &m)?;
    let mut interp = Interpreter::new(&m);
    // The same limits as a compiled run: a loop that never exits ends.
    interp.max_ops = usize::try_from(args.max_steps).ok();
    interp.deadline = run_timeout(args)
        .map_err(|e| format!("error: {e}\n"))?
        .map(|t| std::time::Instant::now() + t);
    let Some((ins, _)) = interp.signature(&name) else {
        return Err(format!("error: no function named '@{name}'\n"));
    };
    let (in_names, out_names) = m
        .lookup_symbol(&name)
        .map(|f| ge_dialects::graph::func::io_names_or_default(m.body().op(f)))
        .unwrap_or_default();
    let what = format!("'@{name}'");
    let in_io = IoNames {
        kind: "input",
        prefix: "arg",
        names: &in_names,
        what: &what,
    };
    let out_io = IoNames {
        kind: "output",
        prefix: "out",
        names: &out_names,
        what: &what,
    };
    let inputs = interpreter_inputs(args, &in_io, ins)?;
    let error = |e: String| format!("error: {e}\n");
    let outs = out_io
        .assign("--output", &args.outputs, true)
        .map_err(error)?;
    let expects = out_io
        .assign("--expect", &args.expects, true)
        .map_err(error)?;
    let results = interp
        .run_function(&name, inputs)
        .map_err(|e| sm.render(&e.to_diagnostic()))?;
    let mut stdout = String::new();
    let (stderr, matched) =
        report_results(args, &out_names, &results, &expects, &outs, &mut stdout).map_err(error)?;
    Ok(RunOutput {
        stdout,
        stderr,
        code: i32::from(!matched),
    })
}

/// The function `--interpret` runs: `--function`, else `main`, else the
/// first public function.
fn entry_function(args: &RunArgs, m: &ge_ir::Module) -> Result<String, String> {
    if let Some(f) = &args.function {
        return Ok(f.clone());
    }
    let names = public_functions(m);
    names
        .iter()
        .find(|n| *n == "main")
        .or(names.first())
        .cloned()
        .ok_or_else(|| "error: the module has no public function to run\n".to_string())
}

/// The names of the module's public (not `private`) top-level symbols, in
/// order.
pub fn public_functions(m: &ge_ir::Module) -> Vec<String> {
    let b = m.body();
    m.top_ops()
        .into_iter()
        .filter(|&o| b.op(o).attr("sym_visibility").and_then(|a| a.as_str()) != Some("private"))
        .filter_map(|o| {
            b.op(o)
                .attr("sym_name")
                .and_then(|a| a.as_str())
                .map(str::to_string)
        })
        .collect()
}

/// The interpreted function's inputs (of types `ins`): from `--input`
/// files, else random (`--random-inputs`, symbols from `--bind`).
fn interpreter_inputs(
    args: &RunArgs,
    in_io: &IoNames,
    ins: &[Type],
) -> Result<Vec<Tensor>, String> {
    let files = in_io
        .assign("--input", &args.inputs, false)
        .map_err(|e| format!("error: {e}\n"))?;
    let mut given: Vec<Option<Tensor>> = vec![None; ins.len()];
    for (slot, path) in files.iter().enumerate() {
        if let Some(p) = path {
            let t =
                read_npy(p).map_err(|e| format!("error: input '{}': {e}\n", in_io.names[slot]))?;
            given[slot] = Some(t);
        }
    }
    let binds = parse_binds(&args.binds).map_err(|e| format!("error: {e}\n"))?;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(args.seed);
    let mut inputs = vec![];
    for (i, (g, &ty)) in given.into_iter().zip(ins).enumerate() {
        let iname = &in_io.names[i];
        match g {
            Some(t) => inputs.push(t),
            None if args.random_inputs => inputs.push(
                random_tensor(ty, &binds, &mut rng)
                    .map_err(|e| format!("error: input #{i} '{iname}': {e}\n"))?,
            ),
            None => {
                return Err(format!(
                    "error: missing input #{i} '{iname}' of type '{ty}' (give --input {iname}=FILE.npy or --random-inputs)\n"
                ))
            }
        }
    }
    Ok(inputs)
}

/// The `--bind SYM=N` values.
fn parse_binds(binds: &[String]) -> Result<HashMap<Ident, i64>, String> {
    let mut out = HashMap::new();
    for b in binds {
        match b.split_once('=').map(|(s, v)| (s, v.parse::<i64>())) {
            Some((s, Ok(v))) => {
                out.insert(Ident::new(s), v);
            }
            _ => return Err(format!("--bind {b}: expected SYM=N")),
        }
    }
    Ok(out)
}

/// What `write_npy` stores for `t`: numpy has no bf16 (stored as f32, exactly)
/// and no index type (stored as i64).
fn as_stored(t: &Tensor) -> Tensor {
    match t.dtype {
        ge_ir::DType::BF16 => t.cast(ge_ir::DType::F32),
        ge_ir::DType::Index => t.cast(ge_ir::DType::I64),
        _ => t.clone(),
    }
}

/// What both run paths (compiled and `--interpret`) do with their results:
/// compare them with the `--expect` files, then print them and write the
/// `--output` files. Returns the error lines and whether every output matched.
fn report_results(
    args: &RunArgs,
    names: &[String],
    results: &[Tensor],
    expects: &[Option<String>],
    outs: &[Option<String>],
    stdout: &mut String,
) -> Result<(String, bool), String> {
    let mut stderr = String::new();
    let matched = check_expects(args, names, results, expects, stdout, &mut stderr)?;
    write_outputs(names, results, outs, stdout)?;
    Ok((stderr, matched))
}

/// Compare each result with its `--expect` file (`expects[i]`, if any):
/// element type and shape exactly, integers and bools exactly, floats within
/// the dtype's tolerance (or --rtol/--atol). A match prints `output #i 'NAME':
/// matches FILE`; a mismatch an error naming the output and the first
/// differing element with both values. Returns whether every output matched.
fn check_expects(
    args: &RunArgs,
    names: &[String],
    results: &[Tensor],
    expects: &[Option<String>],
    stdout: &mut String,
    stderr: &mut String,
) -> Result<bool, String> {
    let mut all = true;
    for (i, (t, path)) in results.iter().zip(expects).enumerate() {
        let Some(path) = path else { continue };
        let name = names.get(i).map_or("", String::as_str);
        let want = read_npy(path).map_err(|e| format!("output #{i} '{name}': {e}"))?;
        let (rt, at) = Tensor::default_tolerance(t.dtype);
        let (rtol, atol) = (args.rtol.unwrap_or(rt), args.atol.unwrap_or(at));
        match as_stored(t).mismatch(&want, rtol, atol) {
            None => stdout.push_str(&format!("output #{i}: matches {path}\n")),
            Some(why) => {
                stderr.push_str(&format!(
                    "error: output #{i} '{name}' differs from {path}: {why}\n"
                ));
                all = false;
            }
        }
    }
    Ok(all)
}

/// Print every result and write those with an `--output` file (`files[i]`).
fn write_outputs(
    names: &[String],
    results: &[Tensor],
    files: &[Option<String>],
    stdout: &mut String,
) -> Result<(), String> {
    for (i, t) in results.iter().enumerate() {
        let name = names.get(i).map_or("", String::as_str);
        stdout.push_str(&format!("output #{i}: {}\n", summarize(t)));
        if let Some(Some(p)) = files.get(i) {
            write_npy(p, t).map_err(|e| format!("output #{i} '{name}': {e}"))?;
        }
    }
    Ok(())
}

pub fn main() -> i32 {
    let args = RunArgs::parse();
    // With data on stdout (`--output -`, `--trace -`, `--save-om -`) the report goes to stderr.
    let data_on_stdout = args.outputs.iter().any(|o| o == "-")
        || [&args.trace, &args.save_om]
            .iter()
            .any(|o| o.as_deref() == Some("-"));
    let model = args.model.as_deref().or(args.interpret.as_deref());
    if let Err(e) = args.limits.apply(model.unwrap_or("-")) {
        eprintln!("error: {e}");
        return 1;
    }
    let mut ctx = ge_compile::context();
    let out = main_with(args, &mut ctx);
    if data_on_stdout {
        let _ = std::io::stderr().write_all(out.stdout.as_bytes());
    } else {
        let _ = std::io::stdout().write_all(out.stdout.as_bytes());
    }
    let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    out.code
}

// ---- compiled models (.om, or .air compiled in memory) -------------------------------

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let k = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[k.min(sorted.len() - 1)]
}

/// `--timeout` as a duration.
fn run_timeout(args: &RunArgs) -> Result<Option<std::time::Duration>, String> {
    args.timeout
        .map(|t| {
            std::time::Duration::try_from_secs_f64(t)
                .map_err(|_| format!("--timeout {t}: expected a number of seconds >= 0"))
        })
        .transpose()
}

/// What this CPU measured of the blocks kernel against the NCHW one, by
/// kind of filter (`ge_runtime::BlockedReads::Measured`).
fn blocks_verdict_line(v: &ge_runtime::BlocksVerdict) -> String {
    let kind = |name: &str, t: &ge_runtime::BlocksTiming| {
        format!(
            "{name} {:.0} us vs {:.0} us on NCHW ({})",
            t.blocks_ns as f64 / 1e3,
            t.nchw_ns as f64 / 1e3,
            match t.pays() {
                true => "used",
                false => "not used",
            }
        )
    };
    format!(
        "convolutions on NC1HWC0 blocks, measured on this CPU: {}; {}\n",
        kind("1x1 filters", &v.pointwise),
        kind("3x3 filters", &v.taps)
    )
}

/// Load (or compile and load) the model of `path`.
fn load_model(args: &RunArgs, path: &str) -> Result<ge_runtime::Model, String> {
    let timeout = run_timeout(args)?;
    let opts = ge_runtime::LoadOptions {
        threads: args.threads.max(1),
        soc: args.soc.clone(),
        plain_layouts: !args.keep_formats,
        blocked_reads: match args.no_blocked_reads {
            true => ge_runtime::BlockedReads::Never,
            false => args.blocked_reads,
        },
        max_memory: args.limits.max_memory,
        max_steps: args.max_steps,
        timeout,
        stream_execution: args.streams,
        ..Default::default()
    };
    if path.ends_with(".air") || path.ends_with(".mlir") {
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
        let mut copts = ge_compile::CompileOptions {
            fuse: !args.no_fuse,
            single_stream: args.single_stream,
            formats: !args.no_formats,
            entry: args.function.clone(),
            ..Default::default()
        };
        if let Some(soc) = &args.soc {
            // Compile for that SoC (checks the name, reads a profile); the
            // header carries the profile's name.
            ge_soc::Soc::load(soc)?;
            copts.soc = soc.clone();
        }
        let opts = ge_runtime::LoadOptions { soc: None, ..opts };
        let om = ge_compile::compile_text(path, &text, &copts)?;
        let bytes = ge_compile::to_bytes(&om)?;
        if let Some(p) = &args.save_om {
            ge_ir::output::write(p, &bytes).map_err(|e| format!("cannot write '{p}': {e}"))?;
        }
        return ge_runtime::Model::from_bytes(&bytes, &opts)
            .map_err(|e| e.in_model(path).to_string());
    }
    ge_runtime::Model::load_with(path, &opts).map_err(|e| e.to_string())
}

fn run_model(args: &RunArgs, path: &str) -> RunOutput {
    match run_model_inner(args, path) {
        Ok(o) => o,
        Err(e) => fail(format!("error: {e}\n")),
    }
}

/// What `--info` prints: the model's tasks, memory, inputs and outputs,
/// symbols, hybrid ops and interpreter fallbacks.
fn model_info(model: &ge_runtime::Model, ins: &[(String, String)]) -> String {
    let mut stdout = String::new();
    let (native, fb) = model.kernel_counts();
    stdout.push_str(&format!(
        "model '{}' for {}: {} tasks on {} streams, {} events; {} kernels native, {} on the interpreter\n",
        model.name(),
        model.soc(),
        model.num_tasks(),
        model.num_streams(),
        model.num_events(),
        native,
        fb
    ));
    stdout.push_str(&format!(
        "workspace {} bytes, weights {} bytes; {} activations kept plain (NCHW/ND) between kernels\n",
        model.workspace_bytes(),
        model.weights_bytes(),
        model.plain_buffers()
    ));
    if model.blocked_reads() > 0 {
        stdout.push_str(&format!(
            "{} convolutions read and write NC1HWC0 blocks as they are\n",
            model.blocked_reads()
        ));
    }
    if let Some(v) = model.blocks_verdict() {
        stdout.push_str(&blocks_verdict_line(&v));
    }
    if model.prepared_bytes() > 0 {
        stdout.push_str(&format!(
            "{} bytes of constant operands packed at load (filters and weights in the GEMM's layout)\n",
            model.prepared_bytes()
        ));
    }
    if model.forwarded_copies() > 0 {
        stdout.push_str(&format!(
            "{} copies between plain buffers dropped (the producer writes the copy's place, or the reader reads the original)\n",
            model.forwarded_copies()
        ));
    }
    if model.num_streams() > 1 {
        stdout.push_str(match model.runs_streams_serially() {
            true => "streams run in turns on the calling thread (one order keeping every event)\n",
            false => "streams run on worker threads, one per stream beyond the first\n",
        });
    }
    for (n, t) in ins {
        stdout.push_str(&format!("input {n}: {t}\n"));
    }
    for (n, t) in model.outputs() {
        stdout.push_str(&format!("output {n}: {t}\n"));
    }
    for (s, b) in model.symbol_bounds() {
        stdout.push_str(&format!("symbol {s} <= {b}\n"));
    }
    for s in model.unbounded_symbols() {
        stdout.push_str(&format!(
            "symbol {s}: no bound (memory planned per shape)\n"
        ));
    }
    for op in model.hybrid_ops() {
        stdout.push_str(&format!("hybrid: {op}\n"));
    }
    for s in model.value_symbols() {
        stdout.push_str(&format!(
            "value symbol {s} (bound at run start from the values)\n"
        ));
    }
    for s in model.size_symbols() {
        stdout.push_str(&format!("size symbol {s} (bound when the op has run)\n"));
    }
    for op in model.fallback_ops() {
        stdout.push_str(&format!("fallback: {op}\n"));
    }
    for (algo, n, folded) in model.conv_algorithms() {
        let at_load = match algo.starts_with("winograd") {
            true => format!(" ({folded} filters transformed at load)"),
            false => String::new(),
        };
        stdout.push_str(&format!("conv: {algo} x{n}{at_load}\n"));
    }
    let residuals = model.fused_residuals();
    if residuals > 0 {
        stdout.push_str(&format!(
            "conv: residual add in the epilogue x{residuals}\n"
        ));
    }
    stdout
}

/// Whether the flags ask for a run (inputs, outputs, a check, a trace or
/// timing); `--info` without any of them only describes the model.
fn asks_for_a_run(args: &RunArgs) -> bool {
    !args.inputs.is_empty()
        || args.random_inputs
        || !args.outputs.is_empty()
        || !args.expects.is_empty()
        || args.trace.is_some()
        || args.iterations != 1
        || args.warmup > 0
        || args.json
}

/// The model's inputs: from `--input` files, else random (`--random-inputs`,
/// symbols from `--bind`).
fn gather_inputs(
    args: &RunArgs,
    ins: &[(String, String)],
    in_io: &IoNames,
) -> Result<Vec<ge_runtime::HostTensor>, String> {
    use ge_runtime::HostTensor;
    let mut given: Vec<Option<ge_ir::tensor::Tensor>> = vec![None; ins.len()];
    for (slot, file) in in_io
        .assign("--input", &args.inputs, false)?
        .iter()
        .enumerate()
    {
        if let Some(f) = file {
            given[slot] = Some(read_npy(f).map_err(|e| format!("input '{}': {e}", ins[slot].0))?);
        }
    }
    let binds = parse_binds(&args.binds)?;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(args.seed);
    let mut inputs = vec![];
    for (i, g) in given.into_iter().enumerate() {
        let (name, ty) = &ins[i];
        let t = match g {
            Some(t) => t,
            None if args.random_inputs => {
                let t = ge_ir::parser::parse_type_str(ge_ir::context::bare(), ty)
                    .map_err(|d| format!("input '{name}': {}", d.message))?;
                random_tensor(t, &binds, &mut rng).map_err(|e| format!("input '{name}': {e}"))?
            }
            None => {
                return Err(format!(
                    "missing input #{i} '{name}' of type '{ty}' (give --input {name}=FILE.npy or --random-inputs)"
                ))
            }
        };
        inputs.push(HostTensor::from_tensor(&t));
    }
    Ok(inputs)
}

/// The latency summary of `times` (ms per run): JSON or one line.
fn latency_line(json: bool, threads: usize, times: &[f64]) -> String {
    let n = times.len();
    let mut s = times.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let mean = s.iter().sum::<f64>() / s.len() as f64;
    let (p50, p90, p99) = (
        percentile(&s, 50.0),
        percentile(&s, 90.0),
        percentile(&s, 99.0),
    );
    if json {
        format!(
            "{{\"runs\": {n}, \"threads\": {}, \"mean_ms\": {mean:.6}, \"p50_ms\": {p50:.6}, \"p90_ms\": {p90:.6}, \"p99_ms\": {p99:.6}, \"min_ms\": {:.6}}}\n",
            threads,
            s[0]
        )
    } else {
        format!(
            "latency over {n} runs ({} threads): mean {mean:.3} ms, p50 {p50:.3} ms, p90 {p90:.3} ms, p99 {p99:.3} ms, min {:.3} ms\n",
            threads,
            s[0]
        )
    }
}

fn run_model_inner(args: &RunArgs, path: &str) -> Result<RunOutput, String> {
    let model = load_model(args, path)?;
    let mut stdout = String::new();
    let ins = model.inputs();
    if args.info {
        stdout.push_str(&model_info(&model, &ins));
    }
    if args.native_only {
        let allowed: Vec<&str> = args.allow_fallback.iter().map(String::as_str).collect();
        model
            .require_native(&allowed)
            .map_err(|e| format!("--native-only: {e}"))?;
    }
    if args.info && !asks_for_a_run(args) {
        // `--info` alone describes the model; it needs no inputs.
        return Ok(RunOutput {
            stdout,
            stderr: String::new(),
            code: 0,
        });
    }
    // Inputs, and the files of the outputs (checked before running).
    let in_names: Vec<String> = ins.iter().map(|(n, _)| n.clone()).collect();
    let out_names: Vec<String> = model.outputs().into_iter().map(|(n, _)| n).collect();
    let in_io = IoNames {
        kind: "input",
        prefix: "arg",
        names: &in_names,
        what: "the model",
    };
    let out_io = IoNames {
        kind: "output",
        prefix: "out",
        names: &out_names,
        what: "the model",
    };
    let outs = out_io.assign("--output", &args.outputs, true)?;
    let expects = out_io.assign("--expect", &args.expects, true)?;
    let inputs = gather_inputs(args, &ins, &in_io)?;
    let session = model.session();
    for _ in 0..args.warmup {
        session.run(&inputs).map_err(|e| e.to_string())?;
    }
    let n = args.iterations.max(1);
    let bar = (n >= 20).then(|| {
        let b = indicatif::ProgressBar::new(n as u64);
        if let Ok(s) = indicatif::ProgressStyle::with_template(
            "{spinner} {pos}/{len} runs [{bar:30}] {per_sec} eta {eta}",
        ) {
            b.set_style(s.progress_chars("=> "));
        }
        b
    });
    let mut times = Vec::with_capacity(n);
    let mut last = None;
    for i in 0..n {
        let opts = ge_runtime::RunOptions {
            trace: args.trace.is_some() && i + 1 == n,
        };
        let t = std::time::Instant::now();
        let r = session
            .run_with(&inputs, &opts)
            .map_err(|e| e.to_string())?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        if let Some(b) = &bar {
            b.inc(1);
        }
        last = Some(r);
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let r = last.ok_or("no run")?;
    if let (Some(p), Some(tr)) = (&args.trace, &r.trace) {
        ge_ir::output::write(p, tr.to_json().as_bytes())
            .map_err(|e| format!("cannot write '{p}': {e}"))?;
    }
    // A reference tensor holds 8 bytes an element (a u8 output grows 8x):
    // checked against the budget before it is made (a mutated model's
    // 0.9 GB u8 output asked for 7.5 GB here).
    let results: Vec<Tensor> = r
        .outputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let dims = t.shape.iter().map(|&d| d as u64);
            ge_ir::budget::check(
                ge_ir::budget::bytes_of(dims, 8),
                &format_args!("output #{i} as a reference tensor"),
            )?;
            t.to_tensor()
        })
        .collect::<Result<_, _>>()?;
    let (stderr, matched) =
        report_results(args, &out_names, &results, &expects, &outs, &mut stdout)?;
    if n > 1 || args.json {
        stdout.push_str(&latency_line(args.json, model.threads(), &times));
    }
    if let Some(p) = &args.trace {
        stdout.push_str(&format!("trace: {p}\n"));
    }
    Ok(RunOutput {
        stdout,
        stderr,
        code: i32::from(!matched),
    })
}
