//! Depthwise convolution over small maps with the channels in the vector
//! lanes. The plane-wise kernel (`conv::depthwise`) vectorizes along a
//! channel's padded plane; on the 2x2 to 8x8 maps of a small image's late
//! layers (MNASNet, MobileNetV3, EfficientNet at 64x64) a plane is shorter
//! than a vector and the per-channel work (padding copy, epilogue) is most
//! of the time: MNASNet spent 47 % of its run there. Here 16 channels go
//! together: their padded planes are interleaved (pixel-major, 16 floats a
//! pixel), each output pixel is the sum over the taps of one vector load
//! times the 16 channels' tap weights, and the lanes are written back to the
//! channels' planes. Needs AVX-512F; elsewhere the plane-wise kernel runs.

use super::conv::Geo;

/// Largest output plane (pixels) taken here: beyond it a plane fills vectors
/// and the plane-wise kernel is as fast.
const MAX_PLANE: usize = 64;

/// Largest interleaved padded plane (pixels): a dilation larger than the
/// map reads mostly padding, better skipped by the plane-wise phases.
const MAX_PADDED: usize = 1024;

/// Rows and columns of the padded plane every tap of every output reads.
fn padded(g: &Geo) -> (usize, usize) {
    (
        (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1,
        (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1,
    )
}

/// Whether this kernel takes a depthwise convolution of geometry `g` here.
pub(super) fn applies(g: &Geo) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if g.oh == 0 || g.ow == 0 || g.oh * g.ow > MAX_PLANE {
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
}

impl LaneAct {
    /// The conv epilogue's activation `name`, if the lanes take it.
    pub(super) fn of(name: &str) -> Option<LaneAct> {
        match name {
            "none" => Some(LaneAct::None),
            "relu" => Some(LaneAct::Relu),
            "relu6" => Some(LaneAct::Relu6),
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
    // [padded pixel][16 lanes], then [tap][16 lanes]; zero lanes past `cnt`.
    scratch.clear();
    scratch.resize((hp * wp + taps) * 16, 0.0);
    let (plane, weights) = scratch.split_at_mut(hp * wp * 16);
    // Each valid input pixel's 16 channels in one gather (the planes `h x
    // w` apart), each tap's 16 weights in another; lanes past `cnt` stay 0.
    let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let mask: __mmask16 = if cnt >= 16 { !0 } else { (1u16 << cnt) - 1 };
    let zero = _mm512_setzero_ps();
    let planes = _mm512_mullo_epi32(lanes, _mm512_set1_epi32((g.h * g.w) as i32));
    for r in 0..hp {
        let Some(y) = (r as isize - g.pt as isize)
            .try_into()
            .ok()
            .filter(|&y: &usize| y < g.h)
        else {
            continue;
        };
        for q in 0..wp {
            if let Some(c) = q.checked_sub(g.pl).filter(|&c| c < g.w) {
                let v = _mm512_mask_i32gather_ps::<4>(zero, mask, planes, x.add(y * g.w + c));
                _mm512_storeu_ps(plane.as_mut_ptr().add((r * wp + q) * 16), v);
            }
        }
    }
    let filters = _mm512_mullo_epi32(lanes, _mm512_set1_epi32(taps as i32));
    for t in 0..taps {
        let v = _mm512_mask_i32gather_ps::<4>(zero, mask, filters, wt.add(t));
        _mm512_storeu_ps(weights.as_mut_ptr().add(t * 16), v);
    }
    let (p, wv) = (plane.as_ptr(), weights.as_ptr());
    let outs = _mm512_mullo_epi32(lanes, _mm512_set1_epi32((g.oh * g.ow) as i32));
    let bias = epi
        .and_then(|e| e.bias)
        .map(|b| _mm512_maskz_loadu_ps(mask, b));
    let act = epi.map_or(LaneAct::None, |e| e.act);
    let out = Out {
        bias,
        act,
        outs,
        mask,
    };
    // Output pixels (flat, row-major) several at a time: each has its own
    // chain of fused multiply-adds over the taps, in tap order, and the
    // chains of a group run side by side sharing each tap's weights (one
    // chain alone waits on each FMA's latency).
    let (n, mut q) = (g.oh * g.ow, 0);
    while q < n {
        q += match n - q {
            8.. => pixels::<8>(g, p, wv, o, q, &out),
            4.. => pixels::<4>(g, p, wv, o, q, &out),
            2.. => pixels::<2>(g, p, wv, o, q, &out),
            _ => pixels::<1>(g, p, wv, o, q, &out),
        };
    }
}

/// What [`block`] does with an output pixel's 16 sums.
#[cfg(target_arch = "x86_64")]
struct Out {
    bias: Option<std::arch::x86_64::__m512>,
    act: LaneAct,
    /// Lane `l`'s offset into the output: channel `l`'s plane.
    outs: std::arch::x86_64::__m512i,
    mask: std::arch::x86_64::__mmask16,
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
    o: *mut f32,
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
                *a = _mm512_fmadd_ps(v, w, *a);
            }
        }
    }
    let (zero, six) = (_mm512_setzero_ps(), _mm512_set1_ps(6.0));
    for (i, mut acc) in acc.into_iter().enumerate() {
        if let Some(b) = out.bias {
            acc = _mm512_add_ps(acc, b);
        }
        acc = match out.act {
            LaneAct::None => acc,
            // max(x, 0) gives the second operand, 0, for NaN.
            LaneAct::Relu => _mm512_max_ps(acc, zero),
            // max(0, x) and min(6, x) give the second operand, x, for NaN.
            LaneAct::Relu6 => _mm512_min_ps(six, _mm512_max_ps(zero, acc)),
        };
        // Lane `l` to channel `l`'s plane (`oh x ow` apart).
        _mm512_mask_i32scatter_ps::<4>(o.add(q + i), out.mask, out.outs, acc);
    }
    P
}
