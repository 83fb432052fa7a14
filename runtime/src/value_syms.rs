//! Value symbols (issue 15 item 3, docs/architecture.md "Execution
//! modes"): a `graph.specialize` whose result dims are symbols that no
//! input's shape decides — a `Reshape` to a shape given as an input, an
//! `Expand` of an input shape, a `Range` whose limit the model computes
//! from an input — has its values among the graph inputs or weights, or
//! computed from them by a small *host prefix* of ops. At run start, after
//! the input symbols are bound, the runtime evaluates that prefix on the
//! host (each op's reference semantics: GE's HostCPU engine of hybrid
//! mode), builds the concrete op from the values with its own `infer` and
//! verifier (`ge_dialects::graph::specialize::concrete_module`, as the
//! op's kernel will) and binds the symbols from the result shapes; the
//! per-shape plan and its cache then key on them like on input dims.
//!
//! Found at load ([`binders`]): for every launch whose kernel holds such a
//! `graph.specialize`, where each value operand comes from — an input's
//! buffer, a weight, or an op of a kernel launched before it (traced back
//! through the task program by logical buffer, through copies), whose own
//! operands come from the same places; a `data.shape_of` reads only its
//! operand's type. At most `MAX_PREFIX_OPS` ops, none behind a jump; every
//! value at most `MAX_VALUE_ELEMENTS` elements when evaluated. A symbol
//! that no input and no binder decides makes the load fail (it would be
//! known only after some op ran: segmented execution, not built). The
//! prefix only predicts: the specialised op's kernel builds the concrete
//! op again from the values it reads and checks it against the plan.

use crate::buffer::HostTensor;
use crate::model::Inner;
use crate::Error;
use ge_dialects::data::shape::ShapeOf;
use ge_dialects::graph::specialize::{
    concrete_module, Spec, Specialize, MAX_PREFIX_OPS, MAX_VALUE_ELEMENTS,
};
use ge_ir::body::{Body, OpId, ValueDef, ValueId};
use ge_ir::tensor::Tensor;
use ge_ir::{Dim, Ident, Location, Module, Type};
use ge_om::model::{Buffer, IoDesc, Operand, Task, TaskProgram};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Where a value a binder reads is at run start.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    /// Graph input #i.
    Input(usize),
    /// Weight #w of the file.
    Weight(u32),
    /// Result #r of op #k of the binder's host prefix.
    Host(usize, usize),
}

/// One op of a binder's host prefix: op `op` of kernel function `func`.
#[derive(Clone, Debug)]
pub(crate) struct HostOp {
    pub func: OpId,
    pub op: OpId,
    /// Its operands' sources; `None` for a `data.shape_of`'s operand, whose
    /// type alone is read.
    pub operands: Vec<Option<Source>>,
}

/// One `graph.specialize` that binds value symbols.
#[derive(Clone, Debug)]
pub(crate) struct Binder {
    pub spec: Spec,
    pub loc: Location,
    /// The concrete op's operand types (symbolic).
    pub data: Vec<Type>,
    pub sources: Vec<Source>,
    /// The ops computing the values that are not inputs or weights, each
    /// after the ops it reads.
    pub prefix: Vec<HostOp>,
    /// The declared result types (symbolic).
    pub results: Vec<Type>,
    /// The symbols the data types and the prefix's types name.
    pub needs: BTreeSet<Ident>,
    /// The symbols first decided here, sorted.
    pub binds: Vec<Ident>,
}

fn symbols_of(t: Type, out: &mut BTreeSet<Ident>) {
    if let Some(dims) = t.as_tensor().and_then(|t| t.dims.as_ref()) {
        for d in dims.iter() {
            if let Some(e) = d.expr() {
                let mut v = vec![];
                e.symbols(&mut v);
                out.extend(v);
            }
        }
    }
}

/// The body of kernel function `func`.
fn func_body(kmodule: &Module, func: OpId) -> Option<&Body> {
    kmodule.body().op(func).inner.as_deref()
}

/// Traces value operands back to the inputs and weights at load.
struct Tracer<'a> {
    kmodule: &'a Module,
    program: &'a TaskProgram,
    io: &'a IoDesc,
    prefix: Vec<HostOp>,
    /// (task, op) → its index in `prefix`.
    memo: HashMap<(usize, OpId), usize>,
    /// Ops looked at (the budget).
    visits: usize,
}

impl Tracer<'_> {
    /// Where value `v` of kernel function `func`, launched by task `task`,
    /// comes from; `None` when not computable at run start.
    fn value(&mut self, task: usize, func: OpId, v: ValueId) -> Option<Source> {
        let body = func_body(self.kmodule, func)?;
        match body.value(v).def {
            ValueDef::BlockArg { block, index } => {
                if body.block_parent_op(block).is_some() {
                    return None;
                }
                let Task::Launch { ins, .. } = self.program.tasks.get(task)? else {
                    return None;
                };
                match ins.get(index as usize)? {
                    Operand::Weight(w) => Some(Source::Weight(*w)),
                    Operand::Buffer(b) => self.buffer(task, b),
                }
            }
            ValueDef::Result { op, index } => {
                let k = self.op(task, func, op)?;
                Some(Source::Host(k, index as usize))
            }
        }
    }

    /// Where buffer `b`, as task `task` reads it, comes from: an input, or
    /// the latest task before it that writes the same logical buffer.
    fn buffer(&mut self, task: usize, b: &Buffer) -> Option<Source> {
        let same_input = |x: &Buffer| x.arena == b.arena && x.offset == b.offset;
        if let Some(i) = self.io.inputs.iter().position(|t| same_input(&t.buffer)) {
            return Some(Source::Input(i));
        }
        let same = |x: &Buffer| x.arena == b.arena && x.id == b.id;
        for p in (0..task).rev() {
            match &self.program.tasks[p] {
                Task::Launch { kernel, outs, .. } => {
                    let Some(j) = outs.iter().position(same) else {
                        continue;
                    };
                    let name = &self.program.kernels.get(*kernel as usize)?.name;
                    let func = self.kmodule.lookup_symbol(name)?;
                    let body = func_body(self.kmodule, func)?;
                    let fd = self.kmodule.body().op(func);
                    let entry = body.entry_block(*fd.regions().first()?)?;
                    let ret = body.block_ops(entry).last()?;
                    let v = *body.op(ret).operands().get(j)?;
                    return self.value(p, func, v);
                }
                Task::Memcpy { src, dst, .. } if same(dst) => return self.buffer(p, src),
                // A loop could write it again later: not traced.
                Task::Label { .. } | Task::Goto { .. } | Task::Switch { .. } => return None,
                _ => {}
            }
        }
        None
    }

    /// Op `op` (of the entry block of kernel function `func`, launched by
    /// task `task`) as a host op, after the host ops it reads.
    fn op(&mut self, task: usize, func: OpId, op: OpId) -> Option<usize> {
        if let Some(&k) = self.memo.get(&(task, op)) {
            return Some(k);
        }
        // Counted on the way in: the prefix grows only on the way out.
        self.visits += 1;
        if self.visits > MAX_PREFIX_OPS {
            return None;
        }
        let body = func_body(self.kmodule, func)?;
        let d = body.op(op);
        let top = d
            .parent_block()
            .is_some_and(|b| body.block_parent_op(b).is_none());
        if !top {
            return None;
        }
        let operands: Vec<Option<Source>> = if ShapeOf::is(d) {
            vec![None; d.operands().len()]
        } else {
            let vals: Vec<ValueId> = d.operands().to_vec();
            vals.into_iter()
                .map(|x| self.value(task, func, x).map(Some))
                .collect::<Option<_>>()?
        };
        self.prefix.push(HostOp { func, op, operands });
        let k = self.prefix.len() - 1;
        self.memo.insert((task, op), k);
        Some(k)
    }

    /// The symbols the prefix's types name.
    fn symbols(&self, out: &mut BTreeSet<Ident>) {
        for h in &self.prefix {
            let Some(body) = func_body(self.kmodule, h.func) else {
                continue;
            };
            let d = body.op(h.op);
            for &v in d.operands().iter().chain(d.results()) {
                symbols_of(body.value_type(v), out);
            }
        }
    }
}

/// The binders of a model, in the order they bind (each needs only symbols
/// of the inputs or of binders before it), and the symbols they bind.
/// A symbol of a `graph.specialize` result that neither the inputs nor a
/// binder decide is an error.
pub(crate) fn binders(
    kmodule: &Module,
    program: &TaskProgram,
    io: &IoDesc,
    input_syms: &[Ident],
) -> Result<Vec<Binder>, Error> {
    let mut found: Vec<Binder> = vec![];
    let mut all = BTreeSet::new();
    let mb = kmodule.body();
    for (ti, t) in program.tasks.iter().enumerate() {
        let Task::Launch { kernel, .. } = t else {
            continue;
        };
        // ge-om's validation proved the kernel id in range.
        let name = &program.kernels[*kernel as usize].name;
        let Some(f) = kmodule.lookup_symbol(name) else {
            continue;
        };
        let Some(body) = mb.op(f).inner.as_deref() else {
            continue;
        };
        for o in body.all_ops(ge_ir::WalkOrder::Pre) {
            let d = body.op(o);
            if !Specialize::is(d) {
                continue;
            }
            for &r in d.results() {
                symbols_of(body.value_type(r), &mut all);
            }
            let spec = Spec::of(body, o).map_err(|m| Error(format!("kernel '@{name}': {m}")))?;
            let results = body.result_types(o);
            let data: Vec<Type> = d.operands()[..spec.num_data]
                .iter()
                .map(|&v| body.value_type(v))
                .collect();
            let mut tracer = Tracer {
                kmodule,
                program,
                io,
                prefix: vec![],
                memo: HashMap::new(),
                visits: 0,
            };
            let sources: Option<Vec<Source>> = d.operands()[spec.num_data..]
                .iter()
                .map(|&v| tracer.value(ti, f, v))
                .collect();
            let Some(sources) = sources else {
                continue;
            };
            let mut needs = BTreeSet::new();
            data.iter().for_each(|&t| symbols_of(t, &mut needs));
            tracer.symbols(&mut needs);
            found.push(Binder {
                spec,
                loc: d.loc,
                data,
                sources,
                prefix: tracer.prefix,
                results,
                needs,
                binds: vec![],
            });
        }
    }
    order(found, input_syms, &all)
}

/// Keep the binders that decide a symbol, each after the binders its
/// operand types need.
fn order(
    mut pending: Vec<Binder>,
    input_syms: &[Ident],
    all: &BTreeSet<Ident>,
) -> Result<Vec<Binder>, Error> {
    let mut known: HashSet<Ident> = input_syms.iter().copied().collect();
    let mut out = vec![];
    loop {
        let ready = pending
            .iter()
            .position(|b| b.needs.iter().all(|s| known.contains(s)));
        let Some(i) = ready else { break };
        let mut b = pending.remove(i);
        let mut syms = BTreeSet::new();
        b.results.iter().for_each(|&t| symbols_of(t, &mut syms));
        b.binds = syms.into_iter().filter(|s| !known.contains(s)).collect();
        if !b.binds.is_empty() {
            known.extend(b.binds.iter().copied());
            out.push(b);
        }
    }
    if let Some(s) = all.iter().find(|s| !known.contains(s)) {
        return Err(Error(format!(
            "symbol {s} is decided neither by an input's shape nor by values the model reads or computes at run start from its inputs and weights (at most {MAX_PREFIX_OPS} small ops; a size known only after some op ran needs segmented execution, which is not built)"
        )));
    }
    Ok(out)
}

/// The bytes of a value at run start (`host`: the prefix's results so far).
fn value_of(
    src: &Source,
    inputs: &[HostTensor],
    inner: &Inner,
    host: &[Vec<Tensor>],
) -> Result<Tensor, String> {
    match *src {
        Source::Input(i) => {
            let x = inputs.get(i).ok_or("input missing")?;
            ge_dialects::data::tensor_from_bytes(x.bytes(), x.shape.clone(), x.dtype)
        }
        Source::Weight(w) => {
            let missing = || format!("weight {w} is missing");
            let wd = inner.program.weights.get(w as usize).ok_or_else(missing)?;
            let t = ge_ir::parser::parse_type_str(ge_ir::context::bare(), &wd.ty)
                .map_err(|d| format!("weight {w}: bad type '{}': {}", wd.ty, d.message))?;
            let shape = crate::kernels::concrete(t, &HashMap::new())?;
            let dt = t
                .dtype()
                .ok_or_else(|| format!("weight {w} is not a tensor"))?;
            let bytes = inner.weight_slice(w).ok_or_else(missing)?;
            ge_dialects::data::tensor_from_bytes(bytes, shape, dt)
        }
        Source::Host(k, r) => host
            .get(k)
            .and_then(|o| o.get(r))
            .cloned()
            .ok_or_else(|| format!("host value #{k}.{r} is not computed")),
    }
}

/// Evaluate binder `b`'s host prefix on the host: each op's reference
/// semantics on values of at most `MAX_VALUE_ELEMENTS` elements (checked
/// on the concrete types before anything runs); a `data.shape_of` from its
/// operand's concrete type.
fn eval_prefix(
    inner: &Inner,
    b: &Binder,
    inputs: &[HostTensor],
    syms: &HashMap<Ident, i64>,
) -> Result<Vec<Vec<Tensor>>, String> {
    let mut interp = ge_ir::interp::Interpreter::new(&inner.kmodule);
    interp.symbols = syms.clone();
    // A step budget for ops with regions (a fused kernel, a loop) too.
    interp.max_ops = Some(MAX_PREFIX_OPS * 64);
    let mut host: Vec<Vec<Tensor>> = vec![];
    for h in &b.prefix {
        let body = func_body(&inner.kmodule, h.func).ok_or("a kernel has no body")?;
        let d = body.op(h.op);
        let at = |m: String| format!("'{}' at {} (computed at run start): {m}", d.name, d.loc);
        for &r in d.results() {
            let t = concrete_type(body.value_type(r), syms).map_err(at)?;
            let n = t.as_tensor().and_then(|t| t.num_elements()).unwrap_or(0);
            if n > MAX_VALUE_ELEMENTS {
                return Err(at(format!(
                    "{n} elements, more than the {MAX_VALUE_ELEMENTS} a value computed at run start may have"
                )));
            }
        }
        let out = if ShapeOf::is(d) {
            let (x, r) = (d.operands().first(), d.results().first());
            let (Some(&x), Some(&r)) = (x, r) else {
                return Err(at("malformed".into()));
            };
            let t = concrete_type(body.value_type(x), syms).map_err(at)?;
            let dims: Vec<i64> = t
                .as_tensor()
                .map(|t| t.shape().iter().filter_map(|d| d.as_static()).collect())
                .unwrap_or_default();
            let dt = body.value_type(r).dtype().unwrap_or(ge_ir::DType::I64);
            vec![Tensor::from_i64(vec![dims.len()], dt, dims)]
        } else {
            let args: Vec<Tensor> = h
                .operands
                .iter()
                .map(|s| {
                    let s = s.as_ref().ok_or("an operand is not computed")?;
                    value_of(s, inputs, inner, &host)
                })
                .collect::<Result<_, String>>()
                .map_err(at)?;
            interp.run_op(body, h.op, args).map_err(|e| at(e.msg))?
        };
        host.push(out);
    }
    Ok(host)
}

/// Bind the value symbols of `binders` into `syms` (which holds the input
/// symbols): build each concrete op from its values, and check every result
/// dim against the declared one.
pub(crate) fn bind(
    inner: &Inner,
    inputs: &[HostTensor],
    syms: &mut HashMap<Ident, i64>,
) -> Result<(), Error> {
    let bounds = &inner.bounds;
    for b in &inner.binders {
        let name = b.spec.def.name;
        let at = |m: String| Error(format!("'{name}' at {}: {m}", b.loc));
        let data: Vec<Type> = b
            .data
            .iter()
            .map(|&t| concrete_type(t, syms))
            .collect::<Result<_, _>>()
            .map_err(at)?;
        let host = eval_prefix(inner, b, inputs, syms).map_err(Error)?;
        let values: Vec<Tensor> = b
            .sources
            .iter()
            .map(|s| value_of(s, inputs, inner, &host))
            .collect::<Result<_, _>>()
            .map_err(at)?;
        let refs: Vec<&Tensor> = values.iter().collect();
        let attrs = b.spec.concrete_attrs(&refs).map_err(at)?;
        let (_, got) = concrete_module(b.spec.def, &attrs, &data, b.loc).map_err(at)?;
        if got.len() != b.results.len() {
            return Err(at(format!(
                "{} results with these values, the model declares {}",
                got.len(),
                b.results.len()
            )));
        }
        for (i, (&g, &want)) in got.iter().zip(&b.results).enumerate() {
            let mismatch = || {
                at(format!(
                    "with these values result #{i} is '{g}', which does not fit the declared '{want}'"
                ))
            };
            let (Some(gd), Some(wd)) = (
                g.as_tensor().and_then(|t| t.dims.clone()),
                want.as_tensor().and_then(|t| t.dims.clone()),
            ) else {
                return Err(mismatch());
            };
            if gd.len() != wd.len() || g.dtype() != want.dtype() {
                return Err(mismatch());
            }
            for (&c, &w) in gd.iter().zip(wd.iter()) {
                let c = c.as_static().ok_or_else(mismatch)?;
                if let Some(s) = w.as_symbol().filter(|s| b.binds.contains(s)) {
                    if let Some(&bound) = bounds.get(&s) {
                        if c > bound {
                            return Err(at(format!("{s} = {c} is above its upper bound {bound}")));
                        }
                    }
                    if let Some(&prev) = syms.get(&s) {
                        if prev != c {
                            return Err(mismatch());
                        }
                    }
                    syms.insert(s, c);
                }
            }
            // Compound dims and symbols bound before: checked once all are known.
            for (&c, &w) in gd.iter().zip(wd.iter()) {
                if w.eval(syms) != c.as_static() {
                    return Err(mismatch());
                }
            }
        }
    }
    Ok(())
}

/// `t` with its symbols replaced by their values.
fn concrete_type(t: Type, syms: &HashMap<Ident, i64>) -> Result<Type, String> {
    let Some(tt) = t.as_tensor() else {
        return Ok(t);
    };
    let Some(dims) = &tt.dims else {
        return Err(format!("'{t}' is unranked"));
    };
    let dims: Vec<Dim> = dims
        .iter()
        .map(|d| {
            d.eval(syms)
                .map(Dim::Static)
                .ok_or_else(|| format!("'{t}' has a dim not known at run start"))
        })
        .collect::<Result<_, _>>()?;
    Ok(Type::tensor(&dims, tt.dtype))
}
