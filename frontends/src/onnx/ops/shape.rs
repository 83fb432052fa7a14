//! Data movement and shape ops: constants, reshapes, transposes, slices,
//! gathers/scatters, padding, resizing; shape computations (Shape, Size,
//! Range, ConstantOfShape, …) become constants at import.

use super::{
    cast, invalid, norm_axis, one, op1, op2, run_time, static_shape, unsupported, Cx, Node, Res,
};
use crate::onnx::tensor::{dtype_from_onnx, tensor_value};
use ge_dialects::graph::specialize::ValueKind::{self, Float, Int, Ints};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim};

pub fn constant(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    if let Some(t) = n.tensor("value") {
        return one(cx.tensor_constant(t)?);
    }
    let t = if let Some(a) = n.attr("value_float") {
        Tensor::scalar(DType::F32, a.f.unwrap_or(0.0) as f64)
    } else if let Some(v) = n.floats("value_floats") {
        Tensor::from_f64(
            vec![v.len()],
            DType::F32,
            v.iter().map(|&x| x as f64).collect(),
        )
    } else if let Some(a) = n.attr("value_int") {
        Tensor::from_i64(vec![], DType::I64, vec![a.i.unwrap_or(0)])
    } else if let Some(v) = n.ints("value_ints") {
        Tensor::from_i64(vec![v.len()], DType::I64, v)
    } else if n.has("value_string") || n.has("value_strings") {
        return Err(unsupported(n, "with string values"));
    } else if n.has("sparse_value") {
        return Err(unsupported(n, "with a sparse value"));
    } else {
        return Err(invalid(n, "has no value attribute"));
    };
    one(cx.e.constant(&t)?)
}

pub fn constant_of_shape(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    if let Some(s) = run_time(cx, n, 0) {
        // The scalar expanded to the shape read at run time.
        let (dt, v) = match n.tensor("value") {
            Some(t) => {
                let tv = tensor_value(t, &cx.model.base)?;
                (tv.dtype, if tv.len() == 1 { tv.get_f(0) } else { 0.0 })
            }
            None => (DType::F32, 0.0),
        };
        let scalar = cx.e.scalar(dt, v)?;
        return cx.specialize(
            n,
            "data.expand",
            &[scalar],
            vec![],
            &[(s, "shape", Ints)],
            1,
        );
    }
    let dims = cx.sym_dims(n.input(0)?, "shape")?;
    if dims.iter().any(|d| d.as_static().is_some_and(|v| v < 0)) {
        return Err(invalid(n, format!("negative dim in shape {dims:?}")));
    }
    let static_shape: Option<Vec<i64>> = dims.iter().map(|d| d.as_static()).collect();
    let (dt, v) = match n.tensor("value") {
        Some(t) => {
            let tv = tensor_value(t, &cx.model.base)?;
            if tv.len() != 1 {
                return Err(invalid(n, "value must hold one element"));
            }
            (tv.dtype, tv.get_f(0))
        }
        None => (DType::F32, 0.0),
    };
    let Some(shape) = static_shape else {
        // A symbolic shape: the scalar broadcast to it.
        let scalar = if dt.is_float() {
            Tensor::from_f64(vec![], dt, vec![v])
        } else {
            Tensor::from_i64(vec![], dt, vec![v as i64])
        };
        let c = cx.e.constant(&scalar)?;
        return one(sym_expand(cx, c, &dims)?);
    };
    // One element standing for all (a splat): nothing is materialised here,
    // but the compiled model will hold the whole tensor, so its size must
    // fit the memory budget.
    ge_ir::budget::check(
        ge_ir::budget::bytes_of(shape.iter().map(|&d| d as u64), dt.byte_size() as u64),
        &format_args!("a constant of shape {shape:?}"),
    )
    .map_err(|e| invalid(n, e))?;
    let usize_shape: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let count = usize_shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&c| c <= 1 << 28)
        .ok_or_else(|| invalid(n, format!("shape {shape:?} is too large")))?;
    let (scalar_shape, values) = if count <= 1 {
        (usize_shape, count)
    } else {
        (vec![], 1)
    };
    let t = if dt.is_float() {
        Tensor::from_f64(scalar_shape, dt, vec![v; values])
    } else {
        Tensor::from_i64(scalar_shape, dt, vec![v as i64; values])
    };
    let mut dense = t.to_dense();
    if count > 1 {
        dense.ty = ge_ir::Type::tensor_static(&shape, dt);
        dense.splat = true;
    }
    one(cx.e.constant_attr(Attribute::dense(dense))?)
}

pub fn shape(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let dims = cx.e.dims(x)?;
    let r = dims.len() as i64;
    let clamp = |v: i64| -> usize { (if v < 0 { v + r } else { v }).clamp(0, r) as usize };
    let start = clamp(n.i("start", 0)?);
    let end = clamp(n.i("end", r)?);
    let part = if start < end {
        &dims[start..end]
    } else {
        &[][..]
    };
    if let Some(vals) = part
        .iter()
        .map(|d| d.as_static())
        .collect::<Option<Vec<i64>>>()
    {
        return one(cx.e.i64_vector(&vals)?);
    }
    // Dynamic dims: the shape at run time (tracked symbolically by
    // `symbolic.rs`, which folds whatever reads only static dims).
    let s = cx.e.op("data.shape_of", &[x], vec![])?;
    if (start, end) == (0, r as usize) {
        return one(s);
    }
    one(cx.e.op(
        "data.slice",
        &[s],
        vec![
            ("starts", Attribute::i64_array(&[start as i64])),
            ("ends", Attribute::i64_array(&[end.max(start) as i64])),
        ],
    )?)
}

/// `data.expand` of `x` to a shape with symbolic dims.
pub fn sym_expand(cx: &mut Cx, x: ValueId, dims: &[Dim]) -> Res<ValueId> {
    Ok(cx.e.op(
        "data.expand",
        &[x],
        vec![
            ("shape", Attribute::i64_array(&[])),
            (
                "sym_shape",
                Attribute::string(&ge_ir::dim::format_dims(dims)),
            ),
        ],
    )?)
}

pub fn size(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    if let Some(shape) = cx.e.static_shape(x) {
        let count: i64 = shape.iter().product();
        return one(cx
            .e
            .constant(&Tensor::from_i64(vec![], DType::I64, vec![count]))?);
    }
    let s = cx.e.op("data.shape_of", &[x], vec![])?;
    one(super::reduce(cx, "graph.reduce_prod", s, &[], false)?)
}

/// The product of `x`'s first `upto` dims as an `i64` scalar: a constant
/// when they are static, else read from `data.shape_of` at run time.
pub(super) fn element_count(cx: &mut Cx, n: &Node, x: ValueId, upto: usize) -> Res<ValueId> {
    let dims = cx.e.dims(x)?;
    let dims = dims
        .get(..upto)
        .ok_or_else(|| invalid(n, format!("'{}' has fewer than {upto} dims", cx.e.ty(x))))?;
    if let Some(count) = ge_ir::dim::product(dims).as_static() {
        return Ok(cx
            .e
            .constant(&Tensor::from_i64(vec![], DType::I64, vec![count]))?);
    }
    let s = cx.e.op("data.shape_of", &[x], vec![])?;
    let s = cx.e.op(
        "data.slice",
        &[s],
        vec![
            ("starts", Attribute::i64_array(&[0])),
            ("ends", Attribute::i64_array(&[upto as i64])),
        ],
    )?;
    super::reduce(cx, "graph.reduce_prod", s, &[], false)
}

/// `data.iota`: `start, start + delta, …`, `count` elements (a dim).
pub(super) fn iota(cx: &mut Cx, count: Dim, start: i64, delta: i64) -> Res<ValueId> {
    Ok(cx.e.op(
        "data.iota",
        &[],
        vec![
            (
                "count",
                Attribute::string(&ge_ir::dim::format_dims(&[count])),
            ),
            ("start", Attribute::i64(start)),
            ("delta", Attribute::i64(delta)),
        ],
    )?)
}

/// Range whose limit is a symbolic dim (start and delta are constants).
fn symbolic_range(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let scalar = |cx: &Cx, i: usize, what: &str| -> Res<Dim> {
        let v = n.input(i)?;
        match cx.sym_value(v).map(|s| s.elems) {
            Some(e) if e.len() == 1 => Ok(e[0]),
            _ => Err(cx.not_constant(v, what)),
        }
    };
    let limit = scalar(cx, 1, "limit")?;
    let start = scalar(cx, 0, "start")?;
    let delta = scalar(cx, 2, "delta")?;
    let Some(delta) = delta.as_static() else {
        return Err(unsupported(n, "with a symbolic delta"));
    };
    if delta == 0 {
        return Err(invalid(n, "delta must not be zero"));
    }
    // ceil((limit - start) / delta), at least 0.
    let span = if delta > 0 {
        limit.sub(start)
    } else {
        start.sub(limit)
    };
    let step = delta.abs();
    let count = span
        .add(Dim::Static(step - 1))
        .div(Dim::Static(step))
        .max(Dim::Static(0));
    let dt = cx.e.dtype(n.input(0)?)?;
    match start.as_static() {
        Some(start) => {
            let r = iota(cx, count, start, delta)?;
            one(cast(cx, r, dt)?)
        }
        // A symbolic start (torch's `arange(past, past + seq)` for the
        // positions after a KV cache): the iota from 0, plus the start's
        // value as the graph computes it.
        None => {
            let r = iota(cx, count, 0, delta)?;
            let r = cast(cx, r, dt)?;
            let shifted = cx.e.op("graph.add", &[r, n.input(0)?], vec![])?;
            one(shifted)
        }
    }
}

pub fn range(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    if (0..3).any(|i| run_time(cx, n, i).is_some()) {
        return run_time_range(cx, n);
    }
    if cx.e.const_value(n.input(1)?).is_none() {
        return symbolic_range(cx, n);
    }
    let start = cx.const_tensor(n.input(0)?, "start")?;
    let limit = cx.const_tensor(n.input(1)?, "limit")?;
    let delta = cx.const_tensor(n.input(2)?, "delta")?;
    // Scalars (ONNX), or at least one element: an empty one was read at 0.
    if [&start, &limit, &delta].iter().any(|t| t.len() != 1) {
        return Err(invalid(n, "start, limit and delta must be scalars"));
    }
    let dt = start.dtype;
    let (s, l, d) = (start.get_f(0), limit.get_f(0), delta.get_f(0));
    if d == 0.0 {
        return Err(invalid(n, "delta must not be zero"));
    }
    let count = ((l - s) / d).ceil().max(0.0) as usize;
    if count > 1 << 26 {
        return Err(invalid(n, format!("{count} elements are too many")));
    }
    let t = if dt.is_float() {
        Tensor::from_f64(
            vec![count],
            dt,
            (0..count).map(|i| s + i as f64 * d).collect(),
        )
    } else {
        let (s, d) = (start.get_i(0), delta.get_i(0));
        Tensor::from_i64(
            vec![count],
            dt,
            (0..count as i64).map(|i| s + i * d).collect(),
        )
    };
    one(cx.e.constant(&t)?)
}

/// Range whose bounds are tensor values known at run time: a
/// `graph.specialize` of `graph.range`, its length a value symbol
/// (docs/architecture.md "Execution modes").
fn run_time_range(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let dt = cx.e.dtype(n.input(0)?)?;
    let mut attrs = vec![("to", Attribute::ty(ge_ir::Type::scalar(dt)))];
    let mut values = vec![];
    for (i, what) in ["start", "limit", "delta"].into_iter().enumerate() {
        let v = n.input(i)?;
        if run_time(cx, n, i).is_some() || cx.sym.contains_key(&v) {
            values.push((v, what, Float));
        } else {
            let c = cx.const_f64s(v, what)?;
            let c = *c
                .first()
                .ok_or_else(|| invalid(n, format!("{what} is empty")))?;
            attrs.push((what, Attribute::f64(c)));
        }
    }
    cx.specialize(n, "graph.range", &[], attrs, &values, 1)
}

/// A `graph.range` from 0 to the count `limit` known at run time (its
/// length a value symbol named after `n`'s output `base`; a `limit` under 1
/// is a run-time error, as onnxruntime's): OneHot's positions when its
/// depth is a graph input or computed.
pub(super) fn run_time_iota(cx: &mut Cx, n: &Node, limit: ValueId, base: &str) -> Res<ValueId> {
    let attrs = vec![("to", Attribute::ty(ge_ir::Type::scalar(DType::I64)))];
    let values = [(limit, "limit", ValueKind::Count)];
    let r = cx.specialize_as(n, base, "graph.range", &[], attrs, &values, 1)?;
    r.first()
        .copied()
        .ok_or_else(|| invalid(n, "graph.range gave no result"))
}

pub fn eye_like(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let shape = static_shape(cx, n, x, "an input")?;
    if shape.len() != 2 {
        return Err(invalid(n, "input must be 2-D"));
    }
    let dt = match n.opt_i("dtype")? {
        Some(c) => dtype_from_onnx(c as i32)?,
        None => cx.e.dtype(x)?,
    };
    let k = n.i("k", 0)?;
    let (r, c) = (shape[0], shape[1]);
    let v: Vec<f64> = (0..r)
        .flat_map(|i| (0..c).map(move |j| (j - i == k) as i64 as f64))
        .collect();
    one(cx
        .e
        .constant(&Tensor::from_f64(vec![r as usize, c as usize], dt, v))?)
}

pub fn non_zero(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    if !cx.is_const(x) {
        return run_time_non_zero(cx, n, x);
    }
    let t = cx.const_tensor(x, "input")?;
    let (flat, count) = ge_dialects::data::size::nonzero_coords(&t);
    one(cx.e.constant(&Tensor::from_i64(
        vec![t.shape.len(), count],
        DType::I64,
        flat,
    ))?)
}

/// NonZero of a value known at run time: `data.nonzero` with a fresh size
/// symbol bounded by the operand's element count (docs/architecture.md
/// "Execution modes", size symbols).
fn run_time_non_zero(cx: &mut Cx, n: &Node, x: ValueId) -> Res<Vec<ValueId>> {
    let out = n.output_names.first().map_or("nonzero", String::as_str);
    let sym = format!("{out}_count");
    one(nonzero_op(cx, n, x, &sym, "input")?)
}

/// `data.nonzero` of `x` with a fresh size symbol named after `sym`, its
/// bound `x`'s element count (static, else an unsupported error).
fn nonzero_op(cx: &mut Cx, n: &Node, x: ValueId, sym: &str, what: &str) -> Res<ValueId> {
    let dims =
        cx.e.ty(x)
            .as_tensor()
            .and_then(|t| t.dims.as_ref().map(|d| d.to_vec()))
            .ok_or_else(|| cx.not_constant(x, what))?;
    let bound = dims.iter().try_fold(1i64, |a, &d| {
        cx.symbols.upper_bound(d).and_then(|d| a.checked_mul(d))
    });
    let Some(bound) = bound else {
        return Err(unsupported(n, format_args!(
            "of '{}' (dynamic dims without an upper bound: its size symbol needs one; give the input a static shape with --input_shape)",
            cx.e.ty(x)
        )));
    };
    let sym = cx.symbols.fresh(sym);
    cx.symbols.bounds.insert(sym.clone(), bound);
    let r = cx.e.op_multi(
        "data.nonzero",
        &[x],
        vec![("count", Attribute::string(&sym))],
        None,
    )?;
    Ok(r[0])
}

pub fn reshape_op(cx: &mut Cx, n: &Node, shape: Vec<i64>) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let allowzero = n.i("allowzero", 0)?;
    one(cx.e.op(
        "data.reshape",
        &[x],
        vec![
            ("shape", Attribute::i64_array(&shape)),
            ("allowzero", Attribute::i64(allowzero)),
        ],
    )?)
}

pub fn reshape(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    if let Some(s) = run_time(cx, n, 1) {
        let attrs = vec![("allowzero", Attribute::i64(n.i("allowzero", 0)?))];
        return cx.specialize(
            n,
            "data.reshape",
            &[n.input(0)?],
            attrs,
            &[(s, "shape", Ints)],
            1,
        );
    }
    let target = match n.opt_input(1) {
        Some(s) => cx.sym_dims(s, "shape")?,
        None => n
            .ints("shape")
            .ok_or_else(|| invalid(n, "requires a shape"))?
            .into_iter()
            .map(Dim::Static)
            .collect(),
    };
    if let Some(shape) = target.iter().map(|d| d.as_static()).collect() {
        return reshape_op(cx, n, shape);
    }
    // A target computed from symbolic dims.
    let x = n.input(0)?;
    let input = cx.e.dims(x)?;
    let allowzero = n.i("allowzero", 0)? != 0;
    let out = crate::onnx::symbolic::resolve_reshape(&input, &target, allowzero).map_err(|m| {
        invalid(
            n,
            format!("target {}: {m}", ge_ir::dim::format_dims(&target)),
        )
    })?;
    one(sym_reshape(cx, x, &out)?)
}

/// `data.reshape` of `x` to a shape with symbolic dims.
pub fn sym_reshape(cx: &mut Cx, x: ValueId, dims: &[Dim]) -> Res<ValueId> {
    Ok(cx.e.op(
        "data.reshape",
        &[x],
        vec![
            ("shape", Attribute::i64_array(&[])),
            (
                "sym_shape",
                Attribute::string(&ge_ir::dim::format_dims(dims)),
            ),
        ],
    )?)
}

pub fn flatten(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let dims = cx.e.dims(x)?;
    let r = dims.len();
    let axis = n.i("axis", 1)?;
    let a = if axis == r as i64 {
        r
    } else {
        norm_axis(n, axis, r.max(1))?
    };
    let prod = |ds: &[Dim]| -> Option<i64> { ds.iter().map(|d| d.as_static()).product() };
    let shape = match (prod(&dims[..a]), prod(&dims[a..])) {
        (Some(p), _) => vec![p, -1],
        (_, Some(q)) => vec![-1, q],
        _ if a == 1 => vec![0, -1],
        _ => {
            return Err(unsupported(
                n,
                "with dynamic dims on both sides of the axis",
            ))
        }
    };
    one(super::reshape(cx, x, &shape)?)
}

pub fn transpose(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let perm = match n.ints("perm") {
        Some(p) => p,
        None => (0..cx.e.rank(x)? as i64).rev().collect(),
    };
    one(super::transpose(cx, x, &perm)?)
}

pub fn concat(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let xs = n.present_inputs();
    // Concat's axis was optional (default 1) before opset 4.
    let axis = match n.opt_i("axis")? {
        Some(a) => a,
        None if n.opset < 4 => 1,
        None => return Err(invalid(n, "requires attribute 'axis'")),
    };
    one(cx
        .e
        .op("data.concat", &xs, vec![("axis", Attribute::i64(axis))])?)
}

pub fn split(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let axis = n.i("axis", 0)?;
    let rank = cx.e.rank(x)?;
    let a = norm_axis(n, axis, rank)?;
    // Split opset 1 took the sizes as an attribute or a second input.
    let split = if n.opset >= 13 || (n.opset < 2 && n.opt_input(1).is_some()) {
        if let Some(s) = run_time(cx, n, 1) {
            let attrs = vec![("axis", Attribute::i64(axis))];
            let k = n.num_outputs;
            return cx.specialize(n, "data.split", &[x], attrs, &[(s, "split", Ints)], k);
        }
        match n.opt_input(1) {
            Some(s) if !cx.is_const(s) => return symbolic_split(cx, n, x, a, s),
            Some(s) => Some(cx.const_i64s(s, "split")?),
            None => None,
        }
    } else {
        n.ints("split")
    };
    let parts = n.num_outputs;
    let split = match split {
        Some(s) => s,
        None => {
            let count = n.opt_i("num_outputs")?.unwrap_or(parts as i64).max(1);
            // Checked before the parts are made: a hostile 2^40 sized them.
            if count as usize != parts {
                return Err(invalid(
                    n,
                    format!("has {parts} outputs but 'num_outputs' is {count}"),
                ));
            }
            let Some(d) = cx.e.dims(x)?[a].as_static() else {
                // A symbolic dim: data.split's own inference gives the parts
                // (`B` by 2 is `B/2` twice when `B` is `2*K`, else
                // `(B+1)/2` and the rest); the kernels check them per run.
                return Ok(cx.e.op_multi(
                    "data.split",
                    &[x],
                    vec![
                        ("axis", Attribute::i64(axis)),
                        ("num_outputs", Attribute::i64(count)),
                    ],
                    None,
                )?);
            };
            let chunk = (d + count - 1) / count;
            (0..count)
                .map(|i| (d - i * chunk).clamp(0, chunk))
                .collect()
        }
    };
    let types = {
        let dims = cx.e.dims(x)?;
        let dt = cx.e.dtype(x)?;
        split
            .iter()
            .map(|&s| {
                let mut d = dims.clone();
                d[a] = Dim::Static(s);
                ge_ir::Type::tensor(&d, dt)
            })
            .collect::<Vec<_>>()
    };
    Ok(cx.e.op_multi(
        "data.split",
        &[x],
        vec![
            ("axis", Attribute::i64(axis)),
            ("split", Attribute::i64_array(&split)),
        ],
        Some(types),
    )?)
}

/// Split by a `split` input computed from dims (`[S/2, S-S/2]` from
/// `Shape(x)`): the parts' dims are those expressions, and the sizes are
/// read when it runs — a `graph.specialize` of `data.split` whose kernel
/// builds the concrete split from the values and refuses parts that differ
/// from the types (or do not add up to the dim).
fn symbolic_split(cx: &mut Cx, n: &Node, x: ValueId, a: usize, s: ValueId) -> Res<Vec<ValueId>> {
    let sizes = cx.sym_dims(s, "split")?;
    if sizes.len() != n.num_outputs {
        return Err(invalid(
            n,
            format!(
                "has {} outputs but 'split' has {} elements",
                n.num_outputs,
                sizes.len()
            ),
        ));
    }
    let dims = cx.e.dims(x)?;
    let dt = cx.e.dtype(x)?;
    let types = sizes
        .iter()
        .map(|&p| {
            let mut d = dims.clone();
            d[a] = p;
            ge_ir::Type::tensor(&d, dt)
        })
        .collect();
    let attrs = vec![("axis", Attribute::i64(a as i64))];
    cx.create_specialize("data.split", &[x], attrs, &[(s, "split", Ints)], types)
}

/// Squeeze/Unsqueeze axes: an input from opset 13, an attribute before.
fn axes_of(cx: &Cx, n: &Node) -> Res<Option<Vec<i64>>> {
    if n.opset >= 13 {
        match n.opt_input(1) {
            Some(a) => Ok(Some(cx.const_i64s(a, "axes")?)),
            None => Ok(None),
        }
    } else {
        Ok(n.ints("axes"))
    }
}

/// `name` with its `axes` read at run time, when they are a run-time input.
fn run_time_axes(cx: &mut Cx, n: &Node, name: &str) -> Option<Res<Vec<ValueId>>> {
    let a = run_time(cx, n, 1).filter(|_| n.opset >= 13)?;
    let x = n.input(0).ok()?;
    Some(cx.specialize(n, name, &[x], vec![], &[(a, "axes", Ints)], 1))
}

pub fn squeeze(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    if let Some(r) = run_time_axes(cx, n, "data.squeeze") {
        return r;
    }
    let x = n.input(0)?;
    let attrs = match axes_of(cx, n)? {
        Some(a) => vec![("axes", Attribute::i64_array(&a))],
        None => vec![],
    };
    one(cx.e.op("data.squeeze", &[x], attrs)?)
}

pub fn unsqueeze(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    if let Some(r) = run_time_axes(cx, n, "data.unsqueeze") {
        return r;
    }
    let x = n.input(0)?;
    let axes = axes_of(cx, n)?.ok_or_else(|| invalid(n, "requires axes"))?;
    one(super::unsqueeze(cx, x, &axes)?)
}

pub fn expand(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    if let Some(s) = run_time(cx, n, 1) {
        return cx.specialize(n, "data.expand", &[x], vec![], &[(s, "shape", Ints)], 1);
    }
    let dims = cx.sym_dims(n.input(1)?, "shape")?;
    let Some(shape) = dims
        .iter()
        .map(|d| d.as_static())
        .collect::<Option<Vec<i64>>>()
    else {
        return one(sym_expand(cx, x, &dims)?);
    };
    one(cx.e.op(
        "data.expand",
        &[x],
        vec![("shape", Attribute::i64_array(&shape))],
    )?)
}

pub fn tile(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let repeats = if n.opset < 6 {
        // Tile-1: (input, tiles, axis): `tiles` copies along one axis.
        let tiles = cx.const_i64s(n.input(1)?, "tiles")?;
        let axis = cx.const_i64s(n.input(2)?, "axis")?;
        let rank = cx.e.rank(x)?;
        let (Some(&t), Some(&a)) = (tiles.first(), axis.first()) else {
            return Err(invalid(n, "tiles and axis must be scalars"));
        };
        let mut r = vec![1i64; rank];
        r[norm_axis(n, a, rank)?] = t;
        r
    } else if let Some(r) = run_time(cx, n, 1) {
        return cx.specialize(n, "data.tile", &[x], vec![], &[(r, "repeats", Ints)], 1);
    } else {
        cx.const_i64s(n.input(1)?, "repeats")?
    };
    one(cx.e.op(
        "data.tile",
        &[x],
        vec![("repeats", Attribute::i64_array(&repeats))],
    )?)
}

/// Slice with symbolic starts or ends (step 1): a gather of an iota of
/// the indices along each axis.
fn symbolic_slice(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let mut x = n.input(0)?;
    let starts = cx.sym_dims(n.input(1)?, "starts")?;
    let ends = cx.sym_dims(n.input(2)?, "ends")?;
    let rank = cx.e.rank(x)?;
    let axes = match n.opt_input(3) {
        Some(a) => cx.const_i64s(a, "axes")?,
        None => (0..starts.len() as i64).collect(),
    };
    if let Some(st) = n.opt_input(4) {
        if cx.const_i64s(st, "steps")?.iter().any(|&s| s != 1) {
            return Err(unsupported(
                n,
                "with symbolic bounds and a step other than 1",
            ));
        }
    }
    if starts.len() != ends.len() || axes.len() != starts.len() {
        return Err(invalid(n, "starts, ends and axes differ in length"));
    }
    for ((&s, &e), &a) in starts.iter().zip(&ends).zip(&axes) {
        let a = norm_axis(n, a, rank)?;
        let d = cx.e.dims(x)?[a];
        // Negative static bounds count from the end; then clamp to [0, d].
        let norm = |v: Dim| match v.as_static() {
            Some(k) if k < 0 => d.add(Dim::Static(k)).max(Dim::Static(0)),
            _ => v.min(d),
        };
        let (s, e) = (norm(s), norm(e));
        let Some(s0) = s.as_static() else {
            return Err(unsupported(n, "with a symbolic start"));
        };
        let count = e.sub(s).max(Dim::Static(0));
        let idx = iota(cx, count, s0, 1)?;
        x = cx.e.op(
            "graph.gather",
            &[x, idx],
            vec![("axis", Attribute::i64(a as i64))],
        )?;
    }
    one(x)
}

/// Slice with some of starts, ends, axes, steps read at run time.
fn run_time_slice(cx: &mut Cx, n: &Node, x: ValueId) -> Res<Vec<ValueId>> {
    let mut attrs = vec![];
    let mut values = vec![];
    for (i, name) in [(1, "starts"), (2, "ends"), (3, "axes"), (4, "steps")] {
        let Some(v) = n.opt_input(i) else { continue };
        if run_time(cx, n, i).is_some() {
            values.push((v, name, Ints));
        } else {
            attrs.push((name, Attribute::i64_array(&cx.const_i64s(v, name)?)));
        }
    }
    cx.specialize(n, "data.slice", &[x], attrs, &values, 1)
}

pub fn slice(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    if n.opset >= 10
        && [1, 2]
            .iter()
            .any(|&i| n.opt_input(i).is_some_and(|v| cx.sym.contains_key(&v)))
    {
        return symbolic_slice(cx, n);
    }
    if n.opset >= 10 && (1..=4).any(|i| run_time(cx, n, i).is_some()) {
        return run_time_slice(cx, n, x);
    }
    let (starts, ends, axes, steps) = if n.opset >= 10 {
        let starts = cx.const_i64s(n.input(1)?, "starts")?;
        let ends = cx.const_i64s(n.input(2)?, "ends")?;
        let axes = match n.opt_input(3) {
            Some(a) => Some(cx.const_i64s(a, "axes")?),
            None => None,
        };
        let steps = match n.opt_input(4) {
            Some(s) => Some(cx.const_i64s(s, "steps")?),
            None => None,
        };
        (starts, ends, axes, steps)
    } else {
        (
            n.ints("starts").unwrap_or_default(),
            n.ints("ends").unwrap_or_default(),
            n.ints("axes"),
            None,
        )
    };
    let mut attrs = vec![
        ("starts", Attribute::i64_array(&starts)),
        ("ends", Attribute::i64_array(&ends)),
    ];
    if let Some(a) = &axes {
        attrs.push(("axes", Attribute::i64_array(a)));
    }
    if let Some(s) = &steps {
        attrs.push(("steps", Attribute::i64_array(s)));
    }
    one(cx.e.op("data.slice", &[x], attrs)?)
}

pub fn gather(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, i) = (n.input(0)?, n.input(1)?);
    one(cx.e.op(
        "graph.gather",
        &[x, i],
        vec![("axis", Attribute::i64(n.i("axis", 0)?))],
    )?)
}

pub fn gather_elements(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, i) = (n.input(0)?, n.input(1)?);
    one(cx.e.op(
        "graph.gather_elements",
        &[x, i],
        vec![("axis", Attribute::i64(n.i("axis", 0)?))],
    )?)
}

pub fn scatter_elements(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, i, u) = (n.input(0)?, n.input(1)?, n.input(2)?);
    one(cx.e.op(
        "graph.scatter_elements",
        &[x, i, u],
        vec![
            ("axis", Attribute::i64(n.i("axis", 0)?)),
            ("reduction", Attribute::string(&n.s("reduction", "none")?)),
        ],
    )?)
}

pub fn compress(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let c = n.input(1)?;
    if !cx.is_const(c) {
        // The positions picked are known at run time: NonZero of the
        // condition (a size symbol), gathered along the axis.
        let (src, axis) = match n.opt_i("axis")? {
            Some(a) => (x, a),
            None => (super::reshape(cx, x, &[-1])?, 0),
        };
        let out = n.output_names.first().map_or("compress", String::as_str);
        let nz = nonzero_op(cx, n, c, &format!("{out}_count"), "condition")?;
        let idx = cx.e.op(
            "data.squeeze",
            &[nz],
            vec![("axes", Attribute::i64_array(&[0]))],
        )?;
        return one(cx.e.op(
            "graph.gather",
            &[src, idx],
            vec![("axis", Attribute::i64(axis))],
        )?);
    }
    let cond = cx.const_tensor(c, "condition")?;
    let picked: Vec<i64> = (0..cond.len())
        .filter(|&i| cond.get_f(i) != 0.0)
        .map(|i| i as i64)
        .collect();
    let (src, axis) = match n.opt_i("axis")? {
        Some(a) => (x, a),
        None => (super::reshape(cx, x, &[-1])?, 0),
    };
    let idx = cx.e.i64_vector(&picked)?;
    one(cx.e.op(
        "graph.gather",
        &[src, idx],
        vec![("axis", Attribute::i64(axis))],
    )?)
}

pub fn pad(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let rank = cx.e.rank(x)?;
    let run_time_pads = n.opset >= 11 && (1..4).any(|i| run_time(cx, n, i).is_some());
    if run_time_pads {
        return run_time_pad(cx, n, x);
    }
    let (mut pads, value, axes) = if n.opset >= 11 {
        let pads = cx.const_i64s(n.input(1)?, "pads")?;
        let value = match n.opt_input(2) {
            Some(v) => cx
                .const_f64s(v, "constant_value")?
                .first()
                .copied()
                .unwrap_or(0.0),
            None => 0.0,
        };
        let axes = match n.opt_input(3) {
            Some(a) => Some(cx.const_i64s(a, "axes")?),
            None => None,
        };
        (pads, value, axes)
    } else {
        // Pad-1 called the pads `paddings`.
        (
            n.ints("pads")
                .or_else(|| n.ints("paddings"))
                .unwrap_or_default(),
            n.f("value", 0.0)? as f64,
            None,
        )
    };
    if let Some(axes) = axes {
        if pads.len() != 2 * axes.len() {
            return Err(invalid(n, "pads must have two entries per axis"));
        }
        let mut full = vec![0i64; 2 * rank];
        for (k, &a) in axes.iter().enumerate() {
            let a = norm_axis(n, a, rank)?;
            full[a] = pads[k];
            full[rank + a] = pads[axes.len() + k];
        }
        pads = full;
    }
    let mode = n.s("mode", "constant")?;
    one(cx.e.op(
        "graph.pad",
        &[x],
        vec![
            ("pads", Attribute::i64_array(&pads)),
            ("mode", Attribute::string(&mode)),
            ("value", Attribute::f64(value)),
        ],
    )?)
}

/// Pad with its pads, constant value or axes read at run time (the
/// concrete `graph.pad` spreads `pads` over `axes` itself).
fn run_time_pad(cx: &mut Cx, n: &Node, x: ValueId) -> Res<Vec<ValueId>> {
    let mut attrs = vec![("mode", Attribute::string(&n.s("mode", "constant")?))];
    let mut values = vec![];
    let pads = n.input(1)?;
    if run_time(cx, n, 1).is_some() {
        values.push((pads, "pads", Ints));
    } else {
        attrs.push(("pads", Attribute::i64_array(&cx.const_i64s(pads, "pads")?)));
    }
    if let Some(v) = n.opt_input(2) {
        if run_time(cx, n, 2).is_some() {
            values.push((v, "value", Float));
        } else {
            let c = cx.const_f64s(v, "constant_value")?;
            attrs.push(("value", Attribute::f64(c.first().copied().unwrap_or(0.0))));
        }
    }
    if let Some(a) = n.opt_input(3) {
        if run_time(cx, n, 3).is_some() {
            values.push((a, "axes", Ints));
        } else {
            attrs.push(("axes", Attribute::i64_array(&cx.const_i64s(a, "axes")?)));
        }
    }
    cx.specialize(n, "graph.pad", &[x], attrs, &values, 1)
}

pub fn top_k(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    // A K computed from dims (tracked symbolically, not static) is read at
    // run time like one computed from values.
    let computed = n.opt_input(1).filter(|k| cx.sym.contains_key(k));
    if let Some(k) = run_time(cx, n, 1).or(computed).filter(|_| n.opset >= 10) {
        let attrs = vec![
            ("axis", Attribute::i64(n.i("axis", -1)?)),
            ("largest", Attribute::i64(n.i("largest", 1)?)),
            ("sorted", Attribute::i64(n.i("sorted", 1)?)),
        ];
        return cx.specialize(n, "graph.topk", &[x], attrs, &[(k, "k", Int)], 2);
    }
    let k = if n.opset >= 10 {
        cx.const_i64s(n.input(1)?, "K")?
            .first()
            .copied()
            .ok_or_else(|| invalid(n, "K is empty"))?
    } else {
        n.i("k", 0)?
    };
    Ok(cx.e.op_multi(
        "graph.topk",
        &[x],
        vec![
            ("k", Attribute::i64(k)),
            ("axis", Attribute::i64(n.i("axis", -1)?)),
            ("largest", Attribute::i64(n.i("largest", 1)?)),
            ("sorted", Attribute::i64(n.i("sorted", 1)?)),
        ],
        None,
    )?)
}

pub fn one_hot(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    if run_time(cx, n, 1).is_some() || cx.sym.contains_key(&n.input(1)?) {
        return run_time_one_hot(cx, n);
    }
    let (idx, values) = (n.input(0)?, n.input(2)?);
    let depth = cx.const_f64s(n.input(1)?, "depth")?;
    let depth = *depth.first().ok_or_else(|| invalid(n, "depth is empty"))? as i64;
    if depth < 1 {
        return Err(invalid(n, format!("depth must be at least 1, got {depth}")));
    }
    let rank = cx.e.rank(idx)?;
    let axis = norm_axis(n, n.i("axis", -1)?, rank + 1)?;
    let d = cx.e.scalar(DType::I64, depth as f64)?;
    let mut ishape = vec![1usize; rank + 1];
    ishape[axis] = depth.max(0) as usize;
    let iota =
        cx.e.constant(&Tensor::from_i64(ishape, DType::I64, (0..depth).collect()))?;
    select_one_hot(cx, idx, d, axis, iota, values)
}

/// OneHot whose depth is read at run time: the positions `0..depth` are a
/// run-time `graph.range` (length: a value symbol), unsqueezed to the
/// output's rank and compared with the (wrapped) indices.
fn run_time_one_hot(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (idx, depth, values) = (n.input(0)?, n.input(1)?, n.input(2)?);
    let rank = cx.e.rank(idx)?;
    let axis = norm_axis(n, n.i("axis", -1)?, rank + 1)?;
    let base = n.output_names.first().map_or("onehot", String::as_str);
    let iota = run_time_iota(cx, n, depth, &format!("{base}_depth"))?;
    let d = cast(cx, depth, DType::I64)?;
    let d = super::reshape(cx, d, &[])?;
    let others: Vec<i64> = (0..=rank as i64).filter(|&a| a != axis as i64).collect();
    let iota = super::unsqueeze(cx, iota, &others)?;
    select_one_hot(cx, idx, d, axis, iota, values)
}

/// OneHot's result from its positions `iota` (`0..depth` along `axis`, 1
/// elsewhere): the indices, negative ones counted from the end (plus the
/// i64 scalar `depth`), unsqueezed at `axis` and compared with `iota`, pick
/// `values[1]` where they hit and `values[0]` elsewhere.
fn select_one_hot(
    cx: &mut Cx,
    idx: ValueId,
    depth: ValueId,
    axis: usize,
    iota: ValueId,
    values: ValueId,
) -> Res<Vec<ValueId>> {
    let i = cast(cx, idx, DType::I64)?;
    let zero = cx.e.scalar(DType::I64, 0.0)?;
    let neg = op2(cx, "graph.less", i, zero)?;
    let wrapped = op2(cx, "graph.add", i, depth)?;
    let i = cx.e.op("graph.where", &[neg, wrapped, i], vec![])?;
    let i = super::unsqueeze(cx, i, &[axis as i64])?;
    let hit = op2(cx, "graph.equal", i, iota)?;
    let i0 = cx.e.scalar(DType::I64, 0.0)?;
    let i1 = cx.e.scalar(DType::I64, 1.0)?;
    let off = cx.e.op(
        "graph.gather",
        &[values, i0],
        vec![("axis", Attribute::i64(0))],
    )?;
    let on = cx.e.op(
        "graph.gather",
        &[values, i1],
        vec![("axis", Attribute::i64(0))],
    )?;
    one(cx.e.op("graph.where", &[hit, on, off], vec![])?)
}

pub fn trilu(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let k = match n.opt_input(1) {
        Some(k) if run_time(cx, n, 1).is_none() => {
            cx.const_i64s(k, "k")?.first().copied().unwrap_or(0)
        }
        _ => 0,
    };
    let upper = n.i("upper", 1)? != 0;
    let dims = cx.e.dims(x)?;
    if dims.len() < 2 {
        return Err(invalid(n, "input must have rank >= 2"));
    }
    let (r, c) = match (
        dims[dims.len() - 2].as_static(),
        dims[dims.len() - 1].as_static(),
    ) {
        (Some(r), Some(c)) => (r, c),
        _ => return Err(unsupported(n, "with dynamic matrix dims")),
    };
    if let Some(kv) = n.opt_input(1).filter(|_| run_time(cx, n, 1).is_some()) {
        // k known at run time: compare the constant (column - row) with it.
        let diff: Vec<i64> = (0..r).flat_map(|i| (0..c).map(move |j| j - i)).collect();
        let d = cx.e.constant(&Tensor::from_i64(
            vec![r as usize, c as usize],
            DType::I64,
            diff,
        ))?;
        let k64 = cast(cx, kv, DType::I64)?;
        let k0 = super::reshape(cx, k64, &[])?;
        let cmp = if upper {
            "graph.greater_equal"
        } else {
            "graph.less_equal"
        };
        let m = op2(cx, cmp, d, k0)?;
        let z = super::scalar_like(cx, x, 0.0)?;
        return one(cx.e.op("graph.where", &[m, x, z], vec![])?);
    }
    let mask: Vec<i64> = (0..r)
        .flat_map(|i| {
            (0..c).map(move |j| {
                let keep = if upper { j - i >= k } else { j - i <= k };
                keep as i64
            })
        })
        .collect();
    let m = cx.e.constant(&Tensor::from_i64(
        vec![r as usize, c as usize],
        DType::I1,
        mask,
    ))?;
    let z = super::scalar_like(cx, x, 0.0)?;
    one(cx.e.op("graph.where", &[m, x, z], vec![])?)
}

pub fn depth_to_space(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let s = static_shape(cx, n, x, "an input")?;
    let b = n.i("blocksize", 0)?;
    // Checked: a hostile blocksize of 2^40 squared to 0 and divided by it.
    let sizes = match (b > 0, s.as_slice()) {
        (true, &[nn, c, h, w]) => b
            .checked_mul(b)
            .filter(|&bb| c % bb == 0)
            .and_then(|bb| Some((nn, c / bb, h.checked_mul(b)?, w.checked_mul(b)?))),
        _ => None,
    };
    let Some((nn, depth, oh, ow)) = sizes else {
        return Err(invalid(
            n,
            "needs a 4-D input whose channels divide by blocksize²",
        ));
    };
    let (h, w) = (s[2], s[3]);
    let (tmp, perm) = if n.s("mode", "DCR")? == "CRD" {
        (vec![nn, depth, b, b, h, w], vec![0, 1, 4, 2, 5, 3])
    } else {
        (vec![nn, b, b, depth, h, w], vec![0, 3, 4, 1, 5, 2])
    };
    let r = super::reshape(cx, x, &tmp)?;
    let t = super::transpose(cx, r, &perm)?;
    one(super::reshape(cx, t, &[nn, depth, oh, ow])?)
}

pub fn space_to_depth(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let s = static_shape(cx, n, x, "an input")?;
    let b = n.i("blocksize", 0)?;
    // The depth checked: blocksize² times the channels may overflow.
    let depth = match (b > 0, s.as_slice()) {
        (true, &[_, c, h, w]) if h % b == 0 && w % b == 0 => {
            b.checked_mul(b).and_then(|bb| bb.checked_mul(c))
        }
        _ => None,
    };
    let Some(depth) = depth else {
        return Err(invalid(
            n,
            "needs a 4-D input whose H and W divide by blocksize",
        ));
    };
    let (nn, c, h, w) = (s[0], s[1], s[2], s[3]);
    let r = super::reshape(cx, x, &[nn, c, h / b, b, w / b, b])?;
    let perm: &[i64] = if n.s("mode", "DCR")? == "CRD" {
        &[0, 1, 3, 5, 2, 4]
    } else {
        &[0, 3, 5, 1, 2, 4]
    };
    let t = super::transpose(cx, r, perm)?;
    one(super::reshape(cx, t, &[nn, depth, h / b, w / b])?)
}

#[allow(dead_code)]
fn identity(cx: &mut Cx, v: ValueId) -> Res<ValueId> {
    op1(cx, "data.identity", v)
}

pub fn grid_sample(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, grid) = (n.input(0)?, n.input(1)?);
    // Opsets 16-19 named the 2-D modes bilinear and bicubic.
    let mode = match n.s("mode", "linear")?.as_str() {
        "bilinear" => "linear".to_string(),
        "bicubic" => "cubic".to_string(),
        m => m.to_string(),
    };
    one(cx.e.op(
        "graph.grid_sample",
        &[x, grid],
        vec![
            ("mode", Attribute::string(&mode)),
            (
                "padding_mode",
                Attribute::string(&n.s("padding_mode", "zeros")?),
            ),
            ("align_corners", Attribute::i64(n.i("align_corners", 0)?)),
        ],
    )?)
}
