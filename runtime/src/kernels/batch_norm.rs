//! `graph.batch_norm` (inference form): `y = (x - mean) * k + bias` per
//! channel of an `N x C x ...` input, with `k = scale / sqrt(var + eps)`
//! computed once per channel (subtracting the mean first keeps an
//! output near `bias` exact, as the reference computes it). BatchNorm after a
//! convolution is folded into its weights by the compiler (`fold_bn.rr`);
//! this kernel runs the rest (DenseNet's BatchNorm after a concat), with the
//! ReLU that follows it in the same pass when nothing else reads the batch
//! norm's result (`relu`, set by `kernels::fuse_kernel_relus`).

use super::{F32In, F32Out, Kernel, Par, Slot};
use crate::shared::Shared;

#[derive(Clone, Debug)]
pub struct BatchNorm {
    pub eps: f32,
    /// Also apply the relu to each output, as the element-wise step it
    /// replaces does (NaN stays NaN).
    pub relu: bool,
}

impl Kernel for BatchNorm {
    fn float_only(&self) -> bool {
        true
    }

    fn with_relu(&self) -> Option<std::sync::Arc<dyn Kernel>> {
        Some(std::sync::Arc::new(BatchNorm {
            relu: true,
            ..*self
        }))
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x, scale, bias, mean, var], &[y]) = (ins, outs) else {
            return Err("batch_norm takes 5 operands and gives 1 result".into());
        };
        if x.shape.len() < 2 || y.shape != x.shape {
            return Err(format!(
                "batch_norm of {:?} into {:?}: needs N x C x ... and the same shape",
                x.shape, y.shape
            ));
        }
        let (n, c) = (x.shape[0], x.shape[1]);
        if [scale, bias, mean, var].iter().any(|p| p.numel() != c) {
            return Err(format!("batch_norm parameters must have {c} entries"));
        }
        let inner: usize = x.shape[2..].iter().product();
        let xi = F32In::new(x);
        let p: Vec<F32In> = [scale, bias, mean, var]
            .iter()
            .map(|s| F32In::new(s))
            .collect();
        let (ps, pb, pm, pv) = (p[0].slice(), p[1].slice(), p[2].slice(), p[3].slice());
        let mut yo = F32Out::new(y);
        let (xp, yp) = (Shared(xi.ptr()), Shared(yo.ptr()));
        let (eps, relu) = (self.eps, self.relu);
        // `k` once per channel, not per plane.
        let k: Vec<f32> = ps
            .iter()
            .zip(pv)
            .map(|(&s, &v)| s / (v + eps).sqrt())
            .collect();
        if inner < SHORT_PLANE {
            // Planes of a few values (a BatchNorm1d on `N x C`: one value a
            // plane): a sample's channels in one pass, not a call per plane.
            par.run(n, n * c * inner > 1 << 15, &|row| {
                // SAFETY: sample `row` of the input and of the output,
                // `c * inner` elements each, inside both slots (same shape,
                // checked above); tasks write disjoint samples.
                let (src, dst) = unsafe {
                    (
                        std::slice::from_raw_parts(xp.p().add(row * c * inner), c * inner),
                        std::slice::from_raw_parts_mut(yp.p().add(row * c * inner), c * inner),
                    )
                };
                scale_shift_channels(src, dst, inner, pm, &k, pb, relu);
                Ok(())
            })?;
            yo.finish();
            return Ok(());
        }
        // One task per channel plane (n * c of them), in parallel when big.
        par.run(n * c, n * c * inner > 1 << 15, &|plane| {
            let ch = plane % c;
            // SAFETY: plane `plane` of the input and of the output, `inner`
            // elements each, inside both slots (same shape, checked above);
            // planes are disjoint, so tasks write disjoint ranges.
            let (src, dst) = unsafe {
                (
                    std::slice::from_raw_parts(xp.p().add(plane * inner), inner),
                    std::slice::from_raw_parts_mut(yp.p().add(plane * inner), inner),
                )
            };
            match relu {
                true => scale_shift_relu(src, dst, pm[ch], k[ch], pb[ch]),
                false => scale_shift(src, dst, pm[ch], k[ch], pb[ch]),
            }
            Ok(())
        })?;
        yo.finish();
        Ok(())
    }
}

/// Channel planes shorter than this go a sample at a time
/// ([`scale_shift_channels`]): a call per plane costs more than its values.
const SHORT_PLANE: usize = 16;

/// One sample's `m.len()` channel planes of `inner` values: `dst = (src -
/// m[c]) * k[c] + b[c]` (then the relu), the operations of [`scale_shift`]
/// and [`scale_shift_relu`]; vectorised along the channels for planes of
/// one value.
fn scale_shift_channels(
    src: &[f32],
    dst: &mut [f32],
    inner: usize,
    m: &[f32],
    k: &[f32],
    b: &[f32],
    relu: bool,
) {
    #[inline(always)]
    fn body(
        src: &[f32],
        dst: &mut [f32],
        inner: usize,
        m: &[f32],
        k: &[f32],
        b: &[f32],
        relu: bool,
    ) {
        let one = |s: f32, m: f32, k: f32, b: f32| {
            let y = (s - m) * k + b;
            if relu {
                super::ew::relu(y)
            } else {
                y
            }
        };
        if inner == 1 {
            for ((((d, &s), &m), &k), &b) in dst.iter_mut().zip(src).zip(m).zip(k).zip(b) {
                *d = one(s, m, k, b);
            }
            return;
        }
        let planes = dst.chunks_exact_mut(inner).zip(src.chunks_exact(inner));
        for ((((d, s), &m), &k), &b) in planes.zip(m).zip(k).zip(b) {
            for (d, &s) in d.iter_mut().zip(s) {
                *d = one(s, m, k, b);
            }
        }
    }
    by_cpu_features!(body(src: &[f32], dst: &mut [f32], inner: usize, m: &[f32], k: &[f32], b: &[f32], relu: bool))
}

/// `dst = (src - m) * k + b`, vectorised for the CPU's widest lanes.
pub(crate) fn scale_shift(src: &[f32], dst: &mut [f32], m: f32, k: f32, b: f32) {
    #[inline(always)]
    fn body(src: &[f32], dst: &mut [f32], m: f32, k: f32, b: f32) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = (s - m) * k + b;
        }
    }
    by_cpu_features!(body(src: &[f32], dst: &mut [f32], m: f32, k: f32, b: f32))
}

/// [`scale_shift`], then the relu of the element-wise kernel's
/// `ew::Code::Relu` (the step it replaces) on each result: NaN kept.
fn scale_shift_relu(src: &[f32], dst: &mut [f32], m: f32, k: f32, b: f32) {
    #[inline(always)]
    fn body(src: &[f32], dst: &mut [f32], m: f32, k: f32, b: f32) {
        for (d, &s) in dst.iter_mut().zip(src) {
            let y = (s - m) * k + b;
            *d = super::ew::relu(y);
        }
    }
    by_cpu_features!(body(src: &[f32], dst: &mut [f32], m: f32, k: f32, b: f32))
}
