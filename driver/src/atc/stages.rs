//! ge-atc's compile: the `atc` pipeline split into named stages (each timed
//! for the summary), shaped by the ATC flags: rules and passes switched
//! off, the precision mode, single stream, no memory reuse.

use super::switches::Switches;
use ge_dialects::graph::func::Func;
use ge_ir::builtin::Module as ModuleOp;
use ge_ir::pass::{manager::Instrumentation, PassContext, PassManagerOptions};
use ge_ir::{Context, Module};
use ge_rewrites::library::library_rules;
use std::time::{Duration, Instant};

/// The compile settings from the flags.
#[derive(Clone, Debug)]
pub struct Settings {
    pub soc: String,
    /// ATC precision mode (a `convert-precision` mode).
    pub precision: String,
    pub switches: Switches,
    pub single_stream: bool,
    pub disable_reuse: bool,
}

/// One stage: a name for the summary and its pass pipeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    pub name: &'static str,
    pub pipeline: String,
}

fn module(p: &str) -> String {
    format!("builtin.module({p})")
}

/// The stages for `s`, in order.
pub fn stages(ctx: &Context, s: &Settings) -> Vec<Stage> {
    let sw = &s.switches;
    let soc = &s.soc;
    let disabled: Vec<&str> = sw.disabled_rules.iter().map(String::as_str).collect();
    // Every weight folds (ge_compile::FOLD_SIZE_LIMIT).
    let limit = ge_compile::FOLD_SIZE_LIMIT;
    let canonicalize = if disabled.is_empty() {
        format!("graph.func(canonicalize{{fold-size-limit={limit}}})")
    } else {
        format!(
            "graph.func(canonicalize{{fold-size-limit={limit} disable-patterns={}}})",
            disabled.join(",")
        )
    };
    let mut out = vec![];
    let mut push = |name: &'static str, p: String| {
        out.push(Stage {
            name,
            pipeline: module(&p),
        })
    };
    if !sw.no_canonicalize {
        // Identical ops merge first, before folds make them differ: two
        // convolutions of one input by equal weights are one, whose batch
        // norms then cannot fold into it (each would need its own copy)
        // and run on its result (onnxruntime's CSE does the same).
        let first = match sw.no_cse {
            true => canonicalize.clone(),
            false => canonicalize.replacen("graph.func(", "graph.func(cse, ", 1),
        };
        push("canonicalize", first);
    }
    // Pattern recognition (gelu, layer norm, softmax from their parts): GE's
    // graph fusion passes, as the `recognize` rules.
    let recognize: Vec<&str> = library_rules(ctx)
        .iter()
        .filter(|r| r.labels.iter().any(|l| l == "recognize"))
        .map(|r| r.name.as_str())
        .filter(|n| !sw.disabled_rules.contains(*n))
        .collect();
    if !recognize.is_empty() {
        push(
            "graph-fusion",
            format!("graph.func(apply-rules{{rules={}}})", recognize.join(",")),
        );
    }
    if !sw.no_cse {
        push("cse", "graph.func(cse)".into());
    }
    if s.precision != "must_keep_origin_dtype" {
        push(
            "convert-precision",
            format!("convert-precision{{mode={} soc={soc}}}", s.precision),
        );
        if !sw.no_canonicalize {
            // Folds casts of constants and cast pairs the conversion left.
            push("canonicalize", canonicalize);
        }
    }
    if !sw.no_fuse_kernels {
        push("fuse-kernels", format!("fuse-kernels{{soc={soc}}}"));
    }
    push(
        "partition-engines",
        format!("partition-engines{{soc={soc}}}"),
    );
    push(
        "select-formats",
        if sw.no_formats {
            "select-formats{nc1hwc0=false fractal-nz=false}".into()
        } else {
            "select-formats".into()
        },
    );
    push(
        "assign-streams",
        format!(
            "assign-streams{{soc={soc} single-stream={}}}",
            s.single_stream
        ),
    );
    let plan = match (s.disable_reuse, sw.no_in_place) {
        (true, _) => "plan-memory{strategy=no-reuse in-place=false}",
        (false, true) => "plan-memory{in-place=false}",
        (false, false) => "plan-memory",
    };
    push("plan-memory", format!("{plan}, verify-memory"));
    push("emit-tasks", "emit-tasks, verify-memory".into());
    out
}

/// Run one stage on `m`; errors are the pass diagnostics.
pub fn run_stage(
    ctx: &Context,
    m: &mut Module,
    stage: &Stage,
) -> Result<Duration, Vec<ge_ir::diagnostics::Diagnostic>> {
    let pm = ge_ir::pass::pipeline::parse_pipeline(&ctx.passes, &stage.pipeline).map_err(|e| {
        vec![ge_ir::diagnostics::Diagnostic::error(
            format!("internal pipeline '{}': {e:?}", stage.pipeline),
            ge_ir::diagnostics::Pos::None,
        )]
    })?;
    let cx = PassContext {
        ctx,
        output: Default::default(),
    };
    let t = Instant::now();
    // The module is verified once, after the last stage ([`verify`]), not after
    // every pass: on a small model re-verifying it after each of the ~15 passes
    // cost more than most of the passes.
    let opts = PassManagerOptions {
        verify_each: false,
        ..Default::default()
    };
    ge_ir::pass::manager::run_pipeline(&pm, m, &cx, &opts, &Instrumentation::default())?;
    Ok(t.elapsed())
}

/// Verify the compiled module (the stages do not verify between passes): an
/// invalid one is a compiler bug, reported before anything is written.
pub fn verify(m: &Module) -> Result<(), Vec<ge_ir::diagnostics::Diagnostic>> {
    let errors: Vec<_> = ge_ir::verifier::verify_module(m)
        .into_iter()
        .filter(|d| d.is_error())
        .collect();
    match errors.is_empty() {
        true => Ok(()),
        false => {
            let mut out = vec![ge_ir::diagnostics::Diagnostic::error(
                "IR is invalid after compilation".to_string(),
                ge_ir::diagnostics::Pos::None,
            )];
            out.extend(errors);
            Err(out)
        }
    }
}

/// Ops inside functions (not the functions themselves), nested ones included.
pub fn count_ops(m: &Module) -> usize {
    let mut n = 0;
    m.body()
        .walk_deep(ge_ir::body::WalkOrder::Pre, &mut |b, o| {
            let name = b.op(o).name.as_str();
            if name != Func::NAME && name != ModuleOp::NAME {
                n += 1;
            }
        });
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            soc: "Ascend910B".into(),
            precision: "must_keep_origin_dtype".into(),
            switches: Switches::default(),
            single_stream: false,
            disable_reuse: false,
        }
    }

    #[test]
    fn flags_shape_the_stages() {
        let ctx = ge_compile::context();
        let names = |s: &Settings| -> Vec<&'static str> {
            stages(&ctx, s).iter().map(|s| s.name).collect()
        };
        assert_eq!(
            names(&settings()),
            [
                "canonicalize",
                "graph-fusion",
                "cse",
                "fuse-kernels",
                "partition-engines",
                "select-formats",
                "assign-streams",
                "plan-memory",
                "emit-tasks"
            ]
        );
        // Identical ops merge before the first folds.
        let first = &stages(&ctx, &settings())[0].pipeline;
        assert!(first.contains("graph.func(cse, canonicalize{"), "{first}");
        let mut s = settings();
        s.precision = "force_fp16".into();
        s.switches.no_fuse_kernels = true;
        s.switches.no_cse = true;
        s.single_stream = true;
        s.disable_reuse = true;
        s.switches
            .disabled_rules
            .insert("conv_relu_epilogue".into());
        let st = stages(&ctx, &s);
        let all: String = st.iter().map(|s| s.pipeline.clone()).collect();
        assert!(all.contains("disable-patterns=conv_relu_epilogue"), "{all}");
        assert!(all.contains("convert-precision{mode=force_fp16"), "{all}");
        assert!(all.contains("single-stream=true"), "{all}");
        assert!(all.contains("strategy=no-reuse"), "{all}");
        assert!(!all.contains("fuse-kernels"), "{all}");
        assert!(!all.contains("cse"), "{all}");
        // Every stage parses.
        for stage in st {
            ge_ir::pass::pipeline::parse_pipeline(&ctx.passes, &stage.pipeline).unwrap();
        }
    }
}
