//! Running pipelines: anchoring, parallel execution over sibling isolated
//! ops (rayon), verification between passes, IR dumps and timing.

use super::{OpPipeline, PassContext, PipelineElem};
use crate::body::{Body, OpData, OpId};
use crate::diagnostics::{Diagnostic, Pos};
use crate::module::Module;
use crate::printer::PrintOptions;
use rayon::prelude::*;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub struct PassManagerOptions {
    pub verify_each: bool,
    pub print_ir_after_all: bool,
    pub print_ir_after_change: bool,
    pub timing: bool,
    /// Run sibling ops in parallel.
    pub threading: bool,
    pub print: PrintOptions,
}

impl Default for PassManagerOptions {
    fn default() -> Self {
        PassManagerOptions {
            verify_each: true,
            print_ir_after_all: false,
            print_ir_after_change: false,
            timing: false,
            threading: true,
            print: PrintOptions::default(),
        }
    }
}

/// Timing tree: paths of pipeline element names with accumulated time.
#[derive(Default, Debug)]
pub struct Timing {
    entries: Vec<(Vec<String>, Duration)>,
}

impl Timing {
    pub fn add(&mut self, path: &[String], d: Duration) {
        match self.entries.iter_mut().find(|(p, _)| p == path) {
            Some(e) => e.1 += d,
            None => self.entries.push((path.to_vec(), d)),
        }
    }

    /// Report lines (`time (pct)  name`) nested under `depth` levels of indentation.
    /// Times of passes inside a parallel pipeline are summed over threads.
    pub fn lines(&self, total: Duration, depth: usize) -> Vec<String> {
        let tot = total.as_secs_f64().max(1e-12);
        self.entries
            .iter()
            .map(|(path, d)| {
                let s = d.as_secs_f64();
                format!(
                    "  {:>8.4} ({:>5.1}%)  {}{}",
                    s,
                    100.0 * s / tot,
                    "  ".repeat(depth + path.len().saturating_sub(1)),
                    path.last().map(String::as_str).unwrap_or("")
                )
            })
            .collect()
    }
}

/// What the pass manager records while running.
#[derive(Default)]
pub struct Instrumentation {
    /// IR dumps (`--print-ir-after-*`), written to stderr by the driver.
    pub dumps: Mutex<String>,
    pub timing: Mutex<Timing>,
}

/// Run `pm` on the module.
pub fn run_pipeline(
    pm: &OpPipeline,
    module: &mut Module,
    cx: &PassContext,
    opts: &PassManagerOptions,
    inst: &Instrumentation,
) -> Result<(), Vec<Diagnostic>> {
    let op = module.op;
    let data = module.outer.op_mut(op);
    if pm.anchor != "any" && pm.anchor != data.name.as_str() {
        return Err(vec![Diagnostic::error(
            format!(
                "can't run '{}' pass manager on 'builtin.module' op",
                pm.anchor
            ),
            Pos::Loc(data.loc),
        )]);
    }
    run_on(pm, data, cx, opts, inst, &mut vec![])
}

fn run_on(
    pm: &OpPipeline,
    op: &mut OpData,
    cx: &PassContext,
    opts: &PassManagerOptions,
    inst: &Instrumentation,
    path: &mut Vec<String>,
) -> Result<(), Vec<Diagnostic>> {
    for e in &pm.elems {
        match e {
            PipelineElem::Pass { pass, .. } => {
                let info = pass.info();
                if let Some(a) = info.anchor {
                    if a != op.name.as_str() {
                        return Err(vec![Diagnostic::error(
                            format!(
                                "can't run '{}' pass on '{}' op: it runs on '{a}' ops",
                                info.name, op.name
                            ),
                            Pos::Loc(op.loc),
                        )]);
                    }
                }
                // Changes are detected on the full text, locations included
                // (as MLIR's fingerprint does), whatever the dump shows.
                let fingerprint_opts = PrintOptions {
                    debuginfo: true,
                    ..opts.print
                };
                let before = opts
                    .print_ir_after_change
                    .then(|| print_data(op, fingerprint_opts));
                let t0 = Instant::now();
                pass.run(op, cx)?;
                path.push(format!("{} ({})", pass_title(info.name), info.name));
                if opts.timing {
                    if let Ok(mut t) = inst.timing.lock() {
                        t.add(path, t0.elapsed());
                    }
                }
                path.pop();
                if opts.verify_each {
                    let diags: Vec<Diagnostic> = crate::verifier::verify_data(op)
                        .into_iter()
                        .filter(|d| d.is_error())
                        .collect();
                    if !diags.is_empty() {
                        let mut out = vec![Diagnostic::error(
                            format!("IR is invalid after pass '{}'", info.name),
                            Pos::Loc(op.loc),
                        )];
                        out.extend(diags);
                        return Err(out);
                    }
                }
                let dump = opts.print_ir_after_all
                    || before
                        .as_ref()
                        .is_some_and(|b| *b != print_data(op, fingerprint_opts));
                if dump {
                    let text = print_data(op, opts.print);
                    if let Ok(mut d) = inst.dumps.lock() {
                        let sym = op
                            .attr("sym_name")
                            .and_then(|a| a.as_str())
                            .map(|s| format!(" @{s}"))
                            .unwrap_or_default();
                        d.push_str(&format!(
                            "// -----// IR Dump After {} ({}) ('{}' operation{sym}) //----- //\n{text}\n",
                            pass_title(info.name),
                            info.name,
                            op.name
                        ));
                    }
                }
            }
            PipelineElem::Nested(sub) => {
                let t0 = Instant::now();
                path.push(format!("'{}' Pipeline", sub.anchor));
                if opts.timing {
                    // Reserve the entry so it prints before the passes nested in it.
                    if let Ok(mut t) = inst.timing.lock() {
                        t.add(path, Duration::ZERO);
                    }
                }
                let res = run_nested(sub, op, cx, opts, inst, path);
                if opts.timing {
                    if let Ok(mut t) = inst.timing.lock() {
                        t.add(path, t0.elapsed());
                    }
                }
                path.pop();
                res?;
            }
        }
    }
    Ok(())
}

fn run_nested(
    sub: &OpPipeline,
    op: &mut OpData,
    cx: &PassContext,
    opts: &PassManagerOptions,
    inst: &Instrumentation,
    path: &[String],
) -> Result<(), Vec<Diagnostic>> {
    let Some(inner) = op.inner.as_deref_mut() else {
        return Ok(());
    };
    // Immediate children of the op's regions with the anchor's name.
    let mut selected = vec![false; inner.op_capacity()];
    for r in inner.root_regions() {
        for &b in &inner.region(r).blocks {
            for o in inner.block_ops(b) {
                let d = inner.op(o);
                if d.inner.is_some() && (sub.anchor == "any" || d.name.as_str() == sub.anchor) {
                    selected[o.index()] = true;
                }
            }
        }
    }
    let parallel = opts.threading && !opts.print_ir_after_all && !opts.print_ir_after_change;
    let run_one = |d: &mut OpData| {
        let mut p = path.to_vec();
        run_on(sub, d, cx, opts, inst, &mut p)
    };
    let results: Vec<Result<(), Vec<Diagnostic>>> = if parallel {
        inner
            .ops_mut()
            .par_iter_mut()
            .enumerate()
            .filter(|(i, _)| selected[*i])
            .map(|(_, d)| run_one(d))
            .collect()
    } else {
        inner
            .ops_mut()
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| selected[*i])
            .map(|(_, d)| run_one(d))
            .collect()
    };
    let errors: Vec<Diagnostic> = results
        .into_iter()
        .filter_map(|r| r.err())
        .flatten()
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// `canonicalize` → `Canonicalize` (MLIR prints pass class names in dumps).
fn pass_title(name: &str) -> String {
    name.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Print an isolated op on its own (moved into a scratch body and back).
pub fn print_data(op: &mut OpData, opts: PrintOptions) -> String {
    with_scratch(op, |b, id| {
        crate::printer::print_op(b, id, opts).trim_end().to_string()
    })
}

/// Run `f` with `op` placed alone in a scratch body (the op is moved, not copied).
pub fn with_scratch<R>(op: &mut OpData, f: impl FnOnce(&Body, OpId) -> R) -> R {
    let (body, id, saved) = Body::scratch(op);
    let r = f(&body, id);
    body.restore(op, id, saved);
    r
}
