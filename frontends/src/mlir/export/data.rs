//! `data` dialect ops → `tosa.const`, `tosa.reshape`, `tosa.transpose`,
//! `tosa.concat`, `tosa.slice`, `tosa.tile`.

use super::nn::tile_to;
use super::{norm_axis, Ex, Res, T};
use ge_ir::OpId;

type Out<'c, 'a> = Res<Vec<T<'c, 'a>>>;

pub fn constant<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let a = e
        .body
        .op(op)
        .attr("value")
        .ok_or("constant without a value")?;
    let t = ge_dialects::data::constant::elements_tensor(a, Some(e.module))?;
    Ok(vec![e.constant(&t)?])
}

pub fn identity<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    Ok(vec![e.input(op, 0)?])
}

/// reshape, squeeze, unsqueeze: a `tosa.reshape` to the result shape.
pub fn reshape<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let (s, _) = e.out(op, 0)?;
    Ok(vec![e.reshape(&x, &s)?])
}

pub fn transpose<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let perm = e
        .attr_ints(op, "perm")
        .unwrap_or_else(|| (0..x.rank() as i64).rev().collect());
    let y = e.op(
        "tosa.transpose",
        &[&x],
        &[("perms", e.i32s(&perm))],
        &perm
            .iter()
            .map(|&p| x.shape[p as usize])
            .collect::<Vec<_>>(),
        x.dt,
    )?;
    Ok(vec![y])
}

pub fn concat<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let (s, dt) = e.out(op, 0)?;
    let axis = norm_axis(e.attr_i64(op, "axis", 0), s.len())?;
    let xs: Vec<T> = (0..e.num_inputs(op))
        .map(|i| e.input(op, i))
        .collect::<Res<_>>()?;
    let refs: Vec<&T> = xs.iter().collect();
    Ok(vec![e.op(
        "tosa.concat",
        &refs,
        &[("axis", e.i32_attr(axis as i64))],
        &s,
        dt,
    )?])
}

/// `tosa.slice` of `size` at `start`.
pub fn slice_at<'c, 'a>(
    e: &Ex<'c, 'a>,
    x: &T<'c, 'a>,
    start: &[i64],
    size: &[i64],
) -> Res<T<'c, 'a>> {
    let st = e.shape_const(start)?;
    let sz = e.shape_const(size)?;
    e.op_values("tosa.slice", &[x.v, st, sz], &[], size, x.dt)
}

/// ONNX Slice with unit steps (starts clamped as ONNX does).
pub fn slice<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let (s, _) = e.out(op, 0)?;
    let starts = e.attr_ints(op, "starts").ok_or("slice has no starts")?;
    let r = x.rank();
    let axes = e
        .attr_ints(op, "axes")
        .unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = e.attr_ints(op, "steps").unwrap_or(vec![1; starts.len()]);
    if steps.iter().any(|&k| k != 1) {
        return Err("a slice with steps other than 1 has no TOSA equivalent".into());
    }
    let mut begin = vec![0i64; r];
    for (k, &a) in axes.iter().enumerate() {
        let a = norm_axis(a, r)?;
        let dim = x.shape[a];
        if dim < 0 {
            return Err("a slice of a dim that is not static".into());
        }
        let mut b = starts[k];
        if b < 0 {
            b += dim;
        }
        begin[a] = b.clamp(0, dim);
    }
    Ok(vec![slice_at(e, &x, &begin, &s)?])
}

/// One `tosa.slice` per part.
pub fn split<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let axis = norm_axis(e.attr_i64(op, "axis", 0), x.rank())?;
    let mut out = vec![];
    let mut off = 0;
    for i in 0..e.body.op(op).results().len() {
        let (s, _) = e.out(op, i)?;
        let mut begin = vec![0i64; x.rank()];
        begin[axis] = off;
        off += s[axis];
        out.push(slice_at(e, &x, &begin, &s)?);
    }
    Ok(out)
}

/// broadcast_to / expand: reshape to the result rank, then `tosa.tile`.
pub fn broadcast<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let (s, _) = e.out(op, 0)?;
    let x = e.to_rank(&x, s.len())?;
    Ok(vec![tile_to(e, &x, &s)?])
}

pub fn tile<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Out<'c, 'a> {
    let x = e.input(op, 0)?;
    let (s, dt) = e.out(op, 0)?;
    let reps = e.attr_ints(op, "repeats").ok_or("tile has no repeats")?;
    let m = e.shape_const(&reps)?;
    Ok(vec![e.op_values("tosa.tile", &[x.v, m], &[], &s, dt)?])
}
