//! Equality saturation with egg: a function's dataflow goes into an e-graph,
//! the rule library (compiled from `.rr`) saturates it under node, iteration
//! and time limits, and the cheapest equivalent program under a SoC cost
//! model is extracted and rebuilt as IR.

pub mod analysis;
pub mod build;
pub mod compile;
pub mod cost;
pub mod extract;
#[cfg(feature = "ilp")]
pub mod ilp;
pub mod lang;
pub mod pass;

/// Whether this build has the ILP extractor (`--features ge-rewrites/ilp`).
pub const ILP_AVAILABLE: bool = cfg!(feature = "ilp");
