//! Which run-time number each element of a small integer value is
//! (docs/architecture.md "Execution modes", value symbols). AffineGrid's
//! expanded form reads `H = Split(size)[2]` twice: as `Range(0, H)`'s limit
//! and, through `Slice(Concat(N, C, D, H, W), 2, 5)`, as a dim of
//! `ConstantOfShape`. Both dims are value symbols bound at run start; they
//! meet in a broadcast, so they must be the *same* symbol. The importer
//! traces each element of a value operand back through the ops that only
//! move elements (`data.concat`, `data.slice`, `data.split`, reshapes,
//! widening integer casts) to the element of the value it was read from
//! ([`Elem::Of`]), and a result dim that is exactly one such element (a
//! `ConstantOfShape` / `Expand` dim against 1, a `Range(0, L, 1)` length) gets
//! one symbol per element ([`Cx::element_symbol`]). Nothing is assumed about
//! the values: every `graph.specialize` kernel builds its concrete op from
//! the values it reads and refuses a result that differs from the plan, so a
//! wrong trace would be a run error, never a wrong buffer. (A negative
//! element is `Range`'s 0 and `ConstantOfShape`'s error: the two never both
//! succeed with different dims.)

use super::graph::Cx;
use ge_dialects::data::movement::{slice_axis, Concat, Slice, Split};
use ge_dialects::data::shape::{Identity, Reshape, Squeeze, Unsqueeze};
use ge_dialects::graph::elementwise::Cast;
use ge_dialects::graph::specialize::MAX_VALUE_ELEMENTS;
use ge_ir::body::{Body, ValueDef, ValueId};
use ge_ir::{DType, Dim};

/// One element of a small rank-0 or rank-1 integer value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    /// Known at import.
    Known(i64),
    /// Element `i` of value `v`, known at run time: two `Of` with the same
    /// `(v, i)` are one number.
    Of(ValueId, usize),
}

/// How many ops back an element is traced.
const MAX_DEPTH: usize = 16;

impl Cx<'_> {
    /// The elements of a small integer value (rank <= 1, static length of at
    /// most `MAX_VALUE_ELEMENTS`); `None` for any other value.
    pub(crate) fn elements(&self, v: ValueId) -> Option<Vec<Elem>> {
        elements(self, v, MAX_DEPTH)
    }

    /// The value symbol of run-time element `of` (named `name` when it is
    /// the first dim to use it): every dim that is exactly that element is
    /// this one symbol.
    pub(crate) fn element_symbol(&mut self, of: (ValueId, usize), name: &str) -> Dim {
        if let Some(&d) = self.elem_syms.get(&of) {
            return d;
        }
        let d = Dim::sym(&self.symbols.fresh(name));
        self.elem_syms.insert(of, d);
        d
    }
}

/// The element count of a small integer value of rank <= 1.
fn small_int(body: &Body, v: ValueId) -> Option<usize> {
    let t = body.value_type(v);
    let t = t.as_tensor()?;
    if t.dtype.is_float() || t.dtype == DType::I1 || t.dims.as_ref()?.len() > 1 {
        return None;
    }
    let n = t.num_elements()?;
    (n <= MAX_VALUE_ELEMENTS).then_some(usize::try_from(n).ok()?)
}

/// A cast that keeps every value of its operand.
fn widening(from: DType, to: DType) -> bool {
    from == to
        || (to.is_signed_int() && from.is_int() && to.byte_size() > from.byte_size())
        || (to.is_unsigned_int() && from.is_unsigned_int() && to.byte_size() > from.byte_size())
}

fn elements(cx: &Cx, v: ValueId, depth: usize) -> Option<Vec<Elem>> {
    let body = &*cx.e.b.body;
    let len = small_int(body, v)?;
    if let Some(c) = cx.e.const_value(v) {
        return Some(c.to_i64().into_iter().map(Elem::Known).collect());
    }
    let root = (0..len).map(|i| Elem::Of(v, i)).collect();
    let ValueDef::Result { op, index } = body.value(v).def else {
        return Some(root);
    };
    if depth == 0 {
        return Some(root);
    }
    let d = body.op(op);
    let traced = (|| -> Option<Vec<Elem>> {
        if Concat::is(d) {
            let mut out = vec![];
            for &p in d.operands() {
                out.extend(elements(cx, p, depth - 1)?);
            }
            return Some(out);
        }
        let x0 = *d.operands().first()?;
        let x = elements(cx, x0, depth - 1)?;
        if Slice::is(d) {
            let one = |name: &str, default: i64| -> Option<i64> {
                match d.attr(name) {
                    None => Some(default),
                    Some(a) => match a.as_i64_array()?.as_slice() {
                        [k] => Some(*k),
                        _ => None,
                    },
                }
            };
            let (s, e, st) = (one("starts", 0)?, one("ends", 0)?, one("steps", 1)?);
            let sl = slice_axis(x.len() as i64, s, e, st).ok()?;
            return (0..sl.count)
                .map(|i| {
                    x.get(usize::try_from(sl.start + i * sl.step).ok()?)
                        .copied()
                })
                .collect();
        }
        if Split::is(d) {
            // Result `index` starts after the parts before it.
            let mut off = 0;
            for &r in d.results().get(..index as usize)? {
                off += small_int(body, r)?;
            }
            return x.get(off..off + len).map(<[Elem]>::to_vec);
        }
        let moves = Squeeze::is(d) || Unsqueeze::is(d) || Reshape::is(d) || Identity::is(d);
        let dt = |w: ValueId| body.value_type(w).dtype();
        let cast = Cast::is(d) && matches!((dt(x0), dt(v)), (Some(a), Some(b)) if widening(a, b));
        (moves || cast).then_some(x)
    })();
    Some(traced.filter(|t| t.len() == len).unwrap_or(root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_casts_that_keep_every_value_keep_the_element() {
        assert!(widening(DType::I32, DType::I64));
        assert!(widening(DType::U8, DType::I32));
        assert!(widening(DType::I64, DType::I64));
        assert!(!widening(DType::I64, DType::I32));
        assert!(!widening(DType::I8, DType::U64));
        assert!(!widening(DType::I32, DType::F32));
    }
}
