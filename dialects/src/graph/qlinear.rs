//! Products of quantised 8-bit tensors (ONNX MatMulInteger, QLinearMatMul,
//! ConvInteger, QLinearConv):
//! `(a - a_zero_point) · (b - b_zero_point)` accumulated in i32 (wrapping,
//! as the i32 accumulator of the ONNX reference and onnxruntime does);
//! the QLinear forms then requantise the accumulator with `a_scale · b_scale /
//! y_scale` and `y_zero_point`. The reference ([`matmul_integer`],
//! [`conv_integer`], [`requantize_all`]) is public: the runtime's native kernels
//! (runtime/src/kernels/qlinear.rs) run these very functions, so the compiled
//! model and the interpreter agree bit for bit.
//!
//! Zero points and scales are one value (per tensor) or one per row of `a`
//! (M values) / per column of `b` (N values); for a convolution the input's
//! are one value and the filter's one value or one per output channel. The importer passes a zero
//! point of 0 for an absent one, so every operand is always there.

use super::elementwise::COMPUTE_FORMAT;
use super::linalg::{batched, matmul_flops, matmul_type};
use super::nn::{conv2d_ref, conv2d_type, conv_flops, ConvAttrs};
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
/// or N, `y_scale` one value (checked); `dtype` is their type (the multiplier
/// `a_scale · b_scale / y_scale` is computed in it, as the ONNX reference
/// does in numpy).
pub struct Scales<'a> {
    pub a: &'a [f64],
    pub b: &'a [f64],
    pub y: &'a [f64],
    pub dtype: DType,
}

/// Requantise every accumulator of `p` to `to` (i8 or u8):
/// `clamp(round_half_even(acc · a_scale · b_scale / y_scale + y_zp))`
/// (`y_zp` one value).
pub fn requantize_all(
    p: &Product,
    s: &Scales,
    y_zp: &[f64],
    to: DType,
) -> Result<Vec<f64>, String> {
    check_count("a_scale", s.a.len(), p.m, "rows of 'a'")?;
    check_count("b_scale", s.b.len(), p.n, "columns of 'b'")?;
    let (&[y], &[y_zp]) = (s.y, y_zp) else {
        return Err("'y_scale' and 'y_zero_point' must have one value each".into());
    };
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
            let mult = round_f(s.dtype, ab / y);
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
    requantized(p, (t[1], t[4]), t[6], t[7])
}

/// `p` requantised with the per-row and per-column scales `rows_cols`,
/// `y_scale` and `y_zero_point`, as the result tensor.
fn requantized(p: Product, rows_cols: (&Tensor, &Tensor), y: &Tensor, yz: &Tensor) -> SemResult {
    let (sa, sb, sy) = (rows_cols.0.to_f64(), rows_cols.1.to_f64(), y.to_f64());
    let s = Scales {
        a: &sa,
        b: &sb,
        y: &sy,
        dtype: y.dtype,
    };
    let v = requantize_all(&p, &s, &yz.to_f64(), yz.dtype)?;
    Ok(vec![Tensor::from_f64(p.shape, yz.dtype, v)])
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

// ---- quantised convolutions -----------------------------------------------------

/// `(x - x_zp) * (w - w_zp) + bias` as a 2-D convolution (NCHW by OIHW),
/// accumulated in wrapping i32: `x_zp` one value, `w_zp` one value or one per
/// output channel, `bias` (i32) one per output channel. The product is laid
/// out as `N x O x OH x OW`: its "rows" are the output channels (`m` is O,
/// `n` is OH·OW), so [`requantize_all`] takes the filter's per-channel scale
/// as its `a` scale.
pub fn conv_integer(
    (x, x_shape, x_zp): (&[i64], &[usize], &[i64]),
    (w, w_shape, w_zp): (&[i64], &[usize], &[i64]),
    bias: Option<&[i64]>,
    a: &ConvAttrs,
) -> Result<Product, String> {
    check_count("input_zero_point", x_zp.len(), 1, "per tensor")?;
    let m = w_shape.first().copied().unwrap_or(0);
    check_count("filter_zero_point", w_zp.len(), m, "output channels")?;
    let per_oc = w_shape.iter().skip(1).product::<usize>().max(1);
    let xs: Vec<f64> = x.iter().map(|&v| (v - x_zp[0]) as f64).collect();
    let ws: Vec<f64> = w
        .iter()
        .enumerate()
        .map(|(i, &v)| (v - w_zp[pick(w_zp.len(), i / per_oc)]) as f64)
        .collect();
    let b: Option<Vec<f64>> = bias.map(|b| b.iter().map(|&v| v as f64).collect());
    let bias_shape = [b.as_ref().map_or(0, |b| b.len())];
    let b = b.as_deref().map(|b| (&bias_shape[..], b));
    let (shape, out) = conv2d_ref((&xs, x_shape), (&ws, w_shape), b, a)?;
    let n = shape[2] * shape[3];
    // The sums are integers below 2^53 (8-bit products), exact in f64.
    let values = out
        .into_iter()
        .map(|v| wrap_i(DType::I32, v as i64))
        .collect();
    Ok(Product {
        shape,
        values,
        m,
        n,
    })
}

/// `2 · out elements · C/group · kH · kW`, the filter being operand 3.
fn qlinear_conv_flops(cx: &ge_ir::interfaces::CostCtx) -> f64 {
    let per: f64 = cx.operand_dims(3).iter().skip(1).product();
    2.0 * cx.out_elements() * per
}

/// The checked convolution attributes of a quantised convolution.
fn conv_attrs(src: &impl ge_ir::opdef::AttrSource, qlinear: bool) -> Result<ConvAttrs, String> {
    if qlinear {
        let a = QlinearConv::attrs(src);
        ConvAttrs::check(a.strides(), a.pads(), a.dilations(), a.group())
    } else {
        let a = ConvInteger::attrs(src);
        ConvAttrs::check(a.strides(), a.pads(), a.dilations(), a.group())
    }
}

/// The output channels of a filter type, where static.
fn out_channels(w: Type) -> Option<usize> {
    let d = w.as_tensor()?.dims.as_ref()?.first()?.as_static()?;
    Some(d as usize)
}

fn infer_conv_integer(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = conv_attrs(cx, false)?;
    let ts = cx.operand_types;
    let out = conv2d_type(ts[0], ts[1], None, &a)?;
    let m = out_channels(ts[1]);
    check_param(
        ts[2],
        "input_zero_point",
        Some(dtype_of(ts[0])?),
        Some(1),
        "per tensor",
    )?;
    check_param(
        ts[3],
        "filter_zero_point",
        Some(dtype_of(ts[1])?),
        m,
        "output channels",
    )?;
    Ok(vec![out.with_dtype(DType::I32)])
}

fn infer_qlinear_conv(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = conv_attrs(cx, true)?;
    let ts = cx.operand_types;
    let out = conv2d_type(ts[0], ts[3], Some(ts[8]), &a)?;
    let m = out_channels(ts[3]);
    let sdt = dtype_of(ts[1])?;
    check_param(ts[1], "input_scale", None, Some(1), "per tensor")?;
    check_param(
        ts[2],
        "input_zero_point",
        Some(dtype_of(ts[0])?),
        Some(1),
        "per tensor",
    )?;
    check_param(ts[4], "filter_scale", Some(sdt), m, "output channels")?;
    check_param(
        ts[5],
        "filter_zero_point",
        Some(dtype_of(ts[3])?),
        m,
        "output channels",
    )?;
    check_param(ts[6], "y_scale", Some(sdt), Some(1), "per tensor")?;
    check_param(ts[7], "y_zero_point", None, Some(1), "per tensor")?;
    Ok(vec![out.with_dtype(dtype_of(ts[7])?)])
}

fn sem_conv_integer(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 4)?;
    let a = conv_attrs(cx, false)?;
    let p = conv_integer(
        (&t[0].to_i64(), &t[0].shape, &t[2].to_i64()),
        (&t[1].to_i64(), &t[1].shape, &t[3].to_i64()),
        None,
        &a,
    )?;
    Ok(vec![Tensor::from_i64(p.shape, DType::I32, p.values)])
}

fn sem_qlinear_conv(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 9)?;
    let a = conv_attrs(cx, true)?;
    let p = conv_integer(
        (&t[0].to_i64(), &t[0].shape, &t[2].to_i64()),
        (&t[3].to_i64(), &t[3].shape, &t[5].to_i64()),
        Some(&t[8].to_i64()),
        &a,
    )?;
    if t[1].len() != 1 {
        return Err("'input_scale' must have one value".into());
    }
    // Per output channel: the filter's scale is the rows' scale.
    requantized(p, (t[4], t[1]), t[6], t[7])
}

def_op! {
    /// Integer 2-D convolution of quantised tensors (ONNX ConvInteger)
    ///
    /// `(input - input_zero_point) * (filter - filter_zero_point)` as `graph.conv2d` (NCHW
    /// input, OIHW filter, the same `strides`, `pads`, `dilations`, `group`), accumulated in
    /// i32 (wrapping). `input` and `filter` are i8 or u8; `input_zero_point` is one value,
    /// `filter_zero_point` one value or one per output channel, each of its tensor's type.
    /// The ONNX importer passes 0 for an absent zero point.
    pub ConvInteger = "graph.conv_integer" {
        operands {
            input: TensorOf(QUANT8),
            filter: TensorOf(QUANT8),
            input_zero_point: TensorOf(QUANT8),
            filter_zero_point: TensorOf(QUANT8),
        },
        results { output: TensorOf(&[DType::I32]) },
        attrs {
            /// stride along H and W
            strides: I64Array = [1, 1],
            /// zero padding [top, left, bottom, right] (of the zero-point-shifted input)
            pads: I64Array = [0, 0, 0, 0],
            /// filter dilation along H and W
            dilations: I64Array = [1, 1],
            /// number of channel groups
            group: I64 = 1,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_conv_integer,
        semantics: sem_conv_integer,
        interfaces [
            Cost::cube(conv_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::QuantMatMul,
        ],
        es,
    }
}

def_op! {
    /// Quantised 2-D convolution, requantised (ONNX QLinearConv)
    ///
    /// The i32 accumulator of `graph.conv_integer` plus `bias` (i32, one per output channel;
    /// the importer passes zeros when ONNX has none), requantised as `graph.qlinear_matmul`
    /// does: `saturate(round(acc · input_scale · filter_scale / y_scale) + y_zero_point)`,
    /// the multiplier in the scales' type, rounded half to even, clamped to `y_zero_point`'s
    /// type. `filter_scale` and `filter_zero_point` are one value or one per output channel;
    /// the input's and the result's are one value.
    pub QlinearConv = "graph.qlinear_conv" {
        operands {
            input: TensorOf(QUANT8),
            input_scale: TensorOf(SCALE),
            input_zero_point: TensorOf(QUANT8),
            filter: TensorOf(QUANT8),
            filter_scale: TensorOf(SCALE),
            filter_zero_point: TensorOf(QUANT8),
            y_scale: TensorOf(SCALE),
            y_zero_point: TensorOf(QUANT8),
            bias: TensorOf(&[DType::I32]),
        },
        results { output: TensorOf(QUANT8) },
        attrs {
            /// stride along H and W
            strides: I64Array = [1, 1],
            /// zero padding [top, left, bottom, right] (of the zero-point-shifted input)
            pads: I64Array = [0, 0, 0, 0],
            /// filter dilation along H and W
            dilations: I64Array = [1, 1],
            /// number of channel groups
            group: I64 = 1,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_qlinear_conv,
        semantics: sem_qlinear_conv,
        interfaces [
            Cost::cube(qlinear_conv_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::QuantMatMul,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[
    &MATMUL_INTEGER,
    &QLINEAR_MATMUL,
    &CONV_INTEGER,
    &QLINEAR_CONV,
];

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
            y: &[1.0],
            dtype: DType::F32,
        };
        // 2.5 + 0 -> 2 (half to even); 500 -> 255; -500 -> 0.
        assert_eq!(
            requantize_all(&p, &s, &[0.0], DType::U8).unwrap(),
            vec![2.0, 255.0, 0.0]
        );
    }
}
