//! IR → `.om`: [`from_module`] reads a function lowered by `emit-tasks` —
//! its arenas, input stores, `stream.program` and output views, plus the
//! kernel functions it launches — into an [`OmModel`], one section at a
//! time: the arenas ([`Arenas`]), the I/O description ([`io_desc`]), the task
//! program and weights ([`ProgramWriter`]), the kernels partition
//! ([`kernels_text`]) and the model def. Errors are at the op they concern.

use crate::error::{AtOp, LowerError, LowerResult};
use crate::funcs::{func_block, func_name, i64s, is_private, Bounds};
use crate::memory_plan::{
    BUFFER_ATTR, INDEX_ATTR, PLAN_ATTR, REPLAN_ATTR, ROLE_ATTR, WEIGHT_ALIGN,
};
use ge_dialects::data::constant::elements_tensor;
use ge_dialects::data::constant::Constant;
use ge_dialects::data::tensor_to_bytes;
use ge_dialects::graph::func::Func;
use ge_dialects::memory::ops as mem_ops;
use ge_dialects::memory::{arena_info_of_op, arena_root, byte_size_bound};
use ge_dialects::stream::ops as stream_ops;
use ge_ir::attributes::AttrData;
use ge_ir::body::{BlockId, Body, OpId, ValueDef, ValueId, WalkOrder};
use ge_ir::module::Module;
use ge_ir::Type;
use ge_om::model::{
    ArenaDef, ArenaRole, Buffer, IoDesc, IoTensor, KernelDef, ModelDef, OmModel, OmStream, Operand,
    Task, TaskProgram, WeightDef,
};
use ge_om::{ValidStream, WeightBytes, Weights};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Settings of the `.om` writer.
#[derive(Clone, Debug, Default)]
pub struct OmOptions {
    /// The function to export (default: the only lowered public function).
    pub entry: Option<String>,
    /// Model name in the header (default: the entry function's name).
    pub name: Option<String>,
    pub soc: String,
}

fn int(body: &Body, op: OpId, name: &str) -> i64 {
    body.op(op).attr(name).and_then(|a| a.as_int()).unwrap_or(0)
}

/// The lowered functions of a module body: public functions holding a `stream.program`.
pub fn lowered_functions(mbody: &Body) -> Vec<OpId> {
    let mut out = vec![];
    for r in mbody.root_regions() {
        for &b in &mbody.region(r).blocks {
            for f in mbody.block_ops(b) {
                let d = mbody.op(f);
                if !Func::is(d) || is_private(d) {
                    continue;
                }
                let has = func_block(d).is_some_and(|blk| {
                    d.inner
                        .as_deref()
                        .is_some_and(|i| i.block_ops(blk).any(|o| stream_ops::Program::is(i.op(o))))
                });
                if has {
                    out.push(f);
                }
            }
        }
    }
    out
}

/// Build an `.om` model from a module lowered by `emit-tasks`. `module`
/// supplies `dense_resource` blobs (pass `None` when there is none).
pub fn from_module(
    mbody: &Body,
    module: Option<&Module>,
    opts: &OmOptions,
) -> LowerResult<OmModel> {
    let s = stream_from_module(mbody, module, opts)?;
    s.to_model().map_err(LowerError::from)
}

/// [`from_module`] with the weights left where they are (the dense
/// constants' storage, a splat's one element), validated: what
/// [`ge_om::format::write_stream`] writes without building the weights
/// partition in memory.
pub fn stream_from_module(
    mbody: &Body,
    module: Option<&Module>,
    opts: &OmOptions,
) -> LowerResult<ValidStream<'static>> {
    let f = entry_function(mbody, opts.entry.as_deref())?;
    let fd = mbody.op(f);
    let entry = func_name(fd);
    let no_body = || LowerError::at(fd.loc, "the entry function has no body");
    let body = fd.inner.as_deref().ok_or_else(no_body)?;
    let block = func_block(fd).ok_or_else(no_body)?;
    let prog = body
        .block_ops(block)
        .find(|&o| stream_ops::Program::is(body.op(o)))
        .ok_or_else(|| LowerError::at(fd.loc, "the entry function has no stream.program"))?;
    let arenas = Arenas::of_program(body, prog)?;
    let io = io_desc(body, block, prog, &arenas, fd)?;
    let mut w = ProgramWriter::new(body, module, &arenas);
    w.program_of(prog)?;
    let ProgramWriter {
        mut program,
        weights,
        engines,
        ..
    } = w;
    let kernels = kernels_text(mbody, &mut program.kernels)?;
    let mut symbol_bounds: BTreeMap<String, i64> = arenas
        .bounds
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    symbol_bounds.retain(|_, v| *v > 0);
    let def = ModelDef {
        name: opts.name.clone().unwrap_or_else(|| entry.clone()),
        soc: opts.soc.clone(),
        entry,
        arenas: arenas.defs,
        num_streams: int(body, prog, "num_streams").max(1) as u32,
        num_events: int(body, prog, "num_events").max(0) as u32,
        symbol_bounds,
        weights_size: weights.len(),
        engines,
        memory_plan: memory_plan_summary(mbody, f),
        replan: replan_of(mbody, f)?,
    };
    let m = OmStream {
        def,
        weights,
        program,
        kernels,
        io,
    };
    m.validated().at_op(fd.loc)
}

/// The function to export: `entry`, or the only lowered one.
fn entry_function(mbody: &Body, entry: Option<&str>) -> LowerResult<OpId> {
    let funcs = lowered_functions(mbody);
    if let Some(e) = entry {
        return funcs
            .iter()
            .copied()
            .find(|&f| func_name(mbody.op(f)) == e)
            .ok_or_else(|| {
                format!("no lowered function '@{e}' (run the atc pipeline first)").into()
            });
    }
    match funcs.as_slice() {
        [f] => Ok(*f),
        [] => Err(
            "the module has no lowered function (run the atc pipeline, or emit-tasks, first)"
                .into(),
        ),
        many => {
            let names: Vec<String> = many
                .iter()
                .map(|&f| format!("@{}", func_name(mbody.op(f))))
                .collect();
            Err(format!(
                "several functions were lowered ({}); choose one with entry=NAME",
                names.join(", ")
            )
            .into())
        }
    }
}

/// The program's arenas, in program-operand order, and the symbol bounds
/// their buffers are sized at.
struct Arenas {
    ops: Vec<OpId>,
    defs: Vec<ArenaDef>,
    bounds: Bounds,
}

impl Arenas {
    fn of_program(body: &Body, prog: OpId) -> LowerResult<Arenas> {
        let loc = body.op(prog).loc;
        let mut arenas = Arenas {
            ops: vec![],
            defs: vec![],
            bounds: Bounds::new(),
        };
        for &v in body.op(prog).operands() {
            let a = arena_root(body, v)
                .ok_or("a program operand is not an arena")
                .at_op(loc)?;
            let info = arena_info_of_op(body, a)
                .ok_or("a program operand is not a memory.arena")
                .at_op(loc)?;
            arenas
                .bounds
                .extend(info.bounds.iter().map(|(k, v)| (*k, *v)));
            let role = match body.op(a).attr(ROLE_ATTR).and_then(|r| r.as_str()) {
                Some("input") => ArenaRole::Input,
                Some("output") => ArenaRole::Output,
                _ => ArenaRole::Workspace,
            };
            let index = body
                .op(a)
                .attr(INDEX_ATTR)
                .and_then(|x| x.as_int())
                .map(|i| i as u32);
            arenas.defs.push(ArenaDef {
                role,
                index: if role == ArenaRole::Workspace {
                    None
                } else {
                    index
                },
                size: info.size.max(0) as u64,
                alignment: info.alignment.max(1) as u64,
            });
            arenas.ops.push(a);
        }
        Ok(arenas)
    }

    /// The index of the arena behind arena value `v`.
    fn index_of(&self, body: &Body, v: ValueId) -> Result<u32, String> {
        let a = arena_root(body, v).ok_or("an access to an unknown arena")?;
        self.ops
            .iter()
            .position(|&x| x == a)
            .map(|i| i as u32)
            .ok_or_else(|| "an access to an arena the program does not use".to_string())
    }

    /// A buffer of type `ty` at `off` in arena `arena` (its size at the bounds).
    fn buffer(&self, arena: u32, off: i64, ty: Type, id: i64) -> Result<Buffer, String> {
        Ok(Buffer {
            arena,
            offset: off.max(0) as u64,
            ty: ty.to_string(),
            bytes: byte_size_bound(ty, &self.bounds)?.max(0) as u64,
            id,
        })
    }
}

/// Inputs: where the function stores its arguments; outputs: the views of
/// the program's results it returns. Each is named as the function `fd`
/// names it (`argN` / `outN` where it does not).
fn io_desc(
    body: &Body,
    block: BlockId,
    prog: OpId,
    arenas: &Arenas,
    fd: &ge_ir::OpData,
) -> LowerResult<IoDesc> {
    let (in_names, out_names) = ge_dialects::graph::func::io_names_or_default(fd);
    let mut io = IoDesc::default();
    for (i, &a) in body.block(block).args.iter().enumerate() {
        let at = body.value(a).loc;
        let store = body
            .uses(a)
            .iter()
            .map(|u| u.op)
            .find(|&o| mem_ops::Store::is(body.op(o)))
            .ok_or_else(|| {
                LowerError::at(at, format!("input #{i} is not stored into an input arena"))
            })?;
        let sd = body.op(store);
        let buffer = arenas
            .index_of(body, sd.operands()[1])
            .and_then(|k| {
                arenas.buffer(
                    k,
                    int(body, store, "offset"),
                    body.value_type(a),
                    int(body, store, BUFFER_ATTR),
                )
            })
            .at_op(sd.loc)?;
        io.inputs.push(IoTensor {
            name: in_names.get(i).cloned().unwrap_or_default(),
            buffer,
        });
    }
    let ret = body
        .block_last_op(block)
        .ok_or("empty function")
        .at_op(body.op(prog).loc)?;
    let rl = body.op(ret).loc;
    for (i, &v) in body.op(ret).operands().iter().enumerate() {
        let not_a_view = || {
            LowerError::at(
                rl,
                format!("output #{i} is not a view of the program's result"),
            )
        };
        let view = body
            .defining_op(v)
            .filter(|&o| mem_ops::View::is(body.op(o)))
            .ok_or_else(not_a_view)?;
        let k = match body.value(body.op(view).operands()[0]).def {
            ValueDef::Result { op, index } if op == prog => index,
            _ => return Err(not_a_view()),
        };
        let buffer = arenas
            .buffer(
                k,
                int(body, view, "offset"),
                body.value_type(v),
                int(body, view, BUFFER_ATTR),
            )
            .at_op(body.op(view).loc)?;
        io.outputs.push(IoTensor {
            name: out_names.get(i).cloned().unwrap_or_default(),
            buffer,
        });
    }
    Ok(io)
}

/// The task program and weights partition, built op by op from a
/// `stream.program`'s block.
struct ProgramWriter<'a> {
    body: &'a Body,
    module: Option<&'a Module>,
    arenas: &'a Arenas,
    program: TaskProgram,
    weights: Weights<'static>,
    /// The buffer each view of the program stands for.
    places: HashMap<ValueId, Buffer>,
    weight_index: HashMap<ValueId, u32>,
    kernel_index: HashMap<String, u32>,
    engines: Vec<String>,
}

impl<'a> ProgramWriter<'a> {
    fn new(body: &'a Body, module: Option<&'a Module>, arenas: &'a Arenas) -> ProgramWriter<'a> {
        ProgramWriter {
            body,
            module,
            arenas,
            program: TaskProgram::default(),
            weights: Weights::new(),
            places: HashMap::new(),
            weight_index: HashMap::new(),
            kernel_index: HashMap::new(),
            engines: vec![],
        }
    }

    fn program_of(&mut self, prog: OpId) -> LowerResult<()> {
        let body = self.body;
        let loc = body.op(prog).loc;
        let region = *body
            .op(prog)
            .regions()
            .first()
            .ok_or("stream.program has no region")
            .at_op(loc)?;
        let pblk = body
            .entry_block(region)
            .ok_or("stream.program has no block")
            .at_op(loc)?;
        let pargs = body.block(pblk).args.clone();
        for o in body.block_ops(pblk) {
            self.op(o, &pargs).at_op(body.op(o).loc)?;
        }
        Ok(())
    }

    /// One op of the program: a view, a weight, or a task.
    fn op(&mut self, o: OpId, pargs: &[ValueId]) -> Result<(), String> {
        let body = self.body;
        let d = body.op(o);
        let stream = int(body, o, "stream").max(0) as u32;
        let event = || int(body, o, "event").max(0) as u32;
        let label = || int(body, o, "label").max(0) as u32;
        let task = match d.name.as_str() {
            mem_ops::View::NAME => {
                let a = d.operands()[0];
                let k = pargs
                    .iter()
                    .position(|&x| x == a)
                    .ok_or("a view in the program does not view an arena argument")?
                    as u32;
                let r = d.results()[0];
                let buffer = self.arenas.buffer(
                    k,
                    int(body, o, "offset"),
                    body.value_type(r),
                    int(body, o, BUFFER_ATTR),
                )?;
                self.places.insert(r, buffer);
                return Ok(());
            }
            mem_ops::Weight::NAME | Constant::NAME => return self.weight(o),
            stream_ops::Launch::NAME => self.launch(o, stream)?,
            stream_ops::Memcpy::NAME => Task::Memcpy {
                stream,
                src: self.place(d.operands()[0])?,
                dst: self.place(d.operands()[1])?,
            },
            stream_ops::Record::NAME => Task::Record {
                event: event(),
                stream,
            },
            stream_ops::Wait::NAME => Task::Wait {
                event: event(),
                stream,
            },
            stream_ops::Label::NAME => Task::Label {
                label: label(),
                stream,
            },
            stream_ops::Goto::NAME => Task::Goto {
                label: label(),
                stream,
            },
            stream_ops::Switch::NAME => Task::Switch {
                value: self.place(d.operands()[0])?,
                stream,
                targets: i64s(d.attr("targets"))
                    .into_iter()
                    .map(|t| t.max(0) as u32)
                    .collect(),
            },
            stream_ops::End::NAME => Task::End,
            other => return Err(format!("'{other}' cannot be serialised in a task program")),
        };
        self.program.tasks.push(task);
        Ok(())
    }

    /// The buffer of a view the program made.
    fn place(&self, v: ValueId) -> Result<Buffer, String> {
        self.places
            .get(&v)
            .cloned()
            .ok_or_else(|| "a task uses a value that is not a view of the program".to_string())
    }

    /// A weight: its bytes appended (64-byte aligned) to the weights partition.
    fn weight(&mut self, o: OpId) -> Result<(), String> {
        let d = self.body.op(o);
        let value = d.attr("value").ok_or("a weight without a value")?;
        // Dense weights are written from their storage (a splat from its one
        // element); only resource blobs, external files and sub-byte types go
        // through a reference tensor.
        let bytes = match value.as_dense() {
            Some(e) if e.dtype().bit_width().is_multiple_of(8) && e.splat => WeightBytes::Splat {
                element: Cow::Borrowed(&e.bytes),
                count: e.len() as u64,
            },
            Some(e) if e.dtype().bit_width().is_multiple_of(8) => {
                WeightBytes::Bytes(Cow::Borrowed(&e.bytes))
            }
            _ => {
                let t = elements_tensor(value, self.module).map_err(|m| {
                    if matches!(value.data(), AttrData::DenseResource { .. }) && self.module.is_none() {
                        format!("{m}: a pass cannot see the module's resource blobs; write the .om with `ge-opt --emit-om=FILE` instead")
                    } else {
                        m
                    }
                })?;
                WeightBytes::Bytes(Cow::Owned(tensor_to_bytes(&t)))
            }
        };
        let len = bytes.byte_len().ok_or("a weight's size overflows")?;
        let off = self.weights.push(bytes, WEIGHT_ALIGN)?;
        let r = d.results()[0];
        self.weight_index
            .insert(r, self.program.weights.len() as u32);
        self.program.weights.push(WeightDef {
            offset: off,
            bytes: len,
            ty: self.body.value_type(r).to_string(),
        });
        Ok(())
    }

    /// A kernel launch: its kernel (numbered in first-launch order), engine and buffers.
    fn launch(&mut self, o: OpId, stream: u32) -> Result<Task, String> {
        let d = self.body.op(o);
        let n_in = i64s(d.attr("operand_segment_sizes"))
            .first()
            .copied()
            .unwrap_or(0)
            .max(0) as usize;
        let kname = d
            .attr("kernel")
            .and_then(|a| a.as_symbol())
            .ok_or("a launch without a kernel")?
            .as_str()
            .to_string();
        let next = self.kernel_index.len() as u32;
        let kernels = &mut self.program.kernels;
        let kernel = *self.kernel_index.entry(kname.clone()).or_insert_with(|| {
            kernels.push(KernelDef {
                name: kname,
                kind: None,
            });
            next
        });
        let engine = d
            .attr("engine")
            .and_then(|a| a.as_str())
            .unwrap_or("AICore")
            .to_string();
        if !self.engines.contains(&engine) {
            self.engines.push(engine.clone());
        }
        let (mut ins, mut outs) = (vec![], vec![]);
        for (i, &v) in d.operands().iter().enumerate() {
            if i >= n_in {
                outs.push(self.place(v)?);
            } else if let Some(&w) = self.weight_index.get(&v) {
                ins.push(Operand::Weight(w));
            } else {
                ins.push(Operand::Buffer(self.place(v)?));
            }
        }
        Ok(Task::Launch {
            kernel,
            stream,
            engine,
            ins,
            outs,
        })
    }
}

/// The kernels partition: the launched functions and everything they call,
/// printed as one module; records each kernel's fusion kind.
fn kernels_text(mbody: &Body, kernels: &mut [KernelDef]) -> LowerResult<String> {
    let mut wanted: Vec<String> = kernels.iter().map(|k| k.name.clone()).collect();
    let mut seen: HashSet<String> = HashSet::new();
    let mut text = String::from("module {\n");
    while let Some(name) = wanted.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let kf = find_function(mbody, &name)
            .ok_or_else(|| format!("kernel '@{name}' is not a function of the module"))?;
        if let Some(k) = kernels.iter_mut().find(|k| k.name == name) {
            k.kind = mbody
                .op(kf)
                .attr("ge.kind")
                .and_then(|a| a.as_str())
                .map(str::to_string);
        }
        if let Some(inner) = mbody.op(kf).inner.as_deref() {
            inner.walk_deep(WalkOrder::Pre, &mut |b, o| {
                if let Some(c) = b.op(o).attr("callee").and_then(|a| a.as_symbol()) {
                    wanted.push(c.as_str().to_string());
                }
            });
        }
        // With locations: the runtime names the source op of a failing
        // kernel step (`ge_runtime::Error`). `strip-debuginfo` before
        // lowering leaves them unknown.
        text.push_str(&ge_ir::printer::print_op(
            mbody,
            kf,
            ge_ir::printer::PrintOptions {
                debuginfo: true,
                ..Default::default()
            },
        ));
        text.push('\n');
    }
    text.push_str("}\n");
    Ok(text)
}

/// The replan section `plan-memory` left on a function with unbounded
/// symbols.
fn replan_of(mbody: &Body, f: OpId) -> LowerResult<Option<ge_om::model::Replan>> {
    let d = mbody.op(f);
    let Some(json) = d
        .attr(REPLAN_ATTR)
        .and_then(|a| a.as_str().map(String::from))
    else {
        return Ok(None);
    };
    serde_json::from_str(&json)
        .map(Some)
        .map_err(|e| LowerError::at(d.loc, format!("bad `{REPLAN_ATTR}` attribute: {e}")))
}

/// The memory plan summary `plan-memory` left on the function, as JSON values.
fn memory_plan_summary(mbody: &Body, f: OpId) -> BTreeMap<String, serde_json::Value> {
    mbody
        .op(f)
        .attr(PLAN_ATTR)
        .and_then(|a| a.as_dict())
        .map(|d| {
            d.entries()
                .iter()
                .map(|(k, v)| {
                    let j = match (v.as_int(), v.as_str()) {
                        (Some(i), _) => serde_json::Value::from(i),
                        (_, Some(s)) => serde_json::Value::from(s),
                        _ => serde_json::Value::from(v.to_string()),
                    };
                    (k.to_string(), j)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn find_function(mbody: &Body, name: &str) -> Option<OpId> {
    for r in mbody.root_regions() {
        for &b in &mbody.region(r).blocks {
            for f in mbody.block_ops(b) {
                if mbody.op(f).attr("sym_name").and_then(|a| a.as_str()) == Some(name) {
                    return Some(f);
                }
            }
        }
    }
    None
}
