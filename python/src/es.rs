//! The ES graph builder for Python, driven by the ops' declarations.
//!
//! [`es_ops`] describes every ES method exactly as `def_op!` generated the
//! Rust one (the `EsOp` interface of each op: operands and their arity,
//! required attributes, the attributes with defaults) plus the op's docs,
//! the attributes' kinds, defaults and docs; `ge/es.py` turns each entry
//! into a method with that signature and docstring, and
//! `python/tools/gen_stubs.py` into `.pyi` stubs. [`GraphBuilder::create`]
//! builds any of them through the Rust builder's own `create_op` (defaults,
//! shape inference, verification).

use crate::errors::{error, guard};
use crate::ir::{context, Module};
use crate::values::{attr_to_py, py_to_attr, type_text};
use ge_dialects::es::{self, EsResults, Group, WeightStorage};
use ge_ir::body::ValueId;
use ge_ir::opdef::{Arity, AttrDef, AttrKind, OpDef};
use ge_ir::{Dim, Location};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

static NEXT_UID: AtomicU64 = AtomicU64::new(1);

/// A graph being built (one `graph.func` in a new module).
#[pyclass(module = "ge._native")]
pub struct GraphBuilder {
    uid: u64,
    b: Mutex<Option<es::GraphBuilder>>,
    /// Input and output names (the function's `ge.name`s: what a session's
    /// `run` takes and returns).
    names: Mutex<(Vec<String>, Vec<String>)>,
}

/// A value of a graph being built: its id and type.
#[pyclass(module = "ge._native", frozen)]
pub struct Value {
    uid: u64,
    id: ValueId,
    #[pyo3(get)]
    r#type: String,
    /// Dims: ints, symbol names (`"B"`) or `None` for `?`.
    dims: Vec<DimPy>,
    #[pyo3(get)]
    dtype: Option<String>,
}

#[derive(Clone)]
enum DimPy {
    Static(i64),
    Sym(String),
    Unknown,
}

#[pymethods]
impl Value {
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let items: Vec<Bound<'py, PyAny>> = self
            .dims
            .iter()
            .map(|d| match d {
                DimPy::Static(n) => Ok(n.into_pyobject(py)?.into_any()),
                DimPy::Sym(s) => Ok(s.into_pyobject(py)?.into_any()),
                DimPy::Unknown => Ok(py.None().into_bound(py)),
            })
            .collect::<PyResult<_>>()?;
        PyTuple::new(py, items)
    }

    #[getter]
    fn id(&self) -> usize {
        self.id.index()
    }
}

fn value(uid: u64, t: es::Tensor<'_>) -> Value {
    let dims = t
        .dims()
        .iter()
        .map(|d| match d {
            Dim::Static(n) => DimPy::Static(*n),
            Dim::Unknown => DimPy::Unknown,
            other => DimPy::Sym(other.to_string()),
        })
        .collect();
    Value {
        uid,
        id: t.id(),
        r#type: type_text(t.ty()),
        dims,
        dtype: t.dtype().map(|d| d.name().to_string()),
    }
}

impl GraphBuilder {
    /// Run `f` on the builder (an error once `finish` was called).
    fn with<T>(&self, f: impl FnOnce(&es::GraphBuilder) -> PyResult<T>) -> PyResult<T> {
        guard(|| {
            let g = self
                .b
                .lock()
                .map_err(|_| error("the graph is unusable: an earlier call panicked"))?;
            let b = g
                .as_ref()
                .ok_or_else(|| error("the graph was finished: build a new one"))?;
            f(b)
        })
    }

    fn tensor<'g>(
        &self,
        b: &'g es::GraphBuilder,
        v: &Value,
        what: &str,
    ) -> PyResult<es::Tensor<'g>> {
        if v.uid != self.uid {
            return Err(error(format!("{what}: the value belongs to another graph")));
        }
        b.value(v.id)
            .ok_or_else(|| error(format!("{what}: not a value of this graph")))
    }
}

fn es_err(e: es::EsError) -> PyErr {
    error(e.msg)
}

/// The ES-covered op `name`'s definition.
fn es_def(name: &str) -> PyResult<&'static OpDef> {
    let def = context()
        .op_def(name)
        .ok_or_else(|| error(format!("unknown op '{name}'")))?;
    if def.interface::<es::EsOp>().is_none() {
        let why = es::exclusion_reason(name).unwrap_or("it is not a graph or data op");
        return Err(error(format!("'{name}' has no ES method: {why}")));
    }
    Ok(def)
}

#[pymethods]
impl GraphBuilder {
    #[new]
    #[pyo3(signature = (name = "main"))]
    fn new(name: &str) -> PyResult<GraphBuilder> {
        guard(|| {
            Ok(GraphBuilder {
                uid: NEXT_UID.fetch_add(1, Ordering::Relaxed),
                b: Mutex::new(Some(es::GraphBuilder::new(name))),
                names: Mutex::new((vec![], vec![])),
            })
        })
    }

    /// A new function argument of type `ty` (`"tensor<Bx3x8x8xf32>"`).
    fn input(&self, name: &str, ty: &str) -> PyResult<Value> {
        self.with(|b| {
            let v = value(self.uid, b.input(name, ty).map_err(es_err)?);
            if let Ok(mut n) = self.names.lock() {
                n.0.push(name.to_string());
            }
            Ok(v)
        })
    }

    /// A weight from an array, stored as `set_weight_storage` says.
    fn weight(&self, name: &str, array: &Bound<'_, PyAny>) -> PyResult<Value> {
        let t = crate::arrays::to_host(array, &format!("weight '{name}'"))?;
        self.with(|b| {
            let dims: Vec<Dim> = t.shape.iter().map(|&d| Dim::Static(d as i64)).collect();
            let ty = ge_ir::Type::tensor(&dims, t.dtype);
            Ok(value(
                self.uid,
                b.weight_raw(name, ty, t.bytes()).map_err(es_err)?,
            ))
        })
    }

    /// An inline `dense<…>` constant from an array.
    fn constant(&self, array: &Bound<'_, PyAny>) -> PyResult<Value> {
        let t = crate::arrays::to_host(array, "constant")?;
        let t = t.to_tensor().map_err(error)?;
        self.with(|b| Ok(value(self.uid, b.constant(&t).map_err(es_err)?)))
    }

    /// A rank-0 constant of element type `dtype` (`"f32"`).
    fn scalar(&self, v: f64, dtype: &str) -> PyResult<Value> {
        let d = ge_ir::DType::parse(dtype)
            .ok_or_else(|| error(format!("unknown element type '{dtype}'")))?;
        self.with(|b| Ok(value(self.uid, b.scalar(v, d).map_err(es_err)?)))
    }

    /// An upper bound of symbolic dim `sym` (for memory planning).
    fn symbol_bound(&self, sym: &str, bound: i64) -> PyResult<()> {
        self.with(|b| {
            b.symbol_bound(sym, bound);
            Ok(())
        })
    }

    /// Where weights go: `"resource"` (default), `"dense"`, or
    /// `"external"` with `path` (the bytes come back from `finish`).
    #[pyo3(signature = (storage, path = None))]
    fn set_weight_storage(&self, storage: &str, path: Option<String>) -> PyResult<()> {
        let s = match (storage, path) {
            ("resource", None) => WeightStorage::Resource,
            ("dense", None) => WeightStorage::Dense,
            ("external", Some(path)) => WeightStorage::External { path },
            _ => {
                return Err(error(
                    "weight storage is \"resource\", \"dense\" or \"external\" with a path",
                ))
            }
        };
        self.with(|b| {
            b.set_weight_storage(s);
            Ok(())
        })
    }

    /// The location (a name) of the ops built from now on.
    fn set_loc(&self, name: &str) -> PyResult<()> {
        self.with(|b| {
            b.set_loc(Location::name(name, None));
            Ok(())
        })
    }

    /// Build op `op` (`"graph.conv2d"`): `operands` in declaration order
    /// (a value, `None` for an absent optional operand, a list for a
    /// variadic one), `attrs` by attribute name. Returns the results.
    fn create(
        &self,
        op: &str,
        operands: &Bound<'_, PyList>,
        attrs: &Bound<'_, PyDict>,
    ) -> PyResult<Vec<Value>> {
        let def = es_def(op)?;
        let esop = def
            .interface::<es::EsOp>()
            .ok_or_else(|| error(format!("'{op}' has no ES method")))?;
        let method = esop.method;
        if operands.len() != def.operands.len() {
            return Err(error(format!(
                "{method}: {} operand groups given, '{op}' has {}",
                operands.len(),
                def.operands.len()
            )));
        }
        let ctx = context();
        let mut attr_list: Vec<(&'static str, ge_ir::attributes::Attribute)> = vec![];
        for (k, v) in attrs.iter() {
            let k: String = k.extract()?;
            let ad: &'static AttrDef = def
                .attrs
                .iter()
                .find(|a| a.name == k)
                .ok_or_else(|| error(format!("{method}: '{op}' has no attribute '{k}'")))?;
            if v.is_none() {
                continue;
            }
            let like = es::attr::default_attr(def, ad.name);
            let a = py_to_attr(ctx, ad.name, ad.kind, like, &v)
                .map_err(|e| error(format!("{method}: {}", e.value(v.py()))))?;
            if let Some(a) = a {
                if !ge_ir::builder::is_default(ad, a) {
                    attr_list.push((ad.name, a));
                }
            }
        }
        self.with(|b| {
            let mut one: Vec<Option<es::Tensor<'_>>> = vec![];
            let mut many: Vec<Vec<es::Tensor<'_>>> = vec![];
            for (od, v) in def.operands.iter().zip(operands.iter()) {
                let what = format!("{method}: operand '{}'", od.name);
                match od.arity {
                    Arity::One | Arity::Optional => {
                        if v.is_none() {
                            if od.arity == Arity::One {
                                return Err(error(format!("{what} is required")));
                            }
                            one.push(None);
                        } else {
                            let val = v.extract::<PyRef<'_, Value>>().map_err(|_| {
                                error(format!("{what} must be a tensor of this graph"))
                            })?;
                            one.push(Some(self.tensor(b, &val, &what)?));
                        }
                    }
                    Arity::Variadic => {
                        let mut ts = vec![];
                        for x in v
                            .try_iter()
                            .map_err(|_| error(format!("{what} must be a list of tensors")))?
                        {
                            let x = x?;
                            let val = x.extract::<PyRef<'_, Value>>().map_err(|_| {
                                error(format!("{what} must be a list of tensors of this graph"))
                            })?;
                            ts.push(self.tensor(b, &val, &what)?);
                        }
                        many.push(ts);
                    }
                }
            }
            let (mut oi, mut mi) = (0, 0);
            let mut groups: Vec<Group<'_, '_>> = vec![];
            for od in def.operands {
                match od.arity {
                    Arity::One => {
                        let t = one[oi].ok_or_else(|| error("missing operand"))?;
                        groups.push(Group::One(t));
                        oi += 1;
                    }
                    Arity::Optional => {
                        groups.push(Group::Opt(one[oi]));
                        oi += 1;
                    }
                    Arity::Variadic => {
                        groups.push(Group::Many(&many[mi]));
                        mi += 1;
                    }
                }
            }
            let ids = b
                .create_op(def, method, &groups, attr_list)
                .map_err(es_err)?;
            ids.into_iter()
                .map(|id| {
                    b.value(id)
                        .map(|t| value(self.uid, t))
                        .ok_or_else(|| error(format!("{method}: lost a result")))
                })
                .collect()
        })
    }

    /// End the function: return `values` (named `names`, default `out0`…).
    #[pyo3(signature = (values, names = None))]
    fn output(&self, values: Vec<PyRef<'_, Value>>, names: Option<Vec<String>>) -> PyResult<()> {
        let names = names.unwrap_or_else(|| (0..values.len()).map(|i| format!("out{i}")).collect());
        if names.len() != values.len() {
            return Err(error(format!(
                "output: {} names for {} values",
                names.len(),
                values.len()
            )));
        }
        self.with(|b| {
            let ts = values
                .iter()
                .map(|v| self.tensor(b, v, "output"))
                .collect::<PyResult<Vec<_>>>()?;
            b.output(&ts).map_err(es_err)?;
            if let Ok(mut n) = self.names.lock() {
                n.1 = names;
            }
            Ok(())
        })
    }

    /// The finished, verified module and the external weights' bytes.
    fn finish(&self) -> PyResult<(Module, Vec<u8>)> {
        guard(|| {
            let b = self
                .b
                .lock()
                .map_err(|_| error("the graph is unusable: an earlier call panicked"))?
                .take()
                .ok_or_else(|| error("the graph was finished: build a new one"))?;
            let (mut m, w) = b.finish_with_weights().map_err(es_err)?;
            let (ins, outs) = self.names.lock().map(|n| n.clone()).unwrap_or_default();
            ge_dialects::graph::func::check_io_names("input", ins.iter().map(|s| s.as_str()))
                .and_then(|()| {
                    ge_dialects::graph::func::check_io_names(
                        "output",
                        outs.iter().map(|s| s.as_str()),
                    )
                })
                .map_err(error)?;
            if let Some(f) = m.top_ops().first().copied() {
                ge_dialects::graph::func::set_io_names(m.body_mut(), f, &ins, &outs);
            }
            Ok((Module::new(m, None), w))
        })
    }

    /// Ops built so far.
    fn num_ops(&self) -> PyResult<usize> {
        self.with(|b| Ok(b.num_ops()))
    }
}

/// The Python type hint of an attribute kind (stubs and docstrings).
fn py_hint(kind: AttrKind) -> String {
    match kind {
        AttrKind::Bool | AttrKind::Unit => "bool".into(),
        AttrKind::I64 => "int".into(),
        AttrKind::F64 => "float".into(),
        AttrKind::Str | AttrKind::Symbol => "str".into(),
        AttrKind::Enum(names) => format!(
            "Literal[{}]",
            names
                .iter()
                .map(|n| format!("{n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        AttrKind::I64Array => "Sequence[int]".into(),
        AttrKind::F64Array => "Sequence[float]".into(),
        AttrKind::StrArray => "Sequence[str]".into(),
        AttrKind::Type => "DTypeLike".into(),
        AttrKind::Elements => "ArrayLike".into(),
        AttrKind::Dict => "str".into(),
        AttrKind::Any => "Any".into(),
    }
}

fn attr_info<'py>(
    py: Python<'py>,
    def: &'static OpDef,
    name: &str,
    py_name: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let i = def
        .attrs
        .iter()
        .position(|a| a.name == name)
        .ok_or_else(|| error(format!("'{}' declares no attribute '{name}'", def.name)))?;
    let ad = &def.attrs[i];
    d.set_item("name", ad.name)?;
    d.set_item("py_name", py_name)?;
    d.set_item("kind", ad.kind.describe())?;
    d.set_item("hint", py_hint(ad.kind))?;
    d.set_item("doc", ad.doc)?;
    d.set_item("optional", ad.optional)?;
    let default = def.default_values().get(i).copied().flatten();
    d.set_item("has_default", default.is_some() || ad.optional)?;
    match default {
        Some(a) => {
            d.set_item("default", attr_to_py(py, a)?)?;
            d.set_item("default_text", ad.default.unwrap_or(""))?;
        }
        None => {
            d.set_item("default", py.None())?;
            d.set_item("default_text", py.None())?;
        }
    }
    Ok(d)
}

/// Every ES method, as the op declarations define it (see the module docs).
#[pyfunction]
fn es_ops(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    guard(|| {
        let mut out = vec![];
        for e in es::es_ops() {
            let def = context()
                .op_def(e.op)
                .ok_or_else(|| error(format!("op '{}' is not registered", e.op)))?;
            let d = PyDict::new(py);
            d.set_item("op", e.op)?;
            d.set_item("method", e.method)?;
            d.set_item("summary", def.summary)?;
            d.set_item("description", def.description)?;
            d.set_item("signature", e.signature())?;
            let operands = PyList::empty(py);
            for od in def.operands {
                let arity = match od.arity {
                    Arity::One => "one",
                    Arity::Optional => "optional",
                    Arity::Variadic => "variadic",
                };
                operands.append((od.name, arity, od.constraint.describe()))?;
            }
            d.set_item("operands", operands)?;
            let positional = PyList::empty(py);
            for p in e.positional {
                positional.append(attr_info(py, def, p.name, p.rust_name)?)?;
            }
            d.set_item("positional", positional)?;
            let fields = PyList::empty(py);
            for f in e.fields {
                fields.append(attr_info(py, def, f.name, f.rust_name)?)?;
            }
            d.set_item("fields", fields)?;
            match e.results {
                EsResults::One => {
                    d.set_item("results", ("one", py.None(), Vec::<String>::new()))?
                }
                EsResults::Many => {
                    d.set_item("results", ("many", py.None(), Vec::<String>::new()))?
                }
                EsResults::Struct { name, fields } => {
                    d.set_item("results", ("struct", name, fields.to_vec()))?
                }
            }
            out.push(d);
        }
        Ok(out)
    })
}

/// The graph and data ops without an ES method, with the reason.
#[pyfunction]
fn es_excluded() -> Vec<(String, String)> {
    [&ge_dialects::graph::DIALECT, &ge_dialects::data::DIALECT]
        .into_iter()
        .flat_map(|d| d.ops())
        .filter_map(|o| es::exclusion_reason(o.name).map(|r| (o.name.to_string(), r.to_string())))
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GraphBuilder>()?;
    m.add_class::<Value>()?;
    m.add_function(wrap_pyfunction!(es_ops, m)?)?;
    m.add_function(wrap_pyfunction!(es_excluded, m)?)?;
    Ok(())
}
