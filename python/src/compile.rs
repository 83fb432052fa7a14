//! `ge.compile`: ge-atc in process, with ge-atc's option names.

use crate::errors::{error, guard, guard_nogil};
use crate::ir::{context, Module};
use clap::Parser;
use ge_driver::atc::{main_with, AtcArgs};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A scratch directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> PyResult<TempDir> {
        static N: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "ge-python-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&p)
            .map_err(|e| error(format!("cannot create '{}': {e}", p.display())))?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The text of an ATC flag's value from a Python value: `{"x": [1, 3]}` →
/// `x:1,3`, lists → `a,b`, bools → `true`/`false` (`1`/`0` for
/// `disable_reuse_memory`).
fn flag_value(flag: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(b) = v.extract::<bool>() {
        return Ok(match (flag, b) {
            ("disable_reuse_memory", true) => "1".into(),
            ("disable_reuse_memory", false) => "0".into(),
            (_, b) => b.to_string(),
        });
    }
    if let Ok(s) = v.extract::<String>() {
        return Ok(s);
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut parts = vec![];
        for (k, v) in d.iter() {
            parts.push(format!("{}:{}", k.extract::<String>()?, list_text(&v)?));
        }
        return Ok(parts.join(";"));
    }
    if v.is_instance_of::<pyo3::types::PyList>() || v.is_instance_of::<pyo3::types::PyTuple>() {
        return list_text(v);
    }
    Ok(v.str()?.to_string())
}

fn list_text(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = v.extract::<String>() {
        return Ok(s);
    }
    let items: Vec<String> = v
        .try_iter()?
        .map(|x| x.and_then(|x| Ok(x.str()?.to_string())))
        .collect::<PyResult<_>>()?;
    Ok(items.join(","))
}

/// `ge.compile(model, soc="Ascend910B", output=None, **atc_options)`: the
/// model (a `ge.Module`, or a path to an `.onnx`, `.pb`, SavedModel
/// directory or `.air`) compiled to an `.om`; returns its bytes (and writes
/// `OUTPUT.om` when `output` is given). Options are ge-atc's flags by name
/// (`input_shape`, `precision_mode`, `op_compiler_cache_mode`, ...).
#[pyfunction]
#[pyo3(signature = (model, /, soc = None, output = None, **atc_options))]
fn compile<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyAny>,
    soc: Option<String>,
    output: Option<PathBuf>,
    atc_options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyBytes>> {
    guard(|| {
        let tmp = TempDir::new()?;
        let mut argv: Vec<String> = vec!["ge-atc".into()];
        let mut model_path: Option<String> = None;
        if let Ok(m) = model.extract::<PyRef<'_, Module>>() {
            let p = tmp.0.join("model.air");
            ge_ir::output::write(&p, m.text(false, false)?.as_bytes())
                .map_err(|e| error(format!("cannot write '{}': {e}", p.display())))?;
            model_path = Some(p.display().to_string());
        } else if let Ok(p) = model.extract::<PathBuf>() {
            model_path = Some(p.display().to_string());
        }
        let model_path = model_path.ok_or_else(|| {
            error("compile: the model is a ge.Module or a path (.onnx, .pb, SavedModel, .air)")
        })?;
        argv.push(format!("--model={model_path}"));
        let mut has_framework = false;
        let mut soc_version = soc;
        if let Some(o) = atc_options {
            for (k, v) in o.iter() {
                let k: String = k.extract()?;
                match k.as_str() {
                    "model" | "output" | "mode" | "om" | "json" => {
                        return Err(error(format!(
                            "compile: '{k}' is not an option here (the model is the first argument; output= names the .om)"
                        )))
                    }
                    "soc_version" => {
                        soc_version = Some(v.extract()?);
                        continue;
                    }
                    "framework" => has_framework = true,
                    _ => {}
                }
                if v.is_none() {
                    continue;
                }
                let flag = k.replace('-', "_");
                argv.push(format!("--{flag}={}", flag_value(&flag, &v)?));
            }
        }
        if !has_framework {
            let ext = Path::new(&model_path)
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("");
            match ext {
                "onnx" => argv.push("--framework=5".into()),
                "pb" => argv.push("--framework=3".into()),
                _ if Path::new(&model_path).is_dir() => argv.push("--framework=3".into()),
                _ => {}
            }
        }
        if let Some(s) = soc_version {
            argv.push(format!("--soc_version={s}"));
        }
        let (out_base, out_file) = match &output {
            Some(o) => {
                let base = o.with_extension("");
                let file = base.with_extension("om");
                (base, file)
            }
            None => (tmp.0.join("model"), tmp.0.join("model.om")),
        };
        argv.push(format!("--output={}", out_base.display()));
        let args = AtcArgs::try_parse_from(&argv).map_err(|e| {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid option").to_string();
            error(format!("compile: {}", first.trim_start_matches("error: ")))
        })?;
        args.limits.apply(&model_path).map_err(error)?;
        let ctx = context();
        let (out, bytes) = py
            .detach(|| {
                guard_nogil(|| {
                    let out = main_with(args, ctx);
                    let bytes = if out.code == 0 {
                        std::fs::read(&out_file).map_err(|e| {
                            format!(
                                "cannot read the compiled model '{}': {e}",
                                out_file.display()
                            )
                        })?
                    } else {
                        vec![]
                    };
                    Ok((out, bytes))
                })
            })
            .map_err(PyErr::from)?;
        if out.code != 0 {
            let msg = out
                .stderr
                .trim_end()
                .trim_end_matches("ATC run failed")
                .trim_end()
                .to_string();
            return Err(error(msg));
        }
        Ok(PyBytes::new(py, &bytes))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    Ok(())
}
