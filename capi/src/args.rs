//! Arguments from C: pointers checked before use. NULL where a value is
//! required, a misaligned array or a non-UTF-8 string is an
//! `GE_ERROR_INVALID_ARGUMENT`, never undefined behaviour on our side.
//! (A dangling pointer cannot be detected; ge.h states the lifetimes.)

use crate::status::{Error, Result};
use std::ffi::{c_char, CStr};

/// A required C string.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that outlives `'a`.
pub unsafe fn cstr<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    // SAFETY: forwarded contract of this function.
    unsafe { opt_cstr(p, what) }?.ok_or_else(|| Error::arg(format!("'{what}' is NULL")))
}

/// An optional C string (NULL is `None`).
///
/// # Safety
/// As [`cstr`].
pub unsafe fn opt_cstr<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map(Some)
        .map_err(|_| Error::arg(format!("'{what}' is not UTF-8")))
}

/// `n` elements at `p` (NULL is allowed when `n` is 0).
///
/// # Safety
/// `p` is NULL or points to `n` initialised `T`s that outlive `'a`.
pub unsafe fn slice<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::arg(format!(
            "'{what}' is NULL but its length is {n}"
        )));
    }
    if !p.is_aligned() {
        return Err(Error::arg(format!(
            "'{what}' is not aligned for its element type"
        )));
    }
    if n.checked_mul(std::mem::size_of::<T>())
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(Error::arg(format!("'{what}': length {n} is too large")));
    }
    // SAFETY: non-NULL, aligned, size within isize::MAX; the caller promises
    // `n` initialised elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// An optional array: NULL is `None` (the attribute's default).
///
/// # Safety
/// As [`slice`].
pub unsafe fn opt_slice<'a, T>(p: *const T, n: usize, what: &str) -> Result<Option<&'a [T]>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded contract.
    unsafe { slice(p, n, what) }.map(Some)
}

/// An optional scalar behind a pointer (NULL is `None`).
///
/// # Safety
/// `p` is NULL or points to an initialised `T`.
pub unsafe fn opt_value<T: Copy>(p: *const T, what: &str) -> Result<Option<T>> {
    if p.is_null() {
        return Ok(None);
    }
    if !p.is_aligned() {
        return Err(Error::arg(format!("'{what}' is not aligned")));
    }
    // SAFETY: non-NULL and aligned; the caller promises an initialised value.
    Ok(Some(unsafe { *p }))
}

/// Strings of a `const char *const *` array.
///
/// # Safety
/// As [`slice`], and every element as [`cstr`].
pub unsafe fn strs<'a>(p: *const *const c_char, n: usize, what: &str) -> Result<Vec<&'a str>> {
    // SAFETY: forwarded contract.
    let ps = unsafe { slice(p, n, what) }?;
    ps.iter()
        .enumerate()
        // SAFETY: each element is a C string by the contract.
        .map(|(i, &s)| unsafe { cstr(s, &format!("{what}[{i}]")) })
        .collect()
}

/// A place the result is written to; checked for NULL before any work.
pub struct Out<T>(*mut T);

impl<T> Out<T> {
    /// # Safety
    /// `p` is NULL or valid for a write of `T`.
    pub unsafe fn new(p: *mut T, what: &str) -> Result<Out<T>> {
        if p.is_null() {
            return Err(Error::arg(format!("the output pointer '{what}' is NULL")));
        }
        if !p.is_aligned() {
            return Err(Error::arg(format!(
                "the output pointer '{what}' is not aligned"
            )));
        }
        Ok(Out(p))
    }
    pub fn set(self, v: T) {
        // SAFETY: checked non-NULL and aligned in `new`, valid by its contract;
        // `write` does not drop the (possibly uninitialised) old value.
        unsafe { self.0.write(v) }
    }
}

/// A handle the caller passed in.
///
/// # Safety
/// `p` is NULL or a live handle of this type (from its `_new`/`_load`
/// function, not yet freed), not used by another thread mutably.
pub unsafe fn handle<'a, T>(p: *const T, what: &str) -> Result<&'a T> {
    // SAFETY: forwarded contract.
    unsafe { p.as_ref() }.ok_or_else(|| Error::arg(format!("'{what}' is NULL")))
}

/// A handle the caller passed in, mutably.
///
/// # Safety
/// As [`handle`], and not used by any other call at the same time.
pub unsafe fn handle_mut<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T> {
    // SAFETY: forwarded contract.
    unsafe { p.as_mut() }.ok_or_else(|| Error::arg(format!("'{what}' is NULL")))
}

/// Free a handle made by `Box::into_raw` (NULL is ignored).
///
/// # Safety
/// `p` is NULL or a live handle of this type that is not used afterwards.
pub unsafe fn free<T>(p: *mut T) {
    if !p.is_null() {
        // SAFETY: the handle came from Box::into_raw and is freed once.
        drop(unsafe { Box::from_raw(p) });
    }
}
