//! Evaluating TensorFlow graphs into IR: values on demand, scopes, control
//! flow and function calls.
//!
//! A value is computed when something needs it (`Importer::eval`: an
//! iterative post-order walk, so deep graphs do not recurse), in the current
//! *scope*: a memo of `(node, output) → value` for one graph (the model's
//! GraphDef or a library function's body), stacked for regions and calls.
//! Nodes needed inside a region are emitted into the region's block; values
//! of enclosing scopes of the same graph are visible there.
//!
//! - **v1 loops** (`Enter/Merge/Switch/NextIteration/LoopCond/Exit`, the
//!   frames of [`super::graph::Frames`]): needing an `Exit` builds the whole
//!   loop as one `graph.while` — the loop variables (non-constant `Enter`s)
//!   are carried, the `Merge`s are the condition region's arguments and the
//!   `Switch` true outputs the body's, `NextIteration` inputs are yielded,
//!   constant `Enter`s are the outer values.
//! - **v1 conditionals**: a `Merge` outside a loop header is an `if`: its
//!   predicate is found from the `Switch`es feeding its inputs
//!   ([`super::graph::cond_of`]); each branch region sees those switches'
//!   taken output as the switched value and the other as dead.
//! - **Functional control flow and calls** (`While`/`StatelessWhile`,
//!   `If`/`StatelessIf`, `PartitionedCall`/`StatefulPartitionedCall`): the
//!   library function's body is evaluated in a scope whose `_Arg` nodes are
//!   bound to the region's arguments (or the call's operands: calls inline).
//! - **Resources** (variables of a SavedModel): `VarHandleOp` is a resource
//!   value bound to its checkpoint tensor; `ReadVariableOp`, or any op given a
//!   resource as a tensor operand, reads it as a constant (this freezes the
//!   variables). Resources passed through loops stay loop invariants.
//! - **TensorLists** are plain tensors with a leading element dim (the
//!   mapping functions in `ops/list.rs`).

use super::graph::{cond_of, is_loop_merge_node, loop_of, Graph};
use super::{lookup, Res, TfCx, TfNode};
use crate::error::ImportError;
use crate::onnx::graph::join_types;
use crate::proto::tensorflow::{attr_value, FunctionDef};
use ge_ir::attributes::Attribute;
use ge_ir::body::{OpId, ValueId};
use ge_ir::{DType, Location, Type};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// A TensorFlow value: a tensor, a resource (a variable's value), or dead (the
/// untaken output of a `Switch`).
#[derive(Clone, Copy, Debug)]
pub enum V {
    T(ValueId),
    Res(Attribute),
    Dead,
}

struct Scope {
    gid: usize,
    memo: HashMap<(usize, usize), V>,
}

pub struct Importer<'a> {
    pub cx: TfCx<'a>,
    graphs: Vec<Rc<Graph>>,
    fn_ids: HashMap<String, usize>,
    library: HashMap<String, FunctionDef>,
    scopes: Vec<Scope>,
    /// Resource values of `VarHandleOp` nodes of the main graph, by node name.
    pub variables: HashMap<String, Attribute>,
    file_loc: Location,
    /// Nesting of regions and calls, bounded.
    depth: usize,
}

const MAX_DEPTH: usize = 64;

/// A loop body: the region's arguments to the values it yields.
type BodyFn<'f, 'a> = dyn FnMut(&mut Importer<'a>, &[V]) -> Res<Vec<V>> + 'f;

fn unsupported(g: &Graph, n: usize, m: impl std::fmt::Display) -> ImportError {
    let node = &g.nodes[n];
    ImportError::unsupported(format!("node '{}' ({}): {m}", node.name, node.op))
}

impl<'a> Importer<'a> {
    pub fn new(
        cx: TfCx<'a>,
        main: Graph,
        library: Vec<FunctionDef>,
        file_loc: Location,
    ) -> Importer<'a> {
        let library = library
            .into_iter()
            .filter_map(|f| Some((f.signature.as_ref()?.name.clone(), f)))
            .collect();
        Importer {
            cx,
            graphs: vec![Rc::new(main)],
            fn_ids: HashMap::new(),
            library,
            scopes: vec![Scope {
                gid: 0,
                memo: HashMap::new(),
            }],
            variables: HashMap::new(),
            file_loc,
            depth: 0,
        }
    }

    pub fn main(&self) -> Rc<Graph> {
        self.graphs[0].clone()
    }

    /// Bind a node output of the main graph (placeholders → arguments).
    pub fn bind(&mut self, node: usize, port: usize, v: V) {
        if let Some(s) = self.scopes.first_mut() {
            s.memo.insert((node, port), v);
        }
    }

    fn lookup(&self, gid: usize, key: (usize, usize)) -> Option<V> {
        for s in self.scopes.iter().rev() {
            if s.gid != gid {
                break;
            }
            if let Some(v) = s.memo.get(&key) {
                return Some(*v);
            }
        }
        None
    }

    fn store(&mut self, key: (usize, usize), v: V) {
        if let Some(s) = self.scopes.last_mut() {
            s.memo.insert(key, v);
        }
    }

    fn push_scope(&mut self, gid: usize, memo: HashMap<(usize, usize), V>) -> Res<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ImportError::unsupported(format!(
                "control flow or function calls nest more than {MAX_DEPTH} deep"
            )));
        }
        self.scopes.push(Scope { gid, memo });
        Ok(())
    }

    fn pop_scope(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.scopes.pop();
    }

    /// The graph of library function `name` (converted once).
    fn function(&mut self, name: &str) -> Res<usize> {
        if let Some(&id) = self.fn_ids.get(name) {
            return Ok(id);
        }
        let f = self.library.get(name).ok_or_else(|| {
            ImportError::invalid(format!("function '{name}' is not in the graph's library"))
        })?;
        let g = Graph::from_function(f)?;
        self.graphs.push(Rc::new(g));
        let id = self.graphs.len() - 1;
        self.fn_ids.insert(name.to_string(), id);
        Ok(id)
    }

    /// What `n` needs evaluated before it.
    fn deps(&self, g: &Graph, n: usize) -> Res<Vec<(usize, usize)>> {
        let node = &g.nodes[n];
        Ok(match node.op.as_str() {
            "Exit" => {
                let frames = g
                    .frames()
                    .ok_or_else(|| unsupported(g, n, "an Exit outside any loop frame"))?;
                let lp = loop_of(g, frames, frames.of[n])?;
                lp.vars
                    .iter()
                    .map(|v| v.enter)
                    .chain(lp.invariants.iter().copied())
                    .filter_map(|e| g.nodes[e].inputs.first().copied())
                    .collect()
            }
            "Merge" if !is_loop_merge_node(g, n) => {
                let (pred, _, switches) = cond_of(g, n)?;
                let mut d = vec![pred];
                d.extend(
                    switches
                        .iter()
                        .filter_map(|&s| g.nodes[s].inputs.first().copied()),
                );
                d
            }
            "Merge" | "Enter" | "NextIteration" => {
                return Err(unsupported(
                    g,
                    n,
                    "reached outside its loop (a v1 loop whose structure is not recognised)",
                ))
            }
            _ => node.inputs.clone(),
        })
    }

    /// The values of `wanted` outputs of graph `gid`, evaluating what is
    /// missing in the current scope.
    pub fn eval(&mut self, gid: usize, wanted: &[(usize, usize)]) -> Res<Vec<V>> {
        let g = self.graphs[gid].clone();
        let mut done: HashSet<usize> = HashSet::new();
        let mut visiting: HashSet<usize> = HashSet::new();
        let mut stack: Vec<(usize, bool)> = vec![];
        for &(n, p) in wanted.iter().rev() {
            if self.lookup(gid, (n, p)).is_none() {
                stack.push((n, false));
            }
        }
        while let Some((n, expanded)) = stack.pop() {
            if expanded {
                visiting.remove(&n);
                self.eval_node(gid, &g, n)?;
                done.insert(n);
                continue;
            }
            if done.contains(&n) {
                continue;
            }
            if !visiting.insert(n) {
                return Err(unsupported(
                    &g,
                    n,
                    "is on a cycle that is not a recognised v1 while loop",
                ));
            }
            stack.push((n, true));
            for (d, p) in self.deps(&g, n)?.into_iter().rev() {
                if self.lookup(gid, (d, p)).is_none() && !done.contains(&d) {
                    if visiting.contains(&d) {
                        return Err(unsupported(
                            &g,
                            d,
                            "is on a cycle that is not a recognised v1 while loop",
                        ));
                    }
                    stack.push((d, false));
                }
            }
        }
        wanted
            .iter()
            .map(|&(n, p)| {
                self.lookup(gid, (n, p))
                    .ok_or_else(|| unsupported(&g, n, format_args!("has no output #{p}")))
            })
            .collect()
    }

    fn input(&self, gid: usize, g: &Graph, n: usize, i: usize) -> Res<V> {
        let key = *g.nodes[n]
            .inputs
            .get(i)
            .ok_or_else(|| unsupported(g, n, format_args!("needs input #{i}")))?;
        self.lookup(gid, key)
            .ok_or_else(|| unsupported(g, n, format_args!("input #{i} has no value")))
    }

    /// A tensor operand: resources are read (frozen to constants).
    fn tensor(&mut self, g: &Graph, n: usize, v: V) -> Res<ValueId> {
        match v {
            V::T(t) => Ok(t),
            V::Res(a) => Ok(self.cx.e.constant_attr(a)?),
            V::Dead => Err(unsupported(
                g,
                n,
                "reads the untaken output of a Switch (an unrecognised conditional)",
            )),
        }
    }

    fn eval_node(&mut self, gid: usize, g: &Graph, n: usize) -> Res<()> {
        let node = &g.nodes[n];
        let loc = Location::name(&node.name, Some(self.file_loc));
        self.cx.e.set_loc(loc);
        let ctx_msg = || format!("node '{}' ({})", node.name, node.op);
        let outs: Vec<V> = match node.op.as_str() {
            "NoOp" | "Assert" => vec![],
            "_Arg" | "Placeholder" => {
                return Err(unsupported(g, n, "is an input that was not bound"));
            }
            "Identity" | "StopGradient" | "Snapshot" | "PreventGradient" | "CheckNumerics"
            | "LoopCond" | "EnsureShape" | "NextIteration" => vec![self.input(gid, g, n, 0)?],
            "IdentityN" => (0..node.inputs.len())
                .map(|i| self.input(gid, g, n, i))
                .collect::<Res<_>>()?,
            "VarHandleOp" => {
                let a = if gid == 0 {
                    self.variables.get(&node.name).copied()
                } else {
                    None
                };
                vec![V::Res(a.ok_or_else(|| {
                    ImportError::unsupported(format!(
                        "{}: variable '{}' has no value (freeze the graph, or import the SavedModel directory)",
                        ctx_msg(),
                        g.s_attr(n, "shared_name").unwrap_or_default()
                    ))
                })?)]
            }
            "ReadVariableOp" => {
                let v = self.input(gid, g, n, 0)?;
                vec![V::T(self.tensor(g, n, v)?)]
            }
            "Exit" => return self.build_loop(gid, g, n).map_err(|e| e.context(ctx_msg())),
            "Merge" => return self.build_cond(gid, g, n).map_err(|e| e.context(ctx_msg())),
            "Switch" => {
                return Err(unsupported(
                    g,
                    n,
                    "is not part of a recognised while loop or conditional",
                ))
            }
            "While" | "StatelessWhile" => self
                .functional_while(gid, g, n)
                .map_err(|e| e.context(ctx_msg()))?,
            "If" | "StatelessIf" => self
                .functional_if(gid, g, n)
                .map_err(|e| e.context(ctx_msg()))?,
            "PartitionedCall" | "StatefulPartitionedCall" => {
                let f = func_attr(g, n, "f").map_err(|e| e.context(ctx_msg()))?;
                let args = (0..node.inputs.len())
                    .map(|i| self.input(gid, g, n, i))
                    .collect::<Res<Vec<_>>>()?;
                self.call(&f, &args).map_err(|e| e.context(ctx_msg()))?
            }
            op => {
                let map = lookup(op).ok_or_else(|| unsupported(g, n, "unsupported operator"))?;
                let mut inputs = Vec::with_capacity(node.inputs.len());
                for i in 0..node.inputs.len() {
                    let v = self.input(gid, g, n, i)?;
                    inputs.push(self.tensor(g, n, v)?);
                }
                let tn = TfNode {
                    name: node.name.clone(),
                    op: node.op.clone(),
                    inputs,
                    attrs: node.attrs.clone(),
                };
                map(&mut self.cx, &tn)
                    .map_err(|e| e.context(ctx_msg()))?
                    .into_iter()
                    .map(V::T)
                    .collect()
            }
        };
        for (k, v) in outs.into_iter().enumerate() {
            self.store((n, k), v);
        }
        Ok(())
    }

    /// Run library function `name` on `args` inline: its outputs.
    fn call(&mut self, name: &str, args: &[V]) -> Res<Vec<V>> {
        let fid = self.function(name)?;
        let fg = self.graphs[fid].clone();
        if fg.args.len() != args.len() {
            return Err(ImportError::invalid(format!(
                "function '{name}' takes {} arguments, but is given {}",
                fg.args.len(),
                args.len()
            )));
        }
        let memo = fg
            .args
            .iter()
            .zip(args)
            .map(|(&a, &v)| ((a, 0), v))
            .collect();
        self.push_scope(fid, memo)?;
        let r = self.eval(fid, &fg.rets.clone());
        self.pop_scope();
        r.map_err(|e| e.context(format!("in function '{name}'")))
    }

    /// A condition value as a rank-0 i1 tensor.
    fn scalar_bool(&mut self, c: ValueId) -> Res<ValueId> {
        let c = if self.cx.e.dtype(c)? == DType::I1 {
            c
        } else {
            // TensorFlow: a non-boolean condition is true when non-zero.
            let z = self.cx.scalar_like(c, 0.0)?;
            let eq = self.cx.op("graph.equal", &[c, z], vec![])?;
            self.cx.op("graph.not", &[eq], vec![])?
        };
        if self.cx.e.rank(c)? == 0 {
            return Ok(c);
        }
        self.cx.op(
            "data.reshape",
            &[c],
            vec![("shape", Attribute::i64_array(&[]))],
        )
    }

    fn create_region_op(
        &mut self,
        name: &str,
        operands: &[ValueId],
        results: Vec<Type>,
    ) -> Res<OpId> {
        Ok(self
            .cx
            .e
            .b
            .create(name, operands, vec![], Some(results), 2)?)
    }

    /// `graph.while` over carried values: `cond(args) -> V` and
    /// `body(args) -> Vec<V>` evaluate the regions (scopes pushed by them).
    /// Returns the loop's results (resources pass through unchanged).
    fn make_while(
        &mut self,
        inits: &[V],
        cond: &mut dyn FnMut(&mut Self, &[V]) -> Res<V>,
        body: &mut BodyFn<'_, 'a>,
    ) -> Res<Vec<V>> {
        if let Some(i) = inits.iter().position(|v| matches!(v, V::Dead)) {
            return Err(ImportError::unsupported(format!(
                "loop variable #{i} is the untaken output of a Switch"
            )));
        }
        let init_vals: Vec<ValueId> = inits
            .iter()
            .filter_map(|v| match v {
                V::T(t) => Some(*t),
                _ => None,
            })
            .collect();
        let mut types: Vec<Type> = init_vals.iter().map(|&v| self.cx.e.ty(v)).collect();
        let loc = self.cx.e.b.loc;
        let saved = self.cx.e.insertion_block();
        // A carried value whose type the body widens (a dim becoming
        // dynamic) makes the loop be built again with the wider types.
        for _round in 0..4 {
            let op = self.create_region_op("graph.while", &init_vals, types.clone())?;
            let regions = self.cx.e.b.body.op(op).regions().to_vec();
            // condition region
            let cb = self.cx.e.b.body.add_block(regions[0]);
            let cargs = self.loop_block_args(cb, inits, &types, loc);
            self.cx.e.set_block(cb);
            let c = cond(self, &cargs)?;
            self.cx.e.set_loc(loc);
            let c = match c {
                V::T(t) => self.scalar_bool(t)?,
                _ => {
                    return Err(ImportError::unsupported(
                        "a loop condition that is not a tensor",
                    ))
                }
            };
            let mut ops = vec![c];
            ops.extend(cargs.iter().filter_map(|v| match v {
                V::T(t) => Some(*t),
                _ => None,
            }));
            self.cx
                .e
                .b
                .create("graph.condition", &ops, vec![], Some(vec![]), 0)?;
            // body region
            let db = self.cx.e.b.body.add_block(regions[1]);
            let dargs = self.loop_block_args(db, inits, &types, loc);
            self.cx.e.set_block(db);
            let outs = body(self, &dargs)?;
            self.cx.e.set_loc(loc);
            let (yields, widened) = self.loop_yields(inits, &outs, &mut types)?;
            if widened {
                if let Some(b) = saved {
                    self.cx.e.set_block(b);
                }
                self.cx.e.b.body.erase_op(op);
                continue;
            }
            self.cx
                .e
                .b
                .create("graph.yield", &yields, vec![], Some(vec![]), 0)?;
            if let Some(b) = saved {
                self.cx.e.set_block(b);
            }
            self.cx.e.set_loc(loc);
            let results = self.cx.e.b.body.op(op).results().to_vec();
            let mut k = 0;
            return Ok(inits
                .iter()
                .map(|v| match v {
                    V::T(_) => {
                        k += 1;
                        V::T(results[k - 1])
                    }
                    other => *other,
                })
                .collect());
        }
        Err(ImportError::unsupported("loop-carried types do not settle"))
    }

    /// The loop variables inside a region of a `graph.while`: a new argument
    /// of `block` (of the carried `types`) per tensor, resources as they are.
    fn loop_block_args(
        &mut self,
        block: ge_ir::body::BlockId,
        inits: &[V],
        types: &[Type],
        loc: Location,
    ) -> Vec<V> {
        let mut k = 0;
        inits
            .iter()
            .map(|v| match v {
                V::T(_) => {
                    let a = self.cx.e.b.body.add_block_arg(block, types[k], loc);
                    k += 1;
                    V::T(a)
                }
                other => *other,
            })
            .collect()
    }

    /// The values the loop body yields for the carried variables, and whether
    /// one of them widened its carried type (`types`, joined in place).
    fn loop_yields(
        &mut self,
        inits: &[V],
        outs: &[V],
        types: &mut [Type],
    ) -> Res<(Vec<ValueId>, bool)> {
        if outs.len() != inits.len() {
            return Err(ImportError::invalid(format!(
                "the loop body gives {} values for {} loop variables",
                outs.len(),
                inits.len()
            )));
        }
        let carried = (0..inits.len()).filter(|&i| matches!(inits[i], V::T(_)));
        let mut yields = vec![];
        let mut widened = false;
        for (k, i) in carried.enumerate() {
            let v = match outs[i] {
                V::T(t) => t,
                _ => {
                    return Err(ImportError::unsupported(format!(
                        "loop variable #{i} becomes a resource or dead value in the body"
                    )))
                }
            };
            let got = self.cx.e.ty(v);
            if got != types[k] {
                let j = join_types(types[k], got).ok_or_else(|| {
                    ImportError::unsupported(format!(
                        "loop variable #{i} changes from '{}' to '{got}'",
                        types[k]
                    ))
                })?;
                if j != types[k] {
                    types[k] = j;
                    widened = true;
                }
            }
            yields.push(v);
        }
        Ok((yields, widened))
    }

    /// `graph.if` with `nres` results: `branch(self, true/false)` evaluates a
    /// region (its scope pushed by it).
    fn make_if(
        &mut self,
        cond: ValueId,
        nres: usize,
        branch: &mut dyn FnMut(&mut Self, bool) -> Res<Vec<V>>,
    ) -> Res<Vec<V>> {
        let c = self.scalar_bool(cond)?;
        let loc = self.cx.e.b.loc;
        let saved = self.cx.e.insertion_block();
        let placeholder = Type::unranked(DType::F32);
        let op = self.create_region_op("graph.if", &[c], vec![placeholder; nres])?;
        let regions = self.cx.e.b.body.op(op).regions().to_vec();
        let mut yields: Vec<Vec<ValueId>> = vec![];
        for (r, which) in regions.iter().zip([true, false]) {
            let block = self.cx.e.b.body.add_block(*r);
            self.cx.e.set_block(block);
            let outs = branch(self, which)?;
            let mut ys = vec![];
            for (k, v) in outs.iter().enumerate() {
                ys.push(match v {
                    V::T(t) => *t,
                    V::Res(a) => self.cx.e.constant_attr(*a)?,
                    V::Dead => {
                        return Err(ImportError::unsupported(format!(
                            "output #{k} of a branch is a dead value"
                        )))
                    }
                });
            }
            if ys.len() != nres {
                return Err(ImportError::invalid(format!(
                    "a branch gives {} values for {nres} results",
                    ys.len()
                )));
            }
            self.cx.e.set_loc(loc);
            self.cx
                .e
                .b
                .create("graph.yield", &ys, vec![], Some(vec![]), 0)?;
            yields.push(ys);
        }
        if let Some(b) = saved {
            self.cx.e.set_block(b);
        }
        let results = self.cx.e.b.body.op(op).results().to_vec();
        for (k, &r) in results.iter().enumerate() {
            let (a, b) = (self.cx.e.ty(yields[0][k]), self.cx.e.ty(yields[1][k]));
            let t = join_types(a, b).ok_or_else(|| {
                ImportError::unsupported(format!(
                    "branches yielding '{a}' and '{b}' as output #{k}"
                ))
            })?;
            self.cx.e.b.body.set_value_type(r, t);
        }
        Ok(results.into_iter().map(V::T).collect())
    }

    /// A v1 while loop, built when one of its `Exit`s is needed.
    fn build_loop(&mut self, gid: usize, g: &Graph, exit: usize) -> Res<()> {
        let frames = g
            .frames()
            .ok_or_else(|| unsupported(g, exit, "an Exit outside any loop frame"))?;
        let lp = loop_of(g, frames, frames.of[exit])?;
        let outer = |imp: &Self, e: usize| -> Res<V> {
            let key = *g.nodes[e]
                .inputs
                .first()
                .ok_or_else(|| unsupported(g, e, "an Enter without input"))?;
            imp.lookup(gid, key)
                .ok_or_else(|| unsupported(g, e, "its input has no value"))
        };
        let inits: Vec<V> = lp
            .vars
            .iter()
            .map(|v| outer(self, v.enter))
            .collect::<Res<_>>()?;
        let invariants: Vec<((usize, usize), V)> = lp
            .invariants
            .iter()
            .map(|&e| Ok(((e, 0), outer(self, e)?)))
            .collect::<Res<_>>()?;
        let results = {
            let lp = &lp;
            let inv = &invariants;
            self.make_while(
                &inits,
                &mut |imp: &mut Self, args: &[V]| {
                    let mut memo: HashMap<(usize, usize), V> = inv.iter().copied().collect();
                    for (v, a) in lp.vars.iter().zip(args) {
                        memo.insert((v.merge, 0), *a);
                    }
                    imp.push_scope(gid, memo)?;
                    let r = imp.eval(gid, &[lp.cond]);
                    imp.pop_scope();
                    Ok(r?[0])
                },
                &mut |imp: &mut Self, args: &[V]| {
                    let mut memo: HashMap<(usize, usize), V> = inv.iter().copied().collect();
                    for (v, a) in lp.vars.iter().zip(args) {
                        memo.insert((v.merge, 0), *a);
                        memo.insert((v.switch, 1), *a);
                        memo.insert((v.switch, 0), V::Dead);
                    }
                    imp.push_scope(gid, memo)?;
                    let nexts: Vec<(usize, usize)> = lp.vars.iter().map(|v| v.next).collect();
                    let r = imp.eval(gid, &nexts);
                    imp.pop_scope();
                    r
                },
            )?
        };
        for (v, r) in lp.vars.iter().zip(results) {
            if let Some(x) = v.exit {
                self.store((x, 0), r);
            }
        }
        Ok(())
    }

    /// A v1 conditional, built when its `Merge` is needed.
    fn build_cond(&mut self, gid: usize, g: &Graph, merge: usize) -> Res<()> {
        let (pred, is_true, switches) = cond_of(g, merge)?;
        // Errors here name no node: the caller adds this Merge as context.
        let pv = match self.lookup(gid, pred) {
            None => return Err(ImportError::unsupported("its predicate has no value")),
            Some(V::Dead) => {
                return Err(ImportError::unsupported(
                    "its predicate is the untaken output of a Switch",
                ))
            }
            Some(v) => self.tensor(g, merge, v)?,
        };
        let mut data = vec![];
        for &s in &switches {
            let key = g.nodes[s].inputs[0];
            let v = self
                .lookup(gid, key)
                .ok_or_else(|| unsupported(g, s, "its input has no value"))?;
            data.push((s, v));
        }
        let inputs = g.nodes[merge].inputs.clone();
        let branch_memo = |taken: bool| -> HashMap<(usize, usize), V> {
            let mut memo = HashMap::new();
            for &(s, v) in &data {
                memo.insert((s, taken as usize), v);
                memo.insert((s, !taken as usize), V::Dead);
            }
            memo
        };
        let input_for = |taken: bool| -> Res<(usize, usize)> {
            is_true
                .iter()
                .position(|&t| t == taken)
                .map(|i| inputs[i])
                .ok_or_else(|| ImportError::unsupported("it has no input for one branch"))
        };
        let result = if let Some(c) = self.cx.e.const_value(pv) {
            // A constant predicate: only the taken branch, inline.
            let taken = c.len() == 1 && c.get_f(0) != 0.0;
            self.push_scope(gid, branch_memo(taken))?;
            let r = self.eval(gid, &[input_for(taken)?]);
            self.pop_scope();
            r?[0]
        } else {
            self.make_if(pv, 1, &mut |imp: &mut Self, taken: bool| {
                imp.push_scope(gid, branch_memo(taken))?;
                let r = imp.eval(gid, &[input_for(taken)?]);
                imp.pop_scope();
                r
            })?[0]
        };
        self.store((merge, 0), result);
        // value_index: which input was taken (as TensorFlow's int32).
        let idx = self.cx.op(
            "graph.cast",
            &[pv],
            vec![("to", Attribute::ty(Type::scalar(DType::I32)))],
        );
        if let Ok(idx) = idx {
            let one = self.cx.e.scalar(DType::I32, 1.0)?;
            if let (Some(ti), Ok(x)) = (
                is_true.iter().position(|&t| t),
                self.cx.op("graph.sub", &[one, idx], vec![]),
            ) {
                let v = if ti == 0 { x } else { idx };
                self.store((merge, 1), V::T(v));
            }
        }
        Ok(())
    }

    fn functional_while(&mut self, gid: usize, g: &Graph, n: usize) -> Res<Vec<V>> {
        let cond_f = func_attr(g, n, "cond")?;
        let body_f = func_attr(g, n, "body")?;
        let inits = (0..g.nodes[n].inputs.len())
            .map(|i| self.input(gid, g, n, i))
            .collect::<Res<Vec<_>>>()?;
        let cid = self.function(&cond_f)?;
        let bid = self.function(&body_f)?;
        let (cg, bg) = (self.graphs[cid].clone(), self.graphs[bid].clone());
        for (what, fg) in [("cond", &cg), ("body", &bg)] {
            if fg.args.len() != inits.len() {
                return Err(ImportError::invalid(format!(
                    "the {what} function '{}' takes {} arguments for {} loop variables",
                    if what == "cond" { &cond_f } else { &body_f },
                    fg.args.len(),
                    inits.len()
                )));
            }
        }
        self.make_while(
            &inits,
            &mut |imp: &mut Self, args: &[V]| {
                let memo = cg
                    .args
                    .iter()
                    .zip(args)
                    .map(|(&a, &v)| ((a, 0), v))
                    .collect();
                imp.push_scope(cid, memo)?;
                let r = imp.eval(cid, &cg.rets[..1.min(cg.rets.len())]);
                imp.pop_scope();
                r?.first()
                    .copied()
                    .ok_or_else(|| ImportError::invalid("the cond function returns nothing"))
            },
            &mut |imp: &mut Self, args: &[V]| {
                let memo = bg
                    .args
                    .iter()
                    .zip(args)
                    .map(|(&a, &v)| ((a, 0), v))
                    .collect();
                imp.push_scope(bid, memo)?;
                let r = imp.eval(bid, &bg.rets);
                imp.pop_scope();
                r
            },
        )
    }

    fn functional_if(&mut self, gid: usize, g: &Graph, n: usize) -> Res<Vec<V>> {
        let then_f = func_attr(g, n, "then_branch")?;
        let else_f = func_attr(g, n, "else_branch")?;
        let c = self.input(gid, g, n, 0)?;
        let c = self.tensor(g, n, c)?;
        let args = (1..g.nodes[n].inputs.len())
            .map(|i| self.input(gid, g, n, i))
            .collect::<Res<Vec<_>>>()?;
        if let Some(t) = self.cx.e.const_value(c) {
            let taken = t.len() == 1 && t.get_f(0) != 0.0;
            return self.call(if taken { &then_f } else { &else_f }, &args);
        }
        let tid = self.function(&then_f)?;
        let nres = self.graphs[tid].rets.len();
        self.make_if(c, nres, &mut |imp: &mut Self, taken: bool| {
            imp.call(if taken { &then_f } else { &else_f }, &args)
        })
    }
}

/// The function name of a `func` attribute.
fn func_attr(g: &Graph, n: usize, name: &str) -> Res<String> {
    match g.nodes[n].attrs.get(name).and_then(|a| a.value.as_ref()) {
        Some(attr_value::Value::Func(f)) if !f.name.is_empty() => Ok(f.name.clone()),
        // The caller names the node (context), as for every other error of
        // the functional ops.
        _ => Err(ImportError::unsupported(format!(
            "has no function attribute '{name}'"
        ))),
    }
}
