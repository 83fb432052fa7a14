//! `dce`: erase ops without side effects whose results are unused.

use ge_ir::body::{Body, OpId, WalkOrder};
use ge_ir::opdef::Trait;
use ge_ir::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::OpData;

pub static INFO: PassInfo = PassInfo {
    name: "dce",
    summary: "Erase dead pure ops",
    description:
        "Erases `Pure` ops whose results are unused, repeatedly (an erased op can make its \
                  operands' producers dead), in every region and nested function.",
    anchor: None,
    options: &[],
};

struct Dce;

pub fn make(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(Dce))
}

/// Erase dead ops in `body` (and nested bodies); returns how many.
pub fn dce_body(body: &mut Body) -> usize {
    let mut erased = 0;
    let mut work: Vec<OpId> = body.all_ops(WalkOrder::Pre);
    while let Some(op) = work.pop() {
        let d = body.op(op);
        if !d.is_alive()
            || !d.has_trait(Trait::Pure)
            || d.has_trait(Trait::Terminator)
            || d.inner.is_some()
        {
            continue;
        }
        if body.results_unused(op) {
            let defs: Vec<OpId> = d
                .operands()
                .iter()
                .filter_map(|&v| body.defining_op(v))
                .collect();
            body.erase_op(op);
            erased += 1;
            work.extend(defs);
        }
    }
    for o in body.all_ops(WalkOrder::Pre) {
        if let Some(inner) = body.inner_mut(o) {
            // Bodies nest as deep as the text: grow the stack, not overflow it.
            erased += stacker::maybe_grow(64 * 1024, 1024 * 1024, || dce_body(inner));
        }
    }
    erased
}

impl Pass for Dce {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, _cx: &PassContext) -> PassResult {
        if let Some(body) = op.inner.as_deref_mut() {
            dce_body(body);
        }
        Ok(())
    }
}
