//! `emit-tasks`: turn a planned function into its task program.
//!
//! Every task of a function that `plan-memory` lowered becomes a kernel
//! function (`graph.func private @main_t3_conv2d`, the body of its
//! `graph.fused` or the op itself; identical kernels are shared) and one
//! `stream.launch` in a `stream.program` over the function's arenas, with
//! `stream.wait` / `stream.record` from the schedule `assign-streams` chose,
//! and `stream.end`. Copies into output arenas become `stream.memcpy`.
//! Views in the program keep their `ge.buffer` ids, so `verify-memory` can
//! check the program too.
//!
//! ```mlir
//! %in = memory.arena {size = 64 : i64, ge.role = "input", ge.index = 0 : i64} : !memory.arena
//! %in1 = memory.store %arg0 into %in[0] : tensor<4xf32> {ge.buffer = 0 : i64}
//! %out = memory.arena {...ge.role = "output"...}
//! %ws = memory.arena {...ge.role = "workspace"...}
//! %r:3 = stream.program(%in1, %out, %ws) streams 2 events 1 {
//! ^bb0(%a0: !memory.arena, %a1: !memory.arena, %a2: !memory.arena):
//!   %v0 = memory.view %a0[0] : tensor<4xf32> {ge.buffer = 0 : i64}
//!   ...
//!   stream.launch @main_t0_relu on 0 engine "AICore" ins(%v0 : tensor<4xf32>) outs(%v1 : tensor<4xf32>)
//!   stream.record 0 on 1
//!   stream.wait 0 on 0
//!   ...
//!   stream.end
//! }
//! %y = memory.view %r#1[0] : tensor<4xf32> {ge.buffer = 3 : i64}
//! graph.return %y : tensor<4xf32>
//! ```
//!
//! The result runs in the interpreter (tasks in program order, with its race
//! check across streams) and is exactly what the `.om` writer serialises.

use crate::error::{AtOp, LowerError, LowerResult};
use crate::funcs::{clone_op_into, func_block, func_name, inputs_of, is_private};
use crate::memory_plan::BUFFER_ATTR;
use crate::sync::{NUM_EVENTS_ATTR, NUM_STREAMS_ATTR, RECORD_ATTR, STREAM_ATTR, WAIT_ATTR};
use crate::taskgraph::COPY_ATTR;
use ge_dialects::data::constant::Constant;
use ge_dialects::data::layout::Transdata;
use ge_dialects::graph::control::{Fused, Yield};
use ge_dialects::graph::func::{Func, Return};
use ge_dialects::memory::arena_type;
use ge_dialects::memory::ops as mem_ops;
use ge_dialects::stream::ops as stream_ops;
use ge_ir::body::{Body, OpData, OpId, OpState, ValueDef, ValueId};
use ge_ir::builder::Builder;
use ge_ir::builtin::Module;
use ge_ir::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::{Attribute, Context, Ident, Location, Type};
use std::collections::HashMap;

pub static INFO: PassInfo = PassInfo {
    name: "emit-tasks",
    summary: "Lower planned functions to a stream.program of kernel launches",
    description: "Outlines every task of each planned function into a private kernel function \
                  (identical kernels shared), and replaces the tasks by a `stream.program` over \
                  the function's arenas: `stream.launch` per task (copies: `stream.memcpy`), \
                  `stream.wait`/`stream.record` from `assign-streams`, `stream.end`. Runs on the \
                  module (it adds functions).",
    anchor: Some(Module::NAME),
    options: &[],
};

pub fn make(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(EmitTasks))
}

struct EmitTasks;

impl Pass for EmitTasks {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, cx: &PassContext) -> PassResult {
        let Some(module) = op.inner.as_deref_mut() else {
            return Ok(());
        };
        let Some(&mblock) = module
            .root_regions()
            .first()
            .and_then(|&r| module.region(r).blocks.first())
        else {
            return Ok(());
        };
        let funcs: Vec<OpId> = module.block_ops(mblock).collect();
        let mut names: Vec<String> = funcs
            .iter()
            .filter_map(|&f| {
                module
                    .op(f)
                    .attr("sym_name")
                    .and_then(|a| a.as_str())
                    .map(str::to_string)
            })
            .collect();
        let mut errors = vec![];
        for f in funcs {
            let d = module.op(f);
            if !Func::is(d) || is_private(d) {
                continue;
            }
            let planned = func_block(d).is_some_and(|b| {
                let inner = d.inner.as_deref();
                inner.is_some_and(|i| {
                    i.block_ops(b).any(|o| mem_ops::Arena::is(i.op(o)))
                        && !i.block_ops(b).any(|o| stream_ops::Program::is(i.op(o)))
                })
            });
            if !planned {
                continue;
            }
            let loc = d.loc;
            match emit_function(cx.ctx, module, f, &mut names) {
                Ok(kernels) => {
                    for k in kernels {
                        module.append_op(mblock, k);
                    }
                }
                Err(e) => errors.push(e.diagnostic("emit-tasks", loc)),
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

fn unique_name(base: &str, names: &mut Vec<String>) -> String {
    let mut n = base.to_string();
    let mut k = 1;
    while names.contains(&n) {
        n = format!("{base}_{k}");
        k += 1;
    }
    names.push(n.clone());
    n
}

/// The short name of a task for its kernel: `conv2d`, `fused_conv2d`, …
fn short_name(body: &Body, t: OpId) -> String {
    let d = body.op(t);
    let last = |n: &str| n.rsplit('.').next().unwrap_or(n).to_string();
    if Fused::is(d) {
        if let Some(inner) = d.inner.as_deref() {
            let anchor = inner
                .all_ops(ge_ir::body::WalkOrder::Pre)
                .into_iter()
                .map(|o| inner.op(o).name.as_str())
                .find(|n| !matches!(*n, Yield::NAME | Transdata::NAME | Constant::NAME));
            if let Some(a) = anchor {
                return format!("fused_{}", last(a));
            }
        }
        return "fused".into();
    }
    last(d.name.as_str())
}

/// A kernel function for task `t` of `body` (detached, in `module`).
fn outline(
    ctx: &Context,
    module: &mut Body,
    body: &Body,
    t: OpId,
    name: &str,
) -> LowerResult<OpId> {
    let d = body.op(t);
    let inputs = inputs_of(body, t);
    let in_types: Vec<Type> = inputs.iter().map(|&v| body.value_type(v)).collect();
    let out_types = body.result_types(t);
    let mut st = OpState::new(Func::NAME, d.loc);
    st.def = Some(Func::DEF);
    let mut attrs = vec![
        (Ident::new("sym_name"), Attribute::string(name)),
        (
            Ident::new("function_type"),
            Attribute::ty(Type::function(&in_types, &out_types)),
        ),
        (Ident::new("sym_visibility"), Attribute::string("private")),
    ];
    // The fusion pattern travels with the kernel (the .om records it).
    if let Some(k) = d.attr("kind").filter(|_| Fused::is(d)) {
        attrs.push((Ident::new("ge.kind"), k));
    }
    st.attrs = ge_ir::AttrDict::new(attrs);
    st.num_regions = 1;
    let f = module.create_op(st);
    let mut fb = module.take_inner(f).ok_or("graph.func has no body")?;
    let res = (|| -> LowerResult<()> {
        let r = *module
            .op(f)
            .regions()
            .first()
            .ok_or("graph.func has no region")?;
        let blk = fb.add_block(r);
        let mut map: HashMap<ValueId, ValueId> = HashMap::new();
        let args: Vec<ValueId> = inputs
            .iter()
            .map(|&v| fb.add_block_arg(blk, body.value_type(v), body.value(v).loc))
            .collect();
        for (&v, &a) in inputs.iter().zip(&args) {
            map.insert(v, a);
        }
        let results: Vec<ValueId> = match d.inner.as_deref() {
            Some(kb) if Fused::is(d) => {
                let kr = *d.regions().first().ok_or("kernel has no region")?;
                let kblk = kb.entry_block(kr).ok_or("kernel has no block")?;
                let mut kmap: HashMap<ValueId, ValueId> = HashMap::new();
                for (&ka, &a) in kb.block(kblk).args.iter().zip(&args) {
                    kmap.insert(ka, a);
                }
                let mut yielded = vec![];
                for o in kb.block_ops(kblk) {
                    if Yield::is(kb.op(o)) {
                        yielded = kb
                            .op(o)
                            .operands()
                            .iter()
                            .map(|v| kmap.get(v).copied().ok_or("yield of an unknown value"))
                            .collect::<Result<_, _>>()?;
                        break;
                    }
                    clone_op_into(kb, o, &mut fb, blk, &mut kmap)?;
                }
                yielded
            }
            _ => {
                let c = clone_op_into(body, t, &mut fb, blk, &mut map)?;
                for a in [STREAM_ATTR, WAIT_ATTR, RECORD_ATTR, "engine", COPY_ATTR] {
                    fb.remove_attr(c, a);
                }
                fb.op(c).results().to_vec()
            }
        };
        let mut b = Builder::at_end(ctx, &mut fb, blk);
        b.loc = d.loc;
        b.create(Return::NAME, &results, vec![], Some(vec![]), 0)?;
        Ok(())
    })();
    module.put_inner(f, fb);
    res.at_op(d.loc)?;
    Ok(f)
}

/// Kernel text without its name (for sharing identical kernels). The op is
/// printed on its own: the module is mid-rewrite (a function's body is out).
fn kernel_key(module: &mut Body, f: OpId) -> String {
    let text =
        ge_ir::pass::manager::print_data(module.op_mut(f), ge_ir::printer::PrintOptions::default());
    match text.split_once('(') {
        Some((_, rest)) => rest.to_string(),
        None => text,
    }
}

/// Lower one planned function; returns the new kernel functions (to append to the module).
fn emit_function(
    ctx: &Context,
    module: &mut Body,
    f: OpId,
    names: &mut Vec<String>,
) -> LowerResult<Vec<OpId>> {
    let fname = func_name(module.op(f));
    let block = func_block(module.op(f)).ok_or("function has no body")?;
    let num_streams = module.op(f).attr(NUM_STREAMS_ATTR).and_then(|a| a.as_int());
    let num_events = module.op(f).attr(NUM_EVENTS_ATTR).and_then(|a| a.as_int());
    let mut body = module.take_inner(f).ok_or("function has no body")?;
    let mut k = Kernels {
        ctx,
        module,
        fname,
        names,
        of_key: HashMap::new(),
        new: vec![],
    };
    let res = (|| -> LowerResult<()> {
        let ops: Vec<OpId> = body.block_ops(block).collect();
        let is_task = |b: &Body, o: OpId| {
            let n = b.op(o).name.as_str();
            !(n.starts_with("memory.")
                || n == Constant::NAME
                || b.op(o).has_trait(ge_ir::opdef::Trait::ReturnLike))
        };
        let tasks: Vec<OpId> = ops.iter().copied().filter(|&o| is_task(&body, o)).collect();
        let ret = *ops.last().ok_or("empty function")?;
        let start = ProgramStart::of(&body, &ops)?;
        let first_task = tasks.first().copied().unwrap_or(ret);
        let counts = (
            num_streams.unwrap_or_else(|| {
                tasks
                    .iter()
                    .filter_map(|&t| body.op(t).attr(STREAM_ATTR).and_then(|a| a.as_int()))
                    .max()
                    .unwrap_or(0)
                    + 1
            }),
            num_events.unwrap_or_else(|| {
                tasks
                    .iter()
                    .flat_map(|&t| crate::funcs::i64s(body.op(t).attr(RECORD_ATTR)))
                    .max()
                    .map_or(0, |m| m + 1)
            }),
        );
        let (prog, mut places) = create_program(ctx, &mut body, first_task, &start, counts)?;
        for (i, &t) in tasks.iter().enumerate() {
            // A task with no results does nothing observable: no task.
            if !body.op(t).results().is_empty() {
                emit_task(&mut k, &mut body, &mut places, i, t)?;
            }
        }
        {
            let floc = body.op(first_task).loc;
            let mut b = Builder::at_end(ctx, &mut body, places.pblk);
            b.loc = floc;
            b.create(stream_ops::End::NAME, &[], vec![], Some(vec![]), 0)?;
        }
        return_program_results(ctx, &mut body, prog, ret, &start.arena_index)?;
        // Erase the graph-level tasks, views, stores and weights.
        for &o in ops.iter().rev() {
            let n = body.op(o).name.as_str();
            let keep = n == mem_ops::Arena::NAME
                || start.pre_stores.contains(&o)
                || body.op(o).has_trait(ge_ir::opdef::Trait::ReturnLike);
            if !keep {
                body.erase_op(o);
            }
        }
        Ok(())
    })();
    let kernels = std::mem::take(&mut k.new);
    drop(k);
    module.put_inner(f, body);
    res?;
    module.remove_attr(f, NUM_STREAMS_ATTR);
    module.remove_attr(f, NUM_EVENTS_ATTR);
    Ok(kernels)
}

/// The arenas of a planned function and their values when the program
/// starts (after the stores of the function's arguments).
struct ProgramStart {
    arena_index: HashMap<OpId, usize>,
    /// Per arena: its value at program start.
    values: Vec<ValueId>,
    /// The stores of the arguments (they stay before the program).
    pre_stores: Vec<OpId>,
}

impl ProgramStart {
    fn of(body: &Body, ops: &[OpId]) -> LowerResult<ProgramStart> {
        let arenas: Vec<OpId> = ops
            .iter()
            .copied()
            .filter(|&o| mem_ops::Arena::is(body.op(o)))
            .collect();
        let arena_index: HashMap<OpId, usize> =
            arenas.iter().enumerate().map(|(i, &a)| (a, i)).collect();
        let mut values: Vec<ValueId> = arenas.iter().map(|&a| body.result(a, 0)).collect();
        let mut pre_stores = vec![];
        for &o in ops {
            let d = body.op(o);
            if mem_ops::Store::is(d)
                && matches!(body.value(d.operands()[0]).def, ValueDef::BlockArg { .. })
            {
                let root = ge_dialects::memory::arena_root(body, d.operands()[1])
                    .ok_or("store into an unknown arena")
                    .at_op(d.loc)?;
                let k = *arena_index
                    .get(&root)
                    .ok_or("a store into an arena outside the function")
                    .at_op(d.loc)?;
                values[k] = d.results()[0];
                pre_stores.push(o);
            }
        }
        Ok(ProgramStart {
            arena_index,
            values,
            pre_stores,
        })
    }
}

/// The `stream.program` over the arenas (before the first task), with an
/// empty block whose arguments are the arenas; `counts` = (streams, events).
fn create_program(
    ctx: &Context,
    body: &mut Body,
    first_task: OpId,
    start: &ProgramStart,
    (streams, events): (i64, i64),
) -> LowerResult<(OpId, Places)> {
    let floc = body.op(first_task).loc;
    let n = start.values.len();
    let prog = {
        let mut b = Builder::before(ctx, body, first_task);
        b.loc = floc;
        b.create(
            stream_ops::Program::NAME,
            &start.values,
            vec![
                ("num_streams", Attribute::i64(streams.max(1))),
                ("num_events", Attribute::i64(events.max(0))),
            ],
            Some(vec![arena_type(); n]),
            1,
        )
        .at_op(floc)?
    };
    let region = *body
        .op(prog)
        .regions()
        .first()
        .ok_or("stream.program has no region")?;
    let pblk = body.add_block(region);
    let pargs: Vec<ValueId> = (0..n)
        .map(|_| body.add_block_arg(pblk, arena_type(), floc))
        .collect();
    let places = Places {
        views: HashMap::new(),
        weights: HashMap::new(),
        pblk,
        pargs,
        arena_index: start.arena_index.clone(),
    };
    Ok((prog, places))
}

/// The kernel functions of a function being lowered: outlined per task,
/// identical ones shared.
struct Kernels<'a> {
    ctx: &'a Context,
    module: &'a mut Body,
    /// The function's name (kernels are named after it).
    fname: String,
    names: &'a mut Vec<String>,
    /// Kernel text (without its name) → kernel name.
    of_key: HashMap<String, String>,
    /// The kernels made so far (to append to the module).
    new: Vec<OpId>,
}

impl Kernels<'_> {
    /// The kernel of task `t` (number `i`): a new function, or an identical
    /// one made before.
    fn kernel_for(&mut self, body: &Body, i: usize, t: OpId) -> LowerResult<String> {
        let base = format!("{}_t{i}_{}", self.fname, short_name(body, t));
        let kname = unique_name(&base, self.names);
        let kf = outline(self.ctx, self.module, body, t, &kname)?;
        let key = kernel_key(self.module, kf);
        Ok(match self.of_key.get(&key) {
            Some(existing) => {
                self.module.erase_op(kf);
                self.names.retain(|n| n != &kname);
                existing.clone()
            }
            None => {
                self.of_key.insert(key, kname.clone());
                self.new.push(kf);
                kname
            }
        })
    }
}

/// Task `t` (number `i`) as program ops: its waits, a `stream.launch` of its
/// kernel (a `stream.memcpy` for a copy), its records.
fn emit_task(
    k: &mut Kernels,
    body: &mut Body,
    places: &mut Places,
    i: usize,
    t: OpId,
) -> LowerResult<()> {
    let ctx = k.ctx;
    let tl = body.op(t).loc;
    let stream = body
        .op(t)
        .attr(STREAM_ATTR)
        .and_then(|a| a.as_int())
        .unwrap_or(0);
    let mut in_places = vec![];
    for v in inputs_of(body, t) {
        in_places.push(places.input(ctx, body, v, tl).at_op(tl)?);
    }
    // Outputs: where the stores of the task's results put them.
    let mut out_places = vec![];
    for r in body.op(t).results().to_vec() {
        let store = body
            .uses(r)
            .iter()
            .map(|u| u.op)
            .find(|&u| mem_ops::Store::is(body.op(u)))
            .ok_or_else(|| {
                LowerError::at(
                    tl,
                    format!("a result of '{}' is not stored", body.op(t).name),
                )
            })?;
        let sd = body.op(store);
        let (arena, off, id) = (
            sd.operands()[1],
            int_attr(sd, "offset"),
            int_attr(sd, BUFFER_ATTR),
        );
        let rt = body.value_type(r);
        out_places.push(places.view(ctx, body, arena, off, rt, id, tl).at_op(tl)?);
    }
    let waits = crate::funcs::i64s(body.op(t).attr(WAIT_ATTR));
    let records = crate::funcs::i64s(body.op(t).attr(RECORD_ATTR));
    let d = body.op(t);
    let is_copy = d.attr(COPY_ATTR).is_some()
        && in_places.len() == 1
        && out_places.len() == 1
        && body
            .defining_op(in_places[0])
            .is_some_and(|o| mem_ops::View::is(body.op(o)));
    let engine = d
        .attr("engine")
        .and_then(|a| a.as_str())
        .unwrap_or("AICore")
        .to_string();
    let kname = match is_copy {
        true => None,
        false => Some(k.kernel_for(body, i, t).at_op(tl)?),
    };
    let mut b = Builder::at_end(ctx, body, places.pblk);
    b.loc = tl;
    let ev = |e: i64| {
        vec![
            ("event", Attribute::i64(e)),
            ("stream", Attribute::i64(stream)),
        ]
    };
    for e in waits {
        b.create(stream_ops::Wait::NAME, &[], ev(e), Some(vec![]), 0)
            .at_op(tl)?;
    }
    match kname {
        None => {
            b.create(
                stream_ops::Memcpy::NAME,
                &[in_places[0], out_places[0]],
                vec![("stream", Attribute::i64(stream))],
                Some(vec![]),
                0,
            )
            .at_op(tl)?;
        }
        Some(kname) => {
            let mut operands = in_places.clone();
            operands.extend(out_places.iter().copied());
            let sizes = [in_places.len() as i64, out_places.len() as i64];
            b.create(
                stream_ops::Launch::NAME,
                &operands,
                vec![
                    ("kernel", Attribute::symbol(&kname)),
                    ("stream", Attribute::i64(stream)),
                    ("engine", Attribute::string(&engine)),
                    ("operand_segment_sizes", Attribute::i64_array(&sizes)),
                ],
                Some(vec![]),
                0,
            )
            .at_op(tl)?;
        }
    }
    for e in records {
        b.create(stream_ops::Record::NAME, &[], ev(e), Some(vec![]), 0)
            .at_op(tl)?;
    }
    Ok(())
}

/// The function returns views of the program's results (its outputs'
/// arenas after the program) instead of the graph-level views.
fn return_program_results(
    ctx: &Context,
    body: &mut Body,
    prog: OpId,
    ret: OpId,
    arena_index: &HashMap<OpId, usize>,
) -> LowerResult<()> {
    let results = body.op(prog).results().to_vec();
    let ret_operands = body.op(ret).operands().to_vec();
    let rl = body.op(ret).loc;
    for (i, &v) in ret_operands.iter().enumerate() {
        let def = body
            .defining_op(v)
            .ok_or("a model output is not a view")
            .at_op(rl)?;
        let d = body.op(def);
        if !mem_ops::View::is(d) {
            return Err(LowerError::at(
                rl,
                format!("model output #{i} is not a memory.view"),
            ));
        }
        let root = ge_dialects::memory::arena_root(body, d.operands()[0])
            .ok_or("view of an unknown arena")
            .at_op(d.loc)?;
        let k = *arena_index
            .get(&root)
            .ok_or("an output viewed in an arena outside the function")
            .at_op(d.loc)?;
        let attrs: Vec<(&str, Attribute)> = vec![
            ("offset", d.attr("offset").unwrap_or(Attribute::i64(0))),
            (
                BUFFER_ATTR,
                d.attr(BUFFER_ATTR).unwrap_or(Attribute::i64(-1)),
            ),
        ];
        let ty = body.value_type(v);
        let mut b = Builder::before(ctx, body, ret);
        b.loc = rl;
        let nv = b
            .create(mem_ops::View::NAME, &[results[k]], attrs, Some(vec![ty]), 0)
            .at_op(rl)?;
        let nv = body.result(nv, 0);
        body.set_operand(ret, i, nv);
    }
    Ok(())
}

fn int_attr(d: &OpData, name: &str) -> i64 {
    d.attr(name).and_then(|a| a.as_int()).unwrap_or(0)
}

/// The views and weights of a program being built (one per distinct place).
struct Places {
    views: HashMap<(usize, i64, Type, i64), ValueId>,
    weights: HashMap<ValueId, ValueId>,
    pblk: ge_ir::BlockId,
    pargs: Vec<ValueId>,
    arena_index: HashMap<OpId, usize>,
}

impl Places {
    /// The program's view of arena value `arena` at `off` (created once).
    #[allow(clippy::too_many_arguments)]
    fn view(
        &mut self,
        ctx: &Context,
        body: &mut Body,
        arena: ValueId,
        off: i64,
        ty: Type,
        id: i64,
        loc: Location,
    ) -> Result<ValueId, String> {
        let root =
            ge_dialects::memory::arena_root(body, arena).ok_or("an access to an unknown arena")?;
        let k = *self
            .arena_index
            .get(&root)
            .ok_or("an access to an arena outside the function")?;
        if let Some(&v) = self.views.get(&(k, off, ty, id)) {
            return Ok(v);
        }
        let mut b = Builder::at_end(ctx, body, self.pblk);
        b.loc = loc;
        let v = b.create(
            mem_ops::View::NAME,
            &[self.pargs[k]],
            vec![
                ("offset", Attribute::i64(off)),
                (BUFFER_ATTR, Attribute::i64(id)),
            ],
            Some(vec![ty]),
            0,
        )?;
        let v = body.result(v, 0);
        self.views.insert((k, off, ty, id), v);
        Ok(v)
    }

    /// The program's value for a task input: a view, or a weight copied into the program.
    fn input(
        &mut self,
        ctx: &Context,
        body: &mut Body,
        v: ValueId,
        loc: Location,
    ) -> Result<ValueId, String> {
        let def = body
            .defining_op(v)
            .ok_or("a task reads a value that is not a view or a weight")?;
        let d = body.op(def);
        match d.name.as_str() {
            mem_ops::Weight::NAME | Constant::NAME => {
                if let Some(&w) = self.weights.get(&v) {
                    return Ok(w);
                }
                let st = OpState {
                    result_types: vec![body.value_type(v)],
                    ..OpState::like(d)
                };
                let w = body.create_op(st);
                match body.block_first_op(self.pblk) {
                    Some(first) => body.insert_op_before(first, w),
                    None => body.append_op(self.pblk, w),
                }
                let wv = body.result(w, 0);
                self.weights.insert(v, wv);
                Ok(wv)
            }
            mem_ops::View::NAME => {
                let (arena, off, id) = (
                    d.operands()[0],
                    int_attr(d, "offset"),
                    int_attr(d, BUFFER_ATTR),
                );
                let ty = body.value_type(v);
                self.view(ctx, body, arena, off, ty, id, loc)
            }
            other => Err(format!(
                "a task reads a value defined by '{other}', not a view or a weight"
            )),
        }
    }
}
