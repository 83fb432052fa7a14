//! `ge.Runner` (`Session.runner()`): the call path for a model run many
//! times from Python, as cheap as the binding can make it (issue 20: within
//! 10 % of ge-run's in-process time on a small model).
//!
//! What `Session.run` pays per call and a runner does not: the input names
//! looked up in a dict (a runner takes the arrays positionally, in the
//! model's input order), a new numpy array per output and a new result
//! dict (a runner's run writes each output straight into an array it made
//! once — or the caller's own, `outputs=` — and returns the same tuple
//! every call). What it remembers from the last call (each checked again
//! at every call, see `feed.rs`): the dtype object of each input array read
//! in place, the vectors of the inputs, the runtime's output tensors, and
//! the dtype object of each output array.
//!
//! Outputs in place: the runner lends its arrays to the runtime's output
//! tensors (`HostTensor::lend_mut`), and a run whose output has the array's
//! shape and element type writes it there (`Session::run_reusing`), with
//! the GIL released — so the arrays are locked for the whole call, and only
//! while one thread calls the runner: from the first call of a second
//! thread on, a run writes into the runtime's own memory and the output is
//! copied into the arrays with the GIL held (as before), so a thread never
//! sees another thread's run half written into a shared runner's arrays.

use crate::arrays::{
    copy_into, fits, fix_bools, lend_out, output_to_numpy, still_fits, writable_array,
};
use crate::errors::{error, guard, guard_nogil};
use crate::feed::Feed;
use crate::gil::Gil;
use crate::recycle::Last;
use crate::runtime::{check_count, elem_type};
use crate::slot::GilSlot;
use ge_ir::DType;
use ge_runtime::HostTensor;
use numpy::{PyArrayDescr, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// A model bound for repeated runs: `r = sess.runner(); (y,) = r.run(x)`.
#[pyclass(module = "ge", frozen)]
pub struct Runner {
    /// What a call keeps for the next: the inputs' [`Feed`] and the
    /// runtime's output tensors (`Session::run_reusing`: no allocation for
    /// outputs of an unchanged size). A call that finds it taken (another
    /// thread's call, running with the GIL released) starts afresh.
    scratch: GilSlot<Scratch>,
    session: ge_runtime::Session,
    input_names: Vec<String>,
    input_dtypes: Vec<Option<DType>>,
    output_names: Vec<String>,
    /// Each output's element type (what its array is lent as).
    output_dtypes: Vec<Option<DType>>,
    /// The arrays are the caller's (`outputs=`): never replaced, so a run
    /// whose outputs do not fit them is an error.
    fixed: bool,
    gil: Gil,
    /// The thread that calls this runner ([`thread_key`]; 0 before the
    /// first call, [`SHARED`] once a second thread called): runs write
    /// into the arrays in place only while one thread calls.
    caller: AtomicUsize,
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
    /// The shapes of the last run's outputs (`Session.run` makes arrays of
    /// them before a run of a model with symbolic output shapes).
    pub shapes: Vec<Vec<usize>>,
    /// The memory ranges lent to the outputs of the call under way.
    pub taken: Vec<(usize, usize)>,
    /// `Session.run`'s new output arrays of the call under way (`None`: an
    /// output without one), held until the loans end; emptied before the
    /// call returns (the vector is kept: no allocation per call).
    pub arrays: Vec<Option<Py<PyUntypedArray>>>,
    /// `Session.run`'s last result, recycled when no one else holds it.
    pub last: Last,
}

/// The runtime's output tensors of one call, some of them lent the memory
/// of arrays the call returns ([`lend_out`]): dropping it ends every loan,
/// with the GIL held, before the arrays can go.
pub struct Loans<'a>(pub &'a mut Vec<HostTensor>);

impl Drop for Loans<'_> {
    fn drop(&mut self) {
        for t in self.0.iter_mut().filter(|t| t.is_lent_mut()) {
            t.end_loan();
        }
    }
}

/// [`Runner::caller`] once two threads have called the runner.
const SHARED: usize = usize::MAX;

/// A number for the calling thread, unique among live threads (the address
/// of a thread-local; never 0 or [`SHARED`]).
fn thread_key() -> usize {
    thread_local!(static KEY: u8 = const { 0 });
    KEY.with(|k| k as *const u8 as usize)
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
        release_gil: Option<bool>,
    ) -> PyResult<Runner> {
        let inputs = model.inputs();
        let outs = model.outputs();
        let output_names: Vec<String> = outs.iter().map(|(n, _)| n.clone()).collect();
        let output_dtypes = outs.iter().map(|(_, t)| elem_type(t)).collect();
        let given = match outputs {
            Some(o) => Some(caller_outputs(py, o, &outs)?),
            None => None,
        };
        Ok(Runner {
            scratch: GilSlot::new(Scratch::default()),
            session,
            input_names: inputs.iter().map(|(n, _)| n.clone()).collect(),
            input_dtypes: inputs.iter().map(|(_, t)| elem_type(t)).collect(),
            output_names,
            output_dtypes,
            fixed: given.is_some(),
            gil: Gil::of(release_gil),
            caller: AtomicUsize::new(0),
            outputs: Mutex::new(given.map(Outs::new)),
        })
    }

    /// The lock on the output arrays. Taken with the GIL held; held across
    /// a run (GIL released) only by a call that writes the arrays in place
    /// ([`Runner::solo`]). When it is taken (another thread's run, or a call
    /// switched out while the GC ran Python code), wait for it without the
    /// GIL, so that call can finish.
    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, Option<Outs>> {
        loop {
            match self.outputs.try_lock() {
                Ok(g) => return g,
                // A panic while it was held (reported as ge.InternalError)
                // left arrays of the right shapes, whatever their values.
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(TryLockError::WouldBlock) => py.detach(std::thread::yield_now),
            }
        }
    }

    /// Whether this call's run may write the arrays in place: every call so
    /// far came from this thread (see the module doc).
    fn solo(&self) -> bool {
        let me = thread_key();
        if self.caller.load(Relaxed) == me {
            return true;
        }
        match self.caller.compare_exchange(0, me, Relaxed, Relaxed) {
            Ok(_) => true,
            Err(c) if c == me => true,
            Err(_) => {
                self.caller.store(SHARED, Relaxed);
                false
            }
        }
    }

    /// Lend the arrays to the run's output tensors (each that can take its
    /// output in place: [`lend_out`]), the lock on them held until the
    /// loans end.
    fn lend(
        &self,
        py: Python<'_>,
        o: &mut Outs,
        outs: &mut Vec<HostTensor>,
        inputs: &[HostTensor],
        taken: &mut Vec<(usize, usize)>,
    ) -> PyResult<()> {
        let t = o.tuple.bind(py);
        let n = self.output_dtypes.len();
        if t.len() != n {
            return Ok(());
        }
        if outs.len() < n {
            outs.resize_with(n, || HostTensor::zeros(DType::U8, &[0]));
        }
        o.descrs.resize_with(n, || None);
        taken.clear();
        for (i, (out, seen)) in outs.iter_mut().zip(o.descrs.iter_mut()).enumerate() {
            let dt = self.output_dtypes.get(i).copied().flatten();
            let (Some(dt), Ok(a)) = (dt, t.get_borrowed_item(i)) else {
                continue;
            };
            let Ok(a) = a.cast::<PyUntypedArray>() else {
                continue;
            };
            // SAFETY: the lock on the arrays (held by the caller until the
            // loans end, `Loans`) keeps `a` alive in the tuple and every
            // other call of this runner out; every call so far came from
            // this thread (`solo`), and docs/python.md asks that no other
            // thread reads the arrays while a call runs.
            let lent = unsafe { lend_out(out, &a, dt, inputs, taken, seen.as_ref()) };
            if lent && seen.is_none() {
                *seen = Some(a.dtype().unbind());
            }
        }
        Ok(())
    }

    /// Write the run's outputs into the arrays (those written in place by
    /// the run: bools made 0 or 1); `false` when they do not fit (first
    /// run, another shape), with what does not fit. An array whose dtype
    /// object is the one it had when it last fit is checked for shape and
    /// flags only ([`still_fits`]).
    fn fill(
        &self,
        o: &mut Outs,
        py: Python<'_>,
        outs: &mut [HostTensor],
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
            if out.is_lent_mut() {
                continue;
            }
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
        for (i, out) in outs.iter_mut().enumerate() {
            if out.is_lent_mut() {
                fix_bools(out);
                continue;
            }
            let item = t.get_borrowed_item(i)?;
            if let Ok(a) = item.cast::<PyUntypedArray>() {
                copy_into(out, &a);
            }
        }
        Ok(Ok(()))
    }

    /// The runner's arrays holding `outs` (the same arrays as the last
    /// call's when they fit, else — for the outputs not written in place —
    /// new ones, or an error for the caller's).
    fn arrays<'py>(
        &self,
        py: Python<'py>,
        slot: &mut Option<Outs>,
        outs: &mut [HostTensor],
    ) -> PyResult<Bound<'py, PyTuple>> {
        if let Some(o) = slot.as_mut() {
            match self.fill(o, py, outs)? {
                Ok(()) => return Ok(o.tuple.bind(py).clone()),
                Err(why) if self.fixed => {
                    return Err(error(format!("{why} (the arrays given as outputs=)")))
                }
                Err(_) => {}
            }
        }
        let old = slot.as_ref().map(|o| o.tuple.bind(py));
        let arrays = outs
            .iter_mut()
            .enumerate()
            .map(|(i, out)| match (out.is_lent_mut(), old) {
                // Written in place: that array (a loan is only ever of
                // the array at its position).
                (true, Some(t)) => {
                    fix_bools(out);
                    t.get_item(i)
                }
                _ => output_to_numpy(py, out),
            })
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
    // The first array is a parameter of its own: a call with one array,
    // the common case, then needs no tuple for `*more` (Python's empty
    // tuple is shared), where `*inputs` cost a new one every call.
    #[pyo3(signature = (first = None, *more), text_signature = "($self, *inputs)")]
    fn run<'py>(
        &self,
        py: Python<'py>,
        first: Option<&Bound<'py, PyAny>>,
        more: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        guard(|| {
            let n = match (first, more.is_empty()) {
                (Some(_), _) => 1 + more.len(),
                (None, true) => 0,
                (None, false) => return Err(error("input 0 is None, not an array")),
            };
            check_count(n, &self.input_names, "the model")?;
            let item = |i: usize| match (i.checked_sub(1), first) {
                (None, Some(x)) => Ok(x.clone()),
                (Some(j), _) => more.get_item(j),
                (None, None) => Err(error("input 0 is missing")),
            };
            let mut held = self.scratch.take(py);
            // Made only when needed: an unused one costs its construction and
            // drop on every call.
            let mut fresh: Option<Scratch> = None;
            let sc = match held.as_deref_mut() {
                Some(sc) => sc,
                // Another thread's call has it (or a panic left it taken):
                // this call starts afresh.
                None => fresh.insert(Scratch::default()),
            };
            let fed = sc.feed.lend(item, &self.input_names, &self.input_dtypes)?;
            // Written in place: the arrays locked for the whole call (and
            // checked again under the lock, which orders this call after a
            // second thread's whole call).
            let mut slot = self
                .solo()
                .then(|| self.lock(py))
                .filter(|_| self.caller.load(Relaxed) != SHARED);
            let outs = Loans(&mut sc.outs);
            if let Some(Some(o)) = slot.as_deref_mut() {
                self.lend(py, o, outs.0, fed.tensors(), &mut sc.taken)?;
            }
            let session = &self.session;
            let tensors = fed.tensors();
            let out = &mut *outs.0;
            self.gil
                .run(py, || {
                    guard_nogil(|| session.run_reusing(tensors, out).map_err(|e| e.to_string()))
                })
                .map_err(PyErr::from)?;
            drop(fed);
            let mut slot = match slot {
                Some(s) => s,
                None => self.lock(py),
            };
            let r = self.arrays(py, &mut slot, outs.0);
            // The loans end before the lock is let go.
            drop(outs);
            r
        })
    }

    /// The output arrays every call returns (`None` before the first run
    /// of a runner that makes its own).
    #[getter]
    fn outputs<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyTuple>> {
        self.lock(py).as_ref().map(|o| o.tuple.bind(py).clone())
    }

    /// Whether the next call releases the GIL while the model runs (by
    /// `release_gil=`, or the rule: docs/python.md "Threads and the GIL").
    #[getter]
    fn releases_gil(&self) -> bool {
        self.gil.releases()
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
            "<ge.Runner ({}) -> ({}){}{}>",
            self.input_names.join(", "),
            self.output_names.join(", "),
            if self.fixed {
                ", into the caller's arrays"
            } else {
                ""
            },
            match self.gil.forced() {
                Some(true) => ", releasing the GIL",
                Some(false) => ", holding the GIL",
                None => "",
            }
        )
    }
}
