//! numpy arrays ↔ the runtime's host tensors.
//!
//! An input array is lent to the runtime — read in place, no copy — when it
//! is C-contiguous, in native byte order and 8-byte aligned (any other is
//! made so by `numpy.ascontiguousarray` first, one copy); the runtime binds
//! its input arena to that buffer. An output is written by the run into the
//! array the call returns when the array is lent to it ([`lend_out`]: the
//! runtime's `HostTensor::lend_mut`), else copied from the runtime's buffer.

use crate::errors::error;
use ge_ir::DType;
use ge_runtime::HostTensor;
use numpy::{
    npyffi, Element, IxDyn, PyArray, PyArrayDescr, PyArrayDescrMethods, PyArrayMethods,
    PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::{PyAny, PyType};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The ge element type of a numpy dtype (`kind` and item size).
pub fn dtype_of(descr: &Bound<'_, PyArrayDescr>) -> PyResult<DType> {
    let (kind, size) = (descr.kind(), descr.itemsize());
    let d = match (kind, size) {
        (b'f', 8) => DType::F64,
        (b'f', 4) => DType::F32,
        (b'f', 2) => DType::F16,
        (b'i', 8) => DType::I64,
        (b'i', 4) => DType::I32,
        (b'i', 2) => DType::I16,
        (b'i', 1) => DType::I8,
        (b'u', 8) => DType::U64,
        (b'u', 4) => DType::U32,
        (b'u', 2) => DType::U16,
        (b'u', 1) => DType::U8,
        (b'b', 1) => DType::I1,
        // ml_dtypes' bfloat16 (kind 'V', registered under this name).
        (_, 2) if descr.str().is_ok_and(|s| s.to_string_lossy() == "bfloat16") => DType::BF16,
        _ => {
            return Err(error(format!(
                "numpy dtype '{}' has no ge element type",
                descr
                    .str()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            )))
        }
    };
    Ok(d)
}

/// Input arrays copied because their layout or dtype did not allow reading
/// them in place (`ge._native._input_copies()`: the tests read it to prove a
/// contiguous array of the right dtype is not copied).
static INPUT_COPIES: AtomicUsize = AtomicUsize::new(0);

/// How many input arrays were copied on their way to a run so far in this
/// process (a contiguous array of the model's dtype is read in place).
#[pyfunction]
pub fn _input_copies() -> usize {
    INPUT_COPIES.load(Ordering::Relaxed)
}

/// Outputs of runs copied into an array (`ge._native._output_copies()`:
/// the tests read it to prove an output was written in place).
static OUTPUT_COPIES: AtomicUsize = AtomicUsize::new(0);

/// How many run outputs were copied into an array so far in this process
/// (an output written in place by the run is not).
#[pyfunction]
pub fn _output_copies() -> usize {
    OUTPUT_COPIES.load(Ordering::Relaxed)
}

/// A new numpy array holding a copy of the run output `t` (counted).
pub fn output_to_numpy<'py>(py: Python<'py>, t: &HostTensor) -> PyResult<Bound<'py, PyAny>> {
    OUTPUT_COPIES.fetch_add(1, Ordering::Relaxed);
    to_numpy(py, t)
}

/// An array as the runtime reads it: a host tensor over the array's own
/// buffer (no copy) when that is C-contiguous, native-endian and aligned to
/// [`ge_runtime::buffer::BORROW_ALIGN`], else over a copy. The tensor may borrow `array`'s
/// buffer: it is private, and `array` (a strong reference, taken here) keeps
/// the buffer alive for as long as this value lives.
pub struct Lent<'py> {
    tensor: HostTensor,
    _array: Bound<'py, PyUntypedArray>,
}

impl<'py> Lent<'py> {
    /// The tensor and the array it may borrow: the caller keeps the array
    /// alive for as long as the tensor lives (`runtime::Inputs`).
    pub fn into_parts(self) -> (HostTensor, Bound<'py, PyAny>) {
        (self.tensor, self._array.into_any())
    }
    /// A tensor of its own (a copy of borrowed bytes).
    pub fn into_owned(self) -> HostTensor {
        match self.tensor.is_borrowed() {
            true => self.tensor.clone(),
            false => self.tensor,
        }
    }
}

/// The numpy dtype of a ge element type (`None`: numpy has no such type).
fn numpy_name(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::F64 => "float64",
        DType::F32 => "float32",
        DType::F16 => "float16",
        DType::I64 => "int64",
        DType::I32 => "int32",
        DType::I16 => "int16",
        DType::I8 => "int8",
        DType::U64 => "uint64",
        DType::U32 => "uint32",
        DType::U16 => "uint16",
        DType::U8 => "uint8",
        DType::I1 => "bool",
        _ => return None,
    })
}

/// Lend any object numpy can make an array of to the runtime (`what()` names
/// it in errors): no Python call and no copy for an ndarray whose layout
/// allows it; else one copy made by numpy — `numpy.asarray` for a list or a
/// scalar, `astype` to `want` (the model's element type) for an array of
/// another dtype that casts to it with numpy's `same_kind` rule (`float64`
/// to `float32`, `int64` to `float32`; not `float32` to `int32`),
/// `numpy.ascontiguousarray` for a strided, misaligned or byte-swapped one.
pub fn lend<'py>(
    obj: &Bound<'py, PyAny>,
    what: impl Fn() -> String,
    want: Option<DType>,
) -> PyResult<Lent<'py>> {
    let py = obj.py();
    let mut copied = false;
    let mut arr: Bound<'py, PyUntypedArray> = match obj.cast::<PyUntypedArray>() {
        Ok(a) => a.clone(),
        Err(_) => {
            copied = true;
            py.import("numpy")?
                .call_method1("asarray", (obj,))?
                .cast_into::<PyUntypedArray>()
                .map_err(|_| error(format!("{}: not an array", what())))?
        }
    };
    let mut dtype = dtype_of(&arr.dtype());
    if let (Some(w), Some(name)) = (want, want.and_then(numpy_name)) {
        if dtype.as_ref().ok() != Some(&w) {
            let np = py.import("numpy")?;
            let kw = pyo3::types::PyDict::new(py);
            kw.set_item("casting", "same_kind")?;
            if np
                .call_method("can_cast", (arr.dtype(), name), Some(&kw))?
                .is_truthy()?
            {
                copied = true;
                arr = arr
                    .call_method1("astype", (name,))?
                    .cast_into::<PyUntypedArray>()
                    .map_err(|_| error(format!("{}: not an array", what())))?;
                dtype = Ok(w);
            }
        }
    }
    let dtype = dtype.map_err(|e| error(format!("{}: {}", what(), err_text(py, &e))))?;
    let native = arr.dtype().byteorder() != b'>';
    if !arr.is_c_contiguous() || !arr.is_aligned() || !native {
        copied = true;
        let native_dt = arr.dtype().call_method1("newbyteorder", ("=",))?;
        arr = py
            .import("numpy")?
            .call_method1("ascontiguousarray", (&arr, native_dt))?
            .cast_into::<PyUntypedArray>()
            .map_err(|_| error(format!("{}: not an array", what())))?;
    }
    // Borrowed from the array (no Vec of its own: a tensor copies it once).
    let shape = arr.shape();
    let nbytes = shape
        .iter()
        .try_fold(arr.dtype().itemsize(), |n, &d| n.checked_mul(d))
        .ok_or_else(|| error(format!("{}: the array is too large", what())))?;
    let data = if nbytes == 0 {
        std::ptr::null()
    } else {
        // SAFETY: reading the data pointer of a live array (we hold it).
        unsafe { (*arr.as_array_ptr()).fields.data as *const u8 }
    };
    // SAFETY: `arr` is a C-contiguous array (made so above) whose buffer
    // holds `nbytes` bytes from `data`; `Lent` keeps a strong reference to
    // it for as long as the tensor lives. The runtime only reads lent memory,
    // and a run holds the caller's arrays unwritten (docs/python.md: as any
    // numpy call that releases the GIL, the caller must not write an input
    // array from another thread during the run).
    let tensor = match unsafe { HostTensor::borrowed(dtype, shape, data, nbytes) } {
        Ok(t) => t,
        // Not 8-byte aligned (a view at an odd offset), or empty: copy.
        Err(_) => {
            copied |= nbytes != 0;
            let bytes: &[u8] = if nbytes == 0 {
                &[]
            } else {
                // SAFETY: as above; the slice is read before `arr` can go.
                unsafe { std::slice::from_raw_parts(data, nbytes) }
            };
            HostTensor::from_bytes(dtype, shape, bytes)
                .map_err(|e| error(format!("{}: {e}", what())))?
        }
    };
    if copied {
        INPUT_COPIES.fetch_add(1, Ordering::Relaxed);
    }
    Ok(Lent {
        tensor,
        _array: arr,
    })
}

/// A host tensor of its own (a copy) from any object numpy can make an
/// array of (weights and attribute values, which outlive the call).
pub fn to_host(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<HostTensor> {
    Ok(lend(obj, || what.to_string(), None)?.into_owned())
}

fn err_text(py: Python<'_>, e: &PyErr) -> String {
    e.value(py)
        .str()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A new array of `T` with the tensor's shape and bytes.
fn typed<'py, T: Element>(py: Python<'py>, t: &HostTensor) -> Bound<'py, PyAny> {
    // SAFETY: the array is created uninitialised with the tensor's shape and
    // then filled with exactly its byte length (numel × size_of::<T>(), the
    // dtype's byte size) before Python can see it.
    unsafe {
        let a = PyArray::<T, IxDyn>::new(py, IxDyn(&t.shape), false);
        let src = t.bytes();
        debug_assert_eq!(src.len(), t.numel() * std::mem::size_of::<T>());
        std::ptr::copy_nonoverlapping(src.as_ptr(), a.data() as *mut u8, src.len());
        a.into_any()
    }
}

/// A new, uninitialised array of `T` and `shape`.
///
/// # Safety
/// The caller writes every byte of it before Python can see it.
unsafe fn empty_typed<'py, T: Element>(
    py: Python<'py>,
    shape: &[usize],
) -> Bound<'py, PyUntypedArray> {
    // SAFETY: the caller's contract (the memory is written before use).
    unsafe { PyArray::<T, IxDyn>::new(py, IxDyn(shape), false) }
        .as_untyped()
        .clone()
}

/// A new, uninitialised array of `shape` whose numpy element type stores
/// `dtype`'s elements byte for byte, to receive an output in place
/// ([`lend_out`]); `None` for an element type numpy has no such type for
/// (bf16 without ml_dtypes' `bfloat16` is widened, so never in place).
///
/// # Safety
/// The caller writes every byte of it before Python can see it (a run that
/// kept the loan wrote them all, `HostTensor::reset_zeros` first), or drops
/// it unseen.
pub unsafe fn empty<'py>(
    py: Python<'py>,
    dtype: DType,
    shape: &[usize],
) -> Option<Bound<'py, PyUntypedArray>> {
    // SAFETY (every arm): the caller's contract.
    unsafe {
        Some(match dtype {
            DType::F64 => empty_typed::<f64>(py, shape),
            DType::F32 => empty_typed::<f32>(py, shape),
            DType::F16 => empty_typed::<half::f16>(py, shape),
            DType::I64 | DType::Index => empty_typed::<i64>(py, shape),
            DType::I32 => empty_typed::<i32>(py, shape),
            DType::I16 => empty_typed::<i16>(py, shape),
            DType::I8 => empty_typed::<i8>(py, shape),
            DType::U64 => empty_typed::<u64>(py, shape),
            DType::U32 => empty_typed::<u32>(py, shape),
            DType::U16 => empty_typed::<u16>(py, shape),
            DType::U8 => empty_typed::<u8>(py, shape),
            DType::I1 => empty_typed::<bool>(py, shape),
            _ => return None,
        })
    }
}

/// The numpy dtype object [`empty`] makes an array of `dtype` with (`None`:
/// numpy has no such type), made once per output by `Session` so that a
/// call makes its arrays with [`empty_with`] and lends them with
/// [`lend_out`]'s `known` (no dtype lookup per call).
pub fn descr_of(py: Python<'_>, dtype: DType) -> Option<Py<PyArrayDescr>> {
    let d = match dtype {
        DType::F64 => PyArrayDescr::of::<f64>(py),
        DType::F32 => PyArrayDescr::of::<f32>(py),
        DType::F16 => PyArrayDescr::of::<half::f16>(py),
        DType::I64 | DType::Index => PyArrayDescr::of::<i64>(py),
        DType::I32 => PyArrayDescr::of::<i32>(py),
        DType::I16 => PyArrayDescr::of::<i16>(py),
        DType::I8 => PyArrayDescr::of::<i8>(py),
        DType::U64 => PyArrayDescr::of::<u64>(py),
        DType::U32 => PyArrayDescr::of::<u32>(py),
        DType::U16 => PyArrayDescr::of::<u16>(py),
        DType::U8 => PyArrayDescr::of::<u8>(py),
        DType::I1 => PyArrayDescr::of::<bool>(py),
        _ => return None,
    };
    Some(d.unbind())
}

/// numpy's array type (`numpy.ndarray`), for [`empty_with`] (looked up once
/// per session, not per array).
pub fn ndarray_type(py: Python<'_>) -> Py<PyType> {
    // SAFETY: numpy's `PyArray_Type` is a static type object that lives as
    // long as numpy (which this extension keeps imported); a borrowed
    // reference to it is taken as a strong one.
    unsafe {
        Bound::from_borrowed_ptr(
            py,
            npyffi::get_type_object(py, npyffi::NpyTypes::PyArray_Type).cast(),
        )
        .cast_into_unchecked::<PyType>()
        .unbind()
    }
}

/// [`empty`] with numpy's array type `ty` ([`ndarray_type`]) and the dtype
/// object `descr` (from [`descr_of`]): numpy's
/// `PyArray_NewFromDescr` called directly, the shape passed as it is
/// (`None` when numpy refuses it: too many dims, a dim over `isize::MAX`,
/// out of memory — the caller then copies the output as for no array).
///
/// # Safety
/// As [`empty`]: the caller writes every byte before Python can see it, or
/// drops it unseen.
pub unsafe fn empty_with<'py>(
    py: Python<'py>,
    ty: &Py<PyType>,
    descr: &Py<PyArrayDescr>,
    shape: &[usize],
) -> Option<Bound<'py, PyUntypedArray>> {
    let nd = std::os::raw::c_int::try_from(shape.len()).ok()?;
    if shape.iter().any(|&d| isize::try_from(d).is_err()) {
        return None;
    }
    // SAFETY: `PyArray_NewFromDescr` steals the reference to the descr
    // (`into_ptr` gives it one of its own); it reads `nd` dims from the
    // pointer (usize and npy_intp have one size, every dim fits in isize:
    // checked above) and copies them; no strides, no data (numpy allocates
    // it, uninitialised: the caller's contract), no flags, no base object.
    // The result is a new reference to an ndarray, or null with an error.
    unsafe {
        let ptr = npyffi::PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            ty.as_ptr().cast(),
            descr.clone_ref(py).into_ptr().cast(),
            nd,
            shape.as_ptr() as *mut npyffi::npy_intp,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        );
        match Bound::from_owned_ptr_or_err(py, ptr) {
            Ok(a) => Some(a.cast_into_unchecked()),
            Err(_) => None,
        }
    }
}

/// Lend `a`'s buffer to `t` so that a run writes its output of element
/// type `dtype` there in place (`HostTensor::lend_mut`, the runtime's
/// `Session::run_reusing`); `false` (nothing lent) when `a` is not a
/// C-contiguous, aligned, writable array of `dtype`'s elements, is empty,
/// or its memory overlaps `inputs` or `taken` (a range already lent to
/// another output) — a run's output must not alias its inputs or another
/// output. A lent range is added to `taken`. `known`: the dtype object the
/// caller found `a`'s to stand for `dtype`'s elements before (and holds
/// since, so its address is no other dtype's): then not checked again.
///
/// # Safety
/// Until the loan ends (`HostTensor::end_loan`, or the tensor no longer
/// `is_lent_mut` after a run), the caller holds a strong reference to `a`
/// and nothing else reads or writes its memory: `a` is not yet visible to
/// Python, or the caller's documented contract (docs/python.md) excludes
/// other threads from it while the run writes it.
pub unsafe fn lend_out(
    t: &mut HostTensor,
    a: &Bound<'_, PyUntypedArray>,
    dtype: DType,
    inputs: &[HostTensor],
    taken: &mut Vec<(usize, usize)>,
    known: Option<&Py<PyArrayDescr>>,
) -> bool {
    // SAFETY: reading a field of a live array (we hold a reference to it).
    let descr = unsafe { (*a.as_array_ptr()).fields.descr };
    let same = known.is_some_and(|d| std::ptr::eq(descr, d.as_ptr().cast()));
    if !(same || same_elements(a, dtype)) || writable(a).is_err() {
        return false;
    }
    let shape = a.shape();
    let Some(len) = shape
        .iter()
        .try_fold(dtype.byte_size(), |n, &d| n.checked_mul(d))
    else {
        return false;
    };
    // SAFETY: reading the data pointer of a live array (we hold it).
    let ptr = unsafe { (*a.as_array_ptr()).fields.data as *mut u8 };
    let start = ptr as usize;
    let overlaps =
        |s: usize, n: usize| n > 0 && s < start.wrapping_add(len) && start < s.wrapping_add(n);
    if inputs
        .iter()
        .any(|i| overlaps(i.bytes().as_ptr() as usize, i.bytes().len()))
        || taken.iter().any(|&(s, n)| overlaps(s, n))
    {
        return false;
    }
    // SAFETY: `a` is a C-contiguous, aligned, writable array of `shape`
    // and `dtype`'s element size (checked above), so `len` bytes at `ptr`
    // are its buffer; they overlap no input and no other lent output; the
    // caller's contract keeps `a` alive and untouched for the loan.
    // `lend_mut` checks length, emptiness and alignment itself.
    let lent = unsafe { t.lend_mut(dtype, shape, ptr, len) }.is_ok();
    if lent {
        taken.push((start, len));
    }
    lent
}

/// Make the bytes of a bool output 0 or 1 (numpy's bool must not hold
/// other bytes; the runtime's i1 is one byte per element).
pub fn fix_bools(t: &mut HostTensor) {
    if t.dtype == DType::I1 {
        for b in t.bytes_mut() {
            *b = (*b != 0) as u8;
        }
    }
}

/// A numpy array holding a copy of `t`.
pub fn to_numpy<'py>(py: Python<'py>, t: &HostTensor) -> PyResult<Bound<'py, PyAny>> {
    let want = t.numel().checked_mul(t.dtype.byte_size());
    if want != Some(t.bytes().len()) {
        return Err(error(format!(
            "a {} tensor of shape {:?} holds {} bytes",
            t.dtype,
            t.shape,
            t.bytes().len()
        )));
    }
    if t.dtype == DType::BF16 {
        return Ok(match PyArrayDescr::new(py, "bfloat16") {
            // ml_dtypes is installed: the same element type.
            Ok(descr) => typed::<u16>(py, t).call_method1("view", (descr,))?,
            // Without it, bfloat16 widens exactly to float32.
            Err(_) => {
                let bits = typed::<u16>(py, t);
                bits.call_method1("astype", ("uint32",))?
                    .call_method1("__lshift__", (16,))?
                    .call_method1("view", ("float32",))?
            }
        });
    }
    // SAFETY: filled with all of its bytes (`write_into`) before Python
    // can see it.
    match unsafe { empty(py, t.dtype, &t.shape) } {
        Some(a) => {
            write_into(t, &a);
            Ok(a.into_any())
        }
        None => Err(error(format!(
            "element type {} has no numpy dtype",
            t.dtype
        ))),
    }
}

/// Whether `a`'s element type stores `d`'s elements byte for byte (the
/// dtype [`to_numpy`] gives it; bf16 only as ml_dtypes' bfloat16).
fn same_elements(a: &Bound<'_, PyUntypedArray>, d: DType) -> bool {
    let want = match d {
        DType::Index => DType::I64,
        d => d,
    };
    dtype_of(&a.dtype()).is_ok_and(|have| have == want)
}

/// The numpy flags of `a` (`NPY_ARRAY_*`).
fn flags(a: &Bound<'_, PyUntypedArray>) -> std::os::raw::c_int {
    // SAFETY: reading a field of a live array (we hold a reference to it).
    unsafe { (*a.as_array_ptr()).fields.flags }
}

/// Why `a` cannot take the output `t` in place (`None`: it can): `a` must
/// have `t`'s shape and element type and be C-contiguous, aligned and
/// writable.
pub fn fits(t: &HostTensor, a: &Bound<'_, PyUntypedArray>) -> Result<(), String> {
    if a.shape() != t.shape.as_slice() {
        return Err(format!(
            "the run gives shape {:?}, the array has {:?}",
            t.shape,
            a.shape()
        ));
    }
    if !same_elements(a, t.dtype) {
        return Err(format!(
            "the run gives {} elements, the array is {}",
            t.dtype,
            descr_text(a)
        ));
    }
    writable(a)
}

/// [`fits`] for an array the caller already found to fit an output of
/// `t`'s element type, with the dtype object `descr` (held, so that its
/// address is no other dtype's): the same dtype object (its element type
/// cannot have changed since), `t`'s shape and the flags an output needs —
/// all read from the array now. `false`: check with [`fits`].
pub fn still_fits(t: &HostTensor, a: &Bound<'_, PyUntypedArray>, descr: &Py<PyArrayDescr>) -> bool {
    let need =
        npyffi::NPY_ARRAY_C_CONTIGUOUS | npyffi::NPY_ARRAY_ALIGNED | npyffi::NPY_ARRAY_WRITEABLE;
    // SAFETY: reading a field of a live array (we hold a reference to it).
    let d = unsafe { (*a.as_array_ptr()).fields.descr };
    std::ptr::eq(d, descr.as_ptr().cast()) && flags(a) & need == need && a.shape() == t.shape
}

/// Whether an output can be written into `a` in place.
fn writable(a: &Bound<'_, PyUntypedArray>) -> Result<(), String> {
    let need =
        npyffi::NPY_ARRAY_C_CONTIGUOUS | npyffi::NPY_ARRAY_ALIGNED | npyffi::NPY_ARRAY_WRITEABLE;
    match flags(a) & need == need {
        true => Ok(()),
        false => Err("the array is not C-contiguous, aligned and writable".into()),
    }
}

fn descr_text(a: &Bound<'_, PyUntypedArray>) -> String {
    a.dtype()
        .str()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Copy the output `t` into `a`, which [`fits`] it.
pub fn copy_into(t: &HostTensor, a: &Bound<'_, PyUntypedArray>) {
    OUTPUT_COPIES.fetch_add(1, Ordering::Relaxed);
    write_into(t, a);
}

/// [`copy_into`], not counted (a new array of [`to_numpy`]).
fn write_into(t: &HostTensor, a: &Bound<'_, PyUntypedArray>) {
    let src = t.bytes();
    if src.is_empty() {
        return;
    }
    // SAFETY: `fits(t, a)` held (checked by the caller, with the GIL held
    // since; or `a` is new, made by `empty` for `t`): `a` is a
    // C-contiguous, writable array of `t`'s shape and element size, so its
    // buffer holds exactly `src.len()` bytes; `t`'s bytes are the runtime's
    // own buffer or another array's (a loan at another position), never
    // `a`'s.
    unsafe {
        let dst = (*a.as_array_ptr()).fields.data as *mut u8;
        std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len());
        if t.dtype == DType::I1 {
            // numpy's bool holds 0 or 1 only.
            for b in std::slice::from_raw_parts_mut(dst, src.len()) {
                *b = (*b != 0) as u8;
            }
        }
    }
}

/// Check that `obj` can receive an output of element type `want` in place
/// (an ndarray, C-contiguous, aligned, writable, of that element type),
/// naming it `what` in the error.
pub fn writable_array(obj: &Bound<'_, PyAny>, want: Option<DType>, what: &str) -> PyResult<()> {
    let a = obj
        .cast::<PyUntypedArray>()
        .map_err(|_| error(format!("{what}: not a numpy array")))?;
    if let Some(w) = want {
        if !same_elements(a, w) {
            return Err(error(format!(
                "{what}: the model gives {w} elements, the array is {}",
                descr_text(a)
            )));
        }
    }
    writable(a).map_err(|why| error(format!("{what}: {why}")))
}
