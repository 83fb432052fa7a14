//! Reversing the first elements of each sequence of a batch (ONNX
//! ReverseSequence). The index map is shared by the reference semantics and
//! the runtime's native kernel (runtime/src/kernels/reverse_sequence.rs),
//! which moves elements as bytes (any dtype).

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{Data, Tensor};
use ge_ir::{DType, Type};

type SemResult = Result<Vec<Tensor>, String>;

/// The checked `(batch_axis, time_axis)` of an input of `rank` (each 0 or 1,
/// different) and the batch size `lens` must match.
pub fn reverse_axes(
    batch_axis: i64,
    time_axis: i64,
    rank: usize,
) -> Result<(usize, usize), String> {
    if rank < 2 {
        return Err(format!(
            "operand 'input' must have rank >= 2 (batch and time), but has rank {rank}"
        ));
    }
    match (batch_axis, time_axis) {
        (0, 1) => Ok((0, 1)),
        (1, 0) => Ok((1, 0)),
        _ => Err(format!(
            "attributes 'batch_axis' {batch_axis} and 'time_axis' {time_axis} must be 0 and 1 or 1 and 0"
        )),
    }
}

/// For each element of an input of `shape`, the element it is read from:
/// along `time`, the first `lens[b]` elements of batch entry `b` reversed,
/// the rest kept. Each length must lie in `0..=shape[time]`.
pub fn reverse_map(
    shape: &[usize],
    batch: usize,
    time: usize,
    lens: &[i64],
) -> Result<Vec<usize>, String> {
    if lens.len() != shape[batch] {
        return Err(format!(
            "operand 'sequence_lens' has {} entries for a batch of {}",
            lens.len(),
            shape[batch]
        ));
    }
    let t_len = shape[time] as i64;
    if let Some(bad) = lens.iter().find(|&&l| !(0..=t_len).contains(&l)) {
        return Err(format!(
            "sequence length {bad} is out of range for a time dim of {t_len}"
        ));
    }
    let inner: usize = shape[2..].iter().product();
    let (s0, s1) = (shape[1] * inner, inner);
    let mut map = Vec::with_capacity(shape.iter().product());
    for i0 in 0..shape[0] {
        for i1 in 0..shape[1] {
            let (b, t) = if batch == 0 { (i0, i1) } else { (i1, i0) };
            let l = lens[b] as usize;
            let t2 = if t < l { l - 1 - t } else { t };
            let (j0, j1) = if batch == 0 { (i0, t2) } else { (t2, i1) };
            let base = j0 * s0 + j1 * s1;
            map.extend(base..base + inner);
        }
    }
    Ok(map)
}

fn infer_reverse_sequence(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let (t, tl) = (cx.operand_types[0], cx.operand_types[1]);
    let at = ReverseSequence::attrs(cx);
    let d = dims(t, "input")?;
    let l = dims_rank(tl, "sequence_lens", 1, "batch")?;
    if let Some(d) = &d {
        let (b, _) = reverse_axes(at.batch_axis(), at.time_axis(), d.len())?;
        if let Some(l) = &l {
            check_dim_eq(l[0], d[b], "the length of 'sequence_lens' (the batch)")?;
        }
    }
    Ok(vec![t])
}

fn sem_reverse_sequence(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let (x, lens) = (t[0], t[1]);
    let at = ReverseSequence::attrs(cx);
    let (b, tm) = reverse_axes(at.batch_axis(), at.time_axis(), x.rank())?;
    let map = reverse_map(&x.shape, b, tm, &lens.to_i64())?;
    Ok(vec![match &x.data {
        Data::F(v) => Tensor::from_f64(
            x.shape.clone(),
            x.dtype,
            map.iter().map(|&i| v[i]).collect(),
        ),
        Data::I(v) => Tensor::from_i64(
            x.shape.clone(),
            x.dtype,
            map.iter().map(|&i| v[i]).collect(),
        ),
    }])
}

def_op! {
    /// Reverse the first elements of each sequence of a batch (ONNX ReverseSequence)
    ///
    /// `input` has a batch dim and a time dim (`batch_axis`, `time_axis`: 0 and 1 in either
    /// order); for batch entry `b`, the first `sequence_lens[b]` elements along time are
    /// reversed and the rest kept.
    pub ReverseSequence = "graph.reverse_sequence" {
        operands { input: AnyTensor, sequence_lens: TensorOf(&[DType::I64]) },
        results { output: AnyTensor },
        attrs {
            /// the batch dim (0 or 1)
            batch_axis: I64 = 1,
            /// the time dim (1 or 0)
            time_axis: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_reverse_sequence,
        semantics: sem_reverse_sequence,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Index,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&REVERSE_SEQUENCE];
