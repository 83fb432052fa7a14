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
//! the lanes are transposed back into the channels' planes. Filters 3 to 9
//! wide at stride 1 take eight pixels of a row at a time with each input
//! pixel of a filter row loaded once for all of them (`row_pixels`; one
//! layer, `ge-run` p50: 7x7 of 96 channels on 16x16 47.8 -> 38.6 µs, 9x9 of
//! 64 channels 45.4 -> 35.2, 3x3 of 96 channels 20.8 -> 18.6).
//! Needs AVX-512F; elsewhere the plane-wise kernel runs.

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
    block_with(g, x, wt, o, cnt, scratch, epi, row_kernel(g))
}

/// [`block`], its output rows eight pixels at a time by `rows` (the row
/// kernel of `g`'s filter) or, without, pixel by pixel only.
///
/// # Safety
/// As [`block`]'s; `rows` is `row_kernel(g)` or `None`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
unsafe fn block_with(
    g: &Geo,
    x: *const f32,
    wt: *const f32,
    o: *mut f32,
    cnt: usize,
    scratch: &mut Vec<f32>,
    epi: Option<&LaneEpilogue>,
    rows: Option<RowKernel>,
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
    match rows {
        // Each row's eights by the row kernel, each input pixel loaded
        // once; the rest of the rows (fewer than eight each) gathered
        // across rows into groups of eight, so they still go eight chains
        // side by side (a row's one or two left alone wait on each add).
        Some(eight) if g.ow >= 8 => {
            let full = g.ow / 8 * 8;
            let (mut rest, mut k) = ([0usize; 8], 0);
            for q0 in (0..g.oh).map(|oy| oy * g.ow) {
                for ox in (0..full).step_by(8) {
                    eight(g, p, wv, q0 + ox, &out);
                }
                for q in q0 + full..q0 + g.ow {
                    rest[k] = q;
                    k += 1;
                    if k == 8 {
                        pixels(g, p, wv, rest, &out);
                        k = 0;
                    }
                }
            }
            few(g, p, wv, &rest[..k], &out);
        }
        // Flat: eight pixels at a time across the rows.
        _ => {
            let (n, mut q) = (g.oh * g.ow, 0);
            while q + 8 <= n {
                pixels::<8>(g, p, wv, std::array::from_fn(|i| q + i), &out);
                q += 8;
            }
            let tail: [usize; 8] = std::array::from_fn(|i| q + i);
            few(g, p, wv, &tail[..n - q], &out);
        }
    }
    deinterleave(results, o, npix, cnt);
}

/// [`row_pixels`] for one filter width.
#[cfg(target_arch = "x86_64")]
type RowKernel = unsafe fn(&Geo, *const f32, *const f32, usize, &Out);

/// The row kernel of `g`, where it has one: stride 1, no dilation, an odd
/// filter width up to 9 (the widths of the depthwise filters models use;
/// wider ones go pixel by pixel). A 9-wide filter row goes in two sweeps,
/// 5 taps and 4: its nine weights, sixteen input pixels and eight sums in
/// one sweep took more than the 32 vector registers (measured 1.6x slower
/// than pixel by pixel).
#[cfg(target_arch = "x86_64")]
fn row_kernel(g: &Geo) -> Option<RowKernel> {
    if (g.sh, g.sw, g.dh, g.dw) != (1, 1, 1, 1) {
        return None;
    }
    Some(match g.kw {
        3 => row_pixels::<3, 0>,
        5 => row_pixels::<5, 0>,
        7 => row_pixels::<7, 0>,
        9 => row_pixels::<5, 4>,
        _ => return None,
    })
}

/// Output pixels `q..q + 8` of [`block`], in one output row, of a
/// stride-1 undilated filter `A + B` wide: per filter row, a sweep over
/// the `8 + A - 1` input pixels under the eight outputs with the first `A`
/// weights in registers, each input loaded once and multiplied into every
/// output it lies under, then one with the next `B` ([`pixels`] loads each
/// input once per output and tap: on a 7x7 filter 9 loads per 8 products
/// against 21 per 56 here). Each output's products are summed in tap
/// order, as [`pixels`] sums them.
///
/// # Safety
/// As [`pixels`]'s, with `q % ow + 8 <= ow`, `g.kw == A + B`, stride and
/// dilation 1.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn row_pixels<const A: usize, const B: usize>(
    g: &Geo,
    p: *const f32,
    wv: *const f32,
    q: usize,
    out: &Out,
) {
    use std::arch::x86_64::*;
    let (_, wp) = padded(g);
    let (oy, ox) = (q / g.ow, q % g.ow);
    let mut acc = [_mm512_setzero_ps(); 8];
    for ki in 0..g.kh {
        let row = p.add(((oy + ki) * wp + ox) * 16);
        let w = wv.add(ki * (A + B) * 16);
        sweep::<A>(&mut acc, row, w);
        if B > 0 {
            sweep::<B>(&mut acc, row.add(A * 16), w.add(A * 16));
        }
    }
    for (i, mut acc) in acc.into_iter().enumerate() {
        if let Some(b) = out.bias {
            acc = _mm512_add_ps(acc, b);
        }
        _mm512_storeu_ps(out.results.add((q + i) * 16), activate(out.act, acc));
    }
}

/// One sweep of [`row_pixels`]: `K` taps (weights at `w`, 16 lanes each)
/// of one filter row into eight outputs, whose first tap is at `row`.
///
/// # Safety
/// `row` holds the `8 + K - 1` interleaved pixels, `w` the `K` weights.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn sweep<const K: usize>(
    acc: &mut [std::arch::x86_64::__m512; 8],
    row: *const f32,
    w: *const f32,
) {
    use std::arch::x86_64::*;
    let w: [__m512; K] = std::array::from_fn(|kj| _mm512_loadu_ps(w.add(kj * 16)));
    for u in 0..8 + K - 1 {
        let v = _mm512_loadu_ps(row.add(u * 16));
        // Input pixel `u` is tap `kj` of output `u - kj`; over `u` each
        // output meets its taps in order.
        for (kj, w) in w.iter().enumerate() {
            if let Some(a) = u.checked_sub(kj).and_then(|r| acc.get_mut(r)) {
                *a = _mm512_add_ps(*a, _mm512_mul_ps(v, *w));
            }
        }
    }
}

/// What [`block`] does with an output pixel's 16 sums.
#[cfg(target_arch = "x86_64")]
struct Out {
    bias: Option<std::arch::x86_64::__m512>,
    act: LaneAct,
    /// Where output pixel `q`'s 16 lanes go: `results + 16 q`.
    results: *mut f32,
}

/// Fewer than eight output pixels (flat indices `qs`) of [`block`]: four,
/// two and one at a time.
///
/// # Safety
/// As [`pixels`]'.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn few(g: &Geo, p: *const f32, wv: *const f32, qs: &[usize], out: &Out) {
    let mut i = 0;
    while i < qs.len() {
        i += match qs.len() - i {
            4.. => pixels::<4>(g, p, wv, std::array::from_fn(|j| qs[i + j]), out),
            2.. => pixels::<2>(g, p, wv, std::array::from_fn(|j| qs[i + j]), out),
            _ => pixels::<1>(g, p, wv, [qs[i]], out),
        };
    }
}

/// Output pixels `qs` (flat indices) of [`block`]: `p` its interleaved
/// padded plane, `wv` its interleaved weights. Returns `P`.
///
/// # Safety
/// As [`block`]'s, and every index below `oh * ow`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn pixels<const P: usize>(
    g: &Geo,
    p: *const f32,
    wv: *const f32,
    qs: [usize; P],
    out: &Out,
) -> usize {
    use std::arch::x86_64::*;
    let (_, wp) = padded(g);
    // Each pixel's first tap in the padded plane, as a pointer: a tap's
    // load is then that pointer plus the tap's offset, one addressing mode
    // (from indices, each load took an add and a shift as well — as many
    // instructions as the multiply-add it feeds).
    let base: [*const f32; P] = qs.map(|q| {
        let (oy, ox) = (q / g.ow, q % g.ow);
        p.add((oy * g.sh * wp + ox * g.sw) * 16)
    });
    let mut acc = [_mm512_setzero_ps(); P];
    for ki in 0..g.kh {
        for kj in 0..g.kw {
            let at = (ki * g.dh * wp + kj * g.dw) * 16;
            let w = _mm512_loadu_ps(wv.add((ki * g.kw + kj) * 16));
            for (a, &b) in acc.iter_mut().zip(&base) {
                let v = _mm512_loadu_ps(b.add(at));
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
        _mm512_storeu_ps(out.results.add(qs[i] * 16), activate(out.act, acc));
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

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::{block_with, row_kernel, testing};
    use crate::kernels::conv::Geo;

    /// Eight pixels of a row at a time (`row_pixels`, what [`block`] does
    /// where a row kernel exists) give the bits of pixel by pixel
    /// (`pixels` alone): filters 3 to 9 wide, square and not, rows of 8,
    /// 11, 12, 14, 16, 19 and 22 outputs (a remainder of 0 to 6 after the
    /// eights, gathered across rows), with and without padding, by
    /// `testing::check_against_lanes` (16 and 7 channels, each epilogue;
    /// signed zeros, a NaN and an infinity among the values).
    ///
    /// [`block`]: super::block
    #[test]
    fn row_kernel_matches_pixel_by_pixel_bit_for_bit() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            return;
        }
        // (kh, kw, h, w, pad)
        let cases = [
            (3, 3, 12, 12, 1),
            (5, 5, 9, 11, 2),
            (7, 7, 16, 14, 3),
            (3, 7, 10, 16, 0),
            (9, 9, 12, 19, 4),
            (9, 9, 14, 22, 0),
            (1, 5, 4, 12, 1),
        ];
        for (case, (kh, kw, h, w, pad)) in cases.into_iter().enumerate() {
            let g = Geo {
                h,
                w,
                kh,
                kw,
                oh: h + 2 * pad + 1 - kh,
                ow: w + 2 * pad + 1 - kw,
                sh: 1,
                sw: 1,
                pt: pad,
                pl: pad,
                dh: 1,
                dw: 1,
            };
            assert!(
                row_kernel(&g).is_some() && super::applies(&g),
                "case {case}"
            );
            // SAFETY: AVX-512F (checked) and `applies` holds: `block` and
            // `block_with` without a row kernel both take `g`.
            unsafe {
                testing::check_against_lanes(&g, case, &|g, x, wt, o, cnt, epi| {
                    block_with(g, x, wt, o, cnt, &mut vec![], epi, None)
                })
            };
        }
    }
}
