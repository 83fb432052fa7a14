//! Convolutions that read their input, and their residual, as NC1HWC0
//! blocks of 8 channels and write their result as such blocks (AVX-512):
//! no conversion to NCHW on either side.
//!
//! A compiled model keeps its activations in NC1HWC0 between
//! convolutions. Converting them to plain NCHW (or having the producer
//! write NCHW, `crate::layouts`) leaves a pointwise convolution a GEMM whose
//! `B` rows are input planes a whole plane apart: every step of `k` reads
//! from another page. In blocks, the 8 channels of one position lie side
//! by side and a block of positions reads a few lines per 8 steps of `k`.
//! Measured, the same register blocking (16 output channels a vector, 4
//! vectors by 6 positions or 2 by 14): 256 -> 64 on 56x56 at 1 thread 930
//! µs from NCHW, 620 µs from the blocks (onnxruntime's NCHWc kernel: 620).
//!
//! A filter of `kh x kw` taps is a sum over taps: each tap reads the input
//! blocks at a fixed offset from the output position's, in a copy of the
//! input with its padding made zeros ([`pad_input`]: every tap of every
//! position then reads real memory, no test per position). The filter is
//! packed at load ([`Conv::prepare_blocks`]) in panels of 16 output
//! channels, one vector per (tap, input channel), the input channels
//! padded to whole blocks with zero weights (the blocks' padding lanes are
//! zero, and a zero weight keeps them out of every sum). A vector of sums
//! holds 16 output channels of one position: two output blocks, stored as
//! two halves. Which convolutions read blocks is the loader's choice
//! (`crate::blocked_reads`).

use super::conv::{Conv, Geo};
use super::sgemm_packed::PackedA;
use super::{F32In, F32Out, Par, Slot};
use crate::shared::Shared;
use std::cell::RefCell;

/// Channels of a block (NC1HWC0's C0 for f32).
pub const C0: usize = 8;

/// Output channels of a filter panel: one AVX-512 vector.
const PANEL: usize = 16;

/// Most positions a block of sums covers (as `sgemm_packed`'s wide rows:
/// 2 panels by 14 positions, 28 sums).
const MAX_COLS: usize = 14;

thread_local! {
    /// The zero-padded copy of a convolution's input ([`pad_input`]),
    /// kept between calls.
    static PADDED: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// The filter `w` (OIHW `dims`) packed for [`Conv::run_blocks`]: panels of
/// [`PANEL`] output channels, k-major over (tap, input channel), the input
/// channels of each tap padded to whole blocks of [`C0`].
pub fn pack(w: &[f32], dims: [usize; 4]) -> PackedA {
    let [oc, c, kh, kw] = dims;
    let cp = c.div_ceil(C0) * C0;
    let kp = kh * kw * cp;
    let mut padded = vec![0f32; oc * kp];
    for (o, row) in padded.chunks_exact_mut(kp.max(1)).enumerate().take(oc) {
        for ic in 0..c {
            for t in 0..kh * kw {
                row[t * cp + ic] = w[(o * c + ic) * kh * kw + t];
            }
        }
    }
    PackedA::in_panels(&padded, oc, kp, PANEL)
}

/// Bytes [`pack`] allocates for an OIHW filter of `dims`.
pub fn packed_bytes(dims: [usize; 4]) -> usize {
    let [oc, c, kh, kw] = dims;
    PackedA::bytes_for_wide_rows(oc, kh * kw * c.div_ceil(C0) * C0)
}

/// Whether [`Conv::run_blocks`] computes `conv` with a filter of `dims`
/// (OIHW): one group, a column stride of 1 or 2, no padding beyond the
/// kernel's reach (a wider one only adds rows of bias, and sizes the
/// padded copy by the attribute).
pub fn computes(conv: &Conv, dims: [usize; 4]) -> bool {
    let [_, _, kh, kw] = dims;
    let reach = [
        (kh.max(1) - 1) * conv.dilations[0],
        (kw.max(1) - 1) * conv.dilations[1],
    ];
    let [t, l, b, r] = conv.pads;
    conv.group == 1
        && conv.strides[0] >= 1
        && (1..=2).contains(&conv.strides[1])
        && conv.dilations.iter().all(|&d| d >= 1)
        && t.max(b) <= reach[0]
        && l.max(r) <= reach[1]
}

/// Whether computing on blocks pays for a filter of `dims` (OIHW) over
/// input planes of `plane` positions: the blocks' gain is contiguous reads
/// where an NCHW plane is long enough that each channel's row of the GEMM
/// lies on its own page; filters of at least 64 output channels and a `k`
/// of at least 64. Measured per layer on ResNet-50 (1 thread, Intel
/// Xeon, `ge-run --trace`, blocks against NCHW): 1x1 filters on 56x56
/// 1.3-1.5x faster and on 28x28 1.2x, on 14x14 and 7x7 even to 1.25x
/// slower; 3x3 filters on 56x56 1.2x faster, on 28x28 and smaller 1.15x
/// slower (the taps path's L2 chunks suit them better there). Where the
/// shapes pass, the CPU decides too ([`super::blocks_probe`]).
pub fn pays(dims: [usize; 4], plane: usize) -> bool {
    let [oc, c, kh, kw] = dims;
    // Fewer than 4 panels of 16 output channels keep few sums in flight
    // per load of the filter (DenseNet's 128 -> 32 3x3 layers ran 2 %
    // slower on blocks); a `k` below 64 leaves the per-block stores and
    // epilogue a large share (SqueezeNet's 16 -> 64 expand layers).
    oc >= 4 * PANEL
        && c * kh * kw >= 64
        && match kh * kw {
            1 => plane >= 28 * 28,
            _ => plane >= 56 * 56,
        }
}

/// The sizes of one run, checked against each other.
#[derive(Clone, Copy, Debug)]
struct Dims {
    n: usize,
    /// Input blocks (of [`C0`] channels).
    c1: usize,
    oc: usize,
    oc1: usize,
    /// The plane's geometry, as the NCHW kernels see it.
    geo: Geo,
    /// top, left, bottom, right
    pads: [usize; 4],
    /// The input plane with its padding.
    hp: usize,
    wp: usize,
}

impl Dims {
    fn of(conv: &Conv, x: &[usize], w: &[usize], out: &[usize]) -> Result<Dims, String> {
        let (&[n, c1, h, wd, xc0], &[oc, c, kh, kw], &[on, oc1, oh, ow, oc0]) = (x, w, out) else {
            return Err(format!(
                "conv2d on blocks: shapes {x:?} * {w:?} -> {out:?} are not NC1HWC0 * OIHW -> NC1HWC0"
            ));
        };
        let [sh, sw] = conv.strides;
        let [dh, dw] = conv.dilations;
        let [t, l, b, r] = conv.pads;
        let (hp, wp) = (h + t + b, wd + l + r);
        // Output extent of a padded length `p` (0 when the kernel does not fit).
        let extent = |p: usize, k: usize, d: usize, s: usize| match p.checked_sub((k - 1) * d + 1) {
            Some(v) => v / s + 1,
            None => 0,
        };
        let agree = computes(conv, [oc, c, kh, kw])
            && kh >= 1
            && kw >= 1
            && xc0 == C0
            && oc0 == C0
            && c1 == c.div_ceil(C0)
            && oc1 == oc.div_ceil(C0)
            && on == n
            && h > 0
            && wd > 0
            && oh == extent(hp, kh, dh, sh)
            && ow == extent(wp, kw, dw, sw)
            && oh > 0
            && ow > 0;
        if !agree {
            return Err(format!(
                "conv2d on blocks: shapes {x:?} * {w:?} -> {out:?} do not agree (strides {:?}, pads {:?}, dilations {:?})",
                conv.strides, conv.pads, conv.dilations
            ));
        }
        Ok(Dims {
            n,
            c1,
            oc,
            oc1,
            geo: conv.geo([h, wd], [kh, kw], [oh, ow]),
            pads: conv.pads,
            hp,
            wp,
        })
    }

    /// The input needs a zero-padded copy.
    fn padded(&self) -> bool {
        self.pads != [0; 4]
    }

    /// A plane is one run of positions (a 1x1 filter of stride 1 over an
    /// unpadded input: output and input positions are the same).
    fn flat(&self) -> bool {
        self.geo.kh == 1
            && self.geo.kw == 1
            && self.geo.sh == 1
            && self.geo.sw == 1
            && !self.padded()
    }

    /// The GEMM's `k`: taps by padded input channels.
    fn k(&self) -> usize {
        self.geo.kh * self.geo.kw * self.c1 * C0
    }

    /// Each tap's offset (in floats) from its output position's input
    /// block, in the padded plane.
    fn taps(&self) -> Vec<usize> {
        (0..self.geo.kh)
            .flat_map(|i| {
                (0..self.geo.kw).map(move |j| (i * self.geo.dh * self.wp + j * self.geo.dw) * C0)
            })
            .collect()
    }

    /// Input bytes a unit may read from L2 while every panel of its piece
    /// passes (a quarter of it).
    fn unit_input_bytes() -> usize {
        super::cache::l2_bytes() / 4
    }

    /// Output positions (flat planes) or output rows a unit covers.
    fn rows_per_unit(&self) -> usize {
        let block_bytes = self.c1 * C0 * 4;
        match self.flat() {
            true => {
                let fit = Self::unit_input_bytes() / block_bytes.max(1);
                fit.clamp(MAX_COLS, 16 * MAX_COLS) / MAX_COLS * MAX_COLS
            }
            false => {
                // Rows `r` of output read `(r - 1) * sh + reach + 1` input rows.
                let row_bytes = self.wp * block_bytes;
                let reach = (self.geo.kh - 1) * self.geo.dh + 1;
                let fit = (Self::unit_input_bytes() / row_bytes.max(1)).saturating_sub(reach)
                    / self.geo.sh
                    + 1;
                fit.clamp(1, self.geo.oh)
            }
        }
    }

    /// Pieces of a plane (units of work along its positions).
    fn row_pieces(&self) -> usize {
        match self.flat() {
            true => (self.geo.oh * self.geo.ow).div_ceil(self.rows_per_unit()),
            false => self.geo.oh.div_ceil(self.rows_per_unit()),
        }
    }

    /// Filter panels of 16 output channels.
    fn panels(&self) -> usize {
        self.oc.div_ceil(PANEL)
    }

    /// Pieces of the filter's panels: as many as keep each in L2 while a
    /// unit's positions pass ([`avx512::chunk_panels`]), and more when the
    /// positions alone leave `threads` too few units (a 7x7 map is one
    /// piece of rows).
    fn panel_pieces(&self, threads: usize) -> usize {
        let fit = self.panels().div_ceil(avx512::chunk_panels(self.k()));
        let others = self.n * self.row_pieces();
        fit.max((2 * threads).div_ceil(others.max(1)))
            .min(self.panels())
            .max(1)
    }

    /// The runs of piece `u` of image `img`: a flat plane's positions, or
    /// output rows (their inputs `sh` padded rows apart).
    fn runs(&self, img: usize, u: usize) -> impl Iterator<Item = Run> + '_ {
        let per = self.rows_per_unit();
        let (flat, rows) = match self.flat() {
            true => (Some(u * per), 0..0),
            false => (None, u * per..((u + 1) * per).min(self.geo.oh)),
        };
        let whole = self.geo.oh * self.geo.ow;
        flat.map(|o0| Run {
            img,
            o0,
            count: per.min(whole - o0),
            i0: o0,
            step: 1,
        })
        .into_iter()
        .chain(rows.map(move |oy| Run {
            img,
            o0: oy * self.geo.ow,
            count: self.geo.ow,
            i0: oy * self.geo.sh * self.wp,
            step: self.geo.sw,
        }))
    }
}

/// Where a run's positions lie: output positions `o0..o0 + count` of
/// image `img`, their inputs (first tap) from padded position `i0` on,
/// `step` positions apart.
#[derive(Clone, Copy)]
struct Run {
    img: usize,
    o0: usize,
    count: usize,
    i0: usize,
    step: usize,
}

/// `x` (`[n, c1, h, w, 8]`) with its padding made zeros, into `buf`
/// (this thread's [`PADDED`]): `[n, c1, hp, wp, 8]`, planes in parallel,
/// each written once (the padding zeroed, the rest copied).
fn pad_input(d: &Dims, x: *const f32, buf: &mut Vec<f32>, par: &Par) -> Result<(), String> {
    let plane = d.hp * d.wp * C0;
    let len = d.n * d.c1 * plane;
    if buf.len() < len {
        *buf = vec![0f32; len];
    }
    let dst = Shared(buf.as_mut_ptr());
    let src = Shared(x);
    let [t, l, b, r] = d.pads;
    let row = d.geo.w * C0;
    par.run(d.n * d.c1, len > 1 << 16, &|pl| {
        // SAFETY: plane `pl` of both tensors (`buf` holds `len` floats):
        // padded rows `0..t` and `t + h..hp` zeroed, input row `y` to
        // padded row `y + t` between `l` and `r` columns of zeros; this
        // unit alone writes plane `pl`.
        unsafe {
            let to = dst.p().add(pl * plane);
            std::ptr::write_bytes(to, 0, t * d.wp * C0);
            std::ptr::write_bytes(to.add((t + d.geo.h) * d.wp * C0), 0, b * d.wp * C0);
            for y in 0..d.geo.h {
                let at = to.add((y + t) * d.wp * C0);
                std::ptr::write_bytes(at, 0, l * C0);
                std::ptr::copy_nonoverlapping(
                    src.p().add((pl * d.geo.h + y) * row),
                    at.add(l * C0),
                    row,
                );
                std::ptr::write_bytes(at.add(l * C0 + row), 0, r * C0);
            }
        }
        Ok(())
    })
}

impl Conv {
    /// Pack the constant filter `w` for [`Conv::run_blocks`] (when it fits
    /// in `budget` bytes and is not packed yet); returns the bytes
    /// allocated.
    pub fn prepare_blocks(&self, w: &Slot, budget: usize) -> usize {
        let [oc, c, kh, kw] = w.shape[..] else {
            return 0;
        };
        let bytes = packed_bytes([oc, c, kh, kw]);
        if bytes > budget || w.ptr.is_null() || self.blocks.find(w).is_some() {
            return 0;
        }
        let a = pack(F32In::new(w).slice(), [oc, c, kh, kw]);
        self.blocks.insert(w, a, bytes)
    }

    /// The convolution on blocks (`self.reads_blocks`): `ins[0]` and the
    /// residual NC1HWC0 with C0 8, the filter OIHW, the result NC1HWC0.
    /// Needs AVX-512 (the loader only chooses it there).
    pub(super) fn run_blocks(&self, ins: &[&Slot], out: &Slot, par: &Par) -> Result<(), String> {
        if !super::sgemm_packed::wide() {
            return Err("conv2d on blocks: needs AVX-512".into());
        }
        let (x, w) = (ins[0], ins[1]);
        let d = Dims::of(self, &x.shape, &w.shape, &out.shape)?;
        let xin = F32In::new(x);
        let bias = ins
            .get(2)
            .filter(|_| self.residual != Some(2))
            .map(|b| F32In::new(b));
        if bias.as_ref().is_some_and(|b| b.slice().len() < d.oc) {
            return Err(format!(
                "conv2d on blocks: bias shorter than {} channels",
                d.oc
            ));
        }
        let residual = match self.residual.map(|i| ins.get(i)) {
            None => None,
            Some(Some(r)) if r.shape == out.shape => Some(F32In::new(r)),
            Some(r) => {
                return Err(format!(
                    "conv2d on blocks: residual {:?} is not of the result's shape {:?}",
                    r.map(|r| &r.shape),
                    out.shape
                ))
            }
        };
        let local;
        let packed = match self.blocks.find(w) {
            Some(p) => p,
            None => {
                let dims = [d.oc, w.shape[1], d.geo.kh, d.geo.kw];
                local = std::sync::Arc::new(pack(F32In::new(w).slice(), dims));
                local
            }
        };
        let mut padded = match d.padded() {
            true => PADDED.with(|b| b.take()),
            false => vec![],
        };
        if d.padded() {
            pad_input(&d, xin.ptr(), &mut padded, par)?;
        }
        let mut o = F32Out::new(out);
        let ptrs = BlockPtrs {
            x: Shared(match d.padded() {
                true => padded.as_ptr(),
                false => xin.ptr(),
            }),
            a: Shared(packed.panels_ptr()),
            o: Shared(o.ptr()),
            b: bias.as_ref().map(|b| Shared(b.ptr())),
            r: residual.as_ref().map(|r| Shared(r.ptr())),
            act: Act::of(&self.act, self.alpha),
            in_place: residual.as_ref().is_some_and(|r| {
                let bytes = out.numel() * std::mem::size_of::<f32>();
                let (r, o) = (r.ptr() as usize, o.ptr() as usize);
                r < o.saturating_add(bytes) && o < r.saturating_add(bytes)
            }),
        };
        let taps = d.taps();
        let pieces = d.row_pieces();
        let panel_pieces = d.panel_pieces(par.threads());
        let panels = d.panels();
        let per_piece = panels.div_ceil(panel_pieces).next_multiple_of(2);
        let macs = d.n * d.oc * d.geo.oh * d.geo.ow * d.k();
        let units = d.n * pieces * panel_pieces;
        let r = par.run(units, macs > super::conv::PARALLEL_MACS, &|t| {
            let (img, u, pp) = (
                t / (pieces * panel_pieces),
                t / panel_pieces % pieces,
                t % panel_pieces,
            );
            let q0 = (pp * per_piece).min(panels);
            let q1 = (q0 + per_piece).min(panels);
            let runs: Vec<Run> = d.runs(img, u).collect();
            // SAFETY: `Dims::of` checked every shape against the others
            // (the taps of every output position lie inside the padded
            // input); unit `t` writes the output channels of panels
            // `q0..q1` at its runs' positions of image `img` only, runs no
            // longer than the first; the CPU has AVX-512F (checked above).
            unsafe { avx512::unit(&d, &ptrs, &taps, &runs, q0..q1) };
            for run in &runs {
                self.finish_run(&d, &ptrs, run, q0..q1);
            }
            Ok(())
        });
        if d.padded() {
            PADDED.with(|b| b.replace(padded));
        }
        r?;
        o.finish();
        Ok(())
    }

    /// An activation the kernel does not apply in registers (sigmoid, tanh,
    /// gelu, silu, hard_swish), over the run's rows of each output block
    /// while they are in cache; the padding lanes made zero again.
    fn finish_run(&self, d: &Dims, ptrs: &BlockPtrs, run: &Run, panels: std::ops::Range<usize>) {
        if ptrs.act != Act::Later {
            return;
        }
        let blocks = panels.start * PANEL / C0..(panels.end * PANEL / C0).min(d.oc1);
        for ob in blocks {
            let at = ((run.img * d.oc1 + ob) * d.geo.oh * d.geo.ow + run.o0) * C0;
            // SAFETY: the run's positions of block `ob`, written by this
            // unit only (`run_blocks`).
            let rows =
                unsafe { std::slice::from_raw_parts_mut(ptrs.o.p().add(at), run.count * C0) };
            super::activation(&self.act, self.alpha, rows);
            let valid = d.oc - ob * C0;
            if valid < C0 {
                rows.chunks_exact_mut(C0).for_each(|p| p[valid..].fill(0.0));
            }
        }
    }
}

/// The activation [`avx512`]'s epilogue applies in registers (others:
/// [`Conv::finish_run`]), resolved once per run rather than by name per
/// vector.
#[derive(Clone, Copy, PartialEq)]
enum Act {
    None,
    Relu,
    Relu6,
    LeakyRelu(f32),
    /// Applied after the sums are stored.
    Later,
}

impl Act {
    fn of(name: &str, alpha: f32) -> Act {
        match name {
            "none" => Act::None,
            "relu" => Act::Relu,
            "relu6" => Act::Relu6,
            "leaky_relu" => Act::LeakyRelu(alpha),
            _ => Act::Later,
        }
    }
}

/// The tensors of a run.
struct BlockPtrs {
    x: Shared<*const f32>,
    a: Shared<*const f32>,
    o: Shared<*mut f32>,
    b: Option<Shared<*const f32>>,
    r: Option<Shared<*const f32>>,
    act: Act,
    /// The result is stored where the residual is (the memory plan may
    /// give a sum the place of one of its terms): no partial sums may be
    /// stored before the residual is read.
    in_place: bool,
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Act, BlockPtrs, Dims, Run, C0, MAX_COLS, PANEL};
    use std::arch::x86_64::*;
    use std::ops::Range;

    /// Panels of the filter that fill 7/16 of the L2 (the rest holds the
    /// unit's input), at least the 4 a block takes.
    pub fn chunk_panels(k: usize) -> usize {
        (super::super::cache::l2_bytes() * 7 / 16 / (PANEL * 4 * k.max(1))).max(4)
    }

    /// Input blocks (a tap's 8 channels) per slice of `k`: a group's slice of
    /// the filter (2 panels: 16 KiB) and a block's slice of the input (14
    /// positions: 7 KiB) stay in L1 while the sums pass, as onnxruntime's
    /// NCHWc kernels take 128 input channels at a time. Measured on 7x7
    /// maps (512 -> 2048 1x1, 1 thread): unsliced, each block read its
    /// 2048-long slice of the filter and the input from L2.
    const SLICE_BLOCKS: usize = 16;

    /// Pairs (of 8 steps of `k`) that [`Block::product`] prefetches the
    /// filter ahead: its panels stream from L2 (a 2048-long `k` is 128 KiB
    /// a panel), and the loads at the top of the loop stalled.
    const PREFETCH_PAIRS: usize = 2;

    use super::super::sgemm_packed::panels_at_once;

    /// The unit's runs of positions by the filter's `panels`: a slice of
    /// `k` at a time (sums stored and loaded again between slices, unless
    /// the result is where the residual is), each group of panels through
    /// every block of positions, so that the group's slice of the filter
    /// stays in L1.
    ///
    /// # Safety
    /// As `Conv::run_blocks`'s call; every run is as long as the first or
    /// shorter.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn unit(
        d: &Dims,
        p: &BlockPtrs,
        taps: &[usize],
        runs: &[Run],
        panels: Range<usize>,
    ) {
        let Some(first) = runs.first() else { return };
        // Blocks of at most 14 positions, as even as they go.
        let per = first.count.div_ceil(first.count.div_ceil(MAX_COLS).max(1));
        let g = panels_at_once(per);
        let pairs = taps.len() * d.c1;
        let slice = match p.in_place {
            true => pairs,
            false => SLICE_BLOCKS,
        };
        let count = panels.len();
        let take = count.div_ceil(count.div_ceil(g).max(1));
        let mut k0 = 0;
        while k0 < pairs {
            let k1 = (k0 + slice).min(pairs);
            let mut q0 = panels.start;
            while q0 < panels.end {
                let q1 = (q0 + take).min(panels.end);
                for run in runs {
                    let mut j = 0;
                    while j < run.count {
                        let nb = per.min(run.count - j);
                        let b = Block {
                            d,
                            p,
                            taps,
                            run,
                            j,
                            pairs: k0..k1,
                            first: k0 == 0,
                            last: k1 == pairs,
                        };
                        match run.step {
                            1 => b.width::<1>(nb, q0, q1 - q0),
                            _ => b.width::<2>(nb, q0, q1 - q0),
                        }
                        j += nb;
                    }
                }
                q0 = q1;
            }
            k0 = k1;
        }
    }

    /// A block of positions of a run, over a slice of `k`.
    struct Block<'a> {
        d: &'a Dims,
        p: &'a BlockPtrs,
        /// Offsets of the filter's taps ([`super::Dims::taps`]).
        taps: &'a [usize],
        run: &'a Run,
        /// Its first position within the run.
        j: usize,
        /// The slice: (tap, input block) pairs, tap-major.
        pairs: Range<usize>,
        /// The first slice (the sums start at zero) and the last (the
        /// epilogue follows).
        first: bool,
        last: bool,
    }

    impl Block<'_> {
        /// [`Block::sums`] for `nb` positions `S` input positions apart and
        /// `g` panels from `q0`.
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn width<const S: usize>(&self, nb: usize, q0: usize, g: usize) {
            match nb {
                1 => self.panels::<1, S>(q0, g),
                2 => self.panels::<2, S>(q0, g),
                3 => self.panels::<3, S>(q0, g),
                4 => self.panels::<4, S>(q0, g),
                5 => self.panels::<5, S>(q0, g),
                6 => self.panels::<6, S>(q0, g),
                7 => self.panels::<7, S>(q0, g),
                8 => self.panels::<8, S>(q0, g),
                9 => self.panels::<9, S>(q0, g),
                10 => self.panels::<10, S>(q0, g),
                11 => self.panels::<11, S>(q0, g),
                12 => self.panels::<12, S>(q0, g),
                13 => self.panels::<13, S>(q0, g),
                _ => self.panels::<14, S>(q0, g),
            }
        }

        /// `g` panels (at most what [`panels_at_once`] allows for `NB`).
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn panels<const NB: usize, const S: usize>(&self, q0: usize, g: usize) {
            match g {
                1 => self.sums::<NB, 1, S>(q0),
                2 => self.sums::<NB, 2, S>(q0),
                3 if NB <= 8 => self.sums::<NB, 3, S>(q0),
                4 if NB <= 6 => self.sums::<NB, 4, S>(q0),
                // More panels than fit the registers with `NB` positions.
                _ => {
                    let half = g / 2;
                    self.panels::<NB, S>(q0, half);
                    self.panels::<NB, S>(q0 + half, g - half);
                }
            }
        }

        /// Panels `q0..q0 + G` by the block's `NB` positions over the
        /// slice ([`Block::product`]), the sums started from zero or from
        /// what the slice before stored, and stored.
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn sums<const NB: usize, const G: usize, const S: usize>(&self, q0: usize) {
            let mut acc = [[_mm512_setzero_ps(); NB]; G];
            if !self.first {
                for (q, sums) in acc.iter_mut().enumerate() {
                    for (j, s) in sums.iter_mut().enumerate() {
                        *s = self.load(q0 + q, j);
                    }
                }
            }
            self.product::<NB, G, S>(q0, &mut acc);
            for (q, sums) in acc.iter().enumerate() {
                for (j, &s) in sums.iter().enumerate() {
                    self.store(q0 + q, j, s);
                }
            }
        }

        /// `acc += ` panels `q0..q0 + G` times the block's `NB` positions
        /// (their inputs `S` positions apart: constant offsets) over the
        /// slice: per input channel, `G` loads of the filter and `NB`
        /// broadcasts of the input for `G * NB` multiply-adds. A function of
        /// its own, the sums in registers for the whole loop (inlined with
        /// the loads and stores around it, two of 26 sums went through the
        /// stack at every step: 2x slower).
        #[inline(never)]
        #[target_feature(enable = "avx512f")]
        unsafe fn product<const NB: usize, const G: usize, const S: usize>(
            &self,
            q0: usize,
            sums_out: &mut [[__m512; NB]; G],
        ) {
            let d = self.d;
            let pstride = PANEL * d.k();
            let a = self.p.a.p().add(q0 * pstride);
            let plane = d.hp * d.wp * C0;
            let first = (self.run.i0 + self.j * self.run.step) * C0;
            let x = self.p.x.p().add(self.run.img * d.c1 * plane + first);
            let mut acc = *sums_out;
            // (tap, input block) of the slice's first pair, then counted on
            // (no division per pair: its latency held up the loads).
            let (mut t, mut k1) = (self.pairs.start / d.c1, self.pairs.start % d.c1);
            for pair in self.pairs.clone() {
                let xb = x.add(*self.taps.get_unchecked(t) + k1 * plane);
                k1 += 1;
                if k1 == d.c1 {
                    (t, k1) = (t + 1, 0);
                }
                let ak = a.add(pair * C0 * PANEL);
                for k0 in 0..C0 {
                    // The panels' lines PREFETCH_PAIRS pairs on, into L1 (past
                    // a panel's end the address is only a hint, never read).
                    for q in 0..G {
                        let ahead =
                            ak.wrapping_add(q * pstride + PANEL * (k0 + PREFETCH_PAIRS * C0));
                        _mm_prefetch::<_MM_HINT_T0>(ahead.cast());
                    }
                    let av: [__m512; G] =
                        std::array::from_fn(|q| _mm512_loadu_ps(ak.add(q * pstride + PANEL * k0)));
                    for j in 0..NB {
                        let bv = _mm512_set1_ps(*xb.add(j * S * C0 + k0));
                        for (sums, &v) in acc.iter_mut().zip(&av) {
                            sums[j] = _mm512_fmadd_ps(v, bv, sums[j]);
                        }
                    }
                }
            }
            *sums_out = acc;
        }

        /// Where panel `q`'s sums at the block's position `j` go: the
        /// offsets of its two output blocks, its real channels (at most
        /// 16) and whether the second block exists.
        #[inline]
        fn place(&self, q: usize, j: usize) -> (usize, usize, usize, bool) {
            let d = self.d;
            let valid = (d.oc - q * PANEL).min(PANEL);
            let plane = d.geo.oh * d.geo.ow;
            let pos = self.run.o0 + self.j + j;
            // Output blocks `2q` and `2q + 1` of the image, at `pos`.
            let lo = ((self.run.img * d.oc1 + 2 * q) * plane + pos) * C0;
            (lo, lo + plane * C0, valid, valid > C0)
        }

        /// The partial sums an earlier slice stored.
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn load(&self, q: usize, j: usize) -> __m512 {
            let (lo, hi, _, two) = self.place(q, j);
            halves(self.p.o.p(), lo, hi, two)
        }

        /// The sums of panel `q` at the block's position `j`, stored as the
        /// halves of two output blocks: after the last slice with bias,
        /// residual, the activation unless [`Act::Later`] and the padding
        /// channels zero; before it as they are.
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn store(&self, q: usize, j: usize, sums: __m512) {
            let (lo, hi, valid, two) = self.place(q, j);
            let lanes: __mmask16 = ((1u32 << valid) - 1) as __mmask16;
            let mut v = sums;
            if self.last {
                if let Some(b) = &self.p.b {
                    v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(lanes, b.p().add(q * PANEL)));
                }
                if let Some(r) = &self.p.r {
                    v = _mm512_add_ps(v, halves(r.p(), lo, hi, two));
                }
                v = activate(self.p.act, v);
                v = _mm512_maskz_mov_ps(lanes, v);
            }
            let o = self.p.o.p();
            _mm256_storeu_ps(o.add(lo), _mm512_castps512_ps256(v));
            if two {
                // The upper half, by AVX-512F's 64-bit lane extract (the
                // 32-bit one is AVX-512DQ).
                let upper = _mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v));
                _mm256_storeu_ps(o.add(hi), _mm256_castpd_ps(upper));
            }
        }
    }

    /// The 8 floats at `lo` and (when `two`, else zeros) at `hi` as one
    /// vector.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn halves(base: *const f32, lo: usize, hi: usize, two: bool) -> __m512 {
        let l = _mm256_loadu_ps(base.add(lo));
        let h = match two {
            true => _mm256_loadu_ps(base.add(hi)),
            false => _mm256_setzero_ps(),
        };
        _mm512_castpd_ps(_mm512_insertf64x4::<1>(
            _mm512_castps_pd(_mm512_castps256_ps512(l)),
            _mm256_castps_pd(h),
        ))
    }

    /// The activation, as the plain epilogue computes it (`ew::relu`: NaN
    /// stays NaN, -0 becomes 0; relu6 as a clamp; leaky_relu as `v >= 0 ?
    /// v : alpha * v`).
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn activate(act: Act, v: __m512) -> __m512 {
        let zero = _mm512_setzero_ps();
        match act {
            Act::Relu => {
                let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
                _mm512_mask_mov_ps(_mm512_max_ps(v, zero), nan, v)
            }
            // `max(0, v)` returns `v` when either is NaN or both are zeros.
            Act::Relu6 => _mm512_min_ps(_mm512_set1_ps(6.0), _mm512_max_ps(zero, v)),
            Act::LeakyRelu(alpha) => {
                let neg = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(v, zero);
                _mm512_mask_mul_ps(v, neg, v, _mm512_set1_ps(alpha))
            }
            Act::None | Act::Later => v,
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod avx512 {
    use super::{BlockPtrs, Dims, Run};

    pub fn chunk_panels(_: usize) -> usize {
        1
    }

    /// Never called: `run_blocks` refuses without AVX-512.
    pub unsafe fn unit(_: &Dims, _: &BlockPtrs, _: &[usize], _: &[Run], _: std::ops::Range<usize>) {
    }
}
