//! Channels in the vector lanes: 16 channels' NCHW planes interleaved
//! pixel-major (16 floats a pixel, one per channel) into a padded plane,
//! and 16 channels' results transposed back into their planes — what the
//! small-map kernels of `depthwise_lanes.rs` and `pool_lanes.rs` share. On
//! the 2x2 to 16x16 maps of small images a plane is shorter than a few
//! vectors and per-plane work dominates; with the channels in the lanes
//! every vector is full. Needs AVX-512F.

use super::conv::Geo;

/// Rows and columns of the padded plane every tap of every output reads.
pub(super) fn padded(g: &Geo) -> (usize, usize) {
    (
        (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1,
        (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1,
    )
}

/// Floats of results [`deinterleave`] reads for `npix` output pixels (whole
/// vectors of 16 pixels where it transposes).
pub(super) fn results_len(npix: usize) -> usize {
    match npix < TRANSPOSE_FROM {
        true => npix,
        false => npix.next_multiple_of(16),
    }
}

/// `value` in every padded pixel (all 16 lanes) of `plane` that
/// [`interleave`] does not write: the rows and columns around the input's
/// `(pt, pl)`-based rectangle, and nothing else — filling the whole plane
/// first cost as much as the convolution on small maps.
pub(super) fn fill_border(g: &Geo, plane: &mut [f32], value: f32) {
    let (hp, wp) = padded(g);
    let Some(plane) = plane.get_mut(..hp * wp * 16) else {
        return;
    };
    // Both ends within the plane: r0 <= r1 <= hp, c0 <= c1 <= wp.
    let (r0, c0) = (g.pt.min(hp), g.pl.min(wp));
    let (r1, c1) = ((g.pt + g.h).clamp(r0, hp), (g.pl + g.w).clamp(c0, wp));
    let row = wp * 16;
    let (top, rest) = plane.split_at_mut(r0 * row);
    let (middle, bottom) = rest.split_at_mut((r1 - r0) * row);
    top.fill(value);
    bottom.fill(value);
    for r in middle.chunks_exact_mut(row) {
        r[..c0 * 16].fill(value);
        r[c1 * 16..].fill(value);
    }
}

/// Channels `0..cnt` (`cnt <= 16`) of the `h x w` planes at `x` (one after
/// another) into `plane` (`hp x wp` padded pixels of 16 floats, from
/// [`padded`]): input pixel `(y, c)` to padded pixel `(y + pt, c + pl)`,
/// lane `l` from channel `l`. Pixels outside the padded plane (never read
/// by a tap) are dropped; the padding and the lanes past `cnt` are left as
/// they are (the caller fills them: zero, or a pool's padding value).
/// 16 pixels at a time (flat, row-major, or along each row where rows are
/// at least half a vector): 16 channels' runs loaded and transposed into 16
/// pixels' channels.
///
/// # Safety
/// `x` holds `cnt` planes of `h x w` floats; `plane` holds `hp * wp * 16`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn interleave(g: &Geo, x: *const f32, cnt: usize, plane: &mut [f32]) {
    use std::arch::x86_64::*;
    let (hp, wp) = padded(g);
    if plane.len() < hp * wp * 16 {
        return;
    }
    let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let mask: __mmask16 = if cnt >= 16 { !0 } else { (1u16 << cnt) - 1 };
    let zero = _mm512_setzero_ps();
    // The input 16 pixels at a time (flat, row-major): 16 channels' runs
    // loaded and transposed into 16 pixels' channels, each stored at its
    // place in the padded plane (pixels outside what a tap reads dropped).
    let hw = g.h * g.w;
    let planes = _mm512_mullo_epi32(lanes, _mm512_set1_epi32(hw as i32));
    // Input rows past the last a tap reads are not read.
    let rows = g.h.min(hp.saturating_sub(g.pt));
    if g.w >= TRANSPOSE_FROM {
        // Rows of at least half a vector: row by row, each run of up to 16
        // pixels transposed and stored side by side in its padded row (no
        // pixel's place to work out; columns past the padded row dropped).
        let cols = g.w.min(wp.saturating_sub(g.pl));
        for y in 0..rows {
            let dst = plane.as_mut_ptr().add(((y + g.pt) * wp + g.pl) * 16);
            for c0 in (0..cols).step_by(16) {
                let k = (cols - c0).min(16);
                let m: __mmask16 = if k == 16 { !0 } else { (1u16 << k) - 1 };
                let mut v: [__m512; 16] = std::array::from_fn(|ch| match ch < cnt {
                    true => _mm512_maskz_loadu_ps(m, x.add(ch * hw + y * g.w + c0)),
                    false => zero,
                });
                transpose16(&mut v);
                for (i, v) in v.iter().take(k).enumerate() {
                    _mm512_storeu_ps(dst.add((c0 + i) * 16), *v);
                }
            }
        }
        return;
    }
    let read = rows * g.w;
    for f0 in (0..read).step_by(16) {
        let k = (read - f0).min(16);
        let m: __mmask16 = if k == 16 { !0 } else { (1u16 << k) - 1 };
        let base = plane.as_mut_ptr();
        // The group's pixels' places, walking the rows from the first's (one
        // division a group, not one a pixel).
        let (mut y, mut c) = (f0 / g.w, f0 % g.w);
        let mut places = [None; 16];
        for place in places.iter_mut().take(k) {
            let (r, q) = (y + g.pt, c + g.pl);
            *place = (r < hp && q < wp).then(|| base.add((r * wp + q) * 16));
            c += 1;
            if c == g.w {
                (y, c) = (y + 1, 0);
            }
        }
        let at = |i: usize| places[i];
        if k < TRANSPOSE_FROM {
            // A few pixels: a gather each (the planes `h x w` apart).
            for i in 0..k {
                if let Some(dst) = at(i) {
                    let v = _mm512_mask_i32gather_ps::<4>(zero, mask, planes, x.add(f0 + i));
                    _mm512_storeu_ps(dst, v);
                }
            }
            continue;
        }
        let mut v: [__m512; 16] = std::array::from_fn(|ch| match ch < cnt {
            true => _mm512_maskz_loadu_ps(m, x.add(ch * hw + f0)),
            false => zero,
        });
        transpose16(&mut v);
        for (i, v) in v.iter().take(k).enumerate() {
            if let Some(dst) = at(i) {
                _mm512_storeu_ps(dst, *v);
            }
        }
    }
}

/// Output pixels `0..npix` of 16 channels, `results` (pixel-major, 16
/// floats a pixel, [`results_len`] pixels), into channels `0..cnt` of the
/// `npix`-pixel planes at `o` (one after another).
///
/// # Safety
/// `o` holds `cnt` planes of `npix` floats and overlaps nothing read here.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn deinterleave(results: &[f32], o: *mut f32, npix: usize, cnt: usize) {
    use std::arch::x86_64::*;
    if results.len() < results_len(npix) * 16 {
        return;
    }
    let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let mask: __mmask16 = if cnt >= 16 { !0 } else { (1u16 << cnt) - 1 };
    // The results 16 pixels at a time: transposed into 16 channels' runs,
    // each stored in its channel's plane (`oh x ow` apart).
    for q0 in (0..npix).step_by(16) {
        let k = (npix - q0).min(16);
        let m: __mmask16 = if k == 16 { !0 } else { (1u16 << k) - 1 };
        if k < TRANSPOSE_FROM {
            // A few pixels: a scatter each, lane `l` to channel `l`'s plane.
            let outs = _mm512_mullo_epi32(lanes, _mm512_set1_epi32(npix as i32));
            for i in 0..k {
                let v = _mm512_loadu_ps(results.as_ptr().add((q0 + i) * 16));
                _mm512_mask_i32scatter_ps::<4>(o.add(q0 + i), mask, outs, v);
            }
            continue;
        }
        // Pixels past `npix` read what the results end with: their lanes
        // are not stored.
        let mut v: [__m512; 16] =
            std::array::from_fn(|i| _mm512_loadu_ps(results.as_ptr().add((q0 + i) * 16)));
        transpose16(&mut v);
        for (ch, v) in v.iter().take(cnt).enumerate() {
            _mm512_mask_storeu_ps(o.add(ch * npix + q0), m, *v);
        }
    }
}

/// Runs of fewer pixels than this move between the planes and the lanes
/// by a gather or scatter per pixel (16 loads or stores each); longer ones
/// by a transpose in registers (16 vector loads or stores and 64
/// shuffles), cheaper per pixel once there are half a vector's worth.
const TRANSPOSE_FROM: usize = 8;

/// Transpose 16 vectors of 16 floats in registers: afterwards `r[k]` holds
/// element `k` of every input vector, in order.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
pub(super) fn transpose16(r: &mut [std::arch::x86_64::__m512; 16]) {
    use std::arch::x86_64::*;
    let mut t = [_mm512_setzero_ps(); 16];
    // Pairs of rows, interleaved by element (within each 128-bit lane).
    for i in 0..8 {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // Blocks of four rows: r[4i + m] lane j = column 4j + m of rows 4i..4i+4.
    for i in 0..4 {
        let (a, b, c, d) = (t[4 * i], t[4 * i + 1], t[4 * i + 2], t[4 * i + 3]);
        r[4 * i] = _mm512_shuffle_ps::<0x44>(a, c);
        r[4 * i + 1] = _mm512_shuffle_ps::<0xEE>(a, c);
        r[4 * i + 2] = _mm512_shuffle_ps::<0x44>(b, d);
        r[4 * i + 3] = _mm512_shuffle_ps::<0xEE>(b, d);
    }
    // 128-bit lanes of two blocks, then of all four: column k in r[k].
    for i in 0..2 {
        for j in 0..4 {
            let (a, b) = (r[8 * i + j], r[8 * i + 4 + j]);
            t[8 * i + j] = _mm512_shuffle_f32x4::<0x88>(a, b);
            t[8 * i + 4 + j] = _mm512_shuffle_f32x4::<0xDD>(a, b);
        }
    }
    for j in 0..8 {
        r[j] = _mm512_shuffle_f32x4::<0x88>(t[j], t[8 + j]);
        r[8 + j] = _mm512_shuffle_f32x4::<0xDD>(t[j], t[8 + j]);
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    #[test]
    fn transpose16_puts_element_k_of_every_row_in_row_k() {
        use std::arch::x86_64::*;
        if !std::arch::is_x86_feature_detected!("avx512f") {
            return;
        }
        let m: Vec<f32> = (0..256).map(|i| i as f32).collect();
        let mut t = [0.0f32; 256];
        // SAFETY: AVX-512F is present (checked above); the loads and stores
        // stay inside the 256-float arrays.
        unsafe {
            let mut r: [__m512; 16] =
                std::array::from_fn(|i| _mm512_loadu_ps(m.as_ptr().add(16 * i)));
            super::transpose16(&mut r);
            for (i, v) in r.iter().enumerate() {
                _mm512_storeu_ps(t.as_mut_ptr().add(16 * i), *v);
            }
        }
        for k in 0..16 {
            for row in 0..16 {
                assert_eq!(t[16 * k + row], m[16 * row + k], "element {k} of row {row}");
            }
        }
    }
}
