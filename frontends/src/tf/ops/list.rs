//! TensorLists (TF2's TensorArray) as tensors with a leading element dim.
//!
//! A list of `n` elements of shape `S` is the tensor `[n, S...]`: reserving
//! makes zeros, `GetItem` is a gather on dim 0, `SetItem` a select of the
//! new element where `iota == index`, `Stack` and `FromTensor` are the tensor
//! itself. This needs `n` static when the list is created (Keras RNNs with a
//! fixed sequence length). An unknown element shape (`tf.TensorArray` without
//! `element_shape`, reserved before a `tf.while_loop` that writes it) is taken
//! from the first `TensorListSetItem` into the list, as TensorFlow's own shape
//! inference does, through [`ListShapes`]; lists that grow (`PushBack`) or
//! have an unknown size need the dynamic-shape work and are refused with a
//! message saying so.

use super::{invalid, one, Res, TfCx, TfNode};
use crate::error::ImportError;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::DType;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;

/// The second dim of a stand-in list `[n, 0, MARK + k]`: the k-th reserve of
/// this import attempt whose element shape is not known yet. It holds no
/// element, and only `TensorListSetItem` looks at it.
const MARK: i64 = 1_000_003;

/// Element shapes of TensorLists reserved without one, by reserve node name,
/// learnt across import attempts: an attempt stands in a `[n, 0, MARK + k]`
/// tensor for such a list; the first `TensorListSetItem` into it records the
/// item's shape and stops the attempt, and the next attempt reserves
/// `[n, item shape...]`. Every attempt learns one shape, so the number of
/// attempts is bounded by the number of reserves.
#[derive(Default)]
pub struct ListShapes {
    known: RefCell<HashMap<String, Vec<i64>>>,
    /// This attempt's stand-ins: the reserve node of each, with its message.
    pending: RefCell<Vec<(String, String)>>,
    learned: Cell<bool>,
}

impl ListShapes {
    pub fn start_attempt(&self) {
        self.pending.borrow_mut().clear();
        self.learned.set(false);
    }
    /// Whether the last attempt learnt an element shape (so another is due).
    pub fn learned(&self) -> bool {
        self.learned.get()
    }
    /// A finished attempt used no stand-in (else: a list never set).
    pub fn all_known(&self) -> Res<()> {
        match self.pending.borrow().first() {
            Some((_, msg)) => Err(ImportError::unsupported(msg.clone())),
            None => Ok(()),
        }
    }
}

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
    let unknown_rank =
        shape.len() == 1 && cx.e.static_shape(n.input(0)?).is_some_and(|s| s.is_empty());
    let unknown = unknown_rank || shape.iter().any(|&d| d < 0);
    let dtype = element_dtype(n)?;
    let msg = format!(
        "TensorListReserve with {num} elements of shape {shape:?}: a list whose size or element shape is only known at run time needs dynamic shapes (not supported yet)"
    );
    if num < 0 {
        return Err(ImportError::unsupported(msg));
    }
    let mut full = vec![num];
    if unknown {
        match cx.lists.known.borrow().get(&n.name) {
            Some(item) => {
                // A partly known element shape must agree with the item's.
                if !unknown_rank
                    && (shape.len() != item.len()
                        || shape.iter().zip(item).any(|(&s, &i)| s >= 0 && s != i))
                {
                    return Err(invalid(
                        n,
                        format!("element shape {shape:?}, but an item of shape {item:?} is set into the list"),
                    ));
                }
                full.extend(item);
            }
            None => {
                let mut pending = cx.lists.pending.borrow_mut();
                full.extend([0, MARK + pending.len() as i64]);
                pending.push((n.name.clone(), msg));
            }
        }
    } else {
        full.extend(&shape);
    }
    one(cx.full(&full, dtype, 0.0)?)
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
    if let [_, d0, d1] = dims.as_slice() {
        let k = d1.as_static().map(|d| d - MARK);
        if d0.as_static() == Some(0) && k.is_some_and(|k| k >= 0) {
            let pending = cx.lists.pending.borrow();
            if let Some((reserve, msg)) = k.and_then(|k| pending.get(k as usize)) {
                let Some(shape) = cx.e.static_shape(item) else {
                    return Err(ImportError::unsupported(msg.clone()));
                };
                cx.lists
                    .known
                    .borrow_mut()
                    .insert(reserve.clone(), shape.clone());
                cx.lists.learned.set(true);
                return Err(ImportError::unsupported(format!(
                    "{msg}: its items have shape {shape:?} (imported again with it)"
                )));
            }
        }
    }
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
