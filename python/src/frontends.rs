//! `ge.import_onnx` and `ge.import_tf`.

use crate::errors::{error, guard, guard_nogil};
use crate::ir::{context, Module};
use ge_frontends::onnx::ImportOptions;
use ge_frontends::tf::TfOptions;
use ge_ir::Dim;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A model argument: a path, bytes, or an object with `SerializeToString`
/// (`onnx.ModelProto`, a TensorFlow `GraphDef`).
pub enum ModelArg {
    Path(PathBuf),
    Bytes(Vec<u8>),
}

pub fn model_arg(v: &Bound<'_, PyAny>) -> PyResult<ModelArg> {
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(ModelArg::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(p) = v.extract::<PathBuf>() {
        return Ok(ModelArg::Path(p));
    }
    if v.hasattr("SerializeToString")? {
        let b = v.call_method0("SerializeToString")?;
        let b = b
            .cast::<PyBytes>()
            .map_err(|_| error("SerializeToString() did not return bytes"))?;
        return Ok(ModelArg::Bytes(b.as_bytes().to_vec()));
    }
    Err(error(
        "a model is a path, bytes, or a protobuf message (onnx.ModelProto, GraphDef)",
    ))
}

/// Allow external weights next to the model (and in `allow_dirs`) only, as
/// the tools do.
pub fn apply_policy(model: &Path, allow_dirs: &[PathBuf]) -> PyResult<()> {
    let a = ge_ir::external::Access::for_model_file(&model.display().to_string(), allow_dirs)
        .map_err(error)?;
    ge_ir::external::set_policy(a);
    Ok(())
}

/// Dims from a Python sequence: ints (`-1` unknown) or symbol names.
fn dims(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Dim>> {
    let mut out = vec![];
    for d in v
        .try_iter()
        .map_err(|_| error(format!("{what}: expected a list of dims")))?
    {
        let d = d?;
        if let Ok(n) = d.extract::<i64>() {
            out.push(if n < 0 { Dim::Unknown } else { Dim::Static(n) });
        } else if let Ok(s) = d.extract::<String>() {
            out.push(Dim::sym(&s));
        } else {
            return Err(error(format!("{what}: a dim is an int or a symbol name")));
        }
    }
    Ok(out)
}

fn shapes(v: Option<&Bound<'_, PyDict>>) -> PyResult<HashMap<String, Vec<Dim>>> {
    let mut out = HashMap::new();
    if let Some(d) = v {
        for (k, v) in d.iter() {
            let k: String = k.extract()?;
            let ds = dims(&v, &format!("input_shapes['{k}']"))?;
            out.insert(k, ds);
        }
    }
    Ok(out)
}

/// `ge.import_onnx(model, input_shapes=None, outputs=None, ...)`.
#[pyfunction]
#[pyo3(signature = (model, input_shapes = None, outputs = None, func_name = "main", fold = true, base_dir = None, allow_external_dirs = vec![]))]
#[allow(clippy::too_many_arguments)]
fn import_onnx(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    input_shapes: Option<&Bound<'_, PyDict>>,
    outputs: Option<Vec<(String, usize)>>,
    func_name: &str,
    fold: bool,
    base_dir: Option<PathBuf>,
    allow_external_dirs: Vec<PathBuf>,
) -> PyResult<Module> {
    guard(|| {
        let opts = ImportOptions {
            func_name: func_name.to_string(),
            fold,
            input_shapes: shapes(input_shapes)?,
            outputs,
            ..Default::default()
        };
        let arg = model_arg(model)?;
        let ctx = context();
        let m = match arg {
            ModelArg::Path(p) => {
                apply_policy(&p, &allow_external_dirs)?;
                py.detach(|| {
                    guard_nogil(|| {
                        ge_frontends::onnx::import_file(ctx, &p, &opts).map_err(|e| e.to_string())
                    })
                })?
            }
            ModelArg::Bytes(b) => {
                let base = base_dir.unwrap_or_else(|| PathBuf::from("."));
                apply_policy(&base.join("model.onnx"), &allow_external_dirs)?;
                py.detach(|| {
                    guard_nogil(|| {
                        ge_frontends::onnx::import_bytes(ctx, &b, "<bytes>", &base, &opts)
                            .map_err(|e| e.to_string())
                    })
                })?
            }
        };
        Ok(Module::new(m, None))
    })
}

/// `ge.import_tf(model, input_shape=None, outputs=None, signature=None)`:
/// a frozen GraphDef (path, bytes or message) or a SavedModel directory.
#[pyfunction]
#[pyo3(signature = (model, input_shapes = None, outputs = None, func_name = "main", signature = None))]
fn import_tf(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    input_shapes: Option<&Bound<'_, PyDict>>,
    outputs: Option<Vec<String>>,
    func_name: &str,
    signature: Option<String>,
) -> PyResult<Module> {
    guard(|| {
        let opts = TfOptions {
            input_shapes: shapes(input_shapes)?,
            outputs,
            func_name: func_name.to_string(),
            signature,
        };
        let ctx = context();
        let m = match model_arg(model)? {
            ModelArg::Path(p) => {
                apply_policy(&p, &[])?;
                py.detach(|| {
                    guard_nogil(|| {
                        ge_frontends::tf::import_file(ctx, &p, &opts).map_err(|e| e.to_string())
                    })
                })?
            }
            ModelArg::Bytes(b) => py.detach(|| {
                guard_nogil(|| {
                    ge_frontends::tf::import_bytes(ctx, &b, "<bytes>", &opts)
                        .map_err(|e| e.to_string())
                })
            })?,
        };
        Ok(Module::new(m, None))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(import_onnx, m)?)?;
    m.add_function(wrap_pyfunction!(import_tf, m)?)?;
    Ok(())
}
