//! Rotary position embedding (ONNX RotaryEmbedding, opset 23): each head's
//! first `rotary_embedding_dim` features rotated pairwise by the angle of
//! the token's position, read from cos/sin caches.
//!
//! The rotation ([`rotate`]) is generic over the element type and public:
//! the semantics run it in f64, the runtime's native kernel
//! (runtime/src/kernels/rotary.rs) in f32.

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Type};

type SemResult = Result<Vec<Tensor>, String>;

/// The attributes of a rotary embedding.
#[derive(Clone, Copy, Debug)]
pub struct Rotary {
    pub interleaved: bool,
    /// 0: the whole head.
    pub dim: usize,
    /// Heads of a 3-D input (0 for 4-D inputs).
    pub num_heads: usize,
}

impl Rotary {
    pub fn of(src: &impl ge_ir::opdef::AttrSource) -> Result<Rotary, String> {
        let a = RotaryEmbedding::attrs(src);
        let (dim, heads) = (a.rotary_embedding_dim(), a.num_heads());
        if dim < 0 || heads < 0 {
            return Err(format!(
                "attributes 'rotary_embedding_dim' and 'num_heads' must be >= 0, but got {dim} and {heads}"
            ));
        }
        Ok(Rotary {
            interleaved: a.interleaved() != 0,
            dim: dim as usize,
            num_heads: heads as usize,
        })
    }
}

/// The sizes of a rotation: batch, sequence, heads, head size, rotated
/// features, and whether the input is `B x heads x S x D` (4-D) rather than
/// `B x S x (heads·D)`.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub batch: usize,
    pub seq: usize,
    pub heads: usize,
    pub head: usize,
    pub rot: usize,
    pub four_d: bool,
}

/// Check the operand shapes (`pos`: the position ids' shape when given).
pub fn geometry(
    r: &Rotary,
    x: &[usize],
    cos: &[usize],
    sin: &[usize],
    pos: Option<&[usize]>,
) -> Result<Geometry, String> {
    let (batch, seq, heads, head, four_d) = match *x {
        [b, h, s, d] => (b, s, h, d, true),
        [b, s, hidden] => {
            if r.num_heads == 0 || hidden % r.num_heads != 0 {
                return Err(format!(
                    "a 3-D input needs 'num_heads' dividing its hidden size {hidden} (got {})",
                    r.num_heads
                ));
            }
            (b, s, r.num_heads, hidden / r.num_heads, false)
        }
        _ => {
            return Err(format!(
                "operand 'input' must have rank 3 or 4, but has shape {x:?}"
            ))
        }
    };
    let rot = if r.dim == 0 { head } else { r.dim };
    if rot > head || rot % 2 != 0 {
        return Err(format!(
            "the rotated size {rot} must be even and at most the head size {head}"
        ));
    }
    if cos != sin {
        return Err(format!(
            "the cos and sin caches differ in shape: {cos:?} and {sin:?}"
        ));
    }
    let half = rot / 2;
    let want_ok = match (pos, cos) {
        (Some(p), [_, h]) => p == [batch, seq] && *h == half,
        (None, [b, s, h]) => *b == batch && *s == seq && *h == half,
        _ => false,
    };
    if !want_ok {
        return Err(format!(
            "the caches have shape {cos:?}; expected [positions, {half}] with position ids of shape [{batch}, {seq}] (got {pos:?}), or [{batch}, {seq}, {half}] without"
        ));
    }
    Ok(Geometry {
        batch,
        seq,
        heads,
        head,
        rot,
        four_d,
    })
}

/// Rotate `x` into `out` (both in the input's layout). `pos` holds the
/// position of each (batch, step); a position outside the caches is an error.
pub fn rotate<T: Real>(
    r: &Rotary,
    g: &Geometry,
    x: &[T],
    cos: &[T],
    sin: &[T],
    pos: Option<&[i64]>,
    out: &mut [T],
) -> Result<(), String> {
    let half = g.rot / 2;
    let rows = cos.len() / half.max(1);
    out.copy_from_slice(x);
    for b in 0..g.batch {
        for s in 0..g.seq {
            let row = match pos {
                Some(p) => {
                    let v = p[b * g.seq + s];
                    usize::try_from(v)
                        .ok()
                        .filter(|&v| v < rows)
                        .ok_or_else(|| {
                            format!("position id {v} is outside the caches' {rows} rows")
                        })?
                }
                None => b * g.seq + s,
            };
            let (c, sn) = (&cos[row * half..][..half], &sin[row * half..][..half]);
            for h in 0..g.heads {
                let base = if g.four_d {
                    ((b * g.heads + h) * g.seq + s) * g.head
                } else {
                    ((b * g.seq + s) * g.heads + h) * g.head
                };
                for i in 0..half {
                    let (i1, i2) = if r.interleaved {
                        (base + 2 * i, base + 2 * i + 1)
                    } else {
                        (base + i, base + i + half)
                    };
                    let (x1, x2) = (x[i1], x[i2]);
                    out[i1] = c[i] * x1 - sn[i] * x2;
                    out[i2] = sn[i] * x1 + c[i] * x2;
                }
            }
        }
    }
    Ok(())
}

fn infer_rotary(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let r = Rotary::of(cx)?;
    let ts = cx.operand_types;
    let st = |t: Type| {
        t.as_tensor()
            .and_then(|t| t.static_shape())
            .map(|s| s.into_iter().map(|d| d as usize).collect::<Vec<_>>())
    };
    let x = dims(ts[0], "input")?;
    if let Some(x) = &x {
        if x.len() != 3 && x.len() != 4 {
            return Err(format!(
                "operand 'input' must have rank 3 or 4, but got '{}'",
                ts[0]
            ));
        }
    }
    let shapes: Vec<Option<Vec<usize>>> = ts.iter().map(|&t| st(t)).collect();
    if let (Some(x), Some(c), Some(s)) = (&shapes[0], &shapes[1], &shapes[2]) {
        let pos = match ts.len() {
            4 => match &shapes[3] {
                Some(p) => Some(p.as_slice()),
                None => return Ok(vec![ts[0]]),
            },
            _ => None,
        };
        geometry(&r, x, c, s, pos)?;
    }
    Ok(vec![ts[0]])
}

fn sem_rotary(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 3)?;
    let r = Rotary::of(cx)?;
    let pos = t.get(3);
    let g = geometry(
        &r,
        &t[0].shape,
        &t[1].shape,
        &t[2].shape,
        pos.map(|p| &p.shape[..]),
    )?;
    let (x, c, s) = (t[0].to_f64(), t[1].to_f64(), t[2].to_f64());
    let p = pos.map(|p| p.to_i64());
    let mut out = vec![0.0; x.len()];
    rotate(&r, &g, &x, &c, &s, p.as_deref(), &mut out)?;
    let dt = result_dtype(cx, 0, t[0].dtype);
    Ok(vec![Tensor::from_f64(t[0].shape.clone(), dt, out)])
}

def_op! {
    /// Rotary position embedding (ONNX RotaryEmbedding)
    ///
    /// `input` is `B x heads x S x D`, or `B x S x (heads·D)` with `num_heads`. The first
    /// `rotary_embedding_dim` features of each head (0: all) are rotated in pairs — the two
    /// halves (`x1 = x[:r/2]`, `x2 = x[r/2:r]`), or with `interleaved` the even and odd
    /// features — as `x1·cos - x2·sin, x1·sin + x2·cos`; the rest pass through. `cos_cache`
    /// and `sin_cache` are `positions x r/2`, indexed by `position_ids` (`B x S`, i64), or
    /// `B x S x r/2` without them.
    pub RotaryEmbedding = "graph.rotary_embedding" {
        operands {
            input: FloatTensor, cos_cache: FloatTensor, sin_cache: FloatTensor,
            position_ids: Option<TensorOf(&[DType::I64])>,
        },
        results { output: FloatTensor },
        attrs {
            /// 1: rotate even/odd feature pairs, 0: the two halves
            interleaved: I64 = 0,
            /// rotated features per head (0: all)
            rotary_embedding_dim: I64 = 0,
            /// heads of a 3-D input
            num_heads: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_rotary,
        semantics: sem_rotary,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Rotary,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&ROTARY_EMBEDDING];

#[cfg(test)]
mod tests {
    use super::*;

    /// A quarter turn of one pair: (1, 0) -> (0, 1); interleaved pairs
    /// neighbours, halves pair i with i + r/2.
    #[test]
    fn quarter_turn() {
        let r = Rotary {
            interleaved: false,
            dim: 0,
            num_heads: 0,
        };
        let g = geometry(&r, &[1, 1, 1, 4], &[1, 1, 2], &[1, 1, 2], None).unwrap();
        let x = [1.0, 2.0, 0.0, 0.0];
        let (c, s) = ([0.0, 1.0], [1.0, 0.0]);
        let mut out = [0.0; 4];
        rotate(&r, &g, &x, &c, &s, None, &mut out).unwrap();
        assert_eq!(out, [0.0, 2.0, 1.0, 0.0]);
        let il = Rotary {
            interleaved: true,
            ..r
        };
        rotate(&il, &g, &x, &c, &s, None, &mut out).unwrap();
        assert_eq!(out, [-2.0, 1.0, 0.0, 0.0]);
        assert!(geometry(&r, &[1, 1, 1, 4], &[1, 1, 3], &[1, 1, 3], None).is_err());
    }
}
