//! Planes of up to 32 pixels computed into up to 16 (AVX-512F): the whole
//! input plane in two vectors, the outputs in the lanes of one, each tap of
//! a window a permute of the plane by a table. Shared by the max pool
//! (`pool_tiny.rs`) and the depthwise convolution (`depthwise_tiny.rs`) of
//! a small image's last maps (2x2, 4x4), where interleaving 16 channels
//! into the lanes (`lanes.rs`) cost more than the arithmetic.

use super::conv::Geo;

/// Input pixels a plane may have (two vectors).
const MAX_INPUT: usize = 32;
/// Output pixels a plane may have (one vector).
const MAX_OUTPUT: usize = 16;
/// Taps a window may have (the tables: 64 bytes and a mask a tap).
const MAX_TAPS: usize = 64;

/// Whether geometry `g` fits: planes small enough, a window of few taps.
pub(super) fn fits(g: &Geo) -> bool {
    let out = g.oh * g.ow;
    g.h * g.w <= MAX_INPUT && out > 0 && out <= MAX_OUTPUT && g.kh * g.kw <= MAX_TAPS
}

/// The tap tables of one geometry: which input pixel each output lane of
/// each tap reads, and the lanes whose tap reads one (the rest fall in the
/// padding). Made once per kernel launch, on the stack (no allocation).
pub(super) struct Taps {
    index: [[i32; MAX_OUTPUT]; MAX_TAPS],
    reads: [u16; MAX_TAPS],
    /// Taps of the window, row-major.
    pub taps: usize,
    /// Input and output pixels of a plane.
    pub plane: usize,
    pub npix: usize,
}

impl Taps {
    /// The tables of geometry `g` ([`fits`] holds).
    pub(super) fn new(g: &Geo) -> Taps {
        let npix = (g.oh * g.ow).min(MAX_OUTPUT);
        let taps = (g.kh * g.kw).min(MAX_TAPS);
        let mut t = Taps {
            index: [[0; MAX_OUTPUT]; MAX_TAPS],
            reads: [0; MAX_TAPS],
            taps,
            plane: g.h * g.w,
            npix,
        };
        // Where output `o` of an axis reads tap `k`: inside `0..len`, or
        // padding (also when the arithmetic overflows).
        let at = |o: usize, s: usize, k: usize, d: usize, pad: usize, len: usize| {
            o.checked_mul(s)?
                .checked_add(k.checked_mul(d)?)?
                .checked_sub(pad)
                .filter(|&v| v < len)
        };
        // Each output pixel's row and column, worked out once (not a
        // division per tap and pixel).
        let pixels: [(usize, usize); MAX_OUTPUT] = std::array::from_fn(|p| (p / g.ow, p % g.ow));
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let k = ki * g.kw + kj;
                if k >= taps {
                    return t;
                }
                for (p, &(oy, ox)) in pixels.iter().enumerate().take(npix) {
                    let y = at(oy, g.sh, ki, g.dh, g.pt, g.h);
                    let c = at(ox, g.sw, kj, g.dw, g.pl, g.w);
                    if let (Some(y), Some(c)) = (y, c) {
                        // Below MAX_INPUT: fits an i32.
                        t.index[k][p] = (y * g.w + c) as i32;
                        t.reads[k] |= 1 << p;
                    }
                }
            }
        }
        t
    }

    /// Tap `k`'s table (`k < taps`): the lanes' input pixels, as a vector,
    /// and the lanes that read one.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(super) fn tap(&self, k: usize) -> (std::arch::x86_64::__m512i, u16) {
        use std::arch::x86_64::*;
        let (index, reads) = (&self.index[k], self.reads[k]);
        // SAFETY: 16 i32s of the table's row.
        (unsafe { _mm512_loadu_si512(index.as_ptr().cast()) }, reads)
    }

    /// The lanes of the output vector that hold outputs.
    pub(super) fn out_lanes(&self) -> u16 {
        lanes(self.npix)
    }

    /// The plane at `x` in two vectors (pixels `0..16`, `16..32`), the lanes
    /// past it `fill`.
    ///
    /// # Safety
    /// `x` holds the plane's `plane` floats.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(super) unsafe fn load(
        &self,
        x: *const f32,
        fill: std::arch::x86_64::__m512,
    ) -> (std::arch::x86_64::__m512, std::arch::x86_64::__m512) {
        use std::arch::x86_64::*;
        let (lo, hi) = (lanes(self.plane), lanes(self.plane.saturating_sub(16)));
        // SAFETY: the plane's floats only (masked); the second vector's
        // address is only formed when no lane of it is read.
        unsafe {
            (
                _mm512_mask_loadu_ps(fill, lo, x),
                _mm512_mask_loadu_ps(fill, hi, x.wrapping_add(16)),
            )
        }
    }
}

/// The first `n` of 16 lanes.
fn lanes(n: usize) -> u16 {
    match n >= 16 {
        true => !0,
        false => (1u16 << n) - 1,
    }
}
