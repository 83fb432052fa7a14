//! Reductions, arg-reductions, cumulative sums and products.

use super::{invalid, norm_axis, one, op1, op2, Cx, Node, Res};
use ge_dialects::graph::specialize::ValueKind;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

/// The reduced axes: an input from `input_since` on, an attribute before;
/// `Err(v)` when they are the values of `v`, known only at run time.
fn axes(cx: &Cx, n: &Node, input_since: i64) -> Res<Result<Vec<i64>, ValueId>> {
    if n.opset >= input_since {
        match n.opt_input(1) {
            Some(a) if !cx.is_const(a) => Ok(Err(a)),
            Some(a) => cx.const_i64s(a, "axes").map(Ok),
            None => Ok(Ok(vec![])),
        }
    } else {
        Ok(Ok(n.ints("axes").unwrap_or_default()))
    }
}

/// `name` over the node's axes after applying `pre` to the input and `post`
/// to the result.
fn reduction(
    cx: &mut Cx,
    n: &Node,
    name: &str,
    input_since: i64,
    pre: &dyn Fn(&mut Cx, ValueId) -> Res<ValueId>,
    post: &dyn Fn(&mut Cx, ValueId) -> Res<ValueId>,
) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let axes = axes(cx, n, input_since)?;
    let keepdims = n.i("keepdims", 1)?;
    let noop = n.i("noop_with_empty_axes", 0)?;
    let x = pre(cx, x)?;
    let axes = match axes {
        Ok(axes) => axes,
        Err(a) => {
            let attrs = vec![
                ("keepdims", Attribute::i64(keepdims)),
                ("noop_with_empty_axes", Attribute::i64(noop)),
            ];
            let r = cx.specialize(n, name, &[x], attrs, &[(a, "axes", ValueKind::Ints)], 1)?;
            return one(post(cx, r[0])?);
        }
    };
    if axes.is_empty() && noop != 0 {
        return one(op1(cx, "data.identity", x)?);
    }
    let r = cx.e.op(
        name,
        &[x],
        vec![
            ("axes", Attribute::i64_array(&axes)),
            ("keepdims", Attribute::i64(keepdims)),
        ],
    )?;
    one(post(cx, r)?)
}

fn id(_: &mut Cx, v: ValueId) -> Res<ValueId> {
    Ok(v)
}

fn square(cx: &mut Cx, v: ValueId) -> Res<ValueId> {
    op2(cx, "graph.mul", v, v)
}

pub fn reduce_sum(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_sum", 13, &id, &id)
}
pub fn reduce_mean(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_mean", 18, &id, &id)
}
pub fn reduce_max(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_max", 18, &id, &id)
}
pub fn reduce_min(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_min", 18, &id, &id)
}
pub fn reduce_prod(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_prod", 18, &id, &id)
}
pub fn reduce_l1(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    reduction(
        cx,
        n,
        "graph.reduce_sum",
        18,
        &|cx, v| op1(cx, "graph.abs", v),
        &id,
    )
}
pub fn reduce_l2(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let dt = cx.e.dtype(n.input(0)?)?;
    reduction(cx, n, "graph.reduce_sum", 18, &square, &move |cx, v| {
        if dt.is_float() {
            op1(cx, "graph.sqrt", v)
        } else {
            // Integer L2 norms: sqrt in f64, truncated back (the reference casts).
            let f = super::cast(cx, v, ge_ir::DType::F64)?;
            let s = op1(cx, "graph.sqrt", f)?;
            super::cast(cx, s, dt)
        }
    })
}
pub fn reduce_sum_square(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_sum", 18, &square, &id)
}
pub fn reduce_log_sum(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_sum", 18, &id, &|cx, v| {
        op1(cx, "graph.log", v)
    })
}
pub fn reduce_log_sum_exp(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    reduction(
        cx,
        n,
        "graph.reduce_sum",
        18,
        &|cx, v| op1(cx, "graph.exp", v),
        &|cx, v| op1(cx, "graph.log", v),
    )
}

fn arg(cx: &mut Cx, n: &Node, name: &str) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(cx.e.op(
        name,
        &[x],
        vec![
            ("axis", Attribute::i64(n.i("axis", 0)?)),
            ("keepdims", Attribute::i64(n.i("keepdims", 1)?)),
            (
                "select_last_index",
                Attribute::i64(n.i("select_last_index", 0)?),
            ),
        ],
    )?)
}

pub fn arg_max(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    arg(cx, n, "graph.argmax")
}
pub fn arg_min(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    arg(cx, n, "graph.argmin")
}

/// CumSum maps to `graph.cumsum`; an axis that is not a constant becomes the
/// op's `axis_value` operand, read (and range-checked) when it runs.
pub fn cum_sum(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let axis = n.input(1)?;
    let mut attrs = vec![
        ("exclusive", Attribute::i64(n.i("exclusive", 0)?)),
        ("reverse", Attribute::i64(n.i("reverse", 0)?)),
    ];
    if !cx.is_const(axis) {
        return one(cx.e.op("graph.cumsum", &[x, axis], attrs)?);
    }
    let a = cx.const_i64s(axis, "axis")?;
    let [a] = a[..] else {
        return Err(invalid(
            n,
            format!("axis must hold one element, got {}", a.len()),
        ));
    };
    let rank = cx.e.rank(x)?;
    attrs.push(("axis", Attribute::i64(norm_axis(n, a, rank)? as i64)));
    one(cx.e.op("graph.cumsum", &[x], attrs)?)
}

/// CumProd maps to `graph.cumprod`; an axis that is not a constant is read at
/// run time (`graph.specialize`).
pub fn cum_prod(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let flags = vec![
        ("exclusive", Attribute::i64(n.i("exclusive", 0)?)),
        ("reverse", Attribute::i64(n.i("reverse", 0)?)),
    ];
    if !cx.is_const(n.input(1)?) {
        // The axis read at run time (graph.cumprod takes negative axes).
        let a = (n.input(1)?, "axis", ValueKind::Int);
        return cx.specialize(n, "graph.cumprod", &[x], flags, &[a], 1);
    }
    let axis = cx.const_i64s(n.input(1)?, "axis")?;
    let rank = cx.e.rank(x)?;
    let a = norm_axis(n, axis.first().copied().unwrap_or(0), rank)?;
    let mut attrs = vec![("axis", Attribute::i64(a as i64))];
    attrs.extend(flags);
    one(cx.e.op("graph.cumprod", &[x], attrs)?)
}
