//! `ge.Runner` (`Session.runner()`): the call path for a model run many
//! times from Python, as cheap as the binding can make it (issue 20: within
//! 10 % of ge-run's in-process time on a small model).
//!
//! What `Session.run` pays per call and a runner does not: the input names
//! looked up in a dict (a runner takes the arrays positionally, in the
//! model's input order), a new numpy array per output and a new result
//! dict (a runner writes each output into an array it made once — or the
//! caller's own, `outputs=` — and returns the same tuple every call), and,
//! with `release_gil=False`, dropping and taking back the GIL around a run
//! too short for another thread to use it. What it remembers from the last
//! call (each checked again at every call, see `feed.rs`): the dtype object
//! of each input array read in place, the vectors of the inputs, the
//! runtime's output tensors, and the dtype object of each output array.

use crate::arrays::{copy_into, fits, still_fits, to_numpy, writable_array};
use crate::errors::{error, guard, guard_nogil};
use crate::feed::Feed;
use crate::runtime::{check_count, elem_type};
use ge_ir::DType;
use ge_runtime::HostTensor;
use numpy::{PyArrayDescr, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// A model bound for repeated runs: `r = sess.runner(); (y,) = r.run(x)`.
#[pyclass(module = "ge", frozen)]
pub struct Runner {
    /// What a call keeps for the next: the inputs' [`Feed`] and the
    /// runtime's output tensors (`Session::run_reusing`: no allocation for
    /// outputs of an unchanged size). Only ever locked with `try_lock`: a
    /// call that finds it taken (another thread's call) starts afresh.
    scratch: Mutex<Scratch>,
    session: ge_runtime::Session,
    input_names: Vec<String>,
    input_dtypes: Vec<Option<DType>>,
    output_names: Vec<String>,
    /// The arrays are the caller's (`outputs=`): never replaced, so a run
    /// whose outputs do not fit them is an error.
    fixed: bool,
    release_gil: bool,
    /// The output arrays, returned as this tuple by every call (`None`
    /// until the first run when the runner makes them). Locked while a
    /// call writes them; only ever locked with the GIL held.
    outputs: Mutex<Option<Outs>>,
}

/// What one call of a runner (or a session) keeps for the next.
#[derive(Default)]
pub struct Scratch {
    pub feed: Feed,
    pub outs: Vec<HostTensor>,
}

/// The output arrays and, per array, the dtype object it had when it was
/// last found to fit its output (`None`: not yet checked).
struct Outs {
    tuple: Py<PyTuple>,
    descrs: Vec<Option<Py<PyArrayDescr>>>,
}

impl Outs {
    fn new(tuple: Py<PyTuple>) -> Outs {
        Outs {
            tuple,
            descrs: vec![],
        }
    }
}

impl Runner {
    pub fn new(
        py: Python<'_>,
        session: ge_runtime::Session,
        model: &ge_runtime::Model,
        outputs: Option<&Bound<'_, PyAny>>,
        release_gil: bool,
    ) -> PyResult<Runner> {
        let inputs = model.inputs();
        let outs = model.outputs();
        let output_names: Vec<String> = outs.iter().map(|(n, _)| n.clone()).collect();
        let given = match outputs {
            Some(o) => Some(caller_outputs(py, o, &outs)?),
            None => None,
        };
        Ok(Runner {
            scratch: Mutex::new(Scratch::default()),
            session,
            input_names: inputs.iter().map(|(n, _)| n.clone()).collect(),
            input_dtypes: inputs.iter().map(|(_, t)| elem_type(t)).collect(),
            output_names,
            fixed: given.is_some(),
            release_gil,
            outputs: Mutex::new(given.map(Outs::new)),
        })
    }

    /// The lock on the output arrays. Taken with the GIL held and never
    /// held across a release of it, so it is free unless a call on another
    /// thread was switched out (the GC ran Python code) while holding it:
    /// then wait for it without the GIL, so that call can finish.
    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, Option<Outs>> {
        loop {
            match self.outputs.try_lock() {
                Ok(g) => return g,
                // A panic while it was held (reported as ge.InternalError)
                // left the arrays whole: each is written by one memcpy.
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(TryLockError::WouldBlock) => py.detach(std::thread::yield_now),
            }
        }
    }

    /// Write the run's outputs into the arrays; `false` when they do not
    /// fit (first run, another shape), with what does not fit. An array
    /// whose dtype object is the one it had when it last fit is checked
    /// for shape and flags only ([`still_fits`]).
    fn fill(
        &self,
        o: &mut Outs,
        py: Python<'_>,
        outs: &[HostTensor],
    ) -> PyResult<Result<(), String>> {
        let t = o.tuple.bind(py);
        if t.len() != outs.len() {
            return Ok(Err(format!(
                "the run gives {} outputs, the runner has {} arrays",
                outs.len(),
                t.len()
            )));
        }
        o.descrs.resize_with(outs.len(), || None);
        for (i, (out, seen)) in outs.iter().zip(o.descrs.iter_mut()).enumerate() {
            let item = t.get_borrowed_item(i)?;
            let a = item
                .cast::<PyUntypedArray>()
                .map_err(|_| error("a runner output is not an array"))?;
            if seen.as_ref().is_some_and(|d| still_fits(out, &a, d)) {
                continue;
            }
            if let Err(why) = fits(out, &a) {
                *seen = None;
                return Ok(Err(format!("output '{}': {why}", self.name(i))));
            }
            *seen = Some(a.dtype().unbind());
        }
        for (i, out) in outs.iter().enumerate() {
            let item = t.get_borrowed_item(i)?;
            if let Ok(a) = item.cast::<PyUntypedArray>() {
                copy_into(out, &a);
            }
        }
        Ok(Ok(()))
    }

    /// The runner's arrays holding `outs` (the same arrays as the last
    /// call's when they fit, else new ones — or an error for the caller's).
    fn arrays<'py>(&self, py: Python<'py>, outs: &[HostTensor]) -> PyResult<Bound<'py, PyTuple>> {
        let mut slot = self.lock(py);
        if let Some(o) = slot.as_mut() {
            match self.fill(o, py, outs)? {
                Ok(()) => return Ok(o.tuple.bind(py).clone()),
                Err(why) if self.fixed => {
                    return Err(error(format!("{why} (the arrays given as outputs=)")))
                }
                Err(_) => {}
            }
        }
        let arrays = outs
            .iter()
            .map(|o| to_numpy(py, o))
            .collect::<PyResult<Vec<_>>>()?;
        let t = PyTuple::new(py, arrays)?;
        *slot = Some(Outs::new(t.clone().unbind()));
        Ok(t)
    }

    fn name(&self, i: usize) -> &str {
        self.output_names.get(i).map_or("?", |s| s.as_str())
    }
}

/// The caller's output arrays (`outputs=`, a list in the model's output
/// order or a dict by name), checked once: one per output, each a
/// C-contiguous, aligned, writable array of the output's element type.
fn caller_outputs(
    py: Python<'_>,
    given: &Bound<'_, PyAny>,
    outs: &[(String, String)],
) -> PyResult<Py<PyTuple>> {
    let names = || {
        outs.iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let items: Vec<Bound<'_, PyAny>> = if let Ok(d) = given.cast::<PyDict>() {
        for k in d.keys() {
            let k: String = k.extract()?;
            if !outs.iter().any(|(n, _)| *n == k) {
                return Err(error(format!(
                    "the model has no output '{k}' (its outputs: {})",
                    names()
                )));
            }
        }
        outs.iter()
            .map(|(n, _)| {
                d.get_item(n)?.ok_or_else(|| {
                    error(format!(
                        "outputs= has no array for output '{n}' (its outputs: {})",
                        names()
                    ))
                })
            })
            .collect::<PyResult<_>>()?
    } else if given.is_instance_of::<PyList>() || given.is_instance_of::<PyTuple>() {
        given.try_iter()?.collect::<PyResult<_>>()?
    } else {
        return Err(error(
            "outputs= is a list of arrays in the model's output order or a dict {name: array}",
        ));
    };
    if items.len() != outs.len() {
        return Err(error(format!(
            "the model has {} outputs ({}), outputs= gives {} arrays",
            outs.len(),
            names(),
            items.len()
        )));
    }
    for (a, (n, ty)) in items.iter().zip(outs) {
        writable_array(a, elem_type(ty), &format!("output '{n}'"))?;
    }
    Ok(PyTuple::new(py, items)?.unbind())
}

#[pymethods]
impl Runner {
    /// Run on the input arrays, positional in the model's input order;
    /// returns the tuple of output arrays — the same arrays every call,
    /// overwritten by it (copy one to keep it). The runner's own arrays are
    /// made again when a run's output shapes change (dynamic shapes); the
    /// caller's (`outputs=`) must fit every run (shape and element type)
    /// or the call fails naming the output.
    #[pyo3(signature = (*inputs))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        guard(|| {
            check_count(inputs.len(), &self.input_names, "the model")?;
            let mut held = self.scratch.try_lock();
            let mut fresh = Scratch::default();
            let sc = match held.as_deref_mut() {
                Ok(sc) => sc,
                // Another thread's call has it (or a panic left it): this
                // call starts afresh.
                Err(_) => &mut fresh,
            };
            let fed = sc.feed.lend(
                |i| inputs.get_item(i),
                &self.input_names,
                &self.input_dtypes,
            )?;
            let session = &self.session;
            let tensors = fed.tensors();
            let out = &mut sc.outs;
            let mut run =
                || guard_nogil(|| session.run_reusing(tensors, out).map_err(|e| e.to_string()));
            if self.release_gil {
                py.detach(run)
            } else {
                run()
            }
            .map_err(PyErr::from)?;
            drop(fed);
            self.arrays(py, &sc.outs)
        })
    }

    /// The output arrays every call returns (`None` before the first run
    /// of a runner that makes its own).
    #[getter]
    fn outputs<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyTuple>> {
        self.lock(py).as_ref().map(|o| o.tuple.bind(py).clone())
    }

    /// The input names, in the order a call takes the arrays.
    #[getter]
    fn input_names(&self) -> Vec<String> {
        self.input_names.clone()
    }

    /// The output names, in the order of the returned tuple.
    #[getter]
    fn output_names(&self) -> Vec<String> {
        self.output_names.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "<ge.Runner ({}) -> ({}){}>",
            self.input_names.join(", "),
            self.output_names.join(", "),
            if self.fixed {
                ", into the caller's arrays"
            } else {
                ""
            }
        )
    }
}
