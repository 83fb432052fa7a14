//! `data.unique` (ONNX Unique, opset 11+): the distinct elements — or the
//! distinct slices along `axis` — of a tensor, a data-dependent size (issue
//! 15 item 3, docs/architecture.md "Execution modes", size symbols). The
//! number of distinct slices is the size symbol named by `count`, at most
//! the length of the operand (flattened, or along `axis`): its bound. The
//! algorithm ([`unique_plan`]) is shared by the reference semantics and the
//! native kernel (`runtime/src/kernels/unique.rs`), which only moves bytes.

use super::size::size_symbol;
use super::{norm_axis, operand, ranked_dims};
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{Data, Tensor};
use ge_ir::{DType, Type};
use std::cmp::Ordering;

/// An order-preserving integer key of a float: `-0.0` equals `0.0` and
/// every NaN is one value, after every number (numpy's `unique`), so the
/// order is total and a sort never sees an inconsistent comparison.
pub fn float_key(x: f64) -> i64 {
    let x = if x.is_nan() {
        f64::NAN
    } else if x == 0.0 {
        0.0
    } else {
        x
    };
    let b = x.to_bits() as i64;
    if b < 0 {
        b ^ i64::MAX
    } else {
        b
    }
}

/// An order-preserving key of an integer element of `dtype` (an unsigned
/// 64-bit value above `i64::MAX` is held wrapped: flip its sign bit).
pub fn int_key(dtype: DType, x: i64) -> i64 {
    if dtype == DType::U64 {
        x ^ i64::MIN
    } else {
        x
    }
}

/// What Unique found: for each distinct slice in output order the index of
/// its first occurrence and its count, and for every slice of the operand
/// the output position of its value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UniquePlan {
    pub first: Vec<usize>,
    pub counts: Vec<usize>,
    pub inverse: Vec<usize>,
}

/// Unique over `keys` (row-major, `[outer, n, inner]`: slice `j` is every
/// `keys[o][j][i]`, compared lexicographically in `(o, i)` order, numpy's
/// `unique(axis=…)`); `sorted` orders the distinct slices ascending, else by
/// first occurrence.
pub fn unique_plan(keys: &[i64], outer: usize, n: usize, inner: usize, sorted: bool) -> UniquePlan {
    let at = |j: usize, o: usize, i: usize| keys[(o * n + j) * inner + i];
    let cmp = |a: usize, b: usize| -> Ordering {
        for o in 0..outer {
            for i in 0..inner {
                match at(a, o, i).cmp(&at(b, o, i)) {
                    Ordering::Equal => {}
                    c => return c,
                }
            }
        }
        Ordering::Equal
    };
    // A stable sort: each run of equal slices starts at its first occurrence.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    let mut groups: Vec<(usize, usize)> = vec![]; // (first, count)
    let mut group_of = vec![0usize; n];
    for (p, &j) in order.iter().enumerate() {
        match groups.last_mut() {
            Some(g) if p > 0 && cmp(order[p - 1], j) == Ordering::Equal => g.1 += 1,
            _ => groups.push((j, 1)),
        }
        group_of[j] = groups.len() - 1;
    }
    // Output position of each group.
    let mut pos: Vec<usize> = (0..groups.len()).collect();
    if !sorted {
        let mut by_first: Vec<usize> = (0..groups.len()).collect();
        by_first.sort_by_key(|&g| groups[g].0);
        for (p, &g) in by_first.iter().enumerate() {
            pos[g] = p;
        }
    }
    let mut plan = UniquePlan {
        first: vec![0; groups.len()],
        counts: vec![0; groups.len()],
        inverse: group_of.iter().map(|&g| pos[g]).collect(),
    };
    for (g, &(first, count)) in groups.iter().enumerate() {
        plan.first[pos[g]] = first;
        plan.counts[pos[g]] = count;
    }
    plan
}

/// `(outer, n, inner)` of a shape split at `axis` (`None`: flattened).
pub fn split_at(shape: &[usize], axis: Option<usize>) -> (usize, usize, usize) {
    match axis {
        None => (1, shape.iter().product(), 1),
        Some(a) => (
            shape[..a].iter().product(),
            shape[a],
            shape[a + 1..].iter().product(),
        ),
    }
}

/// The normalised `axis` attribute of a `data.unique`, for an operand of
/// `rank`.
pub fn unique_axis(axis: Option<i64>, rank: usize) -> Result<Option<usize>, String> {
    axis.map(|a| norm_axis(a, rank, "attribute 'axis'"))
        .transpose()
}

fn infer_unique(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let x = operand(cx, 0)?;
    let dims = ranked_dims(x, "operand 'input'")?;
    let dt = super::dtype_of(x)?;
    let at = Unique::attrs(cx);
    let text = at.count().ok_or("requires attribute 'count' (a symbol)")?;
    let k = size_symbol(text)?;
    let axis = unique_axis(at.axis(), dims.len())?;
    let (y, n) = match axis {
        None => (vec![k], ge_ir::dim::product(&dims)),
        Some(a) => {
            let mut y = dims.clone();
            y[a] = k;
            (y, dims[a])
        }
    };
    if dims.iter().any(|d| super::size::mentions(*d, k)) {
        return Err(format!(
            "the size symbol {k} must be fresh, but the operand's dims use it"
        ));
    }
    Ok(vec![
        Type::tensor(&y, dt),
        Type::tensor(&[k], DType::I64),
        Type::tensor(&[n], DType::I64),
        Type::tensor(&[k], DType::I64),
        Type::tensor(&[], DType::I64),
    ])
}

/// Unique of a reference tensor: `[Y, indices, inverse_indices, counts, K]`.
pub fn unique_tensors(x: &Tensor, axis: Option<usize>, sorted: bool) -> Vec<Tensor> {
    let keys: Vec<i64> = match &x.data {
        Data::F(v) => v.iter().map(|&f| float_key(f)).collect(),
        Data::I(v) => v.iter().map(|&i| int_key(x.dtype, i)).collect(),
    };
    let (outer, n, inner) = split_at(&x.shape, axis);
    let p = unique_plan(&keys, outer, n, inner, sorted);
    let k = p.first.len();
    let mut src = Vec::with_capacity(outer * k * inner);
    for o in 0..outer {
        for &j in &p.first {
            src.extend((0..inner).map(|i| (o * n + j) * inner + i));
        }
    }
    let shape = match axis {
        None => vec![k],
        Some(a) => {
            let mut s = x.shape.clone();
            s[a] = k;
            s
        }
    };
    let y = match &x.data {
        Data::F(v) => Tensor::from_f64(shape, x.dtype, src.iter().map(|&s| v[s]).collect()),
        Data::I(v) => Tensor::from_i64(shape, x.dtype, src.iter().map(|&s| v[s]).collect()),
    };
    let ints = |v: &[usize]| {
        Tensor::from_i64(
            vec![v.len()],
            DType::I64,
            v.iter().map(|&u| u as i64).collect(),
        )
    };
    vec![
        y,
        ints(&p.first),
        ints(&p.inverse),
        ints(&p.counts),
        Tensor::from_i64(vec![], DType::I64, vec![k as i64]),
    ]
}

fn sem_unique(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let at = Unique::attrs(cx);
    let axis = unique_axis(at.axis(), x[0].shape.len())?;
    Ok(unique_tensors(x[0], axis, at.sorted() != 0))
}

/// The bound of a `data.unique`'s size symbol: the operand's length
/// (flattened, or along `axis`), when static.
pub fn unique_bound(d: &ge_ir::OpData, x: Type) -> Option<i64> {
    let dims = x.as_tensor()?.dims.as_ref()?.to_vec();
    let axis = unique_axis(Unique::attrs(d).axis(), dims.len()).ok()?;
    match axis {
        None => dims
            .iter()
            .try_fold(1i64, |a, d| a.checked_mul(d.as_static()?)),
        Some(a) => dims[a].as_static(),
    }
}

def_op! {
    /// The distinct elements or slices of a tensor (ONNX Unique), a data-dependent size
    ///
    /// `%y, %i, %inv, %c, %k = data.unique %x {count = "K", sorted = 1} : (tensor<6xf32>) ->
    /// (tensor<Kxf32>, tensor<Kxi64>, tensor<6xi64>, tensor<Kxi64>, tensor<i64>)`: `K` is a
    /// size symbol — at most the operand's length (its bound in `ge.symbol_bounds`), bound
    /// to `%k` after the op ran; with `axis` the distinct slices along that axis.
    pub Unique = "data.unique" {
        operands { input: AnyTensor },
        results {
            output: AnyTensor,
            indices: AnyTensor,
            inverse_indices: AnyTensor,
            counts: AnyTensor,
            size: AnyTensor,
        },
        attrs {
            /// the size symbol: the number of distinct slices
            count: Str,
            /// the axis whose slices are compared (absent: the flattened tensor)
            axis: Option<I64>,
            /// 1: ascending order; 0: order of first occurrence
            sorted: I64 = 1,
        },
        traits [Pure],
        format: "operands attr-dict `:` functional-type(operands, results)",
        verify: crate::graph::opkit::verify_by_infer,
        infer: infer_unique,
        semantics: sem_unique,
        // Not free: it sorts the slices of its operand.
        interfaces [Cost::ELEMENTWISE, CPU_ENGINES, PrecisionClass::Gray, KernelFamily::Index],
        es(none = "an importer op for ONNX Unique over values known at run time"),
    }
}

pub static OPS: &[&OpDef] = &[&UNIQUE];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_sorted_and_first_occurrence() {
        let keys = [2, 1, 1, 3, 4, 3];
        let p = unique_plan(&keys, 1, 6, 1, true);
        assert_eq!(p.first, vec![1, 0, 3, 4]);
        assert_eq!(p.counts, vec![2, 1, 2, 1]);
        assert_eq!(p.inverse, vec![1, 0, 0, 2, 3, 2]);
        let p = unique_plan(&keys, 1, 6, 1, false);
        assert_eq!(p.first, vec![0, 1, 3, 4]);
        assert_eq!(p.counts, vec![1, 2, 2, 1]);
        assert_eq!(p.inverse, vec![0, 1, 1, 2, 3, 2]);
    }

    #[test]
    fn float_keys_order_and_collapse() {
        let xs = [
            f64::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            1e-300,
            3.0,
            f64::INFINITY,
        ];
        let ks: Vec<i64> = xs.iter().map(|&x| float_key(x)).collect();
        assert!(ks.windows(2).all(|w| w[0] <= w[1]), "{ks:?}");
        assert_eq!(ks[2], ks[3]);
        assert!(float_key(f64::NAN) > float_key(f64::INFINITY));
        assert_eq!(float_key(f64::NAN), float_key(-f64::NAN));
    }
}
