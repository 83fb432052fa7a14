//! The compiler's side of the `.om` offline model (the format, the model
//! types and the reader are the `ge-om` crate):
//!
//! - [`build`]: IR → `.om` ([`build::from_module`]) and `.om` → IR
//!   ([`build::to_module`], `ge-translate --om-to-air`);
//! - [`pass`]: the `write-om{file=...}` pass.

pub mod build;
pub mod pass;

pub use build::{from_module, to_module, OmOptions};
use ge_om::OmModel;

/// Lower-level entry point for tools: build the `.om` of a module's lowered
/// entry function and write it atomically.
pub fn write_module(
    module: &ge_ir::Module,
    path: &std::path::Path,
    opts: &OmOptions,
) -> Result<OmModel, String> {
    let m = from_module(module.body(), Some(module), opts)?;
    ge_om::format::write(path, &m)?;
    Ok(m)
}

/// Read an `.om` file and rebuild its module (`ge-translate --om-to-air`).
/// Errors are one line, prefixed with the path.
pub fn read_module(ctx: &ge_ir::Context, path: &std::path::Path) -> Result<ge_ir::Module, String> {
    let bytes = ge_om::read(path).map_err(|e| e.0)?;
    let om = ge_om::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    build::to_module(ctx, &om).map_err(|e| format!("{}: {e}", path.display()))
}
