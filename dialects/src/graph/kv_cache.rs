//! KV-cache updates (ONNX TensorScatter, opset 24): a functional write of a
//! sequence block into a fixed-size cache buffer at a per-batch position.
//!
//! The write plan ([`ScatterPlan`], [`scatter_rows`]) is shared with the
//! runtime's native kernel (runtime/src/kernels/tensor_scatter.rs): both
//! copy whole rows of the dims after the sequence axis, so the op works on
//! any element type.

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{Data, Tensor};
use ge_ir::{DType, Type};

type SemResult = Result<Vec<Tensor>, String>;

/// The values of the `mode` attribute.
pub const MODES: &[&str] = &["linear", "circular"];

/// The sizes of a cache write: `outer` blocks (the dims before the axis,
/// `per_batch` of them per batch entry), the cache's and the update's
/// lengths along the axis, and `row` elements after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScatterPlan {
    pub outer: usize,
    pub per_batch: usize,
    pub max_len: usize,
    pub len: usize,
    pub row: usize,
    pub circular: bool,
}

impl ScatterPlan {
    /// Check the shapes of `past_cache` and `update` (and `write_indices`)
    /// against the attributes.
    pub fn new(
        axis: i64,
        mode: &str,
        past: &[usize],
        update: &[usize],
        indices: Option<&[usize]>,
    ) -> Result<ScatterPlan, String> {
        let ax = cache_axis(axis, past.len())?;
        if update.len() != past.len() {
            return Err(format!(
                "operand 'update' of shape {update:?} must have the rank of 'past_cache' {past:?}"
            ));
        }
        for (i, (&p, &u)) in past.iter().zip(update).enumerate() {
            if i != ax && p != u {
                return Err(format!(
                    "operand 'update' of shape {update:?} must match 'past_cache' {past:?} in every dim but the axis {ax}"
                ));
            }
        }
        if update[ax] > past[ax] {
            return Err(format!(
                "the update's sequence length {} exceeds the cache's {}",
                update[ax], past[ax]
            ));
        }
        if let Some(ix) = indices {
            if ix != [past[0]] {
                return Err(format!(
                    "operand 'write_indices' of shape {ix:?} must have shape [{}] (one per batch entry)",
                    past[0]
                ));
            }
        }
        Ok(ScatterPlan {
            outer: past[..ax].iter().product(),
            per_batch: past[1..ax].iter().product(),
            max_len: past[ax],
            len: update[ax],
            row: past[ax + 1..].iter().product(),
            circular: mode == "circular",
        })
    }

    /// The cache position of step `s` of batch entry `b`'s update.
    fn position(&self, start: i64, s: usize) -> Result<usize, String> {
        let m = self.max_len as i64;
        if self.circular {
            if m == 0 {
                return Err("a circular write into an empty cache".into());
            }
            return Ok((start + s as i64).rem_euclid(m) as usize);
        }
        if start < 0 || start + (self.len as i64) > m {
            return Err(format!(
                "write index {start} with {} steps is outside the cache's {m} positions (mode linear)",
                self.len
            ));
        }
        Ok(start as usize + s)
    }
}

/// The normalised sequence axis: in `[-rank, rank)` and not the batch dim.
pub fn cache_axis(axis: i64, rank: usize) -> Result<usize, String> {
    let ax = norm_axis(axis, rank, "attribute 'axis'")?;
    if ax == 0 {
        return Err("attribute 'axis' must not be the batch dim 0".into());
    }
    Ok(ax)
}

/// Call `copy(dst, src, len)` for every row run of the write: element
/// offsets into the cache and the update, `len` elements each. The caller
/// has already copied `past_cache` into the result.
pub fn scatter_rows(
    p: &ScatterPlan,
    indices: Option<&[i64]>,
    mut copy: impl FnMut(usize, usize, usize),
) -> Result<(), String> {
    for o in 0..p.outer {
        let b = o / p.per_batch.max(1);
        let start = indices.map_or(0, |ix| ix[b]);
        for s in 0..p.len {
            let pos = p.position(start, s)?;
            copy(
                (o * p.max_len + pos) * p.row,
                (o * p.len + s) * p.row,
                p.row,
            );
        }
    }
    Ok(())
}

fn infer_tensor_scatter(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let ts = cx.operand_types;
    let a = TensorScatter::attrs(cx);
    let (tp, tu) = (ts[0], ts[1]);
    if tp.dtype() != tu.dtype() {
        return Err(format!(
            "operand 'update' '{tu}' must have the element type of 'past_cache' '{tp}'"
        ));
    }
    let st = |t: Type| {
        t.as_tensor()
            .and_then(|t| t.static_shape())
            .map(|s| s.into_iter().map(|d| d as usize).collect::<Vec<_>>())
    };
    if let Some(p) = dims(tp, "past_cache")? {
        cache_axis(a.axis(), p.len())?;
    }
    if let (Some(p), Some(u)) = (st(tp), st(tu)) {
        let ix = ts.get(2).and_then(|&t| st(t));
        ScatterPlan::new(a.axis(), a.mode(), &p, &u, ix.as_deref())?;
    }
    Ok(vec![tp])
}

fn sem_tensor_scatter(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let a = TensorScatter::attrs(cx);
    let (past, upd) = (t[0], t[1]);
    let ix = t.get(2);
    let p = ScatterPlan::new(
        a.axis(),
        a.mode(),
        &past.shape,
        &upd.shape,
        ix.map(|t| &t.shape[..]),
    )?;
    let ix = ix.map(|t| t.to_i64());
    let mut out = (*past).clone();
    match (&mut out.data, &upd.data) {
        (Data::F(o), Data::F(u)) => scatter_rows(&p, ix.as_deref(), |d, s, n| {
            o[d..d + n].copy_from_slice(&u[s..s + n])
        })?,
        (Data::I(o), Data::I(u)) => scatter_rows(&p, ix.as_deref(), |d, s, n| {
            o[d..d + n].copy_from_slice(&u[s..s + n])
        })?,
        _ => return Err("operands 'past_cache' and 'update' differ in element type".into()),
    }
    Ok(vec![out])
}

def_op! {
    /// Write an update into a KV cache along the sequence axis (ONNX TensorScatter)
    ///
    /// The result is `past_cache` with, for every index of the dims before `axis` (the first
    /// being the batch entry `b`), the update's `sequence_length` rows written at cache
    /// positions `write_indices[b] + s` (0 without `write_indices`); `mode = "circular"` takes
    /// the positions modulo the cache length, `"linear"` requires them to fit (a run-time error
    /// otherwise). `update` has the cache's shape except along `axis` (not 0), where it is at
    /// most as long.
    pub TensorScatter = "graph.tensor_scatter" {
        operands {
            past_cache: AnyTensor, update: AnyTensor,
            write_indices: Option<TensorOf(&[DType::I64])>,
        },
        results { present_cache: AnyTensor },
        attrs {
            /// "linear" (positions must fit) or "circular" (wrap around)
            mode: Enum(MODES) = "linear",
            /// the sequence axis (negative counts from the end; never 0)
            axis: I64 = -2,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_tensor_scatter,
        semantics: sem_tensor_scatter,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Index,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&TENSOR_SCATTER];

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows land at the write index; circular wraps, linear refuses to.
    #[test]
    fn writes_wrap_only_when_circular() {
        let p = ScatterPlan::new(-2, "circular", &[1, 4, 1], &[1, 2, 1], Some(&[1])).unwrap();
        let mut at = vec![];
        scatter_rows(&p, Some(&[3]), |d, s, _| at.push((d, s))).unwrap();
        assert_eq!(at, [(3, 0), (0, 1)]);
        let p = ScatterPlan {
            circular: false,
            ..p
        };
        assert!(scatter_rows(&p, Some(&[3]), |_, _, _| {}).is_err());
        assert!(ScatterPlan::new(0, "linear", &[1, 4], &[1, 2], None).is_err());
        assert!(ScatterPlan::new(1, "linear", &[1, 4], &[1, 5], None).is_err());
    }
}
