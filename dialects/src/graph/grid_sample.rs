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

/// How a grid point reads the image: the interpolation, the padding and
/// the corner convention (the op's attributes). The reference semantics and
/// the runtime's native kernel both sample through it.
pub struct Sampler<'a> {
    pub mode: &'a str,
    pub padding: &'a str,
    pub align: bool,
}

impl Sampler<'_> {
    /// The taps of one point: `(element offset into a spatial plane of
    /// dims `sp` with strides `st`, weight)` pairs whose weighted sum is the
    /// sample; taps that read a zero (padding `zeros`) are left out.
    /// `coords` are the point's `r` grid coordinates, innermost dim first.
    /// `taps` is scratch (one list per dim), `out` receives the pairs.
    pub fn taps(
        &self,
        coords: &[f64],
        sp: &[usize],
        st: &[usize],
        taps: &mut [Vec<(i64, f64)>],
        out: &mut Vec<(usize, f64)>,
    ) {
        let r = sp.len();
        let align = self.align;
        // Per spatial dim: the borders that reflection and "inside" use.
        let border = |len: usize| {
            if align {
                (0.0, len as f64 - 1.0)
            } else {
                (-0.5, len as f64 - 0.5)
            }
        };
        // An integer index into a dim of `len` after padding (None: a zero).
        let pixel = |i: i64, len: usize| -> Option<usize> {
            let li = len as i64;
            match self.padding {
                "zeros" => (0..li).contains(&i).then_some(i as usize),
                "border" => Some(i.clamp(0, li - 1) as usize),
                _ => {
                    let (lo, hi) = border(len);
                    let j = reflect(i as f64, lo, hi) as i64;
                    Some(j.clamp(0, li - 1) as usize)
                }
            }
        };
        for (d, tap) in taps.iter_mut().enumerate().take(r) {
            // The grid lists coordinates innermost dim first (x, y, z).
            let len = sp[d];
            let mut v = denormalize(coords[r - 1 - d], len, align);
            if self.mode == "nearest" {
                v = v.round_ties_even();
            }
            let (lo, hi) = border(len);
            if v < lo || v > hi {
                match self.padding {
                    "border" => v = v.clamp(0.0, len as f64 - 1.0),
                    "reflection" => v = reflect(v, lo, hi),
                    // Zeros: every tap (at most 2 below and 2 above floor(v))
                    // beyond 3 pixels outside reads a zero, so clamping there
                    // changes no sample and keeps the integer taps of a huge
                    // coordinate (3e38) from overflowing i64.
                    _ => v = v.clamp(lo - 3.0, hi + 3.0),
                }
            }
            tap.clear();
            let f = v.floor();
            let i0 = f as i64;
            match self.mode {
                "nearest" => tap.push((v.trunc() as i64, 1.0)),
                "linear" => tap.extend([(i0, 1.0 - (v - f)), (i0 + 1, v - f)]),
                _ => {
                    let w = cubic_weights(v - f);
                    tap.extend((0..4).map(|k| (i0 - 1 + k as i64, w[k])));
                }
            }
        }
        // Every combination of taps (the product of the weights).
        out.clear();
        let mut idx = [0usize; 8];
        let idx = &mut idx[..r.min(8)];
        let combos: usize = taps[..r].iter().map(|t| t.len()).product();
        for _ in 0..combos {
            let mut w = 1.0;
            let mut off = Some(0usize);
            for d in 0..idx.len() {
                let (i, wd) = taps[d][idx[d]];
                w *= wd;
                off = match (off, pixel(i, sp[d])) {
                    (Some(o), Some(j)) => Some(o + j * st[d]),
                    _ => None,
                };
            }
            if let Some(o) = off {
                out.push((o, w));
            }
            for d in (0..idx.len()).rev() {
                idx[d] += 1;
                if idx[d] < taps[d].len() {
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
    let sampler = Sampler {
        mode: at.mode(),
        padding: at.padding_mode(),
        align: at.align_corners() != 0,
    };
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
    let mut taps: Vec<Vec<(i64, f64)>> = vec![vec![]; r];
    let mut pairs = vec![];
    for b in 0..n {
        for p in 0..points {
            let base = (b * points + p) * r;
            sampler.taps(&gs[base..base + r], sp, &st, &mut taps, &mut pairs);
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
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Sample,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&GRID_SAMPLE];
