//! The rewrite passes.

pub mod apply_rules;
pub mod canonicalize;
pub mod constant_fold;
pub mod cse;
pub mod dce;
pub mod greedy_options;

use ge_ir::pass::PassRegistry;

pub fn register(r: &mut PassRegistry) {
    r.register(&canonicalize::INFO, canonicalize::make);
    r.register(&cse::INFO, cse::make);
    r.register(&dce::INFO, dce::make);
    r.register(&constant_fold::INFO, constant_fold::make);
    r.register(&apply_rules::INFO, apply_rules::make);
    r.register(&apply_rules::ALGEBRAIC, apply_rules::make_algebraic);
    r.register(&crate::eqsat::pass::INFO, crate::eqsat::pass::make);
}

/// Turn a driver error into the pass failure diagnostic at the anchor op.
pub(crate) fn fail(op: &ge_ir::OpData, pass: &str, msg: String) -> Vec<ge_ir::Diagnostic> {
    vec![ge_ir::Diagnostic::error(
        format!("{pass}: {msg}"),
        ge_ir::diagnostics::Pos::Loc(op.loc),
    )]
}
