//! Evaluating attribute expressions and conditions of rules.

use super::ast::{AExpr, BinOp};
use super::helpers::{lookup, Facts, Val};
use std::borrow::Cow;

/// Bindings of a rule's variables while matching. A rule binds a handful of
/// names, so a vector searched linearly beats a hash map (no hashing), and the
/// names borrow the rule's own strings, so binding allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct Env<'a>(Vec<(Cow<'a, str>, Val)>);

impl<'a> Env<'a> {
    pub fn new() -> Env<'a> {
        Env(Vec::new())
    }
    pub fn get(&self, name: &str) -> Option<&Val> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
    /// Bind `name` (replacing an earlier binding).
    pub fn insert(&mut self, name: impl Into<Cow<'a, str>>, v: Val) {
        let name = name.into();
        match self.0.iter_mut().find(|(k, _)| *k == name) {
            Some(e) => e.1 = v,
            None => self.0.push((name, v)),
        }
    }
    pub fn values(&self) -> impl Iterator<Item = &Val> {
        self.0.iter().map(|(_, v)| v)
    }
}

pub fn eval(e: &AExpr, env: &Env<'_>, f: &dyn Facts) -> Result<Val, String> {
    Ok(match e {
        AExpr::Var(v) => env.get(v).cloned().ok_or_else(|| format!("unbound {v}"))?,
        AExpr::Int(i) => Val::Int(*i),
        AExpr::Float(x) => Val::Float(*x),
        AExpr::Str(s) => Val::Str(s.clone()),
        AExpr::Bool(b) => Val::Bool(*b),
        AExpr::List(xs) => Val::List(
            xs.iter()
                .map(|x| eval(x, env, f))
                .collect::<Result<_, _>>()?,
        ),
        AExpr::Call(name, args) => {
            let h = lookup(name).ok_or_else(|| format!("unknown helper '{name}'"))?;
            let vals: Vec<Val> = args
                .iter()
                .map(|a| eval(a, env, f))
                .collect::<Result<_, _>>()?;
            (h.f)(f, &vals).map_err(|m| format!("{name}: {m}"))?
        }
        AExpr::Neg(x) => match eval(x, env, f)?.norm() {
            Val::Int(i) => Val::Int(-i),
            v => Val::Float(-v.float()?),
        },
        AExpr::Not(x) => Val::Bool(!eval(x, env, f)?.bool()?),
        AExpr::Bin(op, a, b) => {
            // Short-circuit logic so `is_const(?c) && splat_value(?c) == 0.0` is safe.
            if *op == BinOp::And {
                return Ok(Val::Bool(
                    eval(a, env, f)?.bool()? && eval(b, env, f)?.bool()?,
                ));
            }
            if *op == BinOp::Or {
                return Ok(Val::Bool(
                    eval(a, env, f)?.bool()? || eval(b, env, f)?.bool()?,
                ));
            }
            let (x, y) = (eval(a, env, f)?, eval(b, env, f)?);
            match op {
                BinOp::Eq => Val::Bool(x.equals(&y)),
                BinOp::Ne => Val::Bool(!x.equals(&y)),
                BinOp::Lt => Val::Bool(x.float()? < y.float()?),
                BinOp::Le => Val::Bool(x.float()? <= y.float()?),
                BinOp::Gt => Val::Bool(x.float()? > y.float()?),
                BinOp::Ge => Val::Bool(x.float()? >= y.float()?),
                _ => arith(*op, &x.norm(), &y.norm())?,
            }
        }
    })
}

fn arith(op: BinOp, x: &Val, y: &Val) -> Result<Val, String> {
    if let (Val::Int(a), Val::Int(b)) = (x, y) {
        return Ok(Val::Int(
            match op {
                BinOp::Add => a.checked_add(*b),
                BinOp::Sub => a.checked_sub(*b),
                BinOp::Mul => a.checked_mul(*b),
                BinOp::Div => a.checked_div(*b),
                _ => a.checked_rem(*b),
            }
            .ok_or("integer overflow or division by zero")?,
        ));
    }
    let (a, b) = (x.float()?, y.float()?);
    Ok(Val::Float(match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        _ => a % b,
    }))
}
