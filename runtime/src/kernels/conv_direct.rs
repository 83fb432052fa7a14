//! Direct convolution without an im2col matrix, for every stride, dilation,
//! pad and group (MLAS's direct kernels are the model; no code of theirs).
//!
//! Each (batch, group) input plane is copied once, zero-padded, into its
//! `sh x sw` phase planes (`P[a][b][y][x] = padded[y·sh + a][x·sw + b]`),
//! all of them `ph x pw` with `pw = ow + ((kw-1)·dw)/sw`: a tap `(ky, kx)`
//! then reads phase `((ky·dh) % sh, (kx·dw) % sw)` at a fixed offset
//! `((ky·dh)/sh)·pw + (kx·dw)/sw` from the output's own flat position
//! `oy·pw + ox`. The whole output plane is one flat range of `oh·pw`
//! positions (columns `ox >= ow` are computed and dropped), cut into
//! segments of [`SEG`] lanes; a block of [`OCB`] output channels by one
//! segment sums every tap (`cg·kh·kw`) in registers — a rank-1 update per
//! tap with the filter taps packed `[block][tap][OCB]` — and the valid
//! columns are copied out with the bias/activation epilogue.
//!
//! Only when `GE_CONV_ALGO=direct` asks for it (see [`plan`]).

use super::conv::{bias_activation, scatter_row, Conv, Ptrs, Shapes};
use super::winograd::{choice, Choice};
use super::{concrete, Op, Par, Step};
use crate::shared::Shared;
use ge_ir::{DType, Type};
use std::cell::RefCell;
use std::collections::HashMap;

/// Output lanes per segment (three AVX2 vectors).
const SEG: usize = 24;
/// Output channels per register block.
const OCB: usize = 4;

/// The phase-plane geometry of one convolution.
#[derive(Clone, Copy)]
struct Plan {
    /// Phase plane rows and columns.
    ph: usize,
    pw: usize,
    /// Floats of one input channel's phase planes (`sh·sw·ph·pw`).
    cs: usize,
    /// Flat output positions `oh·pw` and their segments.
    len: usize,
    segs: usize,
    /// Filter taps per output channel (`cg·kh·kw`).
    taps: usize,
    /// Register blocks of output channels (`ceil(ocg / OCB)`).
    blocks: usize,
}

impl Plan {
    fn new(sh: &Shapes) -> Plan {
        let g = &sh.geo;
        let qh = ((g.kh - 1) * g.dh) / g.sh;
        let qw = ((g.kw - 1) * g.dw) / g.sw;
        let (ph, pw) = (g.oh + qh, g.ow + qw);
        let len = g.oh * pw;
        Plan {
            ph,
            pw,
            cs: g.sh * g.sw * ph * pw,
            len,
            segs: len.div_ceil(SEG),
            taps: sh.cg * g.kh * g.kw,
            blocks: sh.ocg.div_ceil(OCB),
        }
    }
    /// Floats of a plane's phase buffer: every channel, and the slack the
    /// last segment and the widest tap read past the end (zeros).
    fn buffer(&self, cg: usize) -> usize {
        cg * self.cs + SEG + self.pw + 1
    }
}

/// Mark the convolutions the direct kernel computes: every one but the
/// depthwise ones when `GE_CONV_ALGO=direct`, else none. (Not chosen by
/// default: on SqueezeNet it measured 1.16-1.28x the CPU time of im2col +
/// GEMM — docs/benchmarks.md — its inner loop is not yet at the GEMM
/// micro-kernel's speed.)
pub fn plan(steps: &mut [Step], types: &[Type]) {
    if choice() != Choice::Direct {
        return;
    }
    let none = HashMap::new();
    for s in steps.iter_mut() {
        let (Op::Conv(c), [x, w, ..]) = (&mut s.op, &s.ins[..]) else {
            continue;
        };
        let float = |v: usize| {
            matches!(
                types[v].dtype(),
                Some(DType::F32 | DType::F16 | DType::BF16)
            )
        };
        let Ok(&[oc, cg, _, _]) = concrete(types[*w], &none).as_deref() else {
            continue;
        };
        let g = c.group.max(1);
        c.direct = c.winograd.is_none() && float(*x) && float(*w) && !(cg == 1 && oc == g);
    }
}

thread_local! {
    /// Phase planes of the (batch, group) plane being computed.
    static PHASES: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// Filter taps packed `[block][tap][OCB]`.
    static PACKED: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// The flat outputs `[ocg][segs·SEG]` of a plane.
    static FLAT: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Run `conv` directly (see the module doc).
pub(super) fn run(conv: &Conv, sh: &Shapes, ptrs: &Ptrs, par: &Par) -> Result<(), String> {
    let pl = Plan::new(sh);
    let mut phases = PHASES.with(|b| b.take());
    let mut packed = PACKED.with(|b| b.take());
    let mut flat = FLAT.with(|b| b.take());
    phases.clear();
    phases.resize(pl.buffer(sh.cg), 0.0);
    packed.clear();
    packed.resize(pl.blocks * pl.taps * OCB, 0.0);
    flat.clear();
    flat.resize(sh.ocg * pl.segs * SEG, 0.0);
    let offs = tap_offsets(sh, &pl);
    let bufs = Bufs {
        offs: &offs,
        phases: &mut phases,
        packed: &mut packed,
        flat: &mut flat,
    };
    let r = planes(conv, sh, &pl, ptrs, bufs, par);
    PHASES.with(|b| b.replace(phases));
    PACKED.with(|b| b.replace(packed));
    FLAT.with(|b| b.replace(flat));
    r
}

/// A convolution's scratch buffers ([`run`]'s thread-locals).
struct Bufs<'a> {
    offs: &'a [usize],
    phases: &'a mut [f32],
    packed: &'a mut [f32],
    flat: &'a mut [f32],
}

/// Every (batch, group) plane: phase planes, packed filter, the blocks,
/// the copy out.
fn planes(
    conv: &Conv,
    sh: &Shapes,
    pl: &Plan,
    ptrs: &Ptrs,
    b: Bufs,
    par: &Par,
) -> Result<(), String> {
    for plane in 0..sh.n * sh.g {
        let (bi, gi) = (plane / sh.g, plane % sh.g);
        // SAFETY: `ptrs` hold the convolution's tensors at `sh`'s sizes.
        unsafe {
            let xs = ptrs
                .x
                .p()
                .add((bi * sh.c + gi * sh.cg) * sh.geo.h * sh.geo.w);
            fill_phases(sh, pl, xs, b.phases);
            pack_filter(sh, pl, ptrs.w.p().add(gi * sh.ocg * pl.taps), b.packed);
        }
        compute(sh, pl, b.offs, b.phases, b.packed, b.flat, par)?;
        copy_out(conv, sh, pl, b.flat, ptrs, bi, gi, par)?;
    }
    Ok(())
}

/// Offset of every tap (`ci, ky, kx`, the filter's order) in the phase
/// buffer, relative to the output's flat position.
fn tap_offsets(sh: &Shapes, pl: &Plan) -> Vec<usize> {
    let g = &sh.geo;
    let plane = pl.ph * pl.pw;
    let mut offs = Vec::with_capacity(pl.taps);
    for ci in 0..sh.cg {
        for ky in 0..g.kh {
            for kx in 0..g.kw {
                let (vy, vx) = (ky * g.dh, kx * g.dw);
                let phase = (vy % g.sh) * g.sw + vx % g.sw;
                offs.push(ci * pl.cs + phase * plane + (vy / g.sh) * pl.pw + vx / g.sw);
            }
        }
    }
    offs
}

/// The zero-padded phase planes of one (batch, group) plane's `cg` channels.
///
/// # Safety
/// `x` points at `cg` input planes of `h x w` floats.
unsafe fn fill_phases(sh: &Shapes, pl: &Plan, x: *const f32, buf: &mut [f32]) {
    let g = &sh.geo;
    let plane = pl.ph * pl.pw;
    for ci in 0..sh.cg {
        let src = x.add(ci * g.h * g.w);
        for a in 0..g.sh {
            for b in 0..g.sw {
                let base = ci * pl.cs + (a * g.sw + b) * plane;
                for y in 0..pl.ph {
                    let row = &mut buf[base + y * pl.pw..base + (y + 1) * pl.pw];
                    // Input row iy = y·sh + a - pt; column ix = x·sw + b - pl.
                    let iy = (y * g.sh + a) as isize - g.pt as isize;
                    if iy < 0 || iy >= g.h as isize {
                        row.fill(0.0);
                        continue;
                    }
                    let s = src.add(iy as usize * g.w);
                    for (xo, v) in row.iter_mut().enumerate() {
                        let ix = (xo * g.sw + b) as isize - g.pl as isize;
                        *v = if ix >= 0 && ix < g.w as isize {
                            *s.add(ix as usize)
                        } else {
                            0.0
                        };
                    }
                }
            }
        }
    }
}

/// Pack the group's filter `[ocg][taps]` as `[block][tap][OCB]` (channels
/// past `ocg` zero).
///
/// # Safety
/// `w` points at `ocg·taps` floats.
unsafe fn pack_filter(sh: &Shapes, pl: &Plan, w: *const f32, out: &mut [f32]) {
    for blk in 0..pl.blocks {
        for t in 0..pl.taps {
            for i in 0..OCB {
                let co = blk * OCB + i;
                out[(blk * pl.taps + t) * OCB + i] = match co < sh.ocg {
                    true => *w.add(co * pl.taps + t),
                    false => 0.0,
                };
            }
        }
    }
}

/// Every (segment, block) of the plane into `flat` (`[ocg][segs·SEG]`).
/// Blocks run in groups whose packed filter stays in L2, segments inside a
/// group, so a segment's input rows are reused by the group's blocks.
fn compute(
    sh: &Shapes,
    pl: &Plan,
    offs: &[usize],
    phases: &[f32],
    packed: &[f32],
    flat: &mut [f32],
    par: &Par,
) -> Result<(), String> {
    let per_block = pl.taps * OCB * 4;
    let group = ((128 << 10) / per_block.max(1)).clamp(1, pl.blocks);
    let groups = pl.blocks.div_ceil(group);
    // Tasks: segment ranges of each block group, about 8 segments each.
    let chunk = 8usize;
    let chunks = pl.segs.div_ceil(chunk);
    let (x, w, o) = (
        Shared(phases.as_ptr()),
        Shared(packed.as_ptr()),
        Shared(flat.as_mut_ptr()),
    );
    let row = pl.segs * SEG;
    let work = sh.ocg * pl.len * pl.taps;
    par.run(groups * chunks, work > 1 << 16, &|t| {
        let (gr, ch) = (t / chunks, t % chunks);
        let b1 = ((gr + 1) * group).min(pl.blocks);
        for seg in ch * chunk..((ch + 1) * chunk).min(pl.segs) {
            for blk in gr * group..b1 {
                let mut acc = [[0f32; SEG]; OCB];
                // SAFETY: every tap of every segment reads inside the phase
                // buffer (`Plan::buffer`'s slack); the packed filter holds
                // `blocks·taps·OCB` floats.
                unsafe {
                    let xb = x.p().add(seg * SEG);
                    let wb = w.p().add(blk * pl.taps * OCB);
                    block(xb, offs, wb, &mut acc);
                }
                for (i, a) in acc.iter().enumerate() {
                    let co = blk * OCB + i;
                    if co < sh.ocg {
                        // SAFETY: task `t` alone writes segment `seg` of
                        // its blocks' channels.
                        unsafe {
                            let d = o.p().add(co * row + seg * SEG);
                            std::ptr::copy_nonoverlapping(a.as_ptr(), d, SEG);
                        }
                    }
                }
            }
        }
        Ok(())
    })
}

/// `acc[i][l] = Σ_t w[t][i] · x[offs[t] + l]`, taps in filter order.
///
/// # Safety
/// `x + offs[t]` holds `SEG` floats for every tap, `w` holds `OCB` per tap.
unsafe fn block(x: *const f32, offs: &[usize], w: *const f32, acc: &mut [[f32; SEG]; OCB]) {
    by_cpu_features!(block_taps(x: *const f32, offs: &[usize], w: *const f32, acc: &mut [[f32; SEG]; OCB]))
}

#[inline(always)]
unsafe fn block_taps(x: *const f32, offs: &[usize], w: *const f32, acc: &mut [[f32; SEG]; OCB]) {
    let mut a = [[0f32; SEG]; OCB];
    for (t, &off) in offs.iter().enumerate() {
        let xv: [f32; SEG] = std::ptr::read_unaligned(x.add(off) as *const [f32; SEG]);
        let wv: [f32; OCB] = std::ptr::read_unaligned(w.add(t * OCB) as *const [f32; OCB]);
        for i in 0..OCB {
            for l in 0..SEG {
                a[i][l] = wv[i].mul_add(xv[l], a[i][l]);
            }
        }
    }
    *acc = a;
}

/// The valid columns of `flat` into the output, with bias and activation
/// (and the NC1HWC0 scatter of a blocked result), one task per channel.
#[allow(clippy::too_many_arguments)]
fn copy_out(
    conv: &Conv,
    sh: &Shapes,
    pl: &Plan,
    flat: &[f32],
    ptrs: &Ptrs,
    bi: usize,
    gi: usize,
    par: &Par,
) -> Result<(), String> {
    let g = &sh.geo;
    let (p, row) = (sh.p, pl.segs * SEG);
    let f = Shared(flat.as_ptr());
    par.run(sh.ocg, sh.ocg * p > 1 << 15, &|cl| {
        let co = gi * sh.ocg + cl;
        TILE.with(|t| {
            let mut tile = t.borrow_mut();
            tile.resize(p, 0.0);
            // SAFETY: `flat` holds `ocg` rows of `segs·SEG`; this task alone
            // writes channel `co` of batch `bi`.
            unsafe {
                let src = f.p().add(cl * row);
                let dst = match conv.blocked_out {
                    None => ptrs.o.p().add((bi * sh.oc + co) * p),
                    Some(_) => tile.as_mut_ptr(),
                };
                for oy in 0..g.oh {
                    std::ptr::copy_nonoverlapping(src.add(oy * pl.pw), dst.add(oy * g.ow), g.ow);
                }
                let plane = std::slice::from_raw_parts_mut(dst, p);
                let bv = ptrs.b.map(|b| *b.p().add(co));
                bias_activation(bv, &conv.act, conv.alpha, plane);
                if let Some(c0) = conv.blocked_out {
                    scatter_row(ptrs.o.p(), plane, sh.oc, p, c0, bi, co, 0);
                }
            }
        });
        Ok(())
    })
}

thread_local! {
    /// An output plane on its way into NC1HWC0 blocks.
    static TILE: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}
