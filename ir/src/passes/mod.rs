//! The core passes every tool has.

pub mod infer_shapes;
mod print_ir;
mod strip_debuginfo;
mod symbol_dce;
mod view_graph;

use crate::pass::PassRegistry;

pub fn register_core_passes(r: &mut PassRegistry) {
    r.register(&infer_shapes::INFO, infer_shapes::make);
    r.register(&print_ir::INFO, print_ir::make);
    r.register(&strip_debuginfo::INFO, strip_debuginfo::make);
    r.register(&symbol_dce::INFO, symbol_dce::make);
    r.register(&view_graph::INFO, view_graph::make);
}
