//! Einsum, composed from ops with native kernels: diagonals (a label repeated
//! in one operand) as a gather from the flattened pair of axes, labels no
//! one needs any more summed out (`graph.reduce_sum`), each pair of operands
//! contracted as one `graph.matmul` between transposes and reshapes
//! (`[batch, M, K] x [batch, K, N]`), operands taken left to right, and the
//! result transposed into the output's order. Needs static shapes.

use super::{invalid, one, reduce, reshape, static_shape, transpose, Cx, Node, Res};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

/// An operand: its value and one label per axis.
struct Term {
    v: ValueId,
    labels: Vec<char>,
    dims: Vec<i64>,
}

/// Labels standing for the axes an ellipsis covers (never ONNX letters).
fn ellipsis_label(k: usize) -> char {
    char::from_u32(0x100 + k as u32).unwrap_or('\u{100}')
}

/// One side's labels with `...` expanded to `n` ellipsis labels (the last
/// `n` of `max` ellipsis labels, as ellipsis dims align at the right).
fn expand(n: &Node, spec: &str, rank: usize, max_ell: usize) -> Res<Vec<char>> {
    let (before, after, has) = match spec.split_once("...") {
        Some((a, b)) => (a, b, true),
        None => (spec, "", false),
    };
    let bad = |c: char| !c.is_ascii_alphabetic();
    if before.chars().any(bad) || after.chars().any(bad) {
        return Err(invalid(n, format!("bad term '{spec}' in the equation")));
    }
    let letters = before.chars().count() + after.chars().count();
    let mut out: Vec<char> = before.chars().collect();
    if has {
        if rank < letters {
            return Err(invalid(
                n,
                format!("term '{spec}' has more labels than its operand's rank {rank}"),
            ));
        }
        let e = rank - letters;
        if e > max_ell {
            return Err(invalid(n, format!("term '{spec}' covers too many axes")));
        }
        out.extend((max_ell - e..max_ell).map(ellipsis_label));
    } else if letters != rank {
        return Err(invalid(
            n,
            format!("term '{spec}' has {letters} labels for an operand of rank {rank}"),
        ));
    }
    out.extend(after.chars());
    Ok(out)
}

/// `reshape`, skipped when `v` has that shape already.
fn reshape_to(cx: &mut Cx, v: ValueId, shape: &[i64]) -> Res<ValueId> {
    if cx.e.static_shape(v).as_deref() == Some(shape) {
        return Ok(v);
    }
    reshape(cx, v, shape)
}

/// `transpose`, skipped for the identity permutation.
fn transpose_to(cx: &mut Cx, v: ValueId, perm: &[i64]) -> Res<ValueId> {
    if perm.iter().enumerate().all(|(i, &p)| i as i64 == p) {
        return Ok(v);
    }
    transpose(cx, v, perm)
}

/// Take the diagonal of every label repeated within the term.
fn diagonals(cx: &mut Cx, n: &Node, mut t: Term) -> Res<Term> {
    loop {
        let rep = (0..t.labels.len()).find_map(|p| {
            (p + 1..t.labels.len())
                .find(|&q| t.labels[q] == t.labels[p])
                .map(|q| (p, q))
        });
        let Some((p, q)) = rep else { return Ok(t) };
        let size = t.dims[p];
        if t.dims[q] != size {
            return Err(invalid(
                n,
                format!("label '{}' has sizes {size} and {}", t.labels[p], t.dims[q]),
            ));
        }
        // Move the pair last, flatten it and pick elements i * (size + 1).
        let rest: Vec<usize> = (0..t.labels.len()).filter(|&k| k != p && k != q).collect();
        let mut perm: Vec<i64> = rest.iter().map(|&k| k as i64).collect();
        perm.extend([p as i64, q as i64]);
        let v = transpose_to(cx, t.v, &perm)?;
        let mut shape: Vec<i64> = rest.iter().map(|&k| t.dims[k]).collect();
        shape.push(size * size);
        let v = reshape_to(cx, v, &shape)?;
        let idx: Vec<i64> = (0..size).map(|i| i * (size + 1)).collect();
        let idx = cx.e.i64_vector(&idx)?;
        let axis = rest.len() as i64;
        let v = cx.e.op(
            "graph.gather",
            &[v, idx],
            vec![("axis", Attribute::i64(axis))],
        )?;
        let mut labels: Vec<char> = rest.iter().map(|&k| t.labels[k]).collect();
        labels.push(t.labels[p]);
        let mut dims: Vec<i64> = rest.iter().map(|&k| t.dims[k]).collect();
        dims.push(size);
        t = Term { v, labels, dims };
    }
}

/// Sum out the axes whose label is not in `keep`.
fn sum_out(cx: &mut Cx, t: Term, keep: &[char]) -> Res<Term> {
    let axes: Vec<i64> = (0..t.labels.len())
        .filter(|&k| !keep.contains(&t.labels[k]))
        .map(|k| k as i64)
        .collect();
    if axes.is_empty() {
        return Ok(t);
    }
    let v = reduce(cx, "graph.reduce_sum", t.v, &axes, false)?;
    let (labels, dims) = t
        .labels
        .iter()
        .zip(&t.dims)
        .filter(|(l, _)| keep.contains(l))
        .map(|(&l, &d)| (l, d))
        .unzip();
    Ok(Term { v, labels, dims })
}

/// Transpose `t` to the label order `order` (a permutation of its labels).
fn permute(cx: &mut Cx, t: Term, order: &[char]) -> Res<Term> {
    let perm: Vec<i64> = order
        .iter()
        .filter_map(|l| t.labels.iter().position(|m| m == l).map(|p| p as i64))
        .collect();
    let v = transpose_to(cx, t.v, &perm)?;
    let dims = perm.iter().map(|&p| t.dims[p as usize]).collect();
    Ok(Term {
        v,
        labels: order.to_vec(),
        dims,
    })
}

fn size_of(t: &Term, l: char) -> i64 {
    t.labels
        .iter()
        .position(|&m| m == l)
        .map_or(1, |p| t.dims[p])
}

/// Contract two terms (each free of repeated labels and of labels no one
/// else needs) into one whose labels are theirs that are in `keep`.
fn contract(cx: &mut Cx, n: &Node, a: Term, b: Term, keep: &[char]) -> Res<Term> {
    let in_b = |l: &char| b.labels.contains(l);
    let batch: Vec<char> = a
        .labels
        .iter()
        .copied()
        .filter(|l| in_b(l) && keep.contains(l))
        .collect();
    let summed: Vec<char> = a
        .labels
        .iter()
        .copied()
        .filter(|l| in_b(l) && !keep.contains(l))
        .collect();
    let a_only: Vec<char> = a.labels.iter().copied().filter(|l| !in_b(l)).collect();
    let b_only: Vec<char> = b
        .labels
        .iter()
        .copied()
        .filter(|l| !a.labels.contains(l))
        .collect();
    for l in batch.iter().chain(&summed) {
        if size_of(&a, *l) != size_of(&b, *l) {
            return Err(invalid(
                n,
                format!(
                    "label '{l}' has sizes {} and {}",
                    size_of(&a, *l),
                    size_of(&b, *l)
                ),
            ));
        }
    }
    let prod = |t: &Term, ls: &[char]| ls.iter().map(|&l| size_of(t, l)).product::<i64>();
    let (nb, m, k, nn) = (
        prod(&a, &batch),
        prod(&a, &a_only),
        prod(&a, &summed),
        prod(&b, &b_only),
    );
    let a_order: Vec<char> = [&batch[..], &a_only, &summed].concat();
    let b_order: Vec<char> = [&batch[..], &summed, &b_only].concat();
    let mut dims: Vec<i64> = batch.iter().map(|&l| size_of(&a, l)).collect();
    dims.extend(a_only.iter().map(|&l| size_of(&a, l)));
    dims.extend(b_only.iter().map(|&l| size_of(&b, l)));
    let a = permute(cx, a, &a_order)?;
    let b = permute(cx, b, &b_order)?;
    let av = reshape_to(cx, a.v, &[nb, m, k])?;
    let bv = reshape_to(cx, b.v, &[nb, k, nn])?;
    let prod = cx.e.op("graph.matmul", &[av, bv], vec![])?;
    let v = reshape_to(cx, prod, &dims)?;
    Ok(Term {
        v,
        labels: [&batch[..], &a_only, &b_only].concat(),
        dims,
    })
}

pub fn einsum(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let eq: String = n
        .s("equation", "")?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let specs: Vec<&str> = lhs.split(',').collect();
    let inputs = n.present_inputs();
    if specs.len() != inputs.len() {
        return Err(invalid(
            n,
            format!(
                "the equation '{eq}' has {} terms for {} inputs",
                specs.len(),
                inputs.len()
            ),
        ));
    }
    let mut terms = vec![];
    let mut ranks = vec![];
    for (&v, spec) in inputs.iter().zip(&specs) {
        let dims = static_shape(cx, n, v, "an operand")?;
        ranks.push(dims.len());
        terms.push((v, dims, *spec));
    }
    // Ellipsis dims align at the right: the widest covers them all.
    let max_ell = terms
        .iter()
        .filter(|(_, _, s)| s.contains("..."))
        .map(|(_, d, s)| d.len().saturating_sub(s.replace("...", "").chars().count()))
        .max()
        .unwrap_or(0);
    let mut ts = vec![];
    for (v, dims, spec) in terms {
        let labels = expand(n, spec, dims.len(), max_ell)?;
        ts.push(Term { v, labels, dims });
    }
    let ell: Vec<char> = (0..max_ell).map(ellipsis_label).collect();
    let out: Vec<char> = match &rhs {
        // An output without an ellipsis sums the ellipsis dims.
        Some(r) => {
            let e = if r.contains("...") { max_ell } else { 0 };
            expand(n, r, r.replace("...", "").chars().count() + e, max_ell)?
        }
        None => {
            // Implicit output: the ellipsis dims, then the letters used once, sorted.
            let mut count = std::collections::BTreeMap::new();
            for t in &ts {
                for &l in t.labels.iter().filter(|l| l.is_ascii_alphabetic()) {
                    *count.entry(l).or_insert(0) += 1;
                }
            }
            let mut o = ell.clone();
            o.extend(count.into_iter().filter(|&(_, c)| c == 1).map(|(l, _)| l));
            o
        }
    };
    let mut seen = vec![];
    for &l in &out {
        if seen.contains(&l) {
            return Err(invalid(n, format!("output label '{l}' repeats")));
        }
        if !ts.iter().any(|t| t.labels.contains(&l)) {
            return Err(invalid(n, format!("output label '{l}' is no input's")));
        }
        seen.push(l);
    }
    // Left to right: each step keeps the labels the output or a later term needs.
    let needed = |rest: &[Term]| -> Vec<char> {
        let mut k = out.clone();
        for t in rest {
            k.extend(&t.labels);
        }
        k
    };
    let mut pending: std::collections::VecDeque<Term> = ts.into();
    let Some(first) = pending.pop_front() else {
        return Err(invalid(n, "needs at least one input"));
    };
    let mut cur = diagonals(cx, n, first)?;
    while let Some(next) = pending.pop_front() {
        let mut keep = needed(pending.make_contiguous());
        keep.extend(&next.labels);
        let next = diagonals(cx, n, next)?;
        let mut keep_next = needed(pending.make_contiguous());
        keep_next.extend(&cur.labels);
        cur = sum_out(cx, cur, &keep)?;
        let next = sum_out(cx, next, &keep_next)?;
        let keep_pair = needed(pending.make_contiguous());
        cur = contract(cx, n, cur, next, &keep_pair)?;
    }
    let cur = sum_out(cx, cur, &out)?;
    let cur = permute(cx, cur, &out)?;
    one(cur.v)
}
