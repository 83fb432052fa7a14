//! Products of quantised 8-bit tensors (ONNX MatMulInteger, QLinearMatMul):
//! `(a - a_zero_point) · (b - b_zero_point)` accumulated in i32 (wrapping,
//! as the i32 accumulator of the ONNX reference and onnxruntime does);
//! QLinearMatMul then requantises the accumulator with `a_scale · b_scale /
//! y_scale` and `y_zero_point`. The reference ([`matmul_integer`],
//! [`requantize_all`]) is public: the runtime's native kernels
//! (runtime/src/kernels/qlinear.rs) run these very functions, so the compiled
//! model and the interpreter agree bit for bit.
//!
//! Zero points and scales are one value (per tensor) or one per row of `a`
//! (M values) / per column of `b` (N values). The importer passes a zero
//! point of 0 for an absent one, so every operand is always there.

use super::elementwise::COMPUTE_FORMAT;
use super::linalg::{batched, matmul_flops, matmul_type};
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{round_f, wrap_i, Tensor};
use ge_ir::{DType, Dim, Type};

type SemResult = Result<Vec<Tensor>, String>;

/// The quantised element types these ops take.
pub const QUANT8: &[DType] = &[DType::I8, DType::U8];

/// The scales' element types.
pub const SCALE: &[DType] = &[DType::F32, DType::F16, DType::BF16];

/// An integer matrix product: the result's shape and values, and the M
/// (rows) and N (columns) of each of its matrices.
pub struct Product {
    pub shape: Vec<usize>,
    pub values: Vec<i64>,
    pub m: usize,
    pub n: usize,
}

/// Index into a per-tensor (one value) or per-row/column (`len` values) table.
#[inline]
fn pick(table_len: usize, i: usize) -> usize {
    if table_len == 1 {
        0
    } else {
        i
    }
}

/// Check that a zero point or scale has one value or `len` of them.
fn check_count(name: &str, count: usize, len: usize, what: &str) -> Result<(), String> {
    if count == 1 || count == len {
        return Ok(());
    }
    if len == 1 {
        return Err(format!(
            "operand '{name}' must have 1 value ({what}), but has {count}"
        ));
    }
    Err(format!(
        "operand '{name}' must have 1 value or {len} ({what}), but has {count}"
    ))
}

/// `(a - a_zp) · (b - b_zp)` with numpy `matmul` semantics (1-D operands as
/// a row / column vector, batch dims broadcast), each product accumulated in
/// wrapping i32. `a_zp` is one value or M (per row), `b_zp` one or N (per
/// column).
pub fn matmul_integer(
    (a, a_shape, a_zp): (&[i64], &[usize], &[i64]),
    (b, b_shape, b_zp): (&[i64], &[usize], &[i64]),
) -> Result<Product, String> {
    if a_shape.is_empty() || b_shape.is_empty() {
        return Err("operands 'a' and 'b' must have rank >= 1".into());
    }
    let a2 = if a_shape.len() == 1 {
        vec![1, a_shape[0]]
    } else {
        a_shape.to_vec()
    };
    let b2 = if b_shape.len() == 1 {
        vec![b_shape[0], 1]
    } else {
        b_shape.to_vec()
    };
    let (m, k) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let (kb, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
    if k != kb {
        return Err(format!(
            "contracted dims differ: 'a' {a_shape:?} has {k} columns, 'b' {b_shape:?} has {kb} rows"
        ));
    }
    check_count("a_zero_point", a_zp.len(), m, "rows of 'a'")?;
    check_count("b_zero_point", b_zp.len(), n, "columns of 'b'")?;
    // `k` and `n` are not 0 when there is an element to index.
    let av: Vec<i64> = a
        .iter()
        .enumerate()
        .map(|(i, &x)| x - a_zp[pick(a_zp.len(), (i / k) % m)])
        .collect();
    let bv: Vec<i64> = b
        .iter()
        .enumerate()
        .map(|(i, &x)| x - b_zp[pick(b_zp.len(), i % n)])
        .collect();
    let (mut shape, out) = batched(
        &av,
        &a2[..a2.len() - 2],
        &bv,
        &b2[..b2.len() - 2],
        (m, k, n),
        false,
        false,
    )?;
    if a_shape.len() > 1 {
        shape.push(m);
    }
    if b_shape.len() > 1 {
        shape.push(n);
    }
    let values = out.into_iter().map(|v| wrap_i(DType::I32, v)).collect();
    Ok(Product {
        shape,
        values,
        m,
        n,
    })
}

/// The value range of an 8-bit quantised type.
fn range(to: DType) -> (f64, f64) {
    if to == DType::I8 {
        (-128.0, 127.0)
    } else {
        (0.0, 255.0)
    }
}

/// The scales of a requantisation: `a_scale` one value or M, `b_scale` one
/// or N, `y_scale` one value; `dtype` is their type (the multiplier
/// `a_scale · b_scale / y_scale` is computed in it, as the ONNX reference
/// does in numpy).
pub struct Scales<'a> {
    pub a: &'a [f64],
    pub b: &'a [f64],
    pub y: f64,
    pub dtype: DType,
}

/// Requantise every accumulator of `p` to `to` (i8 or u8):
/// `clamp(round_half_even(acc · a_scale · b_scale / y_scale + y_zp))`.
pub fn requantize_all(p: &Product, s: &Scales, y_zp: f64, to: DType) -> Result<Vec<f64>, String> {
    check_count("a_scale", s.a.len(), p.m, "rows of 'a'")?;
    check_count("b_scale", s.b.len(), p.n, "columns of 'b'")?;
    let (lo, hi) = range(to);
    let mn = p.m * p.n;
    Ok(p.values
        .iter()
        .enumerate()
        .map(|(i, &acc)| {
            let (row, col) = ((i % mn) / p.n, i % p.n);
            let ab = round_f(
                s.dtype,
                s.a[pick(s.a.len(), row)] * s.b[pick(s.b.len(), col)],
            );
            let mult = round_f(s.dtype, ab / s.y);
            (acc as f64 * mult + y_zp).round_ties_even().clamp(lo, hi)
        })
        .collect())
}

// ---- verification -------------------------------------------------------------

/// The static element count of a tensor type, if known.
fn static_count(t: Type) -> Option<usize> {
    let s = t.as_tensor()?.static_shape()?;
    Some(s.iter().product::<i64>() as usize)
}

/// The M (rows of `a`) and N (columns of `b`) of a product, where static.
fn rows_cols(ta: Type, tb: Type) -> (Option<usize>, Option<usize>) {
    let st = |d: &Dim| d.as_static().map(|v| v as usize);
    let dims_of = |t: Type| {
        t.as_tensor()
            .and_then(|t| t.dims.as_ref().map(|d| d.to_vec()))
    };
    let m = dims_of(ta).and_then(|d| match d.len() {
        0 => None,
        1 => Some(1),
        r => st(&d[r - 2]),
    });
    let n = dims_of(tb).and_then(|d| match d.len() {
        0 => None,
        1 => Some(1),
        r => st(&d[r - 1]),
    });
    (m, n)
}

/// A zero point or scale operand: a scalar or 1-D, of element type `dtype`
/// when given, with 1 or `len` values when both are static.
fn check_param(
    t: Type,
    name: &str,
    dtype: Option<DType>,
    len: Option<usize>,
    what: &str,
) -> Result<(), String> {
    if let Some(d) = dims(t, name)? {
        if d.len() > 1 {
            return Err(format!(
                "operand '{name}' must be a scalar or 1-D, but got '{t}'"
            ));
        }
    }
    if let Some(want) = dtype {
        let got = dtype_of(t)?;
        if got != want {
            return Err(format!(
                "operand '{name}' must have element type {want} (its tensor's), but got '{t}'"
            ));
        }
    }
    if let (Some(count), Some(len)) = (static_count(t), len) {
        check_count(name, count, len, what)?;
    }
    Ok(())
}

fn infer_matmul_integer(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let ts = cx.operand_types;
    let (ta, tb) = (ts[0], ts[1]);
    let out = matmul_type(ta, tb)?;
    let (m, n) = rows_cols(ta, tb);
    check_param(ts[2], "a_zero_point", Some(dtype_of(ta)?), m, "rows of 'a'")?;
    check_param(
        ts[3],
        "b_zero_point",
        Some(dtype_of(tb)?),
        n,
        "columns of 'b'",
    )?;
    Ok(vec![out.with_dtype(DType::I32)])
}

fn infer_qlinear_matmul(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let ts = cx.operand_types;
    let (ta, tb) = (ts[0], ts[3]);
    let out = matmul_type(ta, tb)?;
    let (m, n) = rows_cols(ta, tb);
    let sdt = dtype_of(ts[1])?;
    check_param(ts[1], "a_scale", None, m, "rows of 'a'")?;
    check_param(ts[2], "a_zero_point", Some(dtype_of(ta)?), m, "rows of 'a'")?;
    check_param(ts[4], "b_scale", Some(sdt), n, "columns of 'b'")?;
    check_param(
        ts[5],
        "b_zero_point",
        Some(dtype_of(tb)?),
        n,
        "columns of 'b'",
    )?;
    check_param(ts[6], "y_scale", Some(sdt), Some(1), "per tensor")?;
    check_param(ts[7], "y_zero_point", None, Some(1), "per tensor")?;
    Ok(vec![out.with_dtype(dtype_of(ts[7])?)])
}

// ---- semantics --------------------------------------------------------------

/// `a`, `b` and their zero points as the reference takes them.
fn product(a: &Tensor, a_zp: &Tensor, b: &Tensor, b_zp: &Tensor) -> Result<Product, String> {
    matmul_integer(
        (&a.to_i64(), &a.shape, &a_zp.to_i64()),
        (&b.to_i64(), &b.shape, &b_zp.to_i64()),
    )
}

fn sem_matmul_integer(_: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 4)?;
    let p = product(t[0], t[2], t[1], t[3])?;
    Ok(vec![Tensor::from_i64(p.shape, DType::I32, p.values)])
}

fn sem_qlinear_matmul(_: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 8)?;
    let p = product(t[0], t[2], t[3], t[5])?;
    if t[6].len() != 1 || t[7].len() != 1 {
        return Err("'y_scale' and 'y_zero_point' must have one value each".into());
    }
    let (sa, sb) = (t[1].to_f64(), t[4].to_f64());
    let s = Scales {
        a: &sa,
        b: &sb,
        y: t[6].get_f(0),
        dtype: t[1].dtype,
    };
    let to = t[7].dtype;
    let y = requantize_all(&p, &s, t[7].get_f(0), to)?;
    Ok(vec![Tensor::from_f64(p.shape, to, y)])
}

def_op! {
    /// Integer matrix product of quantised tensors (ONNX MatMulInteger)
    ///
    /// `(a - a_zero_point) · (b - b_zero_point)` with numpy `matmul` semantics (1-D operands,
    /// broadcast batch dims), accumulated in i32 (wrapping). `a` and `b` are i8 or u8; each
    /// zero point has its tensor's type and is one value or one per row of `a` (M values) /
    /// per column of `b` (N values). The ONNX importer passes 0 for an absent zero point.
    pub MatmulInteger = "graph.matmul_integer" {
        operands {
            a: TensorOf(QUANT8),
            b: TensorOf(QUANT8),
            a_zero_point: TensorOf(QUANT8),
            b_zero_point: TensorOf(QUANT8),
        },
        results { output: TensorOf(&[DType::I32]) },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_matmul_integer,
        semantics: sem_matmul_integer,
        interfaces [
            Cost::cube(matmul_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::QuantMatMul,
        ],
        es,
    }
}

def_op! {
    /// Quantised matrix product, requantised (ONNX QLinearMatMul)
    ///
    /// `y = saturate(round((a - a_zero_point) · (b - b_zero_point) · a_scale · b_scale /
    /// y_scale) + y_zero_point)`: the product accumulates in i32 as in `graph.matmul_integer`;
    /// the multiplier `a_scale · b_scale / y_scale` is computed in the scales' type, the
    /// rest in f64, rounded half to even and clamped to the result type (`y_zero_point`'s,
    /// i8 or u8). `a_scale`/`a_zero_point` are one value or one per row of `a`,
    /// `b_scale`/`b_zero_point` one or one per column of `b`, `y_scale`/`y_zero_point` one
    /// value; the three scales share one float type.
    pub QlinearMatmul = "graph.qlinear_matmul" {
        operands {
            a: TensorOf(QUANT8),
            a_scale: TensorOf(SCALE),
            a_zero_point: TensorOf(QUANT8),
            b: TensorOf(QUANT8),
            b_scale: TensorOf(SCALE),
            b_zero_point: TensorOf(QUANT8),
            y_scale: TensorOf(SCALE),
            y_zero_point: TensorOf(QUANT8),
        },
        results { output: TensorOf(QUANT8) },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_qlinear_matmul,
        semantics: sem_qlinear_matmul,
        interfaces [
            Cost::cube(matmul_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::QuantMatMul,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&MATMUL_INTEGER, &QLINEAR_MATMUL];

#[cfg(test)]
mod tests {
    use super::*;

    /// Per-row and per-column zero points are subtracted before the product.
    #[test]
    fn zero_points_per_row_and_column() {
        // a = [[1, 2], [3, 4]] - [1, 2] per row; b = [[5, 6], [7, 8]] - [5, 0] per column.
        let p = matmul_integer(
            (&[1, 2, 3, 4], &[2, 2], &[1, 2]),
            (&[5, 6, 7, 8], &[2, 2], &[5, 0]),
        )
        .unwrap();
        // [[0, 1], [1, 2]] · [[0, 6], [2, 8]] = [[2, 8], [4, 22]]
        assert_eq!(p.values, vec![2, 8, 4, 22]);
        assert!(matmul_integer((&[1, 2], &[1, 2], &[0, 0, 0]), (&[1, 2], &[2], &[0])).is_err());
    }

    /// Requantisation rounds half to even and saturates.
    #[test]
    fn requantize_rounds_and_saturates() {
        let p = Product {
            shape: vec![3],
            values: vec![5, 1000, -1000],
            m: 1,
            n: 3,
        };
        let s = Scales {
            a: &[0.5],
            b: &[1.0],
            y: 1.0,
            dtype: DType::F32,
        };
        // 2.5 + 0 -> 2 (half to even); 500 -> 255; -500 -> 0.
        assert_eq!(
            requantize_all(&p, &s, 0.0, DType::U8).unwrap(),
            vec![2.0, 255.0, 0.0]
        );
    }
}
