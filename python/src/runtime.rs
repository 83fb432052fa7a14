//! `ge.Model` and `ge.Session`: compiled models run on numpy arrays.
//!
//! A run releases the GIL unless it is known to be short (`gil.rs`; other
//! Python threads go on; any number of threads may run one model at once,
//! each run on its own execution context); outputs are written in place
//! into the arrays returned when their shape is known before the run; inputs are named as the model names them, any symbolic dims
//! are bound from the arrays' shapes.

use crate::arrays::{
    descr_of, empty_with, fix_bools, lend, lend_out, ndarray_type, output_to_numpy, Lent,
};
use crate::errors::{error, guard, guard_nogil};
use crate::gil::Gil;
use crate::recycle::Last;
use crate::runner::{Loans, Runner, Scratch};
use crate::slot::GilSlot;
use ge_ir::DType;
use ge_runtime::{HostTensor, LoadOptions, RunOptions};
use numpy::{PyArrayDescr, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};
use std::cell::Cell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The inputs of a run, in the model's order: host tensors that may borrow
/// the caller's arrays, which this value keeps alive (the arrays are
/// private, so the tensors cannot outlive them).
pub struct Inputs<'py> {
    tensors: Vec<HostTensor>,
    _arrays: Vec<Bound<'py, PyAny>>,
}

impl Inputs<'_> {
    pub fn tensors(&self) -> &[HostTensor] {
        &self.tensors
    }
}

impl<'py> FromIterator<Lent<'py>> for Inputs<'py> {
    fn from_iter<I: IntoIterator<Item = Lent<'py>>>(it: I) -> Self {
        let (tensors, _arrays) = it.into_iter().map(Lent::into_parts).unzip();
        Inputs { tensors, _arrays }
    }
}

/// Inputs in the order of `names`, from a dict by name or a list in order.
/// `keys`: the names as Python strings, made once (a lookup by them hashes
/// nothing); `dtypes`: the element type each input is converted to when it
/// is an array of another dtype (empty: none is converted).
pub fn ordered_inputs<'py>(
    inputs: &Bound<'py, PyAny>,
    names: &[String],
    keys: &[Py<PyString>],
    dtypes: &[Option<DType>],
    what: &str,
) -> PyResult<Inputs<'py>> {
    let given = Given::of(inputs, names, what)?;
    let want = |i: usize| dtypes.get(i).copied().flatten();
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            lend(
                &given.get(i, names, keys, what)?,
                || format!("input '{n}'"),
                want(i),
            )
        })
        .collect()
}

/// The objects given for a function's inputs: a dict by name, or a tuple
/// or list in order (its length checked). A dict carries the position of
/// its next entry ([`Given::get`] walks it in step with the inputs).
pub enum Given<'a, 'py> {
    Dict(&'a Bound<'py, PyDict>, Cell<pyo3::ffi::Py_ssize_t>),
    Seq(Bound<'py, PyTuple>),
}

impl<'a, 'py> Given<'a, 'py> {
    pub fn of(inputs: &'a Bound<'py, PyAny>, names: &[String], what: &str) -> PyResult<Self> {
        if let Ok(d) = inputs.cast::<PyDict>() {
            if d.len() != names.len() {
                unknown_key(d, names, what)?;
            }
            return Ok(Given::Dict(d, Cell::new(0)));
        }
        let t = if let Ok(t) = inputs.cast::<PyTuple>() {
            t.clone()
        } else if let Ok(l) = inputs.cast::<PyList>() {
            l.to_tuple()
        } else {
            return Err(error(
                "inputs are a dict {name: array} or a list of arrays in order",
            ));
        };
        check_count(t.len(), names, what)?;
        Ok(Given::Seq(t))
    }

    /// The object given for input `i` (`names[i]`, `keys[i]` as a Python
    /// string).
    pub fn get(
        &self,
        i: usize,
        names: &[String],
        keys: &[Py<PyString>],
        what: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Given::Seq(t) => t.get_item(i),
            Given::Dict(d, pos) => {
                let py = d.py();
                let k = keys.get(i).ok_or_else(|| error("an input without a key"))?;
                // The dict's next entry, when its key is this input's name
                // object itself (a dict written in input order with string
                // literals, which are the interned names): no lookup.
                let (mut p, mut key, mut value) =
                    (pos.get(), std::ptr::null_mut(), std::ptr::null_mut());
                // SAFETY: `d` is a live dict (held, the GIL held);
                // `PyDict_Next` checks `p` against its entries and gives
                // borrowed references to the entry's key and value, the
                // value taken as a new reference before any other Python
                // code can run.
                if unsafe { pyo3::ffi::PyDict_Next(d.as_ptr(), &mut p, &mut key, &mut value) } != 0
                {
                    pos.set(p);
                    if std::ptr::eq(key, k.as_ptr()) {
                        // SAFETY: as above (`value` is live and non-null).
                        return Ok(unsafe { Bound::from_borrowed_ptr(py, value) });
                    }
                }
                match d.get_item(k.bind(py))? {
                    Some(v) => Ok(v),
                    None => {
                        unknown_key(d, names, what)?;
                        Err(error(format!(
                            "missing input '{}' of {what} (its inputs: {})",
                            names.get(i).map_or("?", |n| n.as_str()),
                            names.join(", ")
                        )))
                    }
                }
            }
        }
    }
}

/// The error for `n` inputs given to `what`, which takes `names`.
pub fn check_count(n: usize, names: &[String], what: &str) -> PyResult<()> {
    if n != names.len() {
        return Err(error(format!(
            "{what} takes {} inputs ({}), {n} given",
            names.len(),
            names.join(", "),
        )));
    }
    Ok(())
}

/// The error for a key of `d` that is not an input name, if there is one
/// (only on the way to an error: an unknown key is named first).
fn unknown_key(d: &Bound<'_, PyDict>, names: &[String], what: &str) -> PyResult<()> {
    for k in d.keys() {
        let k: String = k.extract()?;
        if !names.contains(&k) {
            return Err(error(format!(
                "{what} has no input '{k}' (its inputs: {})",
                names.join(", ")
            )));
        }
    }
    Ok(())
}

/// `names` as Python strings, interned (made once, for [`ordered_inputs`]).
pub fn keys(py: Python<'_>, names: &[String]) -> Vec<Py<PyString>> {
    names
        .iter()
        .map(|n| PyString::intern(py, n).unbind())
        .collect()
}

/// `(name, type)` pairs, each name given as its interned key (`keys`).
fn named<'py>(
    py: Python<'py>,
    keys: &[Py<PyString>],
    pairs: Vec<(String, String)>,
) -> Vec<(Bound<'py, PyString>, String)> {
    keys.iter()
        .zip(pairs)
        .map(|(k, (_, t))| (k.bind(py).clone(), t))
        .collect()
}

/// The element type of an `.air` tensor type (`"tensor<Bx4xf32>"`).
pub fn elem_type(ty: &str) -> Option<DType> {
    ge_ir::parser::parse_type_str(ge_ir::context::bare(), ty)
        .ok()
        .and_then(|t| t.dtype())
}

/// A loaded `.om` model.
#[pyclass(module = "ge", frozen)]
pub struct Model {
    model: ge_runtime::Model,
    input_names: Vec<String>,
    /// Each input's element type (what an array of another dtype is
    /// converted to).
    input_dtypes: Vec<Option<DType>>,
    output_names: Vec<String>,
    /// The names as interned Python strings, made once: what `inputs` and
    /// `outputs` give and each session's keys.
    input_keys: Vec<Py<PyString>>,
    output_keys: Vec<Py<PyString>>,
}

#[pymethods]
impl Model {
    /// Load an `.om` from a path or its bytes. `threads`: compute threads
    /// of a run; `max_memory` (bytes), `max_steps`, `timeout` (seconds):
    /// the limits of ge-run's flags of the same names; `soc`: refuse a
    /// model compiled for another SoC; `streams`: "serial" (streams take
    /// turns on the running thread) or "workers" (a thread per stream), as
    /// ge-run's `--streams`; `blocked_reads`: "measured", "always" or
    /// "never", as ge-run's `--blocked-reads`.
    #[new]
    #[pyo3(signature = (model, threads = 1, soc = None, max_memory = None, max_steps = ge_runtime::DEFAULT_MAX_STEPS, timeout = None, keep_formats = false, streams = "serial", blocked_reads = "measured"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        model: &Bound<'_, PyAny>,
        threads: usize,
        soc: Option<String>,
        max_memory: Option<u64>,
        max_steps: u64,
        timeout: Option<f64>,
        keep_formats: bool,
        streams: &str,
        blocked_reads: &str,
    ) -> PyResult<Model> {
        guard(|| {
            let stream_execution = streams.parse().map_err(error)?;
            let blocked_reads = blocked_reads.parse().map_err(error)?;
            let timeout = match timeout {
                Some(t) => Some(
                    std::time::Duration::try_from_secs_f64(t)
                        .map_err(|_| error(format!("timeout {t}: expected seconds >= 0")))?,
                ),
                None => None,
            };
            let opts = LoadOptions {
                threads: threads.max(1),
                soc,
                plain_layouts: !keep_formats,
                blocked_reads,
                max_memory,
                max_steps,
                timeout,
                stream_execution,
                ..Default::default()
            };
            let m = if let Ok(b) = model.cast::<PyBytes>() {
                let bytes = b.as_bytes().to_vec();
                py.detach(|| {
                    guard_nogil(|| {
                        ge_runtime::Model::from_bytes(&bytes, &opts).map_err(|e| e.to_string())
                    })
                })?
            } else if let Ok(p) = model.extract::<PathBuf>() {
                py.detach(|| {
                    guard_nogil(|| {
                        ge_runtime::Model::load_with(&p, &opts).map_err(|e| e.to_string())
                    })
                })?
            } else {
                return Err(error("a model is the path of an .om or its bytes"));
            };
            let input_names: Vec<String> = m.inputs().into_iter().map(|(n, _)| n).collect();
            let input_dtypes = m.inputs().iter().map(|(_, t)| elem_type(t)).collect();
            let output_names: Vec<String> = m.outputs().into_iter().map(|(n, _)| n).collect();
            Ok(Model {
                model: m,
                input_keys: keys(py, &input_names),
                output_keys: keys(py, &output_names),
                input_names,
                input_dtypes,
                output_names,
            })
        })
    }

    /// `[(name, type)]` of the inputs (`("x", "tensor<Bx4xf32>")`). The
    /// names are interned strings, the very objects a session's `run`
    /// finds a feed's entries by without a lookup (as it does a string
    /// literal's): `{m.inputs[0][0]: x}` is as cheap to pass as `{"x": x}`.
    #[getter]
    fn inputs<'py>(&self, py: Python<'py>) -> Vec<(Bound<'py, PyString>, String)> {
        named(py, &self.input_keys, self.model.inputs())
    }

    /// `[(name, type)]` of the outputs, the names interned (the keys of
    /// `run`'s result).
    #[getter]
    fn outputs<'py>(&self, py: Python<'py>) -> Vec<(Bound<'py, PyString>, String)> {
        named(py, &self.output_keys, self.model.outputs())
    }

    #[getter]
    fn name(&self) -> String {
        self.model.name().to_string()
    }

    #[getter]
    fn soc(&self) -> String {
        self.model.soc().to_string()
    }

    /// Per input: whether a run reads the caller's array in place (no copy)
    /// when its layout allows (C-contiguous, native-endian, 8-byte aligned,
    /// the model's dtype); else the run copies it into the model's buffer.
    #[getter]
    fn zero_copy_inputs(&self) -> Vec<bool> {
        self.model.zero_copy_inputs()
    }

    /// Upper bounds of the symbolic dims.
    #[getter]
    fn symbol_bounds(&self) -> Vec<(String, i64)> {
        self.model.symbol_bounds()
    }

    /// How many convolutions read and write NC1HWC0 blocks as they are
    /// (the `blocked_reads` option; ge-run's `--info`).
    #[getter]
    fn blocked_reads(&self) -> usize {
        self.model.blocked_reads()
    }

    /// Ops whose kernels run on the reference interpreter.
    #[getter]
    fn fallback_ops(&self) -> Vec<String> {
        self.model.fallback_ops()
    }

    /// A session (cheap; sessions and models may be used from any thread).
    /// `release_gil`: as for `Session.runner()` — `None` (the default) the
    /// rule of docs/python.md "Threads and the GIL", `True` / `False`
    /// always release / hold it while the model runs.
    #[pyo3(signature = (release_gil = None))]
    fn session(slf: &Bound<'_, Self>, release_gil: Option<bool>) -> Session {
        Session::of(slf.py(), slf.get(), release_gil)
    }

    /// Run once (`Session.run`).
    #[pyo3(signature = (inputs, trace = None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: &Bound<'py, PyAny>,
        trace: Option<PathBuf>,
    ) -> PyResult<Bound<'py, PyDict>> {
        Session::of(py, self, None).run(py, inputs, trace)
    }

    fn __repr__(&self) -> String {
        format!(
            "<ge.Model '{}' for {}: inputs [{}], outputs [{}]>",
            self.model.name(),
            self.model.soc(),
            self.input_names.join(", "),
            self.output_names.join(", ")
        )
    }
}

/// Runs a model: `run({"x": array}) -> {"y": array}`.
#[pyclass(module = "ge", frozen)]
pub struct Session {
    session: ge_runtime::Session,
    /// The model, for a runner's names and types.
    model: ge_runtime::Model,
    input_names: Vec<String>,
    /// The input names as Python strings, made once (the dict's keys).
    input_keys: Vec<Py<PyString>>,
    input_dtypes: Vec<Option<DType>>,
    /// The output names as Python strings, made once (the result dict's keys).
    output_keys: Vec<Py<PyString>>,
    /// Each output's element type and, when the model fixes it, its shape
    /// (what `run` makes the array of before the run).
    output_types: Vec<(Option<DType>, Option<Vec<usize>>)>,
    /// Each output's numpy dtype object (`arrays::descr_of`, made once):
    /// `run` makes its arrays with it and lends them knowing it.
    output_descrs: Vec<Option<Py<PyArrayDescr>>>,
    /// `numpy.ndarray` (`arrays::ndarray_type`), what those arrays are.
    ndarray: Py<PyType>,
    gil: Gil,
    /// What a run keeps for the next: the inputs' feed and the runtime's
    /// output tensors (`Session::run_reusing`; see `Runner::scratch`), the
    /// last result (`recycle.rs`).
    scratch: GilSlot<Scratch>,
    /// How many calls returned the last call's dict again, and how many
    /// output arrays were written again (`_recycled`, for the tests).
    recycled: [AtomicUsize; 2],
}

impl Session {
    /// The inputs of a run (a dict by name or a list in order).
    fn inputs<'py>(&self, inputs: &Bound<'py, PyAny>) -> PyResult<Inputs<'py>> {
        ordered_inputs(
            inputs,
            &self.input_names,
            &self.input_keys,
            &self.input_dtypes,
            "the model",
        )
    }

    fn of(py: Python<'_>, m: &Model, release_gil: Option<bool>) -> Session {
        let output_types: Vec<_> = m
            .model
            .outputs()
            .iter()
            .map(|(_, t)| (elem_type(t), static_shape(t)))
            .collect();
        Session {
            session: m.model.session(),
            model: m.model.clone(),
            input_names: m.input_names.clone(),
            input_keys: m.input_keys.iter().map(|k| k.clone_ref(py)).collect(),
            input_dtypes: m.input_dtypes.clone(),
            output_keys: m.output_keys.iter().map(|k| k.clone_ref(py)).collect(),
            output_descrs: output_types
                .iter()
                .map(|(dt, _)| dt.and_then(|d| descr_of(py, d)))
                .collect(),
            output_types,
            ndarray: ndarray_type(py),
            gil: Gil::of(release_gil),
            scratch: GilSlot::new(Scratch::default()),
            recycled: Default::default(),
        }
    }

    /// An array per output whose shape is known before the run — the
    /// model's, else the last run's: the last call's array when it may be
    /// written again and has that shape (`last`, see `recycle.rs`), else a
    /// new one — lent to the runtime's output tensor (the run writes it in
    /// place when its output has that shape), into `arrays` (the last
    /// call's vector, emptied: `None` for an output without one).
    #[allow(clippy::too_many_arguments)]
    fn lend_arrays(
        &self,
        py: Python<'_>,
        shapes: &[Vec<usize>],
        taken: &mut Vec<(usize, usize)>,
        arrays: &mut Vec<Option<Py<PyUntypedArray>>>,
        outs: &mut Vec<HostTensor>,
        inputs: &[HostTensor],
        last: &Last,
    ) {
        let n = self.output_types.len();
        if outs.len() < n {
            outs.resize_with(n, || HostTensor::zeros(DType::U8, &[0]));
        }
        taken.clear();
        arrays.clear();
        for (i, (dt, fixed)) in self.output_types.iter().enumerate() {
            let shape = fixed.as_deref().or(shapes.get(i).map(|s| s.as_slice()));
            let descr = self.output_descrs.get(i).and_then(|d| d.as_ref());
            let lent = match (dt, shape, descr) {
                (Some(dt), Some(shape), Some(d)) => {
                    let a = match last.array(py, i).filter(|a| same_dims(a.shape(), shape)) {
                        Some(a) => Some(a.clone()),
                        // SAFETY: the array is new and reaches Python only
                        // when the run kept the loan, so wrote every byte
                        // (zeroed first by `HostTensor::reset_zeros`); else
                        // it is dropped unseen.
                        None => unsafe { empty_with(py, &self.ndarray, d, shape) },
                    };
                    a.filter(|a| {
                        // SAFETY: no one but this call can reach the array
                        // (new, or the last call's that no one else holds:
                        // `recycle.rs`), and it is held in `arrays` until
                        // the loans end (`Loans`, dropped first). A new
                        // one's dtype object is `d` (numpy keeps a builtin
                        // one); a recycled one's is checked against it.
                        unsafe { lend_out(&mut outs[i], a, *dt, inputs, taken, Some(d)) }
                    })
                }
                _ => None,
            };
            arrays.push(lent.map(Bound::unbind));
        }
    }

    /// The result of a run into `outs` (the arrays lent to them in
    /// `arrays`): the last call's dict (`dict`, taken from `last`) or a new
    /// one, holding per output its array written in place or a new copy;
    /// kept in `last` for the next call.
    fn result<'py>(
        &self,
        py: Python<'py>,
        outs: &mut [HostTensor],
        arrays: &[Option<Py<PyUntypedArray>>],
        shapes: &mut Vec<Vec<usize>>,
        dict: Option<Bound<'py, PyDict>>,
        last: &mut Last,
    ) -> PyResult<Bound<'py, PyDict>> {
        if dict.is_some() {
            bump(&self.recycled[0]);
        }
        let dict = dict.unwrap_or_else(|| PyDict::new(py));
        shapes.resize_with(outs.len(), Vec::new);
        for (i, t) in outs.iter_mut().enumerate() {
            if let Some(s) = shapes.get_mut(i) {
                s.clone_from(&t.shape);
            }
            let arr = match arrays.get(i) {
                // Written in place.
                Some(Some(a)) if t.is_lent_mut() => {
                    fix_bools(t);
                    a.bind(py).clone().into_any()
                }
                _ => output_to_numpy(py, t)?,
            };
            match self.output_keys.get(i) {
                Some(k) => {
                    if last.put(&dict, i, k.bind(py).as_any(), &arr)? {
                        bump(&self.recycled[1]);
                    }
                }
                None => {
                    last.clear();
                    dict.set_item(format!("out{i}"), arr)?
                }
            }
        }
        last.keep(&dict, outs.len());
        Ok(dict)
    }
}

/// Count one in a `Session::recycled` counter: a load and a store, not a
/// locked add — only a call holding the session's scratch (`GilSlot`) can
/// recycle, so no two threads count at once.
fn bump(n: &AtomicUsize) {
    n.store(n.load(Relaxed) + 1, Relaxed);
}

/// Whether two shapes are equal: a loop, not the slices' `==` (a call of
/// `memcmp` for the two to four dims of a shape).
fn same_dims(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The shape of an `.air` tensor type whose dims are all static.
fn static_shape(ty: &str) -> Option<Vec<usize>> {
    let t = ge_ir::parser::parse_type_str(ge_ir::context::bare(), ty).ok()?;
    t.as_tensor()?
        .shape()
        .iter()
        .map(|d| match d {
            ge_ir::Dim::Static(n) => usize::try_from(*n).ok(),
            _ => None,
        })
        .collect()
}

#[pymethods]
impl Session {
    #[new]
    #[pyo3(signature = (model, release_gil = None))]
    fn new(model: &Bound<'_, Model>, release_gil: Option<bool>) -> Session {
        Session::of(model.py(), model.get(), release_gil)
    }

    /// Run on `inputs` (a dict by input name, or a list in order); returns
    /// `{output name: array}` in the model's output order, each an array no
    /// one else holds — new, or the last call's recycled when its caller let
    /// go of it (docs/python.md "Recycling") — the run wrote in place when
    /// its shape was known before the run. The
    /// GIL is released while the model runs unless the session's last
    /// timed run took under 20 µs (docs/python.md). `trace`: write a Perfetto trace of
    /// this run to that path (ge-run's `--trace`).
    #[pyo3(signature = (inputs, trace = None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: &Bound<'py, PyAny>,
        trace: Option<PathBuf>,
    ) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let (names, what) = (&self.input_names, "the model");
            let given = Given::of(inputs, names, what)?;
            let mut held = self.scratch.take(py);
            // Made only when needed: an unused one costs its construction and
            // drop on every call.
            let mut fresh: Option<Scratch> = None;
            let sc = match held.as_deref_mut() {
                Some(sc) => sc,
                // Another thread's run has it (or a panic left it taken):
                // this one starts afresh.
                None => fresh.insert(Scratch::default()),
            };
            let fed = sc.feed.lend(
                |i| given.get(i, names, &self.input_keys, what),
                names,
                &self.input_dtypes,
            )?;
            let opts = RunOptions {
                trace: trace.is_some(),
            };
            // The last call's dict and arrays, when no one else holds them
            // (`recycle.rs`); not for a traced run (its outputs are its own).
            let dict = match opts.trace {
                false => sc.last.take(py, &self.output_keys),
                true => {
                    sc.last.clear();
                    None
                }
            };
            // The call's arrays are held in the scratch (`sc.arrays`),
            // which outlives the loans.
            sc.arrays.clear();
            let outs = Loans(&mut sc.outs);
            if !opts.trace {
                let (shapes, taken, arrays) = (&sc.shapes, &mut sc.taken, &mut sc.arrays);
                self.lend_arrays(py, shapes, taken, arrays, outs.0, fed.tensors(), &sc.last);
            }
            let session = &self.session;
            let tensors = fed.tensors();
            // Without a trace, into the last run's tensors (no allocation
            // for outputs of an unchanged size) or the lent arrays.
            let out = &mut *outs.0;
            let r = self
                .gil
                .run(py, || {
                    guard_nogil(|| {
                        match opts.trace {
                            false => session.run_reusing(tensors, out).map(|()| None),
                            true => session.run_with(tensors, &opts).map(|r| {
                                *out = r.outputs;
                                r.trace
                            }),
                        }
                        .map_err(|e| e.to_string())
                    })
                })
                .map_err(PyErr::from)?;
            drop(fed);
            if let (Some(p), Some(t)) = (&trace, &r) {
                ge_ir::output::write(p.display().to_string(), t.to_json().as_bytes())
                    .map_err(|e| error(format!("cannot write '{}': {e}", p.display())))?;
            }
            let dict = self.result(py, outs.0, &sc.arrays, &mut sc.shapes, dict, &mut sc.last);
            // The loans end before the arrays can go.
            drop(outs);
            sc.arrays.clear();
            dict
        })
    }

    /// A runner: this session bound for repeated calls, the cheapest way to
    /// run a model from Python — `run = sess.runner(); (y,) = run(x)` takes
    /// the input arrays positionally (in `Model.inputs` order) and returns
    /// a tuple of output arrays that every call reuses (see `ge.Runner`).
    /// `outputs`: the caller's arrays to write the outputs into (a list in
    /// the model's output order or a dict by name; C-contiguous, writable,
    /// of each output's element type, and of its shape at every run).
    /// `release_gil`: `None` (the default) releases the GIL while the model
    /// runs unless its last timed run took under 20 µs (`Session.run`'s
    /// rule, docs/python.md "Threads and the GIL"); `True` always releases
    /// it, `False` always holds it (saving the release and re-acquisition,
    /// while no other Python thread runs).
    #[pyo3(signature = (outputs = None, release_gil = None))]
    fn runner(
        &self,
        py: Python<'_>,
        outputs: Option<&Bound<'_, PyAny>>,
        release_gil: Option<bool>,
    ) -> PyResult<Runner> {
        guard(|| Runner::new(py, self.session.clone(), &self.model, outputs, release_gil))
    }

    /// Whether the next `run` releases the GIL while the model runs (the
    /// rule: docs/python.md "Threads and the GIL").
    #[getter]
    fn releases_gil(&self) -> bool {
        self.gil.releases()
    }

    /// The nanoseconds of the last run timed for the GIL rule (`None`: not
    /// timed yet, or `release_gil=` forced it).
    #[getter]
    fn _last_run_ns(&self) -> Option<u64> {
        self.gil.last_ns()
    }

    /// `(dicts, arrays)`: how many calls so far returned the last call's
    /// dict again and how many output arrays a run wrote again, no one
    /// else holding them (docs/python.md "Copies"; for the tests).
    #[getter]
    fn _recycled(&self) -> (usize, usize) {
        (
            self.recycled[0].load(Relaxed),
            self.recycled[1].load(Relaxed),
        )
    }

    /// Shape plans built so far (one per concrete input shape).
    #[getter]
    fn plans_built(&self) -> usize {
        self.session.plans_built()
    }

    /// The seconds of each of `iterations` runs timed in Rust as ge-run times
    /// them (inputs converted once, `Session::run_with` alone in the loop):
    /// tools/bench/python_session.py compares `run`'s time from Python with
    /// these in the same build. `reusing`: `Session::run_reusing` into the
    /// last run's outputs instead (what a runner's run calls;
    /// tools/bench/python_session_instr.py counts both). `batch` > 1: each
    /// of the `iterations` samples is the mean of `batch` runs timed together
    /// (one clock read around them, as Python's `timeit` times a call), so
    /// neither side's number holds a clock read per run.
    #[pyo3(signature = (inputs, iterations, warmup = 0, reusing = false, batch = 1))]
    fn _time_rust(
        &self,
        py: Python<'_>,
        inputs: &Bound<'_, PyAny>,
        iterations: usize,
        warmup: usize,
        reusing: bool,
        batch: usize,
    ) -> PyResult<Vec<f64>> {
        guard(|| {
            let ins = self.inputs(inputs)?;
            let session = &self.session;
            let ins = ins.tensors();
            py.detach(|| {
                guard_nogil(|| {
                    let opts = RunOptions::default();
                    let mut outs = vec![];
                    let mut once = || {
                        match reusing {
                            true => session.run_reusing(ins, &mut outs),
                            false => session.run_with(ins, &opts).map(drop),
                        }
                        .map_err(|e| e.to_string())
                    };
                    for _ in 0..warmup {
                        once()?;
                    }
                    let mut times = Vec::with_capacity(iterations);
                    let batch = batch.max(1);
                    for _ in 0..iterations {
                        let t = std::time::Instant::now();
                        for _ in 0..batch {
                            once()?;
                        }
                        times.push(t.elapsed().as_secs_f64() / batch as f64);
                    }
                    Ok(times)
                })
            })
            .map_err(PyErr::from)
        })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()?;
    m.add_class::<Session>()?;
    m.add_class::<Runner>()?;
    Ok(())
}
