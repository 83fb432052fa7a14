//! ge's C API: `include/ge/ge.h`, generated from this crate by cbindgen
//! (`cargo run -p ge-capi --features generate --bin ge-capi-gen`; a test
//! checks the checked-in header is what the generator writes).
//!
//! - opaque handles (`ge_graph`, `ge_module`, `ge_compile_options`,
//!   `ge_model`, `ge_session`, `ge_tensor`, `ge_outputs`, `ge_bytes`), each with a
//!   `_free` that ignores NULL;
//! - every fallible call returns a `ge_status`; `ge_last_error_message()`
//!   says what went wrong (per thread); no panic crosses the boundary
//!   ([`status::entry`] wraps every entry point in `catch_unwind`);
//! - ES graph building: one `ge_es_<op>` function per op with an ES method,
//!   generated from the op declarations into [`es_ops`], and `ge_es_op` by
//!   name;
//! - ONNX and TensorFlow import, ge-atc compiles with ge-atc's option
//!   names, and the runtime's `Model`/`Session` (run by input name, traced
//!   on request as `ge-run --trace` traces).
//!
//! The compatibility promise is in docs/c-api.md.
#![allow(non_camel_case_types)]
// Entry points check their pointers (args.rs); the rest is ge.h's contract.
#![allow(clippy::missing_safety_doc)]

#[cfg(any(test, feature = "generate"))]
pub mod abi;
pub mod args;
pub mod bytes;
pub mod compile;
pub mod dtype;
pub mod es;
pub mod es_ops;
#[cfg(any(test, feature = "generate"))]
pub mod gen;
pub mod module;
pub mod runtime;
pub mod status;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_tf_trace;

/// Major version of the API: a release that breaks the ABI or the API
/// (a changed signature, a removed function, a renumbered constant) bumps it.
pub const GE_API_VERSION_MAJOR: u32 = 0;
/// Minor version: additions only (new functions, new constants, new ops).
pub const GE_API_VERSION_MINOR: u32 = 9;
/// The version this header describes: `MAJOR << 16 | MINOR`. Compare it with
/// `ge_api_version()`: the library serves a program built against the
/// header when the majors are equal and the library's minor is not older.
pub const GE_API_VERSION: u32 = (GE_API_VERSION_MAJOR << 16) | GE_API_VERSION_MINOR;

/// The library's API version (`GE_API_VERSION` of the header it was built
/// with).
#[no_mangle]
pub extern "C" fn ge_api_version() -> u32 {
    GE_API_VERSION
}
