//! GatherND and ScatterND, composed from a flat index into the data viewed
//! as rows: `graph.gather` (which has a native kernel) and
//! `graph.scatter_elements` on the flattened data, so that no new graph op
//! is needed. The composition needs the data's shape and the index depth
//! (`indices.shape[-1]`) to be static.
//!
//! An index outside its dim (after counting negatives from the end) must be
//! an error, not a silent read of another row: such a row's flat index is
//! replaced by one past the end, which the gather/scatter refuses at run time.

use super::{cast, invalid, one, reduce, reshape, static_shape, unsqueeze, Cx, Node, Res};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

fn const_i64(cx: &mut Cx, shape: Vec<usize>, v: Vec<i64>) -> Res<ValueId> {
    Ok(cx.e.constant(&Tensor::from_i64(shape, DType::I64, v))?)
}

fn op2(cx: &mut Cx, name: &str, x: ValueId, y: ValueId) -> Res<ValueId> {
    super::op2(cx, name, x, y)
}

/// The flat row index of each index tuple of `indices` (shape `I`, last dim
/// `k`) into `dims` (the `k` indexed dims, row-major), or `past_end` where a
/// component is out of its dim; shape `I[:-1]`.
fn flat_rows(cx: &mut Cx, indices: ValueId, dims: &[i64], past_end: i64) -> Res<ValueId> {
    let q = cx.e.rank(indices)?;
    let k = dims.len();
    let idx = cast(cx, indices, DType::I64)?;
    let dimv = const_i64(cx, vec![k], dims.to_vec())?;
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
    let mut strides = vec![1i64; k];
    for j in (0..k.saturating_sub(1)).rev() {
        strides[j] = strides[j + 1] * dims[j + 1];
    }
    let sv = const_i64(cx, vec![k], strides)?;
    let prod = op2(cx, "graph.mul", idx, sv)?;
    let flat = reduce(cx, "graph.reduce_sum", prod, &last, false)?;
    let is_bad = op2(cx, "graph.greater", bad, zero)?;
    let end = const_i64(cx, vec![], vec![past_end])?;
    Ok(cx.e.op("graph.where", &[is_bad, end, flat], vec![])?)
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

pub fn gather_nd(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (data, indices) = (n.input(0)?, n.input(1)?);
    let d = static_shape(cx, n, data, "data")?;
    let r = d.len();
    let b = n.i("batch_dims", 0)?;
    if b < 0 || b as usize >= r {
        return Err(invalid(
            n,
            format!("batch_dims {b} must be within 0..{r} (the rank of 'data')"),
        ));
    }
    let b = b as usize;
    let (k, q) = index_depth(cx, n, indices, r - b)?;
    if q <= b {
        return Err(invalid(
            n,
            format!("'indices' of rank {q} must have more than batch_dims = {b} dims"),
        ));
    }
    let idims = cx.e.dims(indices)?;
    for (j, (&i, &x)) in idims[..b].iter().zip(&d[..b]).enumerate() {
        if i.as_static().is_some_and(|i| i != x) {
            return Err(invalid(
                n,
                format!(
                    "batch dim {j} of 'indices' ({}) differs from that of 'data' ({x})",
                    cx.e.ty(indices)
                ),
            ));
        }
    }
    let batch = product(&d[..b]);
    let rows = product(&d[b..b + k]);
    let mut flat = flat_rows(cx, indices, &d[b..b + k], batch * rows)?;
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
    let d = static_shape(cx, n, data, "data")?;
    let r = d.len();
    let (k, q) = index_depth(cx, n, indices, r)?;
    let reduction = n.s("reduction", "none")?;
    // The expected shape of `updates`: I[:-1] + D[k:].
    let mut want = cx.e.dims(indices)?[..q - 1].to_vec();
    want.extend(d[k..].iter().map(|&x| ge_ir::Dim::Static(x)));
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
    let total = product(&d);
    let inner = product(&d[k..]);
    let rows = flat_rows(cx, indices, &d[..k], total)?;
    // Element index of each updated element: row * inner + 0..inner.
    let rows = unsqueeze(cx, rows, &[q as i64 - 1])?;
    let inner_v = const_i64(cx, vec![], vec![inner])?;
    let base = op2(cx, "graph.mul", rows, inner_v)?;
    let iota = const_i64(cx, vec![inner as usize], (0..inner).collect())?;
    let elems = op2(cx, "graph.add", base, iota)?;
    // A bad row (marked `total`) stays past the end.
    let end = const_i64(cx, vec![], vec![total])?;
    let bad = op2(cx, "graph.greater_equal", base, end)?;
    let elems = cx.e.op("graph.where", &[bad, end, elems], vec![])?;
    let elems = reshape(cx, elems, &[-1])?;
    let upd = reshape(cx, updates, &[-1])?;
    let flat = reshape(cx, data, &[-1])?;
    let out = cx.e.op(
        "graph.scatter_elements",
        &[flat, elems, upd],
        vec![
            ("axis", Attribute::i64(0)),
            ("reduction", Attribute::string(&reduction)),
        ],
    )?;
    one(reshape(cx, out, &d)?)
}
