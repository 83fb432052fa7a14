//! The `.rr` declarative rule language: parse rule files into the rule IR
//! ([`ast`]) and run rules as greedy patterns ([`greedy`]); the equality
//! saturation back end compiles the same IR to egg rewrites.

pub mod ast;
pub mod eval;
pub mod greedy;
pub mod helpers;
pub mod parse;
pub mod syntax;

pub use ast::Rule;
pub use parse::parse_rules;

use crate::pattern::{Pattern, PatternSet};
use std::sync::Arc;

/// Rules as greedy patterns.
pub fn to_patterns(rules: &[Rule]) -> PatternSet {
    let mut set = PatternSet::new();
    for r in rules {
        set.add(Arc::new(greedy::RulePattern { rule: r.clone() }) as Arc<dyn Pattern>);
    }
    set
}
