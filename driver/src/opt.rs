//! `ge-opt`: parse, verify, run a pass pipeline, print — mlir-opt's job.

use crate::diag_verify;
use crate::out_text::OutText;
use clap::Parser as ClapParser;
use ge_ir::diagnostics::{Diagnostic, Pos, SourceMap};
use ge_ir::pass::{parse_pipeline, run_pipeline, Instrumentation, PassContext, PassManagerOptions};
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::split::split_input;
use ge_ir::Context;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(ClapParser, Debug, Clone)]
#[command(
    name = "ge-opt",
    version,
    about = "Optimise .air files: parse, verify, run a pass pipeline, print"
)]
pub struct OptArgs {
    /// Input file ('-' for stdin)
    #[arg(default_value = "-")]
    pub input: String,
    /// Output file ('-' for stdout); a regular file is replaced atomically, a device,
    /// FIFO or symlink is written through
    #[arg(short = 'o', long = "output", default_value = "-")]
    pub output: String,
    /// Pass pipeline in MLIR syntax, e.g. 'builtin.module(graph.func(cse))', or a named pipeline
    #[arg(short = 'p', long = "pass-pipeline")]
    pub pass_pipeline: Option<String>,
    /// Split the input at '// -----' lines and process each chunk on its own
    #[arg(long)]
    pub split_input_file: bool,
    /// Check diagnostics against 'expected-error@+N {{...}}' annotations
    #[arg(long)]
    pub verify_diagnostics: bool,
    /// Write the lowered module as an .om offline model after the pipeline
    /// (run `--pass-pipeline=atc` first; '-' for stdout)
    #[arg(long, value_name = "FILE.om")]
    pub emit_om: Option<String>,
    /// Print every op in MLIR's generic form
    #[arg(long, alias = "mlir-print-op-generic")]
    pub print_op_generic: bool,
    /// Print source locations
    #[arg(long, alias = "mlir-print-debuginfo")]
    pub print_debuginfo: bool,
    /// Print the IR after every pass (on stderr)
    #[arg(long, alias = "mlir-print-ir-after-all")]
    pub print_ir_after_all: bool,
    /// Print the IR after every pass that changed it (on stderr)
    #[arg(long, alias = "mlir-print-ir-after-change")]
    pub print_ir_after_change: bool,
    /// Verify the IR after every pass
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub verify_each: bool,
    /// Print a timing report of parsing, verification, each pass and printing (on stderr)
    #[arg(long, alias = "mlir-timing")]
    pub timing: bool,
    /// Print the pipeline that will run (on stderr)
    #[arg(long)]
    pub dump_pass_pipeline: bool,
    /// List registered passes and pipelines with their options
    #[arg(long)]
    pub list_passes: bool,
    /// List registered ops with the op interfaces each implements
    #[arg(long)]
    pub list_ops: bool,
    /// Keep ops of unregistered dialects (generic form only)
    #[arg(long)]
    pub allow_unregistered_dialect: bool,
    /// Load rewrite rules from a .rr file (repeatable); `apply-rules` runs them
    #[arg(long = "rewrite-rules", value_name = "FILE")]
    pub rewrite_rules: Vec<String>,
    /// Print an equality-saturation report for every eqsat pass (on stderr)
    #[arg(long)]
    pub eqsat_report: bool,
    /// List the native helper functions .rr rules may call
    #[arg(long)]
    pub list_rule_helpers: bool,
    /// Run passes on one thread
    #[arg(long, alias = "mlir-disable-threading")]
    pub disable_threading: bool,
    /// Print dense literals with more than N elements as hex
    #[arg(long, value_name = "N")]
    pub print_elements_hex_over: Option<usize>,
    /// Recompile whenever the input (or a rule or SoC file) is saved, printing the
    /// result or diagnostics and the time taken; only edited functions are re-optimised
    #[arg(long)]
    pub watch: bool,
    /// With --watch: stop after N compiles
    #[arg(long, hide = true, value_name = "N")]
    pub watch_iterations: Option<usize>,
    /// With --watch: how often to look for changes, in milliseconds
    #[arg(long, hide = true, default_value_t = 200)]
    pub watch_poll_ms: u64,
    /// With --watch: after the i-th compile, save FILE i over the input (simulated edits)
    #[arg(long, hide = true, value_delimiter = ',', value_name = "FILE")]
    pub watch_simulate_edits: Vec<String>,
    /// Print which incremental queries re-ran and compile-cache hits and misses (on stderr)
    #[arg(long)]
    pub incremental_stats: bool,
    /// Use the compile cache in the default directory ($GE_CACHE_DIR, $XDG_CACHE_HOME/ge or ~/.cache/ge)
    #[arg(long)]
    pub cache: bool,
    /// Use the compile cache in DIR: an unchanged compile is answered from disk
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<String>,
    /// Do not use the compile cache (overrides --cache and --cache-dir)
    #[arg(long)]
    pub no_cache: bool,
    #[command(flatten)]
    pub limits: crate::limits::LimitArgs,
}

/// Everything a run writes, so tests can look at it without a process.
#[derive(Default, Debug)]
pub struct OptOutput {
    pub stdout: OutText,
    pub stderr: String,
    pub code: i32,
}

pub fn main_with(args: OptArgs, ctx: &mut Context) -> OptOutput {
    if let Some(out) = crate::incremental::cli::intercept(&args, ctx, main_uncached) {
        return out;
    }
    main_uncached(args, ctx)
}

/// `ge-opt` without `--watch` and the compile cache.
fn main_uncached(args: OptArgs, ctx: &mut Context) -> OptOutput {
    let mut out = OptOutput::default();
    ctx.allow_unregistered = args.allow_unregistered_dialect;
    ctx.threading = !args.disable_threading;
    if let Some(listing) = listing(&args, ctx) {
        out.stdout = listing.into();
        return out;
    }
    let mut sm = SourceMap::new();
    if let Err(e) = load_rewrite_rules(&args.rewrite_rules, ctx, &mut sm) {
        out.stderr = e;
        out.code = 1;
        return out;
    }
    if args.eqsat_report {
        ctx.extensions
            .push(Arc::new(ge_rewrites::eqsat::pass::ReportAll));
    }
    let ctx: &Context = ctx;
    let pipeline = match pipeline_arg(&args, ctx, &mut sm) {
        Ok(p) => p,
        Err(e) => {
            out.stderr = e;
            out.code = 1;
            return out;
        }
    };
    if args.dump_pass_pipeline {
        if let Some(p) = &pipeline {
            out.stderr.push_str(&format!(
                "Pass Manager with {} passes:\n{}\n\n",
                count_passes(p),
                p.to_text()
            ));
        }
    }
    run_input(&args, ctx, &mut sm, pipeline.as_ref(), out)
}

/// Read the input, run every chunk of it through the pipeline, and write the
/// output and the reports.
fn run_input(
    args: &OptArgs,
    ctx: &Context,
    sm: &mut SourceMap,
    pipeline: Option<&ge_ir::pass::OpPipeline>,
    mut out: OptOutput,
) -> OptOutput {
    let t_read = Instant::now();
    let (name, text) = match read_input(&args.input) {
        Ok(x) => x,
        Err(e) => {
            out.stderr = format!("error: cannot read '{}': {e}\n", args.input);
            out.code = 1;
            return out;
        }
    };
    // One copy of the input, shared with the source map, instead of two.
    let text: Arc<str> = Arc::from(text);
    let file = sm.add(&name, text.clone());
    let chunks = if args.split_input_file {
        split_input(&text)
    } else {
        vec![ge_ir::split::Chunk {
            text: &text,
            offset: 0,
            first_line: 1,
        }]
    };
    let (popts, pm_opts) = print_and_pass_options(args);
    let inst = Instrumentation::default();
    let mut timing = TimingSteps::default();
    timing.add("Read input", t_read.elapsed());
    let mut outputs: Vec<String> = vec![];
    // One chunk written to a file: kept as IR and streamed into the file at
    // the end, so the printed text of a big module never sits in memory.
    let stream_to_file = args.output != "-" && chunks.len() == 1;
    let mut streamed: Option<ge_ir::Module> = None;
    let mut failed = false;
    for chunk in &chunks {
        let mut diags: Vec<Diagnostic> = vec![];
        let result = process_chunk(
            ctx,
            &name,
            file,
            chunk,
            pipeline,
            &pm_opts,
            &inst,
            &mut diags,
            &mut timing,
        );
        if let Ok(dumps) = inst.dumps.lock().map(|mut d| std::mem::take(&mut *d)) {
            out.stderr.push_str(&dumps);
        }
        let t = Instant::now();
        if let Some(m) = &result {
            if !stream_to_file {
                outputs.push(print_module(m, popts));
            }
            if let Some(path) = &args.emit_om {
                if let Err(e) = emit_om(m, path) {
                    out.stderr.push_str(&format!("error: --emit-om: {e}\n"));
                    failed = true;
                }
            }
        }
        timing.add("Output", t.elapsed());
        if stream_to_file {
            streamed = result;
        } else if let Some(m) = result {
            drop_in_background(m);
        }
        failed |= report_diagnostics(
            sm,
            file,
            chunk,
            &diags,
            args.verify_diagnostics,
            &mut out.stderr,
        );
    }
    // One chunk (the usual case): move the text instead of copying it.
    out.stdout = if outputs.len() == 1 {
        outputs.pop().unwrap_or_default()
    } else {
        outputs.join("// -----\n")
    }
    .into();
    if !failed {
        failed = write_output(
            &args.output,
            streamed.as_ref(),
            popts,
            &mut out,
            &mut timing,
        );
    }
    // After the output is written: streaming it is part of the Output step.
    if args.timing {
        let passes = inst
            .timing
            .lock()
            .map(|t| t.lines(timing.total, 1))
            .unwrap_or_default();
        out.stderr.push_str(&timing.report(passes));
    }
    if let Some(m) = streamed {
        drop_in_background(m);
    }
    out.code = failed as i32;
    out
}

/// The print options and pass-manager options of the command line.
fn print_and_pass_options(args: &OptArgs) -> (PrintOptions, PassManagerOptions) {
    let popts = PrintOptions {
        generic: args.print_op_generic,
        debuginfo: args.print_debuginfo,
        hex_elements_over: args.print_elements_hex_over,
    };
    let pm_opts = PassManagerOptions {
        verify_each: args.verify_each,
        print_ir_after_all: args.print_ir_after_all,
        print_ir_after_change: args.print_ir_after_change,
        timing: args.timing,
        threading: !args.disable_threading,
        print: popts,
    };
    (popts, pm_opts)
}

/// The text of `--list-ops`, `--list-passes` or `--list-rule-helpers`, when one is asked for.
fn listing(args: &OptArgs, ctx: &Context) -> Option<String> {
    if args.list_ops {
        return Some(list_ops(ctx));
    }
    if args.list_passes {
        return Some(list_passes(ctx));
    }
    if args.list_rule_helpers {
        let mut s = String::new();
        for h in ge_rewrites::rr::helpers::HELPERS {
            s.push_str(&format!("{:<48} {}\n", h.signature, h.doc));
        }
        return Some(s);
    }
    None
}

/// Parse the `--rewrite-rules` files into the context's user rules; the error is
/// the text for stderr.
fn load_rewrite_rules(
    paths: &[String],
    ctx: &mut Context,
    sm: &mut SourceMap,
) -> Result<(), String> {
    if paths.is_empty() {
        return Ok(());
    }
    let mut rules = vec![];
    for path in paths {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("error: cannot read rule file '{path}': {e}\n"))?;
        let f = sm.add(path, Arc::from(text.as_str()));
        let rs = ge_rewrites::rr::parse_rules(ctx, path, f, &text).map_err(|d| sm.render(&d))?;
        rules.extend(rs);
    }
    ctx.extensions
        .push(Arc::new(ge_rewrites::library::UserRules(rules)));
    Ok(())
}

/// The `--pass-pipeline`, parsed. The pipeline text is a source of its own so
/// errors point into it; the error is the text for stderr.
fn pipeline_arg(
    args: &OptArgs,
    ctx: &Context,
    sm: &mut SourceMap,
) -> Result<Option<ge_ir::pass::OpPipeline>, String> {
    let Some(text) = &args.pass_pipeline else {
        return Ok(None);
    };
    parse_pipeline(&ctx.passes, text).map(Some).map_err(|e| {
        let f = sm.add("<pass-pipeline>", Arc::from(text.as_str()));
        sm.render(&Diagnostic::error(
            e.message,
            Pos::Span {
                file: f,
                range: e.range,
            },
        ))
    })
}

/// `--emit-om`: the module lowered and written as an `.om` for the default SoC.
fn emit_om(m: &ge_ir::Module, path: &str) -> Result<(), String> {
    let opts = ge_lowering::om::OmOptions {
        soc: ge_soc::DEFAULT_SOC.to_string(),
        ..Default::default()
    };
    ge_lowering::om::write_module(m, std::path::Path::new(path), &opts).map(drop)
}

/// Render a chunk's diagnostics into `stderr` — or, with `--verify-diagnostics`,
/// check them against the chunk's `expected-*` comments and render the
/// mismatches. True when the chunk failed.
fn report_diagnostics(
    sm: &SourceMap,
    file: usize,
    chunk: &ge_ir::split::Chunk,
    diags: &[Diagnostic],
    verify: bool,
    stderr: &mut String,
) -> bool {
    let mut failed = false;
    if verify {
        match diag_verify::parse_expected(chunk.text, chunk.offset, chunk.first_line) {
            Ok(exp) => {
                for p in diag_verify::check(sm, file, diags, exp) {
                    stderr.push_str(&sm.render(&p));
                    failed = true;
                }
            }
            Err((range, msg)) => {
                stderr.push_str(&sm.render(&Diagnostic::error(msg, Pos::Span { file, range })));
                failed = true;
            }
        }
    } else {
        for d in diags {
            stderr.push_str(&sm.render(d));
            if d.is_error() {
                failed = true;
            }
        }
    }
    failed
}

/// Write the result to `-o` (not stdout): the streamed module, or the printed
/// text in `out.stdout` (which is then cleared). True when writing failed.
fn write_output(
    output: &str,
    streamed: Option<&ge_ir::Module>,
    popts: PrintOptions,
    out: &mut OptOutput,
    timing: &mut TimingSteps,
) -> bool {
    if let Some(m) = streamed {
        let t = Instant::now();
        let r = ge_ir::output::write_with(output, |w| ge_ir::printer::write_module(m, popts, w));
        timing.add("Output", t.elapsed());
        if let Err(e) = r {
            out.stderr
                .push_str(&format!("error: cannot write '{output}': {e}\n"));
            return true;
        }
    } else if output != "-" {
        if let Err(e) = ge_ir::output::write(output, out.stdout.as_bytes()) {
            out.stderr
                .push_str(&format!("error: cannot write '{output}': {e}\n"));
            return true;
        }
        out.stdout.clear();
    }
    false
}

/// Free a module on another thread: a big one is millions of allocations, and
/// the process can exit (which ends that thread) without waiting for them.
fn drop_in_background(m: ge_ir::Module) {
    std::thread::spawn(move || drop(m));
}

#[derive(Default)]
struct TimingSteps {
    steps: Vec<(&'static str, Duration)>,
    total: Duration,
}

impl TimingSteps {
    fn add(&mut self, name: &'static str, d: Duration) {
        self.total += d;
        match self.steps.iter_mut().find(|s| s.0 == name) {
            Some(s) => s.1 += d,
            None => self.steps.push((name, d)),
        }
    }
    /// MLIR-style report (`--mlir-timing`): driver steps, passes nested under the pipeline.
    fn report(&self, pass_lines: Vec<String>) -> String {
        let tot = self.total.as_secs_f64().max(1e-12);
        let mut out = String::new();
        out.push_str(
            "===-------------------------------------------------------------------------===\n",
        );
        out.push_str("                         ... Execution time report ...\n");
        out.push_str(
            "===-------------------------------------------------------------------------===\n",
        );
        out.push_str(&format!(
            "  Total Execution Time: {:.4} seconds\n\n",
            self.total.as_secs_f64()
        ));
        out.push_str("  ----Wall Time----  ----Name----\n");
        for (n, d) in &self.steps {
            out.push_str(&format!(
                "  {:>8.4} ({:>5.1}%)  {n}\n",
                d.as_secs_f64(),
                100.0 * d.as_secs_f64() / tot
            ));
            if *n == "Pass pipeline" {
                for l in &pass_lines {
                    out.push_str(l);
                    out.push('\n');
                }
            }
        }
        out.push_str(&format!(
            "  {:>8.4} (100.0%)  Total\n",
            self.total.as_secs_f64()
        ));
        out
    }
}

#[allow(clippy::too_many_arguments)]
fn process_chunk(
    ctx: &Context,
    name: &str,
    file: usize,
    chunk: &ge_ir::split::Chunk,
    pipeline: Option<&ge_ir::pass::OpPipeline>,
    pm_opts: &PassManagerOptions,
    inst: &Instrumentation,
    diags: &mut Vec<Diagnostic>,
    timing: &mut TimingSteps,
) -> Option<ge_ir::Module> {
    let t = Instant::now();
    let parsed = ge_ir::parser::parse_module(
        ctx,
        name,
        chunk.text,
        ge_ir::parser::ParseOptions {
            file_id: file,
            base: chunk.offset,
            first_line: chunk.first_line,
        },
    );
    timing.add("Parser", t.elapsed());
    let mut m = match parsed {
        Ok(m) => m,
        Err(d) => {
            diags.push(*d);
            return None;
        }
    };
    let t = Instant::now();
    let v = ge_ir::verifier::verify_module(&m);
    timing.add("Verifier", t.elapsed());
    if v.iter().any(|d| d.is_error()) {
        diags.extend(v);
        return None;
    }
    if let Some(p) = pipeline {
        let t = Instant::now();
        let cx = PassContext {
            ctx,
            output: Default::default(),
        };
        let r = run_pipeline(p, &mut m, &cx, pm_opts, inst);
        timing.add("Pass pipeline", t.elapsed());
        if let Ok(mut o) = cx.output.lock() {
            diags.append(&mut o.diagnostics);
            // Pass reports (e.g. eqsat) go to stderr with the IR dumps.
            if let Ok(mut d) = inst.dumps.lock() {
                d.push_str(&o.report);
            }
        }
        if let Err(e) = r {
            diags.extend(e);
            return None;
        }
    }
    Some(m)
}

fn count_passes(p: &ge_ir::pass::OpPipeline) -> usize {
    p.elems
        .iter()
        .map(|e| match e {
            ge_ir::pass::PipelineElem::Pass { .. } => 1,
            ge_ir::pass::PipelineElem::Nested(n) => count_passes(n),
        })
        .sum()
}

fn read_input(path: &str) -> std::io::Result<(String, String)> {
    let mut bytes = vec![];
    if path == "-" {
        std::io::stdin().read_to_end(&mut bytes)?;
    } else {
        bytes = std::fs::read(path)?;
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("input is not UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        )
    })?;
    Ok((
        if path == "-" {
            "<stdin>".to_string()
        } else {
            path.to_string()
        },
        text,
    ))
}

/// Every registered op by dialect: name, summary and the op interfaces it
/// implements.
pub fn list_ops(ctx: &Context) -> String {
    let mut s = String::from("Registered operations:\n");
    for d in ctx.dialects() {
        s.push_str(&format!("\n{} — {}\n", d.name, d.summary));
        let mut ops: Vec<_> = d.ops().collect();
        ops.sort_by_key(|o| o.name);
        for op in ops {
            // The op interfaces it implements (declared or registered at run time).
            let ifaces = ctx.interface_names(op);
            let ifaces = if ifaces.is_empty() {
                String::new()
            } else {
                format!("  [{}]", ifaces.join(" "))
            };
            s.push_str(&format!("  {:<32} {}{ifaces}\n", op.name, op.summary));
        }
    }
    s
}

pub fn list_passes(ctx: &Context) -> String {
    let mut s = String::from("Available passes:\n");
    for e in ctx.passes.passes() {
        let i = e.info;
        s.push_str(&format!("  {:<24} {}\n", i.name, i.summary));
        if let Some(a) = i.anchor {
            s.push_str(&format!("    (runs on '{a}')\n"));
        }
        for o in i.options {
            s.push_str(&format!(
                "    {}={:<12} {} (default: {})\n",
                o.name,
                o.kind.name(),
                o.doc,
                if o.default.is_empty() {
                    "\"\""
                } else {
                    o.default
                }
            ));
        }
    }
    let pipes: Vec<_> = ctx.passes.pipelines().collect();
    if !pipes.is_empty() {
        s.push_str("\nAvailable pipelines:\n");
        for (n, summary, text) in pipes {
            s.push_str(&format!("  {n:<24} {summary}\n    = {text}\n"));
        }
    }
    s
}

/// Process entry point for the `ge-opt` binary.
pub fn main() -> i32 {
    let args = OptArgs::parse();
    if let Err(e) = args.limits.apply(&args.input) {
        eprintln!("error: {e}");
        return 1;
    }
    if args.watch {
        // Streams each compile's output as it happens.
        return crate::incremental::cli::watch_main(&args);
    }
    let mut ctx = ge_compile::context();
    let out = main_with(args, &mut ctx);
    let _ = std::io::stdout().write_all(out.stdout.as_bytes());
    let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    out.code
}
