//! `graph.det` (ONNX Det): each matrix of the batch eliminated in f64 by the
//! op's own `det` (partial pivoting), matrices in parallel.

use super::{F32In, F32Out, Kernel, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::det::{det, det_shape};

#[derive(Clone, Debug)]
pub struct Det;

impl Kernel for Det {
    fn float_only(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x], &[y]) = (ins, outs) else {
            return Err("det takes 1 operand and gives 1 result".into());
        };
        let (batch, n) = det_shape(&x.shape)?;
        if batch != y.shape {
            return Err(format!("det of {:?} cannot give {:?}", x.shape, y.shape));
        }
        let count = y.numel();
        let xi = F32In::new(x);
        let xs = xi.slice();
        let mut yo = F32Out::new(y);
        let yp = Shared(yo.ptr());
        par.run(count, count * n * n * n > 1 << 16, &|b| {
            let mut m: Vec<f64> = xs[b * n * n..(b + 1) * n * n]
                .iter()
                .map(|&v| v as f64)
                .collect();
            let d = if n == 0 { 1.0 } else { det(&mut m, n) };
            // SAFETY: element `b` of the output, which has `count` elements
            // (its shape was checked above); each task writes its own.
            unsafe { *yp.p().add(b) = d as f32 };
            Ok(())
        })?;
        yo.finish();
        Ok(())
    }
}
