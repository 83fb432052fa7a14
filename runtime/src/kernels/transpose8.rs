//! 8x8 transposes of 32-bit values between 8 NCHW planes and an NC1HWC0
//! block of 8 channels, and of whole matrices (a `transpose` of the last
//! two axes: [`matrix`]) (AVX): 8 rows of 8 loaded, transposed in
//! registers, stored as 8 rows of 8 — where a loop of single values stores
//! (or loads) one value per 32 bytes. Pure data movement (shuffles never
//! change a bit): any 4-byte element type.

/// Whether the CPU has the AVX the transposes need; without it, callers
/// copy one value at a time.
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// 8 planes of `cols` values (`stride` apart from `src`) into the block at
/// `dst`: `cols` rows of the 8 planes' values, one after another.
///
/// # Safety
/// [`available`] is true; the planes' `cols` values and `dst`'s `8 * cols`
/// lie in memory, not overlapping.
pub unsafe fn planes_to_block(src: *const f32, stride: usize, cols: usize, dst: *mut f32) {
    let mut j = 0;
    #[cfg(target_arch = "x86_64")]
    while j + 8 <= cols {
        avx::tile(src.add(j), stride, dst.add(j * 8), 8);
        j += 8;
    }
    for j in j..cols {
        for i in 0..8 {
            *dst.add(j * 8 + i) = *src.add(i * stride + j);
        }
    }
}

/// The block at `src` (`cols` rows of 8 values) into 8 planes of `cols`
/// values, `stride` apart from `dst`: [`planes_to_block`] undone.
///
/// # Safety
/// As [`planes_to_block`], the roles swapped.
pub unsafe fn block_to_planes(src: *const f32, cols: usize, dst: *mut f32, stride: usize) {
    let mut j = 0;
    #[cfg(target_arch = "x86_64")]
    while j + 8 <= cols {
        avx::tile(src.add(j * 8), 8, dst.add(j), stride);
        j += 8;
    }
    for j in j..cols {
        for i in 0..8 {
            *dst.add(i * stride + j) = *src.add(j * 8 + i);
        }
    }
}

/// `d[c * ds + r] = s[r * ss + c]` for the `rows x cols` matrix at `s`:
/// a transpose by 8x8 tiles, the last rows and columns one value at a
/// time. A loop of single values reads down a column, one cache line per
/// value (a 256 x 256 transpose took 69 µs that way, 1 ns a value).
///
/// # Safety
/// [`available`] is true; `s` addresses `rows` rows of `cols` values `ss`
/// apart, `d` `cols` rows of `rows` values `ds` apart, not overlapping.
pub unsafe fn matrix(rows: usize, cols: usize, s: *const f32, ss: usize, d: *mut f32, ds: usize) {
    let mut r = 0;
    #[cfg(target_arch = "x86_64")]
    while r + 8 <= rows {
        let mut c = 0;
        while c + 8 <= cols {
            avx::tile(s.add(r * ss + c), ss, d.add(c * ds + r), ds);
            c += 8;
        }
        for c in c..cols {
            for i in r..r + 8 {
                *d.add(c * ds + i) = *s.add(i * ss + c);
            }
        }
        r += 8;
    }
    for r in r..rows {
        for c in 0..cols {
            *d.add(c * ds + r) = *s.add(r * ss + c);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    /// `d[c * ds + i] = s[i * ss + c]` for the 8x8 tile.
    ///
    /// # Safety
    /// The CPU has AVX; both tiles lie in memory.
    #[target_feature(enable = "avx")]
    pub unsafe fn tile(s: *const f32, ss: usize, d: *mut f32, ds: usize) {
        let r: [__m256; 8] = std::array::from_fn(|i| _mm256_loadu_ps(s.add(i * ss)));
        let t0 = _mm256_unpacklo_ps(r[0], r[1]);
        let t1 = _mm256_unpackhi_ps(r[0], r[1]);
        let t2 = _mm256_unpacklo_ps(r[2], r[3]);
        let t3 = _mm256_unpackhi_ps(r[2], r[3]);
        let t4 = _mm256_unpacklo_ps(r[4], r[5]);
        let t5 = _mm256_unpackhi_ps(r[4], r[5]);
        let t6 = _mm256_unpacklo_ps(r[6], r[7]);
        let t7 = _mm256_unpackhi_ps(r[6], r[7]);
        let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
        let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
        let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
        let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
        let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
        let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
        let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
        let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
        let cols = [
            _mm256_permute2f128_ps::<0x20>(u0, u4),
            _mm256_permute2f128_ps::<0x20>(u1, u5),
            _mm256_permute2f128_ps::<0x20>(u2, u6),
            _mm256_permute2f128_ps::<0x20>(u3, u7),
            _mm256_permute2f128_ps::<0x31>(u0, u4),
            _mm256_permute2f128_ps::<0x31>(u1, u5),
            _mm256_permute2f128_ps::<0x31>(u2, u6),
            _mm256_permute2f128_ps::<0x31>(u3, u7),
        ];
        for (c, v) in cols.iter().enumerate() {
            _mm256_storeu_ps(d.add(c * ds), *v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_transposes_every_shape_bit_for_bit() {
        if !available() {
            return;
        }
        for (rows, cols) in [(1, 1), (8, 8), (9, 17), (16, 3), (3, 16), (24, 40), (13, 8)] {
            let (ss, ds) = (cols + 5, rows + 2);
            // NaN payloads and -0.0 among the values: a move keeps bits.
            let s: Vec<f32> = (0..rows * ss)
                .map(|v| match v % 7 {
                    0 => f32::from_bits(0x7fc0_0000 | v as u32),
                    1 => -0.0,
                    _ => v as f32,
                })
                .collect();
            let mut d = vec![0f32; cols * ds];
            // SAFETY: `s` holds `rows` rows `ss` apart, `d` `cols` rows
            // `ds` apart.
            unsafe { matrix(rows, cols, s.as_ptr(), ss, d.as_mut_ptr(), ds) };
            for r in 0..rows {
                for c in 0..cols {
                    let (got, want) = (d[c * ds + r].to_bits(), s[r * ss + c].to_bits());
                    assert_eq!(got, want, "{rows}x{cols} at ({r}, {c})");
                }
            }
        }
    }

    #[test]
    fn planes_and_blocks_round_trip_at_every_width() {
        if !available() {
            return;
        }
        for cols in [1, 7, 8, 9, 16, 23] {
            let stride = cols + 3;
            let planes: Vec<f32> = (0..8 * stride).map(|v| v as f32).collect();
            let mut block = vec![0f32; 8 * cols];
            let mut back = vec![-1f32; 8 * stride];
            // SAFETY: the buffers hold what each call reads and writes.
            unsafe {
                planes_to_block(planes.as_ptr(), stride, cols, block.as_mut_ptr());
                block_to_planes(block.as_ptr(), cols, back.as_mut_ptr(), stride);
            }
            for i in 0..8 {
                for j in 0..cols {
                    assert_eq!(block[j * 8 + i], planes[i * stride + j], "cols {cols}");
                    assert_eq!(back[i * stride + j], planes[i * stride + j], "cols {cols}");
                }
            }
        }
    }
}
