//! Rule files grouped by the op name each rule is rooted at, so a function's
//! optimisation depends only on the groups of op names that occur in it.

use ge_ir::diagnostics::SourceMap;
use ge_ir::Context;
use ge_rewrites::rr::ast::{AExpr, Expr, OpPat, Pat, Rule};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The group of rules whose root is not an op pattern (they apply anywhere).
pub const ANY_ROOT: &str = "*";

/// One rule with what identifies it for change detection.
#[derive(Clone, Debug)]
pub struct RuleEntry {
    /// The rule without its source position: equal keys mean the same rule,
    /// wherever it moved in its file.
    pub key: String,
    /// Position among all loaded rules (the order `apply-rules` sees).
    pub order: usize,
    /// Op names its replacement can create.
    pub creates: Vec<String>,
    pub rule: Rule,
}

impl PartialEq for RuleEntry {
    fn eq(&self, other: &Self) -> bool {
        // `order` is left out: inserting a rule shifts every later one, and
        // only the relative order of rules with the same root matters.
        self.key == other.key
    }
}
impl Eq for RuleEntry {}

/// The rules rooted at one op name, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    pub rules: Vec<RuleEntry>,
}

impl Group {
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

#[derive(Debug, Default)]
pub struct RuleIndex {
    all: Vec<RuleEntry>,
    by_root: BTreeMap<String, Group>,
}

impl PartialEq for RuleIndex {
    fn eq(&self, other: &Self) -> bool {
        self.all == other.all
    }
}
impl Eq for RuleIndex {}

impl RuleIndex {
    pub fn all(&self) -> &[RuleEntry] {
        &self.all
    }
    pub fn group(&self, root: &str) -> Group {
        self.by_root.get(root).cloned().unwrap_or_default()
    }
}

/// Parse rule files (path, text) in order; the first error is rendered.
pub fn index(ctx: &Context, files: &[(String, Arc<str>)]) -> Result<RuleIndex, String> {
    let mut ix = RuleIndex::default();
    let mut sm = SourceMap::new();
    for (path, text) in files {
        let f = sm.add(path, text.clone());
        let rules = ge_rewrites::rr::parse_rules(ctx, path, f, text).map_err(|d| sm.render(&d))?;
        for rule in rules {
            let mut anon = rule.clone();
            anon.span = 0..0;
            let key = format!("{anon:?}");
            let mut creates = vec![];
            for e in rule.results.iter().chain(rule.lets.iter().map(|(_, e)| e)) {
                expr_ops(e, &mut creates);
            }
            if let Some(c) = ctx.constant_op {
                // Folding and helper calls materialise constants.
                creates.push(c.to_string());
            }
            creates.sort();
            creates.dedup();
            let entry = RuleEntry {
                key,
                order: ix.all.len(),
                creates,
                rule,
            };
            let mut roots: Vec<String> = entry
                .rule
                .roots
                .iter()
                .map(|p| match p {
                    Pat::Op(o) => o.name.clone(),
                    _ => ANY_ROOT.to_string(),
                })
                .collect();
            roots.sort();
            roots.dedup();
            for r in roots {
                ix.by_root.entry(r).or_default().rules.push(entry.clone());
            }
            ix.all.push(entry);
        }
    }
    Ok(ix)
}

fn expr_ops(e: &Expr, out: &mut Vec<String>) {
    if let Expr::Op { name, operands, .. } = e {
        out.push(name.clone());
        for o in operands {
            expr_ops(o, out);
        }
    }
}

/// A rule that matches nothing: stands in for "user rules were given, none
/// of them can apply here" so `apply-rules` does not fall back to the library.
pub fn never_rule() -> Rule {
    Rule {
        name: "__ge_incremental_no_rule".into(),
        labels: vec![],
        benefit: 0,
        roots: vec![Pat::Op(OpPat {
            name: "ge.incremental_no_op".into(),
            operands: vec![Pat::Var("x".into())],
            attrs: vec![],
            bind: None,
        })],
        lets: vec![],
        results: vec![Expr::A(AExpr::Var("x".into()))],
        cond: None,
        span: 0..0,
        file: String::new(),
    }
}
