//! `def_op!`: one declaration gives the `OpDef` the parser and printer read,
//! a typed handle that matches by definition, typed attribute accessors with
//! the declared defaults, and the declared interfaces.

use ge_ir::interfaces::{Cost, FusionPattern, KernelFamily, OpInterface};
use ge_ir::opdef::{Arity, AttrKind, Dialect, TypeConstraint};
use ge_ir::{def_op, Context};

def_op! {
    /// A demo op
    ///
    /// First paragraph, written over
    /// two lines.
    ///
    /// ```
    /// %r = demo.op %x
    ///   indented
    /// ```
    ///
    /// - item one
    ///   continued
    /// - item two
    pub DemoOp = "demo.op" {
        operands { x: AnyTensor, bias: Option<FloatTensor>, rest: Variadic<Any>, last: AnyTensor },
        results { out: AnyTensor },
        attrs {
            /// an integer
            /// over two lines
            count: I64 = -2,
            /// a float with an f32 spelling
            eps: F64 = 1.0e-05_f32,
            /// a plain float
            alpha: F64 = 0.5,
            /// an array
            sizes: I64Array = [1, 2],
            /// an empty array
            none: I64Array = [],
            /// a choice
            mode: Enum(&["a", "b"]) = "b",
            /// a flag
            flag: Bool = true,
            /// required
            needed: I64,
            /// optional
            maybe: Option<Str>,
            /// camel case
            transA: I64 = 0,
            /// a keyword
            r#type: Option<Type>,
        },
        traits [Pure],
        format: "operands attr-dict `:` functional-type(operands, results)",
        interfaces [Cost::ELEMENTWISE, FusionPattern::Injective],
    }
}

def_op! {
    /// Another op with the same operands
    pub OtherOp = "demo.other" {
        operands { x: AnyTensor },
        results { out: AnyTensor },
        format: "operands attr-dict `:` functional-type(operands, results)",
    }
}

static DEMO: Dialect = Dialect {
    name: "demo",
    summary: "demo ops",
    groups: &[&[&DEMO_OP, &OTHER_OP]],
};

fn ctx() -> Context {
    let mut ctx = Context::new();
    ctx.register_dialect(&DEMO);
    ctx
}

#[test]
fn declaration_gives_the_definition() {
    let d = DemoOp::DEF;
    assert_eq!(d.name, "demo.op");
    assert_eq!(d.summary, "A demo op");
    assert_eq!(
        d.description,
        "First paragraph, written over two lines.\n\n```\n%r = demo.op %x\n  indented\n```\n\n- item one continued\n- item two"
    );
    let ops: Vec<(&str, Arity)> = d.operands.iter().map(|o| (o.name, o.arity)).collect();
    assert_eq!(
        ops,
        [
            ("x", Arity::One),
            ("bias", Arity::Optional),
            ("rest", Arity::Variadic),
            ("last", Arity::One)
        ]
    );
    assert_eq!(d.operands[1].constraint, TypeConstraint::FloatTensor);
    let attrs: Vec<(&str, Option<&str>, bool)> = d
        .attrs
        .iter()
        .map(|a| (a.name, a.default, a.optional))
        .collect();
    assert_eq!(
        attrs,
        [
            ("count", Some("-2"), false),
            ("eps", Some("1.0e-05 : f32"), false),
            ("alpha", Some("0.5"), false),
            ("sizes", Some("[1, 2]"), false),
            ("none", Some("[]"), false),
            ("mode", Some("\"b\""), false),
            ("flag", Some("true"), false),
            ("needed", None, false),
            ("maybe", None, true),
            ("transA", Some("0"), false),
            ("type", None, true),
        ]
    );
    assert_eq!(d.attrs[0].doc, "an integer over two lines");
    assert_eq!(d.attrs[5].kind, AttrKind::Enum(&["a", "b"]));
}

#[test]
fn handles_match_by_definition_and_read_typed_attributes() {
    let ctx = ctx();
    // Build the ops directly (no graph dialect here): a body with two ops.
    let mut body = ge_ir::Body::new();
    let r = body.new_region(None);
    let blk = body.add_block(r);
    let t = ge_ir::Type::tensor(&[ge_ir::Dim::Static(2)], ge_ir::DType::F32);
    let a = body.add_block_arg(blk, t, ge_ir::Location::unknown());
    let b = body.add_block_arg(blk, t, ge_ir::Location::unknown());
    let mut st = ge_ir::OpState::new("demo.op", ge_ir::Location::unknown());
    st.def = ctx.op_def("demo.op");
    st.operands = vec![a, b, a, a, b];
    st.result_types = vec![t];
    st.attrs = ge_ir::AttrDict::new(vec![
        (ge_ir::Ident::new("count"), ge_ir::Attribute::i64(7)),
        (ge_ir::Ident::new("needed"), ge_ir::Attribute::i64(3)),
        (ge_ir::Ident::new("maybe"), ge_ir::Attribute::string("m")),
    ]);
    let op = body.create_op(st);
    body.append_op(blk, op);
    let mut st = ge_ir::OpState::new("demo.other", ge_ir::Location::unknown());
    st.def = ctx.op_def("demo.other");
    st.operands = vec![body.result(op, 0)];
    st.result_types = vec![t];
    let other = body.create_op(st);
    body.append_op(blk, other);

    let h = DemoOp::matches(&body, op).expect("a demo.op");
    assert!(DemoOp::matches(&body, other).is_none());
    assert!(OtherOp::matches(&body, other).is_some());
    assert_eq!(h.x(), a);
    assert_eq!(h.bias(), Some(b));
    assert_eq!(h.rest(), &[a, a]);
    assert_eq!(h.last(), b);
    assert_eq!(h.out(), body.result(op, 0));
    assert_eq!(h.count(), 7);
    assert_eq!(h.eps(), 1.0e-05_f32 as f64);
    assert_eq!(h.alpha(), 0.5);
    assert_eq!(h.sizes(), vec![1, 2]);
    assert_eq!(h.none(), Vec::<i64>::new());
    assert_eq!(h.mode(), "b");
    assert!(h.flag());
    assert_eq!(h.needed(), Some(3));
    assert_eq!(h.maybe(), Some("m"));
    assert_eq!(h.trans_a(), 0);
    assert_eq!(h.r#type(), None);
    // The same accessors over a bare attribute dictionary.
    let v = DemoOp::attrs(&ge_ir::AttrDict::empty());
    assert_eq!((v.count(), v.needed(), v.maybe()), (-2, None, None));

    // An op with the right name but another definition is not a match
    // (the name is never compared), nor is one whose operands do not fit.
    let mut st = ge_ir::OpState::new("demo.op", ge_ir::Location::unknown());
    st.def = ctx.op_def("demo.other");
    st.operands = vec![a];
    st.result_types = vec![t];
    let impostor = body.create_op(st);
    assert!(DemoOp::matches(&body, impostor).is_none());
    let mut st = ge_ir::OpState::new("demo.op", ge_ir::Location::unknown());
    st.def = ctx.op_def("demo.op");
    st.operands = vec![a];
    st.result_types = vec![t];
    let short = body.create_op(st);
    assert!(DemoOp::matches(&body, short).is_none());
    assert!(DemoOp::is(body.op(short)));
}

#[test]
fn interfaces_are_found_by_type_and_registered_at_run_time() {
    let ctx = ctx();
    let d = DemoOp::DEF;
    assert_eq!(
        d.interface::<FusionPattern>(),
        Some(&FusionPattern::Injective)
    );
    assert!(d.interface::<KernelFamily>().is_none());
    assert_eq!(ctx.interface_names(d), ["cost", "fusion"]);
    // A plugin adds a kernel family and overrides the fusion pattern.
    ctx.register_interface(d, Box::new(KernelFamily::Elementwise));
    ctx.register_interface(d, Box::new(FusionPattern::Opaque));
    assert_eq!(
        ctx.op_interface::<KernelFamily>(d),
        Some(&KernelFamily::Elementwise)
    );
    assert_eq!(
        ctx.op_interface::<FusionPattern>(d),
        Some(&FusionPattern::Opaque)
    );
    assert_eq!(
        d.interface::<FusionPattern>(),
        Some(&FusionPattern::Injective)
    );
    assert_eq!(ctx.interface_names(d), ["cost", "fusion", "kernel"]);
    let other: &dyn OpInterface = &KernelFamily::Conv;
    assert_eq!(other.interface_name(), "kernel");
    assert_eq!(d.key(), DemoOp::DEF.key());
    assert_ne!(d.key(), OtherOp::DEF.key());
}
