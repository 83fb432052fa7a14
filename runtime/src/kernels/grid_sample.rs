//! `graph.grid_sample` (ONNX GridSample): each output point interpolates the
//! image of its batch at the grid's coordinates. The taps of a point — the
//! pixels it reads and their weights, after padding — come from the op's
//! own [`Sampler`] (the reference semantics use the same one), computed
//! once per point and applied to every channel; points run in parallel.

use super::{F32In, F32Out, Kernel, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::grid_sample::{output_shape, Sampler};

#[derive(Clone, Debug)]
pub struct GridSample {
    pub mode: String,
    pub padding: String,
    pub align: bool,
}

/// Points per parallel task.
const CHUNK: usize = 256;

impl Kernel for GridSample {
    fn float_only(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x, g], &[y]) = (ins, outs) else {
            return Err("grid_sample takes 2 operands and gives 1 result".into());
        };
        let want = output_shape(&x.shape, &g.shape)?;
        if want != y.shape {
            return Err(format!(
                "grid_sample of {:?} at {:?} gives {want:?}, not {:?}",
                x.shape, g.shape, y.shape
            ));
        }
        let r = x.shape.len() - 2;
        let (n, c) = (x.shape[0], x.shape[1]);
        let sp = &x.shape[2..];
        let st = ge_ir::tensor::strides(sp);
        let plane: usize = sp.iter().product();
        let points: usize = g.shape[1..=r].iter().product();
        let (xi, gi) = (F32In::new(x), F32In::new(g));
        let (xs, gs) = (xi.slice(), gi.slice());
        let mut yo = F32Out::new(y);
        let yp = Shared(yo.ptr());
        let sampler = Sampler {
            mode: &self.mode,
            padding: &self.padding,
            align: self.align,
        };
        let chunks = points.div_ceil(CHUNK);
        par.run(n * chunks, n * points * c > 1 << 14, &|task| {
            let (b, p0) = (task / chunks, (task % chunks) * CHUNK);
            let mut taps: Vec<Vec<(i64, f64)>> = vec![vec![]; r];
            let mut pairs = vec![];
            let mut coords = vec![0f64; r];
            for p in p0..(p0 + CHUNK).min(points) {
                let base = (b * points + p) * r;
                for (k, v) in coords.iter_mut().enumerate() {
                    *v = gs[base + k] as f64;
                }
                sampler.taps(&coords, sp, &st, &mut taps, &mut pairs);
                for ch in 0..c {
                    let img = &xs[(b * c + ch) * plane..(b * c + ch + 1) * plane];
                    let mut acc = 0f64;
                    for &(o, w) in &pairs {
                        acc += w * img.get(o).copied().unwrap_or(0.0) as f64;
                    }
                    // SAFETY: element (b, ch, p) of the output, which has
                    // n x c x points elements (its shape was checked above);
                    // tasks own disjoint (b, p) ranges, so writes never overlap.
                    unsafe { *yp.p().add((b * c + ch) * points + p) = acc as f32 };
                }
            }
            Ok(())
        })?;
        yo.finish();
        Ok(())
    }
}
