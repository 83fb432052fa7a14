//! numpy arrays ↔ the runtime's host tensors.
//!
//! An input array is read in place when it is C-contiguous, aligned and in
//! native byte order (any other is made so by `numpy.ascontiguousarray`
//! first) and copied once into the 64-byte-aligned buffer the runtime binds
//! its input arena to. An output is one copy from the runtime's buffer into
//! a new array.

use crate::errors::error;
use ge_ir::DType;
use ge_runtime::HostTensor;
use numpy::{
    Element, IxDyn, PyArray, PyArrayDescr, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::PyAny;

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

/// A host tensor from any object numpy can make an array of (`what` names
/// it in errors).
pub fn to_host(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<HostTensor> {
    let py = obj.py();
    // The common case (an ndarray, contiguous, aligned, native order) makes
    // no Python call at all.
    let mut arr: Bound<'_, PyUntypedArray> = match obj.cast::<PyUntypedArray>() {
        Ok(a) => a.clone(),
        Err(_) => py
            .import("numpy")?
            .call_method1("asarray", (obj,))?
            .cast_into::<PyUntypedArray>()
            .map_err(|_| error(format!("{what}: not an array")))?,
    };
    let native = arr.dtype().byteorder() != b'>';
    if !arr.is_c_contiguous() || !arr.is_aligned() || !native {
        let native_dt = arr.dtype().call_method1("newbyteorder", ("=",))?;
        arr = py
            .import("numpy")?
            .call_method1("ascontiguousarray", (&arr, native_dt))?
            .cast_into::<PyUntypedArray>()
            .map_err(|_| error(format!("{what}: not an array")))?;
    }
    let dtype =
        dtype_of(&arr.dtype()).map_err(|e| error(format!("{what}: {}", err_text(py, &e))))?;
    let shape = arr.shape().to_vec();
    let n: usize = shape.iter().product();
    let nbytes = n
        .checked_mul(arr.dtype().itemsize())
        .ok_or_else(|| error(format!("{what}: the array is too large")))?;
    let bytes: &[u8] = if nbytes == 0 {
        &[]
    } else {
        // SAFETY: `arr` is a C-contiguous, aligned numpy array (made so
        // above) whose buffer holds `n` items of `itemsize` bytes; it stays
        // alive (we hold a reference and the GIL) while the slice is read.
        unsafe {
            let data = (*arr.as_array_ptr()).fields.data as *const u8;
            std::slice::from_raw_parts(data, nbytes)
        }
    };
    HostTensor::from_bytes(dtype, &shape, bytes).map_err(|e| error(format!("{what}: {e}")))
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
    Ok(match t.dtype {
        DType::F64 => typed::<f64>(py, t),
        DType::F32 => typed::<f32>(py, t),
        DType::F16 => typed::<half::f16>(py, t),
        DType::I64 | DType::Index => typed::<i64>(py, t),
        DType::I32 => typed::<i32>(py, t),
        DType::I16 => typed::<i16>(py, t),
        DType::I8 => typed::<i8>(py, t),
        DType::U64 => typed::<u64>(py, t),
        DType::U32 => typed::<u32>(py, t),
        DType::U16 => typed::<u16>(py, t),
        DType::U8 => typed::<u8>(py, t),
        DType::I1 => {
            // One byte per element, 0 or 1 (numpy's bool must not hold other bytes).
            let b = typed::<u8>(py, t);
            b.call_method1("astype", ("bool",))?
        }
        DType::BF16 => match PyArrayDescr::new(py, "bfloat16") {
            // ml_dtypes is installed: the same element type.
            Ok(descr) => typed::<u16>(py, t).call_method1("view", (descr,))?,
            // Without it, bfloat16 widens exactly to float32.
            Err(_) => {
                let bits = typed::<u16>(py, t);
                bits.call_method1("astype", ("uint32",))?
                    .call_method1("__lshift__", (16,))?
                    .call_method1("view", ("float32",))?
            }
        },
        #[allow(unreachable_patterns)]
        other => return Err(error(format!("element type {other} has no numpy dtype"))),
    })
}
