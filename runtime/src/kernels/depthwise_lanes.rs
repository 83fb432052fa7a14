//! Depthwise convolution over small maps with the channels in the vector
//! lanes. The plane-wise kernel (`conv::depthwise`) vectorizes along a
//! channel's padded plane; on the 2x2 to 8x8 maps of a small image's late
//! layers (MNASNet, MobileNetV3, EfficientNet at 64x64) a plane is shorter
//! than a vector and the per-channel work (padding copy, epilogue) is most
//! of the time: MNASNet spent 47 % of its run there. Here 16 channels go
//! together: their padded planes are interleaved (pixel-major, 16 floats a
//! pixel; 16 pixels at a time by a transpose in registers), each output
//! pixel is the sum over the taps of one vector load times the 16 channels'
//! tap weights (up to 8 pixels side by side, so the chains of sums overlap), and
//! the lanes are transposed back into the channels' planes. Needs AVX-512F;
//! elsewhere the plane-wise kernel runs.

use super::conv::Geo;
use super::lanes::padded;
#[cfg(target_arch = "x86_64")]
use super::lanes::{deinterleave, fill_border, interleave, results_len};

/// Largest output plane (pixels) of a 3x3 (or smaller) stride-1 filter
/// taken here. Beyond it a plane fills vectors and the plane-wise kernel,
/// one pass over the plane for all nine taps, is as fast or faster
/// (measured, p50 lanes vs plane-wise: 16x16 7.5 vs 10.2 µs for 48
/// channels, 20x20 equal, 24x24 10.1 vs 8.3 µs for 24 channels).
const MAX_PLANE: usize = 256;

/// Largest output plane of a larger filter or a stride above 1: the
/// plane-wise kernel folds a filter of more than nine taps pass by pass
/// over the plane, and splits a strided plane into phases first, so the
/// lanes are ahead well beyond [`MAX_PLANE`] (5x5 on 14x14 21 vs 60 µs for
/// 120 channels, on 28x28 51 vs 64 µs for 72; 3x3 stride 2 from 56x56 63 vs
/// 68 µs for 64).
const MAX_PLANE_WIDE: usize = 1024;

/// Largest interleaved padded plane (pixels; 64 bytes each in the
/// scratch): a dilation larger than the map reads mostly padding, better
/// skipped by the plane-wise phases.
const MAX_PADDED: usize = 4096;

/// Whether this kernel takes a depthwise convolution of geometry `g` here.
pub(super) fn applies(g: &Geo) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let wide = g.kh * g.kw > 9 || g.sh > 1 || g.sw > 1;
        let most = if wide { MAX_PLANE_WIDE } else { MAX_PLANE };
        if g.oh == 0 || g.ow == 0 || g.oh * g.ow > most {
            return false;
        }
        let (hp, wp) = padded(g);
        hp * wp <= MAX_PADDED && std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = g;
        false
    }
}

/// An activation the kernel applies in registers, after the bias.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum LaneAct {
    None,
    Relu,
    Relu6,
    Sigmoid,
    Silu,
    HardSwish,
}

impl LaneAct {
    /// The conv epilogue's activation `name`, if the lanes take it.
    pub(super) fn of(name: &str) -> Option<LaneAct> {
        match name {
            "none" => Some(LaneAct::None),
            "relu" => Some(LaneAct::Relu),
            "relu6" => Some(LaneAct::Relu6),
            "sigmoid" => Some(LaneAct::Sigmoid),
            "silu" => Some(LaneAct::Silu),
            "hard_swish" => Some(LaneAct::HardSwish),
            _ => None,
        }
    }
}

/// The epilogue [`block`] applies itself: the bias of its channels (if
/// any), then the activation — the plane-wise epilogue's operations in its
/// order (`conv::bias_activation`): NaN becomes 0 through relu and stays
/// NaN through relu6. A block's output pixel is then written once.
pub(super) struct LaneEpilogue {
    pub bias: Option<*const f32>,
    pub act: LaneAct,
}

/// Channels `0..cnt` (`cnt <= 16`) from `x` (their `h x w` planes, one
/// after another), filters `wt` (`kh x kw` each, one after another), into
/// `o` (their `oh x ow` planes, one after another); with `epi`, its bias
/// and activation too (the bias: `cnt` floats).
///
/// # Safety
/// [`applies`] holds for `g`; the pointers hold `cnt` planes / filters as
/// said; `o` does not overlap `x` or `wt`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn block(
    g: &Geo,
    x: *const f32,
    wt: *const f32,
    o: *mut f32,
    cnt: usize,
    scratch: &mut Vec<f32>,
    epi: Option<&LaneEpilogue>,
) {
    use std::arch::x86_64::*;
    let (hp, wp) = padded(g);
    let taps = g.kh * g.kw;
    // [padded pixel][16 lanes], then [tap][16 lanes], then [output pixel
    // (whole vectors of 16)][16 lanes]; zero lanes past `cnt`.
    let npix = g.oh * g.ow;
    let nres = results_len(npix);
    let need = (hp * wp + taps + nres) * 16;
    if scratch.len() < need {
        scratch.resize(need, 0.0);
    }
    // Only the padding is zeroed: `interleave` writes every other pixel's
    // 16 lanes, the gather below every weight's, `pixels` every result
    // `deinterleave` stores.
    let (plane, rest) = scratch[..need].split_at_mut(hp * wp * 16);
    fill_border(g, plane, 0.0);
    let (weights, results) = rest.split_at_mut(taps * 16);
    let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let mask: __mmask16 = if cnt >= 16 { !0 } else { (1u16 << cnt) - 1 };
    let zero = _mm512_setzero_ps();
    interleave(g, x, cnt, plane);
    let filters = _mm512_mullo_epi32(lanes, _mm512_set1_epi32(taps as i32));
    for t in 0..taps {
        let v = _mm512_mask_i32gather_ps::<4>(zero, mask, filters, wt.add(t));
        _mm512_storeu_ps(weights.as_mut_ptr().add(t * 16), v);
    }
    let (p, wv) = (plane.as_ptr(), weights.as_ptr());
    let bias = epi
        .and_then(|e| e.bias)
        .map(|b| _mm512_maskz_loadu_ps(mask, b));
    let act = epi.map_or(LaneAct::None, |e| e.act);
    let out = Out {
        bias,
        act,
        results: results.as_mut_ptr(),
    };
    // Output pixels (flat, row-major) several at a time: each has its own
    // chain of multiply-adds over the taps, in tap order, and the chains of
    // a group run side by side sharing each tap's weights (one chain alone
    // waits on each add's latency).
    let (n, mut q) = (g.oh * g.ow, 0);
    while q < n {
        q += match n - q {
            8.. => pixels::<8>(g, p, wv, q, &out),
            4.. => pixels::<4>(g, p, wv, q, &out),
            2.. => pixels::<2>(g, p, wv, q, &out),
            _ => pixels::<1>(g, p, wv, q, &out),
        };
    }
    deinterleave(results, o, npix, cnt);
}

/// What [`block`] does with an output pixel's 16 sums.
#[cfg(target_arch = "x86_64")]
struct Out {
    bias: Option<std::arch::x86_64::__m512>,
    act: LaneAct,
    /// Where output pixel `q`'s 16 lanes go: `results + 16 q`.
    results: *mut f32,
}

/// Output pixels `q..q + P` (flat) of [`block`]: `p` its interleaved padded
/// plane, `wv` its interleaved weights. Returns `P`.
///
/// # Safety
/// As [`block`]'s, and `q + P <= oh * ow`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn pixels<const P: usize>(
    g: &Geo,
    p: *const f32,
    wv: *const f32,
    q: usize,
    out: &Out,
) -> usize {
    use std::arch::x86_64::*;
    let (_, wp) = padded(g);
    // Each pixel's first tap in the padded plane.
    let base: [usize; P] = std::array::from_fn(|i| {
        let (oy, ox) = ((q + i) / g.ow, (q + i) % g.ow);
        oy * g.sh * wp + ox * g.sw
    });
    let mut acc = [_mm512_setzero_ps(); P];
    for ki in 0..g.kh {
        for kj in 0..g.kw {
            let at = ki * g.dh * wp + kj * g.dw;
            let w = _mm512_loadu_ps(wv.add((ki * g.kw + kj) * 16));
            for (a, &b) in acc.iter_mut().zip(&base) {
                let v = _mm512_loadu_ps(p.add((b + at) * 16));
                // A product, then a sum — not one fused multiply-add — as
                // the plane-wise kernel: each tap's rounding the same, so
                // the result does not depend on which kernel the map size
                // picked (the sums run in tap order in both).
                *a = _mm512_add_ps(*a, _mm512_mul_ps(v, w));
            }
        }
    }
    for (i, mut acc) in acc.into_iter().enumerate() {
        if let Some(b) = out.bias {
            acc = _mm512_add_ps(acc, b);
        }
        _mm512_storeu_ps(out.results.add((q + i) * 16), activate(out.act, acc));
    }
    P
}

/// `act` on every lane of `acc`: the plane-wise epilogue's values
/// (`conv::bias_activation`), NaN included.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
pub(super) fn activate(act: LaneAct, acc: std::arch::x86_64::__m512) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::*;
    let zero = _mm512_setzero_ps();
    match act {
        LaneAct::None => acc,
        // `ew::relu`: x where x > 0 or x is NaN (not-less-or-equal,
        // unordered), else +0.
        LaneAct::Relu => _mm512_maskz_mov_ps(_mm512_cmp_ps_mask::<_CMP_NLE_UQ>(acc, zero), acc),
        // max(0, x) and min(6, x) give the second operand, x, for NaN.
        LaneAct::Relu6 => _mm512_min_ps(_mm512_set1_ps(6.0), _mm512_max_ps(zero, acc)),
        // The values of the separate pass (`conv::activation`).
        // SAFETY: this function runs with AVX-512F enabled.
        LaneAct::Sigmoid => unsafe { super::logistic::avx512::one(false, acc) },
        // SAFETY: as above.
        LaneAct::Silu => unsafe { super::logistic::avx512::one(true, acc) },
        // `ew::hard_swish`'s operations in its order (a product and a
        // sum, not a fused multiply-add; max then min, which give their
        // second operand for NaN as f32::max and f32::min do here).
        LaneAct::HardSwish => {
            let sixth = _mm512_set1_ps((1.0f64 / 6.0) as f32);
            let t = _mm512_add_ps(_mm512_mul_ps(acc, sixth), _mm512_set1_ps(0.5));
            _mm512_mul_ps(
                acc,
                _mm512_min_ps(_mm512_max_ps(t, zero), _mm512_set1_ps(1.0)),
            )
        }
    }
}

/// What the other depthwise kernels' tests share: each must give this
/// kernel's bits.
#[cfg(all(test, target_arch = "x86_64"))]
pub(super) mod testing {
    use super::{block, LaneAct, LaneEpilogue};
    use crate::kernels::conv::Geo;

    /// Values with signed zeros, ties, a NaN and an infinity, seeded.
    pub fn values(n: usize, seed: u64) -> Vec<f32> {
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
                    3 if i % 89 == 7 => f32::INFINITY,
                    r => (r as f32 - 11.0) * 0.37,
                }
            })
            .collect()
    }

    /// A depthwise kernel's signature: geometry, input planes, filters,
    /// output planes, channels, epilogue.
    pub type Kernel<'k> =
        &'k dyn Fn(&Geo, *const f32, *const f32, *mut f32, usize, Option<&LaneEpilogue>);

    /// `kernel` on geometry `g` gives this kernel's bits (NaN for NaN), for
    /// 16 and 7 channels, without an epilogue and with the bias and each of
    /// relu, relu6 and silu; `case` names `g` in a failure (and seeds it).
    ///
    /// # Safety
    /// AVX-512F, and `kernel` may be called as this kernel's [`block`] on
    /// `g` is (both kernels apply to `g`).
    pub unsafe fn check_against_lanes(g: &Geo, case: usize, kernel: Kernel<'_>) {
        let (plane, taps, out) = (g.h * g.w, g.kh * g.kw, g.oh * g.ow);
        for cnt in [16, 7] {
            let x = values(cnt * plane, 3 + case as u64);
            let wt = values(cnt * taps, 11 + case as u64);
            let bias = values(cnt, 17 + case as u64);
            let acts = [
                None,
                Some(LaneAct::Relu),
                Some(LaneAct::Relu6),
                Some(LaneAct::Silu),
            ];
            for act in acts {
                let epi = act.map(|act| LaneEpilogue {
                    bias: Some(bias.as_ptr()),
                    act,
                });
                let (mut want, mut got) = (vec![1.5f32; cnt * out], vec![2.5f32; cnt * out]);
                let (x, wt, e) = (x.as_ptr(), wt.as_ptr(), epi.as_ref());
                // SAFETY: by the caller's promise; the vectors hold `cnt`
                // planes, filters, biases and outputs.
                unsafe { block(g, x, wt, want.as_mut_ptr(), cnt, &mut vec![], e) };
                kernel(g, x, wt, got.as_mut_ptr(), cnt, e);
                for (j, (a, b)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                        "case {case}, {cnt} channels, element {j}: {a:?} vs the lanes kernel's {b:?}"
                    );
                }
            }
        }
    }
}
