//! Value symbols (issue 15 item 3, docs/architecture.md "Execution modes"):
//! the result dims of a `graph.specialize` that neither the model declares
//! nor the operands' dims decide become fresh symbols, which the runtime
//! binds at run start by running the concrete op's own `infer` on the values
//! (graph inputs). What the importer must know beforehand is each result's
//! rank and element type; where the model does not declare them they follow
//! from the concrete op, the operands' types and the value operands' lengths.

use ge_ir::attributes::Attribute;
use ge_ir::{DType, Dim, Type};

/// What the importer knows of a value operand before the run: its length.
pub struct ValueOperand<'a> {
    /// The attribute it fills.
    pub attr: &'a str,
    /// Its element count (static: the verifier of `graph.specialize` wants it).
    pub len: usize,
}

/// Rank and element type of each result of concrete op `op` on `data`,
/// with `values` read at run time and `attrs` known now; `None` where they
/// depend on the values themselves.
pub fn result_ranks(
    op: &str,
    data: &[Type],
    values: &[ValueOperand],
    attrs: &[(&str, Attribute)],
    num_results: usize,
) -> Option<Vec<(usize, DType)>> {
    if op == "graph.range" {
        // No data operand: one dim, the element type its `to`.
        let to = attrs.iter().find(|(k, _)| *k == "to")?.1.as_type()?;
        return Some(vec![(1, to.dtype()?)]).filter(|_| num_results == 1);
    }
    let x = data.first()?.as_tensor()?;
    let (rank, dt) = (x.dims.as_ref()?.len(), x.dtype);
    let len = |name: &str| values.iter().find(|v| v.attr == name).map(|v| v.len);
    let int = |name: &str| {
        attrs
            .iter()
            .find(|(k, _)| *k == name)
            .and_then(|(_, a)| a.as_int())
    };
    let same = vec![(rank, dt); num_results];
    Some(match op {
        "data.reshape" => vec![(len("shape")?, dt)],
        "data.expand" => vec![(len("shape")?.max(rank), dt)],
        "data.tile" | "data.slice" | "graph.pad" | "graph.resize" | "data.split" => same,
        "graph.topk" => vec![(rank, dt), (rank, DType::I64)],
        "data.squeeze" => vec![(rank.checked_sub(len("axes")?)?, dt)],
        "data.unsqueeze" => vec![(rank + len("axes")?, dt)],
        r if r.starts_with("graph.reduce_") => {
            let n = len("axes")?;
            let keep = int("keepdims").unwrap_or(1) != 0;
            let noop = int("noop_with_empty_axes").unwrap_or(0) != 0;
            let out = match (keep, n) {
                (true, _) => rank,
                (false, 0) if noop => rank,
                (false, 0) => 0,
                // Repeated axes would reduce fewer dims: the runtime's
                // binding then reports the rank mismatch.
                (false, n) => rank.checked_sub(n)?,
            };
            vec![(out, dt)]
        }
        _ => return None,
    })
    .filter(|v| v.len() == num_results)
}

/// Whether every result of concrete op `op` has the first result's dims
/// (TopK's values and indices): their value symbols are then one set, so a
/// use of both (boxes gathered by the indices plus the values) type-checks.
pub fn results_share_dims(op: &str) -> bool {
    op == "graph.topk"
}

/// The result dims of a `data.expand` of dims `x` to a target whose
/// elements are partly known at import (`target[i]` `None`: read at run
/// time): a known element other than 1 is the dim, 1 keeps `x`'s dim, and
/// an unknown element against a static dim other than 1 can only be 1 or
/// that dim; `None` where the values decide (a fresh value symbol). The
/// runtime checks the concrete op's result against these types, so a wrong
/// target is a run error.
pub fn expand_dims(x: &[Dim], target: &[Option<i64>]) -> Vec<Option<Dim>> {
    let r = x.len().max(target.len());
    (0..r)
        .map(|i| {
            let xd = (i + x.len()).checked_sub(r).map(|j| x[j]);
            let t = (i + target.len()).checked_sub(r).map(|j| target[j]);
            match (xd, t) {
                (Some(Dim::Unknown), _) => None,
                (Some(xd), None | Some(Some(1))) => Some(xd),
                (None, Some(Some(1))) => Some(Dim::Static(1)),
                (_, Some(Some(k))) if k >= 0 => Some(Dim::Static(k)),
                (Some(Dim::Static(s)), Some(None)) if s != 1 => Some(Dim::Static(s)),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dims: &[i64]) -> Type {
        Type::tensor_static(dims, DType::F32)
    }

    #[test]
    fn expand_dims_keep_what_the_known_elements_decide() {
        let s = Dim::sym("S");
        // [2, 3] to Concat(N, [2, 3]): N is read at run time.
        assert_eq!(
            expand_dims(&[Dim::Static(2), Dim::Static(3)], &[None, Some(2), Some(3)]),
            vec![None, Some(Dim::Static(2)), Some(Dim::Static(3))]
        );
        // 1 keeps the operand's dim; an unknown element against 5 is 5.
        assert_eq!(
            expand_dims(&[s, Dim::Static(5)], &[Some(1), None]),
            vec![Some(s), Some(Dim::Static(5))]
        );
        // Against a symbol or 1 the value decides; a negative one is the run's error.
        assert_eq!(
            expand_dims(&[s, Dim::Static(1)], &[None, None, Some(-2)]),
            vec![None, None, None]
        );
    }

    #[test]
    fn ranks_follow_the_value_lengths() {
        let shape = [ValueOperand {
            attr: "shape",
            len: 3,
        }];
        assert_eq!(
            result_ranks("data.reshape", &[t(&[2, 6])], &shape, &[], 1),
            Some(vec![(3, DType::F32)])
        );
        assert_eq!(
            result_ranks("data.expand", &[t(&[2, 6, 1, 1])], &shape, &[], 1),
            Some(vec![(4, DType::F32)])
        );
        let axes = [ValueOperand {
            attr: "axes",
            len: 2,
        }];
        let keep0 = [("keepdims", Attribute::i64(0))];
        assert_eq!(
            result_ranks("graph.reduce_sum", &[t(&[2, 3, 4])], &axes, &keep0, 1),
            Some(vec![(1, DType::F32)])
        );
        assert_eq!(
            result_ranks("graph.reduce_sum", &[t(&[2, 3, 4])], &axes, &[], 1),
            Some(vec![(3, DType::F32)])
        );
        assert_eq!(
            result_ranks("graph.topk", &[t(&[2, 3])], &[], &[], 2),
            Some(vec![(2, DType::F32), (2, DType::I64)])
        );
        // Not known: an op without a rule, or more axes than dims.
        assert_eq!(result_ranks("graph.nope", &[t(&[2])], &[], &[], 1), None);
        assert_eq!(
            result_ranks("data.squeeze", &[t(&[2])], &axes, &[], 1),
            None
        );
    }
}
