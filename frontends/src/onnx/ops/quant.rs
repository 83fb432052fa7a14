//! Quantisation ops: QuantizeLinear and DequantizeLinear map to their graph
//! ops; DynamicQuantizeLinear is composed of reductions, elementwise ops and
//! `graph.quantize_linear` (ONNX's own function body for it). MatMulInteger
//! and QLinearMatMul map to `graph.matmul_integer` / `graph.qlinear_matmul`,
//! ConvInteger and QLinearConv to `graph.conv_integer` / `graph.qlinear_conv`,
//! with a 0 for each absent zero point (and QLinearConv's absent bias).

use super::{one, op1, op2, scalar_like, unsupported, Cx, Node, Res};
use crate::onnx::tensor::dtype_from_onnx;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::{DType, Type};

/// The operands and `operand_segment_sizes` of a quantize op.
fn operands(n: &Node) -> Res<(Vec<ValueId>, Attribute)> {
    let (x, s) = (n.input(0)?, n.input(1)?);
    let zp = n.opt_input(2);
    let mut ops = vec![x, s];
    ops.extend(zp);
    let seg = Attribute::i64_array(&[1, 1, zp.is_some() as i64]);
    Ok((ops, seg))
}

pub fn quantize_linear(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (ops, seg) = operands(n)?;
    let to = match (n.opt_input(2), n.opt_i("output_dtype")?) {
        (Some(zp), _) => cx.e.dtype(zp)?,
        (None, Some(code)) if code != 0 => dtype_from_onnx(code as i32)?,
        _ => DType::U8,
    };
    if n.opt_i("precision")?.is_some_and(|p| p != 0) {
        return Err(unsupported(n, "with a 'precision' attribute"));
    }
    one(cx.e.op(
        "graph.quantize_linear",
        &ops,
        vec![
            ("to", Attribute::ty(Type::scalar(to))),
            ("axis", Attribute::i64(n.i("axis", 1)?)),
            ("block_size", Attribute::i64(n.i("block_size", 0)?)),
            ("saturate", Attribute::i64(n.i("saturate", 1)?)),
            ("operand_segment_sizes", seg),
        ],
    )?)
}

pub fn dequantize_linear(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (ops, seg) = operands(n)?;
    let to = match n.opt_i("output_dtype")? {
        Some(code) if code != 0 => dtype_from_onnx(code as i32)?,
        _ => cx.e.dtype(n.input(1)?)?,
    };
    one(cx.e.op(
        "graph.dequantize_linear",
        &ops,
        vec![
            ("to", Attribute::ty(Type::scalar(to))),
            ("axis", Attribute::i64(n.i("axis", 1)?)),
            ("block_size", Attribute::i64(n.i("block_size", 0)?)),
            ("operand_segment_sizes", seg),
        ],
    )?)
}

/// ONNX's function body: `scale = (max(0, max x) - min(0, min x)) / 255`,
/// `zero_point = saturate(round(-min(0, min x) / scale))` as ui8, `y =
/// QuantizeLinear(x, scale, zero_point)`.
pub fn dynamic_quantize_linear(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let all = |cx: &mut Cx, name: &str| super::reduce(cx, name, x, &[], false);
    let (mx, mn) = (all(cx, "graph.reduce_max")?, all(cx, "graph.reduce_min")?);
    let zero = scalar_like(cx, x, 0.0)?;
    let (mx, mn) = (
        op2(cx, "graph.max", mx, zero)?,
        op2(cx, "graph.min", mn, zero)?,
    );
    let range = op2(cx, "graph.sub", mx, mn)?;
    let q = scalar_like(cx, x, 255.0)?;
    let scale = op2(cx, "graph.div", range, q)?;
    let neg = op1(cx, "graph.neg", mn)?;
    let zf = op2(cx, "graph.div", neg, scale)?;
    let zf = op1(cx, "graph.round", zf)?;
    let (lo, hi) = (scalar_like(cx, x, 0.0)?, scalar_like(cx, x, 255.0)?);
    let seg = Attribute::i64_array(&[1, 1, 1]);
    let zf = cx.e.op(
        "graph.clip",
        &[zf, lo, hi],
        vec![("operand_segment_sizes", seg)],
    )?;
    let zp = super::cast(cx, zf, DType::U8)?;
    let y = cx.e.op(
        "graph.quantize_linear",
        &[x, scale, zp],
        vec![
            ("to", Attribute::ty(Type::scalar(DType::U8))),
            ("operand_segment_sizes", Attribute::i64_array(&[1, 1, 1])),
        ],
    )?;
    Ok(vec![y, scale, zp])
}

/// A zero point: input `i`, or a scalar 0 of `like`'s type when absent
/// (the graph ops take every operand).
fn zero_point(cx: &mut Cx, n: &Node, i: usize, like: ValueId) -> Res<ValueId> {
    match n.opt_input(i) {
        Some(z) => Ok(z),
        None => scalar_like(cx, like, 0.0),
    }
}

/// MatMulInteger(A, B, a_zero_point?, b_zero_point?) maps to
/// `graph.matmul_integer`.
pub fn matmul_integer(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    let az = zero_point(cx, n, 2, a)?;
    let bz = zero_point(cx, n, 3, b)?;
    one(cx.e.op("graph.matmul_integer", &[a, b, az, bz], vec![])?)
}

/// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point,
/// y_scale, y_zero_point) maps to `graph.qlinear_matmul`.
pub fn qlinear_matmul(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(3)?);
    let (az, bz) = (zero_point(cx, n, 2, a)?, zero_point(cx, n, 5, b)?);
    let yz = zero_point(cx, n, 7, a)?;
    let ops = [a, n.input(1)?, az, b, n.input(4)?, bz, n.input(6)?, yz];
    one(cx.e.op("graph.qlinear_matmul", &ops, vec![])?)
}

/// ConvInteger(x, w, x_zero_point?, w_zero_point?) maps to
/// `graph.conv_integer` (2-D images).
pub fn conv_integer(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, w) = (n.input(0)?, n.input(1)?);
    let attrs = super::nn::conv2d_attrs(cx, n, x, w)?;
    let (xz, wz) = (zero_point(cx, n, 2, x)?, zero_point(cx, n, 3, w)?);
    one(cx.e.op("graph.conv_integer", &[x, w, xz, wz], attrs)?)
}

/// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
/// y_zero_point, B?) maps to `graph.qlinear_conv` (2-D images); an absent
/// bias is zeros (one per output channel, so the filter's count must be
/// static).
pub fn qlinear_conv(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, w) = (n.input(0)?, n.input(3)?);
    let attrs = super::nn::conv2d_attrs(cx, n, x, w)?;
    let (xz, wz) = (zero_point(cx, n, 2, x)?, zero_point(cx, n, 5, w)?);
    let yz = zero_point(cx, n, 7, x)?;
    let bias = match n.opt_input(8) {
        Some(b) => b,
        None => {
            let m = super::static_shape(cx, n, w, "a filter")?;
            let m = m.first().copied().unwrap_or(0).max(0) as usize;
            super::const_f(cx, vec![m], DType::I32, vec![0.0; m])?
        }
    };
    let ops = [
        x,
        n.input(1)?,
        xz,
        w,
        n.input(4)?,
        wz,
        n.input(6)?,
        yz,
        bias,
    ];
    one(cx.e.op("graph.qlinear_conv", &ops, attrs)?)
}
