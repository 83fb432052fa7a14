//! ge-rewrites: the pattern API and greedy driver, the rewrite passes
//! (canonicalize, cse, dce, constant-fold, algebraic-simplify, apply-rules)
//! and the `.rr` rule language.

pub mod eqsat;
pub mod fold;
pub mod greedy;
pub mod library;
pub mod native;
pub mod passes;
pub mod pattern;
pub mod rewriter;
pub mod rr;

use ge_ir::Context;

/// Register the rewrite passes.
pub fn register(ctx: &mut Context) {
    passes::register(&mut ctx.passes);
}
