//! The Python package `ge`, its native part (`ge._native`): thin bindings
//! over the Rust crates. The Python modules in `python/ge/` put the public
//! API together (`ge.es` builds its methods from [`es::es_ops`]).
//!
//! - [`errors`]: `ge.Error` (with file:line:col) and the panic guard every
//!   entry point runs under: a Rust panic is a `ge.InternalError`, never an
//!   abort of the interpreter;
//! - [`ir`]: modules (parse, print, walk, verify), pass pipelines, `.rr`
//!   rules, eqsat reports;
//! - [`es`]: the graph builder, driven by the ops' declarations;
//! - [`frontends`]: ONNX and TensorFlow import;
//! - [`compile`]: ge-atc in process;
//! - [`runtime`]: models and sessions on numpy arrays;
//! - [`runner`]: `Session.runner()`, the cheap call path for repeated runs;
//! - [`feed`]: the inputs of a call, lent with what the last call learned;
//! - [`recycle`]: `Session.run`'s last result reused when no one holds it;
//! - [`gil`]: whether a run releases the GIL;
//! - [`slot`]: the scratch one call at a time takes, with the GIL held.

use pyo3::prelude::*;

mod arrays;
mod compile;
mod errors;
mod es;
mod feed;
mod frontends;
mod gil;
mod ir;
mod recycle;
mod runner;
mod runtime;
mod slot;
mod values;

/// Panics inside the guard every entry point runs under: the tests check
/// that it arrives as `ge.InternalError` and the interpreter goes on.
#[pyfunction]
fn _panic_for_test() -> PyResult<()> {
    errors::guard(|| panic!("deliberate panic (ge._native._panic_for_test)"))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("Error", py.get_type::<errors::Error>())?;
    m.add("InternalError", py.get_type::<errors::InternalError>())?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(arrays::_input_copies, m)?)?;
    m.add_function(wrap_pyfunction!(arrays::_output_copies, m)?)?;
    ir::register(m)?;
    es::register(m)?;
    frontends::register(m)?;
    compile::register(m)?;
    runtime::register(m)?;
    Ok(())
}
