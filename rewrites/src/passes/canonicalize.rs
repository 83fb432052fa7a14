//! `canonicalize`: fold, erase dead ops and apply every canonicalization pattern
//! to a fixed point (MLIR's canonicalizer).

use crate::greedy::{apply_greedily, GreedyConfig};
use crate::pattern::PatternSet;
use ge_ir::pass::{OptKind, OptionDef, Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::OpData;

pub static INFO: PassInfo = PassInfo {
    name: "canonicalize",
    summary: "Fold, erase dead code and apply canonicalization patterns to a fixed point",
    description: "Runs the greedy driver with every op's folder (constant evaluation through the \
                  reference semantics included) and the canonicalization patterns (rules labelled \
                  `canonical`). Reports patterns that do not converge instead of looping.",
    anchor: None,
    options: &[
        OptionDef {
            name: "top-down",
            kind: OptKind::Bool,
            default: "true",
            doc: "seed the worklist top-down",
        },
        OptionDef {
            name: "max-iterations",
            kind: OptKind::Int,
            default: "10",
            doc: "fixed-point iterations before giving up",
        },
        OptionDef {
            name: "max-num-rewrites",
            kind: OptKind::Int,
            default: "-1",
            doc: "stop after this many rewrites (-1: no limit)",
        },
        OptionDef {
            name: "test-convergence",
            kind: OptKind::Bool,
            default: "false",
            doc: "re-run after convergence and fail if anything still applies",
        },
        OptionDef {
            name: "enable-patterns",
            kind: OptKind::List,
            default: "",
            doc: "only these patterns (names or labels)",
        },
        OptionDef {
            name: "disable-patterns",
            kind: OptKind::List,
            default: "",
            doc: "not these patterns (names or labels)",
        },
        OptionDef {
            name: "fold-size-limit",
            kind: OptKind::Int,
            default: "65536",
            doc: "largest constant (in elements) folding may create",
        },
    ],
};

pub struct Canonicalize {
    cfg: GreedyConfig,
    enable: Vec<String>,
    disable: Vec<String>,
    /// The filtered pattern set, built once per pass instance (it is the same
    /// for every function the pass runs on, and building it clones every rule).
    patterns: std::sync::OnceLock<PatternSet>,
}

/// Greedy-driver settings shared by the rewrite passes' options.
pub fn config_from(o: &PassOptions) -> GreedyConfig {
    GreedyConfig {
        max_iterations: o.int("max-iterations").max(1) as usize,
        max_num_rewrites: usize::try_from(o.int("max-num-rewrites")).ok(),
        top_down: o.bool("top-down"),
        test_convergence: o.bool("test-convergence"),
        fold_size_limit: o.int("fold-size-limit").max(0) as usize,
        ..GreedyConfig::default()
    }
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(Canonicalize {
        cfg: config_from(o),
        enable: o.list("enable-patterns"),
        disable: o.list("disable-patterns"),
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
