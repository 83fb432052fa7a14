//! Ops whose result *size* depends on the values of their operands (issue
//! 15 item 3, docs/architecture.md "Execution modes", size symbols): the
//! data-dependent dim is a symbol named by the op (`count`), bound to the
//! actual count right after the op ran; the op also returns that count as a
//! scalar, which is where the runtime reads it. Memory is planned at the
//! symbol's upper bound (`ge.symbol_bounds`), which the importer sets from
//! the operand's size.

use super::{operand, ranked_dims};
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim, Type};

/// The size symbol an op names in its `count` attribute: one plain symbol.
pub fn size_symbol(text: &str) -> Result<Dim, String> {
    let d = ge_ir::dim::parse_dims(text).map_err(|e| format!("attribute 'count': {e}"))?;
    match d.as_slice() {
        [d] if d.as_symbol().is_some() => Ok(*d),
        _ => Err(format!(
            "attribute 'count' must be one symbol (the size bound after the op ran), not '{text}'"
        )),
    }
}

// ---- nonzero ---------------------------------------------------------------

fn infer_nonzero(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let x = operand(cx, 0)?;
    let rank = ranked_dims(x, "operand 'input'")?.len();
    let text = NonZero::attrs(cx)
        .count()
        .ok_or("requires attribute 'count' (a symbol)")?;
    let k = size_symbol(text)?;
    Ok(vec![
        Type::tensor(&[Dim::Static(rank as i64), k], DType::I64),
        Type::tensor(&[], DType::I64),
    ])
}

/// The coordinates of the non-zero elements of `x`, as `[rank, count]`
/// row-major (ONNX NonZero: coordinates in row-major order of the elements).
pub fn nonzero_coords(x: &Tensor) -> (Vec<i64>, usize) {
    let rank = x.shape.len();
    let mut coords: Vec<Vec<i64>> = vec![vec![]; rank];
    let mut idx = vec![0usize; rank];
    let mut count = 0;
    for i in 0..x.len() {
        if x.get_f(i) != 0.0 {
            super::unravel(i, &x.shape, &mut idx);
            for (k, c) in coords.iter_mut().enumerate() {
                c.push(idx[k] as i64);
            }
            count += 1;
        }
    }
    (coords.into_iter().flatten().collect(), count)
}

fn sem_nonzero(_: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let (flat, count) = nonzero_coords(x[0]);
    Ok(vec![
        Tensor::from_i64(vec![x[0].shape.len(), count], DType::I64, flat),
        Tensor::from_i64(vec![], DType::I64, vec![count as i64]),
    ])
}

def_op! {
    /// The coordinates of the non-zero elements (ONNX NonZero), a data-dependent size
    ///
    /// `%i, %n = data.nonzero %x {count = "K"} : (tensor<3x4xf32>) -> (tensor<2xKxi64>, tensor<i64>)`:
    /// `K` is a size symbol — at most the element count of `%x` (its bound in
    /// `ge.symbol_bounds`), bound to `%n` after the op ran.
    pub NonZero = "data.nonzero" {
        operands { input: AnyTensor },
        results { indices: AnyTensor, size: AnyTensor },
        attrs {
            /// the size symbol of the result's second dim
            count: Str,
        },
        traits [Pure],
        format: "operands attr-dict `:` functional-type(operands, results)",
        infer: infer_nonzero,
        semantics: sem_nonzero,
        // Not free: it reads every element of its operand (the count is data).
        interfaces [Cost::ELEMENTWISE, CPU_ENGINES, PrecisionClass::Gray, KernelFamily::Index],
        es(none = "an importer op for ONNX NonZero over values known at run time"),
    }
}

/// The ops that bind a size symbol, with the index of the result holding
/// the count: what the runtime looks for in a kernel. Each names its
/// symbol in a `count` attribute, and its first result has that symbol as
/// a dim (`data.nonzero`, `data.unique`, `data.non_max_suppression`).
pub fn count_result(name: &str) -> Option<usize> {
    match name {
        n if n == NonZero::NAME => Some(1),
        n if n == super::unique::Unique::NAME => Some(4),
        n if n == super::nms::NonMaxSuppression::NAME => Some(1),
        _ => None,
    }
}

/// Whether `d` mentions the symbol `sym` (a plain-symbol dim).
pub fn mentions(d: Dim, sym: Dim) -> bool {
    let (Some(e), Some(s)) = (d.expr(), sym.as_symbol()) else {
        return false;
    };
    let mut v = vec![];
    e.symbols(&mut v);
    v.contains(&s)
}

/// The static upper bound of the size symbol of size op `o` from its
/// operands' types (`None` when they are dynamic).
fn size_bound(body: &ge_ir::Body, o: ge_ir::OpId) -> Option<i64> {
    let d = body.op(o);
    let ty = |i: usize| d.operands().get(i).map(|&v| body.value_type(v));
    match d.name.as_str() {
        n if n == super::unique::Unique::NAME => super::unique::unique_bound(d, ty(0)?),
        n if n == super::nms::NonMaxSuppression::NAME => super::nms::nms_bound(ty(1)?),
        _ => ty(0)?
            .as_tensor()?
            .dims
            .as_ref()?
            .iter()
            .try_fold(1i64, |a, d| a.checked_mul(d.as_static()?)),
    }
}

/// The size ops of `m`'s functions, for reports (ge-atc's `mode`, ge-run
/// `--info`): `(symbol, "OP at LOC")`, sorted by symbol.
pub fn size_ops(m: &ge_ir::Module) -> Vec<(String, String)> {
    let pick = |d: &ge_ir::OpData| count_result(d.name.as_str()).is_some();
    let mut out: Vec<(String, String)> = crate::graph::specialize::function_ops(m, pick)
        .into_iter()
        .map(|(body, o)| {
            let d = body.op(o);
            let sym = d
                .attr("count")
                .and_then(|a| a.as_str().map(str::to_string))
                .unwrap_or_else(|| "?".into());
            (sym, format!("{} at {}", d.name.as_str(), d.loc))
        })
        .collect();
    out.sort();
    out
}

/// Give every size symbol of `m` without an upper bound in
/// `ge.symbol_bounds` the element count of its op's operand (static dims;
/// a dynamic operand is left unbounded, which the runtime refuses at load):
/// what an importer calls after emitting size ops.
pub fn bound_size_symbols(m: &mut ge_ir::Module) {
    let mut found: Vec<(String, i64)> = vec![];
    let pick = |d: &ge_ir::OpData| count_result(d.name.as_str()).is_some();
    for (body, o) in crate::graph::specialize::function_ops(m, pick) {
        let d = body.op(o);
        let Some(sym) = d.attr("count").and_then(|a| a.as_str().map(str::to_string)) else {
            continue;
        };
        if let Some(n) = size_bound(body, o) {
            found.push((sym, n));
        }
    }
    if found.is_empty() {
        return;
    }
    let op = m.op;
    let mut dict = m
        .outer
        .op(op)
        .attr("ge.symbol_bounds")
        .and_then(|a| a.as_dict())
        .unwrap_or_else(ge_ir::attributes::AttrDict::empty);
    for (sym, n) in found {
        if dict.get(&sym).is_none() {
            dict = dict.with(ge_ir::Ident::new(&sym), ge_ir::Attribute::i64(n));
        }
    }
    m.outer
        .set_attr(op, "ge.symbol_bounds", ge_ir::Attribute::dict(dict));
}

pub static OPS: &[&OpDef] = &[&NON_ZERO];
