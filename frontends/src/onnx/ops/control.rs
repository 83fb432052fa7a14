//! Control flow: If → `graph.if` (inlined when the condition is a constant),
//! Loop → `graph.while` with the iteration count and condition carried.

use super::{invalid, unsupported, Cx, Node, Res};
use crate::onnx::graph::join_types;
use crate::proto::onnx::GraphProto;
use ge_ir::attributes::Attribute;
use ge_ir::body::{OpId, RegionId, ValueId};
use ge_ir::tensor::Tensor;
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
    for (r, g) in regions.iter().zip([&then_g, &else_g]) {
        let block = cx.e.b.body.add_block(*r);
        let outs = cx.convert_subgraph(g, block, &[])?;
        let saved = cx.e.insertion_block();
        cx.e.set_block(block);
        cx.e.set_loc(loc);
        cx.e.b
            .create("graph.yield", &outs, vec![], Some(vec![]), 0)?;
        if let Some(b) = saved {
            cx.e.set_block(b);
        }
        yields.push(outs);
    }
    let results = cx.e.b.body.op(op).results().to_vec();
    for (k, &res) in results.iter().enumerate() {
        let (a, b) = (cx.e.ty(yields[0][k]), cx.e.ty(yields[1][k]));
        let t = join_types(a, b).ok_or_else(|| {
            unsupported(
                n,
                format!("with branches yielding '{a}' and '{b}' as output #{k}"),
            )
        })?;
        cx.e.b.body.set_value_type(res, t);
    }
    Ok(results)
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
/// Scan outputs are accumulated along a new leading dim (`?` sized).
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
    };
    lp.scan_types = vec![None; lp.nscan];
    // Carried types: start from the initial values, widen until the body's
    // yields fit (at most a few rounds: each round can only add `?` dims).
    for _round in 0..4 {
        if let Some(results) = lp.attempt(cx)? {
            return Ok(results);
        }
    }
    cx.e.set_loc(Location::unknown());
    Err(unsupported(n, "whose loop-carried types do not settle"))
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
}

impl LoopImport<'_> {
    /// Builds the `graph.while` with the current types. Returns its results
    /// when the body's yields fit them; else erases it, widens the types and
    /// returns None (a first attempt only probes the scan outputs' types).
    fn attempt(&mut self, cx: &mut Cx) -> Res<Option<Vec<ValueId>>> {
        let (n, nv, nscan, loc) = (self.n, self.inits.len(), self.nscan, cx.loc);
        let mut all_types = vec![cx.e.ty(self.i0), cx.e.ty(self.cinit)];
        all_types.extend(self.carried.iter().copied());
        all_types.extend(self.scan_types.iter().map(|&t| accumulator_type(t)));
        let acc_inits = self.empty_accumulators(cx)?;
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
        let db = cx.e.b.body.add_block(regions[1]);
        let dargs: Vec<ValueId> = all_types[..ncarried]
            .iter()
            .map(|&t| cx.e.b.body.add_block_arg(db, t, loc))
            .collect();
        let outs = cx.convert_subgraph(&self.body, db, &dargs[..2 + nv])?;
        cx.e.set_block(db);
        cx.e.set_loc(loc);
        let one = cx.e.scalar(DType::I64, 1.0)?;
        let next_i = cx.e.op("graph.add", &[dargs[0], one], vec![])?;
        let cond_out = scalar_bool(cx, outs[0])?;
        let mut yields = vec![next_i, cond_out];
        yields.extend(outs[1..1 + nv].iter().copied());
        let mut widened = self.widen_carried(cx, &outs[1..1 + nv])?;
        let mut new_scan = self.scan_types.clone();
        for k in 0..nscan {
            let s = outs[1 + nv + k];
            let st = cx.e.ty(s);
            let j = match self.scan_types[k] {
                None => Some(st),
                Some(prev) => join_types(prev, st),
            }
            .ok_or_else(|| unsupported(n, "with scan outputs of changing rank"))?;
            if Some(j) != self.scan_types[k] {
                new_scan[k] = Some(j);
                widened = true;
            }
            if !probing {
                let u = super::unsqueeze(cx, s, &[0])?;
                let acc = dargs[2 + nv + k];
                let cat =
                    cx.e.op("data.concat", &[acc, u], vec![("axis", Attribute::i64(0))])?;
                yields.push(cat);
            }
        }
        if !widened && !probing {
            cx.e.b
                .create("graph.yield", &yields, vec![], Some(vec![]), 0)?;
            if let Some(b) = saved {
                cx.e.set_block(b);
            }
            cx.e.set_loc(loc);
            let results = cx.e.b.body.op(op).results().to_vec();
            for (&r, &t) in results.iter().zip(&all_types) {
                cx.e.b.body.set_value_type(r, t);
            }
            return Ok(Some(results[2..].to_vec()));
        }
        // Retry with the widened types: drop this attempt.
        if let Some(b) = saved {
            cx.e.set_block(b);
        }
        cx.e.b.body.erase_op(op);
        erase_accumulators(cx, acc_inits);
        self.scan_types = new_scan;
        Ok(None)
    }

    /// The cond region: `graph.condition (i < M) and c` passing every
    /// carried value through.
    fn cond_region(&self, cx: &mut Cx, region: RegionId, types: &[Type]) -> Res<()> {
        let loc = cx.loc;
        let cb = cx.e.b.body.add_block(region);
        let cargs: Vec<ValueId> = types
            .iter()
            .map(|&t| cx.e.b.body.add_block_arg(cb, t, loc))
            .collect();
        cx.e.set_block(cb);
        cx.e.set_loc(loc);
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

    /// Joins each carried type with the type the body yields for it; true
    /// when one of them changed.
    fn widen_carried(&mut self, cx: &Cx, outs: &[ValueId]) -> Res<bool> {
        let mut widened = false;
        for (k, &out) in outs.iter().enumerate() {
            let (want, got) = (self.carried[k], cx.e.ty(out));
            if want == got {
                continue;
            }
            let j = join_types(want, got).ok_or_else(|| {
                unsupported(
                    self.n,
                    format!("with loop-carried value #{k} changing from '{want}' to '{got}'"),
                )
            })?;
            if j != want {
                self.carried[k] = j;
                widened = true;
            }
        }
        Ok(widened)
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
            // An empty accumulator: a slice of nothing from a one-row zero
            // tensor (unfolded: the text format cannot spell an empty
            // `dense<>` of rank > 1 yet).
            shape.insert(0, 1);
            let z = cx.e.constant(&Tensor::zeros(shape, tt.dtype))?;
            let fold = std::mem::replace(&mut cx.e.fold, false);
            let empty = cx.e.op(
                "data.slice",
                &[z],
                vec![
                    ("starts", Attribute::i64_array(&[0])),
                    ("ends", Attribute::i64_array(&[0])),
                    ("axes", Attribute::i64_array(&[0])),
                ],
            );
            cx.e.fold = fold;
            acc_inits.push(Some(empty?));
        }
        Ok(acc_inits)
    }
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
