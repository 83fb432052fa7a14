//! `ge-translate`: convert between model formats and `.air` text — MLIR's
//! `mlir-translate` job. Today: `--import-onnx`, `--import-tf` and
//! `--om-to-air` (print a compiled `.om` back as `.air`); with the cargo
//! feature `mlir`, `--export-mlir` / `--import-mlir` (the bridge to upstream
//! MLIR, `ge_frontends::mlir`).
//!
//! Each conversion is one flag of the `mode` group (exactly one is given); a
//! new conversion is one more flag there and one more arm in [`main_with`].

use clap::{ArgGroup, Parser as ClapParser};
use ge_frontends::onnx::ImportOptions;
use ge_frontends::tf::TfOptions;
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::{Context, Module};
use std::io::Write;
use std::path::Path;

#[derive(ClapParser, Debug, Clone)]
#[command(
    name = "ge-translate",
    version,
    about = "Translate models to and from .air (ONNX and TensorFlow GraphDef import)"
)]
#[command(group(ArgGroup::new("mode").required(true).multiple(false)))]
pub struct TranslateArgs {
    /// Import an ONNX model (.onnx) into the graph dialect
    #[arg(long, value_name = "MODEL.onnx", group = "mode")]
    pub import_onnx: Option<String>,
    /// Import a frozen TensorFlow GraphDef (.pb) into the graph dialect
    #[arg(long, value_name = "MODEL.pb", group = "mode")]
    pub import_tf: Option<String>,
    /// Print an .om offline model back as .air (kernels, task program, weights as resources)
    #[arg(long, value_name = "MODEL.om", group = "mode")]
    pub om_to_air: Option<String>,
    /// List the ONNX ops the importer supports: ai.onnx's by name, then those of other
    /// domains as DOMAIN:NAME (ai.onnx.ml:TreeEnsemble)
    #[arg(long, group = "mode")]
    pub list_onnx_ops: bool,
    /// List the TensorFlow ops the importer supports
    #[arg(long, group = "mode")]
    pub list_tf_ops: bool,
    /// List the optional features this build has: mlir-bridge, ilp (not when
    /// GE_DISABLE_FEATURES=ilp switches it off)
    #[arg(long, group = "mode")]
    pub list_features: bool,
    /// Export an .air module to upstream MLIR (func + tosa), verified by MLIR
    #[cfg(feature = "mlir")]
    #[arg(long, value_name = "FILE.air", group = "mode")]
    pub export_mlir: Option<String>,
    /// Import an upstream MLIR module (func + tosa) into the graph dialect
    #[cfg(feature = "mlir")]
    #[arg(long, value_name = "FILE.mlir", group = "mode")]
    pub import_mlir: Option<String>,
    /// List the ops --export-mlir supports
    #[cfg(feature = "mlir")]
    #[arg(long, group = "mode")]
    pub list_mlir_export_ops: bool,
    /// List the upstream ops --import-mlir supports
    #[cfg(feature = "mlir")]
    #[arg(long, group = "mode")]
    pub list_mlir_import_ops: bool,
    /// Output file ('-' for stdout); a regular file is replaced atomically, a device,
    /// FIFO or symlink is written through
    #[arg(short = 'o', long = "output", default_value = "-")]
    pub output: String,
    /// Input shapes for TensorFlow placeholders, e.g. "x:1,224,224,3;y:1,10" (-1 or a name: symbolic)
    #[arg(long, value_name = "NAME:DIMS[;...]")]
    pub input_shape: Option<String>,
    /// TensorFlow output nodes, comma separated (default: nodes nothing consumes)
    #[arg(long, value_name = "NAME[,...]")]
    pub outputs: Option<String>,
    /// Name of the imported function
    #[arg(long, default_value = "main")]
    pub func_name: String,
    /// Do not fold ops whose operands are constants
    #[arg(long)]
    pub no_fold: bool,
    /// Print every op in MLIR's generic form
    #[arg(long, alias = "mlir-print-op-generic")]
    pub print_op_generic: bool,
    /// Print source locations (node names of the model)
    #[arg(long, alias = "mlir-print-debuginfo")]
    pub print_debuginfo: bool,
    /// Print dense literals with more than N elements as hex
    #[arg(long, value_name = "N")]
    pub print_elements_hex_over: Option<usize>,
    #[command(flatten)]
    pub limits: crate::limits::LimitArgs,
}

pub struct TranslateOutput {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

fn fail(msg: &str) -> TranslateOutput {
    TranslateOutput {
        stdout: String::new(),
        stderr: format!("error: {msg}\n"),
        code: 1,
    }
}

fn emit(args: &TranslateArgs, m: &Module) -> TranslateOutput {
    let text = print_module(
        m,
        PrintOptions {
            generic: args.print_op_generic,
            debuginfo: args.print_debuginfo,
            hex_elements_over: args.print_elements_hex_over,
        },
    );
    write_text(args, text)
}

/// Write `text` to `-o` (stdout for '-').
fn write_text(args: &TranslateArgs, text: String) -> TranslateOutput {
    if args.output == "-" {
        return TranslateOutput {
            stdout: text,
            stderr: String::new(),
            code: 0,
        };
    }
    match ge_ir::output::write(&args.output, text.as_bytes()) {
        Ok(()) => TranslateOutput {
            stdout: String::new(),
            stderr: String::new(),
            code: 0,
        },
        Err(e) => fail(&format!("cannot write '{}': {e}", args.output)),
    }
}

pub fn main_with(args: TranslateArgs, ctx: &Context) -> TranslateOutput {
    if args.list_onnx_ops {
        let ml = ge_frontends::onnx::ops::ML_TABLE
            .iter()
            .map(|(n, _)| format!("ai.onnx.ml:{n}"));
        let names: Vec<String> = ge_frontends::onnx::ops::TABLE
            .iter()
            .map(|(n, _)| n.to_string())
            .chain(ml)
            .collect();
        return TranslateOutput {
            stdout: format!("{}\n", names.join("\n")),
            stderr: String::new(),
            code: 0,
        };
    }
    if args.list_tf_ops {
        let names: Vec<&str> = ge_frontends::tf::TABLE.iter().map(|(n, _)| *n).collect();
        return TranslateOutput {
            stdout: format!("{}\n", names.join("\n")),
            stderr: String::new(),
            code: 0,
        };
    }
    if args.list_features {
        let mut f: Vec<&str> = vec![];
        if cfg!(feature = "mlir") {
            f.push("mlir-bridge");
        }
        if ge_rewrites::eqsat::ilp_available() {
            f.push("ilp");
        }
        return TranslateOutput {
            stdout: f.iter().map(|x| format!("{x}\n")).collect(),
            stderr: String::new(),
            code: 0,
        };
    }
    #[cfg(feature = "mlir")]
    if let Some(out) = mlir_modes(&args, ctx) {
        return out;
    }
    if let Some(path) = &args.import_onnx {
        let opts = ImportOptions {
            func_name: args.func_name.clone(),
            fold: !args.no_fold,
            ..ImportOptions::default()
        };
        return match ge_frontends::onnx::import_file(ctx, Path::new(path), &opts) {
            Ok(m) => emit(&args, &m),
            Err(e) => fail(&e.message),
        };
    }
    if let Some(path) = &args.import_tf {
        let opts = match TfOptions::parse(
            args.input_shape.as_deref(),
            args.outputs.as_deref(),
            &args.func_name,
        ) {
            Ok(o) => o,
            Err(e) => return fail(&e.message),
        };
        return match ge_frontends::tf::import_file(ctx, Path::new(path), &opts) {
            Ok(m) => emit(&args, &m),
            Err(e) => fail(&e.message),
        };
    }
    if let Some(path) = &args.om_to_air {
        return match ge_lowering::om::read_module(ctx, Path::new(path)) {
            Ok(m) => emit(&args, &m),
            Err(e) => fail(&e),
        };
    }
    fail("give one of --import-onnx, --import-tf, --om-to-air")
}

/// Read, parse and verify an `.air` file; rendered diagnostics on failure.
pub fn load_air(ctx: &Context, path: &str) -> Result<Module, String> {
    use ge_ir::diagnostics::SourceMap;
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("error: cannot read '{path}': {e}\n"))?;
    let mut sm = SourceMap::new();
    let file = sm.add(path, std::sync::Arc::from(text.as_str()));
    let m = ge_ir::parser::parse_module(ctx, path, &text, ge_ir::parser::ParseOptions::file(file))
        .map_err(|d| sm.render(&d))?;
    let diags = ge_ir::verifier::verify_module(&m);
    if diags.iter().any(|d| d.is_error()) {
        return Err(diags.iter().map(|d| sm.render(d)).collect());
    }
    Ok(m)
}

/// The `--export-mlir` / `--import-mlir` modes (feature `mlir`).
#[cfg(feature = "mlir")]
fn mlir_modes(args: &TranslateArgs, ctx: &Context) -> Option<TranslateOutput> {
    use ge_frontends::mlir;
    let list = |names: Vec<&str>| TranslateOutput {
        stdout: format!("{}\n", names.join("\n")),
        stderr: String::new(),
        code: 0,
    };
    if args.list_mlir_export_ops {
        return Some(list(mlir::export::TABLE.iter().map(|(n, _)| *n).collect()));
    }
    if args.list_mlir_import_ops {
        return Some(list(mlir::import::TABLE.iter().map(|(n, _)| *n).collect()));
    }
    if let Some(path) = &args.export_mlir {
        let m = match load_air(ctx, path) {
            Ok(m) => m,
            Err(e) => {
                return Some(TranslateOutput {
                    stdout: String::new(),
                    stderr: e,
                    code: 1,
                })
            }
        };
        return Some(match mlir::export::export_text(&m, args.print_debuginfo) {
            Ok(text) => write_text(args, text),
            Err(e) => fail(&format!("{path}: cannot export to MLIR: {e}")),
        });
    }
    if let Some(path) = &args.import_mlir {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => return Some(fail(&format!("cannot read '{path}': {e}"))),
        };
        return Some(match mlir::import::import_text(ctx, &text, path) {
            Ok(m) => emit(args, &m),
            Err(e) => fail(&e.message),
        });
    }
    None
}

pub fn main() -> i32 {
    let args = TranslateArgs::parse();
    let model = [&args.import_onnx, &args.import_tf, &args.om_to_air]
        .into_iter()
        .flatten()
        .next()
        .map_or("-", |m| m.as_str());
    if let Err(e) = args.limits.apply(model) {
        eprintln!("error: {e}");
        return 1;
    }
    let ctx = ge_compile::context();
    let out = main_with(args, &ctx);
    let _ = std::io::stdout().write_all(out.stdout.as_bytes());
    let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    out.code
}
