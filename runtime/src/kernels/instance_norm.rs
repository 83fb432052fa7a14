//! `graph.instance_norm` (ONNX InstanceNormalization): each channel plane of
//! an `N x C x spatial...` input normalised by its own mean and (population)
//! variance, then `* scale[c] + bias[c]`. The statistics of a plane are one
//! f64 pass over it (as the reference), the transform is batch_norm's
//! vectorised scale-and-shift; planes run in parallel.

use super::batch_norm::scale_shift;
use super::{F32In, F32Out, Kernel, Par, Slot};
use crate::shared::Shared;

#[derive(Clone, Debug)]
pub struct InstanceNorm {
    pub eps: f64,
}

impl Kernel for InstanceNorm {
    fn float_only(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x, scale, bias], &[y]) = (ins, outs) else {
            return Err("instance_norm takes 3 operands and gives 1 result".into());
        };
        if x.shape.len() < 2 || y.shape != x.shape {
            return Err(format!(
                "instance_norm of {:?} into {:?}: needs N x C x ... and the same shape",
                x.shape, y.shape
            ));
        }
        let (n, c) = (x.shape[0], x.shape[1]);
        if scale.numel() != c || bias.numel() != c {
            return Err(format!(
                "instance_norm scale and bias must have {c} entries"
            ));
        }
        let inner: usize = x.shape[2..].iter().product();
        let xi = F32In::new(x);
        let (si, bi) = (F32In::new(scale), F32In::new(bias));
        let (ps, pb) = (si.slice(), bi.slice());
        let mut yo = F32Out::new(y);
        let (xp, yp) = (Shared(xi.ptr()), Shared(yo.ptr()));
        let eps = self.eps;
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
            if inner == 0 {
                return Ok(());
            }
            let mean = src.iter().map(|&v| v as f64).sum::<f64>() / inner as f64;
            let var = src
                .iter()
                .map(|&v| (v as f64 - mean) * (v as f64 - mean))
                .sum::<f64>()
                / inner as f64;
            let k = (ps[ch] as f64 / (var + eps).sqrt()) as f32;
            scale_shift(src, dst, mean as f32, k, pb[ch]);
            Ok(())
        })?;
        yo.finish();
        Ok(())
    }
}
