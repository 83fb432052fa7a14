//! The `data` dialect: data movement and layout (DESIGN.md's `tensor` dialect,
//! renamed because mlir-opt's own `tensor` dialect rejects our ops in generic
//! form).
//!
//! Every op here only moves elements around (or materialises them), so its
//! reference semantics are exact for every dtype: no rounding ever happens.
//!
//! - [`constant`] holds `data.constant`
//! - [`shape`] holds `data.reshape`, `data.squeeze`, `data.unsqueeze`, `data.identity`
//! - [`movement`] holds `data.transpose`, `data.broadcast_to`, `data.expand`,
//!   `data.tile`, `data.slice`, `data.concat`, `data.split`
//! - [`size`] holds `data.nonzero`, whose result size depends on values; so
//!   do [`unique`]'s `data.unique` and [`nms`]'s `data.non_max_suppression`
//! - [`layout`] holds `data.transdata` and the Ascend storage layouts it converts
//!   between (ND, NCHW, NHWC, HWCN, NC1HWC0, FRACTAL_Z, FRACTAL_NZ)

pub mod constant;
pub mod layout;
pub mod movement;
pub mod nms;
pub mod shape;
pub mod size;
pub mod unique;

use ge_ir::attributes::{read_element, write_element, Element};
use ge_ir::opdef::{Dialect, InferCtx};
use ge_ir::tensor::{Data, Tensor};
use ge_ir::{DType, Dim, Type};

pub static DIALECT: Dialect = Dialect {
    name: "data",
    summary: "Data movement and layout: constants, reshapes, transposes, slices, \
              concatenation, broadcasting and Ascend format conversion (transdata)",
    groups: &[
        constant::OPS,
        shape::OPS,
        movement::OPS,
        layout::OPS,
        size::OPS,
        unique::OPS,
        nms::OPS,
    ],
};

/// The assembly format of the data-movement ops (same as graph compute ops).
pub const DATA_FORMAT: &str = "operands attr-dict `:` functional-type(operands, results)";

/// The dims of a ranked tensor type, or an error naming `what`.
pub fn ranked_dims(t: Type, what: &str) -> Result<Vec<Dim>, String> {
    t.as_tensor()
        .and_then(|tt| tt.dims.as_ref().map(|d| d.to_vec()))
        .ok_or_else(|| format!("{what} must be a ranked tensor, but got '{t}'"))
}

/// Operand `i`'s type from an inference context.
pub fn operand(cx: &InferCtx, i: usize) -> Result<Type, String> {
    cx.operand_types
        .get(i)
        .copied()
        .ok_or_else(|| format!("expects operand #{i}"))
}

/// The element type of a tensor type.
pub fn dtype_of(t: Type) -> Result<DType, String> {
    t.dtype()
        .ok_or_else(|| format!("expected a tensor type, but got '{t}'"))
}

/// Resolve a possibly negative axis against `rank` (ONNX: `[-rank, rank)`).
pub fn norm_axis(axis: i64, rank: usize, what: &str) -> Result<usize, String> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        return Err(format!(
            "{what} {axis} is out of range for rank {rank} (expected [{}, {}])",
            -r,
            r - 1
        ));
    }
    Ok(if axis < 0 { axis + r } else { axis } as usize)
}

/// Render a dim list like a tensor shape: `[B, 3, 224]`.
pub fn fmt_dims(d: &[Dim]) -> String {
    let parts: Vec<String> = d.iter().map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// Gather `src` elements by flat index (`None` = zero padding) into `shape`.
pub fn gather_flat(src: &Tensor, shape: Vec<usize>, idx: &[Option<usize>]) -> Tensor {
    let data = match &src.data {
        Data::F(v) => Data::F(idx.iter().map(|i| i.map_or(0.0, |i| v[i])).collect()),
        Data::I(v) => Data::I(idx.iter().map(|i| i.map_or(0, |i| v[i])).collect()),
    };
    Tensor {
        shape,
        dtype: src.dtype,
        data,
    }
}

/// Gather `src` elements by flat index into `shape` (no padding).
pub fn take_flat(src: &Tensor, shape: Vec<usize>, idx: &[usize]) -> Tensor {
    let data = match &src.data {
        Data::F(v) => Data::F(idx.iter().map(|&i| v[i]).collect()),
        Data::I(v) => Data::I(idx.iter().map(|&i| v[i]).collect()),
    };
    Tensor {
        shape,
        dtype: src.dtype,
        data,
    }
}

/// Little-endian storage bytes of a tensor (as in memory: `i1` one byte per
/// element, f16/bf16 as their bits).
pub fn tensor_to_bytes(t: &Tensor) -> Vec<u8> {
    let mut out = Vec::with_capacity(t.len() * t.dtype.byte_size());
    match &t.data {
        Data::F(v) => v
            .iter()
            .for_each(|&x| write_element(t.dtype, Element::Float(x), &mut out)),
        Data::I(v) => v.iter().for_each(|&x| {
            let e = if t.dtype == DType::U64 {
                Element::UInt(x as u64)
            } else {
                Element::Int(x)
            };
            write_element(t.dtype, e, &mut out)
        }),
    }
    out
}

/// Decode little-endian storage bytes into a tensor of `shape` and `dtype`.
pub fn tensor_from_bytes(bytes: &[u8], shape: Vec<usize>, dtype: DType) -> Result<Tensor, String> {
    let w = dtype.byte_size();
    // The shape may come from a file: the bytes must be there, in checked arithmetic.
    let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let need = n.and_then(|n| n.checked_mul(w));
    let (Some(n), Some(need)) = (n, need) else {
        return Err(format!("shape {shape:?} of {dtype} is too large"));
    };
    if bytes.len() < need {
        return Err(format!(
            "{} bytes are too few for {n} elements of {dtype} ({need} bytes)",
            bytes.len(),
        ));
    }
    let elems = (0..n).map(|i| read_element(dtype, &bytes[i * w..i * w + w]));
    Ok(if dtype.is_float() {
        Tensor {
            shape,
            dtype,
            data: Data::F(elems.map(|e| e.as_f64()).collect()),
        }
    } else {
        Tensor {
            shape,
            dtype,
            data: Data::I(elems.map(|e| e.as_i64()).collect()),
        }
    })
}

/// Row-major multi-index of flat index `i` in `shape` (written into `out`).
pub fn unravel(mut i: usize, shape: &[usize], out: &mut [usize]) {
    for k in (0..shape.len()).rev() {
        let d = shape[k].max(1);
        out[k] = i % d;
        i /= d;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_every_dtype() {
        for dt in DType::ALL {
            // f8E8M0FNU has no zero (0 reads as NaN, which never compares equal).
            let values = if dt == DType::F8E8M0FNU {
                vec![1, 2, 2, 1]
            } else {
                vec![0, 1, 1, 0]
            };
            let t = Tensor::from_i64(vec![2, 2], dt, values);
            let b = tensor_to_bytes(&t);
            assert_eq!(b.len(), 4 * dt.byte_size());
            assert_eq!(tensor_from_bytes(&b, vec![2, 2], dt).unwrap(), t);
        }
        let t = Tensor::from_f64(vec![3], DType::F16, vec![0.1, -2.5, 65504.0]);
        let b = tensor_to_bytes(&t);
        assert_eq!(tensor_from_bytes(&b, vec![3], DType::F16).unwrap(), t);
    }

    #[test]
    fn axes_normalise_like_onnx() {
        assert_eq!(norm_axis(-1, 4, "axis").unwrap(), 3);
        assert!(norm_axis(4, 4, "axis").is_err());
        assert!(norm_axis(-5, 4, "axis").is_err());
    }
}
