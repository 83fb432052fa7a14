//! Elementwise ops, reductions and matrix products (MatMul, BatchMatMul,
//! Einsum decomposed at import).

use super::{binary, invalid, norm_axis, one, unary, unsupported, Res, TfCx, TfNode};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::DType;

macro_rules! unary_ops {
    ($($f:ident => $op:literal),* $(,)?) => {
        $(pub fn $f(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> { unary(cx, n, $op) })*
    };
}
macro_rules! binary_ops {
    ($($f:ident => $op:literal),* $(,)?) => {
        $(pub fn $f(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> { binary(cx, n, $op) })*
    };
}

unary_ops! {
    abs => "graph.abs", ceil => "graph.ceil", cos => "graph.cos", erf => "graph.erf",
    exp => "graph.exp", floor => "graph.floor", log => "graph.log", neg => "graph.neg",
    reciprocal => "graph.reciprocal", relu => "graph.relu", round => "graph.round",
    rsqrt => "graph.rsqrt", sigmoid => "graph.sigmoid", sign => "graph.sign", sin => "graph.sin",
    sqrt => "graph.sqrt", tanh => "graph.tanh", logical_not => "graph.not",
}

binary_ops! {
    add => "graph.add", sub => "graph.sub", mul => "graph.mul", real_div => "graph.div",
    maximum => "graph.max", minimum => "graph.min", pow => "graph.pow",
    equal => "graph.equal", greater => "graph.greater", greater_equal => "graph.greater_equal",
    less => "graph.less", less_equal => "graph.less_equal",
    logical_and => "graph.and", logical_or => "graph.or",
}

pub fn not_equal(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let e = cx.op2("graph.equal", n.input(0)?, n.input(1)?)?;
    one(cx.op1("graph.not", e)?)
}

/// (a - b)²
pub fn squared_difference(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let d = cx.op2("graph.sub", n.input(0)?, n.input(1)?)?;
    one(cx.op2("graph.mul", d, d)?)
}

pub fn square(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(cx.op2("graph.mul", x, x)?)
}

/// 1 - erf(x)
pub fn erfc(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let e = cx.op1("graph.erf", x)?;
    let o = cx.scalar_like(x, 1.0)?;
    one(cx.op2("graph.sub", o, e)?)
}

/// log(1 + x)
pub fn log1p(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let o = cx.scalar_like(x, 1.0)?;
    let s = cx.op2("graph.add", x, o)?;
    one(cx.op1("graph.log", s)?)
}

/// a / b, 0 where b == 0
pub fn div_no_nan(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    let z = cx.scalar_like(b, 0.0)?;
    let o = cx.scalar_like(b, 1.0)?;
    let is0 = cx.op2("graph.equal", b, z)?;
    let safe = cx.op("graph.where", &[is0, o, b], vec![])?;
    let q = cx.op2("graph.div", a, safe)?;
    let z = cx.scalar_like(q, 0.0)?;
    one(cx.op("graph.where", &[is0, z, q], vec![])?)
}

/// Floor division: floor(a / b) for floats; for integers the truncating
/// quotient minus one where the remainder is non-zero and the signs differ.
pub fn floor_div(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    let q = cx.op2("graph.div", a, b)?;
    if cx.e.dtype(q)?.is_float() {
        return one(cx.op1("graph.floor", q)?);
    }
    let r = cx.op("graph.mod", &[a, b], vec![("fmod", Attribute::i64(1))])?;
    let z = cx.scalar_like(r, 0.0)?;
    let nz = cx.op2("graph.equal", r, z)?;
    let nz = cx.op1("graph.not", nz)?;
    let za = cx.scalar_like(a, 0.0)?;
    let an = cx.op2("graph.less", a, za)?;
    let bn = cx.op2("graph.less", b, za)?;
    let differ = cx.op2("graph.xor", an, bn)?;
    let adjust = cx.op2("graph.and", nz, differ)?;
    let one_ = cx.scalar_like(q, 1.0)?;
    let qm = cx.op2("graph.sub", q, one_)?;
    one(cx.op("graph.where", &[adjust, qm, q], vec![])?)
}

/// The remainder with the divisor's sign (ONNX Mod with fmod = 0 for
/// integers; a - floor(a / b) * b for floats).
pub fn floor_mod(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    if cx.e.dtype(a)?.is_float() {
        let q = cx.op2("graph.div", a, b)?;
        let f = cx.op1("graph.floor", q)?;
        let m = cx.op2("graph.mul", f, b)?;
        return one(cx.op2("graph.sub", a, m)?);
    }
    one(cx.op("graph.mod", &[a, b], vec![("fmod", Attribute::i64(0))])?)
}

pub fn relu6(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let lo = cx.scalar_like(x, 0.0)?;
    let hi = cx.scalar_like(x, 6.0)?;
    one(cx.op(
        "graph.clip",
        &[x, lo, hi],
        vec![("operand_segment_sizes", Attribute::i64_array(&[1, 1, 1]))],
    )?)
}

/// min(max(x, lo), hi) with tensor bounds (broadcast).
pub fn clip_by_value(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (x, lo, hi) = (n.input(0)?, n.input(1)?, n.input(2)?);
    let m = cx.op2("graph.max", x, lo)?;
    one(cx.op2("graph.min", m, hi)?)
}

pub fn leaky_relu(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(cx.op(
        "graph.leaky_relu",
        &[x],
        vec![("alpha", Attribute::f64(n.f("alpha", 0.2) as f64))],
    )?)
}

/// x > 0 ? x : exp(x) - 1
pub fn elu(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let e = cx.op1("graph.exp", x)?;
    let o = cx.scalar_like(x, 1.0)?;
    let em = cx.op2("graph.sub", e, o)?;
    let z = cx.scalar_like(x, 0.0)?;
    let pos = cx.op2("graph.greater", x, z)?;
    one(cx.op("graph.where", &[pos, x, em], vec![])?)
}

/// scale · (x > 0 ? x : alpha · (exp(x) - 1)) with TensorFlow's constants.
pub fn selu(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let (alpha, scale) = (1.673_263_242_354_377_3, 1.050_700_987_355_480_5);
    let e = cx.op1("graph.exp", x)?;
    let o = cx.scalar_like(x, 1.0)?;
    let em = cx.op2("graph.sub", e, o)?;
    let a = cx.scalar_like(x, alpha)?;
    let neg = cx.op2("graph.mul", em, a)?;
    let z = cx.scalar_like(x, 0.0)?;
    let pos = cx.op2("graph.greater", x, z)?;
    let y = cx.op("graph.where", &[pos, x, neg], vec![])?;
    let s = cx.scalar_like(x, scale)?;
    one(cx.op2("graph.mul", y, s)?)
}

/// log(1 + exp(-|x|)) + max(x, 0): no overflow for large x.
pub fn softplus(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let a = cx.op1("graph.abs", x)?;
    let na = cx.op1("graph.neg", a)?;
    let e = cx.op1("graph.exp", na)?;
    let o = cx.scalar_like(x, 1.0)?;
    let s = cx.op2("graph.add", e, o)?;
    let l = cx.op1("graph.log", s)?;
    let r = cx.op1("graph.relu", x)?;
    one(cx.op2("graph.add", l, r)?)
}

/// x / (1 + |x|)
pub fn softsign(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let a = cx.op1("graph.abs", x)?;
    let o = cx.scalar_like(x, 1.0)?;
    let d = cx.op2("graph.add", a, o)?;
    one(cx.op2("graph.div", x, d)?)
}

pub fn add_n(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let mut acc = n.input(0)?;
    for &v in &n.inputs[1..] {
        acc = cx.op2("graph.add", acc, v)?;
    }
    one(acc)
}

fn reduction(cx: &mut TfCx, n: &TfNode, name: &str) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let axes = cx.const_i64s(n.input(1)?, "reduction indices")?;
    let keep = n.b("keep_dims", false);
    if axes.is_empty() {
        return one(cx.op1("data.identity", x)?);
    }
    one(cx.op(
        name,
        &[x],
        vec![
            ("axes", Attribute::i64_array(&axes)),
            ("keepdims", Attribute::i64(keep as i64)),
        ],
    )?)
}

pub fn mean(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_mean")
}
pub fn sum(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_sum")
}
pub fn reduce_max(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_max")
}
pub fn reduce_min(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_min")
}
pub fn prod(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_prod")
}

/// All/Any on booleans: min/max over the values as i32, back to i1.
fn bool_reduction(cx: &mut TfCx, n: &TfNode, name: &str) -> Res<Vec<ValueId>> {
    let x = cx.cast(n.input(0)?, DType::I32)?;
    let mut n2 = TfNode {
        name: n.name.clone(),
        op: n.op.clone(),
        inputs: n.inputs.clone(),
        attrs: n.attrs.clone(),
    };
    n2.inputs[0] = x;
    let r = reduction(cx, &n2, name)?[0];
    one(cx.cast(r, DType::I1)?)
}
pub fn all(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    bool_reduction(cx, n, "graph.reduce_min")
}
pub fn any(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    bool_reduction(cx, n, "graph.reduce_max")
}

fn arg(cx: &mut TfCx, n: &TfNode, name: &str) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let axis = cx
        .const_i64s(n.input(1)?, "ArgMax/ArgMin dimension")?
        .first()
        .copied()
        .unwrap_or(0);
    let i = cx.op(
        name,
        &[x],
        vec![
            ("axis", Attribute::i64(axis)),
            ("keepdims", Attribute::i64(0)),
        ],
    )?;
    let to = match n.attr("output_type") {
        Some(_) => n.dtype("output_type")?,
        None => DType::I64,
    };
    one(cx.cast(i, to)?)
}
pub fn arg_max(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    arg(cx, n, "graph.argmax")
}
pub fn arg_min(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    arg(cx, n, "graph.argmin")
}

/// Cumsum ([`crate::emit::Emitter::cumsum`]).
pub fn cumsum(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let rank = cx.e.rank(x)?;
    let axis = cx.const_i64s(n.input(1)?, "Cumsum axis")?;
    let a = norm_axis(n, axis.first().copied().unwrap_or(0), rank)?;
    let len = cx.e.dims(x)?[a]
        .as_static()
        .ok_or_else(|| unsupported(n, "along a dynamic axis"))? as usize;
    let (exclusive, reverse) = (n.b("exclusive", false), n.b("reverse", false));
    one(cx.e.cumsum(x, a, len, exclusive, reverse)?)
}

pub fn matmul(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    one(cx.op(
        "graph.gemm",
        &[a, b],
        vec![
            ("transA", Attribute::i64(n.b("transpose_a", false) as i64)),
            ("transB", Attribute::i64(n.b("transpose_b", false) as i64)),
        ],
    )?)
}

/// Swap the last two dims.
fn transpose_last2(cx: &mut TfCx, x: ValueId) -> Res<ValueId> {
    let r = cx.e.rank(x)?;
    if r < 2 {
        return Err(ge_ir_err("a matrix operand needs rank >= 2"));
    }
    let mut perm: Vec<i64> = (0..r as i64).collect();
    perm.swap(r - 2, r - 1);
    cx.transpose(x, &perm)
}

fn ge_ir_err(m: &str) -> crate::error::ImportError {
    crate::error::ImportError::invalid(m.to_string())
}

/// BatchMatMul/V2/V3: `graph.matmul` (numpy broadcasting of the batch dims),
/// adj_x/adj_y as transposes of the last two dims (real types: the adjoint is
/// the transpose). V3's output type Tout casts the result.
pub fn batch_matmul(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (mut a, mut b) = (n.input(0)?, n.input(1)?);
    if n.b("adj_x", false) {
        a = transpose_last2(cx, a)?;
    }
    if n.b("adj_y", false) {
        b = transpose_last2(cx, b)?;
    }
    let y = cx.op2("graph.matmul", a, b)?;
    match n.attr("Tout") {
        Some(_) => one(cx.cast(y, n.dtype("Tout")?)?),
        None => one(y),
    }
}

/// One operand of an einsum: its labels (ellipsis expanded) and value.
struct Operand {
    labels: Vec<char>,
    v: ValueId,
}

/// Expand `...` to the fresh labels of the broadcast dims (right-aligned, so
/// operands with fewer ellipsis dims take the last ones).
fn expand_ellipsis(n: &TfNode, term: &str, rank: Option<usize>, ell: usize) -> Res<Vec<char>> {
    let fresh = |k: usize| char::from_u32(0x2460 + k as u32).unwrap_or('?');
    match term.find("...") {
        None => Ok(term.chars().collect()),
        Some(pos) => {
            let before: Vec<char> = term[..pos].chars().collect();
            let after: Vec<char> = term[pos + 3..].chars().collect();
            let k = match rank {
                Some(r) => r
                    .checked_sub(before.len() + after.len())
                    .ok_or_else(|| invalid(n, format!("'{term}' has more labels than dims")))?,
                None => ell,
            };
            let mut out = before;
            out.extend((ell - k.min(ell)..ell).map(fresh));
            out.extend(after);
            Ok(out)
        }
    }
}

/// Einsum, decomposed at import into reduce_sum / transpose / reshape /
/// matmul: labels only in one operand (and not in the output) are summed
/// first; then with B the labels of both operands and the output (batch), K
/// those of both but not the output (contracted), M / N the rest of each
/// operand: `A → [B, M, K]`, `B → [B, K, N]` (M, K, N flattened),
/// `matmul → [B, M, N]`, unflattened and transposed to the output order.
/// One operand: sum the missing labels, transpose. Repeated labels within an
/// operand (diagonals) are not supported. Needs static shapes.
pub fn einsum(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let eq: String = n
        .s("equation", "")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let (lhs, out) = eq
        .split_once("->")
        .ok_or_else(|| unsupported(n, format!("without an explicit output ('{eq}')")))?;
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != n.inputs.len() || !(1..=2).contains(&terms.len()) {
        return Err(unsupported(
            n,
            format!("'{eq}' with {} operands (1 or 2 are)", n.inputs.len()),
        ));
    }
    let (mut ops, ell) = einsum_operands(cx, n, &eq, &terms)?;
    let out_labels = expand_ellipsis(n, out, None, ell)?;
    sum_private_labels(cx, &mut ops, &out_labels)?;
    if let [o] = &ops[..] {
        if o.labels.len() != out_labels.len() || out_labels.iter().any(|c| !o.labels.contains(c)) {
            return Err(invalid(
                n,
                format!("'{eq}': the output labels are not the input's"),
            ));
        }
        return one(transpose_to(cx, o.v, &o.labels, &out_labels)?);
    }
    one(einsum_matmul(cx, n, &eq, &ops[0], &ops[1], &out_labels)?)
}

/// The operands with their labels (`...` expanded), and the number of
/// ellipsis dims (the most any operand has).
fn einsum_operands(
    cx: &mut TfCx,
    n: &TfNode,
    eq: &str,
    terms: &[&str],
) -> Res<(Vec<Operand>, usize)> {
    let mut ell = 0;
    for (t, &v) in terms.iter().zip(&n.inputs) {
        if t.contains("...") {
            let r = cx.e.rank(v)?;
            let named = t.len() - 3;
            ell = ell.max(r.saturating_sub(named));
        }
    }
    let mut ops = vec![];
    for (t, &v) in terms.iter().zip(&n.inputs) {
        let labels = expand_ellipsis(n, t, Some(cx.e.rank(v)?), ell)?;
        if labels.len() != cx.e.rank(v)? {
            return Err(invalid(
                n,
                format!("'{t}' does not match rank {}", cx.e.rank(v)?),
            ));
        }
        let mut seen = labels.clone();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != labels.len() {
            return Err(unsupported(
                n,
                format!("'{eq}' with a repeated label (a diagonal)"),
            ));
        }
        ops.push(Operand { labels, v });
    }
    Ok((ops, ell))
}

/// Sum the labels that occur in one operand only and not in the output.
fn sum_private_labels(cx: &mut TfCx, ops: &mut [Operand], out_labels: &[char]) -> Res<()> {
    for k in 0..ops.len() {
        let in_other = |c: char| {
            ops.iter()
                .enumerate()
                .any(|(j, o)| j != k && o.labels.contains(&c))
        };
        let drop: Vec<i64> = ops[k]
            .labels
            .iter()
            .enumerate()
            .filter(|(_, &c)| !out_labels.contains(&c) && !in_other(c))
            .map(|(i, _)| i as i64)
            .collect();
        if !drop.is_empty() {
            let r = cx.op(
                "graph.reduce_sum",
                &[ops[k].v],
                vec![
                    ("axes", Attribute::i64_array(&drop)),
                    ("keepdims", Attribute::i64(0)),
                ],
            )?;
            ops[k].v = r;
            let keep: Vec<char> = ops[k]
                .labels
                .iter()
                .enumerate()
                .filter(|(i, _)| !drop.contains(&(*i as i64)))
                .map(|(_, &c)| c)
                .collect();
            ops[k].labels = keep;
        }
    }
    Ok(())
}

/// The permutation that orders labels `from` as `to`.
fn perm_to(from: &[char], to: &[char]) -> Vec<i64> {
    to.iter()
        .map(|c| from.iter().position(|x| x == c).unwrap_or(0) as i64)
        .collect()
}

/// `v` (labelled `from`) transposed to the label order `to` (itself when it is already).
fn transpose_to(cx: &mut TfCx, v: ValueId, from: &[char], to: &[char]) -> Res<ValueId> {
    let perm = perm_to(from, to);
    if perm.iter().enumerate().all(|(i, &p)| i as i64 == p) {
        return Ok(v);
    }
    cx.transpose(v, &perm)
}

/// Two operands: `A → [B, M, K]`, `B → [B, K, N]`, matmul, unflattened to
/// `[B, M..., N...]` and transposed to the output order.
fn einsum_matmul(
    cx: &mut TfCx,
    n: &TfNode,
    eq: &str,
    a: &Operand,
    b: &Operand,
    out_labels: &[char],
) -> Res<ValueId> {
    let size = |cx: &TfCx, o: &Operand, c: char| -> Res<i64> {
        let i = o.labels.iter().position(|&x| x == c).unwrap_or(0);
        cx.e.dims(o.v)?[i]
            .as_static()
            .ok_or_else(|| unsupported(n, "on tensors of dynamic shape"))
    };
    let only = |o: &Operand, other: &Operand| -> Vec<char> {
        o.labels
            .iter()
            .copied()
            .filter(|c| !other.labels.contains(c))
            .collect()
    };
    let batch: Vec<char> = out_labels
        .iter()
        .copied()
        .filter(|c| a.labels.contains(c) && b.labels.contains(c))
        .collect();
    let contract: Vec<char> = a
        .labels
        .iter()
        .copied()
        .filter(|c| b.labels.contains(c) && !out_labels.contains(c))
        .collect();
    let (m, nn) = (only(a, b), only(b, a));
    if out_labels
        .iter()
        .any(|c| !batch.contains(c) && !m.contains(c) && !nn.contains(c))
    {
        return Err(invalid(
            n,
            format!("'{eq}': an output label is in no operand"),
        ));
    }
    let bsizes: Vec<i64> = batch
        .iter()
        .map(|&c| Ok(size(cx, a, c)?.max(size(cx, b, c)?)))
        .collect::<Res<_>>()?;
    let prod = |cx: &TfCx, o: &Operand, ls: &[char]| -> Res<i64> {
        ls.iter().try_fold(1i64, |p, &c| Ok(p * size(cx, o, c)?))
    };
    let (pm, pk, pn) = (prod(cx, a, &m)?, prod(cx, a, &contract)?, prod(cx, b, &nn)?);
    // A → [batch..., M, K]
    let a_order: Vec<char> = batch.iter().chain(&m).chain(&contract).copied().collect();
    let at = cx.transpose(a.v, &perm_to(&a.labels, &a_order))?;
    let mut ashape: Vec<i64> = batch.iter().map(|&c| size(cx, a, c)).collect::<Res<_>>()?;
    ashape.extend([pm, pk]);
    let ar = cx.reshape(at, &ashape)?;
    // B → [batch..., K, N]
    let b_order: Vec<char> = batch.iter().chain(&contract).chain(&nn).copied().collect();
    let bt = cx.transpose(b.v, &perm_to(&b.labels, &b_order))?;
    let mut bshape: Vec<i64> = batch.iter().map(|&c| size(cx, b, c)).collect::<Res<_>>()?;
    bshape.extend([pk, pn]);
    let br = cx.reshape(bt, &bshape)?;
    let y = cx.op2("graph.matmul", ar, br)?;
    // [batch..., M..., N...] → output order
    let mut yshape = bsizes;
    for &c in &m {
        yshape.push(size(cx, a, c)?);
    }
    for &c in &nn {
        yshape.push(size(cx, b, c)?);
    }
    let y = cx.reshape(y, &yshape)?;
    let y_labels: Vec<char> = batch.iter().chain(&m).chain(&nn).copied().collect();
    transpose_to(cx, y, &y_labels, out_labels)
}
