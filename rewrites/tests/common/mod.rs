//! Shared by the fold tests (fold_splats.rs, fold_bytes.rs): parse a module and
//! fold each op two ways — by a fast path under test and by the op's semantics.

use ge_ir::attributes::{Attribute, DenseElements};
use ge_ir::body::{Body, OpId};
use ge_ir::interp::fold_with_semantics;
use ge_ir::module::Module;

pub fn parse(text: &str) -> Module {
    let ctx = ge_dialects::context();
    ge_ir::parser::parse_module(&ctx, "t.air", text, Default::default())
        .unwrap_or_else(|d| panic!("{}\n{text}", d.message))
}

/// A fast fold under test (`fold_splats`, `fold_bytes`): the same signature.
pub type FastFold = fn(&Body, OpId, &[Option<Attribute>]) -> Option<Vec<DenseElements>>;

/// An op's name, its fast fold and its full fold.
pub type Folds = (
    String,
    Option<Vec<DenseElements>>,
    Option<Vec<DenseElements>>,
);

/// Each op of the module for which `folded` holds, folded by `fast` and by its
/// semantics on its constant operands.
pub fn folds(m: &Module, folded: impl Fn(&str) -> bool, fast: FastFold) -> Vec<Folds> {
    let mut out = vec![];
    let mb = m.body();
    mb.walk_deep(ge_ir::body::WalkOrder::Pre, &mut |b, o| {
        let name = b.op(o).name.as_str();
        if !folded(name) {
            return;
        }
        let consts: Vec<Option<Attribute>> = b
            .op(o)
            .operands()
            .iter()
            .map(|&v| {
                b.defining_op(v)
                    .filter(|&c| b.op(c).name.as_str() == "data.constant")
                    .and_then(|c| b.op(c).attr("value"))
            })
            .collect();
        let quick = fast(b, o, &consts);
        let full = fold_with_semantics(b, o, &consts)
            .map(|ts| ts.iter().map(|t| t.to_dense().canonical()).collect());
        out.push((name.to_string(), quick, full));
    });
    out
}
