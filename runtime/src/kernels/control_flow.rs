//! The kernel of control flow with regions: `graph.if`, `graph.case` and
//! `graph.while` (what ONNX If, Loop and Scan import onto).
//!
//! Each region is compiled like a kernel function ([`compile_block`]): its
//! ops become native steps over the region's values, its entry block's
//! arguments and then the values it captures from the enclosing function
//! are the program's arguments, its terminator's operands its results.
//! Region programs are built per concrete shape of their arguments and
//! cached: on a miss the region's argument types are set to the shapes at
//! hand, every op's result types are inferred again from them with the
//! op's own inference, the region's ops are verified, and the region is
//! compiled. So a loop whose carried values change shape between
//! iterations (a growing concat) runs — one program per shape — and a value
//! whose shape inference cannot know (it depends on values computed in the
//! region) is a clear error, never a guess.
//!
//! At run time `graph.if`/`graph.case` pick a region from their condition
//! or index and run it; `graph.while` runs its condition region on the
//! carried values, then its body on the forwarded values, until the
//! condition is false. Each region run gets scratch memory for the values
//! its steps write (checked against the memory budget) and returns its
//! results as buffers of their own, which the next iteration reads; at the
//! end the results are copied into the op's planned result buffers after
//! their shapes are checked against the plan's. A loop keeps the run's
//! limits ([`RunLimits`]): every step run counts against `--max-steps`, and
//! the run's deadline is checked before each region run.
//!
//! The loader compiles every region once at its declared types: a region
//! with an op that has no native kernel makes the kernel fall back to the
//! reference interpreter as a whole (named by `ge-run --info`), as before;
//! so does control flow nested more than [`MAX_NESTING`] deep.

use super::specialize::{static_type, tensor_of};
use super::{compile_block, concrete, Kernel, KernelProgram, Par, RunLimits, Slot};
use crate::buffer::AlignedBuf;
use ge_dialects::data::shape::ShapeOf;
use ge_dialects::graph::control::{Case, If, While};
use ge_dialects::graph::specialize::{
    concrete_module, Spec, Specialize, MAX_PREFIX_OPS, MAX_VALUE_ELEMENTS,
};
use ge_ir::body::{BlockId, Body, OpId, ValueDef, ValueId};
use ge_ir::builder::{constant_value, infer_result_types};
use ge_ir::opdef::Trait;
use ge_ir::tensor::Tensor;
use ge_ir::verifier::types_compatible;
use ge_ir::{DType, Type};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Region programs kept per op (a loop whose shapes change every iteration
/// evicts everything once past it).
const CACHE_CAP: usize = 64;

/// Control flow nested deeper than this runs on the interpreter (which
/// grows its stack as it recurses): compiling and running regions here
/// recurse once per level.
const MAX_NESTING: usize = 32;

/// How many ops enclose op `o` in `b`.
fn nesting(b: &Body, o: OpId) -> usize {
    let mut n = 0;
    let mut cur = o;
    while let Some(p) = b.op(cur).parent_block().and_then(|k| b.block_parent_op(k)) {
        n += 1;
        cur = p;
        if n > MAX_NESTING {
            break;
        }
    }
    n
}

/// Which control-flow op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    If,
    Case,
    While,
}

/// A region program's key: the region, its arguments' shapes and the bytes
/// of the arguments whose values decide shapes in it ([`keyed_params`]).
type Key = (usize, Vec<Vec<usize>>, Vec<Vec<u8>>);

pub struct ControlFlow {
    kind: Kind,
    /// A copy of the body holding the op (its kernel function's): each
    /// specialisation changes the types of a copy of it.
    body: Body,
    op: OpId,
    /// The op's operand count: the step's first inputs; the values its
    /// regions capture follow ([`Body::captured_values`]).
    num_operands: usize,
    captured: Vec<ValueId>,
    /// Per region: the positions (among its block's arguments, then the
    /// captured values) of the values that decide the result shapes of its
    /// `graph.specialize`s ([`keyed_params`]).
    keyed: Vec<Vec<usize>>,
    cache: Mutex<HashMap<Key, Arc<RegionProgram>>>,
}

impl std::fmt::Debug for ControlFlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ControlFlow({:?})", self.kind)
    }
}

/// A value a region computed, in memory of its own.
struct Value {
    buf: AlignedBuf,
    shape: Vec<usize>,
    dtype: DType,
}

impl Value {
    /// A copy of the bytes of `s`.
    fn copy_of(s: &Slot) -> Result<Value, String> {
        if s.ptr.is_null() {
            return Err("a region result was not computed".into());
        }
        // SAFETY: every slot of a region program is valid for its
        // `bytes()` (`RegionProgram::run`: arguments, constants and scratch
        // at their concrete shapes).
        let bytes = unsafe { std::slice::from_raw_parts(s.ptr as *const u8, s.bytes()) };
        Ok(Value {
            buf: AlignedBuf::from_bytes(bytes),
            shape: s.shape.clone(),
            dtype: s.dtype,
        })
    }
    fn slot(&self) -> Slot {
        Slot {
            ptr: self.buf.as_ptr() as *mut u8,
            shape: self.shape.clone(),
            dtype: self.dtype,
        }
    }
}

/// The steps a kernel run has left before the step budget ends it.
struct Steps {
    left: u64,
    limits: RunLimits,
}

impl Steps {
    fn new(limits: RunLimits) -> Steps {
        Steps {
            left: limits.max_steps,
            limits,
        }
    }
    /// Count `n` steps; an error once the budget or the deadline is passed
    /// (the interpreter's messages: a loop ends the same way on both).
    fn take(&mut self, n: u64) -> Result<(), String> {
        if n > self.left {
            return Err(format!(
                "stopped after {} ops (the step budget, --max-steps: does a loop never exit?)",
                self.limits.max_steps
            ));
        }
        self.left -= n;
        if self
            .limits
            .deadline
            .is_some_and(|t| std::time::Instant::now() >= t)
        {
            return Err("stopped at the run's deadline (--timeout)".into());
        }
        Ok(())
    }
}

/// The one element of a condition or index, as an integer.
fn single(s: &Slot, what: &str) -> Result<i64, String> {
    ge_dialects::graph::control::single(&tensor_of(s)?, what)
}

impl ControlFlow {
    /// The kernel of control-flow op `o` of `b`; `None` for another op, or
    /// when a region has an op without a native kernel (the interpreter
    /// runs the whole kernel then).
    pub fn from_op(b: &Body, o: OpId) -> Option<ControlFlow> {
        let d = b.op(o);
        let kind = if If::is(d) {
            Kind::If
        } else if Case::is(d) {
            Kind::Case
        } else if While::is(d) {
            Kind::While
        } else {
            return None;
        };
        if nesting(b, o) > MAX_NESTING {
            return None;
        }
        let captured = b.captured_values(o);
        let mut keyed = vec![];
        for &r in d.regions() {
            let blk = b.entry_block(r)?;
            let p = compile_block(None, b, blk, &captured, "region", d.loc).ok()?;
            if p.fallback.is_some() {
                return None;
            }
            keyed.push(keyed_params(b, blk, &captured));
        }
        Some(ControlFlow {
            kind,
            body: b.clone(),
            op: o,
            num_operands: d.operands().len(),
            captured,
            keyed,
            cache: Mutex::new(HashMap::new()),
        })
    }

    fn op_name(&self) -> &str {
        self.body.op(self.op).name.as_str()
    }

    /// The program of region `ri` for arguments of these types (the block's
    /// arguments, then the captured values), cached per shape.
    fn program(&self, ri: usize, args: &[&Slot]) -> Result<Arc<RegionProgram>, String> {
        let keyed = self.keyed.get(ri).map_or(&[][..], |k| &k[..]);
        let mut values = Vec::with_capacity(keyed.len());
        for &i in keyed {
            let s = args.get(i).ok_or("a region value is missing")?;
            let n = s.shape.iter().product::<usize>();
            if n as i64 > MAX_VALUE_ELEMENTS {
                return Err(format!(
                    "a value deciding shapes in a region has {n} elements, more than the {MAX_VALUE_ELEMENTS} the host computes shapes from"
                ));
            }
            // SAFETY: every argument slot is valid for its `bytes()` (the
            // contract of `Step::run`, or a region's own `Value`).
            let bytes = unsafe { std::slice::from_raw_parts(s.ptr as *const u8, s.bytes()) };
            values.push(bytes.to_vec());
        }
        let key: Key = (ri, args.iter().map(|s| s.shape.clone()).collect(), values);
        if let Some(p) = self.cache.lock().map_err(|_| "poisoned")?.get(&key) {
            return Ok(p.clone());
        }
        let types: Vec<Type> = args.iter().map(|s| static_type(s)).collect();
        let mut known = HashMap::new();
        for &i in keyed {
            known.insert(i, tensor_of(args[i])?);
        }
        let p = Arc::new(RegionProgram::new(self.specialize(ri, &types, &known)?)?);
        let mut cache = self.cache.lock().map_err(|_| "poisoned")?;
        if cache.len() >= CACHE_CAP {
            cache.clear();
        }
        cache.insert(key, p.clone());
        Ok(p)
    }

    /// Region `ri` compiled with its arguments (and captured values) of
    /// static types `args`: result types inferred again op by op — a
    /// `graph.specialize` whose result shapes its declaration leaves open
    /// from the values the host computes from `known` (the values of the
    /// keyed arguments, by position; [`predict`]) —, its ops verified, every
    /// value of the program static.
    fn specialize(
        &self,
        ri: usize,
        args: &[Type],
        known: &HashMap<usize, Tensor>,
    ) -> Result<KernelProgram, String> {
        let mut b = self.body.clone();
        let d = b.op(self.op);
        let loc = d.loc;
        let r = *d.regions().get(ri).ok_or("the op has no such region")?;
        let blk = b.entry_block(r).ok_or("the region is empty")?;
        let params: Vec<ValueId> = b
            .block(blk)
            .args
            .iter()
            .chain(&self.captured)
            .copied()
            .collect();
        if params.len() != args.len() {
            return Err(format!(
                "the region takes {} values, got {}",
                params.len(),
                args.len()
            ));
        }
        for (k, (&v, &t)) in params.iter().zip(args).enumerate() {
            let declared = b.value_type(v);
            if !fits(declared, t) {
                return Err(format!(
                    "region value #{k} is '{t}' here, which does not fit its type '{declared}'"
                ));
            }
            b.set_value_type(v, t);
        }
        let mut host: HashMap<ValueId, Tensor> = known
            .iter()
            .filter_map(|(&i, t)| Some((*params.get(i)?, t.clone())))
            .collect();
        let ops: Vec<OpId> = b.block_ops(blk).collect();
        for &o in &ops {
            refine_results(&mut b, o)?;
            if Specialize::is(b.op(o)) && !b.result_types(o).iter().all(|t| is_static(*t)) {
                predict(&mut b, blk, o, &mut host)?;
            }
        }
        // The region's ops, not the op: its declared results are the
        // loop's at the end, not a carried value's now.
        for &o in &ops {
            if let Some(e) = ge_ir::verifier::verify_op(&b, o).first() {
                return Err(format!("at these shapes: {}", e.message));
            }
        }
        let p = compile_block(None, &b, blk, &self.captured, "region", loc)?;
        if let Some(op) = &p.fallback {
            return Err(format!(
                "'{op}' in a region has no native kernel at these shapes"
            ));
        }
        Ok(p)
    }

    /// Run region `ri` on `args` (its block's arguments) and the captured
    /// values; its results in memory of their own.
    fn run_region(
        &self,
        ri: usize,
        args: &[Slot],
        captured: &[&Slot],
        par: &Par,
        steps: &mut Steps,
    ) -> Result<Vec<Value>, String> {
        let all: Vec<&Slot> = args.iter().chain(captured.iter().copied()).collect();
        let p = self.program(ri, &all)?;
        steps.take(p.prog.steps.len().max(1) as u64)?;
        p.run(&all, par)
    }

    /// Run the loop from the carried values `inits`: its results.
    fn run_while(
        &self,
        inits: &[&Slot],
        captured: &[&Slot],
        par: &Par,
        steps: &mut Steps,
    ) -> Result<Vec<Value>, String> {
        let mut args: Vec<Slot> = inits.iter().map(|s| (*s).clone()).collect();
        // The memory `args` points at after the first iteration.
        let mut carried: Vec<Value>;
        loop {
            let mut fwd = self.run_region(0, &args, captured, par, steps)?;
            if fwd.is_empty() {
                return Err("the condition region must end with 'graph.condition'".into());
            }
            let c = fwd.remove(0);
            if single(&c.slot(), "cond")? == 0 {
                return Ok(fwd);
            }
            let fargs: Vec<Slot> = fwd.iter().map(Value::slot).collect();
            carried = self.run_region(1, &fargs, captured, par, steps)?;
            args = carried.iter().map(Value::slot).collect();
        }
    }
}

/// Whether a value declared `declared` may be `t` (static) in a region
/// program: compatible types, where a symbolic dim is any size — the
/// symbols' values are the run's (a Loop's value-symbol accumulator,
/// `[N, ...]`), not known to the kernel; every op is verified again at the
/// static types and the results are checked against the planned buffers
/// ([`store`]), so nothing is sized by the symbol here.
fn fits(declared: Type, t: Type) -> bool {
    if types_compatible(declared, t) {
        return true;
    }
    let (Some(d), Some(c)) = (declared.as_tensor(), t.as_tensor()) else {
        return false;
    };
    let (Some(dd), Some(cd)) = (&d.dims, &c.dims) else {
        return false;
    };
    d.dtype == c.dtype
        && d.encoding == c.encoding
        && dd.len() == cd.len()
        && dd
            .iter()
            .zip(cd.iter())
            .all(|(p, q)| p.as_static().is_none() || p.compatible(*q))
}

/// Whether `t` is a tensor of static shape.
fn is_static(t: Type) -> bool {
    t.as_tensor()
        .and_then(|t| t.dims.clone())
        .is_some_and(|d| d.iter().all(|x| x.as_static().is_some()))
}

/// The values a host evaluation of `v` in block `blk` reads: `v` itself
/// when it is not computed in `blk` (a block argument or a captured value),
/// else those of the operands of its op, down through the ops of `blk`
/// (a `data.shape_of` reads only its operand's type). `None` through an
/// op with regions or past [`MAX_PREFIX_OPS`] ops.
fn host_leaves(b: &Body, blk: BlockId, v: ValueId, seen: &mut Vec<OpId>) -> Option<Vec<ValueId>> {
    let op = match b.value(v).def {
        ValueDef::Result { op, .. } if b.op(op).parent_block() == Some(blk) => op,
        _ => return Some(vec![v]),
    };
    if seen.contains(&op) {
        return Some(vec![]);
    }
    seen.push(op);
    let d = b.op(op);
    if seen.len() > MAX_PREFIX_OPS || !d.regions().is_empty() {
        return None;
    }
    if ShapeOf::is(d) {
        return Some(vec![]);
    }
    let mut out = vec![];
    for &x in d.operands() {
        out.extend(host_leaves(b, blk, x, seen)?);
    }
    Some(out)
}

/// The positions among the region's parameters (its entry block `blk`'s
/// arguments, then `captured`) of the values that decide the result shapes
/// of its `graph.specialize`s whose declared results are not static (a
/// Slice whose `starts` a Loop body computes from the iteration number):
/// the region's programs are keyed by these values, and [`predict`]
/// computes the shapes from them on the host. A specialize whose values the
/// host cannot compute (through nested control flow) adds nothing: its
/// region fails at run time with a clear error.
fn keyed_params(b: &Body, blk: BlockId, captured: &[ValueId]) -> Vec<usize> {
    let params: Vec<ValueId> = b.block(blk).args.iter().chain(captured).copied().collect();
    let mut out: Vec<usize> = vec![];
    for o in b.block_ops(blk) {
        let d = b.op(o);
        if !Specialize::is(d) || b.result_types(o).iter().all(|t| is_static(*t)) {
            continue;
        }
        let Ok(spec) = Spec::of(b, o) else { continue };
        let mut seen = vec![];
        let leaves: Option<Vec<ValueId>> = d.operands()[spec.num_data.min(d.operands().len())..]
            .iter()
            .map(|&v| host_leaves(b, blk, v, &mut seen))
            .collect::<Option<Vec<_>>>()
            .map(|l| l.concat());
        for v in leaves.unwrap_or_default() {
            if let Some(i) = params.iter().position(|&p| p == v) {
                if !out.contains(&i) {
                    out.push(i);
                }
            }
        }
    }
    out.sort_unstable();
    out
}

/// The value of `v` (of block `blk` of `b`, whose types are static here)
/// computed on the host from `host` (the keyed parameters' values and what
/// was computed before), each op by its reference semantics on values of
/// at most [`MAX_VALUE_ELEMENTS`] elements.
fn host_value(
    b: &Body,
    blk: BlockId,
    v: ValueId,
    host: &mut HashMap<ValueId, Tensor>,
    interp: &ge_ir::interp::Interpreter,
) -> Result<Tensor, String> {
    if let Some(t) = host.get(&v) {
        return Ok(t.clone());
    }
    let op = match b.value(v).def {
        ValueDef::Result { op, .. } if b.op(op).parent_block() == Some(blk) => op,
        _ => return Err("a value deciding a shape is not computed in the region".into()),
    };
    let d = b.op(op);
    for &r in d.results() {
        let n = b.value_type(r).as_tensor().and_then(|t| t.num_elements());
        if n.is_none_or(|n| n > MAX_VALUE_ELEMENTS) {
            return Err(format!(
                "'{}' computes a value deciding a shape that is not a static tensor of at most {MAX_VALUE_ELEMENTS} elements",
                d.name
            ));
        }
    }
    let out = if ShapeOf::is(d) {
        let x = *d.operands().first().ok_or("malformed data.shape_of")?;
        let dims: Vec<i64> = b
            .value_type(x)
            .as_tensor()
            .map(|t| t.shape().iter().filter_map(|d| d.as_static()).collect())
            .unwrap_or_default();
        let dt = b.value_type(v).dtype().unwrap_or(DType::I64);
        vec![Tensor::from_i64(vec![dims.len()], dt, dims)]
    } else {
        let args: Vec<Tensor> = d
            .operands()
            .iter()
            .map(|&x| host_value(b, blk, x, host, interp))
            .collect::<Result<_, _>>()?;
        interp.run_op(b, op, args).map_err(|e| e.msg)?
    };
    for (&r, t) in d.results().iter().zip(out) {
        host.insert(r, t);
    }
    host.get(&v)
        .cloned()
        .ok_or_else(|| format!("'{}' gives fewer results", d.name))
}

/// Give `graph.specialize` op `o` of block `blk` the result types its
/// concrete op has for the values of its value operands, computed on the
/// host (GE's HostCPU "specialise, then launch", inside a region). The
/// prediction is checked: the op's kernel builds the concrete op again
/// from the values it reads and refuses a result that differs from the
/// memory this program gave it.
fn predict(
    b: &mut Body,
    blk: BlockId,
    o: OpId,
    host: &mut HashMap<ValueId, Tensor>,
) -> Result<(), String> {
    let spec = Spec::of(b, o)?;
    let d = b.op(o);
    let loc = d.loc;
    let operands = d.operands().to_vec();
    let results = d.results().to_vec();
    let (data, vals) = operands.split_at(spec.num_data.min(operands.len()));
    let data: Vec<Type> = data.iter().map(|&v| b.value_type(v)).collect();
    let m = ge_ir::Module::new(ge_dialects::graph::specialize::registry(), loc);
    let mut interp = ge_ir::interp::Interpreter::new(&m);
    interp.max_ops = Some(MAX_PREFIX_OPS * 64);
    let values: Vec<Tensor> = vals
        .iter()
        .map(|&v| host_value(b, blk, v, host, &interp))
        .collect::<Result<_, _>>()
        .map_err(|m| format!("'{}' at these values: {m}", spec.def.name))?;
    let refs: Vec<&Tensor> = values.iter().collect();
    let attrs = spec.concrete_attrs(&refs)?;
    let (_, types) = concrete_module(spec.def, &attrs, &data, loc)?;
    if types.len() != results.len() {
        return Err(format!(
            "'{}' gives {} results here, declared {}",
            spec.def.name,
            types.len(),
            results.len()
        ));
    }
    for (i, (&r, &t)) in results.iter().zip(&types).enumerate() {
        let declared = b.value_type(r);
        if !fits(declared, t) {
            return Err(format!(
                "'{}' result #{i} is declared '{declared}' but is '{t}' at these values",
                spec.def.name
            ));
        }
        b.set_value_type(r, t);
    }
    Ok(())
}

/// Set the result types of op `o` from its operands' (now static) types
/// with the op's own inference; ops without inference (nested control
/// flow) keep their declared types.
fn refine_results(b: &mut Body, o: OpId) -> Result<(), String> {
    let d = b.op(o);
    if d.has_trait(Trait::Terminator) {
        return Ok(());
    }
    let Some(def) = d.def.filter(|def| def.infer.is_some()) else {
        return Ok(());
    };
    let ots = b.operand_types(o);
    let consts: Vec<_> = d.operands().iter().map(|&v| constant_value(b, v)).collect();
    let inferred = infer_result_types(def, &ots, d.attrs, &consts)
        .map_err(|m| format!("'{}' at these shapes: {m}", d.name))?;
    let results = d.results().to_vec();
    if inferred.len() != results.len() {
        return Err(format!(
            "'{}': inference gives {} results",
            d.name,
            inferred.len()
        ));
    }
    for (i, (&r, &t)) in results.iter().zip(&inferred).enumerate() {
        let declared = b.value_type(r);
        if !fits(declared, t) {
            return Err(format!(
                "'{}' result #{i} is declared '{declared}' but is '{t}' at these shapes",
                b.op(o).name
            ));
        }
        b.set_value_type(r, t);
    }
    Ok(())
}

/// A region's program at one shape, with its memory laid out: each value's
/// shape, and where in the region's scratch each value a step writes lives.
struct RegionProgram {
    prog: KernelProgram,
    shapes: Vec<Vec<usize>>,
    /// (value, offset) of every value a step writes that is not an
    /// argument or a constant.
    places: Vec<(usize, usize)>,
    scratch_bytes: usize,
}

impl RegionProgram {
    /// Lay out `prog`, whose types must all be static.
    fn new(prog: KernelProgram) -> Result<RegionProgram, String> {
        let none = HashMap::new();
        let mut shapes = vec![];
        for &t in &prog.types {
            shapes.push(concrete(t, &none).map_err(|_| {
                format!(
                    "a value of type '{t}' in a region has a shape that depends on values computed there: not supported"
                )
            })?);
        }
        let mut placed = vec![false; prog.types.len()];
        for &a in &prog.args {
            placed[a] = true;
        }
        for (v, _) in &prog.consts {
            placed[*v] = true;
        }
        let mut places = vec![];
        let mut total = 0usize;
        for s in &prog.steps {
            for &v in &s.outs {
                if placed[v] {
                    continue;
                }
                placed[v] = true;
                places.push((v, total));
                let elem = prog.types[v].dtype().map_or(1, |d| d.byte_size());
                total = crate::exec::checked_bytes(&shapes[v], elem)
                    .and_then(|n| n.checked_next_multiple_of(64))
                    .and_then(|n| total.checked_add(n))
                    .ok_or("a region's values are too large to address")?;
            }
        }
        Ok(RegionProgram {
            prog,
            shapes,
            places,
            scratch_bytes: total,
        })
    }

    /// Run on `args` (slots of the arguments' shapes): the results, copied
    /// out of the scratch.
    fn run(&self, args: &[&Slot], par: &Par) -> Result<Vec<Value>, String> {
        let p = &self.prog;
        let mut slots: Vec<Slot> = p
            .types
            .iter()
            .zip(&self.shapes)
            .map(|(t, shape)| Slot {
                ptr: std::ptr::null_mut(),
                shape: shape.clone(),
                dtype: t.dtype().unwrap_or(DType::U8),
            })
            .collect();
        if p.args.len() != args.len() {
            return Err(format!(
                "the region takes {} values, got {}",
                p.args.len(),
                args.len()
            ));
        }
        for (&a, s) in p.args.iter().zip(args) {
            if slots[a].shape != s.shape || slots[a].dtype != s.dtype {
                return Err("a region argument does not have its program's type".into());
            }
            slots[a].ptr = s.ptr;
        }
        for (v, c) in &p.consts {
            if c.len() < slots[*v].bytes() {
                return Err("a region constant is smaller than its type".into());
            }
            slots[*v].ptr = c.as_ptr() as *mut u8;
        }
        ge_ir::budget::check(Some(self.scratch_bytes as u64), &"a region's values")?;
        let mut scratch = AlignedBuf::zeroed(self.scratch_bytes.max(1));
        for &(v, off) in &self.places {
            slots[v].ptr = scratch.as_mut_ptr().wrapping_add(off);
        }
        // Every slot a step reads or writes is valid for its bytes at its
        // static shape: arguments checked equal to the caller's slots (valid
        // by the contract of `Step::run`), constants checked above, scratch
        // carved at each value's size (`new`). The region was verified at
        // these types, so each step's operand and result shapes agree.
        for s in &p.steps {
            s.run(&slots, par)
                .map_err(|m| format!("'{}': {m}", s.name))?;
        }
        let out = p
            .results
            .iter()
            .map(|&r| Value::copy_of(&slots[r]))
            .collect();
        drop(scratch);
        out
    }
}

/// Copy region results into the op's planned result buffers.
fn store(name: &str, res: &[Value], outs: &[&Slot]) -> Result<(), String> {
    if res.len() != outs.len() {
        return Err(format!(
            "{name} gives {} results, the model declares {}",
            res.len(),
            outs.len()
        ));
    }
    for (i, (v, o)) in res.iter().zip(outs).enumerate() {
        if v.shape != o.shape || v.dtype != o.dtype {
            return Err(format!(
                "{name} result #{i} is '{}' at the end, but the model planned '{}'",
                static_type(&v.slot()),
                static_type(o)
            ));
        }
        // SAFETY: `o` is valid for its `bytes()` (the contract of
        // `Step::run`), which `v` holds (same shape and dtype); `v` is a
        // buffer of its own, so they do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(v.buf.as_ptr(), o.ptr, o.bytes()) };
    }
    Ok(())
}

impl Kernel for ControlFlow {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let n = self.num_operands;
        if ins.len() != n + self.captured.len() {
            return Err(format!(
                "{} operands, expected {}",
                ins.len(),
                n + self.captured.len()
            ));
        }
        let (operands, captured) = ins.split_at(n);
        let mut steps = Steps::new(par.limits);
        let res = match self.kind {
            Kind::If => {
                let c = single(operands.first().ok_or("expects a condition")?, "cond")?;
                self.run_region(if c != 0 { 0 } else { 1 }, &[], captured, par, &mut steps)?
            }
            Kind::Case => {
                let i = single(operands.first().ok_or("expects an index")?, "index")?;
                let nr = self.body.op(self.op).regions().len();
                let k = ge_dialects::graph::control::case_branch(i, nr)?;
                self.run_region(k, &[], captured, par, &mut steps)?
            }
            Kind::While => self.run_while(operands, captured, par, &mut steps)?,
        };
        store(self.op_name(), &res, outs)
    }

    /// The region programs decide (their steps take f64 where they can).
    fn f64_ok(&self) -> bool {
        true
    }
}
