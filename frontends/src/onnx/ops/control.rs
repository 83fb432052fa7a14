//! Control flow: If → `graph.if` (inlined when the condition is a constant),
//! Loop → `graph.while` with the iteration count and condition carried, Scan
//! → `graph.while` with the iteration count carried, slicing its scan inputs
//! and writing its scan outputs into accumulators of their final shape.

use super::{invalid, norm_axis, unsupported, Cx, Node, Res};
use crate::onnx::graph::join_types;
use crate::proto::onnx::GraphProto;
use ge_ir::attributes::Attribute;
use ge_ir::body::{BlockId, OpId, RegionId, ValueId};
use ge_ir::{DType, Dim, Location, Type};

/// A placeholder result type, replaced once the regions are built.
fn placeholder() -> Type {
    Type::unranked(DType::F32)
}

fn create_with_regions(
    cx: &mut Cx,
    name: &str,
    operands: &[ValueId],
    nresults: usize,
    nregions: usize,
) -> Res<OpId> {
    Ok(cx.e.b.create(
        name,
        operands,
        vec![],
        Some(vec![placeholder(); nresults]),
        nregions,
    )?)
}

/// A single-element i1 tensor as a rank-0 tensor.
fn scalar_bool(cx: &mut Cx, v: ValueId) -> Res<ValueId> {
    let v = super::cast(cx, v, DType::I1)?;
    if cx.e.rank(v)? == 0 {
        return Ok(v);
    }
    super::reshape(cx, v, &[])
}

pub fn if_(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let cond = n.input(0)?;
    let then_g = n.graph("then_branch")?;
    let else_g = n.graph("else_branch")?;
    if let Some(c) = cx.e.const_value(cond) {
        if c.len() != 1 {
            return Err(invalid(n, "the condition must hold one element"));
        }
        let g = if c.get_f(0) != 0.0 { &then_g } else { &else_g };
        return cx.inline_subgraph(g);
    }
    let cond = scalar_bool(cx, cond)?;
    let nres = then_g.output.len();
    if else_g.output.len() != nres {
        return Err(invalid(n, "the branches have different numbers of outputs"));
    }
    let op = create_with_regions(cx, "graph.if", &[cond], nres, 2)?;
    let regions = cx.e.b.body.op(op).regions().to_vec();
    let loc = cx.loc;
    let mut yields: Vec<Vec<ValueId>> = vec![];
    let mut blocks = vec![];
    for (r, g) in regions.iter().zip([&then_g, &else_g]) {
        let block = cx.e.b.body.add_block(*r);
        yields.push(cx.convert_subgraph(g, block, &[])?);
        blocks.push(block);
    }
    let results = cx.e.b.body.op(op).results().to_vec();
    let saved = cx.e.insertion_block();
    let mut types = vec![];
    for (k, &res) in results.iter().enumerate() {
        let (a, b) = (cx.e.ty(yields[0][k]), cx.e.ty(yields[1][k]));
        let t = match join_types(a, b) {
            Some(t) => t,
            None => {
                let msg = format!(
                    "with branches yielding '{a}' and '{b}' as output #{k} (its condition is not known at import, so one type must hold both)"
                );
                let Some(side) = scalar_side(a, b) else {
                    return Err(unsupported(n, msg));
                };
                // The rank-0 branch yields its value as `[1]`; every use is
                // checked at the end of the import (`Cx::check_promoted`).
                cx.e.set_block(blocks[side]);
                cx.e.set_loc(loc);
                yields[side][k] = super::reshape(cx, yields[side][k], &[1])?;
                cx.promoted
                    .push((res, format!("node '{}' (If): If {msg}", n.name)));
                cx.e.ty(yields[1 - side][k])
            }
        };
        types.push(t);
    }
    for (block, outs) in blocks.iter().zip(&yields) {
        cx.e.set_block(*block);
        cx.e.set_loc(loc);
        cx.e.b
            .create("graph.yield", outs, vec![], Some(vec![]), 0)?;
    }
    if let Some(b) = saved {
        cx.e.set_block(b);
    }
    for (&res, t) in results.iter().zip(types) {
        cx.e.b.body.set_value_type(res, t);
    }
    Ok(results)
}

/// Check the If results whose rank-0 branch value was yielded as `[1]`
/// (`scalar_side`): the promotion must not be observable, so every use is
/// an elementwise op with another operand of rank >= 1 (same result shape
/// either way), or an elementwise op whose other operands are rank 0 — then
/// its results are checked the same way. Anything else (a graph output, a
/// reshape, a shape read) is the If's unsupported-types error.
pub fn check_promoted(cx: &Cx) -> Res<()> {
    use ge_ir::opdef::Trait;
    let body = &*cx.e.b.body;
    for (v, msg) in &cx.promoted {
        let mut work = vec![*v];
        let mut seen = std::collections::HashSet::new();
        while let Some(w) = work.pop() {
            if !seen.insert(w) {
                continue;
            }
            for u in body.users(w) {
                let d = body.op(u);
                let rank = |x: ValueId| {
                    body.value_type(x)
                        .as_tensor()?
                        .dims
                        .as_ref()
                        .map(|d| d.len())
                };
                if !d.has_trait(Trait::Elementwise)
                    || d.operands().iter().any(|&x| rank(x).is_none())
                {
                    return Err(unsupported_msg(msg, d.name.as_str()));
                }
                let wider = d
                    .operands()
                    .iter()
                    .any(|&x| x != w && rank(x).is_some_and(|r| r >= 1));
                if !wider {
                    work.extend(d.results().iter().copied());
                }
            }
        }
    }
    Ok(())
}

fn unsupported_msg(msg: &str, user: &str) -> crate::error::ImportError {
    crate::error::ImportError::unsupported(format!(
        "{msg}; the rank-0 branch's value as [1] would be seen by '{user}'"
    ))
}

/// Which branch (0: then, 1: else) yields a rank-0 value where the other
/// yields the same element type as `[1]`: the one element either way.
/// Where every use broadcasts it against a value of rank >= 1, the results
/// are the same (ONNX would give the If's output either rank at run time).
fn scalar_side(a: Type, b: Type) -> Option<usize> {
    let (x, y) = (a.as_tensor()?, b.as_tensor()?);
    if x.dtype != y.dtype {
        return None;
    }
    match (x.dims.as_deref()?, y.dims.as_deref()?) {
        ([], [Dim::Static(1)]) => Some(0),
        ([Dim::Static(1)], []) => Some(1),
        _ => None,
    }
}

/// Loop(M, cond, v...) with body(iter, cond, v...) -> (cond, v..., scans...):
///
/// ```text
/// graph.while (i = 0, c = cond, v..., acc...) {
///   graph.condition (i < M) and c, i, c, v..., acc...
/// } do {
///   body; graph.yield i + 1, cond_out, v_out..., concat(acc, scan)...
/// }
/// ```
///
/// Scan outputs are accumulated along a new leading dim. When the loop runs
/// exactly `count = cond ? max(M, 0) : 0` times — the body passes its
/// condition through unchanged (or yields a constant true) — and `count` is
/// computable at run start (a graph input, or computed from inputs by the
/// host prefix), each accumulator is a zero tensor of its final shape
/// `[N, ...]` (`N` a value symbol, bound at run start like a Reshape target:
/// a `graph.specialize` of `data.expand`), written one row per iteration as
/// Scan's are, so the result is planned per binding (docs/architecture.md
/// "Execution modes", hybrid). Otherwise the accumulators grow by a
/// `data.concat` per iteration (`?` sized), and a named scan output whose
/// length is known only when the loop has run is an import error.
pub fn loop_(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let body = n.graph("body")?;
    let inits: Vec<ValueId> = (2..n.num_inputs())
        .map(|i| n.input(i))
        .collect::<Res<_>>()?;
    let nv = inits.len();
    if body.input.len() != nv + 2 {
        return Err(invalid(
            n,
            "the body must take the iteration number, the condition and every loop-carried value",
        ));
    }
    if body.output.len() < nv + 1 {
        return Err(invalid(
            n,
            "the body must return the condition and every loop-carried value",
        ));
    }
    let i0 = cx.e.scalar(DType::I64, 0.0)?;
    let cinit = match n.opt_input(1) {
        Some(c) => scalar_bool(cx, c)?,
        None => cx.e.scalar(DType::I1, 1.0)?,
    };
    let max_trip = match n.opt_input(0) {
        Some(m) => {
            let m = super::cast(cx, m, DType::I64)?;
            Some(if cx.e.rank(m)? == 0 {
                m
            } else {
                super::reshape(cx, m, &[])?
            })
        }
        None => None,
    };
    let mut lp = LoopImport {
        n,
        nscan: body.output.len() - 1 - nv,
        body,
        i0,
        cinit,
        max_trip,
        carried: inits.iter().map(|&v| cx.e.ty(v)).collect(),
        inits,
        scan_types: vec![],
        fixed_count: None,
    };
    lp.scan_types = vec![None; lp.nscan];
    let results = settle(cx, n, "loop-carried", |cx| lp.attempt(cx))?;
    // In the main graph a `?` reaches the memory planner; inside a subgraph
    // the enclosing control-flow kernel specialises per concrete shape.
    let top =
        cx.e.insertion_block()
            .is_some_and(|b| cx.e.b.body.block_parent_op(b).is_none());
    for (k, &r) in results.iter().enumerate() {
        let used = n.output_names.get(k).is_some_and(|o| !o.is_empty());
        if !top || !used || !cx.e.dims(r)?.contains(&Dim::Unknown) {
            continue;
        }
        let what = if k < nv {
            format!(
                "loop-carried value #{k} ('{}') whose shape changes between iterations",
                cx.e.ty(r)
            )
        } else {
            format!(
                "scan output #{} ('{}') whose length is known only when the loop has run (its condition is computed in the body, or its trip count is not computable at run start from the inputs by a small host prefix)",
                k - nv,
                cx.e.ty(r)
            )
        };
        return Err(unsupported(n, format!("with {what}")));
    }
    Ok(results)
}

/// Runs `attempt` (one `graph.while` build) until it succeeds. Carried types
/// start from the initial values and widen until the body's yields fit: at
/// most a few rounds, each can only add `?` dims (a first one may probe the
/// scan outputs' types).
fn settle(
    cx: &mut Cx,
    n: &Node,
    what: &str,
    mut attempt: impl FnMut(&mut Cx) -> Res<Option<Vec<ValueId>>>,
) -> Res<Vec<ValueId>> {
    for _round in 0..4 {
        if let Some(results) = attempt(cx)? {
            return Ok(results);
        }
    }
    cx.e.set_loc(Location::unknown());
    Err(unsupported(n, format!("whose {what} types do not settle")))
}

/// One ONNX Loop being imported: what stays fixed across attempts, and the
/// carried and scan types that each attempt widens.
struct LoopImport<'n> {
    n: &'n Node,
    body: GraphProto,
    nscan: usize,
    i0: ValueId,
    cinit: ValueId,
    max_trip: Option<ValueId>,
    inits: Vec<ValueId>,
    carried: Vec<Type>,
    /// The scan outputs' types; None until an attempt has seen the body.
    scan_types: Vec<Option<Type>>,
    /// The iteration count `cond ? max(M, 0) : 0` as a 1-element i64
    /// vector, when the body cannot end the loop early and the count is
    /// computable at run start (see [`loop_`]); decided by the first
    /// attempt.
    fixed_count: Option<Option<ValueId>>,
}

impl LoopImport<'_> {
    /// Builds the `graph.while` with the current types. Returns its results
    /// when the body's yields fit them; else erases it, widens the types and
    /// returns None (a first attempt only probes the scan outputs' types).
    fn attempt(&mut self, cx: &mut Cx) -> Res<Option<Vec<ValueId>>> {
        let (n, nv, nscan, loc) = (self.n, self.inits.len(), self.nscan, cx.loc);
        let mut all_types = vec![cx.e.ty(self.i0), cx.e.ty(self.cinit)];
        all_types.extend(self.carried.iter().copied());
        let acc_inits = self.empty_accumulators(cx)?;
        // A fixed count's accumulators have their final types ([N, ...]).
        let fixed = self.fixed_count.flatten().is_some();
        for (&t, a) in self.scan_types.iter().zip(&acc_inits) {
            all_types.push(match a {
                Some(a) if fixed => cx.e.ty(*a),
                _ => accumulator_type(t),
            });
        }
        let mut operands = vec![self.i0, self.cinit];
        operands.extend(self.inits.iter().copied());
        let probing = acc_inits.iter().any(|a| a.is_none());
        if !probing {
            operands.extend(acc_inits.iter().flatten().copied());
        }
        let ncarried = if probing { 2 + nv } else { 2 + nv + nscan };
        let op = create_with_regions(cx, "graph.while", &operands, ncarried, 2)?;
        let regions = cx.e.b.body.op(op).regions().to_vec();
        let saved = cx.e.insertion_block();
        self.cond_region(cx, regions[0], &all_types[..ncarried])?;
        // do region
        let (db, dargs) = block_with_args(cx, regions[1], &all_types[..ncarried]);
        let outs = cx.convert_subgraph(&self.body, db, &dargs[..2 + nv])?;
        cx.e.set_block(db);
        cx.e.set_loc(loc);
        let one = cx.e.scalar(DType::I64, 1.0)?;
        let next_i = cx.e.op("graph.add", &[dargs[0], one], vec![])?;
        let cond_out = scalar_bool(cx, outs[0])?;
        let mut yields = vec![next_i, cond_out];
        yields.extend(outs[1..1 + nv].iter().copied());
        let mut widened = widen_types(n, &mut self.carried, cx, &outs[1..1 + nv])?;
        if self.fixed_count.is_none() {
            self.fixed_count = Some(None);
            if nscan > 0 && passes_condition_through(cx, outs[0], dargs[1]) {
                // Back in the enclosing block: the count is computed there.
                let here = cx.e.insertion_block();
                if let Some(b) = saved {
                    cx.e.set_block(b);
                }
                self.fixed_count = Some(self.iteration_count(cx)?);
                if let Some(b) = here {
                    cx.e.set_block(b);
                }
                cx.e.set_loc(loc);
            }
        }
        for k in 0..nscan {
            let s = outs[1 + nv + k];
            let st = cx.e.ty(s);
            widened |= join_scan_type(n, &mut self.scan_types[k], st)?;
            if probing {
                continue;
            }
            let acc = dargs[2 + nv + k];
            let w = if fixed {
                let shape = static_dims(n, k, cx.e.ty(s))?;
                write_row(cx, acc, s, dargs[0], &shape, 0)?
            } else {
                let u = super::unsqueeze(cx, s, &[0])?;
                cx.e.op("data.concat", &[acc, u], vec![("axis", Attribute::i64(0))])?
            };
            yields.push(w);
        }
        let done = !widened && !probing;
        finish_attempt(cx, op, saved, done, &yields, &all_types, 2, acc_inits)
    }

    /// The cond region: `graph.condition (i < M) and c` passing every
    /// carried value through.
    fn cond_region(&self, cx: &mut Cx, region: RegionId, types: &[Type]) -> Res<()> {
        let (_, cargs) = block_with_args(cx, region, types);
        let go = match self.max_trip {
            Some(mt) => {
                let lt = cx.e.op("graph.less", &[cargs[0], mt], vec![])?;
                cx.e.op("graph.and", &[lt, cargs[1]], vec![])?
            }
            None => cargs[1],
        };
        let mut cond_ops = vec![go];
        cond_ops.extend(cargs.iter().copied());
        cx.e.b
            .create("graph.condition", &cond_ops, vec![], Some(vec![]), 0)?;
        Ok(())
    }

    /// The initial accumulators, empty along the new leading dim; None for a
    /// scan output whose type is not known yet.
    fn empty_accumulators(&self, cx: &mut Cx) -> Res<Vec<Option<ValueId>>> {
        let n = self.n;
        let mut acc_inits = vec![];
        for (k, t) in self.scan_types.iter().enumerate() {
            let Some(t) = t else {
                acc_inits.push(None);
                continue;
            };
            let tt = t
                .as_tensor()
                .ok_or_else(|| invalid(n, "scan output is not a tensor"))?;
            let shape: Option<Vec<usize>> = tt
                .shape()
                .iter()
                .map(|d| d.as_static().map(|v| v as usize))
                .collect();
            let Some(mut shape) = shape else {
                return Err(unsupported(
                    n,
                    format!("with scan output #{k} of dynamic shape '{t}'"),
                ));
            };
            if let Some(count) = self.fixed_count.flatten() {
                acc_inits.push(Some(self.full_accumulator(cx, k, count, &shape, tt.dtype)?));
                continue;
            }
            shape.insert(0, 0);
            let empty = zeros(cx, &shape, tt.dtype)?;
            acc_inits.push(Some(empty));
        }
        Ok(acc_inits)
    }
}

impl LoopImport<'_> {
    /// The iteration count `cond ? max(M, 0) : 0` as a 1-element i64 vector,
    /// built in the current (enclosing) block; None without a trip count or
    /// when the host prefix cannot compute it at run start.
    fn iteration_count(&self, cx: &mut Cx) -> Res<Option<ValueId>> {
        let Some(m) = self.max_trip else {
            return Ok(None);
        };
        let zero = cx.e.scalar(DType::I64, 0.0)?;
        let pos = cx.e.op("graph.max", &[m, zero], vec![])?;
        let count = cx.e.op("graph.where", &[self.cinit, pos, zero], vec![])?;
        let count = super::reshape(cx, count, &[1])?;
        let kind = ge_dialects::graph::specialize::ValueKind::Ints;
        if !cx.computable_at_run_start(&[(count, "shape", kind)]) {
            return Ok(None);
        }
        Ok(Some(count))
    }

    /// Scan output `k`'s accumulator when the loop runs `count` times: zeros
    /// of `[N, shape...]`, `N` a value symbol named after the output (a
    /// `graph.specialize` of `data.expand`, bound at run start).
    fn full_accumulator(
        &self,
        cx: &mut Cx,
        k: usize,
        count: ValueId,
        shape: &[usize],
        dt: DType,
    ) -> Res<ValueId> {
        let n = self.n;
        if let Some(c) = cx.e.const_value(count) {
            // A count known at import: a static accumulator.
            let c = usize::try_from(c.to_i64().first().copied().unwrap_or(0)).unwrap_or(0);
            let mut full = vec![c];
            full.extend_from_slice(shape);
            return zeros(cx, &full, dt);
        }
        let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        let target = if dims.is_empty() {
            count
        } else {
            let rest = cx.e.i64_vector(&dims)?;
            cx.e.op(
                "data.concat",
                &[count, rest],
                vec![("axis", Attribute::i64(0))],
            )?
        };
        let z = cx.e.scalar(dt, 0.0)?;
        let base = n
            .output_names
            .get(self.inits.len() + k)
            .filter(|o| !o.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("{}_scan_{k}", n.name));
        let kind = ge_dialects::graph::specialize::ValueKind::Ints;
        let r = cx.specialize_as(
            n,
            &base,
            "data.expand",
            &[z],
            vec![],
            &[(target, "shape", kind)],
            1,
        )?;
        let acc = *r
            .first()
            .ok_or_else(|| invalid(n, "data.expand gave no result"))?;
        // The leading dim is the value symbol; the others are static.
        let lead = cx.e.dims(acc)?.first().copied().unwrap_or(Dim::Unknown);
        let mut d = vec![lead];
        d.extend(shape.iter().map(|&x| Dim::Static(x as i64)));
        cx.e.b.body.set_value_type(acc, Type::tensor(&d, dt));
        Ok(acc)
    }
}

/// Whether the body's condition output `cond_out` is its condition input
/// `cond_in` (through identities) or a constant true: then the body never
/// ends the loop, which runs exactly `cond ? max(M, 0) : 0` times.
fn passes_condition_through(cx: &Cx, cond_out: ValueId, cond_in: ValueId) -> bool {
    let mut v = cond_out;
    loop {
        if v == cond_in {
            return true;
        }
        let body = &*cx.e.b.body;
        let Some(o) = body.defining_op(v) else {
            return false;
        };
        let d = body.op(o);
        let same_type =
            d.operands().len() == 1 && body.value_type(d.operands()[0]) == body.value_type(v);
        let identity = d.name.as_str() == "data.identity"
            || (d.name.as_str() == "graph.cast" && same_type)
            || (d.name.as_str() == "data.reshape" && same_type);
        if identity && d.operands().len() == 1 {
            v = d.operands()[0];
            continue;
        }
        return cx
            .e
            .const_value(v)
            .is_some_and(|c| c.len() == 1 && c.get_f(0) != 0.0);
    }
}

/// Scan output `k`'s static shape (one iteration's).
fn static_dims(n: &Node, k: usize, t: Type) -> Res<Vec<usize>> {
    t.as_tensor()
        .and_then(|tt| tt.dims.as_ref())
        .and_then(|d| {
            d.iter()
                .map(|x| x.as_static().and_then(|v| usize::try_from(v).ok()))
                .collect::<Option<Vec<usize>>>()
        })
        .ok_or_else(|| unsupported(n, format!("with scan output #{k} of dynamic shape '{t}'")))
}

/// `acc[.., pos, ..] = s` along `axis`: a scatter with the position
/// broadcast to the slice's shape (`shape`: one slice's, without the axis).
fn write_row(
    cx: &mut Cx,
    acc: ValueId,
    s: ValueId,
    pos: ValueId,
    shape: &[usize],
    axis: usize,
) -> Res<ValueId> {
    let upd = super::unsqueeze(cx, s, &[axis as i64])?;
    let mut ushape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    ushape.insert(axis, 1);
    let idx = cx.e.op(
        "data.broadcast_to",
        &[pos],
        vec![("shape", Attribute::i64_array(&ushape))],
    )?;
    Ok(cx.e.op(
        "graph.scatter_elements",
        &[acc, idx, upd],
        vec![("axis", Attribute::i64(axis as i64))],
    )?)
}

/// A new entry block of `region` with arguments of `types`, where ops are
/// inserted from now on.
fn block_with_args(cx: &mut Cx, region: RegionId, types: &[Type]) -> (BlockId, Vec<ValueId>) {
    let loc = cx.loc;
    let b = cx.e.b.body.add_block(region);
    let args = types
        .iter()
        .map(|&t| cx.e.b.body.add_block_arg(b, t, loc))
        .collect();
    cx.e.set_block(b);
    cx.e.set_loc(loc);
    (b, args)
}

/// Joins a scan output's type `got` into `slot`; true when it changed.
fn join_scan_type(n: &Node, slot: &mut Option<Type>, got: Type) -> Res<bool> {
    let j = match *slot {
        None => Some(got),
        Some(prev) => join_types(prev, got),
    }
    .ok_or_else(|| unsupported(n, "with scan outputs of changing rank"))?;
    let changed = *slot != Some(j);
    *slot = Some(j);
    Ok(changed)
}

/// Ends an attempt at a `graph.while` `op` built with result `types`: when
/// `done`, its do region yields `yields` and its results but the first
/// `skip` (the counters) are returned; else the op and the accumulators
/// `accs` are erased for a retry with wider types. The insertion point goes
/// back to `saved`.
#[allow(clippy::too_many_arguments)]
fn finish_attempt(
    cx: &mut Cx,
    op: OpId,
    saved: Option<BlockId>,
    done: bool,
    yields: &[ValueId],
    types: &[Type],
    skip: usize,
    accs: Vec<Option<ValueId>>,
) -> Res<Option<Vec<ValueId>>> {
    let loc = cx.loc;
    if done {
        cx.e.b
            .create("graph.yield", yields, vec![], Some(vec![]), 0)?;
    }
    if let Some(b) = saved {
        cx.e.set_block(b);
    }
    cx.e.set_loc(loc);
    if done {
        let results = cx.e.b.body.op(op).results().to_vec();
        for (&r, &t) in results.iter().zip(types) {
            cx.e.b.body.set_value_type(r, t);
        }
        return Ok(Some(results[skip..].to_vec()));
    }
    cx.e.b.body.erase_op(op);
    erase_accumulators(cx, accs);
    Ok(None)
}

/// Joins each carried type with the type the body yields for it; true
/// when one of them changed.
fn widen_types(n: &Node, carried: &mut [Type], cx: &Cx, outs: &[ValueId]) -> Res<bool> {
    let mut widened = false;
    for (k, &out) in outs.iter().enumerate() {
        let (want, got) = (carried[k], cx.e.ty(out));
        if want == got {
            continue;
        }
        let j = join_types(want, got).ok_or_else(|| {
            unsupported(
                n,
                format!("with loop-carried value #{k} changing from '{want}' to '{got}'"),
            )
        })?;
        if j != want {
            carried[k] = j;
            widened = true;
        }
    }
    Ok(widened)
}

/// The type of a scan output's accumulator: the output's type with a
/// leading `?` dim (a placeholder while the output's type is unknown).
fn accumulator_type(scan: Option<Type>) -> Type {
    scan.and_then(|t| {
        let tt = t.as_tensor()?;
        let mut d = vec![Dim::Unknown];
        d.extend(tt.shape().iter().copied());
        Some(Type::tensor(&d, tt.dtype))
    })
    .unwrap_or(placeholder())
}

/// Erases the accumulators of a dropped attempt with the constants they
/// slice.
fn erase_accumulators(cx: &mut Cx, acc_inits: Vec<Option<ValueId>>) {
    for z in acc_inits.into_iter().flatten() {
        if let Some(o) = cx.e.b.body.defining_op(z) {
            let src = cx.e.b.body.op(o).operands().to_vec();
            cx.e.b.body.erase_op(o);
            for s in src {
                if let Some(c) = cx.e.b.body.defining_op(s) {
                    cx.e.b.body.erase_op(c);
                }
            }
        }
    }
}

/// A zero tensor of `shape`: a scalar broadcast (folded to a constant when
/// small, so a huge accumulator costs nothing at import). Not folded with an
/// empty dim: the text format cannot spell an empty `dense<>` of rank > 1 yet.
fn zeros(cx: &mut Cx, shape: &[usize], dtype: DType) -> Res<ValueId> {
    let z = cx.e.scalar(dtype, 0.0)?;
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let fold = cx.e.fold;
    cx.e.fold = fold && !shape.contains(&0);
    let out = cx.e.op(
        "data.broadcast_to",
        &[z],
        vec![("shape", Attribute::i64_array(&dims))],
    );
    cx.e.fold = fold;
    Ok(out?)
}

/// Where a Scan reads its scan inputs and writes its scan outputs: an axis
/// and whether it runs from the end, per scan input and per scan output.
struct ScanAxes {
    /// Per scan input: its scan axis (resolved) and direction.
    inputs: Vec<(usize, bool)>,
    /// Per scan output: its axis as given (resolved against the output's
    /// rank once the body's types are known) and direction.
    outputs: Vec<(i64, bool)>,
}

/// Scan (opset 9 and newer; opset 8 in [`scan8`]): state variables carried
/// from one iteration to the next, scan inputs sliced along their axes (from
/// the end where a direction is 1) and scan outputs stacked along theirs:
///
/// ```text
/// graph.while (i = 0, s..., acc...) {
///   graph.condition i < N, i, s..., acc...
/// } do {
///   x_t = gather(x, i or N-1-i, axis)...; body(s..., x_t...) -> s_out..., y...
///   graph.yield i + 1, s_out..., scatter_elements(acc, i or N-1-i, y)...
/// }
/// ```
///
/// `N`, the length of the scan axis, must be static: each accumulator is a
/// zero tensor of the scan output's final shape, written one slice per
/// iteration, so the results keep static types (their sizes are planned).
pub fn scan(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    if n.opset < 9 {
        return scan8(cx, n);
    }
    let inputs: Vec<ValueId> = (0..n.num_inputs())
        .map(|i| n.input(i))
        .collect::<Res<_>>()?;
    let m = num_scan_inputs(n, inputs.len())?;
    let (states, xs) = inputs.split_at(inputs.len() - m);
    let body = n.graph("body")?;
    let nout = body.output.len().saturating_sub(states.len());
    let mut in_axes = vec![];
    for (k, &x) in xs.iter().enumerate() {
        let rank = cx.e.rank(x)?;
        if rank == 0 {
            return Err(invalid(n, format!("scan input #{k} is a scalar")));
        }
        let axis = list_attr(n, "scan_input_axes", k, 0)?;
        let r = rank as i64;
        if !(-r..r).contains(&axis) {
            return Err(invalid(
                n,
                format!("scan input #{k} has rank {rank}: its scan axis {axis} is out of range"),
            ));
        }
        in_axes.push(axis.rem_euclid(r) as usize);
    }
    let in_dirs = directions(n, "scan_input_directions", m)?;
    let out_dirs = directions(n, "scan_output_directions", nout)?;
    check_len(n, "scan_input_axes", m)?;
    check_len(n, "scan_output_axes", nout)?;
    let out_axes = (0..nout)
        .map(|k| list_attr(n, "scan_output_axes", k, 0))
        .collect::<Res<Vec<_>>>()?;
    let axes = ScanAxes {
        inputs: in_axes.into_iter().zip(in_dirs).collect(),
        outputs: out_axes.into_iter().zip(out_dirs).collect(),
    };
    scan_loop(cx, n, &body, states, xs, axes)
}

/// Scan as opset 8 defines it: every input has a leading batch dim, the
/// scan axis is the next one and `directions` says which scan inputs run
/// from the end (scan outputs are written forwards). Each batch element is
/// scanned on its own (one `graph.while` each; `MAX_BATCH` at most) and the
/// results are stacked again. `sequence_lens` is not supported.
fn scan8(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    /// The most batch elements unrolled into their own loops.
    const MAX_BATCH: i64 = 64;
    if n.opt_input(0).is_some() {
        return Err(unsupported(n, "with 'sequence_lens' given"));
    }
    let inputs: Vec<ValueId> = (1..n.num_inputs())
        .map(|i| n.input(i))
        .collect::<Res<_>>()?;
    let m = num_scan_inputs(n, inputs.len())?;
    let body = n.graph("body")?;
    let dirs = directions(n, "directions", m)?;
    let mut batch = None;
    for &v in &inputs {
        let dims = cx.e.dims(v)?;
        let Some(&d) = dims.first() else {
            return Err(invalid(n, "every input needs the batch dim (opset 8)"));
        };
        let Some(b) = d.as_static() else {
            return Err(unsupported(
                n,
                format!("with a dynamic batch dim ('{}')", cx.e.ty(v)),
            ));
        };
        if batch.is_some_and(|x| x != b) {
            return Err(invalid(n, "the inputs' batch dims differ"));
        }
        batch = Some(b);
    }
    let b = batch.unwrap_or(0);
    if !(1..=MAX_BATCH).contains(&b) {
        return Err(unsupported(
            n,
            format!("with a batch of {b} (1 to {MAX_BATCH} are)"),
        ));
    }
    let nout = body.output.len().saturating_sub(inputs.len() - m);
    let mut per_batch: Vec<Vec<ValueId>> = vec![];
    for i in 0..b {
        let idx = cx.e.scalar(DType::I64, i as f64)?;
        let mut sliced = vec![];
        for &v in &inputs {
            let s =
                cx.e.op("graph.gather", &[v, idx], vec![("axis", Attribute::i64(0))])?;
            sliced.push(s);
        }
        let (states, xs) = sliced.split_at(sliced.len() - m);
        if xs.iter().any(|&x| cx.e.rank(x).is_ok_and(|r| r == 0)) {
            return Err(invalid(
                n,
                "a scan input has no scan axis after the batch dim",
            ));
        }
        let axes = ScanAxes {
            inputs: dirs.iter().map(|&d| (0, d)).collect(),
            outputs: vec![(0, false); nout],
        };
        let outs = scan_loop(cx, n, &body, states, xs, axes)?;
        per_batch.push(outs);
    }
    let nres = per_batch.first().map_or(0, |o| o.len());
    let mut results = vec![];
    for k in 0..nres {
        let parts: Vec<ValueId> = per_batch
            .iter()
            .map(|o| super::unsqueeze(cx, o[k], &[0]))
            .collect::<Res<_>>()?;
        results.push(if parts.len() == 1 {
            parts[0]
        } else {
            cx.e.op("data.concat", &parts, vec![("axis", Attribute::i64(0))])?
        });
    }
    Ok(results)
}

/// `num_scan_inputs`, checked against the `available` inputs.
fn num_scan_inputs(n: &Node, available: usize) -> Res<usize> {
    let m = n
        .opt_i("num_scan_inputs")?
        .ok_or_else(|| invalid(n, "the attribute 'num_scan_inputs' is required"))?;
    match usize::try_from(m) {
        Ok(m) if (1..=available).contains(&m) => Ok(m),
        _ => Err(invalid(
            n,
            format!(
                "num_scan_inputs is {m}, but the node has {available} state and scan inputs (it must be 1 to {available})"
            ),
        )),
    }
}

/// Entry `k` of an optional integer list attribute (`default` without it).
fn list_attr(n: &Node, name: &str, k: usize, default: i64) -> Res<i64> {
    Ok(n.ints(name)
        .and_then(|v| v.get(k).copied())
        .unwrap_or(default))
}

/// An optional list attribute given must have one entry per input/output.
fn check_len(n: &Node, name: &str, want: usize) -> Res<()> {
    match n.ints(name) {
        Some(v) if v.len() != want => Err(invalid(
            n,
            format!(
                "'{name}' has {} entries, but there are {want} {}",
                v.len(),
                what(name)
            ),
        )),
        _ => Ok(()),
    }
}

/// What a Scan list attribute has one entry of.
fn what(name: &str) -> &'static str {
    if name.starts_with("scan_output") {
        "scan outputs"
    } else {
        "scan inputs"
    }
}

/// A direction list attribute: true where the entry says reverse (1).
fn directions(n: &Node, name: &str, want: usize) -> Res<Vec<bool>> {
    check_len(n, name, want)?;
    (0..want)
        .map(|k| match list_attr(n, name, k, 0)? {
            0 => Ok(false),
            1 => Ok(true),
            d => Err(invalid(n, format!("'{name}' entry {d} is neither 0 nor 1"))),
        })
        .collect()
}

/// The `graph.while` of a Scan with `states` carried and `xs` scanned.
fn scan_loop(
    cx: &mut Cx,
    n: &Node,
    body: &GraphProto,
    states: &[ValueId],
    xs: &[ValueId],
    axes: ScanAxes,
) -> Res<Vec<ValueId>> {
    let nstate = states.len();
    if body.input.len() != nstate + xs.len() {
        return Err(invalid(
            n,
            format!(
                "the body takes {} inputs, but there are {nstate} state variables and {} scan inputs",
                body.input.len(),
                xs.len()
            ),
        ));
    }
    if body.output.len() != nstate + axes.outputs.len() {
        return Err(invalid(
            n,
            "the body must return every state variable, then the scan outputs",
        ));
    }
    let mut len = None;
    for (k, (&x, &(axis, _))) in xs.iter().zip(&axes.inputs).enumerate() {
        let d = cx.e.dims(x)?.get(axis).copied().unwrap_or(Dim::Unknown);
        let Some(l) = d.as_static() else {
            return Err(unsupported(
                n,
                format!(
                    "over scan input #{k} ('{}') whose scan axis is not static",
                    cx.e.ty(x)
                ),
            ));
        };
        if let Some(p) = len.filter(|&p| p != l) {
            return Err(invalid(
                n,
                format!(
                    "scan input #{k} has {l} steps along its scan axis, but scan input #0 has {p}"
                ),
            ));
        }
        len = Some(l);
    }
    let len = len.unwrap_or(0);
    let mut sc = ScanImport {
        n,
        body,
        states,
        xs,
        axes,
        len,
        i0: cx.e.scalar(DType::I64, 0.0)?,
        trips: cx.e.scalar(DType::I64, len as f64)?,
        carried: states.iter().map(|&v| cx.e.ty(v)).collect(),
        out_types: vec![None; body.output.len() - nstate],
    };
    settle(cx, n, "state", |cx| sc.attempt(cx))
}

/// One ONNX Scan being imported (see [`scan`]).
struct ScanImport<'a> {
    n: &'a Node,
    body: &'a GraphProto,
    states: &'a [ValueId],
    xs: &'a [ValueId],
    axes: ScanAxes,
    /// The length of the scan axis: the number of iterations.
    len: i64,
    i0: ValueId,
    trips: ValueId,
    carried: Vec<Type>,
    /// The body's scan output types; None until an attempt has seen them.
    out_types: Vec<Option<Type>>,
}

impl ScanImport<'_> {
    /// Scan output `k`'s static shape and its axis in the stacked result.
    fn out_shape(&self, k: usize, t: Type) -> Res<(Vec<usize>, usize)> {
        let n = self.n;
        let dims = static_dims(n, k, t)?;
        let axis = norm_axis(n, self.axes.outputs[k].0, dims.len() + 1)?;
        Ok((dims, axis))
    }

    /// Builds the `graph.while` with the current types (see
    /// [`LoopImport::attempt`]).
    fn attempt(&mut self, cx: &mut Cx) -> Res<Option<Vec<ValueId>>> {
        let (n, nstate, loc) = (self.n, self.states.len(), cx.loc);
        let probing = self.out_types.iter().any(|t| t.is_none());
        let mut accs = vec![];
        let mut shapes = vec![];
        if !probing {
            for (k, t) in self.out_types.iter().flatten().enumerate() {
                let (mut shape, axis) = self.out_shape(k, *t)?;
                shapes.push((shape.clone(), axis));
                shape.insert(axis, self.len as usize);
                let dt = t
                    .dtype()
                    .ok_or_else(|| invalid(n, "a scan output is not a tensor"))?;
                accs.push(zeros(cx, &shape, dt)?);
            }
        }
        let mut operands = vec![self.i0];
        operands.extend(self.states.iter().copied());
        operands.extend(accs.iter().copied());
        let mut types = vec![cx.e.ty(self.i0)];
        types.extend(self.carried.iter().copied());
        types.extend(accs.iter().map(|&a| cx.e.ty(a)));
        let op = create_with_regions(cx, "graph.while", &operands, types.len(), 2)?;
        let regions = cx.e.b.body.op(op).regions().to_vec();
        let saved = cx.e.insertion_block();
        // cond region: i < N
        let (_, cargs) = block_with_args(cx, regions[0], &types);
        let go = cx.e.op("graph.less", &[cargs[0], self.trips], vec![])?;
        let mut cond_ops = vec![go];
        cond_ops.extend(cargs.iter().copied());
        cx.e.b
            .create("graph.condition", &cond_ops, vec![], Some(vec![]), 0)?;
        // do region: this iteration's slices, the body, the updates
        let (db, dargs) = block_with_args(cx, regions[1], &types);
        let one = cx.e.scalar(DType::I64, 1.0)?;
        let last = cx.e.scalar(DType::I64, (self.len - 1) as f64)?;
        let back = cx.e.op("graph.sub", &[last, dargs[0]], vec![])?;
        let pos = |rev: bool| if rev { back } else { dargs[0] };
        let mut args = dargs[1..1 + nstate].to_vec();
        for (&x, &(axis, rev)) in self.xs.iter().zip(&self.axes.inputs) {
            let s = cx.e.op(
                "graph.gather",
                &[x, pos(rev)],
                vec![("axis", Attribute::i64(axis as i64))],
            )?;
            args.push(s);
        }
        let outs = cx.convert_subgraph(self.body, db, &args)?;
        cx.e.set_block(db);
        cx.e.set_loc(loc);
        let next_i = cx.e.op("graph.add", &[dargs[0], one], vec![])?;
        let mut yields = vec![next_i];
        yields.extend(outs[..nstate].iter().copied());
        let mut widened = widen_types(n, &mut self.carried, cx, &outs[..nstate])?;
        for k in 0..self.out_types.len() {
            let s = outs[nstate + k];
            let st = cx.e.ty(s);
            widened |= join_scan_type(n, &mut self.out_types[k], st)?;
            if let Some((shape, axis)) = shapes.get(k) {
                let acc = dargs[1 + nstate + k];
                let p = pos(self.axes.outputs[k].1);
                yields.push(write_row(cx, acc, s, p, shape, *axis)?);
            }
        }
        let done = !widened && !probing;
        let accs = accs.into_iter().map(Some).collect();
        finish_attempt(cx, op, saved, done, &yields, &types, 1, accs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_scalar_against_one_element_is_promoted() {
        let t = |d: &[i64]| Type::tensor_static(d, DType::F32);
        assert_eq!(scalar_side(t(&[]), t(&[1])), Some(0));
        assert_eq!(scalar_side(t(&[1]), t(&[])), Some(1));
        assert_eq!(scalar_side(t(&[]), t(&[2])), None);
        assert_eq!(scalar_side(t(&[]), t(&[1, 1])), None);
        assert_eq!(
            scalar_side(t(&[]), Type::tensor_static(&[1], DType::I64)),
            None
        );
        assert_eq!(scalar_side(t(&[1]), t(&[1])), None);
    }
}
