//! Compiling with ge-atc: the options are ge-atc's flags by name
//! (`soc_version`, `input_shape`, `precision_mode`, …), parsed by ge-atc's
//! own argument parser, and the compile is ge-atc's `main_with` — the same
//! pipeline, checks, summary and compile cache as the command line.

use crate::args::{self, Out};
use crate::bytes::ge_bytes;
use crate::module::ge_module;
use crate::status::{entry, ge_status, Error, Result, GE_ERROR_COMPILE, GE_ERROR_IO};
use clap::Parser;
use ge_driver::atc::AtcArgs;
use std::ffi::c_char;
use std::path::Path;

/// ge-atc options, set one by one with `ge_compile_options_set`.
pub struct ge_compile_options {
    /// `--name=value` flags in the order they were set.
    flags: Vec<String>,
}

/// Flags the compile functions set themselves.
const RESERVED: [&str; 5] = ["model", "output", "mode", "om", "json"];

fn parse_args(flags: &[String]) -> Result<AtcArgs> {
    let argv = std::iter::once("ge-atc".to_string()).chain(flags.iter().cloned());
    AtcArgs::try_parse_from(argv).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or("invalid option").trim();
        Error::arg(first.strip_prefix("error: ").unwrap_or(first).to_string())
    })
}

/// The ge-atc flags `options` holds (NULL: the defaults), parsed.
pub(crate) fn atc_args(options: Option<&ge_compile_options>) -> Result<AtcArgs> {
    parse_args(options.map_or(&[][..], |o| &o.flags))
}

/// New options: ge-atc's defaults (`--soc_version=Ascend910B`, …).
#[no_mangle]
pub unsafe extern "C" fn ge_compile_options_new(out: *mut *mut ge_compile_options) -> ge_status {
    entry("ge_compile_options_new", || {
        // SAFETY: the ge.h contract: a writable pointer.
        let out = unsafe { Out::new(out, "out")? };
        out.set(Box::into_raw(Box::new(ge_compile_options {
            flags: vec![],
        })));
        Ok(())
    })
}

/// Set ge-atc option `name` (its flag without `--`, e.g. `"soc_version"`,
/// `"input_shape"`, `"precision_mode"`) to `value`; checked as ge-atc checks
/// it; setting an option again replaces its value. `model`, `output`,
/// `mode`, `om` and `json` are set by the compile functions and refused.
#[no_mangle]
pub unsafe extern "C" fn ge_compile_options_set(
    options: *mut ge_compile_options,
    name: *const c_char,
    value: *const c_char,
) -> ge_status {
    entry("ge_compile_options_set", || {
        // SAFETY: the ge.h contract: a live options handle and two C strings.
        let (o, name, value) = unsafe {
            (
                args::handle_mut(options, "options")?,
                args::cstr(name, "name")?,
                args::cstr(value, "value")?,
            )
        };
        let name = name.trim_start_matches("--");
        if name.is_empty() || name.contains(['=', ' ']) {
            return Err(Error::arg(format!("'{name}' is not an option name")));
        }
        if RESERVED.contains(&name) {
            return Err(Error::arg(format!(
                "option '{name}' is set by the compile function itself"
            )));
        }
        // Setting an option again replaces its value.
        let prefix = format!("--{name}=");
        let mut flags: Vec<String> = o
            .flags
            .iter()
            .filter(|f| !f.starts_with(&prefix))
            .cloned()
            .collect();
        flags.push(format!("{prefix}{value}"));
        parse_args(&flags)?;
        o.flags = flags;
        Ok(())
    })
}

/// Free options (NULL is ignored).
#[no_mangle]
pub unsafe extern "C" fn ge_compile_options_free(options: *mut ge_compile_options) {
    entry("ge_compile_options_free", || {
        // SAFETY: NULL or a live options handle, not used afterwards.
        unsafe { args::free(options) };
        Ok(())
    });
}

/// Run ge-atc on `model` writing `om_path`; the error is ge-atc's stderr.
fn run_atc(model: &str, options: Option<&ge_compile_options>, om_path: &Path) -> Result<()> {
    let mut flags = vec![
        format!("--model={model}"),
        format!("--output={}", om_path.display()),
    ];
    if let Some(o) = options {
        flags.extend(o.flags.iter().cloned());
    }
    let args = parse_args(&flags)?;
    let ctx = ge_compile::context();
    let out = ge_driver::atc::main_with(args, &ctx);
    if out.code != 0 {
        let msg = out
            .stderr
            .trim_end()
            .trim_end_matches("ATC run failed")
            .trim_end()
            .to_string();
        return Err(Error::new(GE_ERROR_COMPILE, msg));
    }
    Ok(())
}

/// Compile `model` (a path) to `om_path` and/or to bytes.
fn compile_path(
    model: &str,
    options: Option<&ge_compile_options>,
    om_path: Option<&str>,
    om_bytes: Option<Out<*mut ge_bytes>>,
    scratch: Option<&tempfile::TempDir>,
) -> Result<()> {
    if om_path.is_none() && om_bytes.is_none() {
        return Err(Error::arg(
            "both 'om_path' and 'om_bytes' are NULL: nowhere to put the model",
        ));
    }
    if let Some(p) = om_path {
        if !p.ends_with(".om") {
            return Err(Error::arg(format!(
                "'om_path' must end with .om, got '{p}'"
            )));
        }
    }
    let owned;
    let dir = match scratch {
        Some(d) => d,
        None => {
            owned = scratch_dir()?;
            &owned
        }
    };
    let target = match om_path {
        Some(p) => Path::new(p).to_path_buf(),
        None => dir.path().join("model.om"),
    };
    run_atc(model, options, &target)?;
    if let Some(out) = om_bytes {
        let bytes = std::fs::read(&target).map_err(|e| {
            Error::new(
                GE_ERROR_IO,
                format!("cannot read '{}': {e}", target.display()),
            )
        })?;
        out.set(Box::into_raw(Box::new(ge_bytes::new(bytes))));
    }
    Ok(())
}

fn scratch_dir() -> Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("ge-capi-")
        .tempdir()
        .map_err(|e| Error::new(GE_ERROR_IO, format!("cannot create a scratch folder: {e}")))
}

/// Compile a model file — `.onnx` (set option `framework` to `"5"`), a frozen
/// TensorFlow `.pb` or SavedModel folder (`"3"`), or `.air` — exactly as
/// `ge-atc --model=MODEL --output=...` with `options` (NULL: defaults).
/// The `.om` goes to `om_path` (ending in `.om`) when it is not NULL, and
/// into a new `ge_bytes` at `*om_bytes` when `om_bytes` is not NULL.
#[no_mangle]
pub unsafe extern "C" fn ge_compile_file(
    model_path: *const c_char,
    options: *const ge_compile_options,
    om_path: *const c_char,
    om_bytes: *mut *mut ge_bytes,
) -> ge_status {
    entry("ge_compile_file", || {
        // SAFETY: the ge.h contract: C strings or NULL, a live options handle
        // or NULL, a writable pointer or NULL.
        let (model, options, om_path, om_bytes) = unsafe {
            (
                args::cstr(model_path, "model_path")?,
                options.as_ref(),
                args::opt_cstr(om_path, "om_path")?,
                match om_bytes.is_null() {
                    true => None,
                    false => Some(Out::new(om_bytes, "om_bytes")?),
                },
            )
        };
        compile_path(model, options, om_path, om_bytes, None)
    })
}

/// Compile a module (from ES, ONNX import or `.air` text) as ge-atc compiles
/// an `.air` file with `options` (NULL: defaults); output as in
/// `ge_compile_file`. The module is left unchanged.
#[no_mangle]
pub unsafe extern "C" fn ge_compile_module(
    module: *const ge_module,
    options: *const ge_compile_options,
    om_path: *const c_char,
    om_bytes: *mut *mut ge_bytes,
) -> ge_status {
    entry("ge_compile_module", || {
        // SAFETY: as ge_compile_file, and a live module.
        let (m, options, om_path, om_bytes) = unsafe {
            (
                args::handle(module, "module")?,
                options.as_ref(),
                args::opt_cstr(om_path, "om_path")?,
                match om_bytes.is_null() {
                    true => None,
                    false => Some(Out::new(om_bytes, "om_bytes")?),
                },
            )
        };
        // ge-atc reads models from files: the module goes through its text
        // (with locations, which carry the names of inputs built with ES).
        let dir = scratch_dir()?;
        let air = dir.path().join("model.air");
        let text = ge_ir::printer::print_module(
            &m.module,
            ge_ir::printer::PrintOptions {
                debuginfo: true,
                ..Default::default()
            },
        );
        ge_ir::output::write(&air, text.as_bytes()).map_err(|e| {
            Error::new(
                GE_ERROR_IO,
                format!("cannot write '{}': {e}", air.display()),
            )
        })?;
        let model = air.to_string_lossy().into_owned();
        compile_path(&model, options, om_path, om_bytes, Some(&dir))
    })
}
