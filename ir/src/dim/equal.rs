//! Symbol equalities learned where two different symbolic dims must be equal.
//!
//! A Bloom decoder builds its ALiBi bias from the attention mask, of shape
//! `[4*BATCH, 1, M]` with `M` the mask's own length symbol, and adds it to
//! scores `[4*BATCH, SEQUENCE, PAST_SEQUENCE+SEQUENCE]`. Nothing in the graph
//! says `M = PAST_SEQUENCE+SEQUENCE`; the broadcast is valid only when it
//! holds (or `M = 1`). As onnxruntime's and torch's symbolic shapes do, the
//! importer *learns* the equality there: it substitutes `M` by
//! `PAST_SEQUENCE+SEQUENCE` everywhere (so the mask's input type reads
//! `tensor<BATCHx(PAST_SEQUENCE+SEQUENCE)xi64>`), records it in the module
//! attribute `ge.symbol_equalities = {M = "PAST_SEQUENCE+SEQUENCE"}`, and the
//! runtime checks the input dim against the expression when the inputs bind
//! the symbols — a mask of another length (1 included: that broadcast is
//! refused, never computed wrongly) is a clear error naming the inputs.
//!
//! Only symbols that graph inputs bind ("learnable") are substituted, and
//! only by expressions over learnable symbols, so every learned equality can
//! be checked at bind. A symbol is never equated with a constant (that would
//! make a dynamic axis static behind the user's back), and two expressions
//! that are not plain symbols are not solved: those stay errors.
//!
//! [`SymbolEqualities`] is a union-find over symbols with expressions as
//! representatives: each learned symbol maps to its fully resolved
//! expression, which mentions no learned symbol. Two plain symbols unify to
//! the smaller name, so the result does not depend on the order the
//! equalities are met in.

use super::{Dim, DimExpr};
use crate::ident::Ident;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};

/// Learned equalities `symbol = expression`, every expression resolved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolEqualities {
    map: BTreeMap<Ident, DimExpr>,
}

impl SymbolEqualities {
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// `(symbol, expression)` pairs, by symbol.
    pub fn iter(&self) -> impl Iterator<Item = (Ident, &DimExpr)> {
        self.map.iter().map(|(s, e)| (*s, e))
    }

    /// The expression a symbol was equated with, if any.
    pub fn get(&self, sym: Ident) -> Option<&DimExpr> {
        self.map.get(&sym)
    }

    /// `e` with every learned symbol replaced by its expression.
    pub fn resolve(&self, e: &DimExpr) -> DimExpr {
        let mut syms = vec![];
        e.symbols(&mut syms);
        syms.into_iter()
            .filter_map(|s| self.map.get(&s).map(|by| (s, by)))
            .fold(e.clone(), |acc, (s, by)| acc.substitute(s, by))
    }

    /// A dim with every learned symbol replaced (`?` and sizes unchanged).
    pub fn resolve_dim(&self, d: Dim) -> Dim {
        match d {
            Dim::Sym(s) if !self.map.is_empty() => Dim::from_expr(self.resolve(s.expr())),
            d => d,
        }
    }

    /// Learn that `p` and `q` are equal, when one resolves to a learnable
    /// symbol and the other to a non-constant expression over learnable
    /// symbols not mentioning it; the unified dim, or `None` (nothing learned)
    /// when that is not so. Equal dims unify without learning anything.
    pub fn unify(&mut self, p: Dim, q: Dim, learnable: &dyn Fn(Ident) -> bool) -> Option<Dim> {
        let (a, b) = (self.resolve(&p.expr()?), self.resolve(&q.expr()?));
        if a == b {
            return Some(Dim::from_expr(a));
        }
        let solvable = |x: &DimExpr, by: &DimExpr| -> Option<Ident> {
            let DimExpr::Sym(s) = x else { return None };
            let mut syms = vec![];
            by.symbols(&mut syms);
            (learnable(*s)
                && !syms.is_empty()
                && !syms.contains(s)
                && syms.iter().all(|&t| learnable(t)))
            .then_some(*s)
        };
        // Two symbols: the larger name is replaced by the smaller.
        let (sym, by) = match (solvable(&a, &b), solvable(&b, &a)) {
            (Some(x), Some(y)) if y > x => (y, a),
            (Some(x), _) => (x, b),
            (None, Some(y)) => (y, a),
            (None, None) => return None,
        };
        for e in self.map.values_mut() {
            *e = e.substitute(sym, &by);
        }
        self.map.insert(sym, by.clone());
        Some(Dim::from_expr(by))
    }
}

impl DimExpr {
    /// `self` with symbol `sym` replaced by `by`, renormalised.
    pub fn substitute(&self, sym: Ident, by: &DimExpr) -> DimExpr {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.substitute_rec(sym, by))
    }

    fn substitute_rec(&self, sym: Ident, by: &DimExpr) -> DimExpr {
        let sub = |e: &DimExpr| e.substitute(sym, by);
        let fold = |xs: &[DimExpr], f: fn(DimExpr, DimExpr) -> DimExpr| {
            let mut it = xs.iter().map(sub);
            let first = it.next().unwrap_or(DimExpr::Const(0));
            it.fold(first, f)
        };
        match self {
            DimExpr::Sym(s) if *s == sym => by.clone(),
            DimExpr::Sym(_) | DimExpr::Const(_) => self.clone(),
            DimExpr::Add(ts, c) => fold(ts, DimExpr::add).add(DimExpr::Const(*c)),
            DimExpr::Mul(k, e) => sub(e).mul(*k),
            DimExpr::Prod(xs) => fold(xs, DimExpr::mul_expr),
            DimExpr::Div(e, d) => sub(e).div(*d),
            DimExpr::Mod(e, d) => sub(e).rem(*d),
            DimExpr::Min(xs) => fold(xs, DimExpr::min),
            DimExpr::Max(xs) => fold(xs, DimExpr::max),
        }
    }
}

/// The learner of the import running on this thread (shape inference has
/// no other channel back to its caller).
struct Learner {
    eq: SymbolEqualities,
    learnable: HashSet<Ident>,
}

thread_local! {
    static LEARNER: RefCell<Option<Learner>> = const { RefCell::new(None) };
}

/// Run `f` learning equalities, starting from `eq`; the equalities known
/// when `f` returns. Shape inference outside such a scope learns nothing.
pub fn learning<R>(eq: SymbolEqualities, f: impl FnOnce() -> R) -> (R, SymbolEqualities) {
    let outer = LEARNER.with(|l| {
        l.borrow_mut().replace(Learner {
            eq,
            learnable: HashSet::new(),
        })
    });
    let r = f();
    let learned = LEARNER.with(|l| std::mem::replace(&mut *l.borrow_mut(), outer));
    (r, learned.map(|l| l.eq).unwrap_or_default())
}

/// Declare symbols that graph inputs bind: the learner may equate them.
pub fn allow_learning(syms: impl IntoIterator<Item = Ident>) {
    LEARNER.with(|l| {
        if let Some(l) = l.borrow_mut().as_mut() {
            l.learnable.extend(syms);
        }
    });
}

/// Two dims an op requires to be equal (a broadcast where neither is 1, a
/// contraction): the unified dim when a learner is running and can equate
/// them (see [`SymbolEqualities::unify`]), else `None`.
pub fn learn_equal(p: Dim, q: Dim) -> Option<Dim> {
    LEARNER.with(|l| {
        let mut l = l.borrow_mut();
        let l = l.as_mut()?;
        let learnable = l.learnable.clone();
        l.eq.unify(p, q, &|s| learnable.contains(&s))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all(_: Ident) -> bool {
        true
    }

    #[test]
    fn a_mask_length_learns_past_plus_sequence() {
        let (m, p, s) = (Dim::sym("M"), Dim::sym("P"), Dim::sym("S"));
        let mut eq = SymbolEqualities::default();
        let u = eq.unify(m, p.add(s), &all);
        assert_eq!(u, Some(p.add(s)));
        assert_eq!(eq.resolve_dim(m.mul_const(4)), p.add(s).mul_const(4));
        // Constants, self-reference and unlearnable symbols are refused.
        assert_eq!(eq.unify(s, Dim::Static(7), &all), None);
        assert_eq!(eq.unify(s, s.add(Dim::Static(1)), &all), None);
        let mut none = SymbolEqualities::default();
        assert_eq!(none.unify(Dim::sym("A"), Dim::sym("B"), &|_| false), None);
        // Two sums are not solved.
        assert_eq!(eq.unify(p.add(s), s.mul_const(2), &all), None);
    }

    #[test]
    fn learning_is_scoped_to_its_thread_and_closure() {
        assert_eq!(learn_equal(Dim::sym("A"), Dim::sym("B")), None);
        let (u, eq) = learning(SymbolEqualities::default(), || {
            allow_learning([Ident::new("A"), Ident::new("B")]);
            learn_equal(Dim::sym("B"), Dim::sym("A"))
        });
        assert_eq!(u, Some(Dim::sym("A")));
        assert_eq!(eq.get(Ident::new("B")), Some(&DimExpr::sym("A")));
        assert_eq!(learn_equal(Dim::sym("A"), Dim::sym("B")), None);
    }

    proptest! {
        /// Unifying symbols with symbols and sums of fresh symbols gives the
        /// same equalities in any order.
        #[test]
        fn unification_is_order_independent(
            pairs in proptest::collection::vec((0usize..6, 0usize..6, any::<bool>()), 1..8),
            seed in any::<u64>(),
        ) {
            let names = ["A", "B", "C", "D", "E", "F"];
            let eqs: Vec<(Dim, Dim)> = pairs
                .iter()
                .enumerate()
                .map(|(i, &(x, y, sum))| {
                    let rhs = if sum {
                        Dim::sym(&format!("X{i}")).add(Dim::sym(&format!("Y{i}")))
                    } else {
                        Dim::sym(names[y])
                    };
                    (Dim::sym(names[x]), rhs)
                })
                .collect();
            let run = |order: &[usize]| {
                let mut eq = SymbolEqualities::default();
                let ok: Vec<bool> = order
                    .iter()
                    .map(|&i| eq.unify(eqs[i].0, eqs[i].1, &all).is_some())
                    .collect();
                (eq, ok.iter().all(|&b| b))
            };
            let fwd: Vec<usize> = (0..eqs.len()).collect();
            let mut shuffled = fwd.clone();
            let mut r = seed;
            for i in (1..shuffled.len()).rev() {
                r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                shuffled.swap(i, (r >> 33) as usize % (i + 1));
            }
            let (a, a_ok) = run(&fwd);
            let (b, b_ok) = run(&shuffled);
            // Where every equation is solvable in both orders, the
            // equalities agree: each dim resolves to the same expression.
            if a_ok && b_ok {
                for &(p, q) in &eqs {
                    prop_assert_eq!(a.resolve_dim(p), b.resolve_dim(p));
                    prop_assert_eq!(a.resolve_dim(p), a.resolve_dim(q));
                }
                prop_assert_eq!(a, b);
            }
        }
    }
}
