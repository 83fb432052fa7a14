//! Value symbols (issue 15 item 3, docs/architecture.md "Execution
//! modes"): a `graph.specialize` whose result dims are symbols that no
//! input's shape decides — a `Reshape` to a shape given as an input, an
//! `Expand` of an input shape — has its values among the graph inputs (or
//! weights). At run start, after the input symbols are bound, the runtime
//! builds the concrete op from those values with its own `infer` and
//! verifier (`ge_dialects::graph::specialize::concrete_module`, as the
//! op's kernel will) and binds the symbols from the result shapes; the
//! per-shape plan and its cache then key on them like on input dims.
//!
//! Found at load ([`binders`]): for every launch whose kernel holds such a
//! `graph.specialize`, where each value operand comes from — an input's
//! buffer (directly or through one memcpy) or a weight. A symbol that no
//! input and no binder decides makes the load fail (it would be known only
//! after some op ran: segmented execution, not built).

use crate::buffer::HostTensor;
use crate::model::Inner;
use crate::Error;
use ge_dialects::graph::specialize::{concrete_module, Spec, Specialize};
use ge_ir::tensor::Tensor;
use ge_ir::{Dim, Ident, Location, Module, Type};
use ge_om::model::{Buffer, IoDesc, Operand, Task, TaskProgram};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Where a value operand's bytes are at run start.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    /// Graph input #i.
    Input(usize),
    /// Weight #w of the file.
    Weight(u32),
}

/// One `graph.specialize` that binds value symbols.
#[derive(Clone, Debug)]
pub(crate) struct Binder {
    pub spec: Spec,
    pub loc: Location,
    /// The concrete op's operand types (symbolic).
    pub data: Vec<Type>,
    pub sources: Vec<Source>,
    /// The declared result types (symbolic).
    pub results: Vec<Type>,
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

/// The graph input whose buffer `b` is (same arena and offset), following
/// one memcpy from an input.
fn input_of(b: &Buffer, io: &IoDesc, program: &TaskProgram) -> Option<usize> {
    let same = |x: &Buffer, y: &Buffer| x.arena == y.arena && x.offset == y.offset;
    let direct = |b: &Buffer| io.inputs.iter().position(|t| same(&t.buffer, b));
    direct(b).or_else(|| {
        program.tasks.iter().find_map(|t| match t {
            Task::Memcpy { src, dst, .. } if same(dst, b) => direct(src),
            _ => None,
        })
    })
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
    for t in &program.tasks {
        let Task::Launch { kernel, ins, .. } = t else {
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
            let mut sources = vec![];
            for &v in &d.operands()[spec.num_data..] {
                let src = match body.value(v).def {
                    ge_ir::body::ValueDef::BlockArg { index, .. } => {
                        match ins.get(index as usize) {
                            Some(Operand::Weight(w)) => Some(Source::Weight(*w)),
                            Some(Operand::Buffer(b)) => input_of(b, io, program).map(Source::Input),
                            None => None,
                        }
                    }
                    ge_ir::body::ValueDef::Result { .. } => None,
                };
                sources.push(src);
            }
            let Some(sources) = sources.into_iter().collect::<Option<Vec<_>>>() else {
                continue;
            };
            found.push(Binder {
                spec,
                loc: d.loc,
                data,
                sources,
                results,
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
        let ready = pending.iter().position(|b| {
            let mut need = BTreeSet::new();
            b.data.iter().for_each(|&t| symbols_of(t, &mut need));
            need.iter().all(|s| known.contains(s))
        });
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
            "symbol {s} is decided neither by an input's shape nor by values the model reads at run start (a size known only after some op ran needs segmented execution, which is not built)"
        )));
    }
    Ok(out)
}

/// The bytes of a value operand at run start.
fn value_of(src: &Source, inputs: &[HostTensor], inner: &Inner) -> Result<Tensor, String> {
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
    }
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
        let values: Vec<Tensor> = b
            .sources
            .iter()
            .map(|s| value_of(s, inputs, inner))
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
