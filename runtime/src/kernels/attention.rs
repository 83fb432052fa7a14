//! `graph.scaled_dot_product_attention`: softmax(q·kᵀ·scale + mask)·v. Per
//! (broadcast) batch plane: one GEMM makes the `Sq x Sk` scores, the mask
//! (added, or an i1 mask hiding positions) and the causal rule apply, each
//! row goes through the softmax kernel's row loop, and a second GEMM
//! multiplies by the values. Planes run in parallel; floats compute in f32.

use super::ew::Bcast;
use super::{sgemm, F32In, F32Out, Kernel, Par, Slot};
use crate::shared::Shared;
use ge_ir::DType;

#[derive(Clone, Debug)]
pub struct Attention {
    /// The factor of q·kᵀ (default 1/sqrt(D)).
    pub scale: Option<f64>,
    pub causal: bool,
}

/// The element offset of batch plane `i` of the broadcast batch `sb` in an
/// operand with batch dims `b` (right-aligned; size-1 dims repeat), in
/// units of the operand's matrices.
fn plane_offset(i: usize, sb: &[usize], b: &[usize]) -> usize {
    let pad = sb.len() - b.len();
    let st = ge_ir::tensor::strides(b);
    let (mut rem, mut off) = (i, 0);
    for a in (0..sb.len()).rev() {
        let idx = rem % sb[a];
        rem /= sb[a];
        if a >= pad && b[a - pad] != 1 {
            off += idx * st[a - pad];
        }
    }
    off
}

/// `(sq, d, sk, dv)` when query `[.., sq, d]`, key `[.., sk, d]` and value
/// `[.., sk, dv]` give the result `[.., sq, dv]`, their batch dims
/// broadcasting to the result's.
fn check_shapes(
    q: &Slot,
    k: &Slot,
    v: &Slot,
    y: &Slot,
) -> Result<(usize, usize, usize, usize), String> {
    let r = q.shape.len();
    let bad = || {
        format!(
            "attention: shapes do not fit: query {:?}, key {:?}, value {:?} -> {:?}",
            q.shape, k.shape, v.shape, y.shape
        )
    };
    if r < 2 || k.shape.len() != r || v.shape.len() != r || y.shape.len() != r {
        return Err(bad());
    }
    let (sq, d) = (q.shape[r - 2], q.shape[r - 1]);
    let (sk, dv) = (k.shape[r - 2], v.shape[r - 1]);
    if k.shape[r - 1] != d || v.shape[r - 2] != sk {
        return Err(bad());
    }
    let sb = &y.shape[..r - 2];
    let fits = |b: &[usize]| b.iter().zip(sb).all(|(&x, &s)| x == s || x == 1);
    if y.shape[r - 2] != sq
        || y.shape[r - 1] != dv
        || !fits(&q.shape[..r - 2])
        || !fits(&k.shape[..r - 2])
        || !fits(&v.shape[..r - 2])
    {
        return Err(bad());
    }
    Ok((sq, d, sk, dv))
}

/// Plane `i`'s mask on its scores `s`: a boolean mask drops the scores it
/// does not keep (-inf), a float mask is added.
fn apply_mask(mask: &(Bcast, DType, Shared<*const u8>), i: usize, s: &mut [f32]) {
    let (bc, dt, mp) = mask;
    let plane = s.len();
    if *dt == DType::I1 {
        let mut keep = vec![0i64; plane];
        bc.load_i(*dt, mp.p(), i * plane, &mut keep);
        for (x, &kk) in s.iter_mut().zip(&keep) {
            if kk == 0 {
                *x = f32::NEG_INFINITY;
            }
        }
    } else {
        let mut add = vec![0f32; plane];
        bc.load_f(*dt, mp.p(), i * plane, &mut add);
        s.iter_mut().zip(&add).for_each(|(x, a)| *x += a);
    }
}

impl Kernel for Attention {
    fn float_only(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (q, k, v, mask, y) = match (ins, outs) {
            (&[q, k, v], &[y]) => (q, k, v, None, y),
            (&[q, k, v, m], &[y]) => (q, k, v, Some(m), y),
            _ => return Err("attention takes 3 or 4 operands and gives 1 result".into()),
        };
        let r = q.shape.len();
        let (sq, d, sk, dv) = check_shapes(q, k, v, y)?;
        let sb = &y.shape[..r - 2];
        let nb: usize = sb.iter().product();
        let plane = sq * sk;
        let mut sshape = sb.to_vec();
        sshape.extend([sq, sk]);
        let mask = match mask {
            Some(m) => Some((
                Bcast::new(&sshape, &m.shape)?,
                m.dtype,
                Shared(m.ptr as *const u8),
            )),
            None => None,
        };
        let scale = self.scale.unwrap_or(1.0 / (d.max(1) as f64).sqrt()) as f32;
        let (qi, ki, vi) = (F32In::new(q), F32In::new(k), F32In::new(v));
        let mut yo = F32Out::new(y);
        let (qp, kp, vp, yp) = (
            Shared(qi.ptr()),
            Shared(ki.ptr()),
            Shared(vi.ptr()),
            Shared(yo.ptr()),
        );
        let (qb, kb, vb) = (&q.shape[..r - 2], &k.shape[..r - 2], &v.shape[..r - 2]);
        let causal = self.causal;
        par.run(nb, nb * plane * (d + dv) > 1 << 15, &|i| {
            let mut s = vec![0f32; plane];
            let (qo, ko, vo) = (
                plane_offset(i, sb, qb) * sq * d,
                plane_offset(i, sb, kb) * sk * d,
                plane_offset(i, sb, vb) * sk * dv,
            );
            // SAFETY: plane i's query (sq x d), key (sk x d, read
            // transposed) and value (sk x dv) matrices start at qo, ko, vo
            // inside their slots (batch dims checked to broadcast to the
            // result's); `s` holds sq x sk scores.
            unsafe {
                sgemm(
                    sq,
                    d,
                    sk,
                    scale,
                    qp.p().add(qo),
                    d as isize,
                    1,
                    kp.p().add(ko),
                    1,
                    d as isize,
                    0.0,
                    s.as_mut_ptr(),
                    sk as isize,
                    1,
                )
            };
            if let Some(m) = &mask {
                apply_mask(m, i, &mut s);
            }
            for (row, scores) in s.chunks_mut(sk.max(1)).enumerate().take(sq) {
                if causal {
                    scores
                        .iter_mut()
                        .skip(row + 1)
                        .for_each(|x| *x = f32::NEG_INFINITY);
                }
                super::norm::softmax_row(false, scores);
            }
            // SAFETY: plane i of the result (sq x dv at i*sq*dv, inside the
            // nb x sq x dv output), written only by this task.
            unsafe {
                sgemm(
                    sq,
                    sk,
                    dv,
                    1.0,
                    s.as_ptr(),
                    sk as isize,
                    1,
                    vp.p().add(vo),
                    dv as isize,
                    1,
                    0.0,
                    yp.p().add(i * sq * dv),
                    dv as isize,
                    1,
                )
            };
            Ok(())
        })?;
        yo.finish();
        Ok(())
    }
}
