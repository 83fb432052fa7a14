//! The engine registry: which compute engine can run which op.
//!
//! An engine declares the ops it runs (exact names, or `dialect.*`), the
//! element types and the storage formats it accepts, and a priority. The
//! partitioner gives each op (or `graph.fused` kernel) the highest-priority
//! engine that supports it — GE's order: AICore before VectorCore before
//! AICPU before HostCPU; DVPP and HCCL are special-purpose engines that only
//! claim the ops they declare.
//!
//! The registry lives in the [`Context`] (as an extension), so a plugin adds
//! an engine with one call, exactly as the built-in engines are added:
//!
//! ```
//! # let mut ctx = ge_dialects::context();
//! # ge_lowering::register(&mut ctx);
//! use ge_lowering::engines::{register_engine, EngineDef};
//! register_engine(&ctx, EngineDef::new("MyNPU", 200, &["graph.relu"], &[ge_ir::DType::F16]));
//! ```

use ge_ir::attributes::Format;
use ge_ir::body::{Body, OpId};
use ge_ir::{Context, DType, Type};
use std::sync::{Arc, RwLock};

/// One engine's declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineDef {
    pub name: String,
    /// Higher wins when several engines support an op.
    pub priority: i32,
    /// Op names, or `dialect.*` for every op of a dialect.
    pub ops: Vec<String>,
    /// Ops excluded even if `ops` matches them.
    pub except: Vec<String>,
    /// Element types of operands and results the engine handles.
    pub dtypes: Vec<DType>,
    /// Storage formats the engine reads and writes. Tensors without a format
    /// encoding count as `ND` (which every engine lists).
    pub formats: Vec<Format>,
    pub summary: String,
}

impl EngineDef {
    /// An engine for `ops` and `dtypes` with the plain formats (ND, NCHW, NHWC).
    pub fn new(name: &str, priority: i32, ops: &[&str], dtypes: &[DType]) -> EngineDef {
        EngineDef {
            name: name.into(),
            priority,
            ops: ops.iter().map(|s| s.to_string()).collect(),
            except: vec![],
            dtypes: dtypes.to_vec(),
            formats: PLAIN.to_vec(),
            summary: String::new(),
        }
    }

    fn matches_name(&self, name: &str) -> bool {
        let hit = |pat: &String| match pat.strip_suffix(".*") {
            Some(d) => name.split_once('.').is_some_and(|(nd, _)| nd == d),
            None => pat == name,
        };
        self.ops.iter().any(hit) && !self.except.iter().any(hit)
    }

    fn accepts_type(&self, t: Type) -> Result<(), String> {
        let Some(tt) = t.as_tensor() else {
            return Ok(());
        };
        if !self.dtypes.contains(&tt.dtype) {
            return Err(format!("element type {}", tt.dtype));
        }
        let f = tt
            .encoding
            .and_then(|e| e.as_format())
            .map_or(Format::ND, |f| f.storage);
        if !self.formats.contains(&f) {
            return Err(format!("format {f}"));
        }
        Ok(())
    }

    /// Whether this engine can run one op (its own operands and results;
    /// not what is nested in it). `Err` says why not.
    fn supports_one(&self, body: &Body, op: OpId) -> Result<(), String> {
        let d = body.op(op);
        let name = d.name.as_str();
        if matches!(name, "graph.yield" | "graph.condition" | "graph.return") {
            return Ok(());
        }
        // A kernel is supported when everything inside it is.
        if name != "graph.fused" && !self.matches_name(name) {
            return Err(format!("'{name}' is not one of its ops"));
        }
        for &v in d.operands().iter().chain(d.results()) {
            self.accepts_type(body.value_type(v))
                .map_err(|m| format!("'{name}' uses {m}"))?;
        }
        Ok(())
    }

    /// Whether this engine can run `op` and every op nested in it (a kernel's
    /// body, the branches of a `graph.if`). `Err` says why not.
    pub fn supports(&self, body: &Body, op: OpId) -> Result<(), String> {
        self.supports_one(body, op)?;
        let mut why = Ok(());
        crate::funcs::for_each_nested(body, op, &mut |b, o| {
            if why.is_ok() {
                why = self.supports_one(b, o);
            }
        });
        why
    }
}

/// Formats every engine handles: tensors without an encoding and the plain image layouts.
pub const PLAIN: &[Format] = &[
    Format::ND,
    Format::NCHW,
    Format::NHWC,
    Format::HWCN,
    Format::CHWN,
];

const ALL_DTYPES: &[DType] = &DType::ALL;

const ELEMENTWISE: &[&str] = &[
    "graph.add",
    "graph.sub",
    "graph.mul",
    "graph.div",
    "graph.pow",
    "graph.max",
    "graph.min",
    "graph.mod",
    "graph.neg",
    "graph.abs",
    "graph.exp",
    "graph.log",
    "graph.sqrt",
    "graph.rsqrt",
    "graph.reciprocal",
    "graph.relu",
    "graph.leaky_relu",
    "graph.sigmoid",
    "graph.tanh",
    "graph.gelu",
    "graph.silu",
    "graph.erf",
    "graph.clip",
    "graph.cast",
    "graph.where",
    "graph.equal",
    "graph.less",
    "graph.less_equal",
    "graph.greater",
    "graph.greater_equal",
    "graph.not",
    "graph.and",
    "graph.or",
    "graph.xor",
    "graph.floor",
    "graph.ceil",
    "graph.round",
    "graph.sign",
    "graph.sin",
    "graph.cos",
];

const REDUCE_NORM: &[&str] = &[
    "graph.reduce_sum",
    "graph.reduce_mean",
    "graph.reduce_max",
    "graph.reduce_min",
    "graph.reduce_prod",
    "graph.argmax",
    "graph.argmin",
    "graph.softmax",
    "graph.log_softmax",
    "graph.layer_norm",
    "graph.rms_norm",
    "graph.batch_norm",
    "graph.instance_norm",
    "graph.global_avg_pool",
    "graph.global_max_pool",
];

const CUBE: &[&str] = &[
    "graph.conv2d",
    "graph.conv_transpose2d",
    "graph.matmul",
    "graph.batch_matmul",
    "graph.gemm",
    "graph.avg_pool2d",
    "graph.max_pool2d",
    "graph.scaled_dot_product_attention",
];

const MOVEMENT: &[&str] = &[
    "data.transdata",
    "data.transpose",
    "data.reshape",
    "data.squeeze",
    "data.unsqueeze",
    "data.identity",
    "data.concat",
    "data.split",
    "data.slice",
    "data.broadcast_to",
    "data.expand",
    "data.tile",
    "data.constant",
    "graph.pad",
];

fn list(groups: &[&[&str]]) -> Vec<String> {
    groups
        .iter()
        .flat_map(|g| g.iter().map(|s| s.to_string()))
        .collect()
}

/// The six engines of an Ascend SoC as ge models them.
pub fn builtin_engines() -> Vec<EngineDef> {
    use DType::*;
    let all_formats = Format::ALL.to_vec();
    vec![
        EngineDef {
            name: "AICore".into(),
            priority: 100,
            ops: list(&[ELEMENTWISE, REDUCE_NORM, CUBE, MOVEMENT]),
            except: vec![],
            dtypes: vec![F16, BF16, F32, I8, U8, I32, I1],
            formats: all_formats.clone(),
            summary: "cube + vector units: convolution, matmul, elementwise, reductions, \
                      layout transforms (f16/bf16/f32/i8/i32/bool, every format)"
                .into(),
        },
        EngineDef {
            name: "VectorCore".into(),
            priority: 90,
            ops: list(&[ELEMENTWISE, REDUCE_NORM, MOVEMENT]),
            except: vec!["data.transdata".into()],
            dtypes: vec![F16, BF16, F32, I8, U8, I32, I1],
            formats: [PLAIN, &[Format::NC1HWC0, Format::FRACTAL_NZ]].concat(),
            summary: "vector-only cores: elementwise, reductions, normalisation".into(),
        },
        EngineDef {
            name: "DVPP".into(),
            priority: 70,
            ops: vec!["graph.resize".into()],
            except: vec![],
            dtypes: vec![U8],
            formats: PLAIN.to_vec(),
            summary: "image pre-processing unit: resizing of u8 images".into(),
        },
        EngineDef {
            name: "HCCL".into(),
            priority: 70,
            ops: vec!["hccl.*".into()],
            except: vec![],
            dtypes: ALL_DTYPES.to_vec(),
            formats: PLAIN.to_vec(),
            summary: "collective communication (all-reduce, all-gather, …)".into(),
        },
        EngineDef {
            name: "AICPU".into(),
            priority: 50,
            ops: vec!["graph.*".into(), "data.*".into()],
            except: vec![],
            dtypes: vec![
                F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, I1, Index,
            ],
            formats: PLAIN.to_vec(),
            summary: "AI CPU cores: every graph and data op in plain formats except f64".into(),
        },
        EngineDef {
            name: "HostCPU".into(),
            priority: 10,
            ops: vec!["graph.*".into(), "data.*".into()],
            except: vec![],
            dtypes: ALL_DTYPES.to_vec(),
            formats: PLAIN.to_vec(),
            summary: "the host: every graph and data op in plain formats, any element type".into(),
        },
    ]
}

/// The registry (a [`Context`] extension).
#[derive(Debug, Default)]
pub struct EngineRegistry {
    engines: RwLock<Vec<EngineDef>>,
}

impl EngineRegistry {
    pub fn with_builtins() -> EngineRegistry {
        let r = EngineRegistry::default();
        for e in builtin_engines() {
            r.add(e);
        }
        r
    }

    /// Add (or replace, by name) an engine.
    pub fn add(&self, e: EngineDef) {
        if let Ok(mut v) = self.engines.write() {
            v.retain(|x| x.name != e.name);
            v.push(e);
            v.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.name.cmp(&b.name)));
        }
    }

    /// Every engine, highest priority first.
    pub fn engines(&self) -> Vec<EngineDef> {
        self.engines.read().map(|v| v.clone()).unwrap_or_default()
    }
}

/// Install the registry with the built-in engines (done by `ge_lowering::register`).
pub fn install(ctx: &mut Context) {
    if ctx.extension::<EngineRegistry>().is_none() {
        ctx.extensions
            .push(Arc::new(EngineRegistry::with_builtins()));
    }
}

/// Add an engine to the context's registry (one call per engine; plugins use this).
pub fn register_engine(ctx: &Context, e: EngineDef) {
    if let Some(r) = ctx.extension::<EngineRegistry>() {
        r.add(e);
    }
}

/// The engines a pass may use: the context's registry (or the built-ins),
/// restricted to `only` (by name) when it is non-empty, and to the engines
/// the SoC has.
pub fn available(
    ctx: &Context,
    only: &[String],
    soc: Option<&ge_soc::Soc>,
) -> Result<Vec<EngineDef>, String> {
    let all = match ctx.extension::<EngineRegistry>() {
        Some(r) => r.engines(),
        None => {
            let mut v = builtin_engines();
            v.sort_by_key(|e| std::cmp::Reverse(e.priority));
            v
        }
    };
    for n in only {
        if !all.iter().any(|e| &e.name == n) {
            let known: Vec<&str> = all.iter().map(|e| e.name.as_str()).collect();
            return Err(format!(
                "unknown engine '{n}' (registered: {})",
                known.join(", ")
            ));
        }
    }
    Ok(all
        .into_iter()
        .filter(|e| only.is_empty() || only.contains(&e.name))
        // Plugin engines are always available; built-in ones where the SoC has them.
        .filter(|e| !is_builtin(&e.name) || soc.is_none_or(|s| s.has_engine(&e.name)))
        .collect())
}

fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "AICore" | "VectorCore" | "AICPU" | "DVPP" | "HCCL" | "HostCPU"
    )
}

/// The best engine for `op` among `engines` (sorted by priority), or the
/// reasons each one refused it.
pub fn choose<'e>(
    engines: &'e [EngineDef],
    body: &Body,
    op: OpId,
) -> Result<&'e EngineDef, Vec<(String, String)>> {
    let mut why = vec![];
    for e in engines {
        match e.supports(body, op) {
            Ok(()) => return Ok(e),
            Err(m) => why.push((e.name.clone(), m)),
        }
    }
    Err(why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_patterns() {
        let e = EngineDef {
            except: vec!["graph.while".into()],
            ..EngineDef::new("X", 1, &["graph.*", "data.reshape"], &[DType::F32])
        };
        assert!(e.matches_name("graph.relu"));
        assert!(e.matches_name("data.reshape"));
        assert!(!e.matches_name("data.concat"));
        assert!(!e.matches_name("graph.while"));
        assert!(!e.matches_name("graphx.relu"));
    }

    #[test]
    fn registry_orders_by_priority_and_replaces_by_name() {
        let r = EngineRegistry::with_builtins();
        let names: Vec<String> = r.engines().into_iter().map(|e| e.name).collect();
        assert_eq!(names[0], "AICore");
        assert_eq!(names[1], "VectorCore");
        assert_eq!(names.last().map(String::as_str), Some("HostCPU"));
        r.add(EngineDef::new("AICore", 1, &[], &[]));
        let names: Vec<String> = r.engines().into_iter().map(|e| e.name).collect();
        assert_eq!(names.last().map(String::as_str), Some("AICore"));
        assert_eq!(names.len(), 6);
    }
}
