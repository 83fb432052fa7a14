//! The full tool registry: every dialect and pass of every crate.

use ge_ir::Context;

/// A context with all dialects and passes registered.
pub fn full_context() -> Context {
    let mut ctx = Context::new();
    ge_dialects::register(&mut ctx);
    ge_rewrites::register(&mut ctx);
    ge_lowering::register(&mut ctx);
    ctx
}
