//! `strip-debuginfo`: replace every location with `loc(unknown)`.

use crate::body::{Body, OpData, WalkOrder};
use crate::location::Location;
use crate::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};

pub static INFO: PassInfo = PassInfo {
    name: "strip-debuginfo",
    summary: "Replace all locations with loc(unknown)",
    description:
        "Removes source locations from every op and block argument nested in the anchor op.",
    anchor: None,
    options: &[],
};

struct StripDebugInfo;

pub fn make(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(StripDebugInfo))
}

fn strip(body: &mut Body) {
    let unknown = Location::unknown();
    for v in 0..body.value_capacity() {
        body.set_value_loc(crate::body::ValueId(v as u32), unknown);
    }
    for o in body.all_ops(WalkOrder::Pre) {
        body.op_mut(o).loc = unknown;
        if let Some(inner) = body.inner_mut(o) {
            // Bodies nest as deep as the text: grow the stack, not overflow it.
            stacker::maybe_grow(64 * 1024, 1024 * 1024, || strip(inner));
        }
    }
}

impl Pass for StripDebugInfo {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, _cx: &PassContext) -> PassResult {
        op.loc = Location::unknown();
        if let Some(b) = op.inner.as_deref_mut() {
            strip(b);
        }
        Ok(())
    }
}
