//! Modules: parse, print, walk, verify; pass pipelines (MLIR's grammar),
//! `.rr` rules, eqsat reports, the reference interpreter.

use crate::errors::{diag_error, error, error_at, guard, guard_nogil};
use crate::values::{attr_to_py, type_text};
use ge_ir::body::WalkOrder;
use ge_ir::diagnostics::{Diagnostic, Pos, SourceMap};
use ge_ir::interp::Interpreter;
use ge_ir::parser::{parse_module, ParseOptions};
use ge_ir::pass::manager::{run_pipeline, Instrumentation};
use ge_ir::pass::{PassContext, PassManagerOptions};
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::Context;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::sync::{Arc, Mutex, OnceLock};

/// The context of every dialect and pass (rules loaded by the user get a
/// context of their own per call).
pub fn context() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(ge_compile::context)
}

/// A source text, kept to render diagnostics that point into it.
#[derive(Clone)]
pub struct Source {
    pub name: String,
    pub text: Arc<str>,
}

/// An IR module (`builtin.module`).
#[pyclass(module = "ge")]
pub struct Module {
    pub m: Mutex<ge_ir::Module>,
    /// The text it was parsed from (for diagnostics).
    pub source: Option<Source>,
}

impl Module {
    pub fn new(m: ge_ir::Module, source: Option<Source>) -> Module {
        Module {
            m: Mutex::new(m),
            source,
        }
    }

    pub fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, ge_ir::Module>> {
        self.m.lock().map_err(|_| {
            error("the module is unusable: an earlier call panicked while changing it")
        })
    }

    /// A source map with the module's text as file 0.
    fn source_map(&self) -> SourceMap {
        let mut sm = SourceMap::new();
        if let Some(s) = &self.source {
            sm.add(&s.name, s.text.clone());
        }
        sm
    }

    pub fn text(&self, generic: bool, debuginfo: bool) -> PyResult<String> {
        let m = self.lock()?;
        Ok(print_module(
            &m,
            PrintOptions {
                generic,
                debuginfo,
                hex_elements_over: None,
            },
        ))
    }
}

/// Parse `.air` text; errors carry file:line:col.
pub fn parse_text(py: Python<'_>, text: &str, name: &str, verify: bool) -> PyResult<Module> {
    let ctx = context();
    let src: Arc<str> = Arc::from(text);
    let mut sm = SourceMap::new();
    let file_id = sm.add(name, src.clone());
    let parsed = guard_nogil(|| {
        Ok(parse_module(
            ctx,
            name,
            text,
            ParseOptions {
                file_id,
                ..Default::default()
            },
        ))
    })
    .map_err(PyErr::from)?;
    let m = parsed.map_err(|d| diag_error(py, &sm, &[*d]))?;
    if verify {
        let diags = ge_ir::verifier::verify_module(&m);
        if diags.iter().any(|d| d.is_error()) {
            return Err(diag_error(py, &sm, &diags));
        }
    }
    Ok(Module::new(
        m,
        Some(Source {
            name: name.to_string(),
            text: src,
        }),
    ))
}

/// `.rr` rewrite rules: their sources, checked when loaded and compiled
/// again into the context of each call that uses them.
#[pyclass(module = "ge")]
#[derive(Clone)]
pub struct Rules {
    sources: Vec<Source>,
    names: Vec<String>,
}

#[pymethods]
impl Rules {
    /// Rules from `.rr` text (`name` is used in error locations).
    #[staticmethod]
    #[pyo3(signature = (text, name = "<rules>"))]
    fn from_string(py: Python<'_>, text: &str, name: &str) -> PyResult<Rules> {
        guard(|| {
            let src = Source {
                name: name.to_string(),
                text: Arc::from(text),
            };
            let (_, rules) = compile_rules(py, std::slice::from_ref(&src), 0)?;
            Ok(Rules {
                sources: vec![src],
                names: rules.iter().map(|r| r.name.clone()).collect(),
            })
        })
    }

    /// Rules from an `.rr` file.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Rules> {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| error(format!("cannot read rule file '{}': {e}", path.display())))?;
        Rules::from_string(py, &text, &path.display().to_string())
    }

    /// The rules' names, in file order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    fn __len__(&self) -> usize {
        self.names.len()
    }

    /// These rules and `other`'s.
    fn __add__(&self, other: &Rules) -> Rules {
        Rules {
            sources: [self.sources.clone(), other.sources.clone()].concat(),
            names: [self.names.clone(), other.names.clone()].concat(),
        }
    }

    fn __repr__(&self) -> String {
        format!("Rules({})", self.names.join(", "))
    }
}

/// Parse rule sources as files `first_id..` of a source map.
fn compile_rules(
    py: Python<'_>,
    sources: &[Source],
    first_id: usize,
) -> PyResult<(SourceMap, Vec<ge_rewrites::rr::ast::Rule>)> {
    let mut sm = SourceMap::new();
    // Placeholder files keep the ids in step with the caller's map.
    for _ in 0..first_id {
        sm.add("", Arc::from(""));
    }
    let mut rules = vec![];
    for s in sources {
        let f = sm.add(&s.name, s.text.clone());
        match ge_rewrites::rr::parse_rules(context(), &s.name, f, &s.text) {
            Ok(rs) => rules.extend(rs),
            Err(d) => return Err(diag_error(py, &sm, &[*d])),
        }
    }
    Ok((sm, rules))
}

/// The rules a call gets, from a `Rules`, `.rr` text or a path.
fn rules_arg(v: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Source>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(vec![]);
    };
    if let Ok(r) = v.extract::<PyRef<'_, Rules>>() {
        return Ok(r.sources.clone());
    }
    if let Ok(list) = v.cast::<PyList>() {
        let mut out = vec![];
        for x in list.iter() {
            out.extend(rules_arg(Some(&x))?);
        }
        return Ok(out);
    }
    Err(error(
        "rules must be a ge.Rules (ge.Rules.from_string / from_file) or a list of them",
    ))
}

/// Run a pass pipeline on `m` in place; the passes' reports are returned.
pub fn run_passes(
    py: Python<'_>,
    module: &Module,
    pipeline: &str,
    rules: &[Source],
    extensions: Vec<Arc<dyn std::any::Any + Send + Sync>>,
) -> PyResult<String> {
    // The module's text is file 0, the pipeline file 1, the rules after.
    let mut sm = module.source_map();
    if sm_is_empty(module) {
        sm.add("<module>", Arc::from(""));
    }
    let pipe_file = sm.add("<pass-pipeline>", Arc::from(pipeline));
    let own_ctx;
    let ctx: &Context = if rules.is_empty() && extensions.is_empty() {
        context()
    } else {
        let (rsm, parsed) = compile_rules(py, rules, pipe_file + 1)?;
        for f in (pipe_file + 1)..(pipe_file + 1 + rules.len()) {
            sm.add(rsm.name(f), Arc::from(rsm.text(f)));
        }
        let mut c = ge_compile::context();
        if !parsed.is_empty() {
            c.extensions
                .push(Arc::new(ge_rewrites::library::UserRules(parsed)));
        }
        c.extensions.extend(extensions);
        own_ctx = c;
        &own_ctx
    };
    let pm = ge_ir::pass::pipeline::parse_pipeline(&ctx.passes, pipeline).map_err(|e| {
        let d = Diagnostic::error(
            e.message,
            Pos::Span {
                file: pipe_file,
                range: e.range,
            },
        );
        diag_error(py, &sm, &[d])
    })?;
    let mut guard = module.lock()?;
    let m: &mut ge_ir::Module = &mut guard;
    let result = py.detach(|| {
        guard_nogil(|| {
            let cx = PassContext {
                ctx,
                output: Default::default(),
            };
            let inst = Instrumentation::default();
            let r = run_pipeline(&pm, m, &cx, &PassManagerOptions::default(), &inst);
            let out = cx.output.into_inner().unwrap_or_default();
            Ok((r, out))
        })
    });
    let (r, out) = result.map_err(PyErr::from)?;
    if let Err(diags) = r {
        return Err(diag_error(py, &sm, &diags));
    }
    Ok(out.report)
}

fn sm_is_empty(m: &Module) -> bool {
    m.source.is_none()
}

/// What `walk` copies out of an op while the module is locked.
struct OpSnap {
    name: String,
    attrs: Vec<(String, ge_ir::attributes::Attribute)>,
    operand_types: Vec<String>,
    result_types: Vec<String>,
    location: String,
    depth: usize,
    num_regions: usize,
}

/// One op of a module, as `Module.walk()` reports it (a snapshot).
#[pyclass(module = "ge", frozen, get_all)]
pub struct Operation {
    /// `graph.conv2d`
    name: String,
    /// Attribute name → value (numbers, strings, lists, dicts; dense
    /// elements as numpy arrays; types, symbols and others as `.air` text).
    attributes: Py<PyDict>,
    operand_types: Vec<String>,
    result_types: Vec<String>,
    /// `loc(...)` text: `"file.air":3:5`, a name, or `unknown`.
    location: String,
    /// How many ops enclose it (0: the module's own ops).
    depth: usize,
    num_regions: usize,
}

#[pymethods]
impl Operation {
    fn __repr__(&self) -> String {
        format!(
            "Operation({}: ({}) -> ({}))",
            self.name,
            self.operand_types.join(", "),
            self.result_types.join(", ")
        )
    }
}

#[pymethods]
impl Module {
    /// Print as `.air` (custom form; `generic=True`: MLIR's generic form;
    /// `debuginfo=True`: with `loc(...)`).
    #[pyo3(signature = (generic = false, debuginfo = false))]
    fn print(&self, generic: bool, debuginfo: bool) -> PyResult<String> {
        guard(|| self.text(generic, debuginfo))
    }

    fn __str__(&self) -> PyResult<String> {
        self.print(false, false)
    }

    fn __repr__(&self) -> PyResult<String> {
        let names = self.functions()?;
        Ok(format!("<ge.Module functions=[{}]>", names.join(", ")))
    }

    /// A deep copy.
    fn copy(&self) -> PyResult<Module> {
        let m = self.lock()?.clone();
        Ok(Module::new(m, self.source.clone()))
    }

    /// Verify; errors raise `ge.Error` (with file:line:col when the module
    /// was parsed from text); warnings are returned as rendered text.
    fn verify(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        guard(|| {
            let m = self.lock()?;
            let diags = ge_ir::verifier::verify_module(&m);
            let sm = self.source_map();
            if diags.iter().any(|d| d.is_error()) {
                return Err(diag_error(py, &sm, &diags));
            }
            Ok(diags.iter().map(|d| sm.render(d)).collect())
        })
    }

    /// The names of the module's functions.
    fn functions(&self) -> PyResult<Vec<String>> {
        let m = self.lock()?;
        let b = m.body();
        Ok(m.top_ops()
            .into_iter()
            .filter_map(|o| {
                b.op(o)
                    .attr("sym_name")
                    .and_then(|a| a.as_str())
                    .map(String::from)
            })
            .collect())
    }

    /// Every op, nested ones too, in textual order (pre-order); `name`
    /// keeps only ops of that name.
    #[pyo3(signature = (name = None))]
    fn walk(&self, py: Python<'_>, name: Option<&str>) -> PyResult<Vec<Operation>> {
        guard(|| {
            let m = self.lock()?;
            let mut ops: Vec<OpSnap> = vec![];
            // Depth of each body's top ops: isolated ops (functions) own
            // the body their regions live in; pre-order meets them first.
            let mut base: std::collections::HashMap<*const ge_ir::body::Body, usize> =
                std::collections::HashMap::new();
            m.body().walk_deep(WalkOrder::Pre, &mut |body, o| {
                let d = body.op(o);
                let mut depth = base.get(&(body as *const _)).copied().unwrap_or(0);
                let mut p = body.parent_op(o);
                while let Some(q) = p {
                    depth += 1;
                    p = body.parent_op(q);
                }
                if let Some(inner) = d.inner.as_deref() {
                    base.insert(inner as *const _, depth + 1);
                }
                let n = d.name.as_str();
                if name.is_some_and(|want| want != n) {
                    return;
                }
                let attrs = d
                    .attrs
                    .entries()
                    .iter()
                    .map(|(k, v)| (k.as_str().to_string(), *v))
                    .collect();
                ops.push(OpSnap {
                    name: n.to_string(),
                    attrs,
                    operand_types: body.operand_types(o).into_iter().map(type_text).collect(),
                    result_types: body.result_types(o).into_iter().map(type_text).collect(),
                    location: d.loc.to_string(),
                    depth,
                    num_regions: d.regions().len(),
                });
            });
            ops.into_iter()
                .map(|op| {
                    let dict = PyDict::new(py);
                    for (k, v) in op.attrs {
                        dict.set_item(k, attr_to_py(py, v)?)?;
                    }
                    Ok(Operation {
                        name: op.name,
                        attributes: dict.unbind(),
                        operand_types: op.operand_types,
                        result_types: op.result_types,
                        location: op.location,
                        depth: op.depth,
                        num_regions: op.num_regions,
                    })
                })
                .collect()
        })
    }

    /// Run a pass pipeline in MLIR's grammar
    /// (`"builtin.module(graph.func(canonicalize, cse))"`, or a named one
    /// such as `"atc"`) on this module, in place. `rules` (a `ge.Rules`)
    /// are available to `apply-rules` and eqsat. Returns the passes'
    /// reports (text).
    #[pyo3(signature = (pipeline, rules = None))]
    fn run_passes(
        &self,
        py: Python<'_>,
        pipeline: &str,
        rules: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        guard(|| {
            let rules = rules_arg(rules)?;
            run_passes(py, self, pipeline, &rules, vec![])
        })
    }

    /// Equality saturation (`graph.func(eqsat{...})`) in place; options
    /// are the pass's (`extract="tree"`, `node_limit=5000`, `soc=...`,
    /// `rules=[...]` names/labels as a list). Returns the report per
    /// function: `{"main": {"iterations": 3, "enodes": ..., "eclasses":
    /// ..., "stop": "saturated", "cost_before_us": ..., "cost_after_us":
    /// ..., "gain_percent": ..., "time_ms": ...}}`.
    #[pyo3(signature = (rules = None, **options))]
    fn eqsat<'py>(
        &self,
        py: Python<'py>,
        rules: Option<&Bound<'py, PyAny>>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let sources = rules_arg(rules)?;
            let mut opts = vec!["report=true".to_string()];
            if let Some(o) = options {
                for (k, v) in o.iter() {
                    let k: String = k.extract()?;
                    opts.push(format!("{}={}", k.replace('_', "-"), option_text(&v)?));
                }
            }
            let pipeline = format!("builtin.module(graph.func(eqsat{{{}}}))", opts.join(" "));
            let report = run_passes(py, self, &pipeline, &sources, vec![])?;
            eqsat_report(py, &report)
        })
    }

    /// Run function `func` (default: `main`, else the first public one)
    /// with the reference interpreter. `inputs`: a dict by argument name
    /// (`ge.name`, else `arg0`…) or a list in order. Returns a dict of
    /// numpy arrays by output name.
    #[pyo3(signature = (inputs, func = None))]
    fn interpret<'py>(
        &self,
        py: Python<'py>,
        inputs: &Bound<'py, PyAny>,
        func: Option<String>,
    ) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let m = self.lock()?;
            let name = match func {
                Some(f) => f,
                None => {
                    let names = ge_driver::run::public_functions(&m);
                    names
                        .iter()
                        .find(|n| *n == "main")
                        .or(names.first())
                        .cloned()
                        .ok_or_else(|| error("the module has no public function to run"))?
                }
            };
            let f = m
                .lookup_symbol(&name)
                .ok_or_else(|| error(format!("no function named '@{name}'")))?;
            let (in_names, out_names) =
                ge_dialects::graph::func::io_names_or_default(m.body().op(f));
            let keys = crate::runtime::keys(inputs.py(), &in_names);
            let args = crate::runtime::ordered_inputs(
                inputs,
                &in_names,
                &keys,
                &[],
                &format!("'@{name}'"),
            )?;
            let args: Vec<ge_ir::tensor::Tensor> = args
                .tensors()
                .iter()
                .map(|t| t.to_tensor().map_err(error))
                .collect::<PyResult<_>>()?;
            let sm = self.source_map();
            let m: &ge_ir::Module = &m;
            let results = py
                .detach(|| {
                    guard_nogil(|| {
                        let interp = Interpreter::new(m);
                        Ok(interp.run_function(&name, args))
                    })
                })
                .map_err(PyErr::from)?
                .map_err(|e| diag_error(py, &sm, &[e.to_diagnostic()]))?;
            let out = PyDict::new(py);
            for (i, t) in results.iter().enumerate() {
                let n = out_names
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("out{i}"));
                let host = ge_runtime::HostTensor::from_tensor(t);
                out.set_item(n, crate::arrays::to_numpy(py, &host)?)?;
            }
            Ok(out)
        })
    }

    /// Write the module's `.air` text to `path` (atomically).
    #[pyo3(signature = (path, generic = false))]
    fn save(&self, path: &str, generic: bool) -> PyResult<()> {
        guard(|| {
            let text = self.text(generic, false)?;
            ge_ir::output::write(path, text.as_bytes())
                .map_err(|e| error(format!("cannot write '{path}': {e}")))
        })
    }
}

/// A pass option's text from a Python value (`True` → `true`, lists → `a,b`).
fn option_text(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(b) = v.extract::<bool>() {
        return Ok(b.to_string());
    }
    if let Ok(s) = v.extract::<String>() {
        return Ok(s);
    }
    if let Ok(xs) = v.extract::<Vec<String>>() {
        return Ok(xs.join(","));
    }
    Ok(v.str()?.to_string())
}

/// The eqsat report lines as a dict per function.
fn eqsat_report<'py>(py: Python<'py>, report: &str) -> PyResult<Bound<'py, PyDict>> {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r"eqsat @(\S+): (\d+) iterations, (\d+) e-nodes, (\d+) e-classes, stop: (.*), cost ([0-9.eE+-]+) us -> ([0-9.eE+-]+) us \(([0-9.eE+-]+)% gain\), ([0-9.eE+-]+) ms",
        )
        .expect("a valid regex literal")
    });
    let out = PyDict::new(py);
    for line in report.lines() {
        let Some(c) = re.captures(line) else { continue };
        let d = PyDict::new(py);
        let int = |i: usize| c[i].parse::<i64>().unwrap_or(0);
        let float = |i: usize| c[i].parse::<f64>().unwrap_or(f64::NAN);
        d.set_item("iterations", int(2))?;
        d.set_item("enodes", int(3))?;
        d.set_item("eclasses", int(4))?;
        d.set_item("stop", &c[5])?;
        d.set_item("cost_before_us", float(6))?;
        d.set_item("cost_after_us", float(7))?;
        d.set_item("gain_percent", float(8))?;
        d.set_item("time_ms", float(9))?;
        out.set_item(&c[1], d)?;
    }
    Ok(out)
}

/// `ge.parse(text, name="<string>", verify=True)`.
#[pyfunction]
#[pyo3(signature = (text, name = "<string>", verify = true))]
fn parse(py: Python<'_>, text: &str, name: &str, verify: bool) -> PyResult<Module> {
    guard(|| parse_text(py, text, name, verify))
}

/// `ge.load(path)`: parse an `.air` file.
#[pyfunction]
#[pyo3(signature = (path, verify = true))]
fn load(py: Python<'_>, path: std::path::PathBuf, verify: bool) -> PyResult<Module> {
    guard(|| {
        let bytes = std::fs::read(&path)
            .map_err(|e| error(format!("cannot read '{}': {e}", path.display())))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            error_at(
                py,
                format!(
                    "'{}' is not UTF-8 (byte {})",
                    path.display(),
                    e.utf8_error().valid_up_to()
                ),
                None,
                vec![],
            )
        })?;
        parse_text(py, &text, &path.display().to_string(), verify)
    })
}

/// The names of every registered op (what `ge-opt --list-ops` lists), by dialect.
#[pyfunction]
fn list_ops() -> Vec<(String, Vec<String>)> {
    context()
        .dialects()
        .iter()
        .map(|d| {
            let mut ops: Vec<String> = d.ops().map(|o| o.name.to_string()).collect();
            ops.sort();
            (d.name.to_string(), ops)
        })
        .collect()
}

/// The registered passes' names.
#[pyfunction]
fn list_passes() -> Vec<String> {
    context()
        .passes
        .passes()
        .map(|p| p.info.name.to_string())
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::errors::register_defaults(m)?;
    m.add_class::<Module>()?;
    m.add_class::<Operation>()?;
    m.add_class::<Rules>()?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(list_ops, m)?)?;
    m.add_function(wrap_pyfunction!(list_passes, m)?)?;
    Ok(())
}
