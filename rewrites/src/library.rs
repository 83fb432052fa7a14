//! The shipped pattern library: native patterns and the `.rr` rule files.

use crate::pattern::PatternSet;
use ge_ir::Context;

/// Every canonicalization pattern (rules labelled `canonical`).
pub fn canonical_patterns(_ctx: &Context) -> PatternSet {
    PatternSet::new()
}
