//! Tensor dimensions: static sizes, unknown (`?`) and symbolic expressions.
//!
//! Symbolic dims follow tract's `TDim`: a small expression language over named
//! symbols (`B`, `S`) with `+`, `*` by a constant and floor `/` by a constant,
//! kept in a canonical form so equal expressions compare equal.

use crate::ident::Ident;
use internment::Intern;
use std::collections::HashMap;
use std::fmt;

/// One dimension of a tensor shape.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Dim {
    Static(i64),
    /// `?` — unknown until run time.
    Unknown,
    /// A symbolic expression such as `B` or `(2*B+1)`.
    Sym(SymDim),
}

/// A canonicalised symbolic expression (interned: `Copy`, O(1) equality).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SymDim(Intern<DimExpr>);

/// The expression tree behind [`SymDim`]. Constructed only through the
/// normalising helpers so that structurally different spellings of the same
/// affine form are equal.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum DimExpr {
    Sym(Ident),
    Const(i64),
    /// Sum of terms, plus a constant. Terms are sorted, never `Const`, never `Add`.
    Add(Box<[DimExpr]>, i64),
    /// `coeff * expr`, coeff ∉ {0, 1}; expr is `Sym` or `Div`.
    Mul(i64, Box<DimExpr>),
    /// Floor division by a positive constant > 1.
    Div(Box<DimExpr>, i64),
}

// Shape inference reads best as `h.add(p).div_const(s)`; these are not the
// operator traits because dims combine with plain integers too.
#[allow(clippy::should_implement_trait)]
impl DimExpr {
    pub fn sym(name: &str) -> DimExpr {
        DimExpr::Sym(Ident::new(name))
    }

    /// The affine view `(terms, constant)` of an expression.
    fn terms(self) -> (Vec<(DimExpr, i64)>, i64) {
        match self {
            DimExpr::Const(c) => (vec![], c),
            DimExpr::Add(ts, c) => (
                ts.into_vec()
                    .into_iter()
                    .flat_map(|t| t.terms().0)
                    .collect(),
                c,
            ),
            DimExpr::Mul(k, e) => (vec![(*e, k)], 0),
            e => (vec![(e, 1)], 0),
        }
    }

    fn from_terms(mut terms: Vec<(DimExpr, i64)>, constant: i64) -> DimExpr {
        terms.sort_by(|a, b| format!("{:?}", a.0).cmp(&format!("{:?}", b.0)));
        let mut merged: Vec<(DimExpr, i64)> = Vec::with_capacity(terms.len());
        for (e, k) in terms {
            match merged.last_mut() {
                Some((last, lk)) if *last == e => *lk += k,
                _ => merged.push((e, k)),
            }
        }
        let mut out: Vec<DimExpr> = merged
            .into_iter()
            .filter(|(_, k)| *k != 0)
            .map(|(e, k)| {
                if k == 1 {
                    e
                } else {
                    DimExpr::Mul(k, Box::new(e))
                }
            })
            .collect();
        match (out.len(), constant) {
            (0, c) => DimExpr::Const(c),
            (1, 0) => out.pop().unwrap_or(DimExpr::Const(0)),
            _ => DimExpr::Add(out.into_boxed_slice(), constant),
        }
    }

    pub fn add(self, other: DimExpr) -> DimExpr {
        let (mut a, ca) = self.terms();
        let (b, cb) = other.terms();
        a.extend(b);
        DimExpr::from_terms(a, ca.saturating_add(cb))
    }

    pub fn mul(self, k: i64) -> DimExpr {
        let (ts, c) = self.terms();
        DimExpr::from_terms(
            ts.into_iter()
                .map(|(e, x)| (e, x.saturating_mul(k)))
                .collect(),
            c.saturating_mul(k),
        )
    }

    /// Floor division by a positive constant.
    pub fn div(self, d: i64) -> DimExpr {
        if d == 1 {
            return self;
        }
        if let (DimExpr::Const(c), true) = (&self, d > 0) {
            return DimExpr::Const(c.div_euclid(d));
        }
        let (ts, c) = self.clone().terms();
        if ts.iter().all(|(_, k)| k % d == 0) && c % d == 0 {
            return DimExpr::from_terms(ts.into_iter().map(|(e, k)| (e, k / d)).collect(), c / d);
        }
        if let DimExpr::Div(inner, d0) = self {
            return DimExpr::Div(inner, d0.saturating_mul(d));
        }
        DimExpr::Div(Box::new(self), d)
    }

    /// Evaluate with concrete symbol values; `None` if a symbol is unbound.
    pub fn eval(&self, env: &HashMap<Ident, i64>) -> Option<i64> {
        Some(match self {
            DimExpr::Sym(s) => *env.get(s)?,
            DimExpr::Const(c) => *c,
            DimExpr::Add(ts, c) => {
                let mut acc = *c;
                for t in ts.iter() {
                    acc = acc.checked_add(t.eval(env)?)?;
                }
                acc
            }
            DimExpr::Mul(k, e) => k.checked_mul(e.eval(env)?)?,
            DimExpr::Div(e, d) => e.eval(env)?.div_euclid(*d),
        })
    }

    /// Every symbol the expression mentions.
    pub fn symbols(&self, out: &mut Vec<Ident>) {
        match self {
            DimExpr::Sym(s) => {
                if !out.contains(s) {
                    out.push(*s)
                }
            }
            DimExpr::Const(_) => {}
            DimExpr::Add(ts, _) => ts.iter().for_each(|t| t.symbols(out)),
            DimExpr::Mul(_, e) | DimExpr::Div(e, _) => e.symbols(out),
        }
    }

    fn fmt_prec(&self, f: &mut fmt::Formatter<'_>, top: bool) -> fmt::Result {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.fmt_prec_rec(f, top))
    }

    fn fmt_prec_rec(&self, f: &mut fmt::Formatter<'_>, top: bool) -> fmt::Result {
        match self {
            DimExpr::Sym(s) => write!(f, "{s}"),
            DimExpr::Const(c) => write!(f, "{c}"),
            DimExpr::Mul(k, e) => {
                write!(f, "{k}*")?;
                e.fmt_prec(f, false)
            }
            DimExpr::Div(e, d) => {
                let paren = matches!(**e, DimExpr::Add(..));
                if paren {
                    f.write_str("(")?;
                }
                e.fmt_prec(f, true)?;
                if paren {
                    f.write_str(")")?;
                }
                write!(f, "/{d}")
            }
            DimExpr::Add(ts, c) => {
                if !top {
                    f.write_str("(")?;
                }
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str("+")?;
                    }
                    t.fmt_prec(f, false)?;
                }
                if *c > 0 {
                    write!(f, "+{c}")?;
                } else if *c < 0 {
                    write!(f, "-{}", c.unsigned_abs())?;
                }
                if !top {
                    f.write_str(")")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for DimExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_prec(f, true)
    }
}

impl SymDim {
    pub fn expr(self) -> &'static DimExpr {
        self.0.as_ref()
    }
}

impl fmt::Debug for SymDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.expr())
    }
}

#[allow(clippy::should_implement_trait)]
impl Dim {
    /// Canonicalise an expression into a dim: constants become `Static`.
    pub fn from_expr(e: DimExpr) -> Dim {
        match e {
            DimExpr::Const(c) => Dim::Static(c),
            e => Dim::Sym(SymDim(Intern::new(e))),
        }
    }

    pub fn sym(name: &str) -> Dim {
        Dim::from_expr(DimExpr::sym(name))
    }

    pub fn as_static(self) -> Option<i64> {
        match self {
            Dim::Static(n) => Some(n),
            _ => None,
        }
    }

    pub fn is_static(self) -> bool {
        matches!(self, Dim::Static(_))
    }

    fn expr(self) -> Option<DimExpr> {
        match self {
            Dim::Static(n) => Some(DimExpr::Const(n)),
            Dim::Unknown => None,
            Dim::Sym(s) => Some(s.expr().clone()),
        }
    }

    fn lift2(self, other: Dim, f: impl FnOnce(DimExpr, DimExpr) -> DimExpr) -> Dim {
        match (self.expr(), other.expr()) {
            (Some(a), Some(b)) => Dim::from_expr(f(a, b)),
            _ => Dim::Unknown,
        }
    }

    pub fn add(self, other: Dim) -> Dim {
        self.lift2(other, DimExpr::add)
    }
    pub fn sub(self, other: Dim) -> Dim {
        self.lift2(other, |a, b| a.add(b.mul(-1)))
    }
    pub fn mul_const(self, k: i64) -> Dim {
        self.expr()
            .map_or(Dim::Unknown, |e| Dim::from_expr(e.mul(k)))
    }
    /// Product of two dims; symbolic × symbolic is not affine and becomes `?`.
    pub fn mul(self, other: Dim) -> Dim {
        match (self, other) {
            (Dim::Static(a), b) => b.mul_const(a),
            (a, Dim::Static(b)) => a.mul_const(b),
            _ => Dim::Unknown,
        }
    }
    /// Floor division by a positive constant.
    pub fn div_const(self, d: i64) -> Dim {
        if d <= 0 {
            return Dim::Unknown;
        }
        self.expr()
            .map_or(Dim::Unknown, |e| Dim::from_expr(e.div(d)))
    }
    /// Ceiling division by a positive constant.
    pub fn ceil_div_const(self, d: i64) -> Dim {
        self.add(Dim::Static(d - 1)).div_const(d)
    }

    /// Concrete value under symbol bindings.
    pub fn eval(self, env: &HashMap<Ident, i64>) -> Option<i64> {
        match self {
            Dim::Static(n) => Some(n),
            Dim::Unknown => None,
            Dim::Sym(s) => s.expr().eval(env),
        }
    }

    /// Whether two dims may denote the same size (unknown matches anything).
    pub fn compatible(self, other: Dim) -> bool {
        match (self, other) {
            (Dim::Unknown, _) | (_, Dim::Unknown) => true,
            (a, b) => a == b,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Static(n) => write!(f, "{n}"),
            Dim::Unknown => f.write_str("?"),
            Dim::Sym(s) => match s.expr() {
                DimExpr::Sym(name) => write!(f, "{name}"),
                e => write!(f, "({e})"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_forms_normalise_to_equal_dims() {
        let b = Dim::sym("B");
        let two_b_plus_one = b.add(b).add(Dim::Static(1));
        let same = b.mul_const(2).add(Dim::Static(1));
        assert_eq!(two_b_plus_one, same);
        assert_eq!(two_b_plus_one.to_string(), "(2*B+1)");
        assert_eq!(b.sub(b), Dim::Static(0));
        assert_eq!(b.mul_const(4).div_const(2), b.mul_const(2));
    }

    #[test]
    fn floor_division_evaluates_like_integer_division() {
        let h = Dim::sym("H");
        let out = h
            .add(Dim::Static(2))
            .sub(Dim::Static(3))
            .div_const(2)
            .add(Dim::Static(1));
        let env: HashMap<Ident, i64> = [(Ident::new("H"), 224)].into_iter().collect();
        assert_eq!(out.eval(&env), Some((224 + 2 - 3) / 2 + 1));
        assert_eq!(out.to_string(), "((H-1)/2+1)");
    }

    #[test]
    fn unknown_absorbs_arithmetic() {
        assert_eq!(Dim::Unknown.add(Dim::Static(1)), Dim::Unknown);
        assert_eq!(Dim::sym("B").mul(Dim::sym("S")), Dim::Unknown);
        assert!(Dim::Unknown.compatible(Dim::Static(3)));
    }
}
