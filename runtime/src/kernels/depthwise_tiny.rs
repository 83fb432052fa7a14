//! Depthwise convolution of tiny planes — input planes of up to 32 pixels,
//! output planes of up to 16: the 2x2 and 4x4 maps of a small image's last
//! stages (MNASNet and MobileNet at 64x64: 576 channels of 2x2). One
//! channel at a time, its whole input plane in two vectors and its outputs
//! in the lanes of one: each tap's inputs are a permute of the plane (a
//! table per tap, worked out once per convolution; lanes whose tap falls in
//! the padding are zeroed), times the tap's weight; four channels' chains
//! of sums side by side. The lanes kernel
//! (`depthwise_lanes.rs`) interleaved and de-interleaved 16 channels' planes
//! around a few multiply-adds a pixel, most of its time on such maps (576 x
//! 2x2, 3x3 filter: 4.7 µs a layer).
//!
//! Bit for bit the lanes kernel (a unit test below), which matches the
//! plane-wise kernel: each output sums, from
//! +0, a product then a sum per tap in tap order, a padded tap's input read
//! as +0; then the bias and the activation ([`activate`]).

#[cfg(target_arch = "x86_64")]
use super::conv::Geo;
#[cfg(target_arch = "x86_64")]
use super::depthwise_lanes::{activate, LaneAct, LaneEpilogue};

/// Input pixels a plane may have here (two vectors).
const MAX_INPUT: usize = 32;
/// Output pixels a plane may have here (one vector).
const MAX_OUTPUT: usize = 16;
/// Taps a filter may have here (the tables: 64 bytes and a mask a tap).
const MAX_TAPS: usize = 64;

/// Whether this kernel takes a depthwise convolution of geometry `g`
/// (the caller checked AVX-512F: `depthwise_lanes::applies`).
#[cfg(target_arch = "x86_64")]
pub(super) fn applies(g: &Geo) -> bool {
    let out = g.oh * g.ow;
    g.h * g.w <= MAX_INPUT && out > 0 && out <= MAX_OUTPUT && g.kh * g.kw <= MAX_TAPS
}

/// Which input pixel each output lane of each tap reads, and the lanes
/// whose tap reads one (the rest fall in the padding): worked out once a
/// convolution, not per block of channels (a 5x5 filter's 400 lanes).
#[cfg(target_arch = "x86_64")]
pub(super) struct Tables {
    index: Vec<[i32; MAX_OUTPUT]>,
    reads: Vec<u16>,
}

#[cfg(target_arch = "x86_64")]
impl Tables {
    /// The tables of geometry `g` ([`applies`] holds).
    pub(super) fn new(g: &Geo) -> Tables {
        let (npix, taps) = (g.oh * g.ow, g.kh * g.kw);
        let mut index = vec![[0i32; MAX_OUTPUT]; taps];
        let mut reads = vec![0u16; taps];
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let t = ki * g.kw + kj;
                for (p, lane) in index[t].iter_mut().enumerate().take(npix) {
                    let (oy, ox) = (p / g.ow, p % g.ow);
                    let y = (oy * g.sh + ki * g.dh)
                        .checked_sub(g.pt)
                        .filter(|&y| y < g.h);
                    let c = (ox * g.sw + kj * g.dw)
                        .checked_sub(g.pl)
                        .filter(|&c| c < g.w);
                    if let (Some(y), Some(c)) = (y, c) {
                        // Below MAX_INPUT: fits an i32.
                        *lane = (y * g.w + c) as i32;
                        reads[t] |= 1 << p;
                    }
                }
            }
        }
        Tables { index, reads }
    }
}

/// Channels `0..cnt` from `x` (their `h x w` planes, one after another),
/// filters `wt` (`kh x kw` each), into `o` (their `oh x ow` planes); with
/// `epi`, its bias (`cnt` floats) and activation too.
///
/// # Safety
/// AVX-512F, [`applies`] holds for `g` and `tables` are its; the pointers
/// hold `cnt` planes / filters as said; `o` does not overlap `x` or `wt`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn block(
    g: &Geo,
    tables: &Tables,
    x: *const f32,
    wt: *const f32,
    o: *mut f32,
    cnt: usize,
    epi: Option<&LaneEpilogue>,
) {
    use std::arch::x86_64::*;
    let (plane, npix, taps) = (g.h * g.w, g.oh * g.ow, g.kh * g.kw);
    let lanes = |n: usize| -> __mmask16 {
        match n >= 16 {
            true => !0,
            false => (1u16 << n) - 1,
        }
    };
    let (lo_lanes, hi_lanes) = (lanes(plane), lanes(plane.saturating_sub(16)));
    let out_lanes = lanes(npix);
    let act = epi.map_or(LaneAct::None, |e| e.act);
    let bias = epi.and_then(|e| e.bias);
    // `Tables::new` made `taps` of each.
    let taps = taps.min(tables.index.len()).min(tables.reads.len());
    let (index, reads) = (tables.index.as_ptr(), tables.reads.as_ptr());
    let shape = Shape {
        plane,
        npix,
        taps,
        lo_lanes,
        hi_lanes,
        out_lanes,
        index,
        reads,
        act,
    };
    // Four channels side by side (their chains of sums overlap; one alone
    // waits on each add), then one at a time.
    let mut ch = 0;
    while ch + 4 <= cnt {
        channels::<4>(&shape, x, wt, o, bias, ch);
        ch += 4;
    }
    while ch < cnt {
        channels::<1>(&shape, x, wt, o, bias, ch);
        ch += 1;
    }
}

/// What [`channels`] needs of a [`block`].
#[cfg(target_arch = "x86_64")]
struct Shape {
    plane: usize,
    npix: usize,
    taps: usize,
    lo_lanes: std::arch::x86_64::__mmask16,
    hi_lanes: std::arch::x86_64::__mmask16,
    out_lanes: std::arch::x86_64::__mmask16,
    index: *const [i32; MAX_OUTPUT],
    reads: *const u16,
    act: LaneAct,
}

/// Channels `ch..ch + N` of [`block`].
///
/// # Safety
/// As [`block`], with `ch + N <= cnt`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn channels<const N: usize>(
    s: &Shape,
    x: *const f32,
    wt: *const f32,
    o: *mut f32,
    bias: Option<*const f32>,
    ch: usize,
) {
    use std::arch::x86_64::*;
    // SAFETY: each channel's `plane` floats only (masked); the second
    // vector's address is only formed when no lane of it is read.
    let planes: [(__m512, __m512); N] = std::array::from_fn(|i| unsafe {
        let xp = x.add((ch + i) * s.plane);
        (
            _mm512_maskz_loadu_ps(s.lo_lanes, xp),
            _mm512_maskz_loadu_ps(s.hi_lanes, xp.wrapping_add(16)),
        )
    });
    let mut acc = [_mm512_setzero_ps(); N];
    for t in 0..s.taps {
        // SAFETY: `t < taps`, inside both tables and every filter.
        let (at, reads) = unsafe { (_mm512_loadu_si512(s.index.add(t).cast()), *s.reads.add(t)) };
        for (i, (a, &(lo, hi))) in acc.iter_mut().zip(&planes).enumerate() {
            let v = _mm512_maskz_permutex2var_ps(reads, lo, at, hi);
            // SAFETY: tap `t` of channel `ch + i`'s filter.
            let w = unsafe { *wt.add((ch + i) * s.taps + t) };
            // A product, then a sum, as the other depthwise kernels.
            *a = _mm512_add_ps(*a, _mm512_mul_ps(v, _mm512_set1_ps(w)));
        }
    }
    for (i, mut a) in acc.into_iter().enumerate() {
        if let Some(b) = bias {
            // SAFETY: the bias holds the block's `cnt` floats.
            a = _mm512_add_ps(a, _mm512_set1_ps(unsafe { *b.add(ch + i) }));
        }
        // SAFETY: channel `ch + i`'s `npix` outputs (masked).
        unsafe { _mm512_mask_storeu_ps(o.add((ch + i) * s.npix), s.out_lanes, activate(s.act, a)) };
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::super::conv::Geo;
    use super::super::depthwise_lanes::{self, LaneAct, LaneEpilogue};
    use super::{applies, block, Tables};

    /// Values with signed zeros, ties and a NaN, seeded.
    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|i| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                match (s >> 33) % 23 {
                    0 => -0.0,
                    1 => 0.0,
                    2 if i % 97 == 5 => f32::NAN,
                    r => (r as f32 - 11.0) * 0.37,
                }
            })
            .collect()
    }

    /// The tiny-plane kernel gives the lanes kernel's bits: 2x2 and 4x4
    /// maps, 3x3 / 5x5 / 1x3 filters, strides, dilations, asymmetric pads,
    /// planes under the filter's reach, 16 and 7 channels, with and
    /// without the bias and activation.
    #[test]
    fn tiny_planes_match_the_lanes_kernel_bit_for_bit() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            return;
        }
        // (h, w, kh, kw, sh, sw, dh, dw, [pt, pl, pb, pr])
        let cases = [
            (2, 2, 3, 3, 1, 1, 1, 1, [1, 1, 1, 1]),
            (2, 2, 5, 5, 1, 1, 1, 1, [2, 2, 2, 2]),
            (4, 4, 5, 5, 1, 1, 1, 1, [2, 2, 2, 2]),
            (4, 4, 3, 3, 2, 2, 1, 1, [1, 1, 1, 1]),
            (4, 7, 1, 3, 1, 2, 1, 2, [0, 2, 0, 1]),
            (5, 6, 3, 3, 2, 1, 2, 1, [2, 0, 1, 1]),
            (1, 1, 3, 3, 1, 1, 1, 1, [1, 1, 1, 1]),
            (3, 3, 3, 3, 1, 1, 1, 1, [0, 0, 0, 0]),
        ];
        for (i, (h, w, kh, kw, sh, sw, dh, dw, p)) in cases.into_iter().enumerate() {
            let oh = (h + p[0] + p[2] - dh * (kh - 1) - 1) / sh + 1;
            let ow = (w + p[1] + p[3] - dw * (kw - 1) - 1) / sw + 1;
            let g = Geo {
                h,
                w,
                kh,
                kw,
                oh,
                ow,
                sh,
                sw,
                pt: p[0],
                pl: p[1],
                dh,
                dw,
            };
            assert!(applies(&g) && depthwise_lanes::applies(&g), "case {i}");
            let tables = Tables::new(&g);
            for cnt in [16, 7] {
                let x = values(cnt * h * w, 3 + i as u64);
                let wt = values(cnt * kh * kw, 11 + i as u64);
                let bias = values(cnt, 17 + i as u64);
                for act in [None, Some(LaneAct::Relu), Some(LaneAct::Silu)] {
                    let epi = act.map(|act| LaneEpilogue {
                        bias: Some(bias.as_ptr()),
                        act,
                    });
                    let (mut want, mut got) =
                        (vec![1.5f32; cnt * oh * ow], vec![2.5f32; cnt * oh * ow]);
                    let mut scratch = vec![];
                    // SAFETY: AVX-512F (checked), `applies` holds for `g`,
                    // the vectors hold `cnt` planes, filters, biases and
                    // outputs.
                    unsafe {
                        depthwise_lanes::block(
                            &g,
                            x.as_ptr(),
                            wt.as_ptr(),
                            want.as_mut_ptr(),
                            cnt,
                            &mut scratch,
                            epi.as_ref(),
                        );
                        block(
                            &g,
                            &tables,
                            x.as_ptr(),
                            wt.as_ptr(),
                            got.as_mut_ptr(),
                            cnt,
                            epi.as_ref(),
                        );
                    }
                    for (j, (a, b)) in got.iter().zip(&want).enumerate() {
                        assert!(
                            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                            "case {i}, {cnt} channels, element {j}: {a:?} vs the lanes kernel's {b:?}"
                        );
                    }
                }
            }
        }
    }
}
