//! Passes: a name, typed options with defaults, an anchor op, and a `run` on
//! one isolated-from-above op. Pipelines follow MLIR's textual grammar
//! (`pipeline.rs`); the manager runs them, in parallel over sibling ops
//! (`manager.rs`).

pub mod manager;
pub mod options;
pub mod pipeline;

pub use manager::{run_pipeline, Instrumentation, PassManagerOptions, Timing};
pub use options::{concat_options, option_count, OptKind, OptValue, OptionDef, PassOptions};
pub use pipeline::{parse_pipeline, OpPipeline, PipelineElem};

use crate::body::OpData;
use crate::context::Context;
use crate::diagnostics::Diagnostic;
use std::collections::BTreeMap;

/// Static description of a pass.
#[derive(Debug)]
pub struct PassInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub description: &'static str,
    /// Op the pass must run on (`None`: any isolated op).
    pub anchor: Option<&'static str>,
    pub options: &'static [OptionDef],
}

/// What a pass run reports besides changing the IR.
#[derive(Default, Debug)]
pub struct PassOutput {
    /// Warnings/remarks; errors make the pass fail.
    pub diagnostics: Vec<Diagnostic>,
    /// Text to print on stdout after the pipeline (reports).
    pub report: String,
}

pub type PassResult = Result<(), Vec<Diagnostic>>;

/// Shared, read-only state for passes.
pub struct PassContext<'a> {
    pub ctx: &'a Context,
    /// Collected non-error diagnostics and reports (passes may run in parallel).
    pub output: std::sync::Mutex<PassOutput>,
}

impl PassContext<'_> {
    pub fn emit(&self, d: Diagnostic) {
        if let Ok(mut o) = self.output.lock() {
            o.diagnostics.push(d);
        }
    }
    pub fn report(&self, text: &str) {
        if let Ok(mut o) = self.output.lock() {
            o.report.push_str(text);
        }
    }
}

pub trait Pass: Send + Sync {
    fn info(&self) -> &'static PassInfo;
    /// Run on `op` (its `inner` body holds its regions).
    fn run(&self, op: &mut OpData, cx: &PassContext) -> PassResult;
}

type MakePass = fn(&PassOptions) -> Result<Box<dyn Pass>, String>;

pub struct PassEntry {
    pub info: &'static PassInfo,
    pub make: MakePass,
}

/// Name → constructor, plus named pipelines (`atc`, ...).
#[derive(Default)]
pub struct PassRegistry {
    passes: BTreeMap<&'static str, PassEntry>,
    pipelines: BTreeMap<&'static str, (&'static str, &'static str)>,
}

impl PassRegistry {
    pub fn register(&mut self, info: &'static PassInfo, make: MakePass) {
        self.passes.insert(info.name, PassEntry { info, make });
    }
    /// A named pipeline: `name` expands to `text`.
    pub fn register_pipeline(
        &mut self,
        name: &'static str,
        summary: &'static str,
        text: &'static str,
    ) {
        self.pipelines.insert(name, (summary, text));
    }
    pub fn get(&self, name: &str) -> Option<&PassEntry> {
        self.passes.get(name)
    }
    pub fn pipeline(&self, name: &str) -> Option<&'static str> {
        self.pipelines.get(name).map(|p| p.1)
    }
    pub fn passes(&self) -> impl Iterator<Item = &PassEntry> {
        self.passes.values()
    }
    pub fn pipelines(
        &self,
    ) -> impl Iterator<Item = (&'static str, &'static str, &'static str)> + '_ {
        self.pipelines.iter().map(|(n, (s, t))| (*n, *s, *t))
    }
    /// Build a pass from its name and option text (`a=1 b=x`).
    pub fn create(
        &self,
        name: &str,
        options: &[(String, Option<String>)],
    ) -> Result<Box<dyn Pass>, String> {
        let e = self.get(name).ok_or_else(|| {
            format!("'{name}' does not refer to a registered pass or pass pipeline")
        })?;
        let opts = PassOptions::parse(e.info, options)?;
        (e.make)(&opts)
    }
}
