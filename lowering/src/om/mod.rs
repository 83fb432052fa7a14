//! The compiler's side of the `.om` offline model (the format, the model
//! types and the reader are the `ge-om` crate):
//!
//! - [`from_ir`]: IR → `.om` ([`from_module`]), section by section;
//! - [`to_ir`]: `.om` → IR ([`to_module`], `ge-translate --om-to-air`);
//! - [`pass`]: the `write-om{file=...}` pass.

pub mod from_ir;
pub mod pass;
pub mod to_ir;

pub use from_ir::{from_module, stream_from_module, OmOptions};
pub use to_ir::to_module;

/// Lower-level entry point for tools: build the `.om` of a module's lowered
/// entry function and write it atomically, each weight streamed from the
/// module into the file. The number of bytes written.
pub fn write_module(
    module: &ge_ir::Module,
    path: &std::path::Path,
    opts: &OmOptions,
) -> Result<u64, String> {
    let m = stream_from_module(module.body(), Some(module), opts)?;
    ge_om::format::write_stream(path, &m)
}

/// Read an `.om` file and rebuild its module (`ge-translate --om-to-air`).
/// Errors are one line, prefixed with the path.
pub fn read_module(ctx: &ge_ir::Context, path: &std::path::Path) -> Result<ge_ir::Module, String> {
    let bytes = ge_om::read(path).map_err(|e| e.0)?;
    let om = ge_om::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    to_module(ctx, &om).map_err(|e| format!("{}: {e}", path.display()))
}
