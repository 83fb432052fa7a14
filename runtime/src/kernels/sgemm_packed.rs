//! A single-precision GEMM whose left operand is packed once, at model load
//! (a convolution's constant filter): `C[rows x n] = A[rows x k] * B[k x n]`
//! with `A` in panels of [`MR`] rows stored k-major (the `MR` values of one
//! `k` index side by side, zero rows padding the last panel), and `B` read
//! row-major with any row stride (an im2col panel, or a 1x1 convolution's
//! input plane): a call never packs the filter.
//!
//! The micro-kernel computes an `MR x NR` block of `C` in registers
//! (AVX2/FMA: 4 rows x 3 vectors of 8 columns, 12 accumulators; the
//! columns of the last block store masked), over `k` in slices of [`KC`]:
//! the `KC x NR` strip of `B` it reuses for every row panel is copied into
//! a contiguous block that stays in the L1 cache (the only per-call copy:
//! 1/`MR` of the multiply-adds it serves, none of the filter). The CPU's features are detected at run time; without
//! AVX2 and FMA a scalar loop computes the same blocks.

/// Rows of a packed panel.
pub const MR: usize = 4;
/// Columns of a register block (three AVX vectors).
const NR: usize = 24;
/// `k` per slice: a packed `KC x NR` strip of `B` (24 KiB) stays in L1
/// (128 cost 1.18x the CPU time of 256 on ResNet's 1x1 1024 -> 256).
const KC: usize = 256;

/// A row-major `m x k` matrix in panels of [`MR`] rows, k-major.
#[derive(Debug)]
pub struct PackedA {
    pub m: usize,
    pub k: usize,
    data: Vec<f32>,
}

impl PackedA {
    /// Pack the row-major `m x k` matrix `a` (`a.len() >= m * k`).
    pub fn pack(a: &[f32], m: usize, k: usize) -> PackedA {
        let panels = m.div_ceil(MR);
        let mut data = vec![0f32; panels * MR * k];
        for (r, row) in a.chunks_exact(k.max(1)).take(m).enumerate() {
            let base = (r / MR) * MR * k + r % MR;
            for (kk, &v) in row.iter().enumerate() {
                data[base + kk * MR] = v;
            }
        }
        PackedA { m, k, data }
    }

    /// Bytes it holds.
    pub fn bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<f32>()
    }

    /// Bytes [`PackedA::pack`] allocates for an `m x k` matrix.
    pub fn bytes_for(m: usize, k: usize) -> usize {
        m.div_ceil(MR) * MR * k * std::mem::size_of::<f32>()
    }

    /// `C[rows x n] = A[r0..r0 + rows] * B[k x n]` (`C` overwritten).
    ///
    /// # Safety
    /// `r0` is a multiple of [`MR`] and `r0 + rows <= m`; `b` points at `k`
    /// rows of `n` floats `ldb` apart, `c` at `rows` rows of `n` floats
    /// `ldc` apart, not overlapping `b`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gemm(
        &self,
        r0: usize,
        rows: usize,
        b: *const f32,
        ldb: usize,
        n: usize,
        c: *mut f32,
        ldc: usize,
    ) {
        if rows == 0 || n == 0 {
            return;
        }
        let k = self.k;
        if k == 0 {
            for r in 0..rows {
                std::ptr::write_bytes(c.add(r * ldc), 0, n);
            }
            return;
        }
        let a = self.data.as_ptr().add(r0 * k);
        let g = Gemm {
            a,
            k,
            rows,
            b,
            ldb,
            n,
            c,
            ldc,
        };
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA; the pointers as above.
            return avx2::gemm(&g);
        }
        scalar(&g);
    }
}

/// One call's operands: `a` at the first row panel.
struct Gemm {
    a: *const f32,
    k: usize,
    rows: usize,
    b: *const f32,
    ldb: usize,
    n: usize,
    c: *mut f32,
    ldc: usize,
}

/// The scalar blocks, in the order of the vector kernel's sums (`k`
/// ascending, one fused multiply-add per term).
///
/// # Safety
/// As [`PackedA::gemm`].
unsafe fn scalar(g: &Gemm) {
    for r in 0..g.rows {
        let panel = g.a.add((r / MR) * MR * g.k + r % MR);
        for j in 0..g.n {
            let mut s = 0f32;
            for kk in 0..g.k {
                s = (*panel.add(kk * MR)).mul_add(*g.b.add(kk * g.ldb + j), s);
            }
            *g.c.add(r * g.ldc + j) = s;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Gemm, KC, MR, NR};
    use std::arch::x86_64::*;

    /// The blocks of `C`: slices of `k`, then `NR` columns, then panels.
    /// Each `KC x NR` strip of `B` is first copied into a contiguous block
    /// (zero columns past `n`): the micro-kernel then reads it
    /// sequentially, where `B`'s own rows lie a plane apart (a 1x1
    /// convolution's input: one page per row, a TLB miss per load).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; the pointers as [`super::PackedA::gemm`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn gemm(g: &Gemm) {
        let mut strip = Strip([0f32; KC * NR]);
        let strip = &mut strip.0;
        let mut k0 = 0;
        while k0 < g.k {
            let kc = KC.min(g.k - k0);
            let first = k0 == 0;
            let mut j = 0;
            while j < g.n {
                let w = (g.n - j).min(NR);
                pack_strip(g.b.add(k0 * g.ldb + j), g.ldb, kc, w, strip);
                let mut i = 0;
                while i < g.rows {
                    let t = Tile {
                        a: g.a.add(i * g.k + k0 * MR),
                        b: strip.as_ptr(),
                        kc,
                        c: g.c.add(i * g.ldc + j),
                        ldc: g.ldc,
                        rows: (g.rows - i).min(MR),
                        first,
                    };
                    match (w.div_ceil(8), w % 8 == 0) {
                        (3, true) => tile::<3, false>(&t, w),
                        (3, false) => tile::<3, true>(&t, w),
                        (2, true) => tile::<2, false>(&t, w),
                        (2, false) => tile::<2, true>(&t, w),
                        (_, true) => tile::<1, false>(&t, w),
                        (_, false) => tile::<1, true>(&t, w),
                    }
                    i += MR;
                }
                j += NR;
            }
            k0 += KC;
        }
    }

    /// A strip of `B`, aligned so no row's vector loads split a cache line.
    #[repr(align(64))]
    struct Strip([f32; KC * NR]);

    /// Rows `0..kc` of columns `0..w` of `B` (rows `ldb` apart) into
    /// `strip`, `NR` floats a row, zeros past `w`.
    ///
    /// # Safety
    /// `b` points at `kc` rows of `w` floats `ldb` apart; `kc <= KC`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn pack_strip(
        b: *const f32,
        ldb: usize,
        kc: usize,
        w: usize,
        strip: &mut [f32; KC * NR],
    ) {
        let d = strip.as_mut_ptr();
        if w == NR {
            for kk in 0..kc {
                let (s, o) = (b.add(kk * ldb), d.add(kk * NR));
                _mm256_storeu_ps(o, _mm256_loadu_ps(s));
                _mm256_storeu_ps(o.add(8), _mm256_loadu_ps(s.add(8)));
                _mm256_storeu_ps(o.add(16), _mm256_loadu_ps(s.add(16)));
            }
            return;
        }
        for kk in 0..kc {
            let o = d.add(kk * NR);
            std::ptr::copy_nonoverlapping(b.add(kk * ldb), o, w);
            std::ptr::write_bytes(o.add(w), 0, NR - w);
        }
    }

    /// One `MR x 8·NV` block over one slice of `k`.
    struct Tile {
        a: *const f32,
        /// The packed strip of `B` (`NR` floats a row).
        b: *const f32,
        kc: usize,
        c: *mut f32,
        ldc: usize,
        /// Rows of `C` to store (the panel's padding rows are not).
        rows: usize,
        /// The first slice of `k`: store the sums, else add them to `C`.
        first: bool,
    }

    /// Lane mask of the first `n` of 8 lanes.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn mask(n: usize) -> __m256i {
        let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        _mm256_cmpgt_epi32(_mm256_set1_epi32(n as i32), lanes)
    }

    /// Vector `v` of the row at `p` (the last one masked when `PARTIAL`).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn load<const NV: usize, const PARTIAL: bool>(
        p: *const f32,
        v: usize,
        m: __m256i,
    ) -> __m256 {
        if PARTIAL && v == NV - 1 {
            _mm256_maskload_ps(p.add(8 * v), m)
        } else {
            _mm256_loadu_ps(p.add(8 * v))
        }
    }

    /// # Safety
    /// As [`gemm`]; `w` columns (`8·(NV-1) < w <= 8·NV`, all of the last
    /// vector's lanes unless `PARTIAL`) lie in `B` and `C`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn tile<const NV: usize, const PARTIAL: bool>(t: &Tile, w: usize) {
        let mut acc = [[_mm256_setzero_ps(); NV]; MR];
        let (mut a, mut b) = (t.a, t.b);
        for _ in 0..t.kc {
            let mut bv = [_mm256_setzero_ps(); NV];
            for (v, x) in bv.iter_mut().enumerate() {
                *x = _mm256_loadu_ps(b.add(8 * v));
            }
            for (r, row) in acc.iter_mut().enumerate() {
                let av = _mm256_broadcast_ss(&*a.add(r));
                for (x, &y) in row.iter_mut().zip(&bv) {
                    *x = _mm256_fmadd_ps(av, y, *x);
                }
            }
            a = a.add(MR);
            b = b.add(NR);
        }
        // The mask after the loop: live across it, it made the register
        // allocator spill an accumulator (13 vectors + 3 of B + 1).
        let m = mask(w - 8 * (NV - 1));
        for (r, row) in acc.iter().enumerate().take(t.rows) {
            let c = t.c.add(r * t.ldc);
            for (v, &x) in row.iter().enumerate() {
                let x = match t.first {
                    true => x,
                    false => _mm256_add_ps(x, load::<NV, PARTIAL>(c, v, m)),
                };
                if PARTIAL && v == NV - 1 {
                    _mm256_maskstore_ps(c.add(8 * v), m, x);
                } else {
                    _mm256_storeu_ps(c.add(8 * v), x);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
        let mut c = vec![0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum();
            }
        }
        c
    }

    #[test]
    fn packed_gemm_matches_the_reference_on_every_edge() {
        // Rows off the panel size, columns off the vector and block sizes,
        // k across several slices.
        for (m, k, n) in [
            (1, 1, 1),
            (5, 3, 7),
            (8, 130, 49),
            (13, 300, 25),
            (4, 9, 24),
        ] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7 % 13) as f32) - 6.0).collect();
            let b: Vec<f32> = (0..k * n).map(|i| ((i * 5 % 11) as f32) * 0.5).collect();
            let p = PackedA::pack(&a, m, k);
            let want = reference(&a, &b, m, k, n);
            // The whole matrix, and rows from the second panel on.
            let mut c = vec![f32::NAN; m * n];
            // SAFETY: the sizes above.
            unsafe { p.gemm(0, m, b.as_ptr(), n, n, c.as_mut_ptr(), n) };
            for (x, y) in c.iter().zip(&want) {
                assert!(
                    (x - y).abs() <= 1e-3 * y.abs().max(1.0),
                    "{m}x{k}x{n}: {x} {y}"
                );
            }
            if m > MR {
                let mut c = vec![f32::NAN; (m - MR) * n];
                // SAFETY: the sizes above.
                unsafe { p.gemm(MR, m - MR, b.as_ptr(), n, n, c.as_mut_ptr(), n) };
                for (x, y) in c.iter().zip(&want[MR * n..]) {
                    assert!(
                        (x - y).abs() <= 1e-3 * y.abs().max(1.0),
                        "{m}x{k}x{n} rows 4.."
                    );
                }
            }
            assert_eq!(p.bytes(), PackedA::bytes_for(m, k));
        }
    }
}
