use super::*;
use proptest::prelude::*;

fn env(pairs: &[(&str, i64)]) -> HashMap<Ident, i64> {
    pairs.iter().map(|(k, v)| (Ident::new(k), *v)).collect()
}

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
    assert_eq!(out.eval(&env(&[("H", 224)])), Some((224 + 2 - 3) / 2 + 1));
    assert_eq!(out.to_string(), "((H-1)/2+1)");
}

#[test]
fn products_distribute_and_compare_equal() {
    let (b, s) = (Dim::sym("B"), Dim::sym("S"));
    let lhs = b.add(Dim::Static(1)).mul(s);
    let rhs = s.mul(b).add(s);
    assert_eq!(lhs, rhs);
    assert_eq!(lhs.to_string(), "(B*S+S)");
    assert_eq!(b.mul(s).mul_const(64).to_string(), "(64*B*S)");
}

#[test]
fn exact_symbolic_division_cancels() {
    let (b, s) = (Dim::sym("B"), Dim::sym("S"));
    let total = b.mul(s).mul_const(768);
    assert_eq!(total.div(b.mul(s).mul_const(12)), Dim::Static(64));
    assert_eq!(total.div(s), b.mul_const(768));
    // Not exact: not a polynomial, so unknown.
    assert_eq!(b.add(Dim::Static(1)).div(s), Dim::Unknown);
    assert_eq!(b.mul(s).rem(s), Dim::Static(0));
}

#[test]
fn division_by_a_sum_is_exact_polynomial_division() {
    // A KV cache of past P plus new S tokens, reshaped to [-1, P+S, 8].
    let (b, p, s) = (Dim::sym("B"), Dim::sym("P"), Dim::sym("S"));
    let total = p.add(s);
    let count = b.mul(total).mul_const(32);
    assert_eq!(count.div(total.mul_const(8)), b.mul_const(4));
    assert_eq!(count.rem(total.mul_const(8)), Dim::Static(0));
    // (B+1)*(S+2) / (S+2), and a divisor with a constant term.
    let lhs = b.add(Dim::Static(1)).mul(s.add(Dim::Static(2)));
    assert_eq!(lhs.div(s.add(Dim::Static(2))), b.add(Dim::Static(1)));
    assert_eq!(lhs.div(b.add(Dim::Static(1))), s.add(Dim::Static(2)));
    // (P+S)^2 / (P+S).
    assert_eq!(total.mul(total).div(total), total);
    // Not exact: a remainder is left, so unknown.
    assert_eq!(count.add(Dim::Static(1)).div(total), Dim::Unknown);
    assert_eq!(b.mul(p).div(p.add(s)), Dim::Unknown);
}

#[test]
fn remainder_drops_multiples() {
    let s = Dim::sym("S");
    let four = Dim::Static(4);
    assert_eq!(
        s.mul_const(8).add(Dim::Static(11)).rem(four),
        Dim::Static(3)
    );
    assert_eq!(
        s.mul_const(2).add(Dim::Static(5)).rem(four),
        s.mul_const(2).add(Dim::Static(1)).rem(four)
    );
    assert_eq!(s.rem(Dim::Static(8)).to_string(), "(S%8)");
}

#[test]
fn min_max_simplify_with_known_signs() {
    let s = Dim::sym("S");
    assert_eq!(s.min(Dim::Static(i64::MAX)), s);
    assert_eq!(s.max(Dim::Static(0)), s);
    assert_eq!(s.add(Dim::Static(1)).min(s), s);
    let m = s.min(Dim::Static(512));
    assert_eq!(m.to_string(), "(min(S, 512))");
    assert_eq!(m.eval(&env(&[("S", 600)])), Some(512));
    assert_eq!(m, Dim::Static(512).min(s), "min is symmetric");
}

#[test]
fn min_max_see_through_their_own_arguments() {
    // `min(S, 64) - S` has the interval [-2^40, 64] (the two S are taken as
    // independent), yet min(S, 64) <= S: an argument of the min is S itself.
    let (b, s) = (Dim::sym("B"), Dim::sym("S"));
    let m = s.min(Dim::Static(64));
    assert_eq!(m.max(s), s, "max(min(S, 64), S)");
    assert_eq!(s.max(m), s, "max(S, min(S, 64))");
    assert_eq!(m.min(s), m, "min(min(S, 64), S)");
    let x = s.max(Dim::Static(8));
    assert_eq!(x.min(s), s, "min(max(S, 8), S)");
    assert_eq!(x.max(s), x);
    // Through a further argument: min(S, B) <= S + B.
    assert_eq!(s.min(b).max(s.add(b)), s.add(b));
    // Not decidable: max(min(S, 64), B) stays a max.
    assert_eq!(m.max(b).to_string(), "(max(B, min(S, 64)))");
}

#[test]
fn upper_bound_is_sound_where_eval_at_bounds_is_not() {
    let (b, s) = (Dim::sym("B"), Dim::sym("S"));
    let bounds = env(&[("B", 8), ("S", 4)]);
    // At the bounds 8 - 4 = 4, but B = 8, S = 0 gives 8.
    let d = b.sub(s);
    assert_eq!(d.eval(&bounds), Some(4));
    assert_eq!(d.upper_bound(&bounds), Some(8));
    assert_eq!(b.upper_bound(&env(&[])), None);
}

#[test]
fn unknown_absorbs_arithmetic() {
    assert_eq!(Dim::Unknown.add(Dim::Static(1)), Dim::Unknown);
    assert_eq!(Dim::Unknown.mul(Dim::sym("S")), Dim::Unknown);
    assert!(Dim::Unknown.compatible(Dim::Static(3)));
}

/// A random expression tree, evaluated directly (the reference) and
/// through the canonicalising constructors.
#[derive(Clone, Debug)]
enum Raw {
    B,
    S,
    C(i64),
    Add(Box<Raw>, Box<Raw>),
    Sub(Box<Raw>, Box<Raw>),
    Mul(Box<Raw>, Box<Raw>),
    Div(Box<Raw>, i64),
    Rem(Box<Raw>, i64),
    Min(Box<Raw>, Box<Raw>),
    Max(Box<Raw>, Box<Raw>),
}

impl Raw {
    fn eval(&self, b: i64, s: i64) -> i64 {
        match self {
            Raw::B => b,
            Raw::S => s,
            Raw::C(c) => *c,
            Raw::Add(x, y) => x.eval(b, s) + y.eval(b, s),
            Raw::Sub(x, y) => x.eval(b, s) - y.eval(b, s),
            Raw::Mul(x, y) => x.eval(b, s) * y.eval(b, s),
            Raw::Div(x, d) => x.eval(b, s).div_euclid(*d),
            Raw::Rem(x, d) => x.eval(b, s).rem_euclid(*d),
            Raw::Min(x, y) => x.eval(b, s).min(y.eval(b, s)),
            Raw::Max(x, y) => x.eval(b, s).max(y.eval(b, s)),
        }
    }
    fn canon(&self) -> Dim {
        match self {
            Raw::B => Dim::sym("B"),
            Raw::S => Dim::sym("S"),
            Raw::C(c) => Dim::Static(*c),
            Raw::Add(x, y) => x.canon().add(y.canon()),
            Raw::Sub(x, y) => x.canon().sub(y.canon()),
            Raw::Mul(x, y) => x.canon().mul(y.canon()),
            Raw::Div(x, d) => x.canon().div(Dim::Static(*d)),
            Raw::Rem(x, d) => x.canon().rem(Dim::Static(*d)),
            Raw::Min(x, y) => x.canon().min(y.canon()),
            Raw::Max(x, y) => x.canon().max(y.canon()),
        }
    }
}

fn arb_raw() -> impl Strategy<Value = Raw> {
    let leaf = prop_oneof![Just(Raw::B), Just(Raw::S), (0i64..9).prop_map(Raw::C)];
    leaf.prop_recursive(4, 24, 2, |inner| {
        let two = || (inner.clone(), inner.clone());
        prop_oneof![
            two().prop_map(|(a, b)| Raw::Add(a.into(), b.into())),
            two().prop_map(|(a, b)| Raw::Sub(a.into(), b.into())),
            two().prop_map(|(a, b)| Raw::Mul(a.into(), b.into())),
            (inner.clone(), 1i64..5).prop_map(|(a, d)| Raw::Div(a.into(), d)),
            (inner.clone(), 1i64..5).prop_map(|(a, d)| Raw::Rem(a.into(), d)),
            two().prop_map(|(a, b)| Raw::Min(a.into(), b.into())),
            two().prop_map(|(a, b)| Raw::Max(a.into(), b.into())),
        ]
    })
}

proptest! {
    /// Canonicalisation keeps the value, printing then parsing gives the same
    /// dim, and the upper bound holds at every point of the box.
    #[test]
    fn canonical_form_keeps_value_and_reparses(r in arb_raw(), b in 0i64..6, s in 0i64..6) {
        let d = r.canon();
        prop_assert_eq!(d.eval(&env(&[("B", b), ("S", s)])), Some(r.eval(b, s)), "{}", d);
        if d.as_static().is_some_and(|v| v < 0) {
            return Ok(()); // not a valid tensor dim: nothing to print
        }
        let text = format!("tensor<{d}xf32>");
        let t = crate::parser::parse_type_str(crate::context::bare(), &text)
            .map_err(|x| TestCaseError::fail(format!("{text}: {}", x.message)))?;
        prop_assert_eq!(t.as_tensor().map(|t| t.shape()[0]), Some(d), "{}", text);
        let ub = d.upper_bound(&env(&[("B", 5), ("S", 5)]));
        prop_assert!(ub.is_some_and(|u| u >= r.eval(b, s)), "{} at ({}, {}): bound {:?}", d, b, s, ub);
    }
}
