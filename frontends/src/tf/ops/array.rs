//! Constants, casts, shapes, slicing, indexing and rearranging.

use super::{invalid, norm_axis, one, unsupported, Res, TfCx, TfNode};
use crate::error::ImportError;
use crate::proto::tensorflow::attr_value;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim, Type};

pub fn konst(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let t = match n.attr("value") {
        Some(attr_value::Value::Tensor(t)) => t,
        _ => return Err(ImportError::invalid("Const has no tensor 'value'")),
    };
    one(cx.e.constant_attr(super::super::tensor_attr(t)?)?)
}

pub fn cast(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let to = n.dtype("DstT")?;
    one(cx.op(
        "graph.cast",
        &[x],
        vec![("to", Attribute::ty(Type::scalar(to)))],
    )?)
}

/// The default value is what runs when nothing is fed.
pub fn placeholder_with_default(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    one(cx.op1("data.identity", n.input(0)?)?)
}

fn concat(cx: &mut TfCx, n: &TfNode, axis: ValueId, values: &[ValueId]) -> Res<Vec<ValueId>> {
    let axis = cx.const_i64s(axis, "Concat axis")?;
    match values {
        [] => return Err(invalid(n, "no values to concatenate (only the axis)")),
        [v] => return one(cx.op1("data.identity", *v)?),
        _ => {}
    }
    one(cx.op(
        "data.concat",
        values,
        vec![("axis", Attribute::i64(axis.first().copied().unwrap_or(0)))],
    )?)
}

pub fn concat_v2(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (axis, values) = n
        .inputs
        .split_last()
        .ok_or_else(|| ImportError::invalid("ConcatV2 needs inputs"))?;
    concat(cx, n, *axis, values)
}

pub fn concat_v1(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (axis, values) = n
        .inputs
        .split_first()
        .ok_or_else(|| ImportError::invalid("Concat needs inputs"))?;
    concat(cx, n, *axis, values)
}

pub fn reshape(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let shape = cx.const_i64s(n.input(1)?, "Reshape shape")?;
    one(cx.reshape(x, &shape)?)
}

pub fn squeeze(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let attrs = match n.ints("squeeze_dims") {
        Some(d) if !d.is_empty() => vec![("axes", Attribute::i64_array(&d))],
        _ => vec![],
    };
    one(cx.op("data.squeeze", &[x], attrs)?)
}

pub fn expand_dims(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let axis = cx.const_i64s(n.input(1)?, "ExpandDims axis")?;
    let a = axis.first().copied().unwrap_or(0);
    // TensorFlow counts a negative axis in the *output* rank.
    let r = cx.e.rank(x)? as i64;
    let a = if a < 0 { a + r + 1 } else { a };
    one(cx.unsqueeze(x, &[a])?)
}

pub fn transpose(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let perm = cx.const_i64s(n.input(1)?, "Transpose perm")?;
    one(cx.transpose(x, &perm)?)
}

/// TensorFlow's [[begin, end], ...] paddings as graph.pad's [begins..., ends...].
fn pads_of(cx: &TfCx, n: &TfNode) -> Res<Vec<i64>> {
    let p = cx.const_i64s(n.input(1)?, "paddings")?;
    let r = p.len() / 2;
    if p.len() != 2 * cx.e.rank(n.input(0)?)? {
        return Err(invalid(n, "paddings must be [rank, 2]"));
    }
    let mut pads: Vec<i64> = (0..r).map(|i| p[2 * i]).collect();
    pads.extend((0..r).map(|i| p[2 * i + 1]));
    Ok(pads)
}

pub fn pad(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let pads = pads_of(cx, n)?;
    let value = match n.inputs.get(2) {
        Some(&v) => {
            cx.e.const_value(v)
                .map(|t| t.get_f(0))
                .ok_or_else(|| ImportError::unsupported("PadV2 with a computed value"))?
        }
        None => 0.0,
    };
    one(cx.op(
        "graph.pad",
        &[x],
        vec![
            ("pads", Attribute::i64_array(&pads)),
            ("value", Attribute::f64(value)),
        ],
    )?)
}

/// `data.slice` of one axis: `[start, end)` by `step`.
fn slice_axis(
    cx: &mut TfCx,
    x: ValueId,
    axis: i64,
    start: i64,
    end: i64,
    step: i64,
) -> Res<ValueId> {
    cx.op(
        "data.slice",
        &[x],
        vec![
            ("starts", Attribute::i64_array(&[start])),
            ("ends", Attribute::i64_array(&[end])),
            ("axes", Attribute::i64_array(&[axis])),
            ("steps", Attribute::i64_array(&[step])),
        ],
    )
}

/// MirrorPad: REFLECT is graph.pad's reflect mode; SYMMETRIC (the edge
/// repeated) is composed per axis as concat(reverse(x[:b]), x, reverse(x[-e:])).
pub fn mirror_pad(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let pads = pads_of(cx, n)?;
    match n.s("mode", "REFLECT").as_str() {
        "REFLECT" => one(cx.op(
            "graph.pad",
            &[x],
            vec![
                ("pads", Attribute::i64_array(&pads)),
                ("mode", Attribute::string("reflect")),
            ],
        )?),
        "SYMMETRIC" => {
            let shape = cx.shape_of(n, x)?;
            let r = shape.len();
            let mut y = x;
            for a in 0..r {
                let (b, e) = (pads[a], pads[r + a]);
                let d = shape[a];
                if b < 0 || e < 0 || b > d || e > d {
                    return Err(invalid(n, "SYMMETRIC paddings must lie in [0, dim]"));
                }
                if b == 0 && e == 0 {
                    continue;
                }
                let mut parts = vec![];
                if b > 0 {
                    parts.push(slice_axis(cx, y, a as i64, b - 1, i64::MIN, -1)?);
                }
                parts.push(y);
                if e > 0 {
                    parts.push(slice_axis(cx, y, a as i64, d - 1, d - 1 - e, -1)?);
                }
                y = cx.op(
                    "data.concat",
                    &parts,
                    vec![("axis", Attribute::i64(a as i64))],
                )?;
            }
            one(y)
        }
        m => Err(unsupported(n, format!("mode {m}"))),
    }
}

pub fn reverse_v2(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let r = cx.e.rank(x)?;
    let axes = cx.const_i64s(n.input(1)?, "ReverseV2 axis")?;
    if axes.is_empty() {
        return one(cx.op1("data.identity", x)?);
    }
    let axes: Vec<i64> = axes
        .iter()
        .map(|&a| norm_axis(n, a, r).map(|a| a as i64))
        .collect::<Res<_>>()?;
    let k = axes.len();
    one(cx.op(
        "data.slice",
        &[x],
        vec![
            ("starts", Attribute::i64_array(&vec![-1; k])),
            ("ends", Attribute::i64_array(&vec![i64::MIN; k])),
            ("axes", Attribute::i64_array(&axes)),
            ("steps", Attribute::i64_array(&vec![-1; k])),
        ],
    )?)
}

/// Slice(x, begin, size): size -1 takes the rest.
pub fn slice(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let begin = cx.const_i64s(n.input(1)?, "Slice begin")?;
    let size = cx.const_i64s(n.input(2)?, "Slice size")?;
    if begin.len() != size.len() || begin.len() != cx.e.rank(x)? {
        return Err(invalid(n, "begin and size must have one value per dim"));
    }
    let ends: Vec<i64> = begin
        .iter()
        .zip(&size)
        .map(|(&b, &s)| if s < 0 { i64::MAX } else { b + s })
        .collect();
    let axes: Vec<i64> = (0..begin.len() as i64).collect();
    one(cx.op(
        "data.slice",
        &[x],
        vec![
            ("starts", Attribute::i64_array(&begin)),
            ("ends", Attribute::i64_array(&ends)),
            ("axes", Attribute::i64_array(&axes)),
        ],
    )?)
}

/// What each entry of a StridedSlice spec does to the output.
enum Out {
    /// Input dim `d` (sliced or whole) is kept.
    Keep(usize),
    /// A new size-1 dim.
    NewAxis,
}

/// StridedSlice with every mask, as `data.slice` (starts/ends/steps on the
/// sliced dims; masked bounds become the open ends, i64::MAX / i64::MIN, so
/// negative strides run to the start) followed by `data.reshape` for the
/// new axes and the shrunk dims. The spec is TensorFlow's: entry i is the
/// ellipsis (bit i of ellipsis_mask: the dims not named by other entries), a
/// new axis (new_axis_mask), an index (shrink_axis_mask: dim dropped), or a
/// range; dims after the last entry are kept whole.
pub fn strided_slice(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let begin = cx.const_i64s(n.input(1)?, "StridedSlice begin")?;
    let end = cx.const_i64s(n.input(2)?, "StridedSlice end")?;
    let strides = cx.const_i64s(n.input(3)?, "StridedSlice strides")?;
    if end.len() != begin.len() || strides.len() != begin.len() {
        return Err(invalid(
            n,
            "begin, end and strides must have the same length",
        ));
    }
    let dims = cx.e.dims(x)?;
    let plan = SlicePlan::of(n, [&begin, &end, &strides], &dims)?;
    let y = if plan.axes.is_empty() {
        x
    } else {
        cx.op(
            "data.slice",
            &[x],
            vec![
                ("starts", Attribute::i64_array(&plan.starts)),
                ("ends", Attribute::i64_array(&plan.ends)),
                ("axes", Attribute::i64_array(&plan.axes)),
                ("steps", Attribute::i64_array(&plan.steps)),
            ],
        )?
    };
    let ydims = cx.e.dims(y)?;
    let reshaped = plan.outs.len() != dims.len()
        || plan
            .outs
            .iter()
            .enumerate()
            .any(|(i, o)| !matches!(o, Out::Keep(j) if *j == i));
    if !reshaped {
        if y == x {
            return one(cx.op1("data.identity", x)?);
        }
        return one(y);
    }
    let mut shape = vec![];
    let mut unknown = 0;
    for o in &plan.outs {
        match o {
            Out::NewAxis => shape.push(1),
            Out::Keep(j) => match ydims[*j].as_static() {
                Some(v) => shape.push(v),
                None => {
                    unknown += 1;
                    shape.push(-1)
                }
            },
        }
    }
    if unknown > 1 {
        return Err(unsupported(
            n,
            "with new or shrunk axes on several dynamic dims",
        ));
    }
    one(cx.reshape(y, &shape)?)
}

/// A StridedSlice spec resolved against the input's dims: the `data.slice`
/// attributes of the sliced dims, and what each output dim is.
struct SlicePlan {
    starts: Vec<i64>,
    ends: Vec<i64>,
    axes: Vec<i64>,
    steps: Vec<i64>,
    outs: Vec<Out>,
}

impl SlicePlan {
    fn of(n: &TfNode, [begin, end, strides]: [&[i64]; 3], dims: &[Dim]) -> Res<SlicePlan> {
        let mask = |name: &str| -> i64 {
            match n.attr(name) {
                Some(attr_value::Value::I(v)) => *v,
                _ => 0,
            }
        };
        let (bm, em, elm, nam, sam) = (
            mask("begin_mask"),
            mask("end_mask"),
            mask("ellipsis_mask"),
            mask("new_axis_mask"),
            mask("shrink_axis_mask"),
        );
        let bit = |m: i64, i: usize| i < 63 && (m >> i) & 1 == 1;
        let k = begin.len();
        let rank = dims.len();
        if (0..k).filter(|&i| bit(elm, i)).count() > 1 {
            return Err(invalid(n, "more than one ellipsis"));
        }
        // Entries that consume an input dim (not the ellipsis, not new axes).
        let real = (0..k).filter(|&i| !bit(elm, i) && !bit(nam, i)).count();
        if real > rank {
            return Err(invalid(
                n,
                format!("{real} indices for a rank-{rank} input"),
            ));
        }
        let mut plan = SlicePlan {
            starts: vec![],
            ends: vec![],
            axes: vec![],
            steps: vec![],
            outs: vec![],
        };
        let mut d = 0usize;
        for i in 0..k {
            if bit(elm, i) {
                for _ in 0..rank - real {
                    plan.outs.push(Out::Keep(d));
                    d += 1;
                }
                continue;
            }
            if bit(nam, i) {
                plan.outs.push(Out::NewAxis);
                continue;
            }
            let s = strides[i];
            if s == 0 {
                return Err(invalid(n, "a stride is 0"));
            }
            if bit(sam, i) {
                let b = shrink_index(n, begin[i], d, dims[d].as_static())?;
                plan.slice(d, b, b + 1, 1);
                d += 1;
                continue;
            }
            let b = match (bit(bm, i), s > 0) {
                (true, true) => 0,
                (true, false) => i64::MAX,
                (false, _) => begin[i],
            };
            let e = match (bit(em, i), s > 0) {
                (true, true) => i64::MAX,
                (true, false) => i64::MIN,
                (false, _) => end[i],
            };
            if !(b == 0 && e == i64::MAX && s == 1) {
                plan.slice(d, b, e, s);
            }
            plan.outs.push(Out::Keep(d));
            d += 1;
        }
        while d < rank {
            plan.outs.push(Out::Keep(d));
            d += 1;
        }
        Ok(plan)
    }

    fn slice(&mut self, axis: usize, start: i64, end: i64, step: i64) {
        self.starts.push(start);
        self.ends.push(end);
        self.axes.push(axis as i64);
        self.steps.push(step);
    }
}

/// The index of a shrunk dim `d` (of `size`, when static), negative ones
/// counted from the end, checked to be in range.
fn shrink_index(n: &TfNode, index: i64, d: usize, size: Option<i64>) -> Res<i64> {
    let b = match (index < 0, size) {
        (true, Some(sz)) => index + sz,
        (true, None) => return Err(unsupported(n, "with a negative index on a dynamic dim")),
        _ => index,
    };
    if let Some(sz) = size {
        if b < 0 || b >= sz {
            return Err(invalid(
                n,
                format!("index {index} is out of range for dim {d} of size {sz}"),
            ));
        }
    }
    Ok(b)
}

/// GatherV2(params, indices, axis) with `batch_dims`: for batch_dims b > 0
/// (and axis = b) the b leading dims are flattened into the gathered one and
/// the indices offset by `batch_index · params_dim`, one `graph.gather`.
fn gather(
    cx: &mut TfCx,
    n: &TfNode,
    p: ValueId,
    idx: ValueId,
    axis: i64,
    batch_dims: i64,
) -> Res<Vec<ValueId>> {
    let pr = cx.e.rank(p)?;
    let a = norm_axis(n, axis, pr)? as i64;
    let ir = cx.e.rank(idx)? as i64;
    let bd = if batch_dims < 0 {
        batch_dims + ir
    } else {
        batch_dims
    };
    if bd == 0 {
        return one(cx.op("graph.gather", &[p, idx], vec![("axis", Attribute::i64(a))])?);
    }
    if bd != a || bd > ir {
        return Err(unsupported(
            n,
            format!("with batch_dims {batch_dims} and axis {axis}"),
        ));
    }
    let ps = cx.shape_of(n, p)?;
    let is = cx.shape_of(n, idx)?;
    let bdu = bd as usize;
    if ps[..bdu] != is[..bdu] {
        return Err(invalid(n, "params and indices differ in the batch dims"));
    }
    let batch: i64 = ps[..bdu].iter().product();
    let pa = ps[bdu];
    let mut flat_p = vec![batch * pa];
    flat_p.extend(&ps[bdu + 1..]);
    let fp = cx.reshape(p, &flat_p)?;
    let it = cx.e.dtype(idx)?;
    let idx = cx.cast(idx, DType::I64)?;
    // Negative indices count from the end of their own slice.
    let z = cx.e.scalar(DType::I64, 0.0)?;
    let neg = cx.op2("graph.less", idx, z)?;
    let pav = cx.e.scalar(DType::I64, pa as f64)?;
    let wrapped = cx.op2("graph.add", idx, pav)?;
    let idx = cx.op("graph.where", &[neg, wrapped, idx], vec![])?;
    let mut oshape: Vec<usize> = is[..bdu].iter().map(|&v| v as usize).collect();
    oshape.extend(std::iter::repeat_n(1, is.len() - bdu));
    let offs = Tensor::from_i64(oshape, DType::I64, (0..batch).map(|b| b * pa).collect());
    let offs = cx.e.constant(&offs)?;
    let fi = cx.op2("graph.add", idx, offs)?;
    let _ = it;
    one(cx.op("graph.gather", &[fp, fi], vec![("axis", Attribute::i64(0))])?)
}

fn batch_dims(n: &TfNode) -> i64 {
    match n.attr("batch_dims") {
        Some(attr_value::Value::I(v)) => *v,
        _ => 0,
    }
}

pub fn gather_v2(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (p, idx) = (n.input(0)?, n.input(1)?);
    let axis = cx
        .const_i64s(n.input(2)?, "GatherV2 axis")?
        .first()
        .copied()
        .unwrap_or(0);
    gather(cx, n, p, idx, axis, batch_dims(n))
}

pub fn gather_v1(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    gather(cx, n, n.input(0)?, n.input(1)?, 0, 0)
}

/// ResourceGather: the variable (already read as a constant) gathered on axis 0.
pub fn resource_gather(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    gather(
        cx,
        n,
        n.input(0)?,
        n.input(1)?,
        batch_dims(n),
        batch_dims(n),
    )
}

/// Select (v1): a vector condition selects whole rows.
pub fn select(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (c, a, b) = (n.input(0)?, n.input(1)?, n.input(2)?);
    let (rc, ra) = (cx.e.rank(c)?, cx.e.rank(a)?);
    let c = if rc == 1 && ra > 1 {
        let mut shape = vec![-1i64];
        shape.extend(std::iter::repeat_n(1, ra - 1));
        cx.reshape(c, &shape)?
    } else {
        c
    };
    one(cx.op("graph.where", &[c, a, b], vec![])?)
}

pub fn select_v2(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (c, a, b) = (n.input(0)?, n.input(1)?, n.input(2)?);
    one(cx.op("graph.where", &[c, a, b], vec![])?)
}

/// Range: evaluated at import (its bounds must be constants).
pub fn range(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let start = cx.const_f64s(n.input(0)?, "Range start")?;
    let limit = cx.const_f64s(n.input(1)?, "Range limit")?;
    let delta = cx.const_f64s(n.input(2)?, "Range delta")?;
    let (s, l, d) = match (start.first(), limit.first(), delta.first()) {
        (Some(&s), Some(&l), Some(&d)) => (s, l, d),
        _ => return Err(invalid(n, "start, limit and delta must be scalars")),
    };
    if d == 0.0 || !d.is_finite() || !s.is_finite() || !l.is_finite() {
        return Err(invalid(n, "delta must be finite and non-zero"));
    }
    let count = ((l - s) / d).ceil().max(0.0);
    if count > (1u64 << 26) as f64 {
        return Err(invalid(n, format!("{count} elements are too many")));
    }
    let count = count as usize;
    let dt = cx.e.dtype(n.input(0)?)?;
    let t = if dt.is_float() {
        Tensor::from_f64(
            vec![count],
            dt,
            (0..count).map(|i| s + i as f64 * d).collect(),
        )
    } else {
        let (s, d) = (s as i64, d as i64);
        Tensor::from_i64(
            vec![count],
            dt,
            (0..count as i64).map(|i| s + i * d).collect(),
        )
    };
    one(cx.e.constant(&t)?)
}

fn out_type(n: &TfNode) -> Res<DType> {
    match n.attr("out_type") {
        Some(_) => n.dtype("out_type"),
        None => Ok(DType::I32),
    }
}

/// Shape / Size / Rank of a statically shaped tensor: constants.
pub fn shape(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let s = cx.shape_of(n, n.input(0)?)?;
    one(cx
        .e
        .constant(&Tensor::from_i64(vec![s.len()], out_type(n)?, s))?)
}

pub fn size(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let s = cx.shape_of(n, n.input(0)?)?;
    one(cx.e.constant(&Tensor::from_i64(
        vec![],
        out_type(n)?,
        vec![s.iter().product()],
    ))?)
}

pub fn rank(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let r = cx.e.rank(n.input(0)?)? as i64;
    one(cx
        .e
        .constant(&Tensor::from_i64(vec![], DType::I32, vec![r]))?)
}

/// Fill(dims, value): the scalar broadcast to `dims`.
pub fn fill(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let dims = cx.const_i64s(n.input(0)?, "Fill dims")?;
    let v = n.input(1)?;
    let v = if cx.e.rank(v)? == 0 {
        v
    } else {
        cx.reshape(v, &[])?
    };
    ge_ir::budget::check(
        ge_ir::budget::bytes_of(dims.iter().map(|&d| d.max(0) as u64), 8),
        &"a Fill result",
    )
    .map_err(ImportError::invalid)?;
    one(cx.op(
        "data.broadcast_to",
        &[v],
        vec![("shape", Attribute::i64_array(&dims))],
    )?)
}

fn like(cx: &mut TfCx, n: &TfNode, x: f64) -> Res<Vec<ValueId>> {
    let v = n.input(0)?;
    let s = cx.shape_of(n, v)?;
    let dt = cx.e.dtype(v)?;
    one(cx.full(&s, dt, x)?)
}

pub fn zeros_like(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    like(cx, n, 0.0)
}

pub fn ones_like(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    like(cx, n, 1.0)
}

pub fn broadcast_to(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let shape = cx.const_i64s(n.input(1)?, "BroadcastTo shape")?;
    one(cx.op(
        "data.expand",
        &[x],
        vec![("shape", Attribute::i64_array(&shape))],
    )?)
}

pub fn tile(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let reps = cx.const_i64s(n.input(1)?, "Tile multiples")?;
    one(cx.op(
        "data.tile",
        &[x],
        vec![("repeats", Attribute::i64_array(&reps))],
    )?)
}

/// Pack: each value unsqueezed at `axis`, concatenated.
pub fn pack(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let r = cx.e.rank(n.input(0)?)?;
    let axis = match n.attr("axis") {
        Some(attr_value::Value::I(a)) => *a,
        _ => 0,
    };
    let a = norm_axis(n, axis, r + 1)? as i64;
    let mut parts = vec![];
    for &v in &n.inputs {
        parts.push(cx.unsqueeze(v, &[a])?);
    }
    if parts.len() == 1 {
        return one(parts[0]);
    }
    one(cx.op("data.concat", &parts, vec![("axis", Attribute::i64(a))])?)
}

/// Unpack: split into `num` pieces along `axis`, each squeezed.
pub fn unpack(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let r = cx.e.rank(x)?;
    let axis = match n.attr("axis") {
        Some(attr_value::Value::I(a)) => *a,
        _ => 0,
    };
    let a = norm_axis(n, axis, r)? as i64;
    let num = cx.e.dims(x)?[a as usize]
        .as_static()
        .ok_or_else(|| unsupported(n, "along a dynamic axis"))?;
    check_split_outputs(n, num)?;
    let parts = if num == 1 {
        vec![x]
    } else {
        cx.e.op_multi(
            "data.split",
            &[x],
            vec![
                ("axis", Attribute::i64(a)),
                ("num_outputs", Attribute::i64(num)),
            ],
            None,
        )?
    };
    parts
        .into_iter()
        .map(|p| cx.squeeze_axes(p, &[a]))
        .collect()
}

/// What one output of a split costs the importer before anything runs: its
/// size in the `split` attribute, its result value and the value the
/// evaluator binds to it (a lower bound; the budget check is about orders of
/// magnitude).
fn split_output_bytes() -> u64 {
    (std::mem::size_of::<i64>() + 2 * std::mem::size_of::<ValueId>() + std::mem::size_of::<Type>())
        as u64
}

/// Most outputs of one Split / Unpack.
const MAX_SPLIT_OUTPUTS: i64 = 1 << 16;

/// The number of outputs of a split comes from the file (`num_split`, or the
/// dim an Unpack splits, e.g. of a placeholder `[2^40, 0]` that holds no
/// data): the sizes and results it asks for are checked against the memory
/// budget before they are made (issue 18).
fn check_split_outputs(n: &TfNode, num: i64) -> Res<()> {
    // Each output also costs a value, a type and a buffer in every stage
    // after the import — far more than the bytes counted below (2^20 of them
    // took more than 8 GB): past a count no real model has, refused outright.
    if num > MAX_SPLIT_OUTPUTS {
        return Err(invalid(
            n,
            format!("splitting into {num} outputs: more than {MAX_SPLIT_OUTPUTS}"),
        ));
    }
    ge_ir::budget::check(
        ge_ir::budget::bytes_of([num.max(0) as u64], split_output_bytes()),
        &format_args!("splitting into {num} outputs"),
    )
    .map_err(|e| invalid(n, e))
}

fn split_parts(
    cx: &mut TfCx,
    n: &TfNode,
    x: ValueId,
    axis: i64,
    sizes: &[i64],
) -> Res<Vec<ValueId>> {
    let r = cx.e.rank(x)?;
    let a = norm_axis(n, axis, r)? as i64;
    if sizes.len() == 1 {
        return one(cx.op1("data.identity", x)?);
    }
    Ok(cx.e.op_multi(
        "data.split",
        &[x],
        vec![
            ("axis", Attribute::i64(a)),
            ("split", Attribute::i64_array(sizes)),
        ],
        None,
    )?)
}

/// Split(axis, x) into num_split equal parts.
pub fn split(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let axis = cx
        .const_i64s(n.input(0)?, "Split axis")?
        .first()
        .copied()
        .unwrap_or(0);
    let x = n.input(1)?;
    let num = match n.attr("num_split") {
        Some(attr_value::Value::I(v)) if *v >= 1 => *v,
        _ => return Err(invalid(n, "needs num_split >= 1")),
    };
    let r = cx.e.rank(x)?;
    let a = norm_axis(n, axis, r)?;
    let d = cx.e.dims(x)?[a]
        .as_static()
        .ok_or_else(|| unsupported(n, "along a dynamic axis"))?;
    if d % num != 0 {
        return Err(invalid(
            n,
            format!("dim {d} does not split into {num} equal parts"),
        ));
    }
    // A zero dim splits into any number of parts (issue 18).
    check_split_outputs(n, num)?;
    split_parts(cx, n, x, axis, &vec![d / num; num as usize])
}

/// SplitV(x, size_splits, axis): one size may be -1 (the rest).
pub fn split_v(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let mut sizes = cx.const_i64s(n.input(1)?, "SplitV size_splits")?;
    let axis = cx
        .const_i64s(n.input(2)?, "SplitV axis")?
        .first()
        .copied()
        .unwrap_or(0);
    let r = cx.e.rank(x)?;
    let a = norm_axis(n, axis, r)?;
    if let Some(k) = sizes.iter().position(|&s| s < 0) {
        let d = cx.e.dims(x)?[a]
            .as_static()
            .ok_or_else(|| unsupported(n, "with -1 along a dynamic axis"))?;
        let known: i64 = sizes.iter().filter(|&&s| s >= 0).sum();
        sizes[k] = d - known;
    }
    split_parts(cx, n, x, axis, &sizes)
}

/// OneHot(indices, depth, on, off): equal(indices, iota) selects on/off; a
/// negative or too large index gives a row of `off` (TensorFlow).
pub fn one_hot(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (idx, on, off) = (n.input(0)?, n.input(2)?, n.input(3)?);
    let depth = cx.const_i64s(n.input(1)?, "OneHot depth")?;
    let depth = *depth.first().ok_or_else(|| invalid(n, "depth is empty"))?;
    if depth < 0 {
        return Err(invalid(n, "depth is negative"));
    }
    let rank = cx.e.rank(idx)?;
    let axis = match n.attr("axis") {
        Some(attr_value::Value::I(a)) => *a,
        _ => -1,
    };
    let a = norm_axis(n, axis, rank + 1)?;
    let i = cx.cast(idx, DType::I64)?;
    let i = cx.unsqueeze(i, &[a as i64])?;
    let mut ishape = vec![1usize; rank + 1];
    ishape[a] = depth as usize;
    // The iota is made here, twice (the tensor, then the constant's dense
    // elements): a hostile depth must not allocate them (a mutant within
    // the budget for one copy aborted on the second).
    ge_ir::budget::check(
        ge_ir::budget::bytes_of([depth as u64], 16),
        &"OneHot's depth iota",
    )
    .map_err(|e| invalid(n, e))?;
    let iota =
        cx.e.constant(&Tensor::from_i64(ishape, DType::I64, (0..depth).collect()))?;
    let hit = cx.op2("graph.equal", i, iota)?;
    one(cx.op("graph.where", &[hit, on, off], vec![])?)
}

/// TopKV2(x, k): indices as int32 (TensorFlow's default index type).
pub fn top_k(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let k = cx
        .const_i64s(n.input(1)?, "TopKV2 k")?
        .first()
        .copied()
        .ok_or_else(|| invalid(n, "k is empty"))?;
    let r = cx.e.op_multi(
        "graph.topk",
        &[x],
        vec![
            ("k", Attribute::i64(k)),
            ("axis", Attribute::i64(-1)),
            ("largest", Attribute::i64(1)),
            ("sorted", Attribute::i64(1)),
        ],
        None,
    )?;
    let to = match n.attr("index_type") {
        Some(_) => n.dtype("index_type")?,
        None => DType::I32,
    };
    let idx = cx.cast(r[1], to)?;
    Ok(vec![r[0], idx])
}

/// MatrixBandPart(x, lower, upper): a constant band mask over the last two
/// dims (negative bounds keep the whole triangle), x where it holds, else 0.
pub fn matrix_band_part(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let lo = cx.const_i64s(n.input(1)?, "MatrixBandPart num_lower")?;
    let hi = cx.const_i64s(n.input(2)?, "MatrixBandPart num_upper")?;
    let (lo, hi) = (
        lo.first().copied().unwrap_or(-1),
        hi.first().copied().unwrap_or(-1),
    );
    let dims = cx.e.dims(x)?;
    let r = dims.len();
    if r < 2 {
        return Err(invalid(n, "needs rank >= 2"));
    }
    let (m, k) = match (dims[r - 2].as_static(), dims[r - 1].as_static()) {
        (Some(m), Some(k)) => (m, k),
        _ => return Err(unsupported(n, "with dynamic matrix dims")),
    };
    let mask: Vec<i64> = (0..m * k)
        .map(|t| {
            let (i, j) = (t / k, t % k);
            ((lo < 0 || i - j <= lo) && (hi < 0 || j - i <= hi)) as i64
        })
        .collect();
    let mask = cx.e.constant(&Tensor::from_i64(
        vec![m as usize, k as usize],
        DType::I1,
        mask,
    ))?;
    let z = cx.scalar_like(x, 0.0)?;
    one(cx.op("graph.where", &[mask, x, z], vec![])?)
}

/// Where(condition) — the coordinates of the true elements: a shape that
/// depends on the values, so only a constant condition (folded here) is
/// supported until the dynamic-shape work lands.
pub fn where_(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let c = n.input(0)?;
    let Some(t) = cx.e.const_value(c) else {
        // A data-dependent size: NonZero's coordinates ([rank, K], K a size
        // symbol the import bounds by the condition's size), transposed to
        // TF's [K, rank] (docs/architecture.md "Execution modes").
        let sym = crate::onnx::graph::sanitize(&format!("{}_count", n.name));
        let r = cx.e.op_multi(
            "data.nonzero",
            &[c],
            vec![("count", Attribute::string(&sym))],
            None,
        )?;
        return one(cx.transpose(r[0], &[1, 0])?);
    };
    let rank = t.shape.len();
    let mut coords: Vec<i64> = vec![];
    let mut count = 0;
    let mut idx = vec![0usize; rank];
    for i in 0..t.len() {
        ge_dialects::data::unravel(i, &t.shape, &mut idx);
        if t.get_f(i) != 0.0 {
            coords.extend(idx.iter().map(|&v| v as i64));
            count += 1;
        }
    }
    one(cx
        .e
        .constant(&Tensor::from_i64(vec![count, rank], DType::I64, coords))?)
}
