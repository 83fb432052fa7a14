//! `apply-rules` and `algebraic-simplify`: run `.rr` rules with the greedy driver.

use super::canonicalize::config_from;
use crate::greedy::apply_greedily;
use crate::library::{labelled, library_rules, UserRules};
use crate::rr::{to_patterns, Rule};
use ge_ir::pass::{OptKind, OptionDef, Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::OpData;

const DRIVER_OPTIONS: [OptionDef; 4] = [
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
];

pub static INFO: PassInfo = PassInfo {
    name: "apply-rules",
    summary: "Apply declarative rewrite rules (.rr) to a fixed point",
    description: "Applies the rules loaded with `--rewrite-rules=file.rr`, or the shipped rule library \
                  when none were loaded. `rules=a,b` applies only the named rules (user or library); \
                  `labels=x` only rules with one of the labels. Folding and dead-code erasure run too.",
    anchor: None,
    options: &[
        OptionDef { name: "rules", kind: OptKind::List, default: "", doc: "only these rules (by name)" },
        OptionDef { name: "labels", kind: OptKind::List, default: "", doc: "only rules with one of these labels" },
        DRIVER_OPTIONS[0],
        DRIVER_OPTIONS[1],
        DRIVER_OPTIONS[2],
        DRIVER_OPTIONS[3],
        OptionDef { name: "fold-size-limit", kind: OptKind::Int, default: "65536", doc: "largest constant (in elements) folding may create" },
    ],
};

pub static ALGEBRAIC: PassInfo = PassInfo {
    name: "algebraic-simplify",
    summary: "Apply the algebraic identities of the rule library",
    description: "Runs the library rules labelled `algebraic` (x+0, x*1, double negation, …) with \
                  folding, to a fixed point.",
    anchor: None,
    options: &[
        DRIVER_OPTIONS[0],
        DRIVER_OPTIONS[1],
        DRIVER_OPTIONS[2],
        DRIVER_OPTIONS[3],
        OptionDef {
            name: "fold-size-limit",
            kind: OptKind::Int,
            default: "65536",
            doc: "largest constant (in elements) folding may create",
        },
    ],
};

struct ApplyRules {
    opts: PassOptions,
    info: &'static PassInfo,
    /// Selected rules as patterns, built once per pass instance (the same for
    /// every function it runs on).
    patterns: std::sync::OnceLock<Result<crate::pattern::PatternSet, String>>,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(ApplyRules {
        opts: o.clone(),
        info: &INFO,
        patterns: std::sync::OnceLock::new(),
    }))
}

pub fn make_algebraic(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(ApplyRules {
        opts: o.clone(),
        info: &ALGEBRAIC,
        patterns: std::sync::OnceLock::new(),
    }))
}

impl ApplyRules {
    fn select(&self, ctx: &ge_ir::Context) -> Result<Vec<Rule>, String> {
        if self.info.name == "algebraic-simplify" {
            return Ok(labelled(ctx, "algebraic"));
        }
        let user: &[Rule] = ctx
            .extension::<UserRules>()
            .map(|u| u.0.as_slice())
            .unwrap_or(&[]);
        let lib = library_rules(ctx);
        let names = self.opts.list("rules");
        let labels = self.opts.list("labels");
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
        for n in &names {
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
        let cfg = config_from(&self.opts);
        let Some(body) = op.inner.as_deref_mut() else {
            return Ok(());
        };
        apply_greedily(cx.ctx, body, patterns, &cfg)
            .map_err(|m| super::fail(op, self.info.name, m))?;
        Ok(())
    }
}
