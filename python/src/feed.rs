//! The inputs of one call, lent to the runtime with what the last call
//! learned (issue 20: the fixed cost of a call from Python).
//!
//! [`crate::arrays::lend`] derives everything from scratch: the array's
//! dtype object → ge element type (and numpy's `same_kind` cast when it is
//! not the model's), byte order, contiguity, alignment, a shape `Vec` for
//! the host tensor. A [`Feed`] keeps, per input, the dtype object of the
//! last array it read in place, and the vectors of the last call. A call
//! whose array has that very dtype object, is C-contiguous and aligned (its
//! flags, read each call) and lies at an 8-byte aligned address is lent
//! with no other check; its shape is read each call into the last call's
//! shape vector. Anything else takes `lend`'s whole path, which then
//! remembers the array's dtype object if it read the array in place.
//!
//! Why the cache cannot serve a stale check: what is remembered is only
//! "this dtype object stands for element type X in native byte order",
//! which stays true for as long as the object lives — and the feed holds a
//! strong reference to it, so its address cannot be taken by another dtype
//! object. Likewise the array's type object: an object of exactly that type
//! is an array (the whole path found one), so the call skips numpy's
//! `PyArray_Check` (a lookup of numpy's type table on every call). Shape, flags and data pointer are read from the array at every
//! call (`test_runner.py` changes each between calls).

use crate::arrays::lend;
use ge_ir::DType;
use ge_runtime::HostTensor;
use numpy::{npyffi, PyArrayDescr, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyType;

/// What a session or runner keeps from one call to the next (behind a
/// mutex taken with `try_lock`: a call that finds it taken uses a new one).
#[derive(Default)]
pub struct Feed {
    /// Per input: the last array read in place — its dtype object, its
    /// element type and its type object.
    seen: Vec<Option<Seen>>,
    /// The shape vectors of the last call's tensors.
    shapes: Vec<Vec<usize>>,
    /// The tensors of the call under way (empty between calls: a tensor
    /// borrowing an array must not outlive the call).
    tensors: Vec<HostTensor>,
    /// The arrays the tensors borrow (or copies of them), held for the
    /// call: a dict of inputs may lose them to another thread meanwhile.
    keep: Vec<Py<PyAny>>,
}

/// What [`Feed`] remembers of an input array it read in place.
struct Seen {
    descr: Py<PyArrayDescr>,
    dtype: DType,
    /// The array's Python type (`numpy.ndarray` or a subclass).
    ty: Py<PyType>,
}

/// The inputs of the call under way; dropping it (with the GIL held) ends
/// the loans before it lets go of the arrays.
pub struct Fed<'f> {
    feed: &'f mut Feed,
}

impl Fed<'_> {
    pub fn tensors(&self) -> &[HostTensor] {
        &self.feed.tensors
    }
}

impl Drop for Fed<'_> {
    fn drop(&mut self) {
        let f = &mut *self.feed;
        // The tensors first (their loans end), then the arrays.
        for mut t in f.tensors.drain(..) {
            f.shapes.push(std::mem::take(&mut t.shape));
        }
        f.keep.clear();
    }
}

impl Feed {
    /// Lend the inputs for one call: `item(i)` is the object given for
    /// input `names[i]`; `dtypes`: the element type each is converted to
    /// when it is an array of another dtype (as for
    /// [`crate::arrays::lend`]).
    pub fn lend<'f, 'py>(
        &'f mut self,
        mut item: impl FnMut(usize) -> PyResult<Bound<'py, PyAny>>,
        names: &[String],
        dtypes: &[Option<DType>],
    ) -> PyResult<Fed<'f>> {
        self.tensors.clear();
        self.keep.clear();
        if self.seen.len() != names.len() {
            self.seen = (0..names.len()).map(|_| None).collect();
        }
        let fed = Fed { feed: self };
        let f = &mut *fed.feed;
        for i in 0..names.len() {
            let v = item(i)?;
            let quick = match f.seen.get(i) {
                Some(Some(seen)) => in_place(&v, seen, &mut f.shapes),
                _ => None,
            };
            let t = match quick {
                Some(t) => t,
                None => {
                    let want = dtypes.get(i).copied().flatten();
                    let n = names.get(i).map_or("?", |s| s.as_str());
                    let (t, arr) = lend(&v, || format!("input '{n}'"), want)?.into_parts();
                    // Read in place: remember its dtype object.
                    let read_in_place = t.is_borrowed() && arr.is(&v);
                    if let Some(s) = f.seen.get_mut(i) {
                        *s = match (read_in_place, arr.cast::<PyUntypedArray>()) {
                            (true, Ok(a)) => Some(Seen {
                                descr: a.dtype().unbind(),
                                dtype: t.dtype,
                                ty: a.get_type().unbind(),
                            }),
                            _ => None,
                        };
                    }
                    if !arr.is(&v) {
                        // A copy: it lives as long as the call.
                        f.keep.push(arr.unbind());
                    }
                    t
                }
            };
            f.keep.push(v.unbind());
            f.tensors.push(t);
        }
        Ok(fed)
    }
}

/// `v` lent in place with no other check when it is an array of the type
/// and with the dtype object `seen` remembers, C-contiguous, aligned, not
/// empty, at an address the runtime can borrow; `None`: take the whole path.
fn in_place(v: &Bound<'_, PyAny>, seen: &Seen, shapes: &mut Vec<Vec<usize>>) -> Option<HostTensor> {
    if v.get_type_ptr() != seen.ty.as_ptr().cast() {
        return None;
    }
    // SAFETY: `v`'s type is exactly one the whole path found to be an
    // array type (`Seen::ty`, kept alive by the feed, so no other type
    // object can have its address).
    let a = unsafe { v.cast_unchecked::<PyUntypedArray>() };
    let (descr, dtype) = (&seen.descr, seen.dtype);
    let raw = a.as_array_ptr();
    let need = npyffi::NPY_ARRAY_C_CONTIGUOUS | npyffi::NPY_ARRAY_ALIGNED;
    // SAFETY: `raw` is a live array (`a` holds a reference, the GIL is
    // held); its fields are read, not kept.
    let (d, flags, data) = unsafe {
        let f = &(*raw).fields;
        (f.descr, f.flags, f.data as *const u8)
    };
    if d != descr.as_ptr() as *mut npyffi::PyArray_Descr || flags & need != need {
        return None;
    }
    let dims = a.shape();
    let nbytes = dims
        .iter()
        .try_fold(dtype.byte_size(), |n, &d| n.checked_mul(d))?;
    if nbytes == 0 {
        return None;
    }
    let mut shape = shapes.pop().unwrap_or_default();
    shape.clear();
    shape.extend_from_slice(dims);
    // SAFETY: `a` is C-contiguous (its flags) with `dims` of `dtype`'s
    // elements (its dtype object is the one whose element type the whole
    // path found to be `dtype`, held alive since), so its buffer holds
    // `nbytes` bytes from `data`; the caller holds a strong reference to
    // the array (`Feed::keep`) until the tensor is dropped (`Fed::drop`),
    // and the runtime only reads lent memory (the caller must not write an
    // input array from another thread during the run, docs/python.md).
    // `None` when not aligned to the runtime's borrow alignment: the whole
    // path copies.
    unsafe { HostTensor::borrowed_shape(dtype, shape, data, nbytes) }.ok()
}
