//! `.om` → IR: [`to_module`] rebuilds an equivalent module from a parsed
//! `.om` (what `ge-translate --om-to-air` prints): the kernel functions, and
//! an entry function whose block holds the arenas, the input stores, the
//! `stream.program` and the output views ([`entry_block`]), the program's
//! block holding the weights (as `dense_resource` blobs, [`ProgramBuilder::weights`])
//! and one op per task ([`ProgramBuilder::task`]). The `.om` was validated
//! by its reader, so every index in it is in range; errors are one line.

use crate::memory_plan::{BUFFER_ATTR, INDEX_ATTR, ROLE_ATTR, WEIGHT_ALIGN};
use ge_dialects::graph::func::{Func, Return};
use ge_dialects::memory::arena_type;
use ge_dialects::memory::ops as mem_ops;
use ge_dialects::stream::ops as stream_ops;
use ge_ir::attributes::{AttrData, AttrDict};
use ge_ir::body::{BlockId, Body, OpId, OpState, ValueId};
use ge_ir::builder::Builder;
use ge_ir::module::{Blob, Module};
use ge_ir::{Attribute, Context, Ident, Location, Type};
use ge_om::format::OmFile;
use ge_om::model::{ArenaDef, ArenaRole, Buffer, Operand, Task};
use std::collections::HashMap;

/// Rebuild a module from a parsed `.om`: the kernel functions plus the entry
/// function running the task program (weights as `dense_resource<wN>`).
pub fn to_module(ctx: &Context, om: &OmFile) -> Result<Module, String> {
    let mut m = ge_ir::parser::parse_module(
        ctx,
        "<om kernels>",
        om.kernels,
        ge_ir::parser::ParseOptions::default(),
    )
    .map_err(|d| format!("kernels partition: {}", d.message))?;
    let in_types = buffer_types(ctx, om.io.inputs.iter().map(|t| &t.buffer))?;
    let out_types = buffer_types(ctx, om.io.outputs.iter().map(|t| &t.buffer))?;
    let block = m.block();
    let first = m.body().block_first_op(block);
    let mbody = m.body_mut();
    let mut st = OpState::new(Func::NAME, Location::unknown());
    st.def = Some(Func::DEF);
    let mut fattrs = vec![
        (Ident::new("sym_name"), Attribute::string(&om.def.entry)),
        (
            Ident::new("function_type"),
            Attribute::ty(Type::function(&in_types, &out_types)),
        ),
    ];
    // A model with unbounded symbols: which bounds are samples, and the
    // workspace's planning problem, as `plan-memory` left them.
    if let Some(r) = &om.def.replan {
        let json = serde_json::to_string(r).map_err(|e| format!("replan section: {e}"))?;
        fattrs.push((
            Ident::new(crate::memory_plan::REPLAN_ATTR),
            Attribute::string(&json),
        ));
        let sampled: crate::funcs::Bounds = r
            .unbounded
            .iter()
            .map(|(k, v)| (Ident::new(k), *v))
            .collect();
        fattrs.push((
            Ident::new(crate::funcs::UNBOUNDED_SYMBOLS),
            crate::funcs::bounds_attr(&sampled),
        ));
    }
    st.attrs = AttrDict::new(fattrs);
    st.num_regions = 1;
    let f = mbody.create_op(st);
    let names = |ts: &[ge_om::model::IoTensor]| -> Vec<String> {
        ts.iter().map(|t| t.name.clone()).collect()
    };
    ge_dialects::graph::func::set_io_names(mbody, f, &names(&om.io.inputs), &names(&om.io.outputs));
    match first {
        Some(o) => mbody.insert_op_before(o, f),
        None => mbody.append_op(block, f),
    }
    let region = *mbody
        .op(f)
        .regions()
        .first()
        .ok_or("graph.func has no region")?;
    let mut fb = mbody.take_inner(f).ok_or("graph.func has no body")?;
    let res = (|| -> Result<Vec<(String, Blob)>, String> {
        let blk = fb.add_block(region);
        let args: Vec<ValueId> = in_types
            .iter()
            .map(|&t| fb.add_block_arg(blk, t, Location::unknown()))
            .collect();
        let prog = entry_block(ctx, om, &mut fb, blk, &args)?;
        let mut p = ProgramBuilder::new(ctx, om, &mut fb, prog)?;
        p.weights()?;
        for t in &om.program.tasks {
            p.task(t)?;
        }
        Ok(p.resources)
    })();
    mbody.put_inner(f, fb);
    for (k, v) in res? {
        m.resources.insert(k, v);
    }
    Ok(m)
}

fn parse_type(ctx: &Context, s: &str) -> Result<Type, String> {
    ge_ir::parser::parse_type_str(ctx, s).map_err(|d| format!("bad type '{s}': {}", d.message))
}

fn buffer_types<'a>(
    ctx: &Context,
    buffers: impl Iterator<Item = &'a Buffer>,
) -> Result<Vec<Type>, String> {
    buffers.map(|b| parse_type(ctx, &b.ty)).collect()
}

/// The attributes of the `memory.arena` of `a`.
fn arena_attrs(a: &ArenaDef, bounds: Option<Attribute>) -> Vec<(&'static str, Attribute)> {
    let role = match a.role {
        ArenaRole::Input => "input",
        ArenaRole::Output => "output",
        ArenaRole::Workspace => "workspace",
    };
    let mut attrs = vec![
        ("size", Attribute::i64(a.size as i64)),
        ("alignment", Attribute::i64(a.alignment as i64)),
        (ROLE_ATTR, Attribute::string(role)),
    ];
    if let Some(i) = a.index {
        attrs.push((INDEX_ATTR, Attribute::i64(i as i64)));
    }
    if let Some(bd) = bounds {
        attrs.push(("symbol_bounds", bd));
    }
    attrs
}

/// The entry function's block: the arenas, the stores of the inputs, the
/// `stream.program` (returned, its block still empty), the views of its
/// results that are the outputs, and the return.
fn entry_block(
    ctx: &Context,
    om: &OmFile,
    fb: &mut Body,
    blk: BlockId,
    args: &[ValueId],
) -> Result<OpId, String> {
    let mut b = Builder::at_end(ctx, fb, blk);
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
        cur.push(b.create_value(mem_ops::Arena::NAME, &[], arena_attrs(a, bounds))?);
    }
    for (t, &a) in om.io.inputs.iter().zip(args) {
        let k = t.buffer.arena as usize;
        let arena = *cur.get(k).ok_or("an input in a missing arena")?;
        cur[k] = b.create_value(
            mem_ops::Store::NAME,
            &[a, arena],
            vec![
                ("offset", Attribute::i64(t.buffer.offset as i64)),
                (BUFFER_ATTR, Attribute::i64(t.buffer.id)),
            ],
        )?;
    }
    let prog = b.create(
        stream_ops::Program::NAME,
        &cur,
        vec![
            ("num_streams", Attribute::i64(om.def.num_streams as i64)),
            ("num_events", Attribute::i64(om.def.num_events as i64)),
        ],
        Some(vec![arena_type(); cur.len()]),
        1,
    )?;
    let results = b.body.op(prog).results().to_vec();
    let mut outs = vec![];
    for t in &om.io.outputs {
        let src = *results
            .get(t.buffer.arena as usize)
            .ok_or("an output in a missing arena")?;
        outs.push(view_op(
            &mut b,
            src,
            &t.buffer,
            parse_type(ctx, &t.buffer.ty)?,
        )?);
    }
    b.create(Return::NAME, &outs, vec![], Some(vec![]), 0)?;
    Ok(prog)
}

/// `memory.view` of `buf` in arena value `arena`.
fn view_op(b: &mut Builder, arena: ValueId, buf: &Buffer, ty: Type) -> Result<ValueId, String> {
    let v = b.create(
        mem_ops::View::NAME,
        &[arena],
        vec![
            ("offset", Attribute::i64(buf.offset as i64)),
            (BUFFER_ATTR, Attribute::i64(buf.id)),
        ],
        Some(vec![ty]),
        0,
    )?;
    Ok(b.body.result(v, 0))
}

/// The block of the `stream.program`: its weights, views (one per distinct
/// buffer) and one op per task.
struct ProgramBuilder<'a> {
    ctx: &'a Context,
    om: &'a OmFile<'a>,
    b: Builder<'a>,
    /// The program's arena arguments.
    pargs: Vec<ValueId>,
    weights: Vec<ValueId>,
    views: HashMap<Buffer, ValueId>,
    /// The weights' bytes, as module resources `wN`.
    resources: Vec<(String, Blob)>,
}

impl<'a> ProgramBuilder<'a> {
    fn new(
        ctx: &'a Context,
        om: &'a OmFile<'a>,
        fb: &'a mut Body,
        prog: OpId,
    ) -> Result<ProgramBuilder<'a>, String> {
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
        Ok(ProgramBuilder {
            ctx,
            om,
            b: Builder::at_end(ctx, fb, pblk),
            pargs,
            weights: vec![],
            views: HashMap::new(),
            resources: vec![],
        })
    }

    /// A `memory.weight` per weight, its bytes a `dense_resource` blob.
    fn weights(&mut self) -> Result<(), String> {
        let om = self.om;
        for (i, w) in om.program.weights.iter().enumerate() {
            let name = format!("w{i}");
            let t = parse_type(self.ctx, &w.ty)?;
            // The reader checked every weight lies inside the partition.
            let bytes = om.weights[w.offset as usize..(w.offset + w.bytes) as usize].to_vec();
            self.resources.push((
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
            let v = self.b.create_value(
                mem_ops::Weight::NAME,
                &[],
                vec![
                    ("offset", Attribute::i64(w.offset as i64)),
                    ("value", value),
                    ("alignment", Attribute::i64(WEIGHT_ALIGN as i64)),
                ],
            )?;
            self.weights.push(v);
        }
        Ok(())
    }

    /// The program's view of `buf` (made once).
    fn view(&mut self, buf: &Buffer) -> Result<ValueId, String> {
        if let Some(&v) = self.views.get(buf) {
            return Ok(v);
        }
        let ty = parse_type(self.ctx, &buf.ty)?;
        let v = view_op(&mut self.b, self.pargs[buf.arena as usize], buf, ty)?;
        self.views.insert(buf.clone(), v);
        Ok(v)
    }

    /// A task-free op of the program (`stream.*` with no results).
    fn op(
        &mut self,
        name: &str,
        operands: &[ValueId],
        attrs: Vec<(&str, Attribute)>,
    ) -> Result<(), String> {
        self.b.create(name, operands, attrs, Some(vec![]), 0)?;
        Ok(())
    }

    fn task(&mut self, t: &Task) -> Result<(), String> {
        let i64a = |x: u32| Attribute::i64(x as i64);
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
                        Operand::Buffer(buf) => self.view(buf)?,
                        Operand::Weight(w) => self.weights[*w as usize],
                    });
                }
                for buf in outs {
                    operands.push(self.view(buf)?);
                }
                let kernel = &self.om.program.kernels[*kernel as usize].name;
                let sizes = [ins.len() as i64, outs.len() as i64];
                self.op(
                    stream_ops::Launch::NAME,
                    &operands,
                    vec![
                        ("kernel", Attribute::symbol(kernel)),
                        ("stream", i64a(*stream)),
                        ("engine", Attribute::string(engine)),
                        ("operand_segment_sizes", Attribute::i64_array(&sizes)),
                    ],
                )
            }
            Task::Memcpy { stream, src, dst } => {
                let operands = [self.view(src)?, self.view(dst)?];
                self.op(
                    stream_ops::Memcpy::NAME,
                    &operands,
                    vec![("stream", i64a(*stream))],
                )
            }
            Task::Record { event, stream } | Task::Wait { event, stream } => {
                let name = match t {
                    Task::Record { .. } => stream_ops::Record::NAME,
                    _ => stream_ops::Wait::NAME,
                };
                let attrs = vec![("event", i64a(*event)), ("stream", i64a(*stream))];
                self.op(name, &[], attrs)
            }
            Task::Label { label, stream } | Task::Goto { label, stream } => {
                let name = match t {
                    Task::Label { .. } => stream_ops::Label::NAME,
                    _ => stream_ops::Goto::NAME,
                };
                let attrs = vec![("label", i64a(*label)), ("stream", i64a(*stream))];
                self.op(name, &[], attrs)
            }
            Task::Switch {
                value,
                stream,
                targets,
            } => {
                let v = self.view(value)?;
                let ts: Vec<i64> = targets.iter().map(|&t| t as i64).collect();
                let attrs = vec![
                    ("stream", i64a(*stream)),
                    ("targets", Attribute::i64_array(&ts)),
                ];
                self.op(stream_ops::Switch::NAME, &[v], attrs)
            }
            Task::End => self.op(stream_ops::End::NAME, &[], vec![]),
        }
    }
}
