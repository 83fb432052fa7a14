//! Folding: an op's own folder, else constant evaluation through its
//! reference semantics when every operand is a constant.

use crate::rewriter::Rewriter;
use ge_ir::attributes::Attribute;
use ge_ir::body::OpId;
use ge_ir::opdef::FoldResult;

/// Fold `op` if possible, replacing it. Returns whether it changed the IR.
pub fn try_fold(rw: &mut Rewriter, op: OpId, size_limit: usize) -> Result<bool, String> {
    let d = rw.body.op(op);
    let Some(def) = d.def else { return Ok(false) };
    if d.results().is_empty() {
        return Ok(false);
    }
    let consts: Vec<Option<Attribute>> = d.operands().iter().map(|&v| rw.constant_of(v)).collect();
    let results: Option<Vec<FoldResult>> = match def.fold {
        Some(f) => f(rw.body, op, &consts),
        None => None,
    };
    let results = match results {
        Some(r) => r,
        None => {
            if consts.is_empty() || consts.iter().any(|c| c.is_none()) {
                return Ok(false);
            }
            let out_elems: usize = rw
                .body
                .result_types(op)
                .iter()
                .map(|t| {
                    t.as_tensor()
                        .and_then(|t| t.num_elements())
                        .and_then(|n| usize::try_from(n).ok())
                        .unwrap_or(usize::MAX)
                })
                .fold(0usize, usize::saturating_add);
            if out_elems > size_limit {
                return Ok(false);
            }
            // Elementwise on splats: one element computed, a splat out; a byte
            // copy (reshape): the operand's bytes.
            if let Some(ds) = ge_ir::interp::fold_splats(rw.body, op, &consts)
                .or_else(|| ge_ir::interp::fold_bytes(rw.body, op, &consts))
            {
                ds.into_iter()
                    .map(|d| FoldResult::Attr(Attribute::dense(d)))
                    .collect()
            } else {
                match ge_ir::interp::fold_with_semantics(rw.body, op, &consts) {
                    Some(ts) => ts
                        .iter()
                        .map(|t| FoldResult::Attr(Attribute::dense(t.to_dense())))
                        .collect(),
                    None => return Ok(false),
                }
            }
        }
    };
    let own = rw.body.op(op).results().to_vec();
    if results.len() != own.len() {
        return Err(format!(
            "folder of '{}' returned {} results",
            def.name,
            results.len()
        ));
    }
    // A fold must keep every result's type exactly; "folds to itself" is no fold.
    for (r, &res) in results.iter().zip(&own) {
        let want = rw.body.value_type(res);
        let ok = match r {
            FoldResult::Value(v) => *v != res && rw.body.value_type(*v) == want,
            FoldResult::Attr(a) => a.value_type() == Some(want),
        };
        if !ok {
            return Ok(false);
        }
    }
    let mut values = Vec::with_capacity(results.len());
    for r in results {
        values.push(match r {
            FoldResult::Value(v) => v,
            FoldResult::Attr(a) => rw.constant(a)?,
        });
    }
    rw.replace_op(op, &values)?;
    Ok(true)
}
