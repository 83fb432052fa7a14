//! ge-compile: the compiler as a library.
//!
//! - [`context`]: the one constructor of a context with every dialect and
//!   every pass of the compiler registered (the tools' registry);
//! - [`compile_text`] / [`compile_module`]: `.air` to an `.om` in process —
//!   the `atc` pipeline with a few switches ([`CompileOptions`]: fusion,
//!   streams, storage formats) followed by the `.om` writer. `ge-run
//!   model.air` (compile and run), the conformance runner, the runtime's tests
//!   and the benchmarks use it; `ge-atc` is the converter for users.
//!
//! A crate of its own, on top of ge-rewrites and ge-lowering, so that the
//! runtime (which only reads `.om` files, through ge-om) does not link the
//! compiler; its tests dev-depend on this crate to compile their models.

use ge_ir::pass::{manager::Instrumentation, PassContext, PassManagerOptions};
use ge_lowering::om::OmOptions;
pub use ge_om::{to_bytes, OmModel};

/// Largest constant (elements) the compile folds: every weight, so weight
/// preparation (BatchNorm folding, layout conversion) happens once at compile
/// time, as GE's constant folding does, instead of as tasks.
pub const FOLD_SIZE_LIMIT: usize = 1 << 26;

/// Switches of the compile.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Fuse ops into `graph.fused` kernels (`fuse-kernels`).
    pub fuse: bool,
    /// Put every task on stream 0.
    pub single_stream: bool,
    /// At most this many streams (0: as many as the schedule wants).
    pub max_streams: usize,
    /// Ascend storage formats (NC1HWC0 / FRACTAL_Z / FRACTAL_NZ); off keeps
    /// NCHW/ND, the CPU's native layouts.
    pub formats: bool,
    /// The SoC: a built-in name or a profile `.json`.
    pub soc: String,
    /// Function to compile (default: the only public one).
    pub entry: Option<String>,
    /// Extra symbol bounds, e.g. `B=8`.
    pub symbol_bounds: Vec<String>,
}

impl Default for CompileOptions {
    fn default() -> CompileOptions {
        CompileOptions {
            fuse: true,
            single_stream: false,
            max_streams: 0,
            formats: true,
            soc: "Ascend910B".into(),
            entry: None,
            symbol_bounds: vec![],
        }
    }
}

impl CompileOptions {
    /// The pass pipeline these options stand for.
    pub fn pipeline(&self) -> String {
        let soc = &self.soc;
        // cse first as well: identical ops merge before folds make them
        // differ (`ge-atc`'s stages, driver/src/atc/stages.rs).
        let mut p = vec![format!(
            "graph.func(cse, canonicalize{{fold-size-limit={FOLD_SIZE_LIMIT}}}, cse)"
        )];
        if self.fuse {
            p.push(format!("fuse-kernels{{soc={soc}}}"));
        }
        p.push(format!("partition-engines{{soc={soc}}}"));
        p.push(if self.formats {
            "select-formats".into()
        } else {
            "select-formats{nc1hwc0=false fractal-nz=false}".into()
        });
        p.push(format!(
            "assign-streams{{soc={soc} single-stream={} max-streams={}}}",
            self.single_stream, self.max_streams
        ));
        if self.symbol_bounds.is_empty() {
            p.push("plan-memory".into());
        } else {
            p.push(format!(
                "plan-memory{{symbol-bounds={}}}",
                self.symbol_bounds.join(",")
            ));
        }
        p.push("verify-memory".into());
        p.push("emit-tasks".into());
        p.push("verify-memory".into());
        format!("builtin.module({})", p.join(", "))
    }
}

/// A context with every dialect and every pass of the compiler registered.
pub fn context() -> ge_ir::Context {
    let mut ctx = ge_dialects::context();
    ge_rewrites::register(&mut ctx);
    ge_lowering::register(&mut ctx);
    ctx
}

/// What running a compiled model takes — its arenas and its weights — must
/// fit the memory budget (`ge_ir::budget`): refused at compile time, not
/// when the model is loaded.
pub fn check_budget(def: &ge_om::model::ModelDef) -> Result<(), String> {
    let need = def
        .arenas
        .iter()
        .try_fold(def.weights_size, |acc, a| acc.checked_add(a.size));
    ge_ir::budget::check(need, &"the compiled model (arenas and weights)")
}

/// Compile a parsed module (lowered in place) to an `.om` model. Tensors
/// the memory budget cannot hold are refused first, naming their op.
pub fn compile_module(
    ctx: &ge_ir::Context,
    module: &mut ge_ir::Module,
    opts: &CompileOptions,
) -> Result<OmModel, String> {
    if let Some(d) = ge_ir::budget::check_module(module).first() {
        return Err(d.message.clone());
    }
    // Weights held in dialect resources become foldable literals.
    module.inline_resources();
    let pm = ge_ir::pass::pipeline::parse_pipeline(&ctx.passes, &opts.pipeline())
        .map_err(|e| format!("pipeline: {e:?}"))?;
    let cx = PassContext {
        ctx,
        output: Default::default(),
    };
    let inst = Instrumentation::default();
    ge_ir::pass::manager::run_pipeline(&pm, module, &cx, &PassManagerOptions::default(), &inst)
        .map_err(|d| {
            d.first()
                .map(|d| d.message.clone())
                .unwrap_or_else(|| "compilation failed".into())
        })?;
    let om = ge_lowering::om::from_module(
        module.body(),
        Some(module),
        &OmOptions {
            entry: opts.entry.clone(),
            name: None,
            // A profile path compiles for the profile's SoC name.
            soc: ge_soc::Soc::load(&opts.soc)
                .map(|s| s.name)
                .unwrap_or_else(|_| opts.soc.clone()),
        },
    )
    .map_err(String::from)?;
    check_budget(&om.def)?;
    Ok(om)
}

/// Parse, verify and compile `.air` text.
pub fn compile_text(name: &str, text: &str, opts: &CompileOptions) -> Result<OmModel, String> {
    let ctx = context();
    let mut m =
        ge_ir::parser::parse_module(&ctx, name, text, ge_ir::parser::ParseOptions::default())
            .map_err(|d| format!("{name}: {}", d.message))?;
    let diags = ge_ir::verifier::verify_module(&m);
    if let Some(d) = diags.iter().find(|d| d.is_error()) {
        return Err(format!("{name}: {}", d.message));
    }
    compile_module(&ctx, &mut m, opts).map_err(|e| format!("{name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODEL: &str = "graph.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = graph.sigmoid %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  graph.return %0 : tensor<2x4xf32>
}";

    #[test]
    fn a_model_compiles_to_an_om_the_reader_accepts() {
        let opts = CompileOptions {
            soc: "Ascend310P".into(),
            ..Default::default()
        };
        let om = compile_text("m.air", MODEL, &opts).expect("compiles");
        let bytes = to_bytes(&om).expect("valid");
        let back = ge_om::parse(&bytes).expect("reads");
        assert_eq!(back.soc, "Ascend310P");
        assert_eq!(back.def.entry, "main");
    }

    #[test]
    fn errors_name_the_input() {
        let e = compile_text("m.air", "graph.func @main(", &Default::default()).unwrap_err();
        assert!(e.starts_with("m.air: "), "{e}");
        let opts = CompileOptions {
            soc: "Ascend999".into(),
            ..Default::default()
        };
        let e = compile_text("m.air", MODEL, &opts).unwrap_err();
        assert!(e.starts_with("m.air: ") && e.contains("Ascend999"), "{e}");
    }
}
