//! TVM-style op patterns: how an op's outputs depend on its inputs, which
//! decides what operator fusion may put together (TVM's `OpPatternKind`).
//!
//! | pattern | ops | output element depends on |
//! |---|---|---|
//! | elementwise | unary/binary math on equal shapes | the same element of each input |
//! | broadcast | binary math with broadcasting, batch_norm | one element of each input (indices broadcast) |
//! | injective | reshape, transpose, slice, pad, tile, transdata, gather | one input element, anywhere |
//! | reduction | reduce_*, argmax/argmin, global pools | many elements of one input |
//! | out_elementwise_fusable | conv, matmul, gemm, pools | many elements; an elementwise epilogue fuses |
//! | opaque | softmax, norms, control flow, concat/split, … | cannot be fused |

use ge_ir::body::{Body, OpId};
use ge_ir::opdef::Trait;

/// Ordered as TVM orders them: a fused group's pattern is the largest of its ops'.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pattern {
    Elementwise = 0,
    Broadcast = 1,
    Injective = 2,
    Reduction = 3,
    OutElementwiseFusable = 4,
    Opaque = 8,
}

impl Pattern {
    /// The `kind` attribute value of a `graph.fused` kernel of this pattern.
    pub fn kind(self) -> Option<&'static str> {
        match self {
            Pattern::Elementwise => Some("elementwise"),
            Pattern::Broadcast => Some("broadcast"),
            Pattern::Injective => Some("injective"),
            Pattern::Reduction => Some("reduction"),
            Pattern::OutElementwiseFusable => Some("out_elementwise_fusable"),
            Pattern::Opaque => None,
        }
    }

    pub fn from_kind(s: &str) -> Option<Pattern> {
        [
            Pattern::Elementwise,
            Pattern::Broadcast,
            Pattern::Injective,
            Pattern::Reduction,
            Pattern::OutElementwiseFusable,
        ]
        .into_iter()
        .find(|p| p.kind() == Some(s))
    }

    /// Whether element `i` of every output reads only element `i` of each
    /// input of the output's own type (so an output may overwrite such an
    /// input in place).
    pub fn is_pointwise(self) -> bool {
        self <= Pattern::Broadcast
    }
}

const INJECTIVE: &[&str] = &[
    "data.reshape",
    "data.squeeze",
    "data.unsqueeze",
    "data.identity",
    "data.transpose",
    "data.broadcast_to",
    "data.expand",
    "data.tile",
    "data.slice",
    "data.transdata",
    "graph.pad",
    "graph.gather",
];

const REDUCTION: &[&str] = &[
    "graph.reduce_sum",
    "graph.reduce_mean",
    "graph.reduce_max",
    "graph.reduce_min",
    "graph.reduce_prod",
    "graph.argmax",
    "graph.argmin",
    "graph.global_avg_pool",
    "graph.global_max_pool",
];

const OUT_EWISE_FUSABLE: &[&str] = &[
    "graph.conv2d",
    "graph.conv_transpose2d",
    "graph.matmul",
    "graph.batch_matmul",
    "graph.gemm",
    "graph.avg_pool2d",
    "graph.max_pool2d",
];

/// The pattern of one op.
pub fn op_pattern(body: &Body, op: OpId) -> Pattern {
    let d = body.op(op);
    let name = d.name.as_str();
    if name == "graph.fused" {
        return d
            .attr("kind")
            .and_then(|a| a.as_str())
            .and_then(Pattern::from_kind)
            .unwrap_or(Pattern::Opaque);
    }
    if !d.regions().is_empty() || d.results().is_empty() {
        return Pattern::Opaque;
    }
    if d.has_trait(Trait::Elementwise) {
        let out = body.value_type(d.results()[0]);
        let same = d
            .operands()
            .iter()
            .all(|&v| shape_of(body.value_type(v)) == shape_of(out));
        return if same {
            Pattern::Elementwise
        } else {
            Pattern::Broadcast
        };
    }
    if name == "graph.batch_norm" {
        return Pattern::Broadcast;
    }
    if INJECTIVE.contains(&name) {
        return Pattern::Injective;
    }
    if REDUCTION.contains(&name) {
        return Pattern::Reduction;
    }
    if OUT_EWISE_FUSABLE.contains(&name) {
        return Pattern::OutElementwiseFusable;
    }
    Pattern::Opaque
}

fn shape_of(t: ge_ir::Type) -> Option<&'static [ge_ir::Dim]> {
    t.as_tensor().and_then(|t| t.dims.as_deref())
}
