//! The shipped rule library (`rewrites/rules/*.rr`, compiled in) and rules
//! users load at run time (`ge-opt --rewrite-rules=file.rr`).

use crate::pattern::PatternSet;
use crate::rr::{parse_rules, to_patterns, Rule};
use ge_ir::Context;
use std::sync::OnceLock;

/// The library files: (file name, text).
pub const LIBRARY: &[(&str, &str)] = &[
    ("algebraic.rr", include_str!("../rules/algebraic.rr")),
    ("identity.rr", include_str!("../rules/identity.rr")),
    ("broadcast.rr", include_str!("../rules/broadcast.rr")),
    ("fold_bn.rr", include_str!("../rules/fold_bn.rr")),
    ("epilogue.rr", include_str!("../rules/epilogue.rr")),
    ("recognize.rr", include_str!("../rules/recognize.rr")),
    ("layout.rr", include_str!("../rules/layout.rr")),
    ("taso.rr", include_str!("../rules/taso.rr")),
];

/// Rules a user loaded; stored as a context extension.
#[derive(Default, Debug)]
pub struct UserRules(pub Vec<Rule>);

/// Every rule of the library. Panics only if the shipped library itself is
/// broken, which the library tests rule out.
pub fn library_rules(ctx: &Context) -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let mut out = vec![];
        for (name, text) in LIBRARY {
            match parse_rules(ctx, name, 0, text) {
                Ok(rs) => out.extend(rs),
                Err(d) => panic!("shipped rule library {name} is invalid: {}", d.message),
            }
        }
        out
    })
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
