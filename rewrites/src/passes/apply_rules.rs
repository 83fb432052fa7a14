//! `apply-rules` and `algebraic-simplify`: run `.rr` rules with the greedy driver.

use super::greedy_options::GreedyOptions;
use crate::greedy::{apply_greedily, GreedyConfig};
use crate::library::{labelled, library_rules, UserRules};
use crate::rr::{to_patterns, Rule};
use ge_ir::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::OpData;

pub static INFO: PassInfo = PassInfo {
    name: "apply-rules",
    summary: "Apply declarative rewrite rules (.rr) to a fixed point",
    description: "Applies the rules loaded with `--rewrite-rules=file.rr`, or the shipped rule library \
                  when none were loaded. `rules=a,b` applies only the named rules (user or library); \
                  `labels=x` only rules with one of the labels. Folding and dead-code erasure run too.",
    anchor: None,
    options: ApplyRulesOptions::DEFS,
};

#[derive(ge_ir::PassOptions)]
pub struct ApplyRulesOptions {
    /// only these rules (by name)
    #[option("rules")]
    pub rules: Vec<String>,
    /// only rules with one of these labels
    #[option("labels")]
    pub labels: Vec<String>,
    #[option(flatten)]
    pub driver: GreedyOptions,
}

pub static ALGEBRAIC: PassInfo = PassInfo {
    name: "algebraic-simplify",
    summary: "Apply the algebraic identities of the rule library",
    description: "Runs the library rules labelled `algebraic` (x+0, x*1, double negation, …) with \
                  folding, to a fixed point.",
    anchor: None,
    options: GreedyOptions::DEFS,
};

/// Which rules a pass instance runs.
enum Selection {
    /// `apply-rules`: by name and label, from the loaded rules or the library.
    Chosen {
        rules: Vec<String>,
        labels: Vec<String>,
    },
    /// `algebraic-simplify`: the library's `algebraic` rules.
    Algebraic,
}

struct ApplyRules {
    select: Selection,
    cfg: GreedyConfig,
    info: &'static PassInfo,
    /// Selected rules as patterns, built once per pass instance (the same for
    /// every function it runs on).
    patterns: std::sync::OnceLock<Result<crate::pattern::PatternSet, String>>,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    let o = ApplyRulesOptions::from_options(o);
    Ok(Box::new(ApplyRules {
        select: Selection::Chosen {
            rules: o.rules,
            labels: o.labels,
        },
        cfg: o.driver.config(),
        info: &INFO,
        patterns: std::sync::OnceLock::new(),
    }))
}

pub fn make_algebraic(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(ApplyRules {
        select: Selection::Algebraic,
        cfg: GreedyOptions::from_options(o).config(),
        info: &ALGEBRAIC,
        patterns: std::sync::OnceLock::new(),
    }))
}

impl ApplyRules {
    fn select(&self, ctx: &ge_ir::Context) -> Result<Vec<Rule>, String> {
        let (names, labels) = match &self.select {
            Selection::Algebraic => return Ok(labelled(ctx, "algebraic")),
            Selection::Chosen { rules, labels } => (rules, labels),
        };
        let user: &[Rule] = ctx
            .extension::<UserRules>()
            .map(|u| u.0.as_slice())
            .unwrap_or(&[]);
        let lib = library_rules(ctx);
        // Rules labelled `eqsat` rewrite in both directions (commutativity,
        // associativity): only equality saturation or an explicit request runs them.
        let explicit = !names.is_empty() || labels.iter().any(|l| l == "eqsat");
        let pool: Vec<&Rule> = if !names.is_empty() {
            user.iter().chain(lib.iter()).collect()
        } else if !user.is_empty() {
            user.iter().collect()
        } else {
            lib.iter()
                .filter(|r| explicit || !r.labels.iter().any(|l| l == "eqsat"))
                .collect()
        };
        for n in names {
            if !pool.iter().any(|r| &r.name == n) {
                return Err(format!("no rule named '{n}' (loaded or in the library)"));
            }
        }
        Ok(pool
            .into_iter()
            .filter(|r| names.is_empty() || names.contains(&r.name))
            .filter(|r| labels.is_empty() || r.labels.iter().any(|l| labels.contains(l)))
            .cloned()
            .collect())
    }
}

impl Pass for ApplyRules {
    fn info(&self) -> &'static PassInfo {
        self.info
    }
    fn run(&self, op: &mut OpData, cx: &PassContext) -> PassResult {
        let patterns = self
            .patterns
            .get_or_init(|| self.select(cx.ctx).map(|rules| to_patterns(&rules)))
            .as_ref()
            .map_err(|m| super::fail(op, self.info.name, m.clone()))?;
        let Some(body) = op.inner.as_deref_mut() else {
            return Ok(());
        };
        apply_greedily(cx.ctx, body, patterns, &self.cfg)
            .map_err(|m| super::fail(op, self.info.name, m))?;
        Ok(())
    }
}
