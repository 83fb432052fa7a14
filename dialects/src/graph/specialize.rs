//! `graph.specialize` (issue 15, hybrid execution): an op whose attributes
//! are partly tensor *values* known only at run time — ONNX's `ReduceSum`
//! with its `axes` a graph input, `Reshape` with a computed shape, `TopK`'s
//! `k`. The graph ops keep such operands as attributes (kernels are chosen
//! and shapes inferred from them); this op carries the concrete op's name,
//! its compile-time attributes, and which trailing operand fills which
//! attribute. At run time the executor reads those operands, builds the
//! concrete op ([`concrete_module`]), infers and verifies it with the op's
//! own definition and runs it with the op's native kernel (GE's HostCPU
//! "specialise then launch" of RT2's dynamic execution); the interpreter
//! does the same with the op's semantics.

use crate::interfaces::*;
use ge_ir::attributes::{AttrDict, Attribute};
use ge_ir::body::{Body, OpId, ValueId};
use ge_ir::builder::Builder;
use ge_ir::def_op;
use ge_ir::interp::{Interpreter, SemCtx};
use ge_ir::opdef::{OpDef, OpError};
use ge_ir::tensor::Tensor;
use ge_ir::{Context, DType, Dim, Ident, Location, Module, Type};
use std::sync::OnceLock;

/// The most elements a value operand may have: these are shapes, axes and
/// counts, not data.
pub const MAX_VALUE_ELEMENTS: i64 = 4096;

/// The most ops of the host prefix that computes value operands from the
/// graph inputs and weights at run start (docs/architecture.md "Execution
/// modes": value symbols).
pub const MAX_PREFIX_OPS: usize = 64;

/// How a value operand becomes an attribute of the concrete op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// Every element, as an integer array (`axes`, `shape`, `pads`).
    Ints,
    /// The one element, as an integer (`k`, `axis`, `depth`).
    Int,
    /// Every element, as a float array (`scales`).
    Floats,
    /// The one element, as a float.
    Float,
    /// The one element, a count that must be at least 1 (OneHot's `depth`
    /// as the limit of its positions' range), as a float.
    Count,
}

impl ValueKind {
    pub fn name(self) -> &'static str {
        match self {
            ValueKind::Ints => "ints",
            ValueKind::Int => "int",
            ValueKind::Floats => "floats",
            ValueKind::Float => "float",
            ValueKind::Count => "count",
        }
    }
    fn parse(s: &str) -> Option<ValueKind> {
        [
            ValueKind::Ints,
            ValueKind::Int,
            ValueKind::Floats,
            ValueKind::Float,
            ValueKind::Count,
        ]
        .into_iter()
        .find(|k| k.name() == s)
    }
    /// The attribute the value `t` of operand `what` gives.
    pub fn attribute(self, t: &Tensor, what: &str) -> Result<Attribute, String> {
        let one = |n: usize| {
            if n == 1 {
                Ok(())
            } else {
                Err(format!(
                    "'{what}' must hold one element at run time, got {n}"
                ))
            }
        };
        Ok(match self {
            ValueKind::Ints => Attribute::i64_array(&t.to_i64()),
            ValueKind::Int => {
                let v = t.to_i64();
                one(v.len())?;
                Attribute::i64(v[0])
            }
            ValueKind::Floats => {
                Attribute::array(t.to_f64().into_iter().map(Attribute::f64).collect())
            }
            ValueKind::Float => {
                let v = t.to_f64();
                one(v.len())?;
                Attribute::f64(v[0])
            }
            ValueKind::Count => {
                let v = t.to_f64();
                one(v.len())?;
                if v[0].is_nan() || v[0] < 1.0 {
                    return Err(format!(
                        "'{what}' is a count and must be at least 1 at run time, got {}",
                        v[0]
                    ));
                }
                Attribute::f64(v[0])
            }
        })
    }
}

/// The context whose ops a `graph.specialize` may name (every dialect of
/// this crate; a plugin op cannot be specialised).
pub fn registry() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(crate::context)
}

/// A `graph.specialize` op, read and checked.
#[derive(Clone, Debug)]
pub struct Spec {
    pub def: &'static OpDef,
    /// The concrete op's compile-time attributes.
    pub attrs: AttrDict,
    /// One per trailing value operand: the attribute it fills and how.
    pub values: Vec<(String, ValueKind)>,
    /// Operands of the concrete op (the leading ones).
    pub num_data: usize,
}

impl Spec {
    /// Read the op's attributes; errors say what is wrong.
    pub fn of(body: &Body, op: OpId) -> Result<Spec, String> {
        let d = body.op(op);
        let a = Specialize::attrs(d);
        let name = a.op().ok_or("'op' is missing")?;
        let def = registry()
            .op_def(name)
            .ok_or_else(|| format!("'op' names '{name}', which is not a registered op"))?;
        if def.name == Specialize::NAME || !def.regions.is_empty() {
            return Err(format!(
                "'{name}' cannot be specialised (it has regions or is graph.specialize)"
            ));
        }
        let attrs = a.static_attrs().unwrap_or_else(AttrDict::empty);
        for (k, _) in attrs.entries() {
            if def.attr_def(k.as_str()).is_none() {
                return Err(format!("'{name}' has no attribute '{k}'"));
            }
        }
        let mut values = vec![];
        for e in a.from_values().unwrap_or_default() {
            let (attr, kind) = e
                .split_once(':')
                .and_then(|(n, k)| Some((n, ValueKind::parse(k)?)))
                .ok_or_else(|| {
                    format!("'from_values' entry '{e}' is not NAME:KIND (KIND one of ints, int, floats, float, count)")
                })?;
            if def.attr_def(attr).is_none() {
                return Err(format!(
                    "'{name}' has no attribute '{attr}' (in 'from_values')"
                ));
            }
            if attrs.get(attr).is_some() || values.iter().any(|(n, _)| n == attr) {
                return Err(format!("attribute '{attr}' is given twice"));
            }
            values.push((attr.to_string(), kind));
        }
        let n = d.operands().len();
        let num_data = n.checked_sub(values.len()).ok_or_else(|| {
            format!(
                "{} value operands named in 'from_values' but {n} operands",
                values.len()
            )
        })?;
        for (i, &v) in d.operands()[num_data..].iter().enumerate() {
            let t = body.value_type(v);
            let small = t
                .as_tensor()
                .and_then(|t| t.num_elements())
                .is_some_and(|k| k <= MAX_VALUE_ELEMENTS);
            let dt = t.dtype();
            if !small || !dt.is_some_and(|d| d.is_int() || d.is_float()) {
                return Err(format!(
                    "value operand #{} ('{}') must be a static integer or float tensor of at most {MAX_VALUE_ELEMENTS} elements, got '{t}'",
                    num_data + i,
                    values[i].0
                ));
            }
        }
        let data: Vec<Type> = d.operands()[..num_data]
            .iter()
            .map(|&v| body.value_type(v))
            .collect();
        check_data(def, &data)?;
        Ok(Spec {
            def,
            attrs,
            values,
            num_data,
        })
    }

    /// The concrete op's attributes, given the value operands' values.
    pub fn concrete_attrs(&self, values: &[&Tensor]) -> Result<Vec<(String, Attribute)>, String> {
        if values.len() != self.values.len() {
            return Err(format!(
                "{} values for {} value operands",
                values.len(),
                self.values.len()
            ));
        }
        let mut out: Vec<(String, Attribute)> = self
            .attrs
            .entries()
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), *v))
            .collect();
        for ((name, kind), t) in self.values.iter().zip(values) {
            out.push((name.clone(), kind.attribute(t, name)?));
        }
        Ok(out)
    }
}

/// Whether the concrete op takes operands of types `data` (its operand
/// count and type constraints), so that no run-time value can make a
/// verified model fail on an operand type.
pub fn check_data(def: &'static OpDef, data: &[Type]) -> Result<(), String> {
    let flexible = def
        .operands
        .iter()
        .filter(|g| g.arity != ge_ir::opdef::Arity::One)
        .count();
    let Some(sizes) = def.group_sizes(def.operands, data.len(), None) else {
        // Several optional groups need segment sizes: the concrete op's
        // verifier checks those when it is built.
        if flexible > 1 {
            return Ok(());
        }
        return Err(format!(
            "'{}' does not take {} operands",
            def.name,
            data.len()
        ));
    };
    let mut i = 0;
    for (g, n) in def.operands.iter().zip(sizes) {
        for &t in &data[i..i + n] {
            if !g.constraint.accepts(t) {
                return Err(format!(
                    "'{}' operand '{}' must be {}, got '{t}'",
                    def.name,
                    g.name,
                    g.constraint.describe()
                ));
            }
        }
        i += n;
    }
    Ok(())
}

/// A module holding `graph.func @k(data...) -> results { concrete op }`, the
/// op built from `attrs` with its result types inferred for `data` and the
/// whole module verified — what a native kernel may then rely on.
pub fn concrete_module(
    def: &'static OpDef,
    attrs: &[(String, Attribute)],
    data: &[Type],
    loc: Location,
) -> Result<(Module, Vec<Type>), String> {
    let ctx = registry();
    let mut m = Module::new(ctx, loc);
    let (func, inner, entry) = super::func::new_function(ctx, &mut m, loc)?;
    let args: Vec<ValueId> = data
        .iter()
        .map(|&t| inner.add_block_arg(entry, t, loc))
        .collect();
    let mut b = Builder::at_end(ctx, inner, entry);
    b.loc = loc;
    let named: Vec<(&str, Attribute)> = attrs.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let op = b.create(def.name, &args, named, None, 0)?;
    let results: Vec<ValueId> = b.body.op(op).results().to_vec();
    let types: Vec<Type> = results.iter().map(|&v| b.body.value_type(v)).collect();
    b.create("graph.return", &results, vec![], Some(vec![]), 0)?;
    let body = m.body_mut();
    body.set_attr(func, "sym_name", Attribute::string("k"));
    body.set_attr(
        func,
        "function_type",
        Attribute::ty(Type::function(data, &types)),
    );
    if let Some(d) = ge_ir::verifier::verify_module(&m).first() {
        return Err(format!("'{}' with these values: {}", def.name, d.message));
    }
    Ok((m, types))
}

/// The static type of a concrete tensor.
pub fn type_of(t: &Tensor) -> Type {
    let dims: Vec<Dim> = t.shape.iter().map(|&d| Dim::Static(d as i64)).collect();
    Type::tensor(&dims, t.dtype)
}

/// Whether the concrete type `got` fits the declared `want` (static dims
/// equal, symbols bound to the same size in `syms`, `?` anything).
pub fn fits(got: Type, want: Type, syms: &std::collections::HashMap<Ident, i64>) -> bool {
    let (Some(g), Some(w)) = (got.as_tensor(), want.as_tensor()) else {
        return got == want;
    };
    if g.dtype != w.dtype {
        return false;
    }
    match (&g.dims, &w.dims) {
        (Some(gd), Some(wd)) => {
            gd.len() == wd.len()
                && gd
                    .iter()
                    .zip(wd.iter())
                    .all(|(a, b)| match (a.eval(syms), b) {
                        (_, Dim::Unknown) => true,
                        (Some(x), b) => b.eval(syms).is_none_or(|y| x == y),
                        (None, _) => false,
                    })
        }
        (_, None) => true,
        (None, Some(_)) => false,
    }
}

fn verify_specialize(body: &Body, op: OpId) -> Result<(), OpError> {
    Spec::of(body, op).map(|_| ()).map_err(OpError::from)
}

fn sem_specialize(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let s = Spec::of(cx.body, cx.op)?;
    let (data, values) = x.split_at(s.num_data.min(x.len()));
    let attrs = s.concrete_attrs(values)?;
    let tys: Vec<Type> = data.iter().map(|t| type_of(t)).collect();
    let loc = cx.body.op(cx.op).loc;
    let (m, _) = concrete_module(s.def, &attrs, &tys, loc)?;
    Interpreter::new(&m)
        .run_function("k", data.iter().map(|&t| t.clone()).collect())
        .map_err(|e| e.msg)
}

def_op! {
    /// Run an op some of whose attributes are operand values (hybrid execution)
    ///
    /// `%y = graph.specialize %x, %axes {op = "graph.reduce_sum", static_attrs = {keepdims = 1 : i64},
    /// from_values = ["axes:ints"]} : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<3x1xf32>`
    /// runs `graph.reduce_sum %x {axes = <the values of %axes>, keepdims = 1}`. The trailing
    /// operands, one per `from_values` entry `NAME:KIND` (`ints`, `int`, `floats`,
    /// `float`; `count`: one element, at least 1, as a float), are small static integer or float tensors read at run time; the leading
    /// ones are the concrete op's operands. At run time the concrete op is built, its result
    /// types inferred and checked against this op's declared result types (where they are
    /// static or bound symbols), verified, and run with its native kernel. See
    /// docs/architecture.md "Execution modes".
    pub Specialize = "graph.specialize" {
        operands { inputs: Variadic<Any> },
        results { results: Variadic<Any> },
        attrs {
            /// the concrete op
            op: Str,
            /// the concrete op's attributes known at compile time
            static_attrs: Dict,
            /// per trailing value operand, `NAME:KIND`: the attribute it fills
            from_values: StrArray,
        },
        traits [Pure],
        format: "operands attr-dict `:` functional-type(operands, results)",
        verify: verify_specialize,
        semantics: sem_specialize,
        interfaces [
            Cost::ELEMENTWISE,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Specialize,
        ],
        es(none = "built by importers for operands whose values decide attributes"),
    }
}

pub static OPS: &[&OpDef] = &[&SPECIALIZE];

/// `true` for the dtypes a value operand may have.
pub fn value_dtype(d: DType) -> bool {
    d.is_int() || d.is_float()
}

/// Every op of `m`'s functions that `pick` selects, with the body holding it.
pub fn function_ops(m: &Module, pick: impl Fn(&ge_ir::OpData) -> bool) -> Vec<(&Body, OpId)> {
    let mut out = vec![];
    let outer = m.body();
    for f in outer.all_ops(ge_ir::WalkOrder::Pre) {
        let Some(inner) = outer.op(f).inner.as_deref() else {
            continue;
        };
        for o in inner.all_ops(ge_ir::WalkOrder::Pre) {
            if pick(inner.op(o)) {
                out.push((inner, o));
            }
        }
    }
    out
}

/// Every `graph.specialize` of `m`'s functions, with the body holding it.
fn specializes(m: &Module) -> Vec<(&Body, OpId)> {
    function_ops(m, Specialize::is)
}

/// Every `graph.specialize` of `m`'s functions, for reports (ge-atc's
/// `mode`, ge-run `--info`): `CONCRETE (ATTRS from values) at LOC`.
pub fn hybrid_ops(m: &Module) -> Vec<String> {
    let mut out = vec![];
    for (inner, o) in specializes(m) {
        let d = inner.op(o);
        let a = Specialize::attrs(d);
        let from: Vec<&str> = a
            .from_values()
            .unwrap_or_default()
            .iter()
            .map(|e| e.split(':').next().unwrap_or(e))
            .collect();
        out.push(format!(
            "{} ({} from values) at {}",
            a.op().unwrap_or("?"),
            from.join(", "),
            d.loc
        ));
    }
    out
}

/// The value symbols of `m`'s `graph.specialize`s: symbols of their result
/// types that no input type (`inputs`) holds, each with the op that first
/// decides it (`CONCRETE at LOC`), sorted by name, for reports (ge-atc's
/// `mode`). The runtime binds them at run start from the values
/// (docs/architecture.md "Execution modes").
pub fn value_symbols(m: &Module, inputs: &[Type]) -> Vec<(Ident, String)> {
    let syms = |t: Type, out: &mut Vec<Ident>| {
        for d in t
            .as_tensor()
            .and_then(|t| t.dims.clone())
            .unwrap_or_default()
        {
            if let Some(e) = d.expr() {
                e.symbols(out);
            }
        }
    };
    let mut known = vec![];
    inputs.iter().for_each(|&t| syms(t, &mut known));
    let mut out: Vec<(Ident, String)> = vec![];
    for (inner, o) in specializes(m) {
        let d = inner.op(o);
        let mut found = vec![];
        inner
            .result_types(o)
            .into_iter()
            .for_each(|t| syms(t, &mut found));
        for s in found {
            if !known.contains(&s) && !out.iter().any(|(x, _)| *x == s) {
                let a = Specialize::attrs(d);
                out.push((s, format!("{} at {}", a.op().unwrap_or("?"), d.loc)));
            }
        }
    }
    out.sort_by_key(|(s, _)| s.to_string());
    out
}
