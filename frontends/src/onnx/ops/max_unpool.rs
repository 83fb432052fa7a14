//! MaxPool with its `Indices` output maps to `graph.max_pool2d_indices`
//! (`graph.max_pool3d_indices` on volumes), and MaxUnpool to
//! `graph.max_unpool` (dialects/src/graph/max_unpool.rs).
//! MaxPool's window attributes are resolved as for every pool
//! ([`super::nn::window`]); 1-D inputs get a neutral H dim (their indices
//! are the same numbers). MaxUnpool's `output_shape` input becomes the
//! attribute when it is a constant, else the op is a `graph.specialize`
//! that reads it at run time (hybrid execution, [`Cx::specialize`]).

use super::nn::{spatial_rank, window, window_2d};
use super::{invalid, one, run_time, squeeze, unsqueeze, unsupported, Cx, Node, Res};
use ge_dialects::graph::specialize::ValueKind;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

pub fn max_pool_indices(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let k = spatial_rank(cx, n, x, true).map_err(|_| {
        unsupported(
            n,
            "with the Indices output on other than 1-D, 2-D and 3-D inputs",
        )
    })?;
    let kernel = n
        .ints("kernel_shape")
        .ok_or_else(|| invalid(n, "requires attribute 'kernel_shape'"))?;
    if kernel.len() != k {
        return Err(invalid(n, "kernel_shape does not match the input rank"));
    }
    let order = n.i("storage_order", 0)?;
    if order != 0 && order != 1 {
        return Err(invalid(
            n,
            format!("storage_order must be 0 or 1, got {order}"),
        ));
    }
    let ceil_mode = n.i("ceil_mode", 0)?;
    let win = window(cx, n, x, &kernel, ceil_mode != 0)?;
    if k == 3 {
        if let Some(dt) = cx.e.ty(x).dtype().filter(|d| !d.is_float()) {
            return Err(unsupported(
                n,
                format!("with the Indices output on 3-D {dt} inputs (only float types)"),
            ));
        }
        let attrs = vec![
            ("kernel_shape", Attribute::i64_array(&kernel)),
            ("strides", Attribute::i64_array(&win.strides)),
            ("pads", Attribute::i64_array(&win.pads)),
            ("dilations", Attribute::i64_array(&win.dilations)),
            ("ceil_mode", Attribute::i64(ceil_mode)),
            ("storage_order", Attribute::i64(order)),
        ];
        return Ok(cx
            .e
            .op_multi("graph.max_pool3d_indices", &[x], attrs, None)?);
    }
    let (strides, pads, dilations) = window_2d(&win, k == 1);
    let kernel = if k == 1 { vec![1, kernel[0]] } else { kernel };
    let x2 = if k == 1 { unsqueeze(cx, x, &[2])? } else { x };
    let attrs = vec![
        ("kernel_shape", Attribute::i64_array(&kernel)),
        ("strides", Attribute::i64_array(&strides)),
        ("pads", Attribute::i64_array(&pads)),
        ("dilations", Attribute::i64_array(&dilations)),
        ("ceil_mode", Attribute::i64(ceil_mode)),
        ("storage_order", Attribute::i64(order)),
    ];
    let r =
        cx.e.op_multi("graph.max_pool2d_indices", &[x2], attrs, None)?;
    if k == 1 {
        return Ok(vec![squeeze(cx, r[0], &[2])?, squeeze(cx, r[1], &[2])?]);
    }
    Ok(r)
}

pub fn max_unpool(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    const NAME: &str = "graph.max_unpool";
    let (x, i) = (n.input(0)?, n.input(1)?);
    if let Some(dt) = cx.e.ty(x).dtype().filter(|d| !d.is_float()) {
        return Err(unsupported(n, format!("on {dt} (only float types)")));
    }
    let kernel = n
        .ints("kernel_shape")
        .ok_or_else(|| invalid(n, "requires attribute 'kernel_shape'"))?;
    let mut attrs = vec![("kernel_shape", Attribute::i64_array(&kernel))];
    for a in ["pads", "strides"] {
        if let Some(v) = n.ints(a) {
            attrs.push((a, Attribute::i64_array(&v)));
        }
    }
    if let Some(s) = n.opt_input(2) {
        if run_time(cx, n, 2).is_some() {
            let values = [(s, "output_shape", ValueKind::Ints)];
            return cx.specialize(n, NAME, &[x, i], attrs, &values, 1);
        }
        let shape = cx.const_i64s(s, "output_shape")?;
        attrs.push(("output_shape", Attribute::i64_array(&shape)));
    }
    one(cx.e.op(NAME, &[x, i], attrs)?)
}
