//! Shape values tracked symbolically at import (onnxruntime's
//! `symbolic_shape_infer.py` idea). An ONNX shape subgraph — `Shape`, `Size`,
//! then `Gather`/`Slice`/`Concat`/`Unsqueeze`/`Squeeze`/`Cast`/arithmetic on
//! the resulting integer vectors — is evaluated on [`Dim`] expressions as it
//! is imported. The IR still gets the real ops (`data.shape_of` …), but:
//!
//! - a value that is a function of static dims alone becomes a constant
//!   (the real ops are then dead and DCE removes them), and
//! - consumers that need the value at compile time (`Reshape`, `Expand`,
//!   `ConstantOfShape`, `Range`, `Slice`) read the dims from here, so their
//!   results keep symbolic dims such as `tensor<Bx(S*12)x64xf32>`.
//!
//! Only rank-0 and rank-1 integer tensors are tracked (what shape
//! computations use). ONNX integer `Div` truncates towards zero and `Mod`
//! follows the divisor's sign; on the non-negative values that dims are,
//! both agree with the floor division and Euclidean remainder of [`Dim`].

use super::graph::{Cx, Node, Res};
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::Dim;

/// An integer tensor of rank 0 or 1 whose elements are dims.
#[derive(Clone, Debug, PartialEq)]
pub struct SymVal {
    /// `[]` (a scalar) or `[n]`.
    pub shape: Vec<usize>,
    pub elems: Vec<Dim>,
}

impl SymVal {
    fn vector(elems: Vec<Dim>) -> SymVal {
        SymVal {
            shape: vec![elems.len()],
            elems,
        }
    }
    fn statics(&self) -> Option<Vec<i64>> {
        self.elems.iter().map(|d| d.as_static()).collect()
    }
}

/// The ops whose outputs are tracked when an input is a tracked shape value.
const TRACKED: &[&str] = &[
    "Shape",
    "Size",
    "Gather",
    "Slice",
    "Concat",
    "Unsqueeze",
    "Squeeze",
    "Reshape",
    "Cast",
    "Identity",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Mod",
    "Min",
    "Max",
    "Neg",
    "Equal",
    "Less",
    "LessOrEqual",
    "Greater",
    "GreaterOrEqual",
    "Where",
];

impl Cx<'_> {
    /// The value of an integer tensor as dims: a constant (rank <= 1), or a
    /// shape value tracked symbolically.
    pub fn sym_value(&self, v: ValueId) -> Option<SymVal> {
        if let Some(s) = self.sym.get(&v) {
            return Some(s.clone());
        }
        let t = self.e.const_value(v)?;
        if t.shape.len() > 1 || t.dtype.is_float() {
            return None;
        }
        Some(SymVal {
            shape: t.shape.clone(),
            elems: t.to_i64().into_iter().map(Dim::Static).collect(),
        })
    }

    /// The elements of a shape operand as dims, or the not-constant error
    /// naming `what`.
    pub fn sym_dims(&self, v: ValueId, what: &str) -> Res<Vec<Dim>> {
        self.sym_value(v)
            .map(|s| s.elems)
            .ok_or_else(|| self.not_constant(v, what))
    }
}

/// After a node is mapped: compute its outputs symbolically when it is a
/// tracked op on tracked values; fold them to constants when every element
/// is static, else remember them.
pub fn propagate(cx: &mut Cx, n: &Node, results: &mut [ValueId]) -> Res<()> {
    if !TRACKED.contains(&n.op_type.as_str()) || results.len() != 1 {
        return Ok(());
    }
    let starts_shape = matches!(n.op_type.as_str(), "Shape" | "Size");
    if !starts_shape && !n.present_inputs().iter().any(|v| cx.sym.contains_key(v)) {
        return Ok(());
    }
    let Some(out) = eval(cx, n)? else {
        return Ok(());
    };
    let r = results[0];
    let dt = cx.e.dtype(r)?;
    if dt.is_float() {
        return Ok(());
    }
    match out.statics() {
        Some(vals) => {
            results[0] =
                cx.e.constant(&Tensor::from_i64(out.shape.clone(), dt, vals))?;
        }
        None => {
            cx.sym.insert(r, out);
        }
    }
    Ok(())
}

/// The symbolic value of the node's output (`None` when an input is not
/// known or the case is not one that shape computations use).
fn eval(cx: &Cx, n: &Node) -> Res<Option<SymVal>> {
    let val = |i: usize| n.opt_input(i).and_then(|v| cx.sym_value(v));
    let ints = |i: usize| val(i).and_then(|s| s.statics());
    Ok(match n.op_type.as_str() {
        "Shape" => {
            let dims = cx.e.dims(n.input(0)?)?;
            let r = dims.len() as i64;
            let clamp = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
            let (s, e) = (clamp(n.i("start", 0)?), clamp(n.i("end", r)?));
            Some(SymVal::vector(
                dims.get(s..e.max(s)).unwrap_or(&[]).to_vec(),
            ))
        }
        "Size" => {
            let count = ge_ir::dim::product(&cx.e.dims(n.input(0)?)?);
            (count != Dim::Unknown).then(|| SymVal {
                shape: vec![],
                elems: vec![count],
            })
        }
        "Identity" | "Cast" => val(0),
        "Neg" => val(0).map(|s| SymVal {
            elems: s.elems.iter().map(|d| d.mul_const(-1)).collect(),
            ..s
        }),
        "Gather" => match (val(0), val(1)) {
            (Some(data), Some(idx)) => gather(&data, idx),
            _ => None,
        },
        "Slice" => {
            let Some(data) = val(0).filter(|d| d.shape.len() == 1) else {
                return Ok(None);
            };
            let (starts, ends, steps) = if n.opset >= 10 {
                (
                    ints(1),
                    ints(2),
                    n.opt_input(4).map_or(Some(vec![1]), |_| ints(4)),
                )
            } else {
                (n.ints("starts"), n.ints("ends"), Some(vec![1]))
            };
            match (
                starts.as_deref().map(first),
                ends.as_deref().map(first),
                steps.as_deref().map(first),
            ) {
                (Some([s]), Some([e]), Some([st])) => slice(&data, s, e, st),
                _ => None,
            }
        }
        "Concat" => {
            let mut elems = vec![];
            for v in n.present_inputs() {
                match cx.sym_value(v) {
                    Some(s) if s.shape.len() == 1 => elems.extend(s.elems),
                    _ => return Ok(None),
                }
            }
            Some(SymVal::vector(elems))
        }
        "Unsqueeze" => val(0)
            .filter(|s| s.shape.is_empty())
            .map(|s| SymVal::vector(s.elems)),
        "Squeeze" => val(0).filter(|s| s.shape == [1]).map(|s| SymVal {
            shape: vec![],
            elems: s.elems,
        }),
        "Reshape" => match (val(0), ints(1)) {
            (Some(s), Some(t))
                if t.len() <= 1
                    && s.elems.len()
                        == t.first()
                            .map_or(1, |&x| if x < 0 { s.elems.len() as i64 } else { x })
                            as usize =>
            {
                Some(SymVal {
                    shape: if t.is_empty() {
                        vec![]
                    } else {
                        vec![s.elems.len()]
                    },
                    elems: s.elems,
                })
            }
            _ => None,
        },
        // TorchScript's `x.expand(b, -1, s)`: the target is
        // `Where(Equal(shape, -1), 1, shape)` over a tracked shape.
        "Where" => match (val(0), val(1), val(2)) {
            (Some(c), Some(a), Some(b)) => select(c, a, b),
            _ => None,
        },
        op => match (val(0), val(1)) {
            (Some(a), Some(b)) => binary(op, a, b),
            _ => None,
        },
    })
}

/// `Equal` of two dims as 1 / 0 when decided (`B` is never `-1`: sizes
/// are not negative), `?` otherwise.
fn equal(a: Dim, b: Dim) -> Dim {
    if a == b {
        return Dim::Static(1);
    }
    let below = |x: Dim, y: Dim| match (x.add(Dim::Static(1)).expr(), y.expr()) {
        (Some(x1), Some(y)) => x1.provably_le(&y),
        _ => false,
    };
    if below(a, b) || below(b, a) {
        Dim::Static(0)
    } else {
        Dim::Unknown
    }
}

/// `a < b` as 1 / 0 when decided for every value of the symbols, `?`
/// otherwise (an `If` on it is then not folded at import).
fn less(a: Dim, b: Dim) -> Dim {
    let le = |x: Dim, y: Dim| match (x.expr(), y.expr()) {
        (Some(x), Some(y)) => x.provably_le(&y),
        _ => false,
    };
    if le(a.add(Dim::Static(1)), b) {
        Dim::Static(1)
    } else if le(b, a) {
        Dim::Static(0)
    } else {
        Dim::Unknown
    }
}

/// `a <= b`, decided as [`less`] is.
fn less_equal(a: Dim, b: Dim) -> Dim {
    match less(b, a) {
        Dim::Static(v) => Dim::Static(1 - v),
        d => d,
    }
}

/// `Where` with a known condition over rank <= 1 values (numpy broadcasting).
fn select(cond: SymVal, a: SymVal, b: SymVal) -> Option<SymVal> {
    let rank1 = [&cond, &a, &b].iter().any(|v| v.shape.len() == 1);
    let cond = cond.statics()?;
    let lens = [cond.len(), a.elems.len(), b.elems.len()];
    let len = lens.iter().copied().max()?;
    if lens.iter().any(|&l| l != len && l != 1) {
        return None;
    }
    let at = |v: &[Dim], i: usize| v[i.min(v.len() - 1)];
    let elems = (0..len)
        .map(|i| {
            if cond[i.min(cond.len() - 1)] != 0 {
                at(&a.elems, i)
            } else {
                at(&b.elems, i)
            }
        })
        .collect();
    Some(SymVal {
        shape: if rank1 { vec![len] } else { vec![] },
        elems,
    })
}

/// `Gather` of a tracked vector at static indices.
fn gather(data: &SymVal, idx: SymVal) -> Option<SymVal> {
    let (Some(ix), [len]) = (idx.statics(), data.shape.as_slice()) else {
        return None;
    };
    let len = *len as i64;
    let mut elems = vec![];
    for i in ix {
        let j = if i < 0 { i + len } else { i };
        elems.push(*data.elems.get(usize::try_from(j).ok()?)?);
    }
    Some(SymVal {
        shape: idx.shape,
        elems,
    })
}

/// One-axis `Slice` of a tracked vector (start, end, step; ONNX clamping).
fn slice(data: &SymVal, s: i64, e: i64, st: i64) -> Option<SymVal> {
    if st == 0 {
        return None;
    }
    let len = data.elems.len() as i64;
    let norm = |v: i64, lo: i64, hi: i64| (if v < 0 { v + len } else { v }).clamp(lo, hi);
    let mut elems = vec![];
    if st > 0 {
        let (mut i, e) = (norm(s, 0, len), norm(e, 0, len));
        while i < e {
            elems.push(data.elems[i as usize]);
            i += st;
        }
    } else {
        let (mut i, e) = (norm(s, -1, len - 1), norm(e, -1, len - 1));
        while i > e {
            elems.push(data.elems[i as usize]);
            i += st;
        }
    }
    Some(SymVal::vector(elems))
}

/// Elementwise integer arithmetic `op` on tracked values (numpy
/// broadcasting of rank <= 1 operands).
fn binary(op: &str, a: SymVal, b: SymVal) -> Option<SymVal> {
    let f: fn(Dim, Dim) -> Dim = match op {
        "Add" => Dim::add,
        "Sub" => Dim::sub,
        "Mul" => Dim::mul,
        "Div" => Dim::div,
        "Mod" => Dim::rem,
        "Min" => Dim::min,
        "Max" => Dim::max,
        "Equal" => equal,
        "Less" => less,
        "LessOrEqual" => less_equal,
        "Greater" => |a, b| less(b, a),
        "GreaterOrEqual" => |a, b| less_equal(b, a),
        _ => return None,
    };
    let (la, lb) = (a.elems.len(), b.elems.len());
    let len = if la == 1 { lb } else { la };
    if la != lb && la != 1 && lb != 1 {
        return None;
    }
    let elems: Vec<Dim> = (0..len)
        .map(|i| f(a.elems[i.min(la - 1)], b.elems[i.min(lb - 1)]))
        .collect();
    if elems.contains(&Dim::Unknown) {
        return None;
    }
    let shape = if a.shape.len() >= b.shape.len() {
        a.shape
    } else {
        b.shape
    };
    Some(SymVal {
        shape: if shape.is_empty() { vec![] } else { vec![len] },
        elems,
    })
}

/// A one-element slice of a one-element list, for the `Slice` pattern above.
fn first(v: &[i64]) -> [i64; 1] {
    [v.first().copied().unwrap_or(0)]
}

/// The dims of a Reshape target with ONNX's `0` (copy) and `-1` (infer)
/// resolved against `input`; `Err` names what cannot be resolved.
pub fn resolve_reshape(input: &[Dim], target: &[Dim], allowzero: bool) -> Result<Vec<Dim>, String> {
    let mut out = vec![];
    let mut infer = None;
    for (i, &d) in target.iter().enumerate() {
        match d {
            Dim::Static(0) if !allowzero => out.push(*input.get(i).ok_or_else(|| {
                format!("entry #{i} is 0 but the input has rank {}", input.len())
            })?),
            Dim::Static(-1) => {
                if infer.replace(i).is_some() {
                    return Err("the target has two -1 entries".into());
                }
                out.push(Dim::Unknown);
            }
            d => out.push(d),
        }
    }
    if let Some(i) = infer {
        out[i] = ge_ir::dim::solve_reshape_dim(input, &out, i);
        if out[i] == Dim::Unknown {
            return Err(format!(
                "its -1 entry cannot be solved: the {} elements of the input are not a multiple of the other dims",
                ge_ir::dim::product(input)
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_decide_only_what_holds_for_every_value_of_the_symbols() {
        let s = Dim::sym("S");
        let (zero, three, four) = (Dim::Static(0), Dim::Static(3), Dim::Static(4));
        assert_eq!(less(s, s.add(Dim::Static(1))), Dim::Static(1));
        assert_eq!(less(s, s), Dim::Static(0));
        assert_eq!(less_equal(s, s), Dim::Static(1));
        // Sizes are not negative.
        assert_eq!(less_equal(zero, s), Dim::Static(1));
        assert_eq!(less(s, zero), Dim::Static(0));
        // S may be on either side of 4: not decided, the If is not folded.
        assert_eq!(less(s, four), Dim::Unknown);
        assert_eq!(less_equal(four, s), Dim::Unknown);
        assert_eq!(less(three, four), Dim::Static(1));
        assert_eq!(less_equal(four, three), Dim::Static(0));
        assert_eq!(
            binary(
                "Greater",
                SymVal::vector(vec![four]),
                SymVal::vector(vec![three])
            )
            .map(|v| v.elems),
            Some(vec![Dim::Static(1)])
        );
    }
}
