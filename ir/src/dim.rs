//! Tensor dimensions: static sizes, unknown (`?`) and symbolic expressions.
//!
//! Symbolic dims follow tract's `TDim`: an expression language over named
//! symbols (`B`, `S`) — sums, products, floor division and remainder by a
//! constant (or by an expression that divides exactly), `min` and `max` —
//! kept in a canonical form so equal expressions compare equal. The canonical
//! form is a polynomial: a sum of monomials with integer coefficients plus a
//! constant, where a monomial is a sorted product of atoms (a symbol, or a
//! `/`, `%`, `min`, `max` node that does not simplify further). Products
//! distribute over sums, so `(B+1)*S` and `B*S+S` are the same dim.
//!
//! Symbols denote sizes: they range over `0..=SYM_MAX` unless bounded
//! (`ge.symbol_bounds`). `min`/`max` use that range to simplify (`min(S,
//! 9223372036854775807)` is `S`), and [`DimExpr::upper_bound`] gives a sound
//! upper bound by interval arithmetic — evaluating at the bounds is not one
//! once expressions subtract or take a `min`.

use crate::ident::Ident;
use internment::Intern;
use std::collections::HashMap;
use std::fmt;

/// The largest value a symbol is assumed to take when it has no bound
/// (2^40 elements along one axis is beyond any real tensor).
pub const SYM_MAX: i64 = 1 << 40;

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
/// normalising helpers so that different spellings of the same polynomial
/// are equal (the derived order sorts terms and factors).
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum DimExpr {
    Sym(Ident),
    Const(i64),
    /// Sum of terms, plus a constant. Terms are sorted, never `Const`, never `Add`.
    Add(Box<[DimExpr]>, i64),
    /// `coeff * monomial`, coeff ∉ {0, 1}; the monomial is an atom or a `Prod`.
    Mul(i64, Box<DimExpr>),
    /// A product of two or more atoms, sorted.
    Prod(Box<[DimExpr]>),
    /// Floor division by a constant > 1.
    Div(Box<DimExpr>, i64),
    /// Remainder (Euclidean, in `0..d`) by a constant > 1.
    Mod(Box<DimExpr>, i64),
    /// Minimum of two or more expressions, sorted, at most one constant.
    Min(Box<[DimExpr]>),
    /// Maximum of two or more expressions, sorted, at most one constant.
    Max(Box<[DimExpr]>),
}

/// A polynomial: `(monomial atoms, coefficient)` terms plus a constant.
type Poly = (Vec<(Vec<DimExpr>, i64)>, i64);

// Shape inference reads best as `h.add(p).div_const(s)`; these are not the
// operator traits because dims combine with plain integers too.
#[allow(clippy::should_implement_trait)]
impl DimExpr {
    pub fn sym(name: &str) -> DimExpr {
        DimExpr::Sym(Ident::new(name))
    }

    /// The polynomial view of an expression.
    fn poly(self) -> Poly {
        match self {
            DimExpr::Const(c) => (vec![], c),
            DimExpr::Add(ts, c) => (
                ts.into_vec().into_iter().flat_map(|t| t.poly().0).collect(),
                c,
            ),
            DimExpr::Mul(k, e) => (e.poly().0.into_iter().map(|(m, x)| (m, x * k)).collect(), 0),
            DimExpr::Prod(atoms) => (vec![(atoms.into_vec(), 1)], 0),
            atom => (vec![(vec![atom], 1)], 0),
        }
    }

    fn monomial(mut atoms: Vec<DimExpr>) -> DimExpr {
        match atoms.len() {
            1 => atoms.pop().unwrap_or(DimExpr::Const(1)),
            _ => DimExpr::Prod(atoms.into_boxed_slice()),
        }
    }

    fn from_poly((mut terms, constant): Poly) -> DimExpr {
        for (m, _) in terms.iter_mut() {
            m.sort();
        }
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        let mut merged: Vec<(Vec<DimExpr>, i64)> = Vec::with_capacity(terms.len());
        for (m, k) in terms {
            match merged.last_mut() {
                Some((last, lk)) if *last == m => *lk = lk.saturating_add(k),
                _ => merged.push((m, k)),
            }
        }
        let mut constant = constant;
        let mut out: Vec<DimExpr> = vec![];
        for (m, k) in merged {
            if k == 0 {
                continue;
            }
            if m.is_empty() {
                constant = constant.saturating_add(k);
                continue;
            }
            let m = DimExpr::monomial(m);
            out.push(if k == 1 {
                m
            } else {
                DimExpr::Mul(k, Box::new(m))
            });
        }
        match (out.len(), constant) {
            (0, c) => DimExpr::Const(c),
            (1, 0) => out.pop().unwrap_or(DimExpr::Const(0)),
            _ => DimExpr::Add(out.into_boxed_slice(), constant),
        }
    }

    pub fn add(self, other: DimExpr) -> DimExpr {
        let (mut a, ca) = self.poly();
        let (b, cb) = other.poly();
        a.extend(b);
        DimExpr::from_poly((a, ca.saturating_add(cb)))
    }

    pub fn sub(self, other: DimExpr) -> DimExpr {
        self.add(other.mul(-1))
    }

    /// Multiplication by a constant.
    pub fn mul(self, k: i64) -> DimExpr {
        let (ts, c) = self.poly();
        DimExpr::from_poly((
            ts.into_iter()
                .map(|(e, x)| (e, x.saturating_mul(k)))
                .collect(),
            c.saturating_mul(k),
        ))
    }

    /// The product of two expressions (distributed over sums).
    pub fn mul_expr(self, other: DimExpr) -> DimExpr {
        if let DimExpr::Const(k) = other {
            return self.mul(k);
        }
        if let DimExpr::Const(k) = self {
            return other.mul(k);
        }
        let (a, ca) = self.poly();
        let (b, cb) = other.poly();
        let mut terms = vec![];
        for (ma, ka) in &a {
            for (mb, kb) in &b {
                let mut m = ma.clone();
                m.extend(mb.iter().cloned());
                terms.push((m, ka.saturating_mul(*kb)));
            }
            terms.push((ma.clone(), ka.saturating_mul(cb)));
        }
        for (mb, kb) in b {
            terms.push((mb, kb.saturating_mul(ca)));
        }
        DimExpr::from_poly((terms, ca.saturating_mul(cb)))
    }

    /// Floor division by a positive constant.
    pub fn div(self, d: i64) -> DimExpr {
        if d == 1 || d <= 0 {
            return self;
        }
        if let DimExpr::Const(c) = self {
            return DimExpr::Const(c.div_euclid(d));
        }
        let (ts, c) = self.clone().poly();
        if ts.iter().all(|(_, k)| k % d == 0) && c % d == 0 {
            return DimExpr::from_poly((ts.into_iter().map(|(e, k)| (e, k / d)).collect(), c / d));
        }
        if let DimExpr::Div(inner, d0) = self {
            return DimExpr::Div(inner, d0.saturating_mul(d));
        }
        DimExpr::Div(Box::new(self), d)
    }

    /// Euclidean remainder by a positive constant: terms whose coefficient
    /// `d` divides drop out, the constant is reduced.
    pub fn rem(self, d: i64) -> DimExpr {
        if d <= 0 {
            return self;
        }
        if d == 1 {
            return DimExpr::Const(0);
        }
        let (ts, c) = self.poly();
        let ts: Vec<_> = ts.into_iter().filter(|(_, k)| k % d != 0).collect();
        let c = c.rem_euclid(d);
        if ts.is_empty() {
            return DimExpr::Const(c);
        }
        let rest = DimExpr::from_poly((ts, c));
        if let DimExpr::Mod(_, d0) = &rest {
            if *d0 == d {
                return rest;
            }
        }
        DimExpr::Mod(Box::new(rest), d)
    }

    /// `self / other` when `other` is a constant, or a polynomial that
    /// divides `self` exactly (`(32*B*P+32*B*S) / (8*P+8*S)` is `4*B`, the
    /// `-1` of a Reshape to `[-1, P+S, 8]`); `None` otherwise (the quotient
    /// would not be a polynomial).
    pub fn div_expr(self, other: DimExpr) -> Option<DimExpr> {
        if let DimExpr::Const(d) = other {
            return (d > 0).then(|| self.div(d));
        }
        if self == other {
            return Some(DimExpr::Const(1));
        }
        let (ob, oc) = other.clone().poly();
        let [(m, k)] = ob.as_slice() else {
            return self.div_poly(other);
        };
        if oc != 0 || *k == 0 {
            return self.div_poly(other);
        }
        let (ts, c) = self.poly();
        if c != 0 {
            return None;
        }
        let mut out = vec![];
        for (mut tm, tk) in ts {
            if tk % k != 0 {
                return None;
            }
            for a in m {
                let i = tm.iter().position(|x| x == a)?;
                tm.remove(i);
            }
            out.push((tm, tk / k));
        }
        Some(DimExpr::from_poly((out, 0)))
    }

    /// Exact division by a polynomial of two or more terms, by long
    /// division: the largest term of what is left (by degree, then by its
    /// atoms) over the divisor's largest term is the next term of the
    /// quotient. `None` when a leading term does not divide, or something
    /// is left over.
    fn div_poly(self, other: DimExpr) -> Option<DimExpr> {
        fn lead(e: DimExpr) -> Option<(Vec<DimExpr>, i64)> {
            e.poly()
                .0
                .into_iter()
                .max_by(|a, b| (a.0.len(), &a.0).cmp(&(b.0.len(), &b.0)))
        }
        let (dm, dk) = lead(other.clone())?;
        let mut left = self;
        let mut quotient = DimExpr::Const(0);
        // Each step removes the leading term; a quotient of more terms than
        // this is not worth a shape (and bounds the loop).
        for _ in 0..64 {
            if left == DimExpr::Const(0) {
                return Some(quotient);
            }
            let (mut tm, tk) = lead(left.clone())?;
            if dk == 0 || tk % dk != 0 {
                return None;
            }
            for a in &dm {
                let i = tm.iter().position(|x| x == a)?;
                tm.remove(i);
            }
            let q = DimExpr::from_poly((vec![(tm, tk / dk)], 0));
            left = left.sub(q.clone().mul_expr(other.clone()));
            quotient = quotient.add(q);
        }
        None
    }

    /// `self % other` when `other` is a constant or divides `self` exactly.
    pub fn rem_expr(self, other: DimExpr) -> Option<DimExpr> {
        if let DimExpr::Const(d) = other {
            return (d > 0).then(|| self.rem(d));
        }
        self.div_expr(other).map(|_| DimExpr::Const(0))
    }

    /// Whether `self <= other` for every value of the symbols in
    /// `0..=SYM_MAX`, as far as can be shown: equal expressions; a
    /// difference whose interval is not positive; a `min` one of whose
    /// arguments is `<= other` (`min(S, 64) <= S`); a `max` one of whose
    /// arguments is `>= self` (`S <= max(S, 8)`). The last two see what
    /// interval arithmetic cannot: in `min(S, 64) - S` the two `S` are one
    /// value. `false` means "not shown", not "greater".
    pub fn provably_le(&self, other: &DimExpr) -> bool {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.provably_le_rec(other))
    }

    fn provably_le_rec(&self, other: &DimExpr) -> bool {
        if self == other {
            return true;
        }
        let (_, hi) = self
            .clone()
            .sub(other.clone())
            .range(&|_| Some((0, SYM_MAX)));
        if hi <= 0 {
            return true;
        }
        if let DimExpr::Min(xs) = self {
            if xs.iter().any(|x| x.provably_le(other)) {
                return true;
            }
        }
        if let DimExpr::Max(ys) = other {
            if ys.iter().any(|y| self.provably_le(y)) {
                return true;
            }
        }
        false
    }

    /// The minimum (`max = false`) or maximum of two expressions.
    fn extremum(self, other: DimExpr, max: bool) -> DimExpr {
        // Decided when one is shown to be at most the other.
        if self.provably_le(&other) {
            return if max { other } else { self };
        }
        if other.provably_le(&self) {
            return if max { self } else { other };
        }
        let mut args = vec![];
        for e in [self, other] {
            match (e, max) {
                (DimExpr::Min(xs), false) | (DimExpr::Max(xs), true) => args.extend(xs.into_vec()),
                (e, _) => args.push(e),
            }
        }
        // At most one constant: the smallest (min) or largest (max).
        let consts: Vec<i64> = args
            .iter()
            .filter_map(|a| match a {
                DimExpr::Const(c) => Some(*c),
                _ => None,
            })
            .collect();
        args.retain(|a| !matches!(a, DimExpr::Const(_)));
        let pick = if max {
            consts.iter().max()
        } else {
            consts.iter().min()
        };
        if let Some(&c) = pick {
            args.push(DimExpr::Const(c));
        }
        args.sort();
        args.dedup();
        // Drop an argument another one dominates (`max(B, B+S)` is `B+S`).
        let dominated = |a: &DimExpr, b: &DimExpr| {
            if max {
                a.provably_le(b)
            } else {
                b.provably_le(a)
            }
        };
        let mut kept: Vec<DimExpr> = vec![];
        for (i, a) in args.iter().enumerate() {
            let beaten = args
                .iter()
                .enumerate()
                .any(|(j, b)| j != i && dominated(a, b) && (!dominated(b, a) || j < i));
            if !beaten {
                kept.push(a.clone());
            }
        }
        let mut args = kept;
        match args.len() {
            1 => args.pop().unwrap_or(DimExpr::Const(0)),
            _ if max => DimExpr::Max(args.into_boxed_slice()),
            _ => DimExpr::Min(args.into_boxed_slice()),
        }
    }

    pub fn min(self, other: DimExpr) -> DimExpr {
        self.extremum(other, false)
    }

    pub fn max(self, other: DimExpr) -> DimExpr {
        self.extremum(other, true)
    }

    /// An interval `[lo, hi]` holding every value of the expression when each
    /// symbol lies in the range `sym` gives (saturating arithmetic). An
    /// unbounded symbol (`None`) makes the upper end `i64::MAX`.
    pub fn range(&self, sym: &dyn Fn(Ident) -> Option<(i64, i64)>) -> (i64, i64) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.range_rec(sym))
    }

    fn range_rec(&self, sym: &dyn Fn(Ident) -> Option<(i64, i64)>) -> (i64, i64) {
        let mul = |(a, b): (i64, i64), (c, d): (i64, i64)| {
            let xs = [
                a.saturating_mul(c),
                a.saturating_mul(d),
                b.saturating_mul(c),
                b.saturating_mul(d),
            ];
            (
                xs.iter().copied().min().unwrap_or(0),
                xs.iter().copied().max().unwrap_or(0),
            )
        };
        match self {
            DimExpr::Sym(s) => sym(*s).unwrap_or((0, i64::MAX)),
            DimExpr::Const(c) => (*c, *c),
            DimExpr::Add(ts, c) => ts.iter().fold((*c, *c), |(lo, hi), t| {
                let (a, b) = t.range(sym);
                (lo.saturating_add(a), hi.saturating_add(b))
            }),
            DimExpr::Mul(k, e) => mul((*k, *k), e.range(sym)),
            DimExpr::Prod(xs) => xs.iter().fold((1, 1), |acc, x| mul(acc, x.range(sym))),
            DimExpr::Div(e, d) => {
                let (a, b) = e.range(sym);
                (a.div_euclid(*d), b.div_euclid(*d))
            }
            DimExpr::Mod(_, d) => (0, d - 1),
            DimExpr::Min(xs) => xs
                .iter()
                .map(|x| x.range(sym))
                .fold((i64::MAX, i64::MAX), |(lo, hi), (a, b)| {
                    (lo.min(a), hi.min(b))
                }),
            DimExpr::Max(xs) => xs
                .iter()
                .map(|x| x.range(sym))
                .fold((i64::MIN, i64::MIN), |(lo, hi), (a, b)| {
                    (lo.max(a), hi.max(b))
                }),
        }
    }

    /// A sound upper bound with every symbol in `0..=bounds[symbol]`; `None`
    /// when a symbol the expression needs has no bound.
    pub fn upper_bound(&self, bounds: &HashMap<Ident, i64>) -> Option<i64> {
        let mut syms = vec![];
        self.symbols(&mut syms);
        if syms.iter().any(|s| !bounds.contains_key(s)) {
            return None;
        }
        let hi = self.range(&|s| bounds.get(&s).map(|&b| (0, b))).1;
        (hi < i64::MAX).then_some(hi)
    }

    /// Evaluate with concrete symbol values; `None` if a symbol is unbound
    /// (or on overflow).
    pub fn eval(&self, env: &HashMap<Ident, i64>) -> Option<i64> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.eval_rec(env))
    }

    fn eval_rec(&self, env: &HashMap<Ident, i64>) -> Option<i64> {
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
            DimExpr::Prod(xs) => {
                let mut acc: i64 = 1;
                for x in xs.iter() {
                    acc = acc.checked_mul(x.eval(env)?)?;
                }
                acc
            }
            DimExpr::Div(e, d) => e.eval(env)?.div_euclid(*d),
            DimExpr::Mod(e, d) => e.eval(env)?.rem_euclid(*d),
            DimExpr::Min(xs) => {
                let mut acc = i64::MAX;
                for x in xs.iter() {
                    acc = acc.min(x.eval(env)?);
                }
                acc
            }
            DimExpr::Max(xs) => {
                let mut acc = i64::MIN;
                for x in xs.iter() {
                    acc = acc.max(x.eval(env)?);
                }
                acc
            }
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
            DimExpr::Add(ts, _) | DimExpr::Prod(ts) | DimExpr::Min(ts) | DimExpr::Max(ts) => {
                ts.iter().for_each(|t| t.symbols(out))
            }
            DimExpr::Mul(_, e) | DimExpr::Div(e, _) | DimExpr::Mod(e, _) => e.symbols(out),
        }
    }

    fn fmt_prec(&self, f: &mut fmt::Formatter<'_>, prec: u8) -> fmt::Result {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.fmt_prec_rec(f, prec))
    }

    /// `prec`: 0 at the top (a sum needs no parentheses), 1 as an operand of
    /// `/` or `%`, 2 as a factor of `*` (where `B*(S/2)` must keep its
    /// parentheses: `B*S/2` reads as `(B*S)/2`).
    fn fmt_prec_rec(&self, f: &mut fmt::Formatter<'_>, prec: u8) -> fmt::Result {
        let open = |f: &mut fmt::Formatter<'_>, p: bool| if p { f.write_str("(") } else { Ok(()) };
        let close = |f: &mut fmt::Formatter<'_>, p: bool| if p { f.write_str(")") } else { Ok(()) };
        match self {
            DimExpr::Sym(s) => write!(f, "{s}"),
            DimExpr::Const(c) if *c < 0 && prec > 0 => write!(f, "({c})"),
            DimExpr::Const(c) => write!(f, "{c}"),
            DimExpr::Mul(k, e) => {
                let p = *k < 0 && prec > 0;
                open(f, p)?;
                match k {
                    -1 => f.write_str("-")?,
                    k => write!(f, "{k}*")?,
                }
                e.fmt_prec(f, 2)?;
                close(f, p)
            }
            DimExpr::Prod(xs) => {
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        f.write_str("*")?;
                    }
                    x.fmt_prec(f, 2)?;
                }
                Ok(())
            }
            DimExpr::Div(e, d) | DimExpr::Mod(e, d) => {
                let p = prec == 2;
                open(f, p)?;
                e.fmt_prec(f, 1)?;
                let op = if matches!(self, DimExpr::Div(..)) {
                    "/"
                } else {
                    "%"
                };
                write!(f, "{op}{d}")?;
                close(f, p)
            }
            DimExpr::Min(xs) | DimExpr::Max(xs) => {
                f.write_str(if matches!(self, DimExpr::Min(_)) {
                    "min("
                } else {
                    "max("
                })?;
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    x.fmt_prec(f, 0)?;
                }
                f.write_str(")")
            }
            DimExpr::Add(ts, c) => {
                let p = prec > 0;
                open(f, p)?;
                for (i, t) in ts.iter().enumerate() {
                    match t {
                        DimExpr::Mul(k, e) if *k < 0 => {
                            if *k == -1 {
                                f.write_str("-")?;
                            } else {
                                write!(f, "-{}*", k.unsigned_abs())?;
                            }
                            e.fmt_prec(f, 2)?;
                        }
                        t => {
                            if i > 0 {
                                f.write_str("+")?;
                            }
                            t.fmt_prec(f, 1)?;
                        }
                    }
                }
                if *c > 0 {
                    write!(f, "+{c}")?;
                } else if *c < 0 {
                    write!(f, "-{}", c.unsigned_abs())?;
                }
                close(f, p)
            }
        }
    }
}

impl fmt::Display for DimExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_prec(f, 0)
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

    /// The expression of a static or symbolic dim (`None` for `?`).
    pub fn expr(self) -> Option<DimExpr> {
        match self {
            Dim::Static(n) => Some(DimExpr::Const(n)),
            Dim::Unknown => None,
            Dim::Sym(s) => Some(s.expr().clone()),
        }
    }

    /// The symbol when the dim is exactly one symbol (`B`, not `2*B`).
    pub fn as_symbol(self) -> Option<Ident> {
        match self {
            Dim::Sym(s) => match s.expr() {
                DimExpr::Sym(name) => Some(*name),
                _ => None,
            },
            _ => None,
        }
    }

    fn lift2(self, other: Dim, f: impl FnOnce(DimExpr, DimExpr) -> Option<DimExpr>) -> Dim {
        match (self.expr(), other.expr()) {
            (Some(a), Some(b)) => f(a, b).map_or(Dim::Unknown, Dim::from_expr),
            _ => Dim::Unknown,
        }
    }

    pub fn add(self, other: Dim) -> Dim {
        self.lift2(other, |a, b| Some(a.add(b)))
    }
    pub fn sub(self, other: Dim) -> Dim {
        self.lift2(other, |a, b| Some(a.sub(b)))
    }
    pub fn mul_const(self, k: i64) -> Dim {
        self.expr()
            .map_or(Dim::Unknown, |e| Dim::from_expr(e.mul(k)))
    }
    /// Product of two dims (symbolic × symbolic is a product monomial).
    pub fn mul(self, other: Dim) -> Dim {
        self.lift2(other, |a, b| Some(a.mul_expr(b)))
    }
    /// Floor division by a positive constant.
    pub fn div_const(self, d: i64) -> Dim {
        if d <= 0 {
            return Dim::Unknown;
        }
        self.expr()
            .map_or(Dim::Unknown, |e| Dim::from_expr(e.div(d)))
    }
    /// Floor division: by a positive constant, or by a dim that divides
    /// exactly (`(B*S*64)/(B*S)` is `64`); otherwise `?`.
    pub fn div(self, other: Dim) -> Dim {
        self.lift2(other, DimExpr::div_expr)
    }
    /// Euclidean remainder, like [`Dim::div`].
    pub fn rem(self, other: Dim) -> Dim {
        self.lift2(other, DimExpr::rem_expr)
    }
    pub fn min(self, other: Dim) -> Dim {
        self.lift2(other, |a, b| Some(a.min(b)))
    }
    pub fn max(self, other: Dim) -> Dim {
        self.lift2(other, |a, b| Some(a.max(b)))
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

    /// A sound upper bound with each symbol in `0..=bounds[symbol]` (`None`
    /// for `?` or an unbounded symbol).
    pub fn upper_bound(self, bounds: &HashMap<Ident, i64>) -> Option<i64> {
        match self {
            Dim::Static(n) => Some(n),
            Dim::Unknown => None,
            Dim::Sym(s) => s.expr().upper_bound(bounds),
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

/// The element count of a shape (`?` if a dim is).
pub fn product(dims: &[Dim]) -> Dim {
    dims.iter().fold(Dim::Static(1), |a, &d| a.mul(d))
}

/// The dim at `at` of a reshape target that makes its element count equal
/// `input`'s (ONNX's `-1`): the count divided by the other dims, when that
/// division is exact (`B*S*768 / (B*S*12)` is 64); else `?`.
pub fn solve_reshape_dim(input: &[Dim], target: &[Dim], at: usize) -> Dim {
    let others: Vec<Dim> = target
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != at)
        .map(|(_, &d)| d)
        .collect();
    let (count, rest) = (product(input), product(&others));
    let q = count.div(rest);
    if q != Dim::Unknown && q.mul(rest) == count {
        q
    } else {
        Dim::Unknown
    }
}

/// Dims in the `x`-separated spelling of a tensor type (`Bx(S*12)x64`),
/// as `#ge.dims<"…">` and the `sym_shape` attributes write them.
pub fn format_dims(dims: &[Dim]) -> String {
    dims.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

/// Parse dims written by [`format_dims`] (the empty string is rank 0).
pub fn parse_dims(text: &str) -> Result<Vec<Dim>, String> {
    if text.is_empty() {
        return Ok(vec![]);
    }
    let t = crate::parser::parse_type_str(crate::context::bare(), &format!("tensor<{text}xi8>"))
        .map_err(|d| format!("invalid dims '{text}': {}", d.message))?;
    t.as_tensor()
        .and_then(|t| t.dims.as_ref().map(|d| d.to_vec()))
        .ok_or_else(|| format!("invalid dims '{text}'"))
}

pub mod equal;
pub use equal::SymbolEqualities;

#[cfg(test)]
mod tests;
