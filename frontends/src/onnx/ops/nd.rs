//! GatherND and ScatterND, composed from a flat index into the data viewed
//! as rows: `graph.gather` (which has a native kernel) and
//! `graph.scatter_elements` on the flattened data, so that no new graph op
//! is needed. The composition needs the index depth (`indices.shape[-1]`)
//! to be static; the data's shape may be symbolic (the padding-mask code
//! of transformers exported with dynamic axes: a `[batch, sequence]` mask
//! indexed by `[batch, sequence]` pairs; a KV cache updated in place by
//! ScatterND), whose dims, strides and row counts are then read from
//! `data.shape_of`.
//!
//! An index outside its dim (after counting negatives from the end) must be
//! an error, not a silent read of another row: such a row's flat index is
//! replaced by one past the end, which the gather/scatter refuses at run time.

use super::{cast, invalid, one, reduce, reshape, static_shape, unsqueeze, Cx, Node, Res};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim};

fn const_i64(cx: &mut Cx, shape: Vec<usize>, v: Vec<i64>) -> Res<ValueId> {
    Ok(cx.e.constant(&Tensor::from_i64(shape, DType::I64, v))?)
}

fn op2(cx: &mut Cx, name: &str, x: ValueId, y: ValueId) -> Res<ValueId> {
    super::op2(cx, name, x, y)
}

/// The `k` indexed dims as values: the dims (`[k]`), their row-major
/// strides (`[k]`) and their product (the row count, a scalar).
struct Rows {
    dims: ValueId,
    strides: ValueId,
    count: ValueId,
}

impl Rows {
    fn constant(cx: &mut Cx, dims: &[i64]) -> Res<Rows> {
        let k = dims.len();
        let mut strides = vec![1i64; k];
        for j in (0..k.saturating_sub(1)).rev() {
            strides[j] = strides[j + 1] * dims[j + 1];
        }
        Ok(Rows {
            dims: const_i64(cx, vec![k], dims.to_vec())?,
            strides: const_i64(cx, vec![k], strides)?,
            count: const_i64(cx, vec![], vec![product(dims)])?,
        })
    }

    /// The dims `at` of `data`, read at run time.
    fn of_data(cx: &mut Cx, data: ValueId, at: std::ops::Range<usize>) -> Res<Rows> {
        let shape = cx.e.op("data.shape_of", &[data], vec![])?;
        let dims = cx.e.op(
            "data.slice",
            &[shape],
            vec![
                ("starts", Attribute::i64_array(&[at.start as i64])),
                ("ends", Attribute::i64_array(&[at.end as i64])),
            ],
        )?;
        let strides = cx.e.op(
            "graph.cumprod",
            &[dims],
            vec![
                ("exclusive", Attribute::i64(1)),
                ("reverse", Attribute::i64(1)),
            ],
        )?;
        let count = reduce(cx, "graph.reduce_prod", dims, &[0], false)?;
        Ok(Rows {
            dims,
            strides,
            count,
        })
    }
}

/// The flat row index of each index tuple of `indices` (shape `I`, last dim
/// `k`) into `rows` (the `k` indexed dims, row-major), or `past_end` where a
/// component is out of its dim; shape `I[:-1]`.
fn flat_rows(cx: &mut Cx, indices: ValueId, rows: &Rows, past_end: ValueId) -> Res<ValueId> {
    let q = cx.e.rank(indices)?;
    let idx = cast(cx, indices, DType::I64)?;
    let dimv = rows.dims;
    let zero = const_i64(cx, vec![], vec![0])?;
    let neg = op2(cx, "graph.less", idx, zero)?;
    let wrapped = op2(cx, "graph.add", idx, dimv)?;
    let idx = cx.e.op("graph.where", &[neg, wrapped, idx], vec![])?;
    let low = op2(cx, "graph.less", idx, zero)?;
    let high = op2(cx, "graph.greater_equal", idx, dimv)?;
    let bad = op2(cx, "graph.or", low, high)?;
    let bad = cast(cx, bad, DType::I64)?;
    let last = [q as i64 - 1];
    let bad = reduce(cx, "graph.reduce_max", bad, &last, false)?;
    let prod = op2(cx, "graph.mul", idx, rows.strides)?;
    let flat = reduce(cx, "graph.reduce_sum", prod, &last, false)?;
    let is_bad = op2(cx, "graph.greater", bad, zero)?;
    Ok(cx.e.op("graph.where", &[is_bad, past_end, flat], vec![])?)
}

/// `indices.shape[-1]` (static, within `1..=max`) and `indices`' rank.
fn index_depth(cx: &Cx, n: &Node, indices: ValueId, max: usize) -> Res<(usize, usize)> {
    let d = cx.e.dims(indices)?;
    let Some(last) = d.last() else {
        return Err(invalid(n, "'indices' must have rank 1 or more"));
    };
    let Some(k) = last.as_static() else {
        return Err(super::unsupported(
            n,
            format!("with a dynamic index depth ('{}')", cx.e.ty(indices)),
        ));
    };
    if k < 1 || k as usize > max {
        return Err(invalid(
            n,
            format!("indices.shape[-1] = {k} must be within 1..={max}"),
        ));
    }
    Ok((k as usize, d.len()))
}

fn product(v: &[i64]) -> i64 {
    v.iter().product()
}

/// GatherND on data of a symbolic shape: the indexed dims `D[b:b+k]` are
/// read from the data's shape at run time (constants when static), the
/// data is viewed as `[batch * rows] + D[b+k:]` with symbolic dims. With
/// batch dims, each index tuple's row is offset by its batch's position
/// (`data.iota` over the batch count, laid along `I[:b]`) times the rows per
/// batch; a batch dim of `indices` that differs from the data's at run time
/// makes that view's reshape fail, a run error.
fn gather_nd_symbolic(cx: &mut Cx, n: &Node, data: ValueId, indices: ValueId) -> Res<Vec<ValueId>> {
    let d = cx.e.dims(data)?;
    let b = batch_dims(cx, n, data, indices)?;
    let (k, q) = index_depth(cx, n, indices, d.len() - b)?;
    let indexed = &d[b..b + k];
    let rows = match indexed
        .iter()
        .map(|x| x.as_static())
        .collect::<Option<Vec<i64>>>()
    {
        Some(st) => Rows::constant(cx, &st)?,
        None => Rows::of_data(cx, data, b..b + k)?,
    };
    let mut flat = flat_rows(cx, indices, &rows, rows.count)?;
    if b > 0 {
        let batch = ge_ir::dim::product(&d[..b]);
        let pos = super::shape::iota(cx, batch, 0, 1)?;
        let mut along = cx.e.dims(indices)?[..b].to_vec();
        along.extend(std::iter::repeat_n(ge_ir::Dim::Static(1), q - 1 - b));
        let pos = super::shape::sym_reshape(cx, pos, &along)?;
        let off = op2(cx, "graph.mul", pos, rows.count)?;
        let with_off = op2(cx, "graph.add", flat, off)?;
        // Keep a bad tuple past the end of the whole view.
        let total = super::shape::element_count(cx, n, data, b + k)?;
        let bad = op2(cx, "graph.equal", flat, rows.count)?;
        flat = cx.e.op("graph.where", &[bad, total, with_off], vec![])?;
    }
    let mut view = vec![ge_ir::dim::product(&d[..b + k])];
    view.extend_from_slice(&d[b + k..]);
    let data = super::shape::sym_reshape(cx, data, &view)?;
    one(cx.e.op(
        "graph.gather",
        &[data, flat],
        vec![("axis", Attribute::i64(0))],
    )?)
}

/// GatherND's `batch_dims`, checked against the ranks of `data` and
/// `indices` and the batch dims both have at import.
fn batch_dims(cx: &Cx, n: &Node, data: ValueId, indices: ValueId) -> Res<usize> {
    let d = cx.e.dims(data)?;
    let r = d.len();
    let b = n.i("batch_dims", 0)?;
    if b < 0 || b as usize >= r {
        return Err(invalid(
            n,
            format!("batch_dims {b} must be within 0..{r} (the rank of 'data')"),
        ));
    }
    let b = b as usize;
    let idims = cx.e.dims(indices)?;
    if idims.len() <= b {
        return Err(invalid(
            n,
            format!(
                "'indices' of rank {} must have more than batch_dims = {b} dims",
                idims.len()
            ),
        ));
    }
    for (j, (&i, &x)) in idims[..b].iter().zip(&d[..b]).enumerate() {
        let differ = match (i.as_static(), x.as_static()) {
            (Some(i), Some(x)) => i != x,
            // Two symbols: the same name or unrelated (checked at run time).
            _ => false,
        };
        if differ {
            return Err(invalid(
                n,
                format!(
                    "batch dim {j} of 'indices' ({}) differs from that of 'data' ({})",
                    cx.e.ty(indices),
                    cx.e.ty(data)
                ),
            ));
        }
    }
    Ok(b)
}

pub fn gather_nd(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (data, indices) = (n.input(0)?, n.input(1)?);
    if cx.e.static_shape(data).is_none()
        && cx.e.dims(data)?.iter().all(|d| *d != ge_ir::Dim::Unknown)
    {
        return gather_nd_symbolic(cx, n, data, indices);
    }
    let d = static_shape(cx, n, data, "data")?;
    let r = d.len();
    let b = batch_dims(cx, n, data, indices)?;
    let (k, q) = index_depth(cx, n, indices, r - b)?;
    let batch = product(&d[..b]);
    let rows = product(&d[b..b + k]);
    let indexed = Rows::constant(cx, &d[b..b + k])?;
    let past_end = const_i64(cx, vec![], vec![batch * rows])?;
    let mut flat = flat_rows(cx, indices, &indexed, past_end)?;
    if b > 0 {
        // Row offset of each batch: arange(batch) * rows, laid along I[:b].
        let mut shape: Vec<usize> = d[..b].iter().map(|&x| x as usize).collect();
        shape.extend(std::iter::repeat_n(1, q - 1 - b));
        let off = const_i64(cx, shape, (0..batch).map(|i| i * rows).collect())?;
        let with_off = op2(cx, "graph.add", flat, off)?;
        // Keep the past-the-end marker past the end.
        let end = const_i64(cx, vec![], vec![batch * rows])?;
        let bad = op2(cx, "graph.equal", flat, end)?;
        flat = cx.e.op("graph.where", &[bad, end, with_off], vec![])?;
    }
    let mut view = vec![batch * rows];
    view.extend_from_slice(&d[b + k..]);
    let data = reshape(cx, data, &view)?;
    one(cx.e.op(
        "graph.gather",
        &[data, flat],
        vec![("axis", Attribute::i64(0))],
    )?)
}

pub fn scatter_nd(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (data, indices, updates) = (n.input(0)?, n.input(1)?, n.input(2)?);
    let d = cx.e.dims(data)?;
    if d.contains(&Dim::Unknown) {
        // The clear refusal for a dim nothing names.
        static_shape(cx, n, data, "data")?;
    }
    let r = d.len();
    let (k, q) = index_depth(cx, n, indices, r)?;
    let reduction = n.s("reduction", "none")?;
    // The expected shape of `updates`: I[:-1] + D[k:].
    let mut want = cx.e.dims(indices)?[..q - 1].to_vec();
    want.extend_from_slice(&d[k..]);
    let got = cx.e.dims(updates)?;
    let fits = got.len() == want.len() && got.iter().zip(&want).all(|(a, b)| a.compatible(*b));
    if !fits {
        return Err(invalid(
            n,
            format!(
                "'updates' ({}) must have the shape indices.shape[:-1] + data.shape[{k}:]",
                cx.e.ty(updates)
            ),
        ));
    }
    let total = super::shape::element_count(cx, n, data, r)?;
    let inner_dim = ge_ir::dim::product(&d[k..]);
    let indexed = match d[..k]
        .iter()
        .map(|x| x.as_static())
        .collect::<Option<Vec<i64>>>()
    {
        Some(st) => Rows::constant(cx, &st)?,
        None => Rows::of_data(cx, data, 0..k)?,
    };
    let rows = flat_rows(cx, indices, &indexed, total)?;
    // Element index of each updated element: row * inner + 0..inner.
    let rows = unsqueeze(cx, rows, &[q as i64 - 1])?;
    let inner_v = match inner_dim.as_static() {
        Some(i) => const_i64(cx, vec![], vec![i])?,
        None => op2(cx, "graph.div", total, indexed.count)?,
    };
    let base = op2(cx, "graph.mul", rows, inner_v)?;
    let iota = match inner_dim.as_static() {
        Some(i) => const_i64(cx, vec![i as usize], (0..i).collect())?,
        None => super::shape::iota(cx, inner_dim, 0, 1)?,
    };
    let elems = op2(cx, "graph.add", base, iota)?;
    // A bad row (marked `total`) stays past the end.
    let bad = op2(cx, "graph.greater_equal", base, total)?;
    let elems = cx.e.op("graph.where", &[bad, total, elems], vec![])?;
    let elems = flatten(cx, elems)?;
    let upd = flatten(cx, updates)?;
    let flat = flatten(cx, data)?;
    let out = cx.e.op(
        "graph.scatter_elements",
        &[flat, elems, upd],
        vec![
            ("axis", Attribute::i64(0)),
            ("reduction", Attribute::string(&reduction)),
        ],
    )?;
    match cx.e.static_shape(data) {
        Some(st) => one(reshape(cx, out, &st)?),
        None => one(super::shape::sym_reshape(cx, out, &d)?),
    }
}

/// `x` as one dim (its element count, symbolic where its dims are).
fn flatten(cx: &mut Cx, x: ValueId) -> Res<ValueId> {
    if cx.e.static_shape(x).is_some() {
        return reshape(cx, x, &[-1]);
    }
    let d = cx.e.dims(x)?;
    super::shape::sym_reshape(cx, x, &[ge_ir::dim::product(&d)])
}
