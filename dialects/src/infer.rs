//! Shape-inference helpers shared by many ops.

use ge_ir::opdef::InferCtx;
use ge_ir::{Dim, Type};

/// numpy broadcasting of two shapes.
///
/// Two different symbolic dims broadcast when one is shown to be at least
/// the other (`S` and `min(S, 64)`, a prefix of a 64-entry buffer sliced to
/// the sequence): where the broadcast is valid the two are equal or the
/// smaller is 1, so the larger is the result. Sizes where it is not valid
/// (`S = 70`: 64 against 70) are refused at run time by the kernels, which
/// check operand shapes against the result's (as onnxruntime refuses them).
///
/// Two symbolic dims neither shown to bound the other are refused, unless an
/// import is learning symbol equalities (`ge_ir::dim::equal`): then a mask
/// length `M` meeting `PAST+SEQ` is learned as `M = PAST+SEQ` (checked when
/// the inputs bind the symbols) and the result is `PAST+SEQ`.
pub fn broadcast_shapes(a: &[Dim], b: &[Dim]) -> Result<Vec<Dim>, String> {
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let x = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            Dim::Static(1)
        };
        let y = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            Dim::Static(1)
        };
        out.push(match (x, y) {
            (Dim::Static(1), d) | (d, Dim::Static(1)) => d,
            (p, q) if p == q => p,
            (Dim::Unknown, d) | (d, Dim::Unknown) => d,
            (p, q) => larger(p, q)
                .or_else(|| ge_ir::dim::equal::learn_equal(p, q))
                .ok_or_else(|| format!("cannot broadcast dimension {p} with {q}"))?,
        });
    }
    Ok(out)
}

/// The larger of two different dims, one of them symbolic, when one is
/// shown to be at least the other.
fn larger(p: Dim, q: Dim) -> Option<Dim> {
    if p.is_static() && q.is_static() {
        return None;
    }
    let (a, b) = (p.expr()?, q.expr()?);
    if a.provably_le(&b) {
        Some(q)
    } else if b.provably_le(&a) {
        Some(p)
    } else {
        None
    }
}

fn tensor_shape(t: Type, what: &str) -> Result<Vec<Dim>, String> {
    t.as_tensor()
        .and_then(|t| t.dims.as_ref().map(|d| d.to_vec()))
        .ok_or_else(|| format!("{what} must be a ranked tensor, got '{t}'"))
}

/// Result of an elementwise op over broadcast operands, with `dtype` (or the
/// first operand's element type).
pub fn broadcast_result(cx: &InferCtx, dtype: Option<ge_ir::DType>) -> Result<Vec<Type>, String> {
    let first = *cx.operand_types.first().ok_or("expects operands")?;
    // The common case (every operand of one static type): that type, without
    // building and interning it again.
    if let Some(t) = first.as_tensor() {
        let plain = t.encoding.is_none()
            && t.dims
                .as_ref()
                .is_some_and(|d| d.iter().all(|d| matches!(d, Dim::Static(_))));
        if plain
            && dtype.is_none_or(|d| d == t.dtype)
            && cx.operand_types.iter().all(|&o| o == first)
        {
            return Ok(vec![first]);
        }
    }
    let mut shape = tensor_shape(first, "operand #0")?;
    for (i, &t) in cx.operand_types.iter().enumerate().skip(1) {
        let s = tensor_shape(t, &format!("operand #{i}"))?;
        shape = broadcast_shapes(&shape, &s).map_err(|e| {
            format!("operands are not broadcast-compatible: '{first}' and '{t}' ({e})")
        })?;
    }
    let dt = dtype
        .or(first.dtype())
        .ok_or("operand has no element type")?;
    Ok(vec![Type::tensor(&shape, dt)])
}

/// Same type as operand #0.
pub fn same_as_first(cx: &InferCtx) -> Result<Vec<Type>, String> {
    Ok(vec![*cx
        .operand_types
        .first()
        .ok_or("expects an operand")?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy() {
        let s = |v: &[i64]| v.iter().map(|&d| Dim::Static(d)).collect::<Vec<_>>();
        assert_eq!(
            broadcast_shapes(&s(&[4, 1, 3]), &s(&[5, 1])).unwrap(),
            s(&[4, 5, 3])
        );
        assert!(broadcast_shapes(&s(&[2]), &s(&[3])).is_err());
        let b = Dim::sym("B");
        assert_eq!(
            broadcast_shapes(&[b, Dim::Static(1)], &s(&[7])).unwrap(),
            vec![b, Dim::Static(7)]
        );
        // A prefix of a 64-entry buffer sliced to the sequence meets the sequence.
        let seq = Dim::sym("S");
        let prefix = seq.min(Dim::Static(64));
        assert_eq!(
            broadcast_shapes(&[prefix], &[b, seq]).unwrap(),
            vec![b, seq]
        );
        assert_eq!(broadcast_shapes(&[seq], &[prefix]).unwrap(), vec![seq]);
        assert!(broadcast_shapes(&[b], &[seq]).is_err());
        assert!(broadcast_shapes(&[b], &s(&[7])).is_err());
    }
}
