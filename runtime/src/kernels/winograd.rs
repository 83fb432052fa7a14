//! Winograd F(m x m, 3 x 3) convolution for 3x3 stride-1 undilated filters
//! (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2016).
//!
//! The output is cut into m x m tiles. Each tile's (m+2) x (m+2) input patch
//! `d` and each 3x3 filter `g` are transformed (`V = Bᵀ d B`, `U = G g Gᵀ`);
//! the tile's outputs are `Aᵀ [Σ_c U ⊙ V] A`. Summed over channels, the
//! elementwise products of all tiles are (m+2)² independent matrix products
//! `M[pos] = U[pos] (ocg x cg) · V[pos] (cg x tiles)`, run through the `gemm`
//! crate: (m+2)²/m² multiplications per output and channel pair instead of
//! 9 (4 for F(2x2), 2.25 for F(4x4)), for the cost of the transforms.
//!
//! The filter transform is a step of its own ([`FilterTransform`]) that
//! reads only the filter, so the loader folds it once at load time when the
//! filter is a weight (`model.rs`'s `fold`); the convolution step reads its
//! result. [`plan`] picks the algorithm per convolution from the shapes
//! ([`tile_for`], a cost model); `GE_CONV_ALGO` overrides it (`im2col`,
//! `winograd`, `winograd2`, `winograd4`) so the paths can be compared on
//! the same `.om`.

use super::conv::{scatter_row, Conv, Ptrs, Shapes};
use super::{concrete, sgemm, F32In, F32Out, Kernel, Op, Par, Slot, Step};
use crate::shared::Shared;
use ge_ir::{DType, Type};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// One tile size: m x m outputs from alpha x alpha inputs (alpha = m + 2)
/// and the filter transform `G` (alpha x 3, row-major); its `Bᵀ` and `Aᵀ`
/// are the constants by the transforms ([`BT2`], [`AT2`], [`BT4`], [`AT4`]).
#[derive(Debug)]
pub struct Transform {
    pub m: usize,
    pub alpha: usize,
    g: &'static [f32],
}

/// F(2x2, 3x3): interpolation points 0, 1, -1 (and infinity).
static F2: Transform = Transform {
    m: 2,
    alpha: 4,
    #[rustfmt::skip]
    g: &[
        1.0, 0.0, 0.0,
        0.5, 0.5, 0.5,
        0.5, -0.5, 0.5,
        0.0, 0.0, 1.0,
    ],
};

/// F(4x4, 3x3): interpolation points 0, ±1, ±2 (and infinity).
static F4: Transform = Transform {
    m: 4,
    alpha: 6,
    #[rustfmt::skip]
    g: &[
        1.0 / 4.0, 0.0, 0.0,
        -1.0 / 6.0, -1.0 / 6.0, -1.0 / 6.0,
        -1.0 / 6.0, 1.0 / 6.0, -1.0 / 6.0,
        1.0 / 24.0, 1.0 / 12.0, 1.0 / 6.0,
        1.0 / 24.0, -1.0 / 12.0, 1.0 / 6.0,
        0.0, 0.0, 1.0,
    ],
};

/// The transforms of output tile size `m` (2 or 4).
pub fn transform(m: usize) -> Option<&'static Transform> {
    match m {
        2 => Some(&F2),
        4 => Some(&F4),
        _ => None,
    }
}

/// The Winograd path of a convolution step: its tile size and which of the
/// step's operands is the transformed filter ([`FilterTransform`]'s result).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Winograd {
    pub m: usize,
    pub input: usize,
}

/// What `GE_CONV_ALGO` asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Choice {
    /// The cost model decides ([`tile_for`]); the GEMM path's constant
    /// filters are packed at load where [`super::conv::Conv::prepare`]'s
    /// rule says the packed kernel is faster.
    Auto,
    /// As `Auto`, but the GEMM path always the `gemm` crate (no filter
    /// packed at load: the old default).
    Gemm,
    /// Never Winograd: im2col + the `gemm` crate (the oldest path).
    Im2col,
    /// As `Auto`, and every GEMM path's constant filter packed at load for
    /// [`super::sgemm_packed`] ([`super::conv::Conv::prepare`]), whatever
    /// its shape.
    Packed,
    /// As `Packed`, and every such convolution but 1x1 stride 1 reads its
    /// input planes at each tap's offset, no im2col panel
    /// (`super::conv::Conv::run_taps`), whatever its shape.
    Taps,
    /// Winograd wherever it applies, this tile size (or the cheaper one).
    Winograd(Option<usize>),
}

pub(super) fn choice() -> Choice {
    match std::env::var("GE_CONV_ALGO").as_deref() {
        Ok("im2col") => Choice::Im2col,
        Ok("packed") => Choice::Packed,
        Ok("taps") => Choice::Taps,
        Ok("gemm") => Choice::Gemm,
        Ok("winograd") => Choice::Winograd(None),
        Ok("winograd2") => Choice::Winograd(Some(2)),
        Ok("winograd4") => Choice::Winograd(Some(4)),
        _ => Choice::Auto,
    }
}

/// Estimated cost (in FMAs of the GEMM's inner kernel) of a convolution of
/// `cg` -> `ocg` channels with a 3x3 filter over an `oh x ow` output, by
/// im2col + GEMM (`None`) or Winograd F(m x m) (`Some(m)`).
///
/// The GEMM's FMAs are divided by its efficiency at depth `k` (`k / (k +
/// 8)`) and at `n` columns per call (`n / (n + 128)`: the `gemm` crate packs
/// both operands at every call, which few columns do not repay — im2col's
/// GEMM has the plane's columns, Winograd's a block's tiles); a Winograd
/// transform costs `TRANSFORM` FMAs per transformed element and per point
/// of the tile (alpha); the tiles cover `ceil(oh/m)·m` rows (edge waste).
/// The constants are fitted to single convolutions of the light models'
/// shapes (`tools/bench/conv_algo.py --shapes`, docs/benchmarks.md), a
/// Winograd pick where im2col measured faster counting against a fit.
pub fn cost(cg: usize, ocg: usize, oh: usize, ow: usize, m: Option<usize>) -> f64 {
    const TRANSFORM: f64 = 16.0;
    let eff = |k: usize| k as f64 / (k as f64 + 8.0);
    let eff_n = |n: usize| n as f64 / (n as f64 + 128.0);
    let (cg_f, ocg_f) = (cg as f64, ocg as f64);
    match m.and_then(transform) {
        None => {
            let p = oh * ow;
            9.0 * cg_f * ocg_f * p as f64 / eff(9 * cg) / eff_n(p)
        }
        Some(t) => {
            let (tx_n, ty_n) = (ow.div_ceil(t.m), oh.div_ceil(t.m));
            let tiles = (tx_n * ty_n) as f64;
            let aa = t.alpha * t.alpha;
            let tb = block_rows(aa, cg, ocg, tx_n, ty_n) * tx_n;
            aa as f64
                * tiles
                * (cg_f * ocg_f / eff(cg) / eff_n(tb) + TRANSFORM * t.alpha as f64 * (cg_f + ocg_f))
        }
    }
}

/// Tile rows per block: V and M (alpha²·(cg+ocg) floats a tile) within
/// ~2 MiB (L2), but at least 128 tiles (the GEMMs' columns: the `gemm`
/// crate packs U[pos] at every call, which fewer columns do not repay);
/// the tile rows spread evenly over the blocks.
fn block_rows(aa: usize, cg: usize, ocg: usize, tx_n: usize, ty_n: usize) -> usize {
    let per_tile = aa * (cg + ocg) * 4;
    let want = ((2 << 20) / per_tile.max(1))
        .clamp(128, 1024)
        .div_ceil(tx_n.max(1));
    let blocks = ty_n.div_ceil(want.clamp(1, ty_n.max(1))).max(1);
    ty_n.div_ceil(blocks).max(1)
}

/// The Winograd tile size for a convolution of these shapes, or `None` for
/// im2col: the cheapest by [`cost`]. An unknown output size (a symbolic
/// dimension) is costed at 28 x 28.
pub fn tile_for(cg: usize, ocg: usize, oh: Option<usize>, ow: Option<usize>) -> Option<usize> {
    let (oh, ow) = (oh.unwrap_or(28), ow.unwrap_or(28));
    [None, Some(2), Some(4)]
        .into_iter()
        .min_by(|a, b| cost(cg, ocg, oh, ow, *a).total_cmp(&cost(cg, ocg, oh, ow, *b)))
        .flatten()
}

/// Whether `c` is a convolution Winograd F(m x m, 3 x 3) computes: a 3x3
/// filter, stride 1, no dilation.
fn applies(c: &Conv, kh: usize, kw: usize) -> bool {
    kh == 3 && kw == 3 && c.strides == [1, 1] && c.dilations == [1, 1]
}

/// Choose each convolution's algorithm: for those Winograd is cheaper for
/// (or forced by `GE_CONV_ALGO`), insert the filter transform step before
/// the convolution (a new value of `types`, folded at load when the filter
/// is a weight) and give the convolution its result.
pub fn plan(steps: &mut Vec<Step>, types: &mut Vec<Type>) {
    let forced = choice();
    if matches!(forced, Choice::Im2col) {
        return;
    }
    let none = HashMap::new();
    let mut i = 0;
    while i < steps.len() {
        let Op::Conv(c) = &steps[i].op else {
            i += 1;
            continue;
        };
        let (x, w) = match steps[i].ins[..] {
            [x, w, ..] => (x, w),
            _ => {
                i += 1;
                continue;
            }
        };
        let wshape = concrete(types[w], &none).ok();
        let out = steps[i].outs.first().copied();
        let Some(&[oc, cg, kh, kw]) = wshape.as_deref() else {
            i += 1;
            continue;
        };
        let float = |v: usize| {
            matches!(
                types[v].dtype(),
                Some(DType::F32 | DType::F16 | DType::BF16)
            )
        };
        let g = c.group;
        if !applies(c, kh, kw) || g == 0 || oc % g != 0 || cg == 0 || !float(x) || !float(w) {
            i += 1;
            continue;
        }
        let ocg = oc / g;
        // The output's spatial size (the last two dims of NCHW, or the
        // middle two of NC1HWC0 blocks), when static.
        let dims = out.and_then(|o| types[o].as_tensor().and_then(|t| t.dims.clone()));
        let hw = |k: usize| {
            let d = dims.as_ref()?;
            d.get(k)?.eval(&none).and_then(|v| usize::try_from(v).ok())
        };
        let (oh, ow) = (hw(2), hw(3));
        let m = match forced {
            Choice::Winograd(Some(m)) => Some(m),
            Choice::Winograd(None) => Some(tile_for(cg, ocg, oh, ow).unwrap_or(2)),
            // Depthwise convolutions have a direct kernel of their own.
            _ if cg == 1 && ocg == 1 => None,
            _ => tile_for(cg, ocg, oh, ow),
        };
        let Some(t) = m.and_then(transform) else {
            i += 1;
            continue;
        };
        let aa = t.alpha * t.alpha;
        let u = types.len();
        types.push(Type::tensor_static(
            &[g as i64, aa as i64, ocg as i64, cg as i64],
            DType::F32,
        ));
        let step = Step {
            op: Op::Kernel(Arc::new(FilterTransform { m: t.m, group: g })),
            ins: vec![w],
            outs: vec![u],
            name: format!(
                "{} (winograd F({m}x{m},3x3) filter)",
                steps[i].name,
                m = t.m
            ),
            loc: steps[i].loc,
            pure: true,
        };
        let conv = &mut steps[i];
        conv.ins.push(u);
        let input = conv.ins.len() - 1;
        if let Op::Conv(c) = &mut conv.op {
            c.winograd = Some(Winograd { m: t.m, input });
        }
        steps.insert(i, step);
        i += 2;
    }
}

/// `U = G g Gᵀ` of every 3x3 filter `[oc, cg, 3, 3]`, laid out as
/// `[group, alpha², ocg, cg]`: per group and tile position, the left
/// operand of one GEMM.
#[derive(Debug)]
pub struct FilterTransform {
    pub m: usize,
    pub group: usize,
}

impl Kernel for FilterTransform {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _par: &Par) -> Result<(), String> {
        let t = transform(self.m).ok_or("winograd: tile size is not 2 or 4")?;
        let (Some(w), Some(out)) = (ins.first(), outs.first()) else {
            return Err("winograd filter transform: needs a filter and a result".into());
        };
        let a = t.alpha;
        let g = self.group.max(1);
        let (oc, cg) = match w.shape[..] {
            [oc, cg, 3, 3] if oc % g == 0 => (oc, cg),
            _ => {
                return Err(format!(
                    "winograd: filter {:?} is not [oc, cg, 3, 3]",
                    w.shape
                ))
            }
        };
        let ocg = oc / g;
        if out.shape != [g, a * a, ocg, cg] || out.dtype != DType::F32 {
            return Err(format!(
                "winograd: transformed filter {:?} is not [{g}, {}, {ocg}, {cg}] f32",
                out.shape,
                a * a
            ));
        }
        let win = F32In::new(w);
        let ws = win.slice();
        let mut o = F32Out::new(out);
        // SAFETY: the result slot holds g·alpha²·ocg·cg f32 (checked above).
        let us = unsafe { std::slice::from_raw_parts_mut(o.ptr(), out.numel()) };
        let mut gg = vec![0f32; a * 3];
        for co in 0..oc {
            let (gi, ol) = (co / ocg, co % ocg);
            for ci in 0..cg {
                let f = &ws[(co * cg + ci) * 9..][..9];
                // gg = G f (alpha x 3), then U = gg Gᵀ (alpha x alpha).
                for r in 0..a {
                    for j in 0..3 {
                        gg[r * 3 + j] = (0..3).map(|k| t.g[r * 3 + k] * f[k * 3 + j]).sum();
                    }
                }
                for r in 0..a {
                    for s in 0..a {
                        let v: f32 = (0..3).map(|j| gg[r * 3 + j] * t.g[s * 3 + j]).sum();
                        us[((gi * a * a + r * a + s) * ocg + ol) * cg + ci] = v;
                    }
                }
            }
        }
        o.finish();
        Ok(())
    }
    fn float_only(&self) -> bool {
        true
    }
}

thread_local! {
    /// The transformed inputs `V` and products `M` of a block of tiles (on
    /// the thread that runs the convolution).
    static BLOCK: RefCell<(Vec<f32>, Vec<f32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
    /// Per-task rows of the transforms.
    static ROWS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// An output tile row on its way into NC1HWC0 blocks.
    static OUT_ROWS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Run the convolution by Winograd F(m x m, 3 x 3) with the transformed
/// filter `u` (`[g, alpha², ocg, cg]`).
///
/// Blocks of whole tile rows are done one after the other, each in three
/// phases on the pool: the input transform by channels, the alpha² GEMMs,
/// the output transform (with bias, activation and NC1HWC0 scatter) by
/// output channels. A block's `V` and `M` are sized to stay in L2.
pub(super) fn run(
    conv: &Conv,
    sh: &Shapes,
    ptrs: &Ptrs,
    u: &Slot,
    m: usize,
    par: &Par,
) -> Result<(), String> {
    let t = transform(m).ok_or("winograd: tile size is not 2 or 4")?;
    let geo = &sh.geo;
    if geo.kh != 3 || geo.kw != 3 || geo.sh != 1 || geo.sw != 1 || geo.dh != 1 || geo.dw != 1 {
        return Err("winograd: not a 3x3 stride-1 convolution".into());
    }
    let aa = t.alpha * t.alpha;
    let Shapes {
        n, cg, ocg, g, p, ..
    } = *sh;
    if u.shape != [g, aa, ocg, cg] || u.dtype != DType::F32 {
        return Err(format!(
            "winograd: transformed filter {:?} is not [{g}, {aa}, {ocg}, {cg}] f32",
            u.shape
        ));
    }
    let (tx_n, ty_n) = (geo.ow.div_ceil(m), geo.oh.div_ceil(m));
    let rows = block_rows(aa, cg, ocg, tx_n, ty_n);
    let tb_max = rows * tx_n;
    let (mut v, mut mm) = BLOCK.with(|b| b.take());
    v.resize(aa * cg * tb_max, 0.0);
    mm.resize(aa * ocg * tb_max, 0.0);
    let (vp, mp) = (Shared(v.as_mut_ptr()), Shared(mm.as_mut_ptr()));
    let up = Shared(u.ptr as *const f32);
    let parallel = par.threads() > 1 && cg * ocg * p > 1 << 16;
    let mut r = Ok(());
    'planes: for plane in 0..n * g {
        let (bi, gi) = (plane / g, plane % g);
        for ty0 in (0..ty_n).step_by(rows) {
            let ty1 = (ty0 + rows).min(ty_n);
            let tb = (ty1 - ty0) * tx_n;
            let chunks = (4 * par.threads()).min(cg);
            let per = cg.div_ceil(chunks);
            r = par.run(chunks, parallel, &|k| {
                let blk = Block {
                    t,
                    sh,
                    ty0,
                    ty1,
                    tx_n,
                };
                for ci in k * per..((k + 1) * per).min(cg) {
                    // SAFETY: channel `ci` of plane (bi, gi) lies in the
                    // input (`Shapes` checked against the slots); this task
                    // writes rows `pos·cg + ci` of V only, each `tb` long,
                    // inside V's alpha²·cg·tb_max floats.
                    unsafe {
                        let x = ptrs.x.p().add((bi * sh.c + gi * cg + ci) * geo.h * geo.w);
                        input_transform(&blk, x, vp.p().add(ci * tb), cg * tb);
                    }
                }
                Ok(())
            });
            if r.is_err() {
                break 'planes;
            }
            r = par.run(aa, parallel, &|pos| {
                // SAFETY: U[gi][pos] is ocg x cg, V[pos] cg x tb, M[pos]
                // ocg x tb, all inside their buffers; each task writes its
                // own M[pos].
                unsafe {
                    sgemm(
                        ocg,
                        cg,
                        tb,
                        1.0,
                        up.p().add((gi * aa + pos) * ocg * cg),
                        cg as isize,
                        1,
                        vp.p().add(pos * cg * tb),
                        tb as isize,
                        1,
                        0.0,
                        mp.p().add(pos * ocg * tb),
                        tb as isize,
                        1,
                    )
                };
                Ok(())
            });
            if r.is_err() {
                break 'planes;
            }
            let chunks = (4 * par.threads()).min(ocg);
            let per = ocg.div_ceil(chunks);
            r = par.run(chunks, parallel, &|k| {
                let blk = Block {
                    t,
                    sh,
                    ty0,
                    ty1,
                    tx_n,
                };
                for ol in k * per..((k + 1) * per).min(ocg) {
                    let co = gi * ocg + ol;
                    // SAFETY: this task writes output channel `co` of batch
                    // `bi` (its plane, or its lanes of the NC1HWC0 blocks)
                    // at rows of tile rows ty0..ty1 only; M's rows
                    // `pos·ocg + ol` are inside M.
                    unsafe {
                        output_block(conv, &blk, ptrs, mp.p().add(ol * tb), ocg * tb, bi, co)
                    };
                }
                Ok(())
            });
            if r.is_err() {
                break 'planes;
            }
        }
    }
    BLOCK.with(|b| b.replace((v, mm)));
    r
}

/// A block of tile rows `ty0..ty1` (`tx_n` tiles each).
struct Block<'a> {
    t: &'static Transform,
    sh: &'a Shapes,
    ty0: usize,
    ty1: usize,
    tx_n: usize,
}

/// Transform one input channel's tiles of the block into `v` (row `pos` at
/// `v + pos·pos_stride`, the block's tiles in order).
///
/// # Safety
/// `x` is an `h x w` plane; `v + pos·pos_stride` is valid for `tb` floats
/// for every pos < alpha².
unsafe fn input_transform(b: &Block, x: *const f32, v: *mut f32, pos_stride: usize) {
    ROWS.with(|rows| {
        let rows: &mut Vec<f32> = &mut rows.borrow_mut();
        by_cpu_features!(input_rows(b: &Block, x: *const f32, v: *mut f32, pos_stride: usize, rows: &mut Vec<f32>))
    })
}

/// Lanes of a tile group: the transforms run on this many tiles of a tile
/// row at once, each value a vector of lanes.
const L: usize = 16;
type Lanes = [f32; L];

/// `Bᵀ` and `Aᵀ` of F(2x2, 3x3) and F(4x4, 3x3) as constants, so that the
/// transforms below unroll with every zero coefficient dropped and every
/// unit one an add or subtract (the same bits as the multiplication).
#[rustfmt::skip]
const BT2: [[f32; 4]; 4] = [
    [1.0, 0.0, -1.0, 0.0],
    [0.0, 1.0, 1.0, 0.0],
    [0.0, -1.0, 1.0, 0.0],
    [0.0, 1.0, 0.0, -1.0],
];
#[rustfmt::skip]
const AT2: [[f32; 4]; 2] = [
    [1.0, 1.0, 1.0, 0.0],
    [0.0, 1.0, -1.0, -1.0],
];
#[rustfmt::skip]
const BT4: [[f32; 6]; 6] = [
    [4.0, 0.0, -5.0, 0.0, 1.0, 0.0],
    [0.0, -4.0, -4.0, 1.0, 1.0, 0.0],
    [0.0, 4.0, -4.0, -1.0, 1.0, 0.0],
    [0.0, -2.0, -1.0, 2.0, 1.0, 0.0],
    [0.0, 2.0, -1.0, -2.0, 1.0, 0.0],
    [0.0, 4.0, 0.0, -5.0, 0.0, 1.0],
];
#[rustfmt::skip]
const AT4: [[f32; 6]; 4] = [
    [1.0, 1.0, 1.0, 1.0, 1.0, 0.0],
    [0.0, 1.0, -1.0, 2.0, -2.0, 0.0],
    [0.0, 1.0, 1.0, 4.0, 4.0, 0.0],
    [0.0, 1.0, -1.0, 8.0, -8.0, 1.0],
];

/// `Σ_j c[j] · x[j]` lane by lane, in `j` order, from the first nonzero
/// coefficient on.
// Indices as in the transforms' sums (Bᵀ[r][i] t[i][s]), over tiny
// constant-size arrays that unroll.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn lin<const A: usize>(c: &[f32; A], x: &[Lanes; A]) -> Lanes {
    let mut out = [0f32; L];
    let mut first = true;
    for j in 0..A {
        if c[j] == 0.0 {
            continue;
        }
        if first {
            for l in 0..L {
                out[l] = c[j] * x[j][l];
            }
            first = false;
        } else {
            for l in 0..L {
                out[l] += c[j] * x[j][l];
            }
        }
    }
    out
}

#[inline(always)]
unsafe fn input_rows(
    b: &Block,
    x: *const f32,
    v: *mut f32,
    pos_stride: usize,
    rows: &mut Vec<f32>,
) {
    match b.t.m {
        2 => input_rows_of::<2, 4>(&BT2, b, x, v, pos_stride, rows),
        _ => input_rows_of::<4, 6>(&BT4, b, x, v, pos_stride, rows),
    }
}

// Indices as in the transforms' sums (Bᵀ[r][i] t[i][s]), over tiny
// constant-size arrays that unroll.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn input_rows_of<const M: usize, const A: usize>(
    bt: &[[f32; A]; A],
    b: &Block,
    x: *const f32,
    v: *mut f32,
    pos_stride: usize,
    rows: &mut Vec<f32>,
) {
    let geo = &b.sh.geo;
    let txn = b.tx_n;
    // Each padded input row, split by phase: ph[r][k] = row[k·M + r], so a
    // tile's tap j is ph[j % M][tx + j / M]: unit strides over the tiles.
    // The phases run on past the last tile to a whole group of lanes.
    let plen = txn.next_multiple_of(L) + 1;
    let wide = plen * M;
    rows.resize(wide + A * M * plen, 0.0);
    let (pad, ph) = rows.split_at_mut(wide);
    for ty in b.ty0..b.ty1 {
        for i in 0..A {
            let iy = (ty * M + i) as isize - geo.pt as isize;
            pad.fill(0.0);
            if iy >= 0 && (iy as usize) < geo.h {
                // Columns q of the padded row read input column q - pl.
                let src = std::slice::from_raw_parts(x.add(iy as usize * geo.w), geo.w);
                let q0 = geo.pl.min(wide);
                let n = geo.w.min(wide - q0);
                pad[q0..q0 + n].copy_from_slice(&src[..n]);
            }
            let phi = &mut ph[i * M * plen..(i + 1) * M * plen];
            for (k, chunk) in pad.chunks_exact(M).enumerate() {
                for r in 0..M {
                    phi[r * plen + k] = chunk[r];
                }
            }
        }
        let tl = (ty - b.ty0) * txn;
        for tx0 in (0..txn).step_by(L) {
            let lanes = (txn - tx0).min(L);
            // t[i][s] = Σ_j Bᵀ[s][j] d[i][j] (rows), V[r][s] = Σ_i Bᵀ[r][i] t[i][s].
            let mut t = [[[0f32; L]; A]; A];
            for i in 0..A {
                let d: [Lanes; A] = std::array::from_fn(|j| {
                    let at = (i * M + j % M) * plen + tx0 + j / M;
                    let mut l = [0f32; L];
                    l.copy_from_slice(&ph[at..at + L]);
                    l
                });
                for s in 0..A {
                    t[i][s] = lin(&bt[s], &d);
                }
            }
            for s in 0..A {
                let col: [Lanes; A] = std::array::from_fn(|i| t[i][s]);
                for r in 0..A {
                    let out = lin(&bt[r], &col);
                    let dst = std::slice::from_raw_parts_mut(
                        v.add((r * A + s) * pos_stride + tl + tx0),
                        lanes,
                    );
                    dst.copy_from_slice(&out[..lanes]);
                }
            }
        }
    }
}

/// Transform output channel `co`'s products of the block (row `pos` at
/// `mrow + pos·pos_stride`) into its output rows, then bias, activation and
/// (with `blocked_out`) the NC1HWC0 scatter.
///
/// # Safety
/// As [`run`]'s output phase: `mrow + pos·pos_stride` valid for `tb`
/// floats, the output holds channel `co` of batch `bi`.
unsafe fn output_block(
    conv: &Conv,
    b: &Block,
    ptrs: &Ptrs,
    mrow: *const f32,
    pos_stride: usize,
    bi: usize,
    co: usize,
) {
    let geo = &b.sh.geo;
    let (m, ow) = (b.t.m, geo.ow);
    let oy0 = b.ty0 * m;
    let oy1 = (b.ty1 * m).min(geo.oh);
    let len = (oy1 - oy0) * ow;
    let p = b.sh.p;
    OUT_ROWS.with(|buf| {
        let buf: &mut Vec<f32> = &mut buf.borrow_mut();
        let dst = match conv.blocked_out {
            None => ptrs.o.p().add((bi * b.sh.oc + co) * p + oy0 * ow),
            Some(_) => {
                if buf.len() < len {
                    buf.resize(len, 0.0);
                }
                buf.as_mut_ptr()
            }
        };
        // (In a closure of its own: the macro returns from it.)
        let transform =
            || by_cpu_features!(output_rows(b: &Block, mrow: *const f32, pos_stride: usize, dst: *mut f32));
        transform();
        let out = std::slice::from_raw_parts_mut(dst, len);
        conv.epilogue(ptrs, b.sh.oc, p, bi, co, oy0 * ow, out);
        conv.finish_block(out);
        if let Some(c0) = conv.blocked_out {
            scatter_row(ptrs.o.p(), out, b.sh.oc, p, c0, bi, co, oy0 * ow);
        }
    })
}

#[inline(always)]
unsafe fn output_rows(b: &Block, mrow: *const f32, pos_stride: usize, dst: *mut f32) {
    match b.t.m {
        2 => output_rows_of::<2, 4>(&AT2, b, mrow, pos_stride, dst),
        _ => output_rows_of::<4, 6>(&AT4, b, mrow, pos_stride, dst),
    }
}

// Indices as in the transforms' sums (Bᵀ[r][i] t[i][s]), over tiny
// constant-size arrays that unroll.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn output_rows_of<const M: usize, const A: usize>(
    at: &[[f32; A]; M],
    b: &Block,
    mrow: *const f32,
    pos_stride: usize,
    dst: *mut f32,
) {
    let geo = &b.sh.geo;
    let (txn, ow) = (b.tx_n, geo.ow);
    let oy0 = b.ty0 * M;
    for ty in b.ty0..b.ty1 {
        let tl = (ty - b.ty0) * txn;
        for tx0 in (0..txn).step_by(L) {
            let lanes = (txn - tx0).min(L);
            // s[o][q] = Σ_r Aᵀ[o][r] M[r][q]; y[o][pp] = Σ_q Aᵀ[pp][q] s[o][q].
            let mut s = [[[0f32; L]; A]; M];
            for q in 0..A {
                let col: [Lanes; A] = std::array::from_fn(|r| {
                    let mut l = [0f32; L];
                    let src = std::slice::from_raw_parts(
                        mrow.add((r * A + q) * pos_stride + tl + tx0),
                        lanes,
                    );
                    l[..lanes].copy_from_slice(src);
                    l
                });
                for o in 0..M {
                    s[o][q] = lin(&at[o], &col);
                }
            }
            for o in 0..M {
                let oy = ty * M + o;
                if oy >= geo.oh {
                    break;
                }
                let orow = std::slice::from_raw_parts_mut(dst.add((oy - oy0) * ow), ow);
                for pp in 0..M {
                    let y = lin(&at[pp], &s[o]);
                    for (lane, &val) in y[..lanes].iter().enumerate() {
                        if let Some(d) = orow.get_mut((tx0 + lane) * M + pp) {
                            *d = val;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_model_prefers_im2col_for_few_channels() {
        // VGG's first convolution (3 input channels): the transforms and a
        // GEMM of depth 3 cost more than they save.
        assert_eq!(tile_for(3, 64, Some(224), Some(224)), None);
        // Deep 3x3 layers: the large tile.
        // Deep layers on large planes (VGG's): the large tile.
        assert_eq!(tile_for(128, 128, Some(112), Some(112)), Some(4));
        assert_eq!(tile_for(512, 512, Some(28), Some(28)), Some(4));
        // Small planes (ResNet's 7x7, AlexNet's 13x13): too few tiles per
        // GEMM call, im2col measured faster.
        assert_eq!(tile_for(512, 512, Some(7), Some(7)), None);
        assert_eq!(tile_for(192, 192, Some(13), Some(13)), None);
    }

    #[test]
    fn filter_transform_of_a_delta_is_the_interpolation() {
        // A centre-tap filter: U = G e₁ e₁ᵀ Gᵀ, the outer product of G's
        // middle column (F(2x2): 0, 1/2, -1/2, 0).
        let mut w = vec![0f32; 9];
        w[4] = 1.0;
        let mut u = vec![0f32; 16];
        let ws = Slot {
            ptr: w.as_mut_ptr() as *mut u8,
            shape: vec![1, 1, 3, 3],
            dtype: DType::F32,
        };
        let us = Slot {
            ptr: u.as_mut_ptr() as *mut u8,
            shape: vec![1, 16, 1, 1],
            dtype: DType::F32,
        };
        FilterTransform { m: 2, group: 1 }
            .run(&[&ws], &[&us], &Par::NONE)
            .unwrap();
        let col = [0.0, 0.5, -0.5, 0.0];
        for r in 0..4 {
            for s in 0..4 {
                assert_eq!(u[r * 4 + s], col[r] * col[s], "U[{r}][{s}]");
            }
        }
    }
}
