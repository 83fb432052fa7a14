//! Turning optimisations off: ATC's `--fusion_switch_file` and
//! `--optimization_switch`.
//!
//! A fusion switch file is ATC's JSON
//!
//! ```json
//! {"Switch": {"GraphFusion": {"ALL": "off", "fold_bn_into_conv": "on"},
//!             "UBFusion": {"ALL": "off"}}}
//! ```
//!
//! (or the older one-per-line `name:off` form). Graph fusions are our
//! rewrite rules, named by rule name or label (`fusion`, `recognize`, …;
//! `ALL` is every rule labelled `fusion`); UB fusion is kernel fusion
//! (`fuse-kernels`; `ALL` turns it off). `ALL: off` with named entries `on`
//! keeps just those. `--optimization_switch "cse:off;conv_relu_epilogue:off"`
//! takes pass names (`canonicalize`, `cse`, `fuse-kernels`, `select-formats`,
//! `recognize`, `in-place`) and rule names or labels. Unknown names are errors.

use ge_ir::Context;
use ge_rewrites::library::library_rules;
use std::collections::BTreeSet;

/// What is switched off.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Switches {
    /// Rule names (never labels: resolved here) the rewrite stages skip.
    pub disabled_rules: BTreeSet<String>,
    pub no_canonicalize: bool,
    pub no_cse: bool,
    pub no_fuse_kernels: bool,
    pub no_formats: bool,
    pub no_in_place: bool,
}

/// Passes the optimization switch may turn off.
const PASSES: &[&str] = &[
    "canonicalize",
    "cse",
    "fuse-kernels",
    "select-formats",
    "in-place",
];

/// Stages every compile needs.
const MANDATORY: &[&str] = &[
    "partition-engines",
    "assign-streams",
    "plan-memory",
    "verify-memory",
    "emit-tasks",
];

/// Rules the ge-atc pipeline can apply (the eqsat-only ones never run there).
fn pipeline_rules(ctx: &Context) -> impl Iterator<Item = &'static ge_rewrites::rr::Rule> {
    library_rules(ctx).iter().filter(|r| {
        r.labels
            .iter()
            .any(|l| l == "canonical" || l == "recognize")
    })
}

/// Rule names a name stands for: a rule's own name or a label.
fn rules_named(ctx: &Context, name: &str) -> Vec<String> {
    pipeline_rules(ctx)
        .filter(|r| r.name == name || r.labels.iter().any(|l| l == name))
        .map(|r| r.name.clone())
        .collect()
}

/// Every rule labelled `fusion` (a switch file's `GraphFusion.ALL`).
fn fusion_rules(ctx: &Context) -> Vec<String> {
    rules_named(ctx, "fusion")
}

fn on_off(flag: &str, name: &str, v: &str) -> Result<bool, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!(
            "{flag}: '{name}' must be \"on\" or \"off\", not \"{v}\""
        )),
    }
}

impl Switches {
    /// Apply one `--optimization_switch` entry.
    fn switch(&mut self, ctx: &Context, flag: &str, name: &str, on: bool) -> Result<(), String> {
        if MANDATORY.contains(&name) {
            if !on {
                return Err(format!(
                    "{flag}: '{name}' cannot be switched off: every compile needs it to build the task program"
                ));
            }
            return Ok(());
        }
        let set = |b: &mut bool| *b = !on;
        match name {
            "canonicalize" => set(&mut self.no_canonicalize),
            "cse" => set(&mut self.no_cse),
            "fuse-kernels" => set(&mut self.no_fuse_kernels),
            "select-formats" => set(&mut self.no_formats),
            "in-place" => set(&mut self.no_in_place),
            _ => {
                let rules = rules_named(ctx, name);
                if rules.is_empty() {
                    return Err(format!(
                        "{flag}: unknown pass or rule '{name}' (passes: {}; rules and labels: see `ge-opt --list-passes` and rewrites/rules/*.rr)",
                        PASSES.join(", ")
                    ));
                }
                for r in rules {
                    if on {
                        self.disabled_rules.remove(&r);
                    } else {
                        self.disabled_rules.insert(r);
                    }
                }
            }
        }
        Ok(())
    }

    /// `--optimization_switch "name:off;name:on"`.
    pub fn apply_optimization_switch(&mut self, ctx: &Context, text: &str) -> Result<(), String> {
        let flag = "--optimization_switch";
        for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, v) = part
                .rsplit_once(':')
                .ok_or_else(|| format!("{flag}: '{part}' is not NAME:on or NAME:off"))?;
            let on = on_off(flag, name, v)?;
            self.switch(ctx, flag, name.trim(), on)?;
        }
        Ok(())
    }

    /// A fusion switch file's text (`what` names it in errors).
    pub fn apply_fusion_switch_file(
        &mut self,
        ctx: &Context,
        text: &str,
        what: &str,
    ) -> Result<(), String> {
        let (graph, ub) = if text.trim_start().starts_with('{') {
            parse_json_switches(text, what)?
        } else {
            parse_line_switches(text, what)?
        };
        let flag = format!("--fusion_switch_file {what}");
        // ALL first, then the named entries refine it.
        let all = |v: &[(String, bool)]| v.iter().find(|(n, _)| n == "ALL").map(|(_, on)| *on);
        if let Some(on) = all(&graph) {
            for r in fusion_rules(ctx) {
                if on {
                    self.disabled_rules.remove(&r);
                } else {
                    self.disabled_rules.insert(r);
                }
            }
        }
        for (name, on) in graph.iter().filter(|(n, _)| n != "ALL") {
            let rules = rules_named(ctx, name);
            if rules.is_empty() {
                return Err(format!(
                    "{flag}: unknown graph fusion '{name}' (a rule name or label of rewrites/rules/*.rr, or ALL)"
                ));
            }
            for r in rules {
                if *on {
                    self.disabled_rules.remove(&r);
                } else {
                    self.disabled_rules.insert(r);
                }
            }
        }
        if let Some(on) = all(&ub) {
            self.no_fuse_kernels = !on;
        }
        for (name, on) in ub.iter().filter(|(n, _)| n != "ALL") {
            if name != "fuse-kernels" {
                return Err(format!(
                    "{flag}: unknown UB fusion '{name}' (ge's UB fusion is one pass: fuse-kernels, or ALL)"
                ));
            }
            self.no_fuse_kernels = !on;
        }
        Ok(())
    }
}

type Entries = Vec<(String, bool)>;

fn parse_json_switches(text: &str, what: &str) -> Result<(Entries, Entries), String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("--fusion_switch_file {what}: {e}"))?;
    let sw = v
        .get("Switch")
        .and_then(|s| s.as_object())
        .ok_or_else(|| format!("--fusion_switch_file {what}: expected {{\"Switch\": {{...}}}}"))?;
    let mut graph = vec![];
    let mut ub = vec![];
    for (section, entries) in sw {
        let out = match section.as_str() {
            "GraphFusion" => &mut graph,
            "UBFusion" => &mut ub,
            s => {
                return Err(format!(
                    "--fusion_switch_file {what}: unknown section '{s}' (expected GraphFusion or UBFusion)"
                ))
            }
        };
        let obj = entries.as_object().ok_or_else(|| {
            format!("--fusion_switch_file {what}: '{section}' must be an object of \"name\": \"on\"|\"off\"")
        })?;
        for (name, v) in obj {
            let s = v.as_str().ok_or_else(|| {
                format!("--fusion_switch_file {what}: '{name}' must be \"on\" or \"off\"")
            })?;
            out.push((
                name.clone(),
                on_off(&format!("--fusion_switch_file {what}"), name, s)?,
            ));
        }
    }
    Ok((graph, ub))
}

/// The line form: `name:off` per line (`#` comments); every name is a graph
/// fusion except `fuse-kernels`.
fn parse_line_switches(text: &str, what: &str) -> Result<(Entries, Entries), String> {
    let mut graph = vec![];
    let mut ub = vec![];
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (name, v) = line.rsplit_once(':').ok_or_else(|| {
            format!(
                "--fusion_switch_file {what}:{}: '{line}' is not NAME:on or NAME:off",
                i + 1
            )
        })?;
        let on = on_off(&format!("--fusion_switch_file {what}:{}", i + 1), name, v)?;
        let name = name.trim().to_string();
        if name == "fuse-kernels" {
            ub.push((name, on));
        } else {
            graph.push((name, on));
        }
    }
    Ok((graph, ub))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Context {
        ge_compile::context()
    }

    #[test]
    fn json_all_off_keeps_named_on() {
        let ctx = ctx();
        let mut s = Switches::default();
        s.apply_fusion_switch_file(
            &ctx,
            r#"{"Switch": {"GraphFusion": {"ALL": "off", "fold_bn_into_conv": "on"}, "UBFusion": {"ALL": "off"}}}"#,
            "f.json",
        )
        .unwrap();
        assert!(s.no_fuse_kernels);
        assert!(!s.disabled_rules.contains("fold_bn_into_conv"));
        assert!(s.disabled_rules.contains("fold_bn_into_conv_no_bias"));
        assert!(s.disabled_rules.contains("conv_relu_epilogue"));
        // Non-fusion canonicalizations stay on.
        assert!(!s.disabled_rules.contains("add_zero"));
    }

    #[test]
    fn lines_and_optimization_switch() {
        let ctx = ctx();
        let mut s = Switches::default();
        s.apply_fusion_switch_file(
            &ctx,
            "# comment\nrecognize:off\nfuse-kernels:off\n",
            "f.cfg",
        )
        .unwrap();
        assert!(s.disabled_rules.contains("softmax_parts"));
        assert!(s.no_fuse_kernels);
        s.apply_optimization_switch(&ctx, "cse:off; in-place:off; softmax_parts:on")
            .unwrap();
        assert!(s.no_cse && s.no_in_place);
        assert!(!s.disabled_rules.contains("softmax_parts"));
    }

    #[test]
    fn errors_name_the_entry() {
        let ctx = ctx();
        let mut s = Switches::default();
        let e = s
            .apply_optimization_switch(&ctx, "plan-memory:off")
            .unwrap_err();
        assert!(e.contains("'plan-memory' cannot be switched off"), "{e}");
        let e = s.apply_optimization_switch(&ctx, "magic:off").unwrap_err();
        assert!(e.contains("unknown pass or rule 'magic'"), "{e}");
        let e = s.apply_optimization_switch(&ctx, "cse:maybe").unwrap_err();
        assert!(e.contains("must be \"on\" or \"off\""), "{e}");
        let e = s
            .apply_fusion_switch_file(&ctx, r#"{"Switch": {"Other": {}}}"#, "f.json")
            .unwrap_err();
        assert!(e.contains("unknown section 'Other'"), "{e}");
        let e = s
            .apply_fusion_switch_file(
                &ctx,
                r#"{"Switch": {"UBFusion": {"TbeX": "off"}}}"#,
                "f.json",
            )
            .unwrap_err();
        assert!(e.contains("unknown UB fusion 'TbeX'"), "{e}");
        let e = s.apply_fusion_switch_file(&ctx, "{", "f.json").unwrap_err();
        assert!(e.contains("f.json"), "{e}");
    }
}
