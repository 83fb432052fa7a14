//! `Session.run`'s last result, recycled when no one can see it (issue 20).
//!
//! `Session.run` returns a new dict of new arrays every call; making them
//! (numpy's array allocation, the dict's) and freeing the last call's is
//! most of what a call costs over a runner's. A session keeps the dict it
//! returned last and the arrays in it; the next call takes them again —
//! the run writes the arrays in place, the dict is returned with the same
//! entries — only when no one else holds a reference to any of them, as
//! CPython's own free lists reuse a freed object's memory for the next
//! one of its type:
//!
//! - the dict: its reference count is 1 (the session's) — the caller let go
//!   of it and of every view and iterator of it (each holds a reference);
//!   it holds exactly the outputs' names in order, each with the array the
//!   session put there, and the garbage collector does not track it (a
//!   dict of strings and arrays is untracked: `gc.get_objects()` cannot
//!   find it). A plain dict takes no weak references.
//! - each array: its reference count is 2 (the dict's and the session's),
//!   it has no weak reference (`weakreflist` is null) and owns its memory
//!   (no base object: no other array shares it — a view of it holds a
//!   reference to it). An array held elsewhere is left to its holder: the
//!   call makes a new one for that output and puts it in the dict.
//!
//! Then nothing outside the session can reach the objects, so no one can
//! tell them from new ones (their `id` may repeat, as a freed object's
//! may). The check is made with the GIL held, after which no Python code
//! runs before the call returns them: the run itself never calls into
//! Python, and an object no one can reach cannot be reached during it,
//! with the GIL released or not. A raw data address read from an array
//! (`a.ctypes.data`) outliving the array is no reference — as with numpy's
//! own cache of small data allocations, the memory may be reused.
//!
//! A result whose arrays hold more than [`KEEP_BYTES`] is not kept: the
//! allocation saved is nothing next to such a run, and a session should
//! not hold large outputs its caller let go of.

use numpy::{npyffi, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// The most bytes of output arrays a session keeps for the next call.
pub const KEEP_BYTES: usize = 1 << 20;

/// The dict the last call returned and, per output, the array it put
/// there (kept in the session's scratch; its vectors are reused).
#[derive(Default)]
pub struct Last {
    dict: Option<Py<PyDict>>,
    arrays: Vec<Py<PyUntypedArray>>,
    /// Per output, after [`Last::take`]: whether its array may be written
    /// again.
    alone: Vec<bool>,
    /// The bytes of `arrays`' elements, when known: kept while the same
    /// arrays are put back (no one else holds them, so no one reshaped
    /// them), found again by [`Last::keep`] after [`Last::put`] changed one.
    bytes: Option<usize>,
}

impl Last {
    /// The last call's dict, to be returned again, when no one else holds
    /// it (see the module doc); which of its arrays may be written again:
    /// [`Last::array`]. `None` (and nothing kept) when the caller still
    /// holds the dict or changed it. `keys`: the outputs' names, in order.
    pub fn take<'py>(
        &mut self,
        py: Python<'py>,
        keys: &[Py<PyString>],
    ) -> Option<Bound<'py, PyDict>> {
        self.alone.clear();
        let dict = self.dict.take().map(|d| d.into_bound(py));
        match dict {
            Some(d) if self.unseen(&d, keys) => Some(d),
            _ => {
                // A new dict: nothing of the last result is reused.
                self.clear();
                None
            }
        }
    }

    fn unseen(&mut self, dict: &Bound<'_, PyDict>, keys: &[Py<PyString>]) -> bool {
        // SAFETY: `dict` is a live object (held), the GIL is held.
        let (refs, tracked) = unsafe {
            (
                ffi::Py_REFCNT(dict.as_ptr()),
                ffi::PyObject_GC_IsTracked(dict.as_ptr()),
            )
        };
        if refs != 1 || tracked != 0 || dict.len() != keys.len() || self.arrays.len() != keys.len()
        {
            return false;
        }
        let (mut pos, mut key, mut value) = (0, std::ptr::null_mut(), std::ptr::null_mut());
        for (k, a) in keys.iter().zip(&self.arrays) {
            // SAFETY: `dict` is a live dict (held, the GIL held, no Python
            // code runs during the walk); `PyDict_Next` checks `pos`
            // against its entries and gives borrowed references.
            if unsafe { ffi::PyDict_Next(dict.as_ptr(), &mut pos, &mut key, &mut value) } == 0
                || !std::ptr::eq(key, k.as_ptr())
                || !std::ptr::eq(value, a.as_ptr())
            {
                return false;
            }
            self.alone.push(alone(a.bind(dict.py())));
        }
        true
    }

    /// Output `i`'s array of the taken dict when it may be written again.
    pub fn array<'a, 'py>(
        &'a self,
        py: Python<'py>,
        i: usize,
    ) -> Option<&'a Bound<'py, PyUntypedArray>> {
        match self.alone.get(i) {
            Some(true) => self.arrays.get(i).map(|a| a.bind(py)),
            _ => None,
        }
    }

    /// Put `arr` in `dict` (the taken dict, or a new one after a failed
    /// [`Last::take`]) as output `i` (`key`), in output order, unless it is
    /// there already: `true` for a recycled array the run wrote again.
    pub fn put(
        &mut self,
        dict: &Bound<'_, PyDict>,
        i: usize,
        key: &Bound<'_, PyAny>,
        arr: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        // The taken dict holds `arrays[i]` as output `i`; a new one none.
        if self.arrays.get(i).is_some_and(|a| a.is(arr)) {
            return Ok(true);
        }
        dict.set_item(key, arr)?;
        self.bytes = None;
        let n = self.arrays.len();
        match (arr.cast::<PyUntypedArray>(), self.arrays.get_mut(i)) {
            (Ok(a), Some(slot)) => *slot = a.clone().unbind(),
            (Ok(a), None) if n == i => self.arrays.push(a.clone().unbind()),
            // Not an array, or out of step: nothing to keep.
            _ => self.arrays.clear(),
        }
        Ok(false)
    }

    /// Keep `dict` (whose outputs [`Last::put`] put there) for the next
    /// call, when its arrays are small enough ([`KEEP_BYTES`]).
    pub fn keep(&mut self, dict: &Bound<'_, PyDict>, outputs: usize) {
        self.alone.clear();
        let py = dict.py();
        let bytes = self.bytes.or_else(|| {
            self.arrays.iter().try_fold(0usize, |b, a| {
                let a = a.bind(py);
                b.checked_add(a.len().checked_mul(a.dtype().itemsize())?)
            })
        });
        self.bytes = bytes;
        match bytes {
            Some(b) if b <= KEEP_BYTES && self.arrays.len() == outputs => {
                self.dict = Some(dict.clone().unbind())
            }
            _ => self.clear(),
        }
    }

    /// Keep nothing.
    pub fn clear(&mut self) {
        self.dict = None;
        self.arrays.clear();
        self.alone.clear();
        self.bytes = None;
    }
}

/// Whether the array `a` (held by the session and by the dict only, if
/// so) has no other holder, no weak reference and memory of its own.
fn alone(a: &Bound<'_, PyUntypedArray>) -> bool {
    let raw = a.as_array_ptr();
    // SAFETY: `raw` is a live array (`a` holds it, the GIL is held); its
    // fields are read, not kept.
    let (refs, weak, base, flags) = unsafe {
        let f = &(*raw).fields;
        (ffi::Py_REFCNT(raw.cast()), f.weakreflist, f.base, f.flags)
    };
    refs == 2 && weak.is_null() && base.is_null() && flags & npyffi::NPY_ARRAY_OWNDATA != 0
}
