//! The greedy back end: a rule as a [`Pattern`]. Matching binds variables
//! (trying both operand orders of commutative binary ops); the right side is
//! planned first — result types inferred, checked against the roots — and only
//! then built, so a rule whose replacement would change a type never fires.

use super::ast::{Expr, OpPat, Pat, Rule};
use super::eval::{eval, Env};
use super::helpers::{Facts, Val};
use crate::pattern::Pattern;
use crate::rewriter::Rewriter;
use ge_ir::attributes::Attribute;
use ge_ir::body::{Body, OpId, ValueId};
use ge_ir::builder::{fill_default_attrs, infer_result_types};
use ge_ir::opdef::Trait;
use ge_ir::{AttrDict, Ident, Type};

pub struct RulePattern {
    pub rule: Rule,
}

struct BodyFacts<'a>(&'a Body);

impl Facts for BodyFacts<'_> {
    fn ty(&self, v: u32) -> Option<Type> {
        (v as usize)
            .lt(&self.0.value_capacity())
            .then(|| self.0.value_type(ValueId(v)))
    }
    fn constant(&self, v: u32) -> Option<Attribute> {
        ge_ir::builder::constant_value(self.0, ValueId(v))
    }
    fn num_uses(&self, v: u32) -> Option<usize> {
        Some(self.0.uses(ValueId(v)).len())
    }
}

fn bind<'r>(env: &mut Env<'r>, name: &'r str, v: Val) -> bool {
    match env.get(name) {
        Some(prev) => prev.equals(&v),
        None => {
            env.insert(name, v);
            true
        }
    }
}

fn match_value<'r>(body: &Body, p: &'r Pat, v: ValueId, env: &mut Env<'r>) -> bool {
    match p {
        Pat::Wild => true,
        Pat::Var(n) => bind(env, n, Val::Value(v.0)),
        Pat::Num(x) => {
            let f = BodyFacts(body);
            super::helpers::lookup("is_splat")
                .and_then(|h| (h.f)(&f, &[Val::Value(v.0), Val::Float(*x)]).ok())
                .is_some_and(|r| matches!(r, Val::Bool(true)))
        }
        Pat::Op(o) => match body.defining_op(v) {
            Some(op) if body.result(op, 0) == v => match_op(body, o, op, env),
            _ => false,
        },
    }
}

fn match_op<'r>(body: &Body, p: &'r OpPat, op: OpId, env: &mut Env<'r>) -> bool {
    let d = body.op(op);
    if d.name.as_str() != p.name || d.operands().len() != p.operands.len() {
        return false;
    }
    let ops = d.operands();
    // Only a commutative op gets a second try with swapped operands, so only
    // then are the bindings saved (a failed match is discarded by the caller).
    let swappable = ops.len() == 2 && d.has_trait(Trait::Commutative);
    let saved = swappable.then(|| env.clone());
    let straight = p
        .operands
        .iter()
        .zip(ops)
        .all(|(pat, &v)| match_value(body, pat, v, env));
    if !straight {
        let Some(saved) = saved else { return false };
        *env = saved;
        let swapped = p
            .operands
            .iter()
            .zip([ops[1], ops[0]])
            .all(|(pat, v)| match_value(body, pat, v, env));
        if !swapped {
            return false;
        }
    }
    let f = BodyFacts(body);
    for (k, ae) in &p.attrs {
        let Some(a) = d.attr(k) else { return false };
        match ae {
            super::ast::AExpr::Var(n) => {
                if !bind(env, n, Val::Attr(a)) {
                    return false;
                }
            }
            lit => match eval(lit, env, &f) {
                Ok(want) if want.equals(&Val::Attr(a)) => {}
                _ => return false,
            },
        }
    }
    if let Some(b) = &p.bind {
        if let Some(&r) = d.results().first() {
            if !bind(env, b, Val::Value(r.0)) {
                return false;
            }
        }
    }
    true
}

/// A planned right side: existing values, constants to materialise, or new ops.
enum Plan {
    Existing(ValueId),
    Const(Attribute),
    Op {
        name: &'static str,
        operands: Vec<usize>,
        attrs: AttrDict,
        ty: Type,
    },
}

struct Planner<'a> {
    body: &'a Body,
    rw_ctx: &'a ge_ir::Context,
    plans: Vec<Plan>,
    types: Vec<Type>,
}

impl Planner<'_> {
    fn push(&mut self, p: Plan, t: Type) -> usize {
        self.plans.push(p);
        self.types.push(t);
        self.plans.len() - 1
    }

    fn plan(
        &mut self,
        e: &Expr,
        env: &mut Env<'_>,
        lets: &mut std::collections::HashMap<String, usize>,
    ) -> Result<usize, String> {
        let f = BodyFacts(self.body);
        match e {
            Expr::A(super::ast::AExpr::Var(n)) if lets.contains_key(n) => Ok(lets[n]),
            Expr::A(a) => match eval(a, env, &f)? {
                Val::Value(v) => {
                    let v = ValueId(v);
                    Ok(self.push(Plan::Existing(v), self.body.value_type(v)))
                }
                other => {
                    let attr = other.to_attr()?;
                    let t = attr
                        .value_type()
                        .ok_or_else(|| format!("'{attr}' is not a constant value"))?;
                    Ok(self.push(Plan::Const(attr), t))
                }
            },
            Expr::Op {
                name,
                operands,
                attrs,
            } => {
                let def = self
                    .rw_ctx
                    .op_def(name)
                    .ok_or_else(|| format!("unknown op '{name}'"))?;
                let ops: Vec<usize> = operands
                    .iter()
                    .map(|o| self.plan(o, env, lets))
                    .collect::<Result<_, _>>()?;
                let mut named = vec![];
                for (k, a) in attrs {
                    named.push((Ident::new(k), eval(a, env, &f)?.to_attr()?));
                }
                fill_default_attrs(def, &mut named);
                let dict = AttrDict::new(named);
                let tys: Vec<Type> = ops.iter().map(|&i| self.types[i]).collect();
                let consts: Vec<Option<Attribute>> = ops
                    .iter()
                    .map(|&i| match &self.plans[i] {
                        Plan::Const(a) => Some(*a),
                        Plan::Existing(v) => ge_ir::builder::constant_value(self.body, *v),
                        Plan::Op { .. } => None,
                    })
                    .collect();
                let rt = infer_result_types(def, &tys, dict, &consts)?;
                let t = *rt
                    .first()
                    .ok_or_else(|| format!("'{name}' has no result"))?;
                if rt.len() != 1 {
                    return Err(format!(
                        "'{name}' has {} results; rules build single-result ops",
                        rt.len()
                    ));
                }
                Ok(self.push(
                    Plan::Op {
                        name: def.name,
                        operands: ops,
                        attrs: dict,
                        ty: t,
                    },
                    t,
                ))
            }
        }
    }
}

impl RulePattern {
    /// Match all roots starting from `op` for root 0; returns the roots and bindings.
    fn match_roots(&self, body: &Body, op: OpId) -> Option<(Vec<OpId>, Env<'_>)> {
        let mut env = Env::new();
        let Pat::Op(first) = &self.rule.roots[0] else {
            return None;
        };
        if !match_op(body, first, op, &mut env) {
            return None;
        }
        let mut roots = vec![op];
        for p in &self.rule.roots[1..] {
            let Pat::Op(po) = p else { return None };
            // Candidates: other users of values bound so far.
            let mut cands: Vec<OpId> = vec![];
            for v in env.values() {
                if let Val::Value(x) = v {
                    for u in body.users(ValueId(*x)) {
                        if !roots.contains(&u) && !cands.contains(&u) {
                            cands.push(u);
                        }
                    }
                }
            }
            let found = cands.into_iter().find_map(|c| {
                let mut e2 = env.clone();
                match_op(body, po, c, &mut e2).then_some((c, e2))
            });
            let (c, e2) = found?;
            roots.push(c);
            env = e2;
        }
        Some((roots, env))
    }
}

impl Pattern for RulePattern {
    fn name(&self) -> &str {
        &self.rule.name
    }
    fn labels(&self) -> &[String] {
        &self.rule.labels
    }
    fn benefit(&self) -> u16 {
        self.rule.benefit
    }
    fn root(&self) -> Option<&str> {
        match &self.rule.roots[0] {
            Pat::Op(o) => Some(&o.name),
            _ => None,
        }
    }

    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter) -> Result<bool, String> {
        let Some((roots, mut env)) = self.match_roots(rw.body, op) else {
            return Ok(false);
        };
        // Multi-root rewrites insert before the last root: every root must be in
        // one block and no earlier root's result may be used before that point.
        let blocks: Vec<_> = roots
            .iter()
            .map(|&r| rw.body.op(r).parent_block())
            .collect();
        if blocks.windows(2).any(|w| w[0] != w[1]) {
            return Ok(false);
        }
        // (Positions in a block take a walk of the block: single-root rules skip it.)
        let last = if roots.len() == 1 {
            op
        } else {
            *roots
                .iter()
                .max_by_key(|&&r| rw.body.position_in_block(r))
                .unwrap_or(&op)
        };
        if roots.len() > 1 {
            let pos_last = rw.body.position_in_block(last);
            for &r in &roots {
                for &res in rw.body.op(r).results() {
                    for u in rw.body.users(res) {
                        if rw.body.op(u).parent_block() == blocks[0]
                            && rw.body.position_in_block(u) <= pos_last
                            && !roots.contains(&u)
                        {
                            return Ok(false);
                        }
                    }
                }
            }
        }
        if let Some(c) = &self.rule.cond {
            match eval(c, &env, &BodyFacts(rw.body)) {
                Ok(Val::Bool(true)) => {}
                // A condition that cannot be evaluated (non-static shape, …) does not hold.
                _ => return Ok(false),
            }
        }
        let mut planner = Planner {
            body: rw.body,
            rw_ctx: rw.ctx,
            plans: vec![],
            types: vec![],
        };
        let mut lets = std::collections::HashMap::new();
        for (v, e) in &self.rule.lets {
            match planner.plan(e, &mut env, &mut lets) {
                Ok(i) => {
                    lets.insert(v.clone(), i);
                }
                Err(_) => return Ok(false),
            }
        }
        let mut outs = vec![];
        for e in &self.rule.results {
            match planner.plan(e, &mut env, &mut lets) {
                Ok(i) => outs.push(i),
                Err(_) => return Ok(false),
            }
        }
        for (&r, &o) in roots.iter().zip(&outs) {
            let want = rw.body.result_types(r);
            if want.len() != 1 || want[0] != planner.types[o] {
                return Ok(false);
            }
        }
        // Build.
        let Planner { plans, .. } = planner;
        rw.set_insertion_point_before(last);
        let mut built: Vec<Option<ValueId>> = vec![None; plans.len()];
        for i in 0..plans.len() {
            let v = match &plans[i] {
                Plan::Existing(v) => *v,
                Plan::Const(a) => rw.constant(*a)?,
                Plan::Op {
                    name,
                    operands,
                    attrs,
                    ty,
                } => {
                    let vs: Vec<ValueId> = operands
                        .iter()
                        .map(|&k| built[k].ok_or("plan order"))
                        .collect::<Result<_, _>>()?;
                    let attrs: Vec<(&str, Attribute)> = attrs
                        .entries()
                        .iter()
                        .map(|(k, v)| (k.as_str(), *v))
                        .collect();
                    let new = rw.create(name, &vs, attrs, Some(vec![*ty]))?;
                    rw.body.result(new, 0)
                }
            };
            built[i] = Some(v);
        }
        for (&r, &o) in roots.iter().zip(&outs) {
            let v = built[o].ok_or("plan order")?;
            rw.replace_op(r, &[v])?;
        }
        Ok(true)
    }
}
