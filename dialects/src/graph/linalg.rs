//! Matrix products: numpy `matmul`, `batch_matmul` (with transposed operands,
//! for attention) and ONNX `Gemm`.

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::infer::broadcast_shapes;
use crate::interfaces::*;
use ge_ir::attributes::Format;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{broadcast_index, broadcast_shape, Data, Tensor};
use ge_ir::{DType, Dim, Type};

type SemResult = Result<Vec<Tensor>, String>;

/// Element types the matrix products accept (numbers, not booleans or index).
pub const NUMERIC: &[DType] = &[
    DType::F64,
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::I64,
    DType::I32,
    DType::I16,
    DType::I8,
    DType::U64,
    DType::U32,
    DType::U16,
    DType::U8,
];

// ---- the reference GEMM kernel -----------------------------------------------

/// Element access of a (possibly transposed) matrix inside a flat buffer.
#[derive(Clone, Copy)]
pub struct MatView {
    pub offset: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl MatView {
    /// A row-major `rows x cols` matrix at `offset`, read transposed when `t`.
    pub fn new(offset: usize, cols: usize, transposed: bool) -> MatView {
        if transposed {
            MatView {
                offset,
                row_stride: 1,
                col_stride: cols,
            }
        } else {
            MatView {
                offset,
                row_stride: cols,
                col_stride: 1,
            }
        }
    }
}

/// Numbers the reference kernel multiplies: floats in f64, integers in
/// wrapping i64 (what numpy does for the same dtype, before the final wrap).
pub trait Scalar: Copy + PartialEq {
    const ZERO: Self;
    fn mac(acc: Self, a: Self, b: Self) -> Self;
}

impl Scalar for f64 {
    const ZERO: f64 = 0.0;
    #[inline]
    fn mac(acc: f64, a: f64, b: f64) -> f64 {
        acc + a * b
    }
}

impl Scalar for i64 {
    const ZERO: i64 = 0;
    #[inline]
    fn mac(acc: i64, a: i64, b: i64) -> i64 {
        acc.wrapping_add(a.wrapping_mul(b))
    }
}

/// `out[m x n] += A[m x k] · B[k x n]` (row-major `out` at `out_off`).
#[allow(clippy::too_many_arguments)]
pub fn gemm_acc<T: Scalar>(
    a: &[T],
    av: MatView,
    b: &[T],
    bv: MatView,
    out: &mut [T],
    out_off: usize,
    m: usize,
    k: usize,
    n: usize,
) {
    for i in 0..m {
        let orow = &mut out[out_off + i * n..out_off + (i + 1) * n];
        for kk in 0..k {
            let x = a[av.offset + i * av.row_stride + kk * av.col_stride];
            if x == T::ZERO {
                continue;
            }
            let bstart = bv.offset + kk * bv.row_stride;
            if bv.col_stride == 1 {
                let brow = &b[bstart..bstart + n];
                let mut j = 0;
                while j < n {
                    orow[j] = T::mac(orow[j], x, brow[j]);
                    j += 1;
                }
            } else {
                let mut j = 0;
                let mut at = bstart;
                while j < n {
                    orow[j] = T::mac(orow[j], x, b[at]);
                    j += 1;
                    at += bv.col_stride;
                }
            }
        }
    }
}

/// Batched matmul of `a` (`batch_a x m x k`, or `k x m` per matrix when
/// `ta`) and `b` (`batch_b x k x n`, or `n x k` when `tb`) with numpy
/// broadcasting of the batch dims. Returns `(batch_shape, data)`. The
/// runtime's integer matmul kernel runs it too.
#[allow(clippy::too_many_arguments)]
pub fn batched<T: Scalar>(
    a: &[T],
    a_batch: &[usize],
    b: &[T],
    b_batch: &[usize],
    (m, k, n): (usize, usize, usize),
    ta: bool,
    tb: bool,
) -> Result<(Vec<usize>, Vec<T>), String> {
    let batch = broadcast_shape(a_batch, b_batch)?;
    let ia = broadcast_index(a_batch, &batch)?;
    let ib = broadcast_index(b_batch, &batch)?;
    let mut out = vec![T::ZERO; ia.len() * m * n];
    for (p, (&x, &y)) in ia.iter().zip(&ib).enumerate() {
        let av = MatView::new(x * m * k, if ta { m } else { k }, ta);
        let bv = MatView::new(y * k * n, if tb { k } else { n }, tb);
        gemm_acc(a, av, b, bv, &mut out, p * m * n, m, k, n);
    }
    Ok((batch, out))
}

/// Run `batched` in f64 or wrapping i64 depending on the operands.
#[allow(clippy::too_many_arguments)]
fn batched_tensor(
    a: &Tensor,
    a_batch: &[usize],
    b: &Tensor,
    b_batch: &[usize],
    mkn: (usize, usize, usize),
    ta: bool,
    tb: bool,
    mut shape_tail: Vec<usize>,
    dt: DType,
) -> Result<Tensor, String> {
    if let (Data::I(x), Data::I(y), false) = (&a.data, &b.data, dt.is_float()) {
        let (mut shape, out) = batched(x, a_batch, y, b_batch, mkn, ta, tb)?;
        shape.append(&mut shape_tail);
        return Ok(Tensor::from_i64(shape, dt, out));
    }
    let (mut shape, out) = batched(&a.to_f64(), a_batch, &b.to_f64(), b_batch, mkn, ta, tb)?;
    shape.append(&mut shape_tail);
    Ok(Tensor::from_f64(shape, dt, out))
}

// ---- matmul ---------------------------------------------------------------

fn infer_matmul(cx: &InferCtx) -> Result<Vec<Type>, String> {
    Ok(vec![matmul_type(cx.operand_types[0], cx.operand_types[1])?])
}

/// The numpy `matmul` result type of `ta` by `tb` (`ta`'s element type);
/// messages name the operands `lhs` and `rhs`.
pub(crate) fn matmul_type(ta: Type, tb: Type) -> Result<Type, String> {
    let dt = dtype_of(ta)?;
    let (Some(a), Some(b)) = (dims(ta, "lhs")?, dims(tb, "rhs")?) else {
        return Ok(Type::unranked(dt));
    };
    if a.is_empty() {
        return Err(format!("operand 'lhs' must have rank >= 1, but got '{ta}'"));
    }
    if b.is_empty() {
        return Err(format!("operand 'rhs' must have rank >= 1, but got '{tb}'"));
    }
    let a2 = if a.len() == 1 {
        vec![Dim::Static(1), a[0]]
    } else {
        a.clone()
    };
    let b2 = if b.len() == 1 {
        vec![b[0], Dim::Static(1)]
    } else {
        b.clone()
    };
    let (ka, kb) = (a2[a2.len() - 1], b2[b2.len() - 2]);
    if !ka.compatible(kb) && ge_ir::dim::equal::learn_equal(ka, kb).is_none() {
        return Err(format!(
            "contracted dims differ: operand 'lhs' '{ta}' has {ka} columns, operand 'rhs' '{tb}' has {kb} rows"
        ));
    }
    let mut out = broadcast_shapes(&a2[..a2.len() - 2], &b2[..b2.len() - 2])
        .map_err(|e| format!("batch dims of '{ta}' and '{tb}' do not broadcast ({e})"))?;
    if a.len() > 1 {
        out.push(a2[a2.len() - 2]);
    }
    if b.len() > 1 {
        out.push(b2[b2.len() - 1]);
    }
    Ok(Type::tensor(&out, dt))
}

fn sem_matmul(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let (a, b) = (t[0], t[1]);
    if a.rank() == 0 || b.rank() == 0 {
        return Err("operands must have rank >= 1".into());
    }
    let a2: Vec<usize> = if a.rank() == 1 {
        vec![1, a.shape[0]]
    } else {
        a.shape.clone()
    };
    let b2: Vec<usize> = if b.rank() == 1 {
        vec![b.shape[0], 1]
    } else {
        b.shape.clone()
    };
    let (m, k) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let (kb, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
    if k != kb {
        return Err(format!(
            "contracted dims differ: {:?} x {:?}",
            a.shape, b.shape
        ));
    }
    let mut tail = vec![];
    if a.rank() > 1 {
        tail.push(m);
    }
    if b.rank() > 1 {
        tail.push(n);
    }
    let dt = result_dtype(cx, 0, a.dtype);
    let out = batched_tensor(
        a,
        &a2[..a2.len() - 2],
        b,
        &b2[..b2.len() - 2],
        (m, k, n),
        false,
        false,
        tail,
        dt,
    )?;
    Ok(vec![out])
}

def_op! {
    /// Matrix product with numpy semantics (ONNX MatMul)
    ///
    /// numpy `matmul`: the last two dims are multiplied (`... x M x K` by `... x K x N` gives
    /// `... x M x N`), leading batch dims broadcast. A 1-D `lhs` is a row vector and a 1-D
    /// `rhs` a column vector whose added dim is removed from the result. Integer products wrap
    /// like numpy's.
    pub Matmul = "graph.matmul" {
        operands { lhs: TensorOf(NUMERIC), rhs: TensorOf(NUMERIC) },
        results { output: TensorOf(NUMERIC) },
        traits [Pure, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_matmul,
        semantics: sem_matmul,
        interfaces [
            Cost::cube(matmul_flops),
            FusionPattern::OutElementwiseFusable,
            CUBE_ENGINES,
            PrecisionClass::White,
            FRACTAL_NZ_KERNEL,
            KernelFamily::MatMul,
        ],
        es,
    }
}

// ---- batch_matmul ------------------------------------------------------------

fn infer_batch_matmul(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let (ta, tb) = (cx.operand_types[0], cx.operand_types[1]);
    let at = BatchMatmul::attrs(cx);
    let (tra, trb) = (at.transpose_a(), at.transpose_b());
    let dt = dtype_of(ta)?;
    let a = dims_min_rank(ta, "lhs", 3, "batch... x M x K")?;
    let b = dims_min_rank(tb, "rhs", 3, "batch... x K x N")?;
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(vec![Type::unranked(dt)]);
    };
    if a.len() != b.len() {
        return Err(format!(
            "operands must have the same rank, but got '{ta}' and '{tb}'"
        ));
    }
    let r = a.len();
    let (m, ka) = if tra {
        (a[r - 1], a[r - 2])
    } else {
        (a[r - 2], a[r - 1])
    };
    let (kb, n) = if trb {
        (b[r - 1], b[r - 2])
    } else {
        (b[r - 2], b[r - 1])
    };
    if !ka.compatible(kb) && ge_ir::dim::equal::learn_equal(ka, kb).is_none() {
        return Err(format!(
            "contracted dims differ: operand 'lhs' '{ta}' gives K = {ka} (transpose_a = {tra}), operand 'rhs' '{tb}' gives K = {kb} (transpose_b = {trb})"
        ));
    }
    let mut out = broadcast_shapes(&a[..r - 2], &b[..r - 2])
        .map_err(|e| format!("batch dims of '{ta}' and '{tb}' do not broadcast ({e})"))?;
    out.push(m);
    out.push(n);
    Ok(vec![Type::tensor(&out, dt)])
}

fn sem_batch_matmul(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let (a, b) = (t[0], t[1]);
    let at = BatchMatmul::attrs(cx);
    let (tra, trb) = (at.transpose_a(), at.transpose_b());
    let r = a.rank();
    if r < 3 || b.rank() != r {
        return Err(format!(
            "operands must have the same rank >= 3, got {:?} and {:?}",
            a.shape, b.shape
        ));
    }
    let (m, k) = if tra {
        (a.shape[r - 1], a.shape[r - 2])
    } else {
        (a.shape[r - 2], a.shape[r - 1])
    };
    let (kb, n) = if trb {
        (b.shape[r - 1], b.shape[r - 2])
    } else {
        (b.shape[r - 2], b.shape[r - 1])
    };
    if k != kb {
        return Err(format!(
            "contracted dims differ: {:?} x {:?}",
            a.shape, b.shape
        ));
    }
    let dt = result_dtype(cx, 0, a.dtype);
    let out = batched_tensor(
        a,
        &a.shape[..r - 2],
        b,
        &b.shape[..r - 2],
        (m, k, n),
        tra,
        trb,
        vec![m, n],
        dt,
    )?;
    Ok(vec![out])
}

def_op! {
    /// Batched matrix product with optional transposed operands
    ///
    /// `lhs` is `batch... x M x K` (`batch... x K x M` with `transpose_a`), `rhs` is `batch...
    /// x K x N` (`batch... x N x K` with `transpose_b`); both have the same rank >= 3 and their
    /// batch dims broadcast. The result is `batch... x M x N`. `transpose_b` makes the
    /// attention score `q · kᵀ` one op.
    pub BatchMatmul = "graph.batch_matmul" {
        operands { lhs: TensorOf(NUMERIC), rhs: TensorOf(NUMERIC) },
        results { output: TensorOf(NUMERIC) },
        attrs {
            /// use the transpose of each lhs matrix
            transpose_a: Bool = false,
            /// use the transpose of each rhs matrix
            transpose_b: Bool = false,
        },
        traits [Pure, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_batch_matmul,
        semantics: sem_batch_matmul,
        interfaces [
            Cost::cube(batch_matmul_flops),
            FusionPattern::OutElementwiseFusable,
            CUBE_ENGINES,
            PrecisionClass::White,
            FRACTAL_NZ_KERNEL,
            KernelFamily::MatMul,
        ],
        es,
    }
}

// ---- gemm -----------------------------------------------------------------

fn infer_gemm(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let ts = cx.operand_types;
    let at = Gemm::attrs(cx);
    let (tra, trb) = (at.trans_a() != 0, at.trans_b() != 0);
    let dt = dtype_of(ts[0])?;
    let a = dims_rank(ts[0], "a", 2, "M x K, or K x M with transA")?;
    let b = dims_rank(ts[1], "b", 2, "K x N, or N x K with transB")?;
    let (m, ka) = match &a {
        Some(a) if tra => (a[1], a[0]),
        Some(a) => (a[0], a[1]),
        None => (Dim::Unknown, Dim::Unknown),
    };
    let (kb, n) = match &b {
        Some(b) if trb => (b[1], b[0]),
        Some(b) => (b[0], b[1]),
        None => (Dim::Unknown, Dim::Unknown),
    };
    if !ka.compatible(kb) && ge_ir::dim::equal::learn_equal(ka, kb).is_none() {
        return Err(format!(
            "contracted dims differ: operand 'a' '{}' gives K = {ka} (transA = {}), operand 'b' '{}' gives K = {kb} (transB = {})",
            ts[0], tra as i64, ts[1], trb as i64
        ));
    }
    if let Some(&tc) = ts.get(2) {
        if let Some(c) = dims(tc, "c")? {
            let ok = c.len() <= 2
                && c.iter()
                    .rev()
                    .zip([n, m])
                    .all(|(&p, q)| p == Dim::Static(1) || p.compatible(q));
            if !ok {
                return Err(format!(
                    "operand 'c' of type '{tc}' does not broadcast to the result shape [{m}, {n}]"
                ));
            }
        }
    }
    Ok(vec![Type::tensor(&[m, n], dt)])
}

fn sem_gemm(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let (a, b) = (t[0], t[1]);
    let at = Gemm::attrs(cx);
    let (tra, trb) = (at.trans_a() != 0, at.trans_b() != 0);
    let (alpha, beta) = (at.alpha(), at.beta());
    expect_rank(a, "a", 2)?;
    expect_rank(b, "b", 2)?;
    let (m, k) = if tra {
        (a.shape[1], a.shape[0])
    } else {
        (a.shape[0], a.shape[1])
    };
    let (kb, n) = if trb {
        (b.shape[1], b.shape[0])
    } else {
        (b.shape[0], b.shape[1])
    };
    if k != kb {
        return Err(format!(
            "contracted dims differ: {:?} x {:?} (transA = {}, transB = {})",
            a.shape, b.shape, tra as i64, trb as i64
        ));
    }
    let mut out = vec![0.0; m * n];
    gemm_acc(
        &a.to_f64(),
        MatView::new(0, a.shape[1], tra),
        &b.to_f64(),
        MatView::new(0, b.shape[1], trb),
        &mut out,
        0,
        m,
        k,
        n,
    );
    out.iter_mut().for_each(|v| *v *= alpha);
    if let Some(c) = t.get(2) {
        let idx = broadcast_index(&c.shape, &[m, n]).map_err(|e| format!("operand 'c': {e}"))?;
        let cv = c.to_f64();
        for (o, i) in out.iter_mut().zip(idx) {
            *o += beta * cv[i];
        }
    }
    let dt = result_dtype(cx, 0, a.dtype);
    let out = Tensor::from_f64(vec![m, n], dt, out);
    Ok(vec![super::activation::apply(
        at.activation(),
        at.activation_alpha(),
        out,
    )?])
}

def_op! {
    /// General matrix multiply (ONNX Gemm): alpha·A'·B' + beta·C
    ///
    /// `A'` is `a` (`M x K`) or its transpose when `transA = 1`; `B'` is `b` (`K x N`) or its
    /// transpose when `transB = 1`. The optional `c` broadcasts unidirectionally to `M x N`.
    /// The fully-connected layer of CNN classifiers. `activation` is a fused epilogue applied
    /// to the result.
    pub Gemm = "graph.gemm" {
        operands { a: TensorOf(NUMERIC), b: TensorOf(NUMERIC), c: Option<TensorOf(NUMERIC)> },
        results { output: TensorOf(NUMERIC) },
        attrs {
            /// scale of A'·B'
            alpha: F64 = 1.0_f32,
            /// scale of C
            beta: F64 = 1.0_f32,
            /// 1: use the transpose of a
            transA: I64 = 0,
            /// 1: use the transpose of b
            transB: I64 = 0,
            /// activation applied to the result (epilogue): none, relu, relu6 (clip to [0, 6]),
            /// leaky_relu, sigmoid, tanh, gelu, silu, hard_swish
            activation: Enum(super::activation::NAMES) = "none",
            /// slope of leaky_relu when it is the epilogue
            activation_alpha: F64 = 0.01,
        },
        traits [Pure, SameOperandsElementType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_gemm,
        semantics: sem_gemm,
        interfaces [
            Cost::cube(gemm_flops),
            FusionPattern::OutElementwiseFusable,
            CUBE_ENGINES,
            PrecisionClass::White,
            FRACTAL_NZ_KERNEL,
            KernelFamily::Gemm,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&MATMUL, &BATCH_MATMUL, &GEMM];

// ---- interfaces -------------------------------------------------------------

/// Matrix kernels on AI Core read both operands and write their result in
/// FRACTAL_NZ.
const FRACTAL_NZ_KERNEL: Layout = Layout::Blocked {
    format: Format::FRACTAL_NZ,
    data: &[0, 1],
    weight: None,
};

/// `2 · out elements · k`, the contracted dim `k` from `lhs` (`k_dim` from its end).
fn contracted_flops(cx: &CostCtx, k_dim: usize) -> f64 {
    let a = cx.operand_dims(0);
    let k = a.iter().rev().nth(k_dim).copied().unwrap_or(1.0);
    2.0 * cx.out_elements() * k
}

pub(crate) fn matmul_flops(cx: &CostCtx) -> f64 {
    contracted_flops(cx, 0)
}

fn batch_matmul_flops(cx: &CostCtx) -> f64 {
    contracted_flops(cx, BatchMatmul::attrs(cx).transpose_a() as usize)
}

/// With `transA` the contracted dim of `a` (2-D) is its first.
fn gemm_flops(cx: &CostCtx) -> f64 {
    contracted_flops(cx, (Gemm::attrs(cx).trans_a() != 0) as usize)
}
