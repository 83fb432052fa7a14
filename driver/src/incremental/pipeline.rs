//! Splitting a pass pipeline into the part that runs per function and the
//! part that needs the whole module.
//!
//! A module pipeline's leading elements are *function-local* when running
//! them on a module equals running them on a module holding each function
//! alone: nested pipelines (`graph.func(...)`, `any(...)` — the pass manager
//! hands each function to them in isolation) and module passes that only
//! lower each public function on its own (`for_each_function` in
//! lowering/src/funcs.rs; `emit-tasks` adds kernels, see
//! [`FUNCTION_LOCAL_MODULE_PASSES`]). Everything from the first other element
//! on (e.g. `symbol-dce`, `write-om`) runs once on the assembled module.

use ge_ir::builtin::Module;
use ge_ir::pass::{OpPipeline, OptValue, PassInfo, PassOptions, PipelineElem};
use ge_rewrites::passes::apply_rules;

/// Module passes that transform each public function independently of the
/// others (they see only the function and the module's `ge.symbol_bounds`).
/// `emit-tasks` also adds private kernel functions, named after their
/// function: each unit's are put after all units' functions, in unit order,
/// where the module pass appends them; a kernel whose name another unit
/// defines (the module pass would have renamed it) makes the module compile
/// as a whole.
pub const FUNCTION_LOCAL_MODULE_PASSES: &[&str] = &[
    "fuse-kernels",
    "partition-engines",
    "select-formats",
    "assign-streams",
    "plan-memory",
    "verify-memory",
    "emit-tasks",
];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// `builtin.module(...)` run on each unit's module.
    pub prefix: Option<String>,
    /// `builtin.module(...)` run once on the assembled module.
    pub suffix: Option<String>,
    /// Some `apply-rules` names rules explicitly (`rules=a,b`): every unit
    /// depends on the whole rule set (a named rule must exist).
    pub all_rules: bool,
    /// Hash of the SoC profile files the pipeline names.
    pub soc_hash: [u8; 32],
}

pub fn split_pipeline(p: &OpPipeline, soc_hash: [u8; 32]) -> Plan {
    let mut prefix: Vec<String> = vec![];
    let mut suffix: Vec<String> = vec![];
    let all_rules = names_rules(p);
    if p.anchor != Module::NAME {
        // Let the pass manager report the anchor mismatch.
        return Plan {
            prefix: None,
            suffix: Some(pipeline_text(p)),
            all_rules,
            soc_hash,
        };
    }
    for e in &p.elems {
        let local = suffix.is_empty()
            && match e {
                PipelineElem::Nested(n) => n.anchor != Module::NAME,
                PipelineElem::Pass { pass, .. } => {
                    FUNCTION_LOCAL_MODULE_PASSES.contains(&pass.info().name)
                }
            };
        let text = elem_text(e);
        if local {
            prefix.push(text);
        } else {
            suffix.push(text);
        }
    }
    let wrap =
        |v: Vec<String>| (!v.is_empty()).then(|| format!("builtin.module({})", v.join(", ")));
    Plan {
        prefix: wrap(prefix),
        suffix: wrap(suffix),
        all_rules,
        soc_hash,
    }
}

fn elem_text(e: &PipelineElem) -> String {
    match e {
        PipelineElem::Pass { pass, options } => {
            let info = pass.info();
            let o = options_text(info, options);
            if o.is_empty() {
                info.name.to_string()
            } else {
                format!("{}{{{o}}}", info.name)
            }
        }
        PipelineElem::Nested(p) => pipeline_text(p),
    }
}

fn pipeline_text(p: &OpPipeline) -> String {
    format!(
        "{}({})",
        p.anchor,
        p.elems.iter().map(elem_text).collect::<Vec<_>>().join(", ")
    )
}

/// Options as pipeline text that parses back to the same values (empty
/// values equal to an empty default are left out: `k=` does not parse).
fn options_text(info: &PassInfo, o: &PassOptions) -> String {
    let mut parts = vec![];
    for d in info.options {
        let v = match o.value(d.name) {
            None => continue,
            Some(OptValue::Bool(b)) => b.to_string(),
            Some(OptValue::Int(i)) => i.to_string(),
            Some(OptValue::Str(s)) => {
                if s.is_empty() && d.default.is_empty() {
                    continue;
                }
                if s.is_empty() || s.contains(|c: char| " ,{}()\"=".contains(c)) {
                    format!("\"{s}\"")
                } else {
                    s.to_string()
                }
            }
            Some(OptValue::List(l)) => {
                if l.is_empty() && d.default.is_empty() {
                    continue;
                }
                l.join(",")
            }
        };
        parts.push(format!("{}={v}", d.name));
    }
    parts.join(" ")
}

fn names_rules(p: &OpPipeline) -> bool {
    p.elems.iter().any(|e| match e {
        PipelineElem::Pass { pass, options } => {
            std::ptr::eq(pass.info(), &apply_rules::INFO)
                && !apply_rules::ApplyRulesOptions::from_options(options)
                    .rules
                    .is_empty()
        }
        PipelineElem::Nested(n) => names_rules(n),
    })
}

/// Passes whose effect is outside the IR (files written): a cached result
/// would skip it.
pub const SIDE_EFFECT_PASSES: &[&str] = &["write-om", "view-graph"];

/// Whether `p` runs a pass with effects outside the IR.
pub fn has_side_effects(p: &OpPipeline) -> bool {
    p.elems.iter().any(|e| match e {
        PipelineElem::Pass { pass, .. } => SIDE_EFFECT_PASSES.contains(&pass.info().name),
        PipelineElem::Nested(n) => has_side_effects(n),
    })
}

/// The SoC profile files (`soc=path.json`) a pipeline text names.
pub fn soc_files(pipeline: &str) -> Vec<String> {
    let mut out = vec![];
    let mut rest = pipeline;
    while let Some(i) = rest.find("soc=") {
        rest = &rest[i + 4..];
        let v: String = rest
            .chars()
            .take_while(|c| !matches!(c, ',' | '}' | ' ' | ')'))
            .collect();
        let v = v.trim_matches(|c| c == '"' || c == '\'').to_string();
        if v.ends_with(".json") && !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Plan {
        let ctx = ge_compile::context();
        let p = ge_ir::pass::parse_pipeline(&ctx.passes, text).expect("pipeline parses");
        split_pipeline(&p, [0; 32])
    }

    #[test]
    fn nested_function_pipelines_run_per_function() {
        let p = plan("builtin.module(graph.func(canonicalize, cse))");
        let pre = p.prefix.unwrap_or_default();
        assert!(
            pre.starts_with("builtin.module(graph.func(canonicalize{"),
            "{pre}"
        );
        assert!(pre.ends_with(", cse))"), "{pre}");
        assert_eq!(p.suffix, None);
    }

    #[test]
    fn module_passes_end_the_per_function_prefix() {
        let p = plan("builtin.module(graph.func(cse), symbol-dce, graph.func(cse))");
        assert_eq!(p.prefix.as_deref(), Some("builtin.module(graph.func(cse))"));
        assert_eq!(
            p.suffix.as_deref(),
            Some("builtin.module(symbol-dce, graph.func(cse))")
        );
    }

    #[test]
    fn atc_runs_per_function_to_the_end() {
        let p = plan("atc");
        let pre = p.prefix.unwrap_or_default();
        assert!(
            pre.contains("plan-memory") && pre.contains("emit-tasks"),
            "{pre}"
        );
        assert_eq!(p.suffix, None);
    }

    #[test]
    fn named_rules_make_every_function_depend_on_all_rules() {
        assert!(plan("builtin.module(graph.func(apply-rules{rules=a}))").all_rules);
        assert!(!plan("builtin.module(graph.func(apply-rules))").all_rules);
    }

    #[test]
    fn soc_files_are_found() {
        assert_eq!(
            soc_files("builtin.module(fuse-kernels{soc=x/my.json}, plan-memory{soc=Ascend910B})"),
            vec!["x/my.json".to_string()]
        );
    }
}
