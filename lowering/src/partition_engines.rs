//! `partition-engines`: give every compute op and kernel an `engine`.
//!
//! Each op (or `graph.fused` kernel, judged by everything inside it) goes to
//! the highest-priority engine of the registry that supports its op name,
//! element types and storage formats (see `engines.rs`). An `engine` the IR
//! already carries is kept if that engine supports the op. An op no engine
//! supports is an error naming the op and why each engine refused it.

use crate::engines::{available, choose, EngineDef};
use crate::funcs::{error_at, for_each_function, func_block};
use ge_ir::body::{Body, OpData, OpId};
use ge_ir::diagnostics::Diagnostic;
use ge_ir::opdef::Trait;
use ge_ir::pass::{OptKind, OptionDef, Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::Attribute;
use ge_soc::Soc;

pub const SOC_OPTION: OptionDef = OptionDef {
    name: "soc",
    kind: OptKind::Str,
    default: "Ascend910B",
    doc: "SoC profile (a shipped name or a .json path): its engines are the ones used",
};

pub const ENGINES_OPTION: OptionDef = OptionDef {
    name: "engines",
    kind: OptKind::List,
    default: "",
    doc: "use only these engines (comma-separated names; default: all the SoC has)",
};

pub static INFO: PassInfo = PassInfo {
    name: "partition-engines",
    summary: "Assign every compute op and kernel to an engine (AICore, VectorCore, AICPU, …)",
    description: "Sets `engine` on every top-level compute op and `graph.fused` kernel of each \
                  public function: the highest-priority registered engine that supports the op \
                  name, its element types and storage formats (a kernel: everything inside it). \
                  An existing `engine` is kept when that engine supports the op. An op no engine \
                  supports is an error naming the op.",
    anchor: None,
    options: &[SOC_OPTION, ENGINES_OPTION],
};

struct PartitionEngines {
    soc: String,
    only: Vec<String>,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Soc::load(o.str("soc"))?;
    Ok(Box::new(PartitionEngines {
        soc: o.str("soc").to_string(),
        only: o.list("engines"),
    }))
}

/// Ops that are not work for an engine.
pub fn is_compute(body: &Body, op: OpId) -> bool {
    let d = body.op(op);
    !(d.has_trait(Trait::ReturnLike)
        || (d.has_trait(Trait::ConstantLike) && d.operands().is_empty())
        || d.name.as_str().starts_with("memory.")
        || d.name.as_str().starts_with("stream."))
}

/// Why no engine takes `op`, as one line.
pub fn unsupported(body: &Body, op: OpId, why: &[(String, String)]) -> String {
    let reasons: Vec<String> = why.iter().map(|(e, m)| format!("{e}: {m}")).collect();
    format!(
        "no engine supports '{}'{}",
        body.op(op).name,
        if reasons.is_empty() {
            " (no engines are available)".to_string()
        } else {
            format!(" ({})", reasons.join("; "))
        }
    )
}

/// The engine of `op`: its `engine` attribute if that engine supports it,
/// else the best available one.
pub fn engine_for(engines: &[EngineDef], body: &Body, op: OpId) -> Result<String, String> {
    if let Some(e) = body.op(op).attr("engine").and_then(|a| a.as_str()) {
        let def = engines.iter().find(|d| d.name == e).ok_or_else(|| {
            format!(
                "'{}' is pinned to engine '{e}', which is not available",
                body.op(op).name
            )
        })?;
        def.supports(body, op).map_err(|m| {
            format!(
                "'{}' is pinned to engine '{e}', which cannot run it: {m}",
                body.op(op).name
            )
        })?;
        return Ok(e.to_string());
    }
    choose(engines, body, op)
        .map(|d| d.name.clone())
        .map_err(|why| unsupported(body, op, &why))
}

impl Pass for PartitionEngines {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, cx: &PassContext) -> PassResult {
        let soc = Soc::load(&self.soc).map_err(|m| error_at(op.loc, m))?;
        let engines = available(cx.ctx, &self.only, Some(&soc)).map_err(|m| error_at(op.loc, m))?;
        for_each_function(op, INFO.name, |f, _| {
            let Some(block) = func_block(f) else {
                return Ok(());
            };
            let Some(body) = f.inner.as_deref_mut() else {
                return Ok(());
            };
            let ops: Vec<OpId> = body.block_ops(block).collect();
            let mut errors: Vec<Diagnostic> = vec![];
            for o in ops {
                if !is_compute(body, o) {
                    continue;
                }
                match engine_for(&engines, body, o) {
                    Ok(e) => body.set_attr(o, "engine", Attribute::string(&e)),
                    Err(m) => errors.extend(error_at(body.op(o).loc, m)),
                }
            }
            if errors.is_empty() {
                Ok(())
            } else {
                Err(errors)
            }
        })
    }
}
