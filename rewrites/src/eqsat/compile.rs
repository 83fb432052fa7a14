//! Compile `.rr` rules to egg rewrites. The left side becomes an egg pattern
//! (a multi-pattern for multi-root rules); numbers, `as` bindings and the
//! condition are checked by the applier, which then plans the right side with
//! type inference and adds it only if every new node is well typed and each
//! replacement has its root's exact type.

use super::analysis::{ClassData, Graph, GraphAnalysis, GraphFacts};
use super::lang::{AttrKey, Node};
use crate::rr::ast::{AExpr, Expr, OpPat, Pat, Rule};
use crate::rr::eval::{eval, Env};
use crate::rr::helpers::Val;
use egg::{
    Applier, ENodeOrVar, Id, Language, MultiPattern, Pattern, PatternAst, RecExpr, Rewrite, Subst,
    Var,
};
use ge_dialects::data::constant::Constant;
use ge_ir::attributes::Attribute;
use ge_ir::opdef::OpDef;
use ge_ir::{Context, Ident, Type};
use std::collections::HashMap;

/// Attribute names an op node of `def` carries when `mentioned` ones are set:
/// every attribute with a default or required, plus mentioned optional ones.
pub fn attr_names(def: &OpDef, mentioned: &[String]) -> Vec<Ident> {
    let mut v: Vec<Ident> = def
        .attrs
        .iter()
        .filter(|a| a.default.is_some() || !a.optional || mentioned.iter().any(|m| m == a.name))
        .map(|a| Ident::new(a.name))
        .collect();
    for m in mentioned {
        let id = Ident::new(m);
        if !v.contains(&id) {
            v.push(id);
        }
    }
    v.sort();
    v
}

struct LhsBuilder<'a> {
    ctx: &'a Context,
    ast: PatternAst<Node>,
    fresh: usize,
    /// Fresh vars standing for number literals: (var, value).
    numbers: Vec<(Var, f64)>,
    /// `as ?v` bindings: (var, sub-pattern).
    binds: Vec<(String, PatternAst<Node>)>,
    /// Attribute literals: (var, value) compared by value after matching.
    literals: Vec<(Var, Val)>,
}

impl LhsBuilder<'_> {
    fn fresh(&mut self, tag: &str) -> Var {
        self.fresh += 1;
        format!("?__{tag}{}", self.fresh)
            .parse()
            .expect("valid var")
    }

    fn var(name: &str) -> Result<Var, String> {
        name.parse().map_err(|_| format!("bad variable '{name}'"))
    }

    fn add(&mut self, p: &Pat) -> Result<Id, String> {
        Ok(match p {
            Pat::Var(v) => self.ast.add(ENodeOrVar::Var(Self::var(v)?)),
            Pat::Wild => {
                let v = self.fresh("w");
                self.ast.add(ENodeOrVar::Var(v))
            }
            Pat::Num(x) => {
                let v = self.fresh("n");
                self.numbers.push((v, *x));
                self.ast.add(ENodeOrVar::Var(v))
            }
            Pat::Op(o) => self.add_op(o)?,
        })
    }

    fn add_op(&mut self, o: &OpPat) -> Result<Id, String> {
        let def = self
            .ctx
            .op_def(&o.name)
            .ok_or_else(|| format!("unknown op '{}'", o.name))?;
        let mentioned: Vec<String> = o.attrs.iter().map(|(k, _)| k.clone()).collect();
        let names = attr_names(def, &mentioned);
        let mut children = vec![];
        for p in &o.operands {
            children.push(self.add(p)?);
        }
        for n in &names {
            let id = match o.attrs.iter().find(|(k, _)| k == n.as_str()) {
                Some((_, AExpr::Var(v))) => self.ast.add(ENodeOrVar::Var(Self::var(v)?)),
                Some((_, lit)) => {
                    // Compared by value in the applier (1.0 matches `1.0 : f32`).
                    let val = eval(lit, &Env::new(), &NoFacts)?;
                    let v = self.fresh("l");
                    self.literals.push((v, val));
                    self.ast.add(ENodeOrVar::Var(v))
                }
                None => {
                    let v = self.fresh("a");
                    self.ast.add(ENodeOrVar::Var(v))
                }
            };
            children.push(id);
        }
        let id = self.ast.add(ENodeOrVar::ENode(Node::op(
            Ident::new(def.name),
            names,
            children,
        )));
        if let Some(b) = &o.bind {
            // The sub-pattern rooted here, as its own expression.
            let sub = extract_subtree(&self.ast, id);
            self.binds.push((b.clone(), sub));
        }
        Ok(id)
    }
}

struct NoFacts;
impl crate::rr::helpers::Facts for NoFacts {
    fn ty(&self, _: u32) -> Option<Type> {
        None
    }
    fn constant(&self, _: u32) -> Option<Attribute> {
        None
    }
    fn num_uses(&self, _: u32) -> Option<usize> {
        None
    }
}

fn extract_subtree(ast: &PatternAst<Node>, root: Id) -> PatternAst<Node> {
    let mut out: PatternAst<Node> = RecExpr::default();
    let mut map: HashMap<Id, Id> = HashMap::new();
    fn go(
        ast: &PatternAst<Node>,
        id: Id,
        out: &mut PatternAst<Node>,
        map: &mut HashMap<Id, Id>,
    ) -> Id {
        if let Some(&m) = map.get(&id) {
            return m;
        }
        let n = ast[id].clone().map_children(|c| go(ast, c, out, map));
        let new = out.add(n);
        map.insert(id, new);
        new
    }
    go(ast, root, &mut out, &mut map);
    out
}

/// The applier of one rule.
pub struct RuleApplier {
    rule: Rule,
    numbers: Vec<(Var, f64)>,
    binds: Vec<(String, PatternAst<Node>)>,
    literals: Vec<(Var, Val)>,
    /// Vars naming each root's class (multi-root rules).
    root_vars: Vec<Var>,
    /// Every variable of the left side.
    vars: Vec<Var>,
}

/// Compile one rule; `Err` if it cannot be expressed.
pub fn compile(ctx: &Context, rule: &Rule) -> Result<Rewrite<Node, GraphAnalysis>, String> {
    let mut b = LhsBuilder {
        ctx,
        ast: RecExpr::default(),
        fresh: 0,
        numbers: vec![],
        binds: vec![],
        literals: vec![],
    };
    let mut roots = vec![];
    for p in &rule.roots {
        let before = b.ast.as_ref().len();
        b.add(p)?;
        let _ = before;
        roots.push(extract_subtree(&b.ast, Id::from(b.ast.as_ref().len() - 1)));
    }
    let mut vars: Vec<Var> = vec![];
    for r in &roots {
        for n in r.as_ref() {
            if let ENodeOrVar::Var(v) = n {
                if !vars.contains(v) {
                    vars.push(*v);
                }
            }
        }
    }
    let name = rule.name.clone();
    if roots.len() == 1 {
        let pat = Pattern::new(roots.remove(0));
        let applier = RuleApplier {
            rule: rule.clone(),
            numbers: b.numbers,
            binds: b.binds,
            literals: b.literals,
            root_vars: vec![],
            vars,
        };
        Rewrite::new(name, pat, applier)
    } else {
        let root_vars: Vec<Var> = (0..roots.len())
            .map(|i| format!("?__root{i}").parse().expect("var"))
            .collect();
        let pat = MultiPattern::new(root_vars.iter().copied().zip(roots).collect());
        let applier = RuleApplier {
            rule: rule.clone(),
            numbers: b.numbers,
            binds: b.binds,
            literals: b.literals,
            root_vars,
            vars,
        };
        Rewrite::new(name, pat, applier)
    }
}

/// A planned right-side node.
enum PNode {
    Existing(Id),
    New(Node),
}

impl RuleApplier {
    fn env(&self, eg: &Graph, subst: &Subst) -> Option<Env<'static>> {
        let mut env = Env::new();
        for v in &self.vars {
            let id = *subst.get(*v)?;
            let key = v.to_string();
            let val = match eg[id].data.attr {
                Some(a) => Val::Attr(a),
                None => Val::Value(usize::from(eg.find(id)) as u32),
            };
            env.insert(key, val);
        }
        for (v, x) in &self.numbers {
            let id = *subst.get(*v)?;
            let c = eg[id].data.constant?.as_dense()?;
            let first = c.get(0).as_f64();
            let splat = c.splat || c.elements().all(|e| e.as_f64() == first);
            if !splat || first != *x {
                return None;
            }
        }
        for (v, want) in &self.literals {
            let a = eg[*subst.get(*v)?].data.attr?;
            if !Val::Attr(a).equals(want) {
                return None;
            }
        }
        for (name, sub) in &self.binds {
            let id = lookup_instantiated(eg, sub, subst)?;
            env.insert(name.clone(), Val::Value(usize::from(id) as u32));
        }
        Some(env)
    }

    /// Plan an expression: nodes to add (in order) and their data; returns the index.
    fn plan(
        &self,
        eg: &Graph,
        e: &Expr,
        env: &Env<'_>,
        lets: &HashMap<String, usize>,
        out: &mut Vec<(PNode, ClassData)>,
    ) -> Result<usize, String> {
        let facts = GraphFacts(eg);
        match e {
            Expr::A(AExpr::Var(n)) if lets.contains_key(n) => Ok(lets[n]),
            Expr::A(a) => match eval(a, env, &facts)? {
                Val::Value(v) => {
                    let id = eg.find(Id::from(v as usize));
                    out.push((PNode::Existing(id), eg[id].data.clone()));
                    Ok(out.len() - 1)
                }
                other => {
                    // A constant: data.constant with a value attribute.
                    let attr = other.to_attr()?;
                    let ty = attr.value_type().ok_or("not a constant value")?;
                    out.push((
                        PNode::New(Node::Attr(AttrKey(attr))),
                        ClassData {
                            attr: Some(attr),
                            foldable: true,
                            ..Default::default()
                        },
                    ));
                    let leaf = out.len() - 1;
                    let node = Node::op(
                        Ident::new(Constant::NAME),
                        vec![Ident::new("value")],
                        vec![Id::from(leaf)],
                    );
                    out.push((
                        PNode::New(node),
                        ClassData {
                            types: vec![ty],
                            attr: None,
                            constant: Some(attr),
                            foldable: true,
                        },
                    ));
                    Ok(out.len() - 1)
                }
            },
            Expr::Op {
                name,
                operands,
                attrs,
            } => {
                let def = eg
                    .analysis
                    .defs
                    .get(&Ident::new(name))
                    .copied()
                    .ok_or_else(|| format!("unknown op '{name}'"))?;
                let mut kids = vec![];
                for o in operands {
                    kids.push(self.plan(eg, o, env, lets, out)?);
                }
                let mentioned: Vec<String> = attrs.iter().map(|(k, _)| k.clone()).collect();
                let names = attr_names(def, &mentioned);
                let defaults = def.default_values();
                for n in &names {
                    let attr = match attrs.iter().find(|(k, _)| k == n.as_str()) {
                        Some((_, a)) => eval(a, env, &facts)?.to_attr()?,
                        None => def
                            .attrs
                            .iter()
                            .position(|a| a.name == n.as_str())
                            .and_then(|i| defaults[i])
                            .ok_or_else(|| format!("'{name}' needs attribute '{n}'"))?,
                    };
                    out.push((
                        PNode::New(Node::Attr(AttrKey(attr))),
                        ClassData {
                            attr: Some(attr),
                            foldable: true,
                            ..Default::default()
                        },
                    ));
                    kids.push(out.len() - 1);
                }
                let datas: Vec<&ClassData> = kids.iter().map(|&k| &out[k].1).collect();
                let types = eg.analysis.infer(Ident::new(def.name), &names, &datas)?;
                let node = Node::op(
                    Ident::new(def.name),
                    names,
                    kids.iter().map(|&k| Id::from(k)).collect(),
                );
                let foldable = !types.is_empty()
                    && def.has_trait(ge_ir::opdef::Trait::Pure)
                    && datas.iter().all(|d| d.foldable);
                out.push((
                    PNode::New(node),
                    ClassData {
                        types,
                        attr: None,
                        constant: None,
                        foldable,
                    },
                ));
                Ok(out.len() - 1)
            }
        }
    }
}

fn lookup_instantiated(eg: &Graph, pat: &PatternAst<Node>, subst: &Subst) -> Option<Id> {
    let mut ids: Vec<Id> = Vec::with_capacity(pat.as_ref().len());
    for n in pat.as_ref() {
        let id = match n {
            ENodeOrVar::Var(v) => *subst.get(*v)?,
            ENodeOrVar::ENode(node) => {
                let node = node.clone().map_children(|c| ids[usize::from(c)]);
                eg.lookup(node)?
            }
        };
        ids.push(id);
    }
    ids.last().copied()
}

impl Applier<Node, GraphAnalysis> for RuleApplier {
    fn apply_one(
        &self,
        eg: &mut Graph,
        eclass: Id,
        subst: &Subst,
        _ast: Option<&PatternAst<Node>>,
        rule: egg::Symbol,
    ) -> Vec<Id> {
        let Some(mut env) = self.env(eg, subst) else {
            return vec![];
        };
        if let Some(c) = &self.rule.cond {
            match eval(c, &env, &GraphFacts(eg)) {
                Ok(Val::Bool(true)) => {}
                _ => return vec![],
            }
        }
        let roots: Vec<Id> = if self.root_vars.is_empty() {
            vec![eclass]
        } else {
            match self
                .root_vars
                .iter()
                .map(|v| subst.get(*v).copied())
                .collect::<Option<Vec<_>>>()
            {
                Some(r) => r,
                None => return vec![],
            }
        };
        let mut plan: Vec<(PNode, ClassData)> = vec![];
        let mut lets = HashMap::new();
        for (v, e) in &self.rule.lets {
            match self.plan(eg, e, &env, &lets, &mut plan) {
                Ok(i) => {
                    lets.insert(v.clone(), i);
                }
                Err(_) => return vec![],
            }
        }
        let _ = &mut env;
        let mut outs = vec![];
        for e in &self.rule.results {
            match self.plan(eg, e, &env, &lets, &mut plan) {
                Ok(i) => outs.push(i),
                Err(_) => return vec![],
            }
        }
        // Gate: every replacement has its root's exact type(s).
        for (&r, &o) in roots.iter().zip(&outs) {
            let want = &eg[r].data.types;
            if want.is_empty() || *want != plan[o].1.types {
                return vec![];
            }
        }
        // Add the planned nodes (children index into the plan).
        let mut ids: Vec<Id> = Vec::with_capacity(plan.len());
        for (p, _) in &plan {
            let id = match p {
                PNode::Existing(id) => *id,
                PNode::New(n) => {
                    let n = n.clone().map_children(|c| ids[usize::from(c)]);
                    eg.add(n)
                }
            };
            ids.push(id);
        }
        let mut changed = vec![];
        for (&r, &o) in roots.iter().zip(&outs) {
            if eg.union_trusted(r, ids[o], rule) {
                changed.push(r);
            }
        }
        changed
    }
}
