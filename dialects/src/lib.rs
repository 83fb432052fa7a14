//! ge-dialects: the AscendIR dialects.
//!
//! - [`graph`]: the compute graph (functions, calls, control flow, compute ops)
//! - [`data`]: data movement and layout (the role DESIGN.md gives `tensor`; renamed
//!   because mlir-opt's own `tensor` dialect rejects our ops in generic form)
//! - [`es`]: the ES builder API — typed Rust methods generated from the op
//!   definitions, so models are written as code
//!
//! Each op is one `def_op!` declaration in the module of its family: its
//! `OpDef`, typed handle, attribute accessors, interfaces and ES method.

pub mod data;
pub mod es;
pub mod graph;
pub mod infer;
pub mod interfaces;
pub mod memory;
pub mod stream;

use ge_ir::Context;

/// Register every dialect of this crate.
pub fn register(ctx: &mut Context) {
    ctx.constant_op = Some("data.constant");
    ctx.register_dialect(&graph::DIALECT);
    ctx.register_dialect(&data::DIALECT);
    ctx.register_dialect(&memory::DIALECT);
    ctx.register_dialect(&stream::DIALECT);
}
