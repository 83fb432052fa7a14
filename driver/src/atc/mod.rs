//! `ge-atc`: an ATC-compatible one-shot converter. It takes ATC's flags with
//! their names and meanings (`--model`, `--framework`, `--output`,
//! `--soc_version`, `--input_shape`, `--precision_mode`, …), imports the
//! model, compiles it with the `atc` pipeline in timed stages and writes
//! `<output>.om`, printing a summary of what it did. `--mode=1` turns an
//! `.om` back into JSON (or `.air`); `--mode=3` only checks the model.
//!
//! Compiled models are kept in the compile cache (ATC's
//! `--op_compiler_cache_mode`/`--op_compiler_cache_dir`), keyed by the model,
//! the flags and the tool version.

mod bounds;
pub mod dump;
pub mod shapes;
pub mod stages;
pub mod switches;

use crate::incremental::cache::{self, CompileCache, KeyBuilder, Lookup};
use clap::builder::PossibleValuesParser;
use clap::Parser as ClapParser;
use ge_dialects::graph::func::Func;
use ge_ir::attributes::{AttrDict, Attribute};
use ge_ir::diagnostics::SourceMap;
use ge_ir::{Context, Ident, Module};
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(ClapParser, Debug, Clone)]
#[command(
    name = "ge-atc",
    version,
    about = "Convert an ONNX or TensorFlow model into an .om offline model (ATC-compatible flags)",
    rename_all = "snake_case"
)]
pub struct AtcArgs {
    /// The model file: .onnx, a frozen TensorFlow .pb, a TensorFlow SavedModel directory, or .air
    #[arg(long, value_name = "FILE")]
    pub model: Option<String>,
    /// 3 = TensorFlow, 5 = ONNX (optional for .air models)
    #[arg(long, value_name = "N", value_parser = PossibleValuesParser::new(["0", "1", "3", "5"]))]
    pub framework: Option<String>,
    /// Output path without extension: writes OUTPUT.om ('-' for stdout)
    #[arg(long, value_name = "PATH")]
    pub output: Option<String>,
    /// Target SoC: a shipped profile (Ascend910B, Ascend310P) or a .json profile
    #[arg(long, value_name = "SOC", default_value = "Ascend910B")]
    pub soc_version: String,
    /// Input shapes, e.g. "x:1,3,224,224;y:-1,10" (a dim may be LOW~HIGH)
    #[arg(long, value_name = "NAME:DIMS[;...]")]
    pub input_shape: Option<String>,
    /// Ranges of dynamic dims, e.g. "x:[1~8,3,224,224]"
    #[arg(long, value_name = "NAME:[DIMS][;...]")]
    pub input_shape_range: Option<String>,
    /// Batch sizes (gears) for the -1 dims of --input_shape, e.g. "1,2,4,8"
    #[arg(long, value_name = "N,N,...")]
    pub dynamic_batch_size: Option<String>,
    /// Image sizes (gears) for each input's two -1 dims of --input_shape, e.g. "224,224;448,448"
    #[arg(long, value_name = "H,W;H,W...")]
    pub dynamic_image_size: Option<String>,
    /// Values (gears) of all -1 dims of --input_shape, one gear per ';', e.g. "1,16;4,64"
    #[arg(long, value_name = "D,D;D,D...")]
    pub dynamic_dims: Option<String>,
    /// Layout of the model inputs
    #[arg(long, value_name = "FORMAT", value_parser = PossibleValuesParser::new(["NCHW", "NHWC", "ND", "NCDHW", "NDHWC"]))]
    pub input_format: Option<String>,
    /// Model outputs as node:index, e.g. "conv1:0;fc:0" (default: the model's outputs)
    #[arg(long, value_name = "NODE:INDEX[;...]")]
    pub out_nodes: Option<String>,
    /// TensorFlow SavedModel (a directory given as --model): the signature to import
    #[arg(long, value_name = "KEY", default_value = "serving_default")]
    pub signature: String,
    /// Compute precision (ATC's default is force_fp16; ge keeps the model's types)
    #[arg(long, value_name = "MODE", default_value = "must_keep_origin_dtype",
          value_parser = PossibleValuesParser::new(["force_fp16", "allow_mix_precision", "must_keep_origin_dtype", "allow_fp32_to_fp16"]))]
    pub precision_mode: String,
    /// JSON (or name:off lines) turning graph fusions (rules) and UB fusion (fuse-kernels) off
    #[arg(long, value_name = "FILE")]
    pub fusion_switch_file: Option<String>,
    /// Passes or rules on/off, e.g. "cse:off;conv_relu_epilogue:off"
    #[arg(long, value_name = "NAME:on|off[;...]")]
    pub optimization_switch: Option<String>,
    /// 1: give every buffer its own memory (no reuse)
    #[arg(long, value_name = "0|1", default_value = "0", value_parser = PossibleValuesParser::new(["0", "1"]))]
    pub disable_reuse_memory: String,
    /// true: run every task on one stream
    #[arg(long, value_name = "true|false", default_value = "false", value_parser = PossibleValuesParser::new(["true", "false"]))]
    pub enable_single_stream: String,
    /// 0: generate an .om; 1: convert an .om to JSON (or .air); 3: only check the model
    #[arg(long, value_name = "N", default_value = "0", value_parser = PossibleValuesParser::new(["0", "1", "3"]))]
    pub mode: String,
    /// --mode=1: the .om to convert
    #[arg(long, value_name = "FILE")]
    pub om: Option<String>,
    /// --mode=1: where to write it (.json, or .air for the IR; '-' for stdout as JSON)
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Log level of progress messages on stderr
    #[arg(long, value_name = "LEVEL", default_value = "null", value_parser = PossibleValuesParser::new(["debug", "info", "warning", "error", "null"]))]
    pub log: String,
    /// Compile cache: enable (use and fill), disable, or force (recompile and refresh)
    #[arg(long, value_name = "MODE", default_value = "enable", value_parser = PossibleValuesParser::new(["enable", "disable", "force"]))]
    pub op_compiler_cache_mode: String,
    /// Compile cache directory (default: $GE_CACHE_DIR, else the user's cache dir)
    #[arg(long, value_name = "DIR")]
    pub op_compiler_cache_dir: Option<String>,
    #[command(flatten)]
    pub limits: crate::limits::LimitArgs,
}

pub struct AtcOutput {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

const SUCCESS: &str = "ATC run success, welcome to the next use.\n";

/// Progress messages at or above the `--log` level.
struct Log {
    level: u8,
    text: String,
}

impl Log {
    fn new(level: &str) -> Log {
        let level = match level {
            "debug" => 0,
            "info" => 1,
            "warning" => 2,
            "error" => 3,
            _ => 4,
        };
        Log {
            level,
            text: String::new(),
        }
    }
    fn at(&mut self, level: u8, tag: &str, msg: &str) {
        if level >= self.level {
            let _ = writeln!(self.text, "[{tag}] {msg}");
        }
    }
    fn debug(&mut self, msg: &str) {
        self.at(0, "DEBUG", msg)
    }
    fn info(&mut self, msg: &str) {
        self.at(1, "INFO", msg)
    }
    fn warn(&mut self, msg: &str) {
        self.at(2, "WARNING", msg)
    }
}

/// A successful run: what was converted to what (`how`: size or cache hit),
/// the summary, and ATC's closing line.
fn succeeded(log: Log, p: &Plan, out: &Path, soc: &str, how: &str, sum: &str) -> AtcOutput {
    AtcOutput {
        stdout: format!(
            "ge-atc: {} ({}) -> {} for {soc} {how}\n{sum}{SUCCESS}",
            p.model,
            p.framework.name(),
            out.display()
        ),
        stderr: log.text,
        code: 0,
    }
}

/// A failed run: the error text, after the log so far.
fn failed(log: &Log, err: &str) -> AtcOutput {
    let mut stderr = log.text.clone();
    stderr.push_str(err);
    if !err.ends_with('\n') {
        stderr.push('\n');
    }
    stderr.push_str("ATC run failed\n");
    AtcOutput {
        stdout: String::new(),
        stderr,
        code: 1,
    }
}

fn error(msg: impl std::fmt::Display) -> String {
    format!("error: {msg}")
}

/// What the model is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Framework {
    Tf,
    Onnx,
    Air,
}

impl Framework {
    fn name(self) -> &'static str {
        match self {
            Framework::Tf => "TensorFlow",
            Framework::Onnx => "ONNX",
            Framework::Air => "AIR",
        }
    }
}

fn framework(args: &AtcArgs, model: &str) -> Result<Framework, String> {
    match args.framework.as_deref() {
        Some("3") => Ok(Framework::Tf),
        Some("5") => Ok(Framework::Onnx),
        Some("0") => Err(error(
            "--framework=0 (Caffe) is not supported: ge imports TensorFlow (3) and ONNX (5)",
        )),
        Some("1") => Err(error(
            "--framework=1 (MindSpore) is not supported: ge imports TensorFlow (3) and ONNX (5)",
        )),
        Some(f) => Err(error(format!("--framework={f} is not a framework"))),
        None if model.ends_with(".air") => Ok(Framework::Air),
        None => Err(error(
            "--framework is required (3 = TensorFlow, 5 = ONNX) unless --model is an .air file",
        )),
    }
}

/// How ge-atc replaces an `.om`: renamed into place without an `fsync` first.
/// Other processes see the old file or the new one either way; the flush would
/// only guard against a system crash, and a file that crash tore fails the
/// `.om`'s checksums when it is read — while it cost the disk's write time of
/// every weight (most of write-om's wall time on VGG-19).
const OM_SYNC: ge_ir::output::Durability = ge_ir::output::Durability::Unsynced;

/// Write the `.om` image `bytes` to `path` (through `ge_ir::output`), creating
/// missing parent folders.
fn write_output(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| error(format!("cannot create '{}': {e}", dir.display())))?;
    }
    ge_ir::output::write_with_sync(path, OM_SYNC, |w| w.write_all(bytes))
        .map_err(|e| error(format!("cannot write '{}': {e}", path.display())))
}

/// The `.om` path for `--output` (ATC appends `.om`; `-` is stdout).
fn om_path(output: &str) -> PathBuf {
    if output.ends_with(".om") || output == "-" {
        PathBuf::from(output)
    } else {
        PathBuf::from(format!("{output}.om"))
    }
}

/// Everything parsed from the flags before any work.
struct Plan {
    framework: Framework,
    model: String,
    shapes: shapes::InputShapes,
    out_nodes: Option<Vec<(String, usize)>>,
    signature: String,
    settings: stages::Settings,
}

fn plan(args: &AtcArgs, ctx: &Context) -> Result<Plan, String> {
    let model = args
        .model
        .clone()
        .ok_or_else(|| error("--model is required"))?;
    let framework = framework(args, &model)?;
    if args.mode == "0" && args.output.is_none() {
        return Err(error("--output is required (ge-atc writes OUTPUT.om)"));
    }
    if args.om.is_some() || args.json.is_some() {
        return Err(error("--om and --json are for --mode=1"));
    }
    ge_soc::Soc::load(&args.soc_version).map_err(|e| error(format!("--soc_version: {e}")))?;
    let (shapes, out_nodes) = shapes_and_out_nodes(args).map_err(error)?;
    if framework == Framework::Air && (!shapes.dims.is_empty() || out_nodes.is_some()) {
        return Err(error(
            "--input_shape, --input_shape_range and --out_nodes apply to ONNX and TensorFlow models; edit the .air instead",
        ));
    }
    if let Some(f) = &args.input_format {
        let ok = match framework {
            Framework::Onnx => matches!(f.as_str(), "NCHW" | "ND" | "NCDHW"),
            Framework::Tf => true,
            Framework::Air => true,
        };
        if !ok {
            return Err(error(format!(
                "--input_format={f} does not fit an ONNX model (ONNX inputs are NCHW, NCDHW or ND)"
            )));
        }
    }
    let mut switches = switches::Switches::default();
    if let Some(f) = &args.fusion_switch_file {
        let text = std::fs::read_to_string(f)
            .map_err(|e| error(format!("--fusion_switch_file: cannot read '{f}': {e}")))?;
        switches
            .apply_fusion_switch_file(ctx, &text, f)
            .map_err(error)?;
    }
    if let Some(o) = &args.optimization_switch {
        switches.apply_optimization_switch(ctx, o).map_err(error)?;
    }
    Ok(Plan {
        framework,
        model,
        shapes,
        out_nodes,
        signature: args.signature.clone(),
        settings: stages::Settings {
            soc: args.soc_version.clone(),
            precision: args.precision_mode.clone(),
            switches,
            single_stream: args.enable_single_stream == "true",
            disable_reuse: args.disable_reuse_memory == "1",
        },
    })
}

/// What `--framework=3` imports with: `--input_shape`, `--out_nodes` and
/// `--signature`.
fn tf_options(
    shapes: &shapes::InputShapes,
    out_nodes: Option<&[(String, usize)]>,
    signature: &str,
) -> ge_frontends::tf::TfOptions {
    ge_frontends::tf::TfOptions {
        input_shapes: shapes.dims.clone().into_iter().collect(),
        outputs: out_nodes.map(|o| o.iter().map(|(n, i)| format!("{n}:{i}")).collect()),
        func_name: "main".into(),
        signature: Some(signature.to_string()),
    }
}

/// The TensorFlow import options of parsed ge-atc flags, as `--framework=3`
/// uses them (`--input_shape` with its dynamic gears, `--out_nodes`,
/// `--signature`; the C API's `ge_import_tf`). The error is one line.
pub fn tf_import_options(args: &AtcArgs) -> Result<ge_frontends::tf::TfOptions, String> {
    let (shapes, out_nodes) = shapes_and_out_nodes(args)?;
    Ok(tf_options(&shapes, out_nodes.as_deref(), &args.signature))
}

/// `--input_shape` (with `--input_shape_range` and the dynamic gears) and
/// `--out_nodes`, parsed.
type OutNodes = Option<Vec<(String, usize)>>;
fn shapes_and_out_nodes(args: &AtcArgs) -> Result<(shapes::InputShapes, OutNodes), String> {
    let shapes = shapes::parse_with_gears(
        args.input_shape.as_deref(),
        args.input_shape_range.as_deref(),
        shapes::Gears {
            batch: args.dynamic_batch_size.as_deref(),
            image: args.dynamic_image_size.as_deref(),
            dims: args.dynamic_dims.as_deref(),
        },
    )?;
    let out_nodes = args
        .out_nodes
        .as_deref()
        .map(shapes::parse_out_nodes)
        .transpose()?;
    Ok((shapes, out_nodes))
}

/// Import the model (diagnostics rendered against `sm` for `.air`).
fn import(ctx: &Context, p: &Plan, sm: &mut SourceMap) -> Result<Module, String> {
    let path = Path::new(&p.model);
    match p.framework {
        Framework::Onnx => {
            let opts = ge_frontends::onnx::ImportOptions {
                input_shapes: p.shapes.dims.clone().into_iter().collect(),
                outputs: p.out_nodes.clone(),
                ..Default::default()
            };
            ge_frontends::onnx::import_file(ctx, path, &opts).map_err(|e| error(e.message))
        }
        Framework::Tf => {
            let opts = tf_options(&p.shapes, p.out_nodes.as_deref(), &p.signature);
            ge_frontends::tf::import_file(ctx, path, &opts).map_err(|e| error(e.message))
        }
        Framework::Air => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| error(format!("cannot read '{}': {e}", p.model)))?;
            let file = sm.add(&p.model, Arc::from(text.as_str()));
            ge_ir::parser::parse_module(
                ctx,
                &p.model,
                &text,
                ge_ir::parser::ParseOptions::file(file),
            )
            .map_err(|d| sm.render(&d))
        }
    }
}

/// Record the symbol bounds of ranged dims and the input format.
fn annotate(m: &mut Module, p: &Plan, input_format: Option<&str>) {
    if !p.shapes.bounds.is_empty() {
        let mut dict = m
            .outer
            .op(m.op)
            .attr("ge.symbol_bounds")
            .and_then(|a| a.as_dict())
            .unwrap_or_else(AttrDict::empty);
        for (k, v) in &p.shapes.bounds {
            dict = dict.with(Ident::new(k), Attribute::i64(*v));
        }
        let op = m.op;
        m.outer
            .set_attr(op, "ge.symbol_bounds", Attribute::dict(dict));
    }
    if let Some(f) = input_format {
        let body = m.body_mut();
        let funcs: Vec<_> = body
            .all_ops(ge_ir::body::WalkOrder::Pre)
            .into_iter()
            .filter(|&o| Func::is(body.op(o)))
            .collect();
        for o in funcs {
            body.set_attr(o, "ge.input_format", Attribute::string(f));
        }
    }
}

/// The cache key of a compile, or why it cannot be cached.
fn cache_key(args: &AtcArgs, p: &Plan, model_bytes: &[u8]) -> Result<cache::CacheKey, String> {
    if p.framework == Framework::Tf && Path::new(&p.model).is_dir() {
        return Err("the model is a SavedModel directory".into());
    }
    if p.framework == Framework::Onnx {
        if let Ok(mp) = ge_frontends::onnx::decode_model(model_bytes, &p.model) {
            let external = mp
                .graph
                .iter()
                .flat_map(|g| &g.initializer)
                .any(|t| t.data_location == Some(1) || !t.external_data.is_empty());
            if external {
                return Err("the model keeps weights in external data files".into());
            }
        }
    }
    let soc = ge_soc::Soc::load(&args.soc_version)?;
    let mut k = KeyBuilder::new(&format!("ge-atc {}", cache::tool_version()));
    k.field("model", model_bytes)
        .field("framework", p.framework.name().as_bytes())
        .field("soc", format!("{soc:?}").as_bytes())
        .field("settings", format!("{:?}", p.settings).as_bytes())
        .field("shapes", format!("{:?}", p.shapes).as_bytes())
        .field("out_nodes", format!("{:?}", p.out_nodes).as_bytes())
        .field("signature", p.signature.as_bytes())
        .field(
            "input_format",
            args.input_format.as_deref().unwrap_or("").as_bytes(),
        );
    Ok(k.finish())
}

/// Cache payload: summary text, then the `.om` bytes.
fn encode_entry(summary: &str, om: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + summary.len() + om.len());
    v.extend_from_slice(&(summary.len() as u64).to_le_bytes());
    v.extend_from_slice(summary.as_bytes());
    v.extend_from_slice(om);
    v
}

fn decode_entry(p: &[u8]) -> Option<(String, &[u8])> {
    let n = u64::from_le_bytes(p.get(..8)?.try_into().ok()?) as usize;
    let s = std::str::from_utf8(p.get(8..8 + n)?).ok()?;
    Some((s.to_string(), p.get(8 + n..)?))
}

fn human_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b} B")
    }
}

fn ms(d: Duration) -> String {
    format!("{:>9.1} ms", d.as_secs_f64() * 1e3)
}

/// `name: type` of the entry function's inputs, with the input format.
fn inputs_line(m: &Module, format: Option<&str>) -> String {
    let parts: Vec<String> = bounds::entry_inputs(m)
        .into_iter()
        .map(|(n, t)| format!("{n}: {t}"))
        .collect();
    let fmt = format.map(|f| format!(" ({f})")).unwrap_or_default();
    format!("  inputs       {}{fmt}\n", parts.join(", "))
}

/// Which execution mode the model runs in, and why (docs/architecture.md,
/// "Execution modes"). `compiled`: the module `om` was lowered from.
fn mode_line(om: &ge_om::OmStream, compiled: &Module) -> String {
    // The kernels partition is printed from functions of `compiled`: when no
    // op of it is a `graph.specialize` or a size op, the partition has none
    // either and the mode is the memory's (without parsing the partition,
    // a twelfth of a small model's compile).
    let mut special = false;
    compiled
        .body()
        .walk_deep(ge_ir::WalkOrder::Pre, &mut |b, o| {
            let d = b.op(o);
            special |= ge_dialects::graph::specialize::Specialize::is(d)
                || ge_dialects::data::size::count_result(d.name.as_str()).is_some();
        });
    if !special {
        return memory_mode(om);
    }
    let ctx = ge_dialects::context();
    let kernels = ge_ir::parser::parse_module(
        &ctx,
        "<kernels>",
        &om.kernels,
        ge_ir::parser::ParseOptions::default(),
    );
    let hybrid = kernels
        .as_ref()
        .map(ge_dialects::graph::specialize::hybrid_ops)
        .unwrap_or_default();
    let memory = memory_mode(om);
    let sizes: Vec<String> = kernels
        .as_ref()
        .map(ge_dialects::data::size::size_ops)
        .unwrap_or_default()
        .into_iter()
        .map(|(s, op)| format!("{s} ({op})"))
        .collect();
    let memory = if sizes.is_empty() {
        memory
    } else {
        format!(
            "{memory}; data-dependent sizes {} bound when the op has run (memory planned at the bound)",
            sizes.join(", ")
        )
    };
    if hybrid.is_empty() {
        return if sizes.is_empty() {
            memory
        } else {
            format!("hybrid: memory {memory}")
        };
    }
    let inputs: Vec<ge_ir::Type> = om
        .io
        .inputs
        .iter()
        .filter_map(|t| ge_ir::parser::parse_type_str(&ctx, &t.buffer.ty).ok())
        .collect();
    let values: Vec<String> = kernels
        .as_ref()
        .map(|m| ge_dialects::graph::specialize::value_symbols(m, &inputs))
        .unwrap_or_default()
        .into_iter()
        .map(|(s, op)| format!("{s} ({op})"))
        .collect();
    let values = match (values.is_empty(), kernels.as_ref().is_ok_and(|m| reads_computed_values(m, om))) {
        (true, _) => String::new(),
        (false, false) => format!(
            "; value symbols {} bound at run start from input values",
            values.join(", ")
        ),
        (false, true) => format!(
            "; value symbols {} bound at run start from input values or values computed from them on the host (HostCPU: a prefix of at most {} small ops, each by its reference semantics)",
            values.join(", "),
            ge_dialects::graph::specialize::MAX_PREFIX_OPS
        ),
    };
    format!(
        "hybrid: {} read at run time (each specialised on the host: concrete op built, verified and run on its native kernel, cached per value){values}; memory {memory}",
        hybrid.join("; ")
    )
}

/// Whether some `graph.specialize` of `om` reads a value that is neither a
/// model input nor a weight: the runtime computes it on the host at run
/// start (`runtime/src/value_syms.rs`).
fn reads_computed_values(kernels: &Module, om: &ge_om::OmStream) -> bool {
    use ge_dialects::graph::specialize::{Spec, Specialize};
    use ge_om::model::{Operand, Task};
    let is_input = |b: &ge_om::model::Buffer| {
        om.io
            .inputs
            .iter()
            .any(|t| t.buffer.arena == b.arena && t.buffer.offset == b.offset)
    };
    om.program.tasks.iter().any(|t| {
        let Task::Launch { kernel, ins, .. } = t else {
            return false;
        };
        let Some(body) = om
            .program
            .kernels
            .get(*kernel as usize)
            .and_then(|k| kernels.lookup_symbol(&k.name))
            .and_then(|f| kernels.body().op(f).inner.as_deref())
        else {
            return false;
        };
        body.all_ops(ge_ir::WalkOrder::Pre).into_iter().any(|o| {
            let d = body.op(o);
            let Some(spec) = Specialize::is(d).then(|| Spec::of(body, o).ok()).flatten() else {
                return false;
            };
            d.operands()[spec.num_data..]
                .iter()
                .any(|&v| match body.value(v).def {
                    ge_ir::body::ValueDef::BlockArg { index, .. } => {
                        matches!(ins.get(index as usize), Some(Operand::Buffer(b)) if !is_input(b))
                    }
                    ge_ir::body::ValueDef::Result { .. } => true,
                })
        })
    })
}

/// Static or dynamic: how the memory of `om` is planned.
fn memory_mode(om: &ge_om::OmStream) -> String {
    match (&om.def.replan, om.def.symbol_bounds.is_empty()) {
        (Some(r), _) => format!(
            "dynamic: {} without an upper bound; memory is planned per concrete shape when it is first seen (plans cached)",
            r.unbounded.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
        (None, false) => "dynamic: every symbolic dim is bounded; one memory plan up to the bounds, shapes bound from the inputs at run time".to_string(),
        (None, true) => "static: every shape is known at compile time; one memory plan".to_string(),
    }
}

/// The summary of a compiled model.
fn summary(
    om: &ge_om::OmStream,
    compiled: &Module,
    inputs: &str,
    ops_before: usize,
    ops_after: usize,
    times: &[(&str, Duration)],
) -> String {
    use ge_om::model::{ArenaRole, Task};
    let mut s = inputs.to_string();
    s.push_str(&dump::io_line("outputs", &om.io.outputs));
    let (mut launches, mut copies) = (0, 0);
    for t in &om.program.tasks {
        match t {
            Task::Launch { .. } => launches += 1,
            Task::Memcpy { .. } => copies += 1,
            _ => {}
        }
    }
    let workspace: u64 = om
        .def
        .arenas
        .iter()
        .filter(|a| a.role == ArenaRole::Workspace)
        .map(|a| a.size)
        .sum();
    let no_reuse = om
        .def
        .memory_plan
        .get("no_reuse")
        .and_then(|v| v.as_u64())
        .unwrap_or(workspace);
    let _ = writeln!(
        s,
        "  ops          {ops_before} imported, {ops_after} after graph optimisation"
    );
    let _ = writeln!(
        s,
        "  kernels      {} ({launches} launches, {copies} copies)",
        om.program.kernels.len()
    );
    let _ = writeln!(s, "  engines      {}", om.def.engines.join(", "));
    let _ = writeln!(
        s,
        "  streams      {} ({} events)",
        om.def.num_streams, om.def.num_events
    );
    let pct = if no_reuse > 0 {
        format!(", {:.1}% of it", 100.0 * workspace as f64 / no_reuse as f64)
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "  memory       workspace {} (no reuse: {}{pct}); weights {}",
        human_bytes(workspace),
        human_bytes(no_reuse),
        human_bytes(om.def.weights_size)
    );
    let unbounded: Vec<&String> = om
        .def
        .replan
        .as_ref()
        .map(|r| r.unbounded.keys().collect())
        .unwrap_or_default();
    if !om.def.symbol_bounds.is_empty() {
        let b: Vec<String> = om
            .def
            .symbol_bounds
            .iter()
            .map(|(k, v)| {
                if unbounded.contains(&k) {
                    format!("{k} (no bound)")
                } else {
                    format!("{k} <= {v}")
                }
            })
            .collect();
        let _ = writeln!(s, "  dynamic      {}", b.join(", "));
    }
    let _ = writeln!(s, "  mode         {}", mode_line(om, compiled));
    let _ = writeln!(s, "  compile time");
    let mut total = Duration::ZERO;
    for (name, d) in times {
        let _ = writeln!(s, "    {name:<20}{}", ms(*d));
        total += *d;
    }
    let _ = writeln!(s, "    {:<20}{}", "total", ms(total));
    s
}

/// Run ge-atc.
pub fn main_with(args: AtcArgs, ctx: &Context) -> AtcOutput {
    let mut log = Log::new(&args.log);
    if args.mode == "1" {
        return match dump::om_to_file(ctx, &args) {
            Ok((msg, summary)) => {
                log.info(&msg);
                AtcOutput {
                    stdout: summary + SUCCESS,
                    stderr: log.text,
                    code: 0,
                }
            }
            Err(e) => failed(&log, &e),
        };
    }
    let p = match plan(&args, ctx) {
        Ok(p) => p,
        Err(e) => return failed(&log, &e),
    };
    let t0 = Instant::now();
    // A TensorFlow SavedModel is a directory: the importer reads its files
    // (and the compile cache, keyed by the model's bytes, is not used).
    let saved_model = p.framework == Framework::Tf && Path::new(&p.model).is_dir();
    let model_bytes = match saved_model {
        true => Vec::new(),
        false => match std::fs::read(&p.model) {
            Ok(b) => b,
            Err(e) => return failed(&log, &error(format!("cannot read '{}': {e}", p.model))),
        },
    };
    let out_path = args.output.as_deref().map(om_path);
    let cache = open_cache(&args, &p, &model_bytes, &mut log);
    if let (Some((c, k)), Some(out), "enable") =
        (&cache, &out_path, args.op_compiler_cache_mode.as_str())
    {
        match cached_om(c, k, out, &mut log) {
            Ok(Some(sum)) => {
                let how = format!(
                    "[compile cache hit {}, {:.1} ms]",
                    k.short(),
                    t0.elapsed().as_secs_f64() * 1e3
                );
                return succeeded(log, &p, out, &args.soc_version, &how, &sum);
            }
            Ok(None) => {}
            Err(e) => return failed(&log, &e),
        }
    }

    // Import.
    let mut sm = SourceMap::new();
    let t = Instant::now();
    let mut m = match import_checked(ctx, &p, &args, &mut sm, &mut log) {
        Ok(m) => m,
        Err(e) => return failed(&log, &e),
    };
    let mut times: Vec<(&str, Duration)> = vec![("import", t.elapsed())];
    let ops_before = stages::count_ops(&m);
    let inputs = inputs_line(&m, args.input_format.as_deref());
    log.debug(&format!("{ops_before} ops imported"));
    if args.mode == "3" {
        let stdout = format!(
            "ge-atc: {} ({}) checked: {ops_before} ops\n{SUCCESS}",
            p.model,
            p.framework.name()
        );
        return AtcOutput {
            stdout,
            stderr: log.text,
            code: 0,
        };
    }

    // Compile.
    let ops_after = match compile_stages(ctx, &p, &mut m, &sm, &mut log, &mut times) {
        Ok(n) => n.unwrap_or(ops_before),
        Err(e) => return failed(&log, &e),
    };
    let Some(out) = out_path else {
        return failed(&log, &error("--output is required"));
    };
    let t = Instant::now();
    let om = match lower_om(&m, &out, &args.soc_version) {
        Ok(x) => x,
        Err(e) => return failed(&log, &e),
    };
    times.push(("lower-om", t.elapsed()));
    let t = Instant::now();
    // The compile cache keeps the file's bytes; without it they are never in
    // memory at once.
    let written = match &cache {
        Some(_) => ge_om::format::stream_to_bytes(&om)
            .map_err(error)
            .and_then(|b| write_output(&out, &b).map(|()| (b.len() as u64, Some(b)))),
        None => write_om(&om, &out).map(|n| (n, None)),
    };
    let (len, bytes) = match written {
        Ok(x) => x,
        Err(e) => return failed(&log, &e),
    };
    times.push(("write-om", t.elapsed()));
    let sum = summary(&om, &m, &inputs, ops_before, ops_after, &times);
    if let (Some((c, k)), Some(bytes)) = (&cache, bytes) {
        match c.put(k, &encode_entry(&sum, &bytes)) {
            Ok(()) => log.info(&format!("compile cache: stored {}", k.short())),
            Err(e) => log.warn(&format!("compile cache: cannot store: {e}")),
        }
    }
    let how = format!("({len} bytes)");
    succeeded(log, &p, &out, &args.soc_version, &how, &sum)
}

/// The compile cache and this compile's key, when `--mode 0` and
/// `--op_compiler_cache_mode` ask for one and it can be used (the log says why not).
fn open_cache(
    args: &AtcArgs,
    p: &Plan,
    model_bytes: &[u8],
    log: &mut Log,
) -> Option<(CompileCache, cache::CacheKey)> {
    if !matches!(
        (args.mode.as_str(), args.op_compiler_cache_mode.as_str()),
        ("0", "enable" | "force")
    ) {
        return None;
    }
    let dir = args
        .op_compiler_cache_dir
        .clone()
        .map(PathBuf::from)
        .or_else(cache::default_dir)?;
    match CompileCache::open(dir) {
        Ok(c) => match cache_key(args, p, model_bytes) {
            Ok(k) => Some((c, k)),
            Err(why) => {
                log.info(&format!("compile cache: not used: {why}"));
                None
            }
        },
        Err(e) => {
            log.warn(&format!("compile cache: cannot open: {e}"));
            None
        }
    }
}

/// A compile cache hit written to `out`: its summary. `None` (logged) when the
/// entry is missing, unreadable or corrupt and the model must be compiled.
fn cached_om(
    c: &CompileCache,
    k: &cache::CacheKey,
    out: &Path,
    log: &mut Log,
) -> Result<Option<String>, String> {
    match c.get(k) {
        Lookup::Hit(payload) => {
            if let Some((sum, om)) = decode_entry(&payload) {
                log.info(&format!("compile cache: hit {}", k.short()));
                write_output(out, om)?;
                return Ok(Some(sum));
            }
            log.warn("compile cache: unreadable entry; compiling");
        }
        Lookup::Miss => log.info(&format!("compile cache: miss {}", k.short())),
        Lookup::Corrupt(why) => {
            log.warn(&format!("compile cache: corrupt entry ({why}); compiling"))
        }
    }
    Ok(None)
}

/// Import the model, annotate it with the command line's shapes and formats,
/// inline its resource weights, and check it: every dim known (imported
/// models), verified, and within the memory budget. The error is rendered.
fn import_checked(
    ctx: &Context,
    p: &Plan,
    args: &AtcArgs,
    sm: &mut SourceMap,
    log: &mut Log,
) -> Result<Module, String> {
    log.info(&format!("importing {} ({})", p.model, p.framework.name()));
    let mut m = import(ctx, p, sm)?;
    annotate(&mut m, p, args.input_format.as_deref());
    if p.framework != Framework::Air {
        if let Some(msg) = bounds::unknown_dims(&m) {
            return Err(error(msg));
        }
    }
    // Weights held in dialect resources become foldable literals.
    let inlined = m.inline_resources();
    if inlined > 0 {
        log.debug(&format!("{inlined} resource weights inlined for folding"));
    }
    let diags = ge_ir::verifier::verify_module(&m);
    if diags.iter().any(|d| d.is_error()) {
        return Err(diags
            .iter()
            .filter(|d| d.is_error())
            .map(|d| sm.render(d))
            .collect());
    }
    // Sizes come from the model: a tensor the budget cannot hold is refused
    // now, naming its node, not when the compiled model runs.
    let too_big = ge_ir::budget::check_module(&m);
    if !too_big.is_empty() {
        return Err(too_big.iter().map(|d| sm.render(d)).collect());
    }
    Ok(m)
}

/// Run the compile stages on `m`, adding each one's time to `times`. The op
/// count where graph optimisation ends (lowering starts), if a lowering stage ran.
fn compile_stages(
    ctx: &Context,
    p: &Plan,
    m: &mut Module,
    sm: &SourceMap,
    log: &mut Log,
    times: &mut Vec<(&'static str, Duration)>,
) -> Result<Option<usize>, String> {
    let mut ops_after: Option<usize> = None;
    for stage in stages::stages(ctx, &p.settings) {
        // Graph optimisation ends where lowering starts.
        if ops_after.is_none() && matches!(stage.name, "fuse-kernels" | "partition-engines") {
            ops_after = Some(stages::count_ops(m));
        }
        log.info(&format!("{}: {}", stage.name, stage.pipeline));
        match stages::run_stage(ctx, m, &stage) {
            Ok(d) => match times.iter_mut().find(|(n, _)| *n == stage.name) {
                Some(e) => e.1 += d,
                None => times.push((stage.name, d)),
            },
            Err(diags) => return Err(diags.iter().map(|d| sm.render(d)).collect()),
        }
    }
    stages::verify(m).map_err(|diags| diags.iter().map(|d| sm.render(d)).collect::<String>())?;
    Ok(ops_after)
}

/// Lower the compiled module to an `.om` for `soc` (named for `out`), its
/// weights left in the module, and check it against the memory budget.
fn lower_om(m: &Module, out: &Path, soc: &str) -> Result<ge_om::ValidStream<'static>, String> {
    let name = out
        .file_stem()
        .filter(|s| *s != "-")
        .map(|s| s.to_string_lossy().into_owned());
    let om = ge_lowering::om::stream_from_module(
        m.body(),
        Some(m),
        &ge_lowering::om::OmOptions {
            entry: None,
            name,
            soc: soc.to_string(),
        },
    )
    .map_err(error)?;
    ge_compile::check_budget(&om.def).map_err(error)?;
    Ok(om)
}

/// Write `om` to `out`, each weight streamed from the module into the file,
/// creating missing parent folders: the number of bytes written.
fn write_om(om: &ge_om::ValidStream, out: &Path) -> Result<u64, String> {
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| error(format!("cannot create '{}': {e}", dir.display())))?;
    }
    ge_om::format::write_stream_with(out, om, OM_SYNC).map_err(error)
}

pub fn main() -> i32 {
    let args = AtcArgs::parse();
    let model = args.model.as_deref().or(args.om.as_deref()).unwrap_or("-");
    if let Err(e) = args.limits.apply(model) {
        eprintln!("{}\nATC run failed", error(e));
        return 1;
    }
    let ctx = ge_compile::context();
    // With the model on stdout (`--output -`, `--json -`) the summary goes to stderr.
    let data_on_stdout = [&args.output, &args.json]
        .iter()
        .any(|o| o.as_deref() == Some("-"));
    let out = main_with(args, &ctx);
    // The log comes first: it tells what happened before the summary.
    let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    if data_on_stdout {
        let _ = std::io::stderr().write_all(out.stdout.as_bytes());
    } else {
        let _ = std::io::stdout().write_all(out.stdout.as_bytes());
    }
    out.code
}
