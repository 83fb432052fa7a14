//! `canonicalize`: fold, erase dead ops and apply every canonicalization pattern
//! to a fixed point (MLIR's canonicalizer).

use super::greedy_options::GreedyOptions;
use crate::greedy::{apply_greedily, GreedyConfig};
use crate::pattern::PatternSet;
use ge_ir::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::OpData;

pub static INFO: PassInfo = PassInfo {
    name: "canonicalize",
    summary: "Fold, erase dead code and apply canonicalization patterns to a fixed point",
    description: "Runs the greedy driver with every op's folder (constant evaluation through the \
                  reference semantics included) and the canonicalization patterns (rules labelled \
                  `canonical`). Reports patterns that do not converge instead of looping.",
    anchor: None,
    options: CanonicalizeOptions::DEFS,
};

#[derive(ge_ir::PassOptions)]
pub struct CanonicalizeOptions {
    #[option(flatten)]
    pub driver: GreedyOptions,
    /// only these patterns (names or labels)
    #[option("enable-patterns")]
    pub enable: Vec<String>,
    /// not these patterns (names or labels)
    #[option("disable-patterns")]
    pub disable: Vec<String>,
}

pub struct Canonicalize {
    cfg: GreedyConfig,
    enable: Vec<String>,
    disable: Vec<String>,
    /// The filtered pattern set, built once per pass instance (it is the same
    /// for every function the pass runs on, and building it clones every rule).
    patterns: std::sync::OnceLock<PatternSet>,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    let o = CanonicalizeOptions::from_options(o);
    Ok(Box::new(Canonicalize {
        cfg: o.driver.config(),
        enable: o.enable,
        disable: o.disable,
        patterns: std::sync::OnceLock::new(),
    }))
}

/// Apply the enable/disable filters (by pattern name or label).
pub fn filter_patterns(set: &PatternSet, enable: &[String], disable: &[String]) -> PatternSet {
    let hit = |p: &dyn crate::pattern::Pattern, list: &[String]| {
        list.iter()
            .any(|n| n == p.name() || p.labels().iter().any(|l| l == n))
    };
    set.filtered(|p| (enable.is_empty() || hit(p, enable)) && !hit(p, disable))
}

impl Pass for Canonicalize {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, cx: &PassContext) -> PassResult {
        let patterns = self.patterns.get_or_init(|| {
            let all = crate::library::canonical_patterns(cx.ctx);
            filter_patterns(&all, &self.enable, &self.disable)
        });
        let Some(body) = op.inner.as_deref_mut() else {
            return Ok(());
        };
        apply_greedily(cx.ctx, body, patterns, &self.cfg)
            .map_err(|m| super::fail(op, "canonicalize", m))?;
        Ok(())
    }
}
