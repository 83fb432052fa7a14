//! Element types as C constants (stable numbers: never renumbered).

use crate::status::{Error, Result};
use ge_ir::DType;
use std::ffi::c_char;

/// An element type: one of the `GE_DTYPE_*` constants.
pub type ge_dtype = i32;

pub const GE_DTYPE_F32: ge_dtype = 1;
pub const GE_DTYPE_F16: ge_dtype = 2;
pub const GE_DTYPE_BF16: ge_dtype = 3;
pub const GE_DTYPE_F64: ge_dtype = 4;
pub const GE_DTYPE_I8: ge_dtype = 5;
pub const GE_DTYPE_I16: ge_dtype = 6;
pub const GE_DTYPE_I32: ge_dtype = 7;
pub const GE_DTYPE_I64: ge_dtype = 8;
pub const GE_DTYPE_U8: ge_dtype = 9;
pub const GE_DTYPE_U16: ge_dtype = 10;
pub const GE_DTYPE_U32: ge_dtype = 11;
pub const GE_DTYPE_U64: ge_dtype = 12;
/// `i1`: one byte per element, 0 or 1.
pub const GE_DTYPE_BOOL: ge_dtype = 13;

/// Every C dtype with its ge dtype.
const TABLE: [(ge_dtype, DType); 13] = [
    (GE_DTYPE_F32, DType::F32),
    (GE_DTYPE_F16, DType::F16),
    (GE_DTYPE_BF16, DType::BF16),
    (GE_DTYPE_F64, DType::F64),
    (GE_DTYPE_I8, DType::I8),
    (GE_DTYPE_I16, DType::I16),
    (GE_DTYPE_I32, DType::I32),
    (GE_DTYPE_I64, DType::I64),
    (GE_DTYPE_U8, DType::U8),
    (GE_DTYPE_U16, DType::U16),
    (GE_DTYPE_U32, DType::U32),
    (GE_DTYPE_U64, DType::U64),
    (GE_DTYPE_BOOL, DType::I1),
];

pub fn to_dtype(d: ge_dtype) -> Result<DType> {
    TABLE
        .iter()
        .find(|(c, _)| *c == d)
        .map(|(_, t)| *t)
        .ok_or_else(|| Error::arg(format!("{d} is not a GE_DTYPE_* constant")))
}

pub fn from_dtype(d: DType) -> Result<ge_dtype> {
    TABLE
        .iter()
        .find(|(_, t)| *t == d)
        .map(|(c, _)| *c)
        .ok_or_else(|| {
            Error::arg(format!(
                "dtype {d} has no GE_DTYPE_* constant in this API version"
            ))
        })
}

/// The dims of a shape from C as sizes, and the bytes of a `dtype` tensor
/// of that shape (negative dims and overflow are errors).
pub fn shape_bytes(shape: &[i64], dtype: DType) -> Result<(Vec<usize>, usize)> {
    let too_large = || Error::arg(format!("the shape {shape:?} is too large"));
    let mut dims = Vec::with_capacity(shape.len());
    let mut n = dtype.byte_size();
    for &d in shape {
        let d = usize::try_from(d).map_err(|_| Error::arg(format!("dim {d} is negative")))?;
        n = n.checked_mul(d).ok_or_else(too_large)?;
        dims.push(d);
    }
    Ok((dims, n))
}

/// The `.air` spelling of a dtype (`"f32"`, `"i1"` for `GE_DTYPE_BOOL`), a
/// static string; NULL for an unknown code.
#[no_mangle]
pub extern "C" fn ge_dtype_name(dtype: ge_dtype) -> *const c_char {
    static NAMES: std::sync::OnceLock<Vec<(ge_dtype, std::ffi::CString)>> =
        std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        TABLE
            .iter()
            .map(|(c, t)| {
                (
                    *c,
                    std::ffi::CString::new(t.to_string()).unwrap_or_default(),
                )
            })
            .collect()
    });
    names
        .iter()
        .find(|(c, _)| *c == dtype)
        .map_or(std::ptr::null(), |(_, s)| s.as_ptr())
}

/// Bytes of one element of `dtype` (0 for an unknown code).
#[no_mangle]
pub extern "C" fn ge_dtype_size(dtype: ge_dtype) -> usize {
    to_dtype(dtype).map_or(0, |d| d.byte_size())
}
