//! E-class analysis: the type(s) of every class (shape, dtype, format — all in
//! the type), its constant value if known, and the attribute of leaf classes.
//! Types come from the ops' own `infer` hooks, so a right side the ops reject
//! is never added (rewrites are gated on shape validity).

use super::lang::{AttrKey, Node};
use crate::rr::helpers::Facts;
use egg::{Analysis, DidMerge, EGraph, Id};
use ge_ir::attributes::Attribute;
use ge_ir::opdef::{OpDef, Trait};
use ge_ir::{AttrDict, Context, Ident, Type};
use std::collections::HashMap;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassData {
    /// One type for a value, several for a multi-result op's tuple, none for an attribute leaf.
    pub types: Vec<Type>,
    pub attr: Option<Attribute>,
    pub constant: Option<Attribute>,
    /// Computed from constants only (pure ops all the way down): folds at compile time.
    pub foldable: bool,
}

#[derive(Default)]
pub struct GraphAnalysis {
    pub defs: HashMap<Ident, &'static OpDef>,
    pub arg_types: Vec<Type>,
    /// Result types of opaque ops, by opaque id.
    pub opaque_types: Vec<Vec<Type>>,
}

pub type Graph = EGraph<Node, GraphAnalysis>;

impl GraphAnalysis {
    pub fn new(ctx: &Context) -> GraphAnalysis {
        let defs = ctx
            .ops()
            .into_iter()
            .map(|d| (Ident::new(d.name), d))
            .collect();
        GraphAnalysis {
            defs,
            arg_types: vec![],
            opaque_types: vec![],
        }
    }

    /// Result types of an op node given its children's data; `Err` if the op rejects them.
    pub fn infer(
        &self,
        name: Ident,
        attr_names: &[Ident],
        children: &[&ClassData],
    ) -> Result<Vec<Type>, String> {
        let def = self
            .defs
            .get(&name)
            .ok_or_else(|| format!("unknown op '{name}'"))?;
        let n_ops = children.len() - attr_names.len();
        let mut named = vec![];
        for (k, c) in attr_names.iter().zip(&children[n_ops..]) {
            named.push((*k, c.attr.ok_or("attribute child is not an attribute")?));
        }
        let attrs = AttrDict::new(named);
        if def.has_trait(Trait::ConstantLike) {
            let v = attrs.get("value").ok_or("constant without value")?;
            return Ok(vec![v.value_type().ok_or("constant without a type")?]);
        }
        let mut tys = vec![];
        for c in &children[..n_ops] {
            if c.types.len() != 1 {
                return Err("operand is not a single value".into());
            }
            tys.push(c.types[0]);
        }
        let consts: Vec<Option<Attribute>> = children[..n_ops].iter().map(|c| c.constant).collect();
        ge_ir::builder::infer_result_types(def, &tys, attrs, &consts)
    }
}

impl Analysis<Node> for GraphAnalysis {
    type Data = ClassData;

    fn make(egraph: &mut Graph, enode: &Node, _id: Id) -> ClassData {
        let a = &egraph.analysis;
        match enode {
            Node::Arg(n) => ClassData {
                types: a.arg_types.get(*n as usize).copied().into_iter().collect(),
                ..Default::default()
            },
            Node::Attr(AttrKey(x)) => ClassData {
                attr: Some(*x),
                foldable: true,
                ..Default::default()
            },
            Node::Proj { index, child } => {
                let t = egraph[*child].data.types.get(*index as usize).copied();
                ClassData {
                    types: t.into_iter().collect(),
                    ..Default::default()
                }
            }
            Node::Opaque { id, .. } => ClassData {
                types: a
                    .opaque_types
                    .get(*id as usize)
                    .cloned()
                    .unwrap_or_default(),
                ..Default::default()
            },
            Node::Op {
                name,
                attrs,
                children,
            } => {
                let datas: Vec<&ClassData> = children.iter().map(|c| &egraph[*c].data).collect();
                let types = a.infer(*name, attrs, &datas).unwrap_or_default();
                let def = a.defs.get(name);
                let constant = def
                    .filter(|d| d.has_trait(Trait::ConstantLike))
                    .and_then(|_| attrs.iter().position(|k| k.as_str() == "value"))
                    .and_then(|i| datas[children.len() - attrs.len() + i].attr);
                let pure = def.is_some_and(|d| d.has_trait(Trait::Pure));
                let foldable = constant.is_some()
                    || (pure && !types.is_empty() && datas.iter().all(|d| d.foldable));
                ClassData {
                    types,
                    attr: None,
                    constant,
                    foldable,
                }
            }
        }
    }

    fn merge(&mut self, a: &mut ClassData, b: ClassData) -> DidMerge {
        let mut changed_a = false;
        if a.types.is_empty() && !b.types.is_empty() {
            a.types = b.types.clone();
            changed_a = true;
        }
        if a.constant.is_none() && b.constant.is_some() {
            a.constant = b.constant;
            changed_a = true;
        }
        if a.attr.is_none() && b.attr.is_some() {
            a.attr = b.attr;
            changed_a = true;
        }
        if !a.foldable && b.foldable {
            a.foldable = true;
            changed_a = true;
        }
        let changed_b = a.types != b.types
            || a.constant != b.constant
            || a.attr != b.attr
            || a.foldable != b.foldable;
        DidMerge(changed_a, changed_b)
    }
}

/// Rule conditions ask the e-graph (class ids stand for values).
pub struct GraphFacts<'a>(pub &'a Graph);

impl Facts for GraphFacts<'_> {
    fn ty(&self, v: u32) -> Option<Type> {
        let id = self.0.find(Id::from(v as usize));
        self.0[id].data.types.first().copied()
    }
    fn constant(&self, v: u32) -> Option<Attribute> {
        let id = self.0.find(Id::from(v as usize));
        self.0[id].data.constant
    }
    /// Equality saturation keeps every alternative, so duplicating a shared
    /// value is never wrong there: uses count as one.
    fn num_uses(&self, _v: u32) -> Option<usize> {
        Some(1)
    }
}
