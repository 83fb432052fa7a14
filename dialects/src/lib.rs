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

/// A context with every dialect registered: what reading, verifying and
/// interpreting IR of these dialects needs (the runtime's kernels, the
/// importers, the ES builder). The one constructor of such a context;
/// `ge_compile::context` adds every pass of the compiler to it.
pub fn context() -> Context {
    let mut ctx = Context::new();
    register(&mut ctx);
    ctx
}

/// Register every dialect of this crate.
pub fn register(ctx: &mut Context) {
    ctx.constant_op = Some("data.constant");
    ctx.register_dialect(&graph::DIALECT);
    ctx.register_dialect(&data::DIALECT);
    ctx.register_dialect(&memory::DIALECT);
    ctx.register_dialect(&stream::DIALECT);
}
