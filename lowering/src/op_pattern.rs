//! TVM-style op patterns: how an op's outputs depend on its inputs, which
//! decides what operator fusion may put together (TVM's `OpPatternKind`).
//!
//! Each op declares its pattern as the [`FusionPattern`] interface (see the
//! table in `ge_ir::interfaces`); this module only adds what depends on the
//! op instance: an elementwise op whose operands' shapes differ from its
//! result's is a broadcast, a `graph.fused` kernel has the pattern of its
//! `kind` attribute, and an op without the interface (or with regions, or
//! without results) is opaque.

use ge_dialects::graph::control::Fused;
use ge_ir::body::{Body, OpId};
pub use ge_ir::interfaces::FusionPattern as Pattern;

/// The pattern of one op.
pub fn op_pattern(body: &Body, op: OpId) -> Pattern {
    let d = body.op(op);
    if Fused::is(d) {
        return Fused::attrs(d)
            .kind()
            .and_then(Pattern::from_kind)
            .unwrap_or(Pattern::Opaque);
    }
    if !d.regions().is_empty() || d.results().is_empty() {
        return Pattern::Opaque;
    }
    let declared = d
        .def
        .and_then(|def| def.interface::<Pattern>())
        .copied()
        .unwrap_or(Pattern::Opaque);
    if declared == Pattern::Elementwise {
        let out = body.value_type(d.results()[0]);
        let same = d
            .operands()
            .iter()
            .all(|&v| shape_of(body.value_type(v)) == shape_of(out));
        if !same {
            return Pattern::Broadcast;
        }
    }
    declared
}

fn shape_of(t: ge_ir::Type) -> Option<&'static [ge_ir::Dim]> {
    t.as_tensor().and_then(|t| t.dims.as_deref())
}
