//! Every rule of the shipped library preserves semantics: its left side is
//! instantiated as a function with random shapes, attributes and values, the
//! rule is applied, and the interpreter's results before and after agree
//! within the dtype's tolerance. A rule that can never be instantiated fails
//! the test too (so every rule is exercised).

use ge_ir::attributes::{Attribute, DenseElements, Element};
use ge_ir::body::{BlockId, Body, OpState, ValueId};
use ge_ir::builder::{Builder, InsertPoint};
use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use ge_ir::{Context, DType, Location, Module, Type};
use ge_rewrites::greedy::{apply_greedily, GreedyConfig};
use ge_rewrites::rr::ast::{AExpr, Pat, Rule};
use ge_rewrites::rr::to_patterns;
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;

fn ctx() -> Context {
    let mut c = ge_dialects::context();
    ge_rewrites::register(&mut c);
    c
}

/// How a variable leaf must be made so the rule's condition can hold.
#[derive(Clone, Copy, Debug)]
enum LeafKind {
    /// A constant splat of this value.
    Splat(f64),
    /// A constant with random (positive) values.
    Const,
}

/// Leaves the condition requires to be constants (`is_const(?w)`, `is_splat(?c, 1.0)`, …).
fn leaf_kinds(rule: &Rule) -> HashMap<String, LeafKind> {
    fn walk(e: &AExpr, out: &mut HashMap<String, LeafKind>) {
        match e {
            AExpr::Call(name, args) => {
                match (name.as_str(), args.as_slice()) {
                    ("is_splat" | "is_splat_near", [AExpr::Var(v), x, ..]) => {
                        let val = match x {
                            AExpr::Float(f) => *f,
                            AExpr::Int(i) => *i as f64,
                            _ => 1.0,
                        };
                        out.insert(v.clone(), LeafKind::Splat(val));
                    }
                    ("is_const", [AExpr::Var(v)]) => {
                        out.entry(v.clone()).or_insert(LeafKind::Const);
                    }
                    ("splat_value", [AExpr::Var(v)]) => {
                        out.insert(v.clone(), LeafKind::Splat(1e-5));
                    }
                    _ => {}
                }
                args.iter().for_each(|a| walk(a, out));
            }
            AExpr::Bin(_, a, b) => {
                walk(a, out);
                walk(b, out)
            }
            AExpr::Not(x) | AExpr::Neg(x) => walk(x, out),
            AExpr::List(xs) => xs.iter().for_each(|a| walk(a, out)),
            _ => {}
        }
    }
    let mut out = HashMap::new();
    if let Some(c) = &rule.cond {
        walk(c, &mut out);
    }
    out
}

struct Gen<'a> {
    rng: SmallRng,
    /// The axis slices of a plain tensor use (shared by all of them).
    slice_axis: Option<i64>,
    kinds: HashMap<String, LeafKind>,
    dtype: DType,
    args: Vec<(String, Type)>,
    vals: HashMap<String, ValueId>,
    attrs: HashMap<String, Attribute>,
    b: Builder<'a>,
    entry: BlockId,
}

/// The type a leaf operand `k` of `op` should have, given the operands built so far.
fn leaf_type(op: &str, k: usize, prev: &[Type], hint: Type, rng: &mut SmallRng) -> Type {
    let dims = |t: Type| {
        t.as_tensor()
            .and_then(|t| t.static_shape())
            .unwrap_or_default()
    };
    let f32t = |d: &[i64]| Type::tensor_static(d, DType::F32);
    let r = |rng: &mut SmallRng, lo: i64, hi: i64| rng.random_range(lo..=hi);
    match (op, k) {
        ("graph.conv2d", 0) => f32t(&[r(rng, 1, 2), r(rng, 1, 3), r(rng, 3, 5), r(rng, 3, 5)]),
        ("graph.conv2d", 1) => {
            let c = prev
                .first()
                .map(|&t| dims(t))
                .and_then(|d| d.get(1).copied())
                .unwrap_or(1);
            let kk = r(rng, 1, 3);
            f32t(&[r(rng, 1, 3), c, kk, kk])
        }
        ("graph.conv2d", 2) => f32t(&[prev
            .get(1)
            .map(|&t| dims(t))
            .and_then(|d| d.first().copied())
            .unwrap_or(1)]),
        ("graph.batch_norm", 0) => f32t(&[r(rng, 1, 2), r(rng, 1, 3), r(rng, 2, 3), r(rng, 2, 3)]),
        ("graph.batch_norm", _) => f32t(&[prev
            .first()
            .map(|&t| dims(t))
            .and_then(|d| d.get(1).copied())
            .unwrap_or(1)]),
        ("data.broadcast_to" | "data.expand", 0) => {
            let h = dims(hint);
            f32t(
                &h.iter()
                    .map(|&d| if rng.random_bool(0.5) { 1 } else { d })
                    .collect::<Vec<_>>(),
            )
        }
        ("data.transdata", 0) => f32t(&[r(rng, 1, 2), r(rng, 1, 20), r(rng, 1, 3), r(rng, 1, 3)]),
        ("graph.matmul" | "graph.gemm", 0) => f32t(&[r(rng, 1, 3), r(rng, 1, 3)]),
        ("graph.matmul" | "graph.gemm", 1) => {
            let kdim = prev
                .first()
                .map(|&t| dims(t))
                .and_then(|d| d.get(1).copied())
                .unwrap_or(1);
            f32t(&[kdim, r(rng, 1, 3)])
        }
        (_, k) if k > 0 && !prev.is_empty() => {
            let d = dims(prev[0]);
            // A sibling of a broadcasting op: the same shape, a per-channel
            // shape, the last dim, or a scalar.
            match rng.random_range(0..5) {
                0 if d.len() == 4 => f32t(&[d[1], 1, 1]),
                1 if d.len() == 4 => f32t(&[1, d[1], 1, 1]),
                2 if !d.is_empty() => f32t(&[d[d.len() - 1]]),
                3 => f32t(&[]),
                _ => prev[0],
            }
        }
        _ => hint,
    }
}

impl Gen<'_> {
    fn arg(&mut self, name: &str, ty: Type) -> ValueId {
        if let Some(&v) = self.vals.get(name) {
            return v;
        }
        if let Some(kind) = self.kinds.get(name).copied() {
            if let (Some(tt), Some(cname)) = (ty.as_tensor(), self.b.ctx.constant_op) {
                let n = tt.num_elements().unwrap_or(1) as usize;
                let elems: Vec<Element> = match kind {
                    LeafKind::Splat(x) => vec![Element::Float(x)],
                    LeafKind::Const => (0..n)
                        .map(|_| Element::Float(self.rng.random_range(0.5..1.5)))
                        .collect(),
                };
                let attr = Attribute::dense(DenseElements::from_elements(ty, &elems));
                if let Ok(op) = self
                    .b
                    .create(cname, &[], vec![("value", attr)], Some(vec![ty]), 0)
                {
                    let v = self.b.body.result(op, 0);
                    self.vals.insert(name.to_string(), v);
                    return v;
                }
            }
        }
        let v = self
            .b
            .body
            .add_block_arg(self.entry, ty, Location::unknown());
        self.args.push((name.to_string(), ty));
        self.vals.insert(name.to_string(), v);
        v
    }

    /// A random value for attribute `key` of `op` (first operand `first`,
    /// expected result type `hint`), biased towards values that make rules fire.
    fn random_attr(
        &mut self,
        op: &str,
        key: &str,
        first: Option<ValueId>,
        hint: Type,
    ) -> Attribute {
        let in_ty = first.map(|v| self.b.body.value_type(v));
        let in_shape: Vec<i64> = in_ty
            .and_then(|t| t.as_tensor().and_then(|t| t.static_shape()))
            .unwrap_or_default();
        let rank = in_shape.len() as i64;
        let pick = |rng: &mut SmallRng, xs: &[&str]| xs[rng.random_range(0..xs.len())].to_string();
        match (op, key) {
            (_, "perm") => {
                let mut p: Vec<i64> = (0..rank).collect();
                for i in (1..p.len()).rev() {
                    let j = self.rng.random_range(0..=i);
                    p.swap(i, j);
                }
                Attribute::i64_array(&p)
            }
            ("data.concat", "axis") | ("data.split", "axis") => {
                Attribute::i64(self.rng.random_range(0..rank.max(1)))
            }
            (_, "axis") => Attribute::i64(self.rng.random_range(-rank..rank.max(1))),
            (_, "axes") => {
                let a: Vec<i64> = match self.rng.random_range(0..3) {
                    0 => vec![-1],
                    1 => vec![(rank - 1).max(0)],
                    _ => (0..rank).filter(|_| self.rng.random_bool(0.5)).collect(),
                };
                Attribute::i64_array(&a)
            }
            ("data.broadcast_to" | "data.expand", "shape") => {
                let h = hint
                    .as_tensor()
                    .and_then(|t| t.static_shape())
                    .unwrap_or_default();
                Attribute::i64_array(&h)
            }
            (_, "shape") => {
                let n: i64 = in_shape.iter().product::<i64>().max(1);
                if self.rng.random_bool(0.4) {
                    return Attribute::i64_array(&in_shape);
                }
                // A random factorisation of n.
                let mut dims = vec![];
                let mut rest = n;
                for d in 2..=rest.max(2) {
                    while rest % d == 0 && self.rng.random_bool(0.5) {
                        dims.push(d);
                        rest /= d;
                    }
                }
                dims.push(rest);
                Attribute::i64_array(&dims)
            }
            ("data.slice", "starts" | "ends") => {
                // Slices of a concatenation: pick one of its pieces.
                let concat = first
                    .and_then(|v| self.b.body.defining_op(v))
                    .filter(|&o| self.b.body.op(o).name.as_str() == "data.concat");
                let Some(c) = concat else {
                    // Slices of a plain tensor: one axis per function, split
                    // points anywhere along it (or its end).
                    let k = *self.slice_axis.get_or_insert_with(|| {
                        if rank > 0 {
                            self.rng.random_range(0..rank)
                        } else {
                            0
                        }
                    });
                    let d = in_shape.get(k as usize).copied().unwrap_or(1);
                    return match key {
                        "axes" => Attribute::i64_array(&[k]),
                        "starts" => Attribute::i64_array(&[0]),
                        _ => Attribute::i64_array(&[if self.rng.random_bool(0.5) {
                            d
                        } else {
                            self.rng.random_range(1..=d.max(1))
                        }]),
                    };
                };
                let k = self
                    .b
                    .body
                    .op(c)
                    .attr("axis")
                    .and_then(|a| a.as_int())
                    .unwrap_or(0);
                let pieces: Vec<i64> = self
                    .b
                    .body
                    .op(c)
                    .operands()
                    .iter()
                    .map(|&v| {
                        let d = self
                            .b
                            .body
                            .value_type(v)
                            .as_tensor()
                            .and_then(|t| t.static_shape())
                            .unwrap_or_default();
                        let kk = if k < 0 { k + d.len() as i64 } else { k };
                        d.get(kk as usize).copied().unwrap_or(1)
                    })
                    .collect();
                let a0 = pieces.first().copied().unwrap_or(1);
                let a1 = pieces.get(1).copied().unwrap_or(1);
                match key {
                    "axes" => Attribute::i64_array(&[k]),
                    "starts" => {
                        Attribute::i64_array(&[if self.rng.random_bool(0.5) { 0 } else { a0 }])
                    }
                    _ => Attribute::i64_array(&[if self.rng.random_bool(0.5) {
                        a0
                    } else {
                        a0 + a1
                    }]),
                }
            }
            (_, "activation") => Attribute::string(&pick(
                &mut self.rng,
                &["none", "relu", "relu6", "sigmoid", "gelu"],
            )),
            (_, "activation_alpha" | "alpha") => Attribute::f64(0.01),
            (_, "to") => {
                let d = pick(&mut self.rng, &["f32", "f16", "f64"]);
                Attribute::ty(Type::scalar(DType::parse(&d).unwrap_or(DType::F32)))
            }
            (_, "src_format" | "dst_format") => {
                Attribute::string(&pick(&mut self.rng, &["NCHW", "NC1HWC0"]))
            }
            (_, "strides") => Attribute::i64_array(if self.rng.random_bool(0.5) {
                &[1, 1]
            } else {
                &[2, 2]
            }),
            (_, "pads") => Attribute::i64_array(if self.rng.random_bool(0.5) {
                &[0, 0, 0, 0]
            } else {
                &[1, 1, 1, 1]
            }),
            (_, "dilations") => Attribute::i64_array(&[1, 1]),
            (_, "group") => Attribute::i64(1),
            (_, "epsilon") => Attribute::f32(1e-5),
            _ => Attribute::i64(self.rng.random_range(0..3)),
        }
    }

    /// Build a value matching `p`; `hint` is the type a leaf should have.
    fn build(&mut self, p: &Pat, hint: Type) -> Result<ValueId, String> {
        match p {
            Pat::Var(n) => Ok(self.arg(n, hint)),
            Pat::Wild => {
                let n = format!("_wild{}", self.args.len());
                Ok(self.arg(&n, hint))
            }
            Pat::Num(x) => {
                let e = if hint.dtype().is_some_and(|d| d.is_float()) {
                    Element::Float(*x)
                } else {
                    Element::Int(*x as i64)
                };
                let attr = Attribute::dense(DenseElements::from_elements(hint, &[e]));
                let name = self.b.ctx.constant_op.ok_or("no constant op")?;
                let op = self
                    .b
                    .create(name, &[], vec![("value", attr)], Some(vec![hint]), 0)?;
                Ok(self.b.body.result(op, 0))
            }
            Pat::Op(o) => {
                let mut operands = vec![];
                for (k, sub) in o.operands.iter().enumerate() {
                    let prev: Vec<Type> = operands
                        .iter()
                        .map(|&v| self.b.body.value_type(v))
                        .collect();
                    let leaf = leaf_type(&o.name, k, &prev, hint, &mut self.rng);
                    let v = self.build(sub, leaf)?;
                    operands.push(v);
                }
                let mut attrs = vec![];
                for (k, ae) in &o.attrs {
                    let a = match ae {
                        AExpr::Var(v) => match self.attrs.get(v) {
                            Some(a) => *a,
                            None => {
                                let a =
                                    self.random_attr(&o.name, k, operands.first().copied(), hint);
                                self.attrs.insert(v.clone(), a);
                                a
                            }
                        },
                        AExpr::Int(i) => Attribute::i64(*i),
                        AExpr::Float(f) => Attribute::f64(*f),
                        AExpr::Str(s) => Attribute::string(s),
                        AExpr::Bool(b) => Attribute::bool(*b),
                        AExpr::List(xs) => Attribute::i64_array(
                            &xs.iter()
                                .map(|x| if let AExpr::Int(i) = x { *i } else { 0 })
                                .collect::<Vec<_>>(),
                        ),
                        _ => return Err("unsupported attribute pattern".into()),
                    };
                    attrs.push((k.as_str(), a));
                }
                if let Some(def) = self.b.ctx.op_def(&o.name) {
                    // Attributes the rule does not mention take random values
                    // sometimes, so a rule that forgets one (a fused activation)
                    // changes results and fails here.
                    for ad in def.attrs {
                        if let ge_ir::opdef::AttrKind::Enum(names) = ad.kind {
                            if !attrs.iter().any(|(k, _)| *k == ad.name)
                                && self.rng.random_bool(0.3)
                            {
                                let v = names[self.rng.random_range(0..names.len())];
                                attrs.push((ad.name, Attribute::string(v)));
                            }
                        }
                    }
                    for ad in def.attrs {
                        if ad.default.is_none()
                            && !ad.optional
                            && !attrs.iter().any(|(k, _)| *k == ad.name)
                        {
                            let a =
                                self.random_attr(&o.name, ad.name, operands.first().copied(), hint);
                            attrs.push((ad.name, a));
                        }
                    }
                }
                let op = self.b.create(&o.name, &operands, attrs, None, 0)?;
                let v = self.b.body.result(op, 0);
                if let Some(bn) = &o.bind {
                    self.vals.insert(bn.clone(), v);
                }
                Ok(v)
            }
        }
    }
}

/// A module with `@main` computing the rule's left side, or an error.
fn instantiate(ctx: &Context, rule: &Rule, seed: u64) -> Result<(Module, Vec<Type>), String> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let rank = rng.random_range(1..=4usize);
    let shape: Vec<i64> = (0..rank).map(|_| rng.random_range(1..=4)).collect();
    let dtype = DType::F32;
    let mut m = Module::new(ctx, Location::unknown());
    let mblock = m.block();
    let mut st = OpState::new("graph.func", Location::unknown());
    st.def = ctx.op_def("graph.func");
    st.num_regions = 1;
    let body = m.body_mut();
    let func = body.create_op(st);
    body.append_op(mblock, func);
    let inner: &mut Body = body.inner_mut(func).ok_or("func has no body")?;
    let r = inner.root_regions()[0];
    let entry = inner.add_block(r);
    let hint = Type::tensor_static(&shape, dtype);
    let mut g = Gen {
        rng,
        slice_axis: None,
        kinds: leaf_kinds(rule),
        dtype,
        args: vec![],
        vals: HashMap::new(),
        attrs: HashMap::new(),
        b: Builder::new(ctx, inner, InsertPoint::End(entry)),
        entry,
    };
    let _ = g.dtype;
    let mut outs = vec![];
    for root in &rule.roots {
        outs.push(g.build(root, hint)?);
    }
    let out_types: Vec<Type> = outs.iter().map(|&v| g.b.body.value_type(v)).collect();
    g.b.create("graph.return", &outs, vec![], Some(vec![]), 0)?;
    let in_types: Vec<Type> = g.args.iter().map(|(_, t)| *t).collect();
    let body = m.body_mut();
    body.set_attr(func, "sym_name", Attribute::string("main"));
    body.set_attr(
        func,
        "function_type",
        Attribute::ty(Type::function(&in_types, &out_types)),
    );
    let diags = ge_ir::verifier::verify_module(&m);
    if let Some(d) = diags.first() {
        return Err(d.message.clone());
    }
    Ok((m, in_types))
}

fn random_inputs(types: &[Type], seed: u64) -> Vec<Tensor> {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x5eed);
    types
        .iter()
        .map(|t| {
            let tt = t.as_tensor().expect("tensor");
            let shape: Vec<usize> = tt
                .static_shape()
                .expect("static")
                .iter()
                .map(|&d| d as usize)
                .collect();
            let n = shape.iter().product();
            Tensor::from_f64(
                shape,
                tt.dtype,
                (0..n).map(|_| rng.random_range(-2.0..2.0)).collect(),
            )
        })
        .collect()
}

fn check_rule(ctx: &Context, rule: &Rule, seed: u64) -> Result<bool, String> {
    let Ok((mut m, in_types)) = instantiate(ctx, rule, seed) else {
        return Ok(false);
    };
    let inputs = random_inputs(&in_types, seed);
    let before = Interpreter::new(&m)
        .run_function("main", inputs.clone())
        .map_err(|e| e.msg)?;
    let patterns = to_patterns(std::slice::from_ref(rule));
    // One application: rules labelled `eqsat` (commutativity, …) would undo themselves.
    let cfg = GreedyConfig {
        fold: false,
        max_num_rewrites: Some(1),
        ..GreedyConfig::default()
    };
    let stats = apply_greedily(ctx, m.body_mut(), &patterns, &cfg)?;
    if stats.applied.get(&rule.name).copied().unwrap_or(0) == 0 {
        return Ok(false);
    }
    let diags = ge_ir::verifier::verify_module(&m);
    if let Some(d) = diags.first() {
        return Err(format!(
            "rule '{}' produced invalid IR: {}",
            rule.name, d.message
        ));
    }
    let after = Interpreter::new(&m)
        .run_function("main", inputs)
        .map_err(|e| e.msg)?;
    for (i, (a, b)) in before.iter().zip(&after).enumerate() {
        // Element type and shape exactly, integers exactly.
        let (rtol, atol) = Tensor::default_tolerance(a.dtype);
        if let Some(why) = b.mismatch(a, rtol, atol) {
            return Err(format!(
                "rule '{}' changed result #{i} ({why}): before {:?} after {:?}",
                rule.name,
                a.to_f64(),
                b.to_f64()
            ));
        }
    }
    Ok(true)
}

#[test]
fn every_library_rule_can_be_instantiated() {
    let ctx = ctx();
    let rules = ge_rewrites::library::library_rules(&ctx);
    assert!(!rules.is_empty());
    let mut never = vec![];
    for r in rules {
        let fired = (0..300u64).any(|s| check_rule(&ctx, r, s).unwrap_or_else(|e| panic!("{e}")));
        if !fired {
            never.push(r.name.clone());
        }
    }
    assert!(
        never.is_empty(),
        "rules never instantiated by the generator: {never:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn library_rules_preserve_semantics(seed in any::<u64>()) {
        let ctx = ctx();
        for r in ge_rewrites::library::library_rules(&ctx) {
            if let Err(e) = check_rule(&ctx, r, seed) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}
