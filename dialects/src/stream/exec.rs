//! Reference semantics of `stream.program`: run the tasks in program order
//! on the arena bytes, with a vector-clock race check between streams.

use super::ops::{at_line, Launch, Program, Switch};
use crate::data::constant::elements_tensor;
use crate::memory::{
    arena_bytes, arena_value, concrete_shape, nth_operand, nth_result, read_place, write_place,
};
use ge_ir::body::{Body, OpId, ValueDef, ValueId};
use ge_ir::interp::SemCtx;
use ge_ir::tensor::Tensor;
use ge_ir::Type;
use std::collections::HashMap;

/// Tasks a program may execute before it is considered stuck in a loop.
pub const MAX_STEPS: usize = 10_000_000;

/// A value inside the program: a buffer of an arena, or a constant.
enum Val {
    Place {
        arena: usize,
        offset: usize,
        ty: Type,
    },
    Const(Tensor),
}

/// One read or write of a byte range by a task.
struct Access {
    arena: usize,
    lo: usize,
    hi: usize,
    stream: usize,
    epoch: u64,
    write: bool,
    task: OpId,
}

/// Happens-before between streams: one vector clock per stream, a snapshot
/// per recorded event, and the accesses seen so far.
struct Clocks {
    vc: Vec<Vec<u64>>,
    events: HashMap<i64, Vec<u64>>,
    history: Vec<Access>,
}

impl Clocks {
    fn new(streams: usize) -> Clocks {
        Clocks {
            vc: vec![vec![0; streams]; streams],
            events: HashMap::new(),
            history: vec![],
        }
    }

    /// A new task on stream `s`: its epoch.
    fn tick(&mut self, s: usize) -> u64 {
        self.vc[s][s] += 1;
        self.vc[s][s]
    }

    fn record(&mut self, e: i64, s: usize) {
        self.events.insert(e, self.vc[s].clone());
    }

    fn wait(&mut self, e: i64, s: usize) {
        if let Some(ev) = self.events.get(&e) {
            for (x, &y) in self.vc[s].iter_mut().zip(ev) {
                *x = (*x).max(y);
            }
        }
    }

    fn access(&mut self, body: &Body, a: Access) -> Result<(), String> {
        if a.lo == a.hi {
            return Ok(());
        }
        let vc = &self.vc[a.stream];
        for b in &self.history {
            let conflict = b.arena == a.arena
                && b.lo < a.hi
                && a.lo < b.hi
                && (a.write || b.write)
                && b.stream != a.stream
                && b.epoch > vc[b.stream];
            if conflict {
                let (lo, hi) = (a.lo.max(b.lo), a.hi.min(b.hi));
                return Err(format!(
                    "data race: {} on stream {} {} bytes [{lo}, {hi}) of arena #{} that {} on stream {} {}, and no stream.record/stream.wait orders them",
                    describe(body, a.task),
                    a.stream,
                    if a.write { "writes" } else { "reads" },
                    a.arena,
                    describe(body, b.task),
                    b.stream,
                    if b.write { "wrote" } else { "read" },
                ));
            }
        }
        self.history.push(a);
        Ok(())
    }
}

fn describe(body: &Body, op: OpId) -> String {
    let d = body.op(op);
    let kernel = d
        .attr("kernel")
        .map(|k| format!(" {k}"))
        .unwrap_or_default();
    format!("'{}{kernel}' (at {})", d.name, at_line(d.loc))
}

fn int(body: &Body, op: OpId, name: &str) -> Result<i64, String> {
    body.op(op)
        .attr(name)
        .and_then(|a| a.as_int())
        .ok_or_else(|| format!("'{}' has no integer '{name}'", body.op(op).name))
}

struct Machine<'a> {
    body: &'a Body,
    arenas: Vec<Vec<u8>>,
    vals: HashMap<ValueId, Val>,
    clocks: Clocks,
    symbols: &'a HashMap<ge_ir::Ident, i64>,
    /// The program's `num_streams`.
    streams: usize,
}

impl Machine<'_> {
    fn val(&self, v: ValueId) -> Result<&Val, String> {
        self.vals
            .get(&v)
            .ok_or_else(|| "a task uses a value that was not defined before it".to_string())
    }

    /// Make constants defined outside the program (hoisted or merged by
    /// passes) available as values.
    fn import_constant(&mut self, v: ValueId, module: &ge_ir::Module) -> Result<(), String> {
        if self.vals.contains_key(&v) || !super::ops::is_constant(self.body, v) {
            return Ok(());
        }
        let Some(op) = self.body.defining_op(v) else {
            return Ok(());
        };
        let value = self
            .body
            .op(op)
            .attr("value")
            .ok_or("constant without 'value'")?;
        self.vals
            .insert(v, Val::Const(elements_tensor(value, Some(module))?));
        Ok(())
    }

    fn byte_range(&self, offset: usize, ty: Type) -> Result<(usize, usize), String> {
        let shape = concrete_shape(ty, self.symbols)?;
        let n = shape.iter().product::<usize>() * ty.dtype().map_or(1, |d| d.byte_size());
        Ok((offset, offset + n))
    }

    /// Read an input (recording the access).
    fn read(
        &mut self,
        v: ValueId,
        task: OpId,
        stream: usize,
        epoch: u64,
    ) -> Result<Tensor, String> {
        match self.val(v)? {
            Val::Const(t) => Ok(t.clone()),
            &Val::Place { arena, offset, ty } => {
                let (lo, hi) = self.byte_range(offset, ty)?;
                self.clocks.access(
                    self.body,
                    Access {
                        arena,
                        lo,
                        hi,
                        stream,
                        epoch,
                        write: false,
                        task,
                    },
                )?;
                read_place(&self.arenas[arena], offset, ty, self.symbols)
            }
        }
    }

    /// Write `x` into the buffer `v` (recording the access).
    fn write(
        &mut self,
        v: ValueId,
        x: &Tensor,
        task: OpId,
        stream: usize,
        epoch: u64,
    ) -> Result<(), String> {
        let &Val::Place { arena, offset, ty } = self.val(v)? else {
            return Err("a task writes into a constant".into());
        };
        let shape = concrete_shape(ty, self.symbols)?;
        if x.shape != shape || Some(x.dtype) != ty.dtype() {
            return Err(format!(
                "{} produced a {:?} {} tensor for a '{ty}' buffer",
                describe(self.body, task),
                x.shape,
                x.dtype
            ));
        }
        let (lo, hi) = self.byte_range(offset, ty)?;
        self.clocks.access(
            self.body,
            Access {
                arena,
                lo,
                hi,
                stream,
                epoch,
                write: true,
                task,
            },
        )?;
        write_place(&mut self.arenas[arena], offset, x)
    }
}

/// `stream.program`'s semantics: the operands are the arenas' contents.
pub fn sem_program(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let d = cx.body.op(cx.op);
    let body = d.region_body(cx.body);
    let region = *d.regions().first().ok_or("has no region")?;
    let entry = body.entry_block(region).ok_or("has an empty region")?;
    let streams = Program::attrs(d).num_streams().max(1) as usize;
    let args = body.block(entry).args.clone();
    if args.len() != x.len() {
        return Err(format!(
            "has {} arena arguments but {} operands",
            args.len(),
            x.len()
        ));
    }
    let mut m = Machine {
        body,
        arenas: x.iter().map(|t| arena_bytes(t)).collect::<Result<_, _>>()?,
        vals: HashMap::new(),
        clocks: Clocks::new(streams),
        symbols: cx.symbols(),
        streams,
    };
    let ops: Vec<OpId> = body.block_ops(entry).collect();
    let mut labels: HashMap<i64, usize> = HashMap::new();
    for (pos, &o) in ops.iter().enumerate() {
        if body.op(o).name.as_str() == "stream.label" {
            labels.insert(int(body, o, "label")?, pos);
        }
    }
    let jump = |l: i64| -> Result<usize, String> {
        labels
            .get(&l)
            .copied()
            .ok_or_else(|| format!("jump to missing label {l}"))
    };
    let mut pc = 0usize;
    let mut steps = 0usize;
    while pc < ops.len() {
        steps += 1;
        if steps > MAX_STEPS {
            return Err(format!(
                "stopped after {MAX_STEPS} tasks: does a stream.goto loop never exit?"
            ));
        }
        let o = ops[pc];
        pc += 1;
        match body.op(o).name.as_str() {
            "memory.view" => m.define_view(o, entry)?,
            "memory.weight" | "data.constant" => m.define_constant(o, cx.module())?,
            "stream.launch" => m.launch(cx, o)?,
            "stream.memcpy" => m.memcpy(o)?,
            "stream.record" => {
                let s = m.stream_of(o)?;
                m.clocks.record(int(body, o, "event")?, s);
            }
            "stream.wait" => {
                let s = m.stream_of(o)?;
                m.clocks.wait(int(body, o, "event")?, s);
            }
            "stream.label" => {}
            "stream.goto" => pc = jump(int(body, o, "label")?)?,
            "stream.switch" => pc = jump(m.switch_target(o)?)?,
            "stream.end" => break,
            other => return Err(format!("'{other}' cannot run inside a stream.program")),
        }
    }
    Ok(m.arenas.into_iter().map(arena_value).collect())
}

/// The tasks of `sem_program`, one method per task op.
impl Machine<'_> {
    /// The stream task `o` runs on, checked against the program's count.
    fn stream_of(&self, o: OpId) -> Result<usize, String> {
        let s = int(self.body, o, "stream")?;
        let streams = self.streams;
        usize::try_from(s)
            .ok()
            .filter(|&s| s < streams)
            .ok_or_else(|| format!("stream {s} is out of range (num_streams = {streams})"))
    }

    /// memory.view: its result is a place in one of the arena arguments (of
    /// the entry block `entry`).
    fn define_view(&mut self, o: OpId, entry: ge_ir::body::BlockId) -> Result<(), String> {
        let body = self.body;
        let (Some(a), Some(r)) = (nth_operand(body, o, 0), nth_result(body, o, 0)) else {
            return Err("a malformed memory.view".into());
        };
        let arena = match body.value(a).def {
            ValueDef::BlockArg { block, index } if block == entry => index as usize,
            _ => return Err("a view in a stream.program must view an arena argument".into()),
        };
        let offset = usize::try_from(int(body, o, "offset")?)
            .map_err(|_| "negative view offset".to_string())?;
        let ty = body.value_type(r);
        self.vals.insert(r, Val::Place { arena, offset, ty });
        Ok(())
    }

    /// memory.weight, data.constant: its result is its value.
    fn define_constant(&mut self, o: OpId, module: &ge_ir::Module) -> Result<(), String> {
        let v = self
            .body
            .op(o)
            .attr("value")
            .ok_or("constant without 'value'")?;
        let t = elements_tensor(v, Some(module))?;
        let r = nth_result(self.body, o, 0).ok_or("a constant without a result")?;
        self.vals.insert(r, Val::Const(t));
        Ok(())
    }

    /// stream.launch: call the kernel on the inputs, write its results into the outputs.
    fn launch(&mut self, cx: &SemCtx, o: OpId) -> Result<(), String> {
        let od = self.body.op(o);
        let s = self.stream_of(o)?;
        let epoch = self.clocks.tick(s);
        let n_in = od
            .attr("operand_segment_sizes")
            .and_then(|a| a.as_i64_array())
            .and_then(|v| v.first().copied())
            .unwrap_or(0)
            .max(0) as usize;
        let kernel = Launch::attrs(od)
            .kernel()
            .ok_or("launch without a kernel symbol")?;
        let (ins, outs) = od.operands().split_at(n_in.min(od.operands().len()));
        let mut args = Vec::with_capacity(ins.len());
        for &v in ins {
            self.import_constant(v, cx.module())?;
            args.push(self.read(v, o, s, epoch)?);
        }
        let res = cx
            .call(kernel.as_str(), args)
            .map_err(|e| format!("in kernel '@{kernel}' launched at {}: {e}", at_line(od.loc)))?;
        if res.len() != outs.len() {
            return Err(format!(
                "kernel '@{kernel}' returned {} results for {} outs (at {})",
                res.len(),
                outs.len(),
                at_line(od.loc)
            ));
        }
        for (&v, t) in outs.iter().zip(&res) {
            self.write(v, t, o, s, epoch)?;
        }
        Ok(())
    }

    /// stream.memcpy: the source's bytes, as the destination's type.
    fn memcpy(&mut self, o: OpId) -> Result<(), String> {
        let body = self.body;
        let s = self.stream_of(o)?;
        let epoch = self.clocks.tick(s);
        let (Some(sv), Some(dv)) = (nth_operand(body, o, 0), nth_operand(body, o, 1)) else {
            return Err("a malformed stream.memcpy".into());
        };
        let src = self.read(sv, o, s, epoch)?;
        let dst_ty = body.value_type(dv);
        let shape = concrete_shape(dst_ty, self.symbols)?;
        let bytes = crate::data::tensor_to_bytes(&src);
        let dt = dst_ty.dtype().ok_or("memcpy into a non-tensor")?;
        let t = crate::data::tensor_from_bytes(&bytes, shape, dt)?;
        self.write(dv, &t, o, s, epoch)
    }

    /// stream.switch: the label it jumps to (the target its one-element value picks).
    fn switch_target(&mut self, o: OpId) -> Result<i64, String> {
        let od = self.body.op(o);
        let s = self.stream_of(o)?;
        let epoch = self.clocks.tick(s);
        let sv = nth_operand(self.body, o, 0).ok_or("a malformed stream.switch")?;
        let v = self.read(sv, o, s, epoch)?;
        if v.len() != 1 {
            return Err(format!(
                "stream.switch at {} reads {} elements, expected one",
                at_line(od.loc),
                v.len()
            ));
        }
        let k = v.get_i(0);
        let targets = Switch::attrs(od).targets().unwrap_or_default();
        usize::try_from(k)
            .ok()
            .and_then(|k| targets.get(k).copied())
            .ok_or_else(|| {
                format!(
                    "stream.switch at {} read {k}, outside its {} targets",
                    at_line(od.loc),
                    targets.len()
                )
            })
    }
}
