//! Depthwise 3x3 convolution with stride 2, row by row in the channels'
//! own planes: the downsampling layers of MobileNetV2, MNASNet and
//! EfficientNet (96 channels of 32x32 -> 16x16 at a 64x64 input).
//!
//! The lanes kernel (`depthwise_lanes.rs`) moves 16 channels' padded input
//! planes into pixel-major order and the outputs back, one transpose of
//! the whole input for a quarter as many outputs at stride 2; larger maps
//! went plane by plane, each plane first split into its stride phases.
//! `ge-run` p50 of that one layer (a one-op `.air`, its input and output
//! copies included), 1 thread, 9 interleaved rounds: 41.8 -> 24.2 µs; 32
//! channels of 64x64 -> 32x32, plane by plane before: 64.7 -> 31.8 µs
//! (onnxruntime's NCHWc kernel takes 13 µs on MobileNetV2's layer, in its
//! profile). Here each
//! channel's plane is read in place: 16 outputs of a row take the 33 inputs
//! `2 ox - pl + kj` of each of three input rows — two (masked) loads at the
//! row's start and two one element on, whose even and odd lanes
//! (`vpermt2ps`) are the three taps of a filter row; four output rows side
//! by side so their chains of sums overlap, the nine input rows they read
//! each loaded once (the last filter row of one output row is the first of
//! the next); outputs written in place (masked at the row's end).
//!
//! Bit for bit the lanes kernel (a unit test below), which matches the
//! plane-wise kernel: each output sums, from +0, a product then a sum per
//! tap in tap order, a padded tap's input read as +0 (and multiplied, so a
//! non-finite weight gives NaN there as in the others); then the bias and
//! the activation ([`activate`]).

#[cfg(target_arch = "x86_64")]
use super::conv::Geo;
#[cfg(target_arch = "x86_64")]
use super::depthwise_lanes::{activate, LaneAct, LaneEpilogue};

/// Narrowest output row taken here: below it most of a vector's lanes
/// idle, and the lanes kernel (16 channels in the lanes) is as fast or
/// faster (`ge-run` p50 of one layer, 1 thread, 9 interleaved rounds, lanes
/// vs rows: 240 channels into 7x7 21.1 vs 22.6 µs, 192 into 6x6 12.9 vs
/// 14.2; 144 into 8x8 14.7 vs 13.9, 72 into 8x8 10.8 vs 6.9, 64 into 10x10
/// 15.9 vs 8.3, 96 into 16x16 41.1 vs 23.5).
#[cfg(target_arch = "x86_64")]
const MIN_OW: usize = 8;

/// Whether this kernel takes a depthwise convolution of geometry `g`: a
/// 3x3 filter, stride 2, no dilation, top and left padding of at most one
/// (the right and bottom padding follow from `oh`, `ow`), AVX-512F.
#[cfg(target_arch = "x86_64")]
pub(super) fn applies(g: &Geo) -> bool {
    (g.kh, g.kw, g.sh, g.sw, g.dh, g.dw) == (3, 3, 2, 2, 1, 1)
        && g.pt <= 1
        && g.pl <= 1
        && g.ow >= MIN_OW
        && g.oh >= 1
        && std::arch::is_x86_feature_detected!("avx512f")
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) fn applies(_: &super::conv::Geo) -> bool {
    false
}

/// Channels `0..cnt` from `x` (their `h x w` planes, one after another),
/// filters `wt` (3x3 each), into `o` (their `oh x ow` planes); with `epi`,
/// its bias (`cnt` floats) and activation too.
///
/// # Safety
/// AVX-512F and [`applies`] holds for `g`; the pointers hold `cnt` planes /
/// filters as said; `o` does not overlap `x` or `wt`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn block(
    g: &Geo,
    x: *const f32,
    wt: *const f32,
    o: *mut f32,
    cnt: usize,
    epi: Option<&LaneEpilogue>,
) {
    use std::arch::x86_64::*;
    let act = epi.map_or(LaneAct::None, |e| e.act);
    let chunks = g.ow.div_ceil(16);
    for ch in 0..cnt {
        let plane = x.add(ch * g.h * g.w);
        let out = o.add(ch * g.oh * g.ow);
        let mut wv = [_mm512_setzero_ps(); 9];
        for (k, v) in wv.iter_mut().enumerate() {
            *v = _mm512_set1_ps(*wt.add(ch * 9 + k));
        }
        let bias = epi.and_then(|e| e.bias).map(|b| _mm512_set1_ps(*b.add(ch)));
        let ch = Channel {
            g,
            plane,
            wv,
            bias,
            act,
        };
        for c in 0..chunks {
            let cols = Cols::new(g, c * 16);
            let mut oy = 0;
            while oy < g.oh {
                oy += match g.oh - oy {
                    4.. => ch.rows::<4>(&cols, oy, out),
                    2.. => ch.rows::<2>(&cols, oy, out),
                    _ => ch.rows::<1>(&cols, oy, out),
                };
            }
        }
    }
}

/// One channel of [`block`]: its input plane, weights and epilogue.
#[cfg(target_arch = "x86_64")]
struct Channel<'g> {
    g: &'g Geo,
    plane: *const f32,
    /// The nine taps' weights, each in every lane.
    wv: [std::arch::x86_64::__m512; 9],
    bias: Option<std::arch::x86_64::__m512>,
    act: LaneAct,
}

/// Where the loads of an input row start, from [`Cols::start`]: two
/// vectors, and two one element on.
#[cfg(target_arch = "x86_64")]
const LOADS: [isize; 4] = [0, 16, 1, 17];

/// Sixteen output columns `ox0..ox0 + 16` of every row: where their inputs
/// start in an input row and which lanes of the loads lie in it.
#[cfg(target_arch = "x86_64")]
struct Cols {
    ox0: usize,
    /// Input column of lane 0 of the first load: `2 ox0 - pl` (may be -1).
    start: isize,
    /// Lanes inside `0..w` of the loads at `start` plus each of [`LOADS`].
    masks: [std::arch::x86_64::__mmask16; 4],
    /// Output lanes inside the row (`ox < ow`).
    store: std::arch::x86_64::__mmask16,
}

#[cfg(target_arch = "x86_64")]
impl Cols {
    fn new(g: &Geo, ox0: usize) -> Cols {
        let start = 2 * ox0 as isize - g.pl as isize;
        // Lanes `l` with `0 <= s + l < w`: `lo..hi`, both clamped to 0..=16.
        let inside = |s: isize| -> u16 {
            let (lo, hi) = ((-s).clamp(0, 16), (g.w as isize - s).clamp(0, 16));
            let below = |n: isize| -> u32 { (1u32 << n) - 1 };
            (below(hi) & !below(lo)) as u16
        };
        let left = g.ow - ox0;
        Cols {
            ox0,
            start,
            masks: LOADS.map(|d| inside(start + d)),
            store: if left >= 16 { !0 } else { (1u16 << left) - 1 },
        }
    }

    /// The three taps of a filter row for the 16 output columns, from input
    /// row `row`: lane `l` of tap `kj` is input column `start + 2 l + kj`
    /// (+0 outside the row) — the even and odd lanes of 32 columns from
    /// `start`, and the odd ones of 32 from `start + 1`.
    ///
    /// # Safety
    /// AVX-512F; `row` points at an input row of `w` floats.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn taps(&self, row: *const f32) -> [std::arch::x86_64::__m512; 3] {
        use std::arch::x86_64::*;
        // `wrapping_offset`: lane 0 of a load may lie one before the row;
        // the masks keep every lane read inside it (`Cols::masks`). (No
        // closures here: one left out of line runs without AVX-512.)
        let (d, m, at) = (&LOADS, &self.masks, row.wrapping_offset(self.start));
        let a = _mm512_maskz_loadu_ps(m[0], at.wrapping_offset(d[0]));
        let b = _mm512_maskz_loadu_ps(m[1], at.wrapping_offset(d[1]));
        let a1 = _mm512_maskz_loadu_ps(m[2], at.wrapping_offset(d[2]));
        let b1 = _mm512_maskz_loadu_ps(m[3], at.wrapping_offset(d[3]));
        let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        [
            _mm512_permutex2var_ps(a, even, b),
            _mm512_permutex2var_ps(a, odd, b),
            _mm512_permutex2var_ps(a1, odd, b1),
        ]
    }
}

#[cfg(target_arch = "x86_64")]
impl Channel<'_> {
    /// Output rows `oy..oy + R` at the columns of `cols` into `out` (the
    /// channel's output plane). Returns `R`.
    ///
    /// # Safety
    /// As [`block`]'s, `oy + R <= oh`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn rows<const R: usize>(&self, cols: &Cols, oy: usize, out: *mut f32) -> usize {
        use std::arch::x86_64::*;
        let g = self.g;
        let zero = _mm512_setzero_ps();
        let mut acc = [zero; R];
        // Input rows `2 oy - pt + j`, `j` in `0..2R + 1`, in order: row `j`
        // is filter row `j - 2r` of output row `r` (of two output rows when
        // `j` is even), so each row is loaded once and every output row
        // still sums its taps in tap order.
        for j in 0..2 * R + 1 {
            let iy = (2 * oy + j) as isize - g.pt as isize;
            // The row's three taps (+0 in a padding row).
            let t = match (0..g.h as isize).contains(&iy) {
                // SAFETY: row `iy` of the plane, read where `cols` says.
                true => cols.taps(self.plane.add(iy as usize * g.w)),
                false => [zero; 3],
            };
            for (r, a) in acc.iter_mut().enumerate() {
                let Some(ki) = j.checked_sub(2 * r).filter(|&ki| ki < 3) else {
                    continue;
                };
                for (kj, v) in t.iter().enumerate() {
                    // A product, then a sum, as the other depthwise kernels.
                    *a = _mm512_add_ps(*a, _mm512_mul_ps(*v, self.wv[ki * 3 + kj]));
                }
            }
        }
        for (r, mut a) in acc.into_iter().enumerate() {
            if let Some(b) = self.bias {
                a = _mm512_add_ps(a, b);
            }
            // SAFETY: output row `oy + r`, columns `ox0..` (masked to `ow`).
            let at = out.add((oy + r) * g.ow + cols.ox0);
            _mm512_mask_storeu_ps(at, cols.store, activate(self.act, a));
        }
        R
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::super::conv::Geo;
    use super::super::depthwise_lanes::{self, testing};
    use super::{applies, block};

    /// The stride-2 kernel gives the lanes kernel's bits: even and odd
    /// maps, rows of 8, 16 and more than 16 outputs, padding 1 / 0 / only
    /// top-left / only bottom-right, rectangular maps, fewer rows than the
    /// filter, with and without the bias and activation
    /// (`testing::check_against_lanes`).
    #[test]
    fn stride_2_matches_the_lanes_kernel_bit_for_bit() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            return;
        }
        // (h, w, [pt, pl, pb, pr])
        let cases = [
            (32, 32, [1, 1, 1, 1]),
            (33, 33, [1, 1, 1, 1]),
            (32, 32, [0, 0, 1, 1]),
            (31, 31, [0, 0, 0, 0]),
            (24, 40, [1, 1, 1, 1]),
            (9, 25, [1, 0, 0, 1]),
            (40, 56, [1, 1, 0, 0]),
            (4, 26, [1, 1, 1, 1]),
            (3, 27, [0, 0, 0, 0]),
            (16, 16, [1, 1, 1, 1]),
            (15, 17, [0, 0, 0, 0]),
            (2, 16, [1, 1, 0, 0]),
        ];
        for (i, (h, w, p)) in cases.into_iter().enumerate() {
            let g = Geo {
                h,
                w,
                kh: 3,
                kw: 3,
                oh: (h + p[0] + p[2] - 3) / 2 + 1,
                ow: (w + p[1] + p[3] - 3) / 2 + 1,
                sh: 2,
                sw: 2,
                pt: p[0],
                pl: p[1],
                dh: 1,
                dw: 1,
            };
            assert!(applies(&g) && depthwise_lanes::applies(&g), "case {i}");
            // SAFETY: AVX-512F (checked); both kernels apply to `g`.
            unsafe {
                testing::check_against_lanes(&g, i, &|g, x, wt, o, cnt, epi| {
                    block(g, x, wt, o, cnt, epi)
                })
            };
        }
    }
}
