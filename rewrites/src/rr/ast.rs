//! The rule IR shared by both back ends (greedy patterns and egg rewrites).

use std::ops::Range;

#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub name: String,
    pub labels: Vec<String>,
    pub benefit: u16,
    /// One pattern per root (multi-root rules have several).
    pub roots: Vec<Pat>,
    /// `let ?v = expr in` bindings, in order.
    pub lets: Vec<(String, Expr)>,
    /// One replacement per root.
    pub results: Vec<Expr>,
    pub cond: Option<AExpr>,
    /// Where the rule is (byte range in its file) and which file.
    pub span: Range<usize>,
    pub file: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Pat {
    /// `?x`: binds (or must equal) a value.
    Var(String),
    /// `_`: anything.
    Wild,
    /// A literal number: a constant whose elements all equal it.
    Num(f64),
    Op(OpPat),
}

#[derive(Clone, Debug, PartialEq)]
pub struct OpPat {
    pub name: String,
    pub operands: Vec<Pat>,
    pub attrs: Vec<(String, AExpr)>,
    /// `as ?v`: the op's (first) result.
    pub bind: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Op {
        name: String,
        operands: Vec<Expr>,
        attrs: Vec<(String, AExpr)>,
    },
    /// A variable, a constant, or a helper call producing a value or an attribute.
    A(AExpr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AExpr {
    Var(String),
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    List(Vec<AExpr>),
    Call(String, Vec<AExpr>),
    Neg(Box<AExpr>),
    Not(Box<AExpr>),
    Bin(BinOp, Box<AExpr>, Box<AExpr>),
}

impl Pat {
    /// Variables bound by this pattern, in order.
    pub fn vars(&self, out: &mut Vec<String>) {
        match self {
            Pat::Var(v) => out.push(v.clone()),
            Pat::Op(o) => {
                for p in &o.operands {
                    p.vars(out);
                }
                for (_, a) in &o.attrs {
                    if let AExpr::Var(v) = a {
                        out.push(v.clone());
                    }
                }
                if let Some(b) = &o.bind {
                    out.push(b.clone());
                }
            }
            Pat::Wild | Pat::Num(_) => {}
        }
    }

    /// Op names used in the pattern.
    pub fn op_names(&self, out: &mut Vec<String>) {
        if let Pat::Op(o) = self {
            out.push(o.name.clone());
            for p in &o.operands {
                p.op_names(out);
            }
        }
    }
}

impl AExpr {
    pub fn vars(&self, out: &mut Vec<String>) {
        match self {
            AExpr::Var(v) => out.push(v.clone()),
            AExpr::List(xs) | AExpr::Call(_, xs) => xs.iter().for_each(|x| x.vars(out)),
            AExpr::Neg(x) | AExpr::Not(x) => x.vars(out),
            AExpr::Bin(_, a, b) => {
                a.vars(out);
                b.vars(out)
            }
            _ => {}
        }
    }
}

impl Expr {
    pub fn vars(&self, out: &mut Vec<String>) {
        match self {
            Expr::Op {
                operands, attrs, ..
            } => {
                operands.iter().for_each(|e| e.vars(out));
                attrs.iter().for_each(|(_, a)| a.vars(out));
            }
            Expr::A(a) => a.vars(out),
        }
    }

    pub fn op_names(&self, out: &mut Vec<String>) {
        if let Expr::Op { name, operands, .. } = self {
            out.push(name.clone());
            operands.iter().for_each(|e| e.op_names(out));
        }
    }
}
