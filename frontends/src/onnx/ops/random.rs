//! RandomUniform, RandomNormal (and their `*Like` forms), Bernoulli and
//! Multinomial map to `graph.random_uniform`, `graph.random_normal`,
//! `graph.bernoulli` and `graph.multinomial` (dialects/src/graph/random.rs,
//! which documents the generator). ONNX's float `seed` is kept as it is.

use super::{one, Cx, Node, Res};
use crate::onnx::tensor::dtype_from_onnx;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::Type;

/// The draw's `dtype` attribute (if the node has one) and its `seed`.
fn common(n: &Node) -> Res<Vec<(&'static str, Attribute)>> {
    let mut attrs = vec![];
    if let Some(code) = n.opt_i("dtype")? {
        let dt = dtype_from_onnx(code as i32)?;
        attrs.push(("dtype", Attribute::ty(Type::scalar(dt))));
    }
    if let Some(seed) = n.opt_f("seed")? {
        attrs.push(("seed", Attribute::f64(seed as f64)));
    }
    Ok(attrs)
}

/// A uniform or normal draw (`params`: the names and defaults of its two
/// parameters, ONNX's and ge's alike), shaped by the input (`like`) or the
/// `shape` attribute.
fn draw(
    cx: &mut Cx,
    n: &Node,
    name: &str,
    like: bool,
    params: [(&'static str, f32); 2],
) -> Res<Vec<ValueId>> {
    let mut attrs = common(n)?;
    for (p, default) in params {
        attrs.push((p, Attribute::f64(n.f(p, default)? as f64)));
    }
    let operands = if like {
        vec![n.input(0)?]
    } else {
        let shape = n
            .ints("shape")
            .ok_or_else(|| super::invalid(n, "requires attribute 'shape'"))?;
        attrs.push(("shape", Attribute::i64_array(&shape)));
        vec![]
    };
    one(cx.e.op(name, &operands, attrs)?)
}

const UNIFORM: [(&str, f32); 2] = [("low", 0.0), ("high", 1.0)];
const NORMAL: [(&str, f32); 2] = [("mean", 0.0), ("scale", 1.0)];

pub fn random_uniform(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    draw(cx, n, "graph.random_uniform", false, UNIFORM)
}

pub fn random_uniform_like(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    draw(cx, n, "graph.random_uniform", true, UNIFORM)
}

pub fn random_normal(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    draw(cx, n, "graph.random_normal", false, NORMAL)
}

pub fn random_normal_like(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    draw(cx, n, "graph.random_normal", true, NORMAL)
}

pub fn bernoulli(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(cx.e.op("graph.bernoulli", &[x], common(n)?)?)
}

pub fn multinomial(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let mut attrs = common(n)?;
    attrs.push(("sample_size", Attribute::i64(n.i("sample_size", 1)?)));
    one(cx.e.op("graph.multinomial", &[x], attrs)?)
}
