//! `graph.grid_sample` (ONNX GridSample): each output point interpolates the
//! image of its batch at the grid's coordinates. The taps of a point — the
//! pixels it reads and their weights, after padding — come from the op's
//! own [`Sampler`] (the reference semantics use the same one), computed
//! once per point and applied to every channel; points run in parallel.
//!
//! A 2-D image (nearly every model's: RAFT's correlation lookups, spatial
//! transformers, deformable attention) takes its at most 16 taps per point
//! in a fixed array, from the sampler's per-dim taps, with no scratch (RAFT
//! samples 12 544 points a call, one channel each: 0.63 ms a call with
//! scratch vectors per task, the general search of the dims' combinations
//! and the attributes compared as strings per tap; 0.27 ms so). The sums
//! are those of [`Sampler::taps`], term for term, so either way gives the
//! same values.

use super::{F32In, F32Out, Kernel, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::grid_sample::{output_shape, AxisTaps, Sampler};

#[derive(Clone, Debug)]
pub struct GridSample {
    /// The op's attributes, parsed at load.
    pub sampler: Sampler,
}

/// Points per parallel task.
const CHUNK: usize = 256;

/// Samples (points times channels) below which a call runs on its
/// caller's thread: a sample takes a few nanoseconds.
const PARALLEL_SAMPLES: usize = 1 << 12;

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
        let sampler = self.sampler;
        let chunks = points.div_ceil(CHUNK);
        par.run(n * chunks, n * points * c > PARALLEL_SAMPLES, &|task| {
            let (b, p0) = (task / chunks, (task % chunks) * CHUNK);
            let imgs = &xs[b * c * plane..(b + 1) * c * plane];
            // Point `p` of every channel: the weighted sum of its taps.
            let sample = |p: usize, pairs: &[(usize, f64)]| {
                for ch in 0..c {
                    let img = &imgs[ch * plane..(ch + 1) * plane];
                    let acc = pairs.iter().fold(0f64, |a, &(o, wt)| {
                        a + wt * img.get(o).copied().unwrap_or(0.0) as f64
                    });
                    // SAFETY: element (b, ch, p) of the output, which has n x
                    // c x points elements (its shape was checked above);
                    // tasks own disjoint (b, p) ranges, so writes never
                    // overlap.
                    unsafe { *yp.p().add((b * c + ch) * points + p) = acc as f32 };
                }
            };
            let range = p0..(p0 + CHUNK).min(points);
            match r {
                2 => {
                    let [h, w] = [sp[0], sp[1]];
                    let mut pairs = [(0usize, 0f64); 16];
                    for p in range {
                        let base = (b * points + p) * 2;
                        let ty = sampler.axis(gs[base + 1] as f64, h);
                        let tx = sampler.axis(gs[base] as f64, w);
                        let k = taps2(&sampler, &ty, &tx, [h, w], &mut pairs);
                        sample(p, &pairs[..k]);
                    }
                }
                _ => {
                    let mut pairs = vec![];
                    let mut coords = [0f64; 8];
                    for p in range {
                        let base = (b * points + p) * r;
                        for (k, v) in coords.iter_mut().enumerate().take(r) {
                            *v = gs[base + k] as f64;
                        }
                        sampler.taps(&coords[..r], sp, &st, &mut pairs);
                        sample(p, &pairs);
                    }
                }
            }
            Ok(())
        })?;
        yo.finish();
        Ok(())
    }
}

/// The taps of a point of a 2-D image of `[h, w]` from its taps along y and
/// x into `pairs`: `(offset, weight)` pairs in [`Sampler::taps`]' order (x
/// fastest), the weights its products, those reading a zero left out; how
/// many.
#[inline(always)]
fn taps2(
    s: &Sampler,
    ty: &AxisTaps,
    tx: &AxisTaps,
    [h, w]: [usize; 2],
    pairs: &mut [(usize, f64); 16],
) -> usize {
    let mut k = 0;
    for i in 0..ty.n {
        let py = s.pixel(ty.idx[i], h);
        for j in 0..tx.n {
            if let (Some(py), Some(px)) = (py, s.pixel(tx.idx[j], w)) {
                pairs[k] = (py * w + px, 1.0 * ty.w[i] * tx.w[j]);
                k += 1;
            }
        }
    }
    k
}
