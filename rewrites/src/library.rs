//! The shipped rule library (`rewrites/rules/*.rr`, compiled in) and rules
//! users load at run time (`ge-opt --rewrite-rules=file.rr`).

use crate::pattern::PatternSet;
use crate::rr::parse::checked;
use crate::rr::{parse_rules, to_patterns, Rule};
use ge_ir::Context;
use std::sync::OnceLock;

mod built {
    use crate::rr::ast::*;
    include!(concat!(env!("OUT_DIR"), "/library.rs"));
}

/// The library files: (file name, text), in the order their rules are tried
/// (the list is `rewrites/build.rs`'s `FILES`).
pub use built::LIBRARY;

/// Rules a user loaded; stored as a context extension.
#[derive(Default, Debug)]
pub struct UserRules(pub Vec<Rule>);

/// Every rule of the library: built at compile time from the files
/// (`rewrites/build.rs`), checked against `ctx` here as [`parse_rules`]
/// checks a file's rules. Panics only if the shipped library itself is
/// broken, which the library tests rule out.
pub fn library_rules(ctx: &Context) -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let mut out = vec![];
        for ((name, text), rules) in LIBRARY.iter().zip(built::BUILT) {
            match checked(ctx, 0, text, rules().into_iter().map(Ok)) {
                Ok(rs) => out.extend(rs),
                Err(d) => panic!("shipped rule library {name} is invalid: {}", d.message),
            }
        }
        out
    })
}

/// The library parsed from its files at run time, as [`library_rules`]
/// built them at compile time (for the test that they agree).
pub fn parse_library(ctx: &Context) -> Result<Vec<Rule>, String> {
    let mut out = vec![];
    for (name, text) in LIBRARY {
        let rs = parse_rules(ctx, name, 0, text).map_err(|d| format!("{name}: {}", d.message))?;
        out.extend(rs);
    }
    Ok(out)
}

/// Library rules carrying `label`.
pub fn labelled(ctx: &Context, label: &str) -> Vec<Rule> {
    library_rules(ctx)
        .iter()
        .filter(|r| r.labels.iter().any(|l| l == label))
        .cloned()
        .collect()
}

/// Every canonicalization pattern (rules labelled `canonical`).
pub fn canonical_patterns(ctx: &Context) -> PatternSet {
    let mut set = to_patterns(&labelled(ctx, "canonical"));
    set.extend(crate::native::canonical());
    set
}
