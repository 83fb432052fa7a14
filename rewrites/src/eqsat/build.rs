//! Translating a function body into an e-graph and an extracted selection
//! back into IR (in place: new ops are built before the terminator, the
//! terminator is re-pointed, the old ops become dead and are erased).

use super::analysis::{ClassData, Graph, GraphAnalysis};
use super::lang::{AttrKey, Node};
use egg::{Id, Language};
use ge_ir::body::{Body, OpId, ValueId};
use ge_ir::builder::{Builder, InsertPoint};
use ge_ir::opdef::Trait;
use ge_ir::{Context, Ident, Location, WalkOrder};
use std::collections::{HashMap, HashSet};

/// A function body as an e-graph.
pub struct Translated {
    pub egraph: Graph,
    /// Classes of the values the terminator returns.
    pub roots: Vec<Id>,
    pub terminator: OpId,
    /// Ops kept opaque, by opaque id, in program order.
    pub opaque: Vec<OpaqueOp>,
    /// A source location for each class (from the op that first produced it).
    pub locs: Vec<(Id, Location)>,
    /// The node each original op became (the input program as a selection).
    pub original: Vec<(Id, Node)>,
}

/// An op the e-graph keeps as it is (see [`Node::Opaque`]).
pub struct OpaqueOp {
    pub op: OpId,
    /// Its class (the tuple class for several results).
    pub class: Id,
    /// Values of the function body its regions use (implicit captures), in
    /// the order they follow the operands among the node's children.
    pub captures: Vec<ValueId>,
    /// Children classes: operands, then captures (then the order link).
    pub children: Vec<Id>,
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

/// Whether the e-graph models `op` as an op node with attribute leaves
/// `attrs`: a registered, pure op without regions whose `infer` hook gives
/// back exactly its result types (so a rebuilt op is the same op, and an op
/// whose types depend on something else — a callee's signature — is never
/// rebuilt with other types). Anything else is opaque.
fn modelled(eg: &Graph, body: &Body, op: OpId, operands: &[Id], attrs: &[(Ident, Id)]) -> bool {
    let d = body.op(op);
    let Some(def) = d.def else { return false };
    if !d.regions().is_empty() || !def.has_trait(Trait::Pure) || def.has_trait(Trait::Terminator) {
        return false;
    }
    let names: Vec<Ident> = attrs.iter().map(|(k, _)| *k).collect();
    let datas: Vec<&ClassData> = operands
        .iter()
        .chain(attrs.iter().map(|(_, c)| c))
        .map(|&c| &eg[c].data)
        .collect();
    eg.analysis
        .infer(d.name, &names, &datas)
        .is_ok_and(|tys| tys == body.result_types(op))
}

/// Values defined in the function body (`defined`) that ops nested in
/// `op`'s regions use, in first-use order.
fn captures(body: &Body, op: OpId, defined: &HashMap<ValueId, Id>) -> Vec<ValueId> {
    let mut out = vec![];
    let mut seen = HashSet::new();
    body.walk(op, WalkOrder::Pre, &mut |o| {
        if o == op {
            return;
        }
        for v in body.op(o).operands() {
            if defined.contains_key(v) && seen.insert(*v) {
                out.push(*v);
            }
        }
    });
    out
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
    let mut eg: Graph = egg::EGraph::new(analysis);
    let mut vals: HashMap<ValueId, Id> = HashMap::new();
    let mut opaque: Vec<OpaqueOp> = vec![];
    let mut original = vec![];
    for (i, &a) in body.block(entry).args.iter().enumerate() {
        let id = eg.add(Node::Arg(i as u32));
        original.push((id, Node::Arg(i as u32)));
        vals.insert(a, id);
    }
    let class_of = |vals: &HashMap<ValueId, Id>, v: &ValueId| {
        vals.get(v)
            .copied()
            .ok_or_else(|| "operand defined outside the function body".to_string())
    };
    let mut locs = vec![];
    let mut roots = None;
    let mut terminator = None;
    for op in body.block_ops(entry) {
        let d = body.op(op);
        let operands: Vec<Id> = d
            .operands()
            .iter()
            .map(|v| class_of(&vals, v))
            .collect::<Result<_, _>>()?;
        if d.has_trait(Trait::Terminator) {
            roots = Some(operands);
            terminator = Some(op);
            break;
        }
        let leaves: Vec<Node> = d
            .attrs
            .entries()
            .iter()
            .map(|(_, v)| Node::Attr(AttrKey(*v)))
            .collect();
        let attrs: Vec<(Ident, Id)> = d
            .attrs
            .entries()
            .iter()
            .zip(&leaves)
            .map(|((k, _), leaf)| (*k, eg.add(leaf.clone())))
            .collect();
        let id = if modelled(&eg, body, op, &operands, &attrs) {
            let mut children = operands;
            let mut names = vec![];
            for ((k, lid), leaf) in attrs.into_iter().zip(leaves) {
                names.push(k);
                children.push(lid);
                original.push((lid, leaf));
            }
            let n = Node::op(d.name, names, children);
            let id = eg.add(n.clone());
            original.push((id, n));
            id
        } else {
            let captured = captures(body, op, &vals);
            let mut children = operands;
            for v in &captured {
                children.push(class_of(&vals, v)?);
            }
            let prev = opaque.last().map(|o: &OpaqueOp| o.class);
            children.extend(prev);
            let k = opaque.len() as u32;
            eg.analysis.opaque_types.push(body.result_types(op));
            let n = Node::Opaque {
                id: k,
                ordered: prev.is_some(),
                children: children.clone().into(),
            };
            let id = eg.add(n.clone());
            original.push((id, n));
            opaque.push(OpaqueOp {
                op,
                class: id,
                captures: captured,
                children,
            });
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
    /// The classes extraction must cover, canonical: the returned values and
    /// the last opaque op (which reaches every opaque op through the order
    /// links, so none is dropped).
    pub fn extraction_roots(&self) -> Vec<Id> {
        let eg = &self.egraph;
        self.roots
            .iter()
            .copied()
            .chain(self.opaque.last().map(|o| o.class))
            .map(|c| eg.find(c))
            .collect()
    }

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
/// before the terminator and make the terminator return them. Every opaque
/// op is kept and moved there in program order, its operands and the values
/// its regions capture re-pointed at the rebuilt ones. On an error `body` is
/// half rebuilt: callers rebuild a copy.
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
    let mut em = Emitter {
        ctx,
        eg,
        choice,
        args: &args,
        t,
        loc_of: &loc_of,
        memo: HashMap::new(),
        in_progress: HashSet::new(),
        placed: vec![None; t.opaque.len()],
        placing: vec![false; t.opaque.len()],
        term: t.terminator,
    };
    let mut outs = vec![];
    for &root in &t.roots {
        let v = em.value(body, root)?;
        outs.push(v);
    }
    if let Some(last) = t.opaque.len().checked_sub(1) {
        em.place_opaque(body, last)?;
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
    memo: HashMap<Id, Vec<ValueId>>,
    /// Classes being emitted (a re-entry would be a cycle).
    in_progress: HashSet<Id>,
    /// Results of the opaque ops already moved into place, by opaque id.
    placed: Vec<Option<Vec<ValueId>>>,
    /// Opaque ops being placed.
    placing: Vec<bool>,
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
        if !self.in_progress.insert(c) {
            return Err("the extracted program has a cycle".into());
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
            Node::Opaque { id, .. } => self.place_opaque(body, *id as usize)?,
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
        self.in_progress.remove(&c);
        self.memo.insert(c, out.clone());
        Ok(out)
    }

    /// Move opaque op `k` before the terminator, after the opaque ops before
    /// it and the values it uses; returns its results.
    fn place_opaque(&mut self, body: &mut Body, k: usize) -> Result<Vec<ValueId>, String> {
        if let Some(Some(v)) = self.placed.get(k) {
            return Ok(v.clone());
        }
        let t = self.t;
        let o = t.opaque.get(k).ok_or("opaque op out of range")?;
        let op = o.op;
        // Its operands reaching it again would be a cycle.
        if std::mem::replace(&mut self.placing[k], true) {
            return Err("the extracted program has a cycle".into());
        }
        if k > 0 {
            self.place_opaque(body, k - 1)?;
        }
        let n_operands = body.op(op).operands().len();
        let mut operands = vec![];
        for &c in &o.children[..n_operands] {
            operands.push(self.value(body, c)?);
        }
        let mut captured = vec![];
        for (&old, &c) in o.captures.iter().zip(&o.children[n_operands..]) {
            captured.push((old, self.value(body, c)?));
        }
        body.set_operands(op, &operands);
        for (old, new) in captured {
            body.replace_uses_if(old, new, |b, u| u.op != op && b.is_ancestor(op, u.op));
        }
        body.move_op_before(self.term, op);
        let results = body.op(op).results().to_vec();
        self.placed[k] = Some(results.clone());
        Ok(results)
    }
}

/// Children of `n` that are operands (not attribute leaves).
pub fn operand_children(n: &Node) -> &[Id] {
    &n.children()[..n.num_operands()]
}
