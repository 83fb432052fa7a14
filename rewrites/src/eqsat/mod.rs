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

/// Whether the ILP extractor can be used: this build has it (`--features
/// ge-rewrites/ilp`) and `GE_DISABLE_FEATURES` does not name `ilp`. The
/// variable lets the tests of the "feature missing" error run in the builds CI
/// makes, which have the feature.
pub fn ilp_available() -> bool {
    cfg!(feature = "ilp") && !feature_disabled("ilp")
}

/// Whether `GE_DISABLE_FEATURES` (comma- or space-separated names) names `feature`.
pub fn feature_disabled(feature: &str) -> bool {
    std::env::var("GE_DISABLE_FEATURES")
        .is_ok_and(|v| v.split([',', ' ']).any(|f| f.trim() == feature))
}
