//! Status codes, the per-thread last error, and the guard every entry point
//! runs in: a Rust panic never unwinds into C, it becomes
//! `GE_ERROR_INTERNAL` with the panic's message.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The result of every fallible call: `GE_OK` (0) or one of the
/// `GE_ERROR_*` codes; `ge_last_error_message()` says what went wrong.
pub type ge_status = i32;

/// Success.
pub const GE_OK: ge_status = 0;
/// A NULL pointer where a value is required, a string that is not UTF-8, a
/// size that does not match, a tensor handle of another graph, an unknown
/// option or dtype.
pub const GE_ERROR_INVALID_ARGUMENT: ge_status = 1;
/// A file could not be read or written.
pub const GE_ERROR_IO: ge_status = 2;
/// `.air` text (a module, a type, an attribute) does not parse or verify.
pub const GE_ERROR_PARSE: ge_status = 3;
/// A model (ONNX) could not be imported.
pub const GE_ERROR_IMPORT: ge_status = 4;
/// An ES call could not build its op (shapes, attributes, a finished graph).
pub const GE_ERROR_BUILD: ge_status = 5;
/// ge-atc failed to compile the model.
pub const GE_ERROR_COMPILE: ge_status = 6;
/// An `.om` could not be loaded (bad bytes, unsupported SoC, too big).
pub const GE_ERROR_LOAD: ge_status = 7;
/// A run failed (wrong input names, shapes or dtypes, a kernel error).
pub const GE_ERROR_RUN: ge_status = 8;
/// A bug in ge (a Rust panic caught at the API boundary).
pub const GE_ERROR_INTERNAL: ge_status = 9;

/// An error of an API call: its status and message.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    pub status: ge_status,
    pub msg: String,
}

impl Error {
    pub fn new(status: ge_status, msg: impl Into<String>) -> Error {
        Error {
            status,
            msg: msg.into(),
        }
    }
    pub fn arg(msg: impl Into<String>) -> Error {
        Error::new(GE_ERROR_INVALID_ARGUMENT, msg)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(msg: String) {
    let c = CString::new(msg.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|l| *l.borrow_mut() = c);
}

/// Run the body of entry point `func`: its error becomes the thread's last
/// error (prefixed with `func`), a panic becomes `GE_ERROR_INTERNAL`.
pub fn entry(func: &str, f: impl FnOnce() -> Result<()>) -> ge_status {
    // AssertUnwindSafe: a panic may leave a handle's contents half-updated
    // (e.g. a graph with an op too many), never memory-unsafe — the handles
    // hold only safe Rust values — and the caller is told GE_ERROR_INTERNAL.
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => GE_OK,
        Ok(Err(e)) => {
            set_last_error(format!("{func}: {}", e.msg));
            e.status
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(format!("{func}: internal error (a bug in ge): {what}"));
            GE_ERROR_INTERNAL
        }
    }
}

/// Like [`entry`] for calls that return a value: `fallback` on error.
pub fn entry_value<T>(func: &str, fallback: T, f: impl FnOnce() -> Result<T>) -> T {
    let mut out = None;
    let st = entry(func, || {
        out = Some(f()?);
        Ok(())
    });
    match (st, out) {
        (GE_OK, Some(v)) => v,
        _ => fallback,
    }
}

/// The name of a status code (`"GE_ERROR_RUN"`), a static string; an unknown
/// code gives `"GE_ERROR_UNKNOWN"`.
#[no_mangle]
pub extern "C" fn ge_status_message(status: ge_status) -> *const c_char {
    let s: &'static [u8] = match status {
        GE_OK => b"GE_OK\0",
        GE_ERROR_INVALID_ARGUMENT => b"GE_ERROR_INVALID_ARGUMENT\0",
        GE_ERROR_IO => b"GE_ERROR_IO\0",
        GE_ERROR_PARSE => b"GE_ERROR_PARSE\0",
        GE_ERROR_IMPORT => b"GE_ERROR_IMPORT\0",
        GE_ERROR_BUILD => b"GE_ERROR_BUILD\0",
        GE_ERROR_COMPILE => b"GE_ERROR_COMPILE\0",
        GE_ERROR_LOAD => b"GE_ERROR_LOAD\0",
        GE_ERROR_RUN => b"GE_ERROR_RUN\0",
        GE_ERROR_INTERNAL => b"GE_ERROR_INTERNAL\0",
        _ => b"GE_ERROR_UNKNOWN\0",
    };
    s.as_ptr().cast()
}

/// The message of the most recent failed call on this thread ("" before
/// any): the function, then what went wrong. Valid until the next failed
/// call on this thread; successful calls leave it alone.
#[no_mangle]
pub extern "C" fn ge_last_error_message() -> *const c_char {
    LAST_ERROR.with(|l| l.borrow().as_ptr())
}

/// The last error message of this thread as a Rust string (tests).
pub fn last_error() -> String {
    LAST_ERROR.with(|l| l.borrow().to_string_lossy().into_owned())
}
