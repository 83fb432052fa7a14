//! Attributes ↔ Python values.
//!
//! Read: integers, floats, bools, strings, arrays and dicts become the Python
//! values; dense elements become numpy arrays; types, symbols and the rest
//! their `.air` text. Written (ES attributes): by the attribute's declared
//! kind ([`AttrKind`]), so `strides=[2, 2]` is an `i64` array and
//! `epsilon=1e-5` keeps the `f32` spelling of the definition's default.

use crate::errors::error;
use ge_dialects::es::attr::IntoAttr;
use ge_ir::attributes::{AttrData, Attribute, DenseElements};
use ge_ir::opdef::AttrKind;
use ge_ir::{Context, Type};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

/// A Python value for an attribute.
pub fn attr_to_py<'py>(py: Python<'py>, a: Attribute) -> PyResult<Bound<'py, PyAny>> {
    Ok(match a.data() {
        AttrData::Unit => PyBool::new(py, true).to_owned().into_any(),
        AttrData::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        AttrData::Int { value, .. } => value.into_pyobject(py)?.into_any(),
        AttrData::Float { .. } => a
            .as_float()
            .unwrap_or(f64::NAN)
            .into_pyobject(py)?
            .into_any(),
        AttrData::String(s) => PyString::new(py, s).into_any(),
        AttrData::Array(xs) => {
            let items = xs
                .iter()
                .map(|x| attr_to_py(py, *x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        AttrData::DenseArray { dtype, .. } if dtype.is_float() => {
            PyList::new(py, a.as_f64_array().unwrap_or_default())?.into_any()
        }
        AttrData::DenseArray { .. } => {
            PyList::new(py, a.as_i64_array().unwrap_or_default())?.into_any()
        }
        AttrData::Dict(d) => {
            let out = PyDict::new(py);
            for (k, v) in d.entries().iter().copied() {
                out.set_item(k.as_str(), attr_to_py(py, v)?)?;
            }
            out.into_any()
        }
        AttrData::Dense(d) => match ge_ir::tensor::Tensor::from_dense(d) {
            Ok(t) => crate::arrays::to_numpy(py, &ge_runtime::HostTensor::from_tensor(&t))?,
            Err(_) => PyString::new(py, &a.to_string()).into_any(),
        },
        _ => PyString::new(py, &a.to_string()).into_any(),
    })
}

fn kind_err(name: &str, kind: AttrKind, v: &Bound<'_, PyAny>) -> PyErr {
    let got = v
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    error(format!(
        "attribute '{name}' must be {}, not {got} ({})",
        kind.describe(),
        v.repr().map(|r| r.to_string()).unwrap_or_default()
    ))
}

fn int_list(v: &Bound<'_, PyAny>) -> Option<Vec<i64>> {
    if v.is_instance_of::<PyString>() {
        return None;
    }
    v.try_iter()
        .ok()?
        .map(|x| {
            let x = x.ok()?;
            if x.is_instance_of::<PyBool>() {
                return None;
            }
            x.extract::<i64>().ok()
        })
        .collect()
}

fn float_list(v: &Bound<'_, PyAny>) -> Option<Vec<f64>> {
    if v.is_instance_of::<PyString>() {
        return None;
    }
    v.try_iter()
        .ok()?
        .map(|x| x.ok()?.extract::<f64>().ok())
        .collect()
}

fn str_list(v: &Bound<'_, PyAny>) -> Option<Vec<String>> {
    if v.is_instance_of::<PyString>() {
        return None;
    }
    v.try_iter()
        .ok()?
        .map(|x| x.ok()?.extract::<String>().ok())
        .collect()
}

/// A type from its text, or a numpy dtype / dtype name (`"float16"`, `np.int64`).
pub fn type_from_py(ctx: &Context, v: &Bound<'_, PyAny>) -> PyResult<Type> {
    let py = v.py();
    if let Ok(s) = v.extract::<String>() {
        if let Ok(t) = ge_ir::parser::parse_type_str(ctx, &s) {
            return Ok(t);
        }
        if let Some(d) = ge_ir::DType::parse(&s) {
            return Ok(Type::scalar(d));
        }
    }
    // A numpy dtype (or anything numpy.dtype accepts, like np.float16).
    let np = py.import("numpy")?;
    let descr = np
        .call_method1("dtype", (v,))
        .ok()
        .and_then(|d| d.cast_into::<numpy::PyArrayDescr>().ok())
        .ok_or_else(|| {
            error(format!(
                "'{}' is neither a type nor a numpy dtype",
                v.str().map(|s| s.to_string()).unwrap_or_default()
            ))
        })?;
    Ok(Type::scalar(crate::arrays::dtype_of(&descr)?))
}

/// Dense elements from an array-like (numpy converts lists).
pub fn dense_from_py(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Attribute> {
    let t = crate::arrays::to_host(v, what)?;
    let dims: Vec<ge_ir::Dim> = t
        .shape
        .iter()
        .map(|&d| ge_ir::Dim::Static(d as i64))
        .collect();
    let ty = Type::tensor(&dims, t.dtype);
    Ok(Attribute::dense(DenseElements {
        ty,
        splat: false,
        bytes: t.bytes().into(),
    }))
}

/// The attribute for Python value `v` of an attribute of kind `kind`;
/// `like` is the definition's default (its spelling is kept).
pub fn py_to_attr(
    ctx: &Context,
    name: &str,
    kind: AttrKind,
    like: Option<Attribute>,
    v: &Bound<'_, PyAny>,
) -> PyResult<Option<Attribute>> {
    let is_bool = v.is_instance_of::<PyBool>();
    let a = match kind {
        AttrKind::Bool if is_bool => v.extract::<bool>()?.to_attr(like),
        AttrKind::Unit if is_bool => v.extract::<bool>()?.then(Attribute::unit),
        AttrKind::I64 if v.is_instance_of::<PyInt>() && !is_bool => {
            v.extract::<i64>()?.to_attr(like)
        }
        AttrKind::F64
            if (v.is_instance_of::<PyFloat>() || v.is_instance_of::<PyInt>()) && !is_bool =>
        {
            v.extract::<f64>()?.to_attr(like)
        }
        AttrKind::Str | AttrKind::Enum(_) if v.is_instance_of::<PyString>() => {
            let s = v.extract::<String>()?;
            if let AttrKind::Enum(names) = kind {
                if !names.contains(&s.as_str()) {
                    return Err(error(format!(
                        "attribute '{name}' must be one of {}, not '{s}'",
                        names.join(", ")
                    )));
                }
            }
            s.to_attr(like)
        }
        AttrKind::Symbol if v.is_instance_of::<PyString>() => {
            let s = v.extract::<String>()?;
            Some(Attribute::symbol(s.trim_start_matches('@')))
        }
        AttrKind::I64Array => match int_list(v) {
            Some(xs) => xs.to_attr(like),
            None => return Err(kind_err(name, kind, v)),
        },
        AttrKind::F64Array => match float_list(v) {
            Some(xs) => xs.to_attr(like),
            None => return Err(kind_err(name, kind, v)),
        },
        AttrKind::StrArray => match str_list(v) {
            Some(xs) => xs.to_attr(like),
            None => return Err(kind_err(name, kind, v)),
        },
        AttrKind::Type => Some(Attribute::ty(type_from_py(ctx, v)?)),
        AttrKind::Elements => Some(dense_from_py(v, &format!("attribute '{name}'"))?),
        AttrKind::Dict | AttrKind::Any => {
            // `.air` attribute text, or a plain Python value.
            if let Ok(s) = v.extract::<String>() {
                match ge_ir::parser::parse_attr_str(ctx, &s) {
                    Ok(a) => Some(a),
                    Err(_) if kind == AttrKind::Any => Some(Attribute::string(&s)),
                    Err(d) => {
                        return Err(error(format!(
                            "attribute '{name}': invalid attribute '{s}': {}",
                            d.message
                        )))
                    }
                }
            } else if is_bool {
                v.extract::<bool>()?.to_attr(like)
            } else if let Ok(i) = v.extract::<i64>() {
                i.to_attr(like)
            } else if let Ok(f) = v.extract::<f64>() {
                f.to_attr(like)
            } else {
                return Err(kind_err(name, kind, v));
            }
        }
        _ => return Err(kind_err(name, kind, v)),
    };
    Ok(a)
}

/// A Python value for a type: its text.
pub fn type_text(t: Type) -> String {
    t.to_string()
}
