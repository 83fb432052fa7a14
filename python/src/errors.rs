//! `ge.Error`, `ge.InternalError` and the panic guard.
//!
//! Every error ge reports is a `ge.Error`; one about a place in a text
//! (`.air`, `.rr`, a pass pipeline) carries `file`, `line` and `col` (1-based)
//! and the rendered diagnostics (`diagnostics`, a list of str). A Rust panic
//! — a bug — is a `ge.InternalError` (a subclass), so that no input can
//! abort the interpreter or escape `except ge.Error`.

use ge_ir::diagnostics::{Diagnostic, Pos, SourceMap};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

create_exception!(
    ge,
    Error,
    PyException,
    "An error reported by ge: bad input, a failed pass, a failed run. `file`, `line`, \
     `col` locate it in a text when known; `diagnostics` lists every rendered diagnostic."
);
create_exception!(
    ge,
    InternalError,
    Error,
    "A bug in ge (a Rust panic), reported instead of aborting the interpreter."
);

/// A `ge.Error` with a message.
pub fn error(msg: impl Into<String>) -> PyErr {
    Error::new_err(msg.into())
}

/// Where a diagnostic points: file, 1-based line and column.
pub fn position(sm: &SourceMap, pos: &Pos) -> Option<(String, usize, usize)> {
    match pos {
        Pos::Span { file, range } => {
            let (l, c) = sm.line_col(*file, range.start);
            Some((sm.name(*file).to_string(), l, c))
        }
        Pos::Loc(l) => l
            .file_line_col()
            .map(|(f, line, col)| (f.to_string(), line as usize, col as usize)),
        Pos::None => None,
    }
}

/// A `ge.Error` from diagnostics (the errors among them; all if none is
/// one): the rendered text as message, the first one's position.
pub fn diag_error(py: Python<'_>, sm: &SourceMap, diags: &[Diagnostic]) -> PyErr {
    let errors: Vec<&Diagnostic> = match diags.iter().filter(|d| d.is_error()).collect::<Vec<_>>() {
        e if e.is_empty() => diags.iter().collect(),
        e => e,
    };
    let rendered: Vec<String> = errors.iter().map(|d| sm.render(d)).collect();
    let msg = rendered.join("").trim_end().to_string();
    let at = errors.first().and_then(|d| position(sm, &d.pos));
    error_at(
        py,
        if msg.is_empty() { "failed".into() } else { msg },
        at,
        rendered,
    )
}

/// A `ge.Error` with a position and the rendered diagnostics.
pub fn error_at(
    py: Python<'_>,
    msg: String,
    at: Option<(String, usize, usize)>,
    diagnostics: Vec<String>,
) -> PyErr {
    let e = Error::new_err(msg);
    let v = e.value(py);
    let (file, line, col) = match at {
        Some((f, l, c)) => (Some(f), Some(l), Some(c)),
        None => (None, None, None),
    };
    // Setting attributes on a fresh exception instance cannot fail in
    // practice; if it did, the error itself is still raised.
    let _ = v.setattr("file", file);
    let _ = v.setattr("line", line);
    let _ = v.setattr("col", col);
    let _ = v.setattr("diagnostics", diagnostics);
    e
}

/// The text of a panic payload.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// The message of a `ge.InternalError`.
pub fn internal(p: &(dyn std::any::Any + Send)) -> String {
    format!(
        "internal error in ge (a bug; please report it with the input): {}",
        panic_text(p)
    )
}

/// Run `f`, turning a panic into `ge.InternalError`.
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(InternalError::new_err(internal(&*p))),
    }
}

/// What fails in code run without the GIL: a message, or a panic.
pub enum Failure {
    Error(String),
    Panic(String),
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Error(m) => Error::new_err(m),
            Failure::Panic(m) => InternalError::new_err(m),
        }
    }
}

/// [`guard`] for code that runs without the GIL (`py.detach`).
pub fn guard_nogil<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, Failure> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(Failure::Error),
        Err(p) => Err(Failure::Panic(internal(&*p))),
    }
}

pub fn register_defaults(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let t = m.py().get_type::<Error>();
    for a in ["file", "line", "col"] {
        t.setattr(a, m.py().None())?;
    }
    t.setattr("diagnostics", Vec::<String>::new())?;
    Ok(())
}
