//! Sampling an image at arbitrary points (ONNX GridSample), for any number
//! of spatial dims. The runtime's native kernel is
//! runtime/src/kernels/grid_sample.rs (family `Sample`).

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{numel, strides, Tensor};
use ge_ir::{Dim, Type};

type SemResult = Result<Vec<Tensor>, String>;

const MODES: &[&str] = &["linear", "nearest", "cubic"];
const PADDING_MODES: &[&str] = &["zeros", "border", "reflection"];

fn infer_grid_sample(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let (tx, tg) = (cx.operand_types[0], cx.operand_types[1]);
    let dt = dtype_of(tx)?;
    let x = dims_min_rank(tx, "input", 3, "N x C x spatial...")?;
    let g = dims_min_rank(tg, "grid", 3, "N x spatial... x r")?;
    let (Some(x), Some(g)) = (x, g) else {
        return Ok(vec![Type::unranked(dt)]);
    };
    if x.len() != g.len() {
        return Err(format!(
            "operand 'grid' '{tg}' must have the rank of 'input' '{tx}'"
        ));
    }
    let r = x.len() - 2;
    if let Some(last) = g[r + 1].as_static() {
        if last != r as i64 {
            return Err(format!(
                "operand 'grid' '{tg}' must end in a dim of {r} (one coordinate per spatial dim)"
            ));
        }
    }
    check_dim_eq(x[0], g[0], "the batch dims of 'input' and 'grid'")?;
    if GridSample::attrs(cx).mode() == "cubic" && r != 2 {
        return Err(format!("mode 'cubic' needs 2 spatial dims, not {r}"));
    }
    let mut out: Vec<Dim> = vec![x[0], x[1]];
    out.extend_from_slice(&g[1..=r]);
    Ok(vec![Type::tensor(&out, dt)])
}

/// A grid coordinate in [-1, 1] to a pixel coordinate along a dim of `len`.
fn denormalize(n: f64, len: usize, align_corners: bool) -> f64 {
    let len = len as f64;
    if align_corners {
        (n + 1.0) / 2.0 * (len - 1.0)
    } else {
        ((n + 1.0) * len - 1.0) / 2.0
    }
}

/// Reflect `x` by the nearer border until it lies within [lo, hi].
///
/// Never inlined: inlined into [`Sampler::pixel`], the optimiser computed it
/// for every tap of every padding mode and selected the result afterwards
/// (its `trunc` and `%` are side-effect-free), two library calls per tap
/// without SSE4.1 — RAFT's lookups, padded with zeros, took 2.5x as long.
#[inline(never)]
fn reflect(x: f64, lo: f64, hi: f64) -> f64 {
    let range = hi - lo;
    if range <= 0.0 {
        return lo;
    }
    let fold = |d: f64, near: f64, far: f64, sign: f64| {
        let n = (d / range).trunc();
        let r = d - n * range;
        if n % 2.0 == 0.0 {
            near + sign * r
        } else {
            far - sign * r
        }
    };
    if x < lo {
        fold(lo - x, lo, hi, 1.0)
    } else if x > hi {
        fold(x - hi, hi, lo, -1.0)
    } else {
        x
    }
}

/// Keys' cubic convolution weights (a = -0.75) of the 4 taps around `t` in [0, 1).
fn cubic_weights(t: f64) -> [f64; 4] {
    let a = -0.75;
    let far = |x: f64| ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
    let near = |x: f64| ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]
}

/// The interpolation of [`Sampler`] (the op's `mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interp {
    Linear,
    Nearest,
    Cubic,
}

/// What [`Sampler`] reads outside the image (the op's `padding_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    Zeros,
    Border,
    Reflection,
}

/// The taps of one point along one spatial dim: `n` (index, weight) pairs,
/// the indices before padding ([`Sampler::pixel`] maps them).
#[derive(Clone, Copy, Debug, Default)]
pub struct AxisTaps {
    pub idx: [i64; 4],
    pub w: [f64; 4],
    pub n: usize,
}

/// How a grid point reads the image: the interpolation, the padding and
/// the corner convention (the op's attributes). The reference semantics and
/// the runtime's native kernel both sample through it.
#[derive(Clone, Copy, Debug)]
pub struct Sampler {
    pub interp: Interp,
    pub padding: Padding,
    pub align: bool,
}

impl Sampler {
    /// The sampler of the op's attributes (the verifier admits only the
    /// names of `MODES` and `PADDING_MODES`).
    pub fn new(mode: &str, padding: &str, align: bool) -> Sampler {
        Sampler {
            interp: match mode {
                "nearest" => Interp::Nearest,
                "linear" => Interp::Linear,
                _ => Interp::Cubic,
            },
            padding: match padding {
                "zeros" => Padding::Zeros,
                "border" => Padding::Border,
                _ => Padding::Reflection,
            },
            align,
        }
    }

    /// The pixel coordinates of the image's borders along a dim of `len`
    /// (what reflection mirrors at, and what counts as inside).
    fn border(&self, len: usize) -> (f64, f64) {
        match self.align {
            true => (0.0, len as f64 - 1.0),
            false => (-0.5, len as f64 - 0.5),
        }
    }

    /// An integer index into a dim of `len` after padding (`None`: it reads
    /// a zero). `len` is not 0: [`Sampler::axis`] gives an empty dim no
    /// taps.
    #[inline(always)]
    pub fn pixel(&self, i: i64, len: usize) -> Option<usize> {
        let li = len as i64;
        match self.padding {
            Padding::Zeros => (0..li).contains(&i).then_some(i as usize),
            Padding::Border => Some(i.clamp(0, li - 1) as usize),
            Padding::Reflection => {
                let (lo, hi) = self.border(len);
                let j = reflect(i as f64, lo, hi) as i64;
                Some(j.clamp(0, li - 1) as usize)
            }
        }
    }

    /// The taps along a dim of `len` of grid coordinate `coord` (in [-1, 1]).
    #[inline(always)]
    pub fn axis(&self, coord: f64, len: usize) -> AxisTaps {
        // An empty dim: no taps, the sample is 0 (no border to clamp to).
        if len == 0 {
            return AxisTaps::default();
        }
        let mut v = denormalize(coord, len, self.align);
        if self.interp == Interp::Nearest {
            v = v.round_ties_even();
        }
        let (lo, hi) = self.border(len);
        if v < lo || v > hi {
            match self.padding {
                Padding::Border => v = v.clamp(0.0, len as f64 - 1.0),
                Padding::Reflection => v = reflect(v, lo, hi),
                // Zeros: every tap (at most 2 below and 2 above floor(v))
                // beyond 3 pixels outside reads a zero, so clamping there
                // changes no sample and keeps the integer taps of a huge
                // coordinate (3e38) from overflowing i64.
                Padding::Zeros => v = v.clamp(lo - 3.0, hi + 3.0),
            }
        }
        // floor(v) by conversion: `v` lies within a few pixels of the dim
        // here (or is NaN, for which both give index 0 and NaN weights),
        // and `f64::floor` is a library call without SSE4.1 (RAFT's lookup
        // of 12 544 points: 0.294 -> 0.268 ms).
        let t = v as i64;
        let i0 = if (t as f64) > v { t - 1 } else { t };
        let f = i0 as f64;
        match self.interp {
            // `as` truncates.
            Interp::Nearest => AxisTaps {
                idx: [v as i64, 0, 0, 0],
                w: [1.0, 0.0, 0.0, 0.0],
                n: 1,
            },
            Interp::Linear => AxisTaps {
                idx: [i0, i0 + 1, 0, 0],
                w: [1.0 - (v - f), v - f, 0.0, 0.0],
                n: 2,
            },
            Interp::Cubic => AxisTaps {
                idx: [i0 - 1, i0, i0 + 1, i0 + 2],
                w: cubic_weights(v - f),
                n: 4,
            },
        }
    }

    /// The taps of one point: `(element offset into a spatial plane of
    /// dims `sp` with strides `st`, weight)` pairs whose weighted sum is the
    /// sample, every combination of the dims' taps, the last dim's fastest;
    /// taps that read a zero (padding `zeros`) are left out. `coords` are
    /// the point's `r` grid coordinates, innermost dim first; `out`
    /// receives the pairs.
    pub fn taps(&self, coords: &[f64], sp: &[usize], st: &[usize], out: &mut Vec<(usize, f64)>) {
        let r = sp.len().min(8);
        let mut taps = [AxisTaps::default(); 8];
        for (d, tap) in taps.iter_mut().enumerate().take(r) {
            // The grid lists coordinates innermost dim first (x, y, z).
            *tap = self.axis(coords[r - 1 - d], sp[d]);
        }
        out.clear();
        let mut idx = [0usize; 8];
        let idx = &mut idx[..r];
        let combos: usize = taps[..r].iter().map(|t| t.n).product();
        for _ in 0..combos {
            let mut w = 1.0;
            let mut off = Some(0usize);
            for d in 0..idx.len() {
                let t = &taps[d];
                w *= t.w[idx[d]];
                off = match (off, self.pixel(t.idx[idx[d]], sp[d])) {
                    (Some(o), Some(j)) => Some(o + j * st[d]),
                    _ => None,
                };
            }
            if let Some(o) = off {
                out.push((o, w));
            }
            for d in (0..idx.len()).rev() {
                idx[d] += 1;
                if idx[d] < taps[d].n {
                    break;
                }
                idx[d] = 0;
            }
        }
    }
}

/// Check `x` and `grid`'s shapes against each other: the output shape.
pub fn output_shape(x: &[usize], g: &[usize]) -> Result<Vec<usize>, String> {
    if x.len() < 3 || g.len() != x.len() || g[0] != x[0] || x.len() - 2 > 8 {
        return Err(format!(
            "grid shape {g:?} does not fit input shape {x:?} (at most 8 spatial dims)"
        ));
    }
    let r = x.len() - 2;
    if g[r + 1] != r {
        return Err(format!("grid shape {g:?} must end in {r}"));
    }
    let mut out_shape = vec![x[0], x[1]];
    out_shape.extend_from_slice(&g[1..=r]);
    checked_numel(&out_shape)?;
    Ok(out_shape)
}

fn sem_grid_sample(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 2)?;
    let (x, g) = (t[0], t[1]);
    let at = GridSample::attrs(cx);
    let sampler = Sampler::new(at.mode(), at.padding_mode(), at.align_corners() != 0);
    let out_shape = output_shape(&x.shape, &g.shape)?;
    let r = x.rank() - 2;
    let (n, c) = (x.shape[0], x.shape[1]);
    let sp = &x.shape[2..];
    let points: usize = g.shape[1..=r].iter().product();
    let xs = x.to_f64();
    let gs = g.to_f64();
    let st = strides(sp);
    let plane: usize = numel(sp);
    let mut out = vec![0.0; n * c * points];
    let mut pairs = vec![];
    for b in 0..n {
        for p in 0..points {
            let base = (b * points + p) * r;
            sampler.taps(&gs[base..base + r], sp, &st, &mut pairs);
            for ch in 0..c {
                let img = &xs[(b * c + ch) * plane..];
                out[(b * c + ch) * points + p] =
                    pairs.iter().fold(0.0, |a, &(o, w)| a + w * img[o]);
            }
        }
    }
    Ok(vec![Tensor::from_f64(out_shape, x.dtype, out)])
}

def_op! {
    /// Sample an image at the points of a grid (ONNX GridSample)
    ///
    /// `input` is `N x C x D1 x .. x Dr`, `grid` is `N x H1 x .. x Hr x r`: for each output
    /// point, `r` coordinates in [-1, 1], innermost dim first (x, y, z). The result is `N x C
    /// x H1 x .. x Hr`, interpolated (`linear`, `nearest` with ties to even, or Keys `cubic`
    /// with a = -0.75, 2-D only) from the pixels around each point; pixels outside the image
    /// read as 0 (`zeros`), as the nearest border pixel (`border`) or mirrored
    /// (`reflection`). With `align_corners`, -1 and 1 are the centres of the corner pixels,
    /// otherwise their outer edges.
    pub GridSample = "graph.grid_sample" {
        operands { input: FloatTensor, grid: FloatTensor },
        results { output: FloatTensor },
        attrs {
            /// interpolation: linear, nearest or cubic
            mode: Enum(MODES) = "linear",
            /// what pixels outside the image read as
            padding_mode: Enum(PADDING_MODES) = "zeros",
            /// 1: -1 and 1 are the corner pixels' centres; 0: their outer edges
            align_corners: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_grid_sample,
        semantics: sem_grid_sample,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            // AI Core, as CANN's GridSampler2D/3D (so the runtime's kernel
            // gets the compute pool: RAFT's 12 lookups a run).
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Sample,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&GRID_SAMPLE];
