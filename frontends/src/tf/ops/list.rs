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
use crate::proto::tensorflow::attr_value;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim};
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
            Some((node, msg)) => Err(ImportError::unsupported(format!(
                "node '{node}' (TensorListReserve): no TensorListSetItem into the list gives its element shape; {msg}"
            ))),
            None => Ok(()),
        }
    }
}

fn element_dtype(n: &TfNode) -> Res<DType> {
    n.dtype("element_dtype")
}

/// `v` (a list, or a list's element) holds the node's `element_dtype`.
fn check_dtype(cx: &TfCx, n: &TfNode, v: ValueId, what: &str) -> Res<()> {
    let (want, got) = (element_dtype(n)?, cx.e.dtype(v)?);
    if want != got {
        return Err(invalid(
            n,
            format!("element_dtype is {want}, but the {what} holds {got}"),
        ));
    }
    Ok(())
}

/// A list's dims `[n, S...]`, checked to hold the node's `element_dtype`;
/// None for the element shape of a stand-in (not known yet).
fn list_dims(cx: &TfCx, n: &TfNode, l: ValueId) -> Res<(Vec<Dim>, bool)> {
    check_dtype(cx, n, l, "list")?;
    let dims = cx.e.dims(l)?;
    if dims.is_empty() {
        return Err(invalid(n, "the list is a scalar, not a list"));
    }
    let stand_in = stand_in(&dims).is_some();
    Ok((dims, stand_in))
}

/// The k of a stand-in list `[n, 0, MARK + k]`.
fn stand_in(dims: &[Dim]) -> Option<usize> {
    match dims {
        [_, d0, d1] if d0.as_static() == Some(0) => {
            let k = d1.as_static()? - MARK;
            usize::try_from(k).ok()
        }
        _ => None,
    }
}

/// The list's static length.
fn static_len(n: &TfNode, dims: &[Dim]) -> Res<i64> {
    dims.first()
        .and_then(|d| d.as_static())
        .ok_or_else(|| invalid(n, "the list has no static length"))
}

/// An `element_shape` input (#k; -1 or a -1 dim: unknown) agrees with the
/// list's element shape `elem`.
fn check_element_shape(cx: &TfCx, n: &TfNode, k: usize, elem: &[Dim]) -> Res<()> {
    let Some(v) = n.inputs.get(k).copied() else {
        return Ok(());
    };
    let Some(shape) = cx.e.const_value(v).map(|t| t.to_i64()) else {
        return Ok(());
    };
    let unknown_rank = cx.e.static_shape(v).is_some_and(|s| s.is_empty()) && shape == [-1];
    let agrees = unknown_rank
        || (shape.len() == elem.len()
            && shape
                .iter()
                .zip(elem)
                .all(|(&s, d)| s < 0 || d.as_static().is_none_or(|d| d == s)));
    if !agrees {
        let elem: Vec<String> = elem.iter().map(|d| d.to_string()).collect();
        return Err(invalid(
            n,
            format!(
                "element_shape {shape:?}, but the list's elements have shape [{}]",
                elem.join(", ")
            ),
        ));
    }
    Ok(())
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

/// TensorListFromTensor(tensor, element_shape): the tensor itself (its
/// dim 0 indexes the elements).
pub fn from_tensor(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let t = n.input(0)?;
    check_dtype(cx, n, t, "tensor")?;
    let dims = cx.e.dims(t)?;
    if dims.is_empty() {
        return Err(invalid(
            n,
            "a list from a scalar (the tensor needs a dim to index the elements)",
        ));
    }
    check_element_shape(cx, n, 1, &dims[1..])?;
    one(cx.op1("data.identity", t)?)
}

/// TensorListStack(list, element_shape): the list itself.
pub fn stack(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let l = n.input(0)?;
    let (dims, stand_in) = list_dims(cx, n, l)?;
    if !stand_in {
        check_element_shape(cx, n, 1, &dims[1..])?;
    }
    if let Some(attr_value::Value::I(want)) = n.attr("num_elements") {
        let len = dims[0].as_static();
        if *want >= 0 && len.is_some_and(|len| len != *want) {
            return Err(invalid(
                n,
                format!(
                    "num_elements is {want}, but the list has {} elements",
                    dims[0]
                ),
            ));
        }
    }
    one(cx.op1("data.identity", l)?)
}

pub fn length(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let dims = cx.e.dims(n.input(0)?)?;
    let len = static_len(n, &dims)?;
    one(cx
        .e
        .constant(&Tensor::from_i64(vec![], DType::I32, vec![len]))?)
}

/// The index as a rank-0 i64 tensor; a constant one checked against the
/// list's length `len` (TensorFlow refuses an index outside `0..len`).
fn index(cx: &mut TfCx, n: &TfNode, i: ValueId, len: Option<i64>) -> Res<ValueId> {
    if cx
        .e
        .static_shape(i)
        .is_none_or(|s| s.iter().product::<i64>() != 1)
    {
        return Err(invalid(
            n,
            format!("the index must be a scalar, not '{}'", cx.e.ty(i)),
        ));
    }
    if let (Some(k), Some(len)) = (cx.e.const_value(i).map(|t| t.get_i(0)), len) {
        if k < 0 || k >= len {
            return Err(invalid(
                n,
                format!("index {k} is out of range for a list of {len} elements"),
            ));
        }
    }
    let i = cx.cast(i, DType::I64)?;
    let i = if cx.e.rank(i)? == 0 {
        i
    } else {
        cx.reshape(i, &[])?
    };
    if cx.e.const_value(i).is_some() {
        return Ok(i);
    }
    // An index known only at run time: graph.gather refuses one past the
    // end but counts a negative one from the end, which TensorFlow refuses.
    // A negative index is moved below -len (by -len, or by -2^62 for a list
    // of dynamic length), out of the gather's range too: the run stops with
    // "gather index .. is out of range" instead of reading the wrong item.
    let shift = -len.unwrap_or(1 << 62);
    let zero = cx.e.scalar(DType::I64, 0.0)?;
    let shift = cx.e.scalar(DType::I64, shift as f64)?;
    let negative = cx.op2("graph.less", i, zero)?;
    let moved = cx.op2("graph.add", i, shift)?;
    cx.op("graph.where", &[negative, moved, i], vec![])
}

/// TensorListGetItem(list, index, element_shape): a gather on dim 0.
pub fn get_item(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (l, i) = (n.input(0)?, n.input(1)?);
    let (dims, stand_in) = list_dims(cx, n, l)?;
    if !stand_in {
        check_element_shape(cx, n, 2, &dims[1..])?;
    }
    let i = index(cx, n, i, dims[0].as_static())?;
    one(cx.op("graph.gather", &[l, i], vec![("axis", Attribute::i64(0))])?)
}

/// TensorListSetItem(list, index, item): where(iota == index, item, list),
/// the iota `[n, 1, ...]`. Into a stand-in list, the first item's shape is
/// learnt (and this import attempt stopped).
pub fn set_item(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (l, i, item) = (n.input(0)?, n.input(1)?, n.input(2)?);
    let (dims, _) = list_dims(cx, n, l)?;
    check_dtype(cx, n, item, "item")?;
    if let Some(k) = stand_in(&dims) {
        let pending = cx.lists.pending.borrow();
        if let Some((reserve, msg)) = pending.get(k) {
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
    let len = static_len(n, &dims)?;
    let item_dims = cx.e.dims(item)?;
    let fits = item_dims.len() + 1 == dims.len()
        && item_dims
            .iter()
            .zip(&dims[1..])
            .all(|(a, b)| a.as_static().zip(b.as_static()).is_none_or(|(a, b)| a == b));
    if !fits {
        return Err(invalid(
            n,
            format!(
                "an item of type '{}' into a list of type '{}'",
                cx.e.ty(item),
                cx.e.ty(l)
            ),
        ));
    }
    if n.b("resize_if_index_out_of_bounds", false) && cx.e.const_value(i).is_none() {
        return Err(super::unsupported(
            n,
            "with resize_if_index_out_of_bounds and an index known only at run time (a list that grows needs dynamic shapes)",
        ));
    }
    let i = index(cx, n, i, Some(len))?;
    // A run-time index is gathered from 0..len first: one outside the list
    // stops the run there (TensorFlow refuses it) rather than matching no
    // row and dropping the item.
    let i = if cx.e.const_value(i).is_some() {
        i
    } else {
        let range = cx.e.constant(&Tensor::from_i64(
            vec![len as usize],
            DType::I64,
            (0..len).collect(),
        ))?;
        cx.op(
            "graph.gather",
            &[range, i],
            vec![("axis", Attribute::i64(0))],
        )?
    };
    let mut shape = vec![len as usize];
    shape.extend(std::iter::repeat_n(1, dims.len() - 1));
    let iota =
        cx.e.constant(&Tensor::from_i64(shape, DType::I64, (0..len).collect()))?;
    let hit = cx.op2("graph.equal", iota, i)?;
    let item = cx.unsqueeze(item, &[0])?;
    one(cx.op("graph.where", &[hit, item, l], vec![])?)
}
