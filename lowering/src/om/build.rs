//! From IR to `.om` and back: [`from_module`] reads a function lowered by
//! `emit-tasks` (its arenas, input stores, `stream.program` and output views,
//! plus the kernel functions it launches) into an [`OmModel`];
//! [`to_module`] rebuilds an equivalent module from a parsed `.om` (what
//! `ge-translate --om-to-air` prints), with the weights as `dense_resource`
//! blobs.

use crate::funcs::{func_block, func_name, is_private, Bounds};
use crate::memory_plan::{BUFFER_ATTR, INDEX_ATTR, PLAN_ATTR, ROLE_ATTR, WEIGHT_ALIGN};
use ge_dialects::data::constant::elements_tensor;
use ge_dialects::data::tensor_to_bytes;
use ge_dialects::memory::{arena_info_of_op, arena_root, arena_type, byte_size_bound};
use ge_ir::attributes::{AttrData, AttrDict};
use ge_ir::body::{Body, OpId, OpState, ValueDef, ValueId, WalkOrder};
use ge_ir::builder::Builder;
use ge_ir::module::{Blob, Module};
use ge_ir::{Attribute, Context, Ident, Location, Type};
use ge_om::format::OmFile;
use ge_om::model::{
    ArenaDef, ArenaRole, Buffer, IoDesc, IoTensor, KernelDef, ModelDef, OmModel, Operand, Task,
    TaskProgram, WeightDef,
};
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
                if d.name.as_str() != "graph.func" || is_private(d) {
                    continue;
                }
                let has = func_block(d).is_some_and(|blk| {
                    d.inner.as_deref().is_some_and(|i| {
                        i.block_ops(blk)
                            .any(|o| i.op(o).name.as_str() == "stream.program")
                    })
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
) -> Result<OmModel, String> {
    let funcs = lowered_functions(mbody);
    let f = match &opts.entry {
        Some(e) => *funcs
            .iter()
            .find(|&&f| func_name(mbody.op(f)) == *e)
            .ok_or_else(|| format!("no lowered function '@{e}' (run the atc pipeline first)"))?,
        None => match funcs.as_slice() {
            [f] => *f,
            [] => return Err(
                "the module has no lowered function (run the atc pipeline, or emit-tasks, first)"
                    .into(),
            ),
            many => {
                let names: Vec<String> = many
                    .iter()
                    .map(|&f| format!("@{}", func_name(mbody.op(f))))
                    .collect();
                return Err(format!(
                    "several functions were lowered ({}); choose one with entry=NAME",
                    names.join(", ")
                ));
            }
        },
    };
    let fd = mbody.op(f);
    let entry = func_name(fd);
    let body = fd
        .inner
        .as_deref()
        .ok_or("the entry function has no body")?;
    let block = func_block(fd).ok_or("the entry function has no body")?;
    let ops: Vec<OpId> = body.block_ops(block).collect();
    let prog = *ops
        .iter()
        .find(|&&o| body.op(o).name.as_str() == "stream.program")
        .ok_or("the entry function has no stream.program")?;
    let pd = body.op(prog);
    // Arenas in program-operand order.
    let mut arena_ops = vec![];
    let mut arenas = vec![];
    let mut bounds = Bounds::new();
    for &v in pd.operands() {
        let a = arena_root(body, v).ok_or("a program operand is not an arena")?;
        let info = arena_info_of_op(body, a).ok_or("a program operand is not a memory.arena")?;
        bounds.extend(info.bounds.iter().map(|(k, v)| (*k, *v)));
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
        arenas.push(ArenaDef {
            role,
            index: if role == ArenaRole::Workspace {
                None
            } else {
                index
            },
            size: info.size.max(0) as u64,
            alignment: info.alignment.max(1) as u64,
        });
        arena_ops.push(a);
    }
    let arena_of = |v: ValueId| -> Result<u32, String> {
        let a = arena_root(body, v).ok_or("an access to an unknown arena")?;
        arena_ops
            .iter()
            .position(|&x| x == a)
            .map(|i| i as u32)
            .ok_or_else(|| "an access to an arena the program does not use".to_string())
    };
    let buffer = |b: &Body, arena: u32, off: i64, ty: Type, id: i64| -> Result<Buffer, String> {
        let _ = b;
        Ok(Buffer {
            arena,
            offset: off.max(0) as u64,
            ty: ty.to_string(),
            bytes: byte_size_bound(ty, &bounds)?.max(0) as u64,
            id,
        })
    };
    // I/O.
    let mut io = IoDesc::default();
    let args = body.block(block).args.clone();
    for (i, &a) in args.iter().enumerate() {
        let store = body
            .uses(a)
            .iter()
            .map(|u| u.op)
            .find(|&o| body.op(o).name.as_str() == "memory.store")
            .ok_or_else(|| format!("input #{i} is not stored into an input arena"))?;
        let sd = body.op(store);
        io.inputs.push(IoTensor {
            name: format!("arg{i}"),
            buffer: buffer(
                body,
                arena_of(sd.operands()[1])?,
                int(body, store, "offset"),
                body.value_type(a),
                int(body, store, BUFFER_ATTR),
            )?,
        });
    }
    let ret = *ops.last().ok_or("empty function")?;
    for (i, &v) in body.op(ret).operands().iter().enumerate() {
        let view = body
            .defining_op(v)
            .filter(|&o| body.op(o).name.as_str() == "memory.view")
            .ok_or_else(|| format!("output #{i} is not a view of the program's result"))?;
        let src = body.op(view).operands()[0];
        let k = match body.value(src).def {
            ValueDef::Result { op, index } if op == prog => index,
            _ => return Err(format!("output #{i} is not a view of the program's result")),
        };
        io.outputs.push(IoTensor {
            name: format!("out{i}"),
            buffer: buffer(
                body,
                k,
                int(body, view, "offset"),
                body.value_type(v),
                int(body, view, BUFFER_ATTR),
            )?,
        });
    }
    // The task program.
    let region = *pd.regions().first().ok_or("stream.program has no region")?;
    let pblk = body
        .entry_block(region)
        .ok_or("stream.program has no block")?;
    let pargs = body.block(pblk).args.clone();
    let mut program = TaskProgram::default();
    let mut weights: Vec<u8> = vec![];
    let mut places: HashMap<ValueId, Buffer> = HashMap::new();
    let mut weight_index: HashMap<ValueId, u32> = HashMap::new();
    let mut kernel_index: HashMap<String, u32> = HashMap::new();
    let mut engines: Vec<String> = vec![];
    let place = |places: &HashMap<ValueId, Buffer>, v: ValueId| -> Result<Buffer, String> {
        places
            .get(&v)
            .cloned()
            .ok_or_else(|| "a task uses a value that is not a view of the program".to_string())
    };
    for o in body.block_ops(pblk) {
        let d = body.op(o);
        let stream = int(body, o, "stream").max(0) as u32;
        match d.name.as_str() {
            "memory.view" => {
                let a = d.operands()[0];
                let k = pargs
                    .iter()
                    .position(|&x| x == a)
                    .ok_or("a view in the program does not view an arena argument")?
                    as u32;
                places.insert(
                    d.results()[0],
                    buffer(
                        body,
                        k,
                        int(body, o, "offset"),
                        body.value_type(d.results()[0]),
                        int(body, o, BUFFER_ATTR),
                    )?,
                );
            }
            "memory.weight" | "data.constant" => {
                let value = d.attr("value").ok_or("a weight without a value")?;
                let t = elements_tensor(value, module).map_err(|m| {
                    if matches!(value.data(), AttrData::DenseResource { .. }) && module.is_none() {
                        format!("{m}: a pass cannot see the module's resource blobs; write the .om with `ge-opt --emit-om=FILE` instead")
                    } else {
                        m
                    }
                })?;
                let bytes = tensor_to_bytes(&t);
                let off = weights.len().div_ceil(WEIGHT_ALIGN as usize) * WEIGHT_ALIGN as usize;
                weights.resize(off, 0);
                weights.extend_from_slice(&bytes);
                weight_index.insert(d.results()[0], program.weights.len() as u32);
                program.weights.push(WeightDef {
                    offset: off as u64,
                    bytes: bytes.len() as u64,
                    ty: body.value_type(d.results()[0]).to_string(),
                });
            }
            "stream.launch" => {
                let n_in = crate::funcs::i64s(d.attr("operand_segment_sizes"))
                    .first()
                    .copied()
                    .unwrap_or(0)
                    .max(0) as usize;
                let kernel = d
                    .attr("kernel")
                    .and_then(|a| a.as_symbol())
                    .ok_or("a launch without a kernel")?;
                let kname = kernel.as_str().to_string();
                let next = kernel_index.len() as u32;
                let ki = *kernel_index.entry(kname.clone()).or_insert_with(|| {
                    program.kernels.push(KernelDef {
                        name: kname.clone(),
                        kind: None,
                    });
                    next
                });
                let engine = d
                    .attr("engine")
                    .and_then(|a| a.as_str())
                    .unwrap_or("AICore")
                    .to_string();
                if !engines.contains(&engine) {
                    engines.push(engine.clone());
                }
                let mut ins = vec![];
                let mut outs = vec![];
                for (i, &v) in d.operands().iter().enumerate() {
                    if i < n_in {
                        match weight_index.get(&v) {
                            Some(&w) => ins.push(Operand::Weight(w)),
                            None => ins.push(Operand::Buffer(place(&places, v)?)),
                        }
                    } else {
                        outs.push(place(&places, v)?);
                    }
                }
                program.tasks.push(Task::Launch {
                    kernel: ki,
                    stream,
                    engine,
                    ins,
                    outs,
                });
            }
            "stream.memcpy" => program.tasks.push(Task::Memcpy {
                stream,
                src: place(&places, d.operands()[0])?,
                dst: place(&places, d.operands()[1])?,
            }),
            "stream.record" => program.tasks.push(Task::Record {
                event: int(body, o, "event").max(0) as u32,
                stream,
            }),
            "stream.wait" => program.tasks.push(Task::Wait {
                event: int(body, o, "event").max(0) as u32,
                stream,
            }),
            "stream.label" => program.tasks.push(Task::Label {
                label: int(body, o, "label").max(0) as u32,
                stream,
            }),
            "stream.goto" => program.tasks.push(Task::Goto {
                label: int(body, o, "label").max(0) as u32,
                stream,
            }),
            "stream.switch" => program.tasks.push(Task::Switch {
                value: place(&places, d.operands()[0])?,
                stream,
                targets: crate::funcs::i64s(d.attr("targets"))
                    .into_iter()
                    .map(|t| t.max(0) as u32)
                    .collect(),
            }),
            "stream.end" => program.tasks.push(Task::End),
            other => return Err(format!("'{other}' cannot be serialised in a task program")),
        }
    }
    // Kernels: the launched functions and everything they call.
    let mut wanted: Vec<String> = program.kernels.iter().map(|k| k.name.clone()).collect();
    let mut seen: HashSet<String> = HashSet::new();
    let mut text = String::from("module {\n");
    while let Some(name) = wanted.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let kf = find_function(mbody, &name)
            .ok_or_else(|| format!("kernel '@{name}' is not a function of the module"))?;
        if let Some(k) = program.kernels.iter_mut().find(|k| k.name == name) {
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
        text.push_str(&ge_ir::printer::print_op(
            mbody,
            kf,
            ge_ir::printer::PrintOptions::default(),
        ));
        text.push('\n');
    }
    text.push_str("}\n");
    let memory_plan: BTreeMap<String, serde_json::Value> = fd
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
        .unwrap_or_default();
    let num_streams = int(body, prog, "num_streams").max(1) as u32;
    let num_events = int(body, prog, "num_events").max(0) as u32;
    let mut symbol_bounds: BTreeMap<String, i64> =
        bounds.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    symbol_bounds.retain(|_, v| *v > 0);
    let def = ModelDef {
        name: opts.name.clone().unwrap_or_else(|| entry.clone()),
        soc: opts.soc.clone(),
        entry,
        arenas,
        num_streams,
        num_events,
        symbol_bounds,
        weights_size: weights.len() as u64,
        engines,
        memory_plan,
    };
    let m = OmModel {
        def,
        weights,
        program,
        kernels: text,
        io,
    };
    m.validate()?;
    Ok(m)
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

/// Rebuild a module from a parsed `.om`: the kernel functions plus the entry
/// function running the task program (weights as `dense_resource<wN>`).
pub fn to_module(ctx: &Context, om: &OmFile) -> Result<Module, String> {
    let kernels = ge_ir::parser::parse_module(
        ctx,
        "<om kernels>",
        om.kernels,
        ge_ir::parser::ParseOptions::default(),
    )
    .map_err(|d| format!("kernels partition: {}", d.message))?;
    let mut m = kernels;
    let ty = |s: &str| -> Result<Type, String> {
        ge_ir::parser::parse_type_str(ctx, s).map_err(|d| format!("bad type '{s}': {}", d.message))
    };
    let in_types: Vec<Type> = om
        .io
        .inputs
        .iter()
        .map(|t| ty(&t.buffer.ty))
        .collect::<Result<_, _>>()?;
    let out_types: Vec<Type> = om
        .io
        .outputs
        .iter()
        .map(|t| ty(&t.buffer.ty))
        .collect::<Result<_, _>>()?;
    let block = m.block();
    let first = m.body().block_first_op(block);
    let mbody = m.body_mut();
    let mut st = OpState::new("graph.func", Location::unknown());
    st.def = ctx.op_def("graph.func");
    st.attrs = AttrDict::new(vec![
        (Ident::new("sym_name"), Attribute::string(&om.def.entry)),
        (
            Ident::new("function_type"),
            Attribute::ty(Type::function(&in_types, &out_types)),
        ),
    ]);
    st.num_regions = 1;
    let f = mbody.create_op(st);
    match first {
        Some(o) => mbody.insert_op_before(o, f),
        None => mbody.append_op(block, f),
    }
    let mut fb = mbody.take_inner(f).ok_or("graph.func has no body")?;
    let mut resources: Vec<(String, Blob)> = vec![];
    let res = (|| -> Result<(), String> {
        let r = *mbody
            .op(f)
            .regions()
            .first()
            .ok_or("graph.func has no region")?;
        let blk = fb.add_block(r);
        let args: Vec<ValueId> = in_types
            .iter()
            .map(|&t| fb.add_block_arg(blk, t, Location::unknown()))
            .collect();
        let mut b = Builder::at_end(ctx, &mut fb, blk);
        let bounds = (!om.def.symbol_bounds.is_empty()).then(|| {
            Attribute::dict(AttrDict::new(
                om.def
                    .symbol_bounds
                    .iter()
                    .map(|(k, v)| (Ident::new(k), Attribute::i64(*v)))
                    .collect(),
            ))
        });
        let mut cur = vec![];
        for a in &om.def.arenas {
            let mut attrs = vec![
                ("size", Attribute::i64(a.size as i64)),
                ("alignment", Attribute::i64(a.alignment as i64)),
                (
                    ROLE_ATTR,
                    Attribute::string(match a.role {
                        ArenaRole::Input => "input",
                        ArenaRole::Output => "output",
                        ArenaRole::Workspace => "workspace",
                    }),
                ),
            ];
            if let Some(i) = a.index {
                attrs.push((INDEX_ATTR, Attribute::i64(i as i64)));
            }
            if let Some(bd) = bounds {
                attrs.push(("symbol_bounds", bd));
            }
            cur.push(b.create_value("memory.arena", &[], attrs)?);
        }
        for (t, &a) in om.io.inputs.iter().zip(&args) {
            let k = t.buffer.arena as usize;
            let arena = *cur.get(k).ok_or("an input in a missing arena")?;
            cur[k] = b.create_value(
                "memory.store",
                &[a, arena],
                vec![
                    ("offset", Attribute::i64(t.buffer.offset as i64)),
                    (BUFFER_ATTR, Attribute::i64(t.buffer.id)),
                ],
            )?;
        }
        let prog = b.create(
            "stream.program",
            &cur,
            vec![
                ("num_streams", Attribute::i64(om.def.num_streams as i64)),
                ("num_events", Attribute::i64(om.def.num_events as i64)),
            ],
            Some(vec![arena_type(); cur.len()]),
            1,
        )?;
        let results = b.body.op(prog).results().to_vec();
        for t in &om.io.outputs {
            let k = t.buffer.arena as usize;
            let src = *results.get(k).ok_or("an output in a missing arena")?;
            let v = b.create(
                "memory.view",
                &[src],
                vec![
                    ("offset", Attribute::i64(t.buffer.offset as i64)),
                    (BUFFER_ATTR, Attribute::i64(t.buffer.id)),
                ],
                Some(vec![ty(&t.buffer.ty)?]),
                0,
            )?;
            let v = b.body.result(v, 0);
            cur.push(v);
        }
        let outs: Vec<ValueId> = cur[om.def.arenas.len()..].to_vec();
        b.create("graph.return", &outs, vec![], Some(vec![]), 0)?;
        // The program body.
        let pr = *fb
            .op(prog)
            .regions()
            .first()
            .ok_or("stream.program has no region")?;
        let pblk = fb.add_block(pr);
        let pargs: Vec<ValueId> = om
            .def
            .arenas
            .iter()
            .map(|_| fb.add_block_arg(pblk, arena_type(), Location::unknown()))
            .collect();
        let mut b = Builder::at_end(ctx, &mut fb, pblk);
        let mut weights = vec![];
        for (i, w) in om.program.weights.iter().enumerate() {
            let name = format!("w{i}");
            let t = ty(&w.ty)?;
            let bytes = om.weights[w.offset as usize..(w.offset + w.bytes) as usize].to_vec();
            resources.push((
                name.clone(),
                Blob {
                    alignment: WEIGHT_ALIGN as u32,
                    data: bytes,
                },
            ));
            let value = Attribute::new(AttrData::DenseResource {
                name: Ident::new(&name),
                ty: t,
            });
            weights.push(b.create_value(
                "memory.weight",
                &[],
                vec![
                    ("offset", Attribute::i64(w.offset as i64)),
                    ("value", value),
                    ("alignment", Attribute::i64(WEIGHT_ALIGN as i64)),
                ],
            )?);
        }
        let mut views: HashMap<Buffer, ValueId> = HashMap::new();
        let mut view = |b: &mut Builder, buf: &Buffer| -> Result<ValueId, String> {
            if let Some(&v) = views.get(buf) {
                return Ok(v);
            }
            let v = b.create(
                "memory.view",
                &[pargs[buf.arena as usize]],
                vec![
                    ("offset", Attribute::i64(buf.offset as i64)),
                    (BUFFER_ATTR, Attribute::i64(buf.id)),
                ],
                Some(vec![ty(&buf.ty)?]),
                0,
            )?;
            let v = b.body.result(v, 0);
            views.insert(buf.clone(), v);
            Ok(v)
        };
        let ev = |e: u32, s: u32| {
            vec![
                ("event", Attribute::i64(e as i64)),
                ("stream", Attribute::i64(s as i64)),
            ]
        };
        for t in &om.program.tasks {
            match t {
                Task::Launch {
                    kernel,
                    stream,
                    engine,
                    ins,
                    outs,
                } => {
                    let mut operands = vec![];
                    for o in ins {
                        operands.push(match o {
                            Operand::Buffer(buf) => view(&mut b, buf)?,
                            Operand::Weight(w) => weights[*w as usize],
                        });
                    }
                    for buf in outs {
                        operands.push(view(&mut b, buf)?);
                    }
                    b.create(
                        "stream.launch",
                        &operands,
                        vec![
                            (
                                "kernel",
                                Attribute::symbol(&om.program.kernels[*kernel as usize].name),
                            ),
                            ("stream", Attribute::i64(*stream as i64)),
                            ("engine", Attribute::string(engine)),
                            (
                                "operand_segment_sizes",
                                Attribute::i64_array(&[ins.len() as i64, outs.len() as i64]),
                            ),
                        ],
                        Some(vec![]),
                        0,
                    )?;
                }
                Task::Memcpy { stream, src, dst } => {
                    let (s, d) = (view(&mut b, src)?, view(&mut b, dst)?);
                    b.create(
                        "stream.memcpy",
                        &[s, d],
                        vec![("stream", Attribute::i64(*stream as i64))],
                        Some(vec![]),
                        0,
                    )?;
                }
                Task::Record { event, stream } => {
                    b.create("stream.record", &[], ev(*event, *stream), Some(vec![]), 0)?;
                }
                Task::Wait { event, stream } => {
                    b.create("stream.wait", &[], ev(*event, *stream), Some(vec![]), 0)?;
                }
                Task::Label { label, stream } => {
                    b.create(
                        "stream.label",
                        &[],
                        vec![
                            ("label", Attribute::i64(*label as i64)),
                            ("stream", Attribute::i64(*stream as i64)),
                        ],
                        Some(vec![]),
                        0,
                    )?;
                }
                Task::Goto { label, stream } => {
                    b.create(
                        "stream.goto",
                        &[],
                        vec![
                            ("label", Attribute::i64(*label as i64)),
                            ("stream", Attribute::i64(*stream as i64)),
                        ],
                        Some(vec![]),
                        0,
                    )?;
                }
                Task::Switch {
                    value,
                    stream,
                    targets,
                } => {
                    let v = view(&mut b, value)?;
                    let ts: Vec<i64> = targets.iter().map(|&t| t as i64).collect();
                    b.create(
                        "stream.switch",
                        &[v],
                        vec![
                            ("stream", Attribute::i64(*stream as i64)),
                            ("targets", Attribute::i64_array(&ts)),
                        ],
                        Some(vec![]),
                        0,
                    )?;
                }
                Task::End => {
                    b.create("stream.end", &[], vec![], Some(vec![]), 0)?;
                }
            }
        }
        Ok(())
    })();
    mbody.put_inner(f, fb);
    res?;
    for (k, v) in resources {
        m.resources.insert(k, v);
    }
    Ok(m)
}
