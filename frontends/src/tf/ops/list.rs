//! TensorLists (TF2's TensorArray) as tensors with a leading element dim.
//!
//! A list of `n` elements of shape `S` is the tensor `[n, S...]`: reserving
//! makes zeros, `GetItem` is a gather on dim 0, `SetItem` a select of the
//! new element where `iota == index`, `Stack` and `FromTensor` are the tensor
//! itself. This needs `n` and `S` static when the list is created (Keras RNNs
//! with a fixed sequence length); lists that grow (`PushBack`, a reserve with
//! an unknown size or element shape) need the dynamic-shape work and are
//! refused with a message saying so.

use super::{invalid, one, Res, TfCx, TfNode};
use crate::error::ImportError;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

fn element_dtype(n: &TfNode) -> Res<DType> {
    n.dtype("element_dtype")
}

/// TensorListReserve(element_shape, num_elements): zeros `[n, S...]`.
pub fn reserve(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let shape = cx.const_i64s(n.input(0)?, "TensorListReserve element_shape")?;
    let num = cx.const_i64s(n.input(1)?, "TensorListReserve num_elements")?;
    let num = *num
        .first()
        .ok_or_else(|| invalid(n, "num_elements is empty"))?;
    // A scalar -1 element shape is "unknown rank".
    let unknown = num < 0
        || shape.iter().any(|&d| d < 0)
        || (shape.len() == 1 && cx.e.static_shape(n.input(0)?).is_some_and(|s| s.is_empty()));
    if unknown {
        return Err(ImportError::unsupported(format!(
            "TensorListReserve with {} elements of shape {shape:?}: a list whose size or element shape is only known at run time needs dynamic shapes (not supported yet)",
            num
        )));
    }
    let mut full = vec![num];
    full.extend(&shape);
    one(cx.full(&full, element_dtype(n)?, 0.0)?)
}

pub fn from_tensor(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    one(cx.op1("data.identity", n.input(0)?)?)
}

pub fn stack(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    one(cx.op1("data.identity", n.input(0)?)?)
}

pub fn length(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let l = n.input(0)?;
    let d = cx.e.dims(l)?;
    let len = d
        .first()
        .and_then(|d| d.as_static())
        .ok_or_else(|| invalid(n, "the list has no static length"))?;
    one(cx
        .e
        .constant(&Tensor::from_i64(vec![], DType::I32, vec![len]))?)
}

/// The index as a rank-0 i64 tensor.
fn index(cx: &mut TfCx, i: ValueId) -> Res<ValueId> {
    let i = cx.cast(i, DType::I64)?;
    if cx.e.rank(i)? == 0 {
        Ok(i)
    } else {
        cx.reshape(i, &[])
    }
}

pub fn get_item(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (l, i) = (n.input(0)?, n.input(1)?);
    let i = index(cx, i)?;
    one(cx.op("graph.gather", &[l, i], vec![("axis", Attribute::i64(0))])?)
}

/// where(iota == index, item, list), the iota `[n, 1, ...]`.
pub fn set_item(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (l, i, item) = (n.input(0)?, n.input(1)?, n.input(2)?);
    let dims = cx.e.dims(l)?;
    let len = dims
        .first()
        .and_then(|d| d.as_static())
        .ok_or_else(|| invalid(n, "the list has no static length"))?;
    let i = index(cx, i)?;
    let mut shape = vec![len as usize];
    shape.extend(std::iter::repeat_n(1, dims.len() - 1));
    let iota =
        cx.e.constant(&Tensor::from_i64(shape, DType::I64, (0..len).collect()))?;
    let hit = cx.op2("graph.equal", iota, i)?;
    let item = cx.unsqueeze(item, &[0])?;
    one(cx.op("graph.where", &[hit, item, l], vec![])?)
}
