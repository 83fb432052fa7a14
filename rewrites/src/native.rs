//! Patterns the rule language cannot express (variadic operands, multi-result
//! producers), written in Rust. Each is one `FnPattern`.

use crate::pattern::{FnPattern, Pattern};
use crate::rewriter::Rewriter;
use ge_dialects::data::movement::{Concat, Split};
use ge_ir::body::OpId;
use std::sync::Arc;

fn axis_of(rw: &Rewriter, op: OpId) -> Option<i64> {
    let d = rw.body.op(op);
    let a = d.attr("axis")?.as_int()?;
    let rank = rw
        .body
        .value_type(*d.results().first()?)
        .as_tensor()?
        .rank()? as i64;
    Some(if a < 0 { a + rank } else { a })
}

/// `concat(split(x)#0, …, split(x)#n-1)` along the split's axis is `x`.
fn split_concat(op: OpId, rw: &mut Rewriter) -> Result<bool, String> {
    let operands = rw.body.op(op).operands().to_vec();
    let Some(first) = operands.first() else {
        return Ok(false);
    };
    let Some(split) = rw.body.defining_op(*first) else {
        return Ok(false);
    };
    if !Split::is(rw.body.op(split)) || rw.body.op(split).results() != operands.as_slice() {
        return Ok(false);
    }
    let input = rw.body.operand(split, 0);
    let split_axis = {
        let d = rw.body.op(split);
        let a = d.attr("axis").and_then(|a| a.as_int()).unwrap_or(0);
        let rank = rw
            .body
            .value_type(input)
            .as_tensor()
            .and_then(|t| t.rank())
            .unwrap_or(0) as i64;
        if a < 0 {
            a + rank
        } else {
            a
        }
    };
    if axis_of(rw, op) != Some(split_axis)
        || rw.body.value_type(input) != rw.body.value_type(rw.body.result(op, 0))
    {
        return Ok(false);
    }
    rw.replace_op(op, &[input])?;
    Ok(true)
}

/// Concat operands that are themselves concats along the same axis (with one
/// use) are spliced in: any number of operands at any position.
fn flatten_concat(op: OpId, rw: &mut Rewriter) -> Result<bool, String> {
    let Some(axis) = axis_of(rw, op) else {
        return Ok(false);
    };
    let operands = rw.body.op(op).operands().to_vec();
    let mut flat = vec![];
    let mut changed = false;
    for v in operands {
        match rw.body.defining_op(v) {
            Some(inner)
                if Concat::is(rw.body.op(inner))
                    && axis_of(rw, inner) == Some(axis)
                    && rw.body.users(v) == [op] =>
            {
                flat.extend(rw.body.op(inner).operands().iter().copied());
                changed = true;
            }
            _ => flat.push(v),
        }
    }
    if !changed {
        return Ok(false);
    }
    rw.modify(op, |b| b.set_operands(op, &flat));
    Ok(true)
}

/// The native canonicalization patterns.
pub fn canonical() -> Vec<Arc<dyn Pattern>> {
    vec![
        Arc::new(FnPattern {
            name: "split_concat",
            root: Some(Concat::NAME),
            benefit: 2,
            labels: vec!["canonical".into()],
            f: split_concat,
        }),
        Arc::new(FnPattern {
            name: "flatten_concat",
            root: Some(Concat::NAME),
            benefit: 1,
            labels: vec!["canonical".into()],
            f: flatten_concat,
        }),
    ]
}
