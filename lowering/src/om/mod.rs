//! The `.om` offline model: what `ge-atc` writes and the runtime loads.
//!
//! - [`format`]: the binary container (header, partition table, checksums),
//!   its writer (temp file + rename) and its validating reader;
//! - [`model`]: the contents as Rust values (JSON partitions) and their
//!   validation;
//! - [`build`]: IR → `.om` ([`build::from_module`]) and `.om` → IR
//!   ([`build::to_module`], `ge-translate --om-to-air`);
//! - [`pass`]: the `write-om{file=...}` pass.
//!
//! ## For a runtime
//!
//! Load with [`format::parse`] on the file bytes (an mmap works: the weights
//! partition is borrowed, 64-byte aligned). Allocate one buffer per
//! [`model::ArenaDef`] of the model def — input and output arenas are the
//! caller's tensors (zero copy: bind them, don't copy), the workspace arena is
//! `size` bytes. Run [`model::Task`]s: one worker per stream executing its
//! tasks in program order; `record` marks an event when the stream reaches
//! it, `wait` blocks the stream until the latest earlier `record` of that
//! event (in program order) has fired. A `launch` runs kernel function
//! `kernels[kernel].name` of the kernels partition (`.air` text) on the
//! tensors of its `ins` (buffers at `offset` of `arena`, or weights) and writes
//! its results into `outs` — an `out` may be the very bytes of an `in`
//! (in-place elementwise kernels): read inputs before writing. Buffer types
//! are `.air` tensor types; symbolic dims take the values bound from the
//! inputs (≤ `symbol_bounds`, the sizes the plan was made for).

pub mod build;
pub mod format;
pub mod model;
pub mod pass;

pub use build::{from_module, to_module, OmOptions};
pub use format::{parse, read, OmError, OmFile};
pub use model::OmModel;

/// Lower-level entry point for tools: build the `.om` of a module's lowered
/// entry function and write it atomically.
pub fn write_module(
    module: &ge_ir::Module,
    path: &std::path::Path,
    opts: &OmOptions,
) -> Result<OmModel, String> {
    let m = from_module(module.body(), Some(module), opts)?;
    format::write(path, &m)?;
    Ok(m)
}

/// Read an `.om` file and rebuild its module (`ge-translate --om-to-air`).
/// Errors are one line, prefixed with the path.
pub fn read_module(ctx: &ge_ir::Context, path: &std::path::Path) -> Result<ge_ir::Module, String> {
    let bytes = format::read(path).map_err(|e| e.0)?;
    let om = format::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    build::to_module(ctx, &om).map_err(|e| format!("{}: {e}", path.display()))
}
