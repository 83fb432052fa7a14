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
#[cfg(target_arch = "x86_64")]
pub(super) use super::tiny_planes::{fits as applies, Taps as Tables};

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
    debug_assert_eq!(tables.plane, g.h * g.w);
    let act = epi.map_or(LaneAct::None, |e| e.act);
    let bias = epi.and_then(|e| e.bias);
    // Four channels side by side (their chains of sums overlap; one alone
    // waits on each add), then one at a time.
    let mut ch = 0;
    while ch + 4 <= cnt {
        channels::<4>(tables, act, x, wt, o, bias, ch);
        ch += 4;
    }
    while ch < cnt {
        channels::<1>(tables, act, x, wt, o, bias, ch);
        ch += 1;
    }
}

/// Channels `ch..ch + N` of [`block`].
///
/// # Safety
/// As [`block`], with `ch + N <= cnt`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn channels<const N: usize>(
    t: &Tables,
    act: LaneAct,
    x: *const f32,
    wt: *const f32,
    o: *mut f32,
    bias: Option<*const f32>,
    ch: usize,
) {
    use std::arch::x86_64::*;
    let zero = _mm512_setzero_ps();
    // SAFETY: channel `ch + i`'s plane.
    let planes: [(__m512, __m512); N] =
        std::array::from_fn(|i| unsafe { t.load(x.add((ch + i) * t.plane), zero) });
    let mut acc = [zero; N];
    for k in 0..t.taps {
        let (at, reads) = t.tap(k);
        for (i, (a, &(lo, hi))) in acc.iter_mut().zip(&planes).enumerate() {
            // Lanes whose tap falls in the padding read +0.
            let v = _mm512_maskz_permutex2var_ps(reads, lo, at, hi);
            // SAFETY: tap `k` of channel `ch + i`'s filter.
            let w = unsafe { *wt.add((ch + i) * t.taps + k) };
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
        unsafe { _mm512_mask_storeu_ps(o.add((ch + i) * t.npix), t.out_lanes(), activate(act, a)) };
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::super::conv::Geo;
    use super::super::depthwise_lanes::{self, testing};
    use super::{applies, block, Tables};

    /// The tiny-plane kernel gives the lanes kernel's bits: 2x2 and 4x4
    /// maps, 3x3 / 5x5 / 1x3 filters, strides, dilations, asymmetric pads,
    /// planes under the filter's reach, with and without the bias and
    /// activation (`testing::check_against_lanes`).
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
            let g = Geo {
                h,
                w,
                kh,
                kw,
                oh: (h + p[0] + p[2] - dh * (kh - 1) - 1) / sh + 1,
                ow: (w + p[1] + p[3] - dw * (kw - 1) - 1) / sw + 1,
                sh,
                sw,
                pt: p[0],
                pl: p[1],
                dh,
                dw,
            };
            assert!(applies(&g) && depthwise_lanes::applies(&g), "case {i}");
            let tables = Tables::new(&g);
            // SAFETY: AVX-512F (checked); both kernels apply to `g`, and
            // `tables` are its.
            unsafe {
                testing::check_against_lanes(&g, i, &|g, x, wt, o, cnt, epi| {
                    block(g, &tables, x, wt, o, cnt, epi)
                })
            };
        }
    }
}
