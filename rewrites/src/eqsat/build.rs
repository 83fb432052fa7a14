//! Translating a function body into an e-graph and an extracted selection
//! back into IR (in place: new ops are built before the terminator, the
//! terminator is re-pointed, the old ops become dead and are erased).

use super::analysis::{Graph, GraphAnalysis};
use super::lang::{AttrKey, Node};
use egg::{Id, Language};
use ge_ir::body::{Body, OpId, ValueId};
use ge_ir::builder::{Builder, InsertPoint};
use ge_ir::opdef::Trait;
use ge_ir::{Context, Location};
use std::collections::HashMap;

/// A function body as an e-graph.
pub struct Translated {
    pub egraph: Graph,
    /// Classes of the values the terminator returns.
    pub roots: Vec<Id>,
    pub terminator: OpId,
    /// Ops kept opaque (with regions, unregistered), by opaque id.
    pub opaque: Vec<OpId>,
    /// A source location for each class (from the op that first produced it).
    pub locs: Vec<(Id, Location)>,
    /// The node each original op became (the input program as a selection).
    pub original: Vec<(Id, Node)>,
}

/// Why a body cannot be optimised by equality saturation.
pub fn unsupported(body: &Body) -> Option<String> {
    let roots = body.root_regions();
    let r = *roots.first()?;
    if body.region(r).blocks.len() != 1 {
        return Some("the function has more than one block".into());
    }
    None
}

pub fn to_egraph(ctx: &Context, body: &Body) -> Result<Translated, String> {
    if let Some(why) = unsupported(body) {
        return Err(why);
    }
    let r = body.root_regions()[0];
    let entry = body.entry_block(r).ok_or("empty function")?;
    let mut analysis = GraphAnalysis::new(ctx);
    analysis.arg_types = body
        .block(entry)
        .args
        .iter()
        .map(|&a| body.value_type(a))
        .collect();
    // Opaque result types must be known before their nodes are added.
    for op in body.block_ops(entry) {
        let d = body.op(op);
        if !d.regions().is_empty() || d.def.is_none() {
            analysis.opaque_types.push(body.result_types(op));
        }
    }
    let mut eg: Graph = egg::EGraph::new(analysis);
    let mut vals: HashMap<ValueId, Id> = HashMap::new();
    let mut opaque = vec![];
    let mut original = vec![];
    for (i, &a) in body.block(entry).args.iter().enumerate() {
        let id = eg.add(Node::Arg(i as u32));
        original.push((id, Node::Arg(i as u32)));
        vals.insert(a, id);
    }
    let mut locs = vec![];
    let mut roots = None;
    let mut terminator = None;
    for op in body.block_ops(entry) {
        let d = body.op(op);
        let operands: Vec<Id> = d
            .operands()
            .iter()
            .map(|v| {
                vals.get(v)
                    .copied()
                    .ok_or_else(|| "operand defined outside the function body".to_string())
            })
            .collect::<Result<_, _>>()?;
        if d.has_trait(Trait::Terminator) {
            roots = Some(operands);
            terminator = Some(op);
            break;
        }
        let id = if !d.regions().is_empty() || d.def.is_none() {
            let k = opaque.len() as u32;
            opaque.push(op);
            let n = Node::Opaque {
                id: k,
                children: operands.into(),
            };
            let id = eg.add(n.clone());
            original.push((id, n));
            id
        } else {
            let mut children = operands;
            let mut names = vec![];
            for (k, v) in d.attrs.entries() {
                names.push(*k);
                let leaf = Node::Attr(AttrKey(*v));
                let lid = eg.add(leaf.clone());
                original.push((lid, leaf));
                children.push(lid);
            }
            let n = Node::op(d.name, names, children);
            let id = eg.add(n.clone());
            original.push((id, n));
            id
        };
        locs.push((id, d.loc));
        if d.results().len() == 1 {
            vals.insert(d.results()[0], id);
        } else {
            for (i, &res) in d.results().iter().enumerate() {
                let n = Node::Proj {
                    index: i as u32,
                    child: id,
                };
                let p = eg.add(n.clone());
                original.push((p, n));
                vals.insert(res, p);
            }
        }
    }
    eg.rebuild();
    Ok(Translated {
        egraph: eg,
        roots: roots.ok_or("function body has no terminator")?,
        terminator: terminator.ok_or("function body has no terminator")?,
        opaque,
        locs,
        original,
    })
}

impl Translated {
    /// The input program as a selection (after saturation, canonicalised).
    pub fn original_choice(&self) -> HashMap<Id, Node> {
        let eg = &self.egraph;
        self.original
            .iter()
            .map(|(id, n)| (eg.find(*id), n.clone().map_children(|c| eg.find(c))))
            .collect()
    }
}

/// Build the selected nodes (`choice`: canonical class → node) into `body`
/// before the terminator and make the terminator return them.
pub fn rebuild(
    ctx: &Context,
    body: &mut Body,
    t: &Translated,
    choice: &HashMap<Id, Node>,
) -> Result<(), String> {
    let eg = &t.egraph;
    let r = body.root_regions()[0];
    let entry = body.entry_block(r).ok_or("empty function")?;
    let args = body.block(entry).args.clone();
    let mut loc_of: HashMap<Id, Location> = HashMap::new();
    for (id, l) in &t.locs {
        loc_of.entry(eg.find(*id)).or_insert(*l);
    }
    let mut memo: HashMap<Id, Vec<ValueId>> = HashMap::new();
    let mut em = Emitter {
        ctx,
        eg,
        choice,
        args: &args,
        t,
        loc_of: &loc_of,
        memo: &mut memo,
        term: t.terminator,
    };
    let mut outs = vec![];
    for &root in &t.roots {
        let v = em.value(body, root)?;
        outs.push(v);
    }
    body.set_operands(t.terminator, &outs);
    crate::passes::dce::dce_body(body);
    Ok(())
}

struct Emitter<'a> {
    ctx: &'a Context,
    eg: &'a Graph,
    choice: &'a HashMap<Id, Node>,
    args: &'a [ValueId],
    t: &'a Translated,
    loc_of: &'a HashMap<Id, Location>,
    memo: &'a mut HashMap<Id, Vec<ValueId>>,
    term: OpId,
}

impl Emitter<'_> {
    /// The single value of class `c`.
    fn value(&mut self, body: &mut Body, c: Id) -> Result<ValueId, String> {
        let vs = self.values(body, c)?;
        vs.first()
            .copied()
            .ok_or_else(|| "class has no value".to_string())
    }

    fn values(&mut self, body: &mut Body, c: Id) -> Result<Vec<ValueId>, String> {
        stacker::maybe_grow(128 * 1024, 8 * 1024 * 1024, || self.values_inner(body, c))
    }

    fn values_inner(&mut self, body: &mut Body, c: Id) -> Result<Vec<ValueId>, String> {
        let c = self.eg.find(c);
        if let Some(v) = self.memo.get(&c) {
            return Ok(v.clone());
        }
        let node = self
            .choice
            .get(&c)
            .ok_or("extraction left a class unselected")?
            .clone();
        let out = match &node {
            Node::Arg(i) => vec![*self.args.get(*i as usize).ok_or("argument out of range")?],
            Node::Attr(_) => return Err("an attribute is not a value".into()),
            Node::Proj { index, child } => {
                let t = self.values(body, *child)?;
                vec![*t.get(*index as usize).ok_or("projection out of range")?]
            }
            Node::Opaque { id, children } => {
                let op = self.t.opaque[*id as usize];
                let mut operands = vec![];
                for &k in children.iter() {
                    operands.push(self.value(body, k)?);
                }
                body.set_operands(op, &operands);
                body.move_op_before(self.term, op);
                body.op(op).results().to_vec()
            }
            Node::Op {
                name,
                attrs,
                children,
            } => {
                let n_ops = node.num_operands();
                let mut operands = vec![];
                for &k in &children[..n_ops] {
                    operands.push(self.value(body, k)?);
                }
                let mut named = vec![];
                for (k, &a) in attrs.iter().zip(&children[n_ops..]) {
                    let leaf = self.eg[self.eg.find(a)]
                        .data
                        .attr
                        .ok_or("attribute child without a value")?;
                    named.push((k.as_str(), leaf));
                }
                let types = self.eg[c].data.types.clone();
                let mut b = Builder::new(self.ctx, body, InsertPoint::Before(self.term));
                b.loc = self.loc_of.get(&c).copied().unwrap_or_default();
                let op = b.create(name, &operands, named, Some(types), 0)?;
                body.op(op).results().to_vec()
            }
        };
        self.memo.insert(c, out.clone());
        Ok(out)
    }
}

/// Children of `n` that are operands (not attribute leaves).
pub fn operand_children(n: &Node) -> &[Id] {
    &n.children()[..n.num_operands()]
}
