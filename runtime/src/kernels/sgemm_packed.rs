//! A single-precision GEMM whose left operand is packed once, at model load
//! (a convolution's constant filter): `C[rows x n] = A[rows x k] * B[k x n]`
//! with `A` in panels of [`MR`] rows stored k-major (the `MR` values of one
//! `k` index side by side, zero rows padding the last panel), and `B` read
//! row-major with any row stride (an im2col panel, or a 1x1 convolution's
//! input plane) or row by row at given offsets ([`Rows::Offsets`]: a
//! convolution's padded input planes at each tap's offset, no im2col
//! panel; [`Rows::Grid`]: the same, its columns the output positions in
//! runs of an output row): a call never packs the filter.
//!
//! The micro-kernel computes an `MR x NR` block of `C` in registers
//! (AVX2/FMA: 4 rows x 3 vectors of 8 columns, 12 accumulators + 3 vectors
//! of `B` + 1 broadcast of `A` = the 16 registers, written in assembly so
//! none spills; `k` unrolled by 4). `B` is copied per call, `KC x NC` at a
//! time, into contiguous strips of `NR` columns that the kernel reads for
//! every row panel (the only per-call copy: 1/`MR` of the multiply-adds it
//! serves, none of the filter); the row panels go by blocks of `A` that
//! stay in L2 while the strips pass. The CPU's features are detected at run
//! time: with AVX-512F ([`wide`]) the same blocking runs over strips of 48
//! columns, each block taking several row panels at once so that 12 to 24
//! sums are in flight: 8 rows x 3 vectors of 16 columns, 12 x 2 or 12 x 1
//! for a strip's last columns, and vectors along the rows for a strip's
//! last 1 to 8 columns (`thin`) (ResNet-50 at 1 thread on an AVX-512 EPYC:
//! 75 ms with the AVX2 kernel, 50 ms with 4-row blocks; onnxruntime's
//! MLAS has AVX-512 kernels too); with AVX2 and FMA ([`fast`]) the kernel
//! above; else a scalar loop computes the same blocks.
//!
//! With AVX-512, `A` may instead be packed in panels of 16 rows
//! ([`PackedA::pack_wide_rows`]: one vector per `k`, `B`'s values
//! broadcast): for products of at most 12 columns (a 3x3 map), whose `B`
//! is copied k-major first, and for filters of few output channels on any
//! map, whose `B` is read where it lies — no per-call copy at all, the
//! strips' copy being repaid over too few row panels — the sums stored
//! through a 16x16 transpose. And with AVX-512 a product of a short `k`
//! (at most 128: stems, pointwise layers of few channels) reads `B` where
//! it lies in the [`MR`]-row panels' blocks too (`direct`): its `k x 48`
//! block stays in L1 for every row panel.

/// Rows of a packed panel.
pub const MR: usize = 4;
/// Columns of a register block (three AVX vectors).
pub const NR: usize = 24;
/// Most `k` per slice (a longer `k` is cut into equal slices): a strip of
/// `KC x NR` floats (36 KiB) streams from L2 at a fraction of what the
/// kernel can take; longer slices store `C` fewer times (256, 384 and 512
/// measured within noise of each other on this AVX2 VM).
const KC: usize = 384;
/// Columns of `B` packed at a time: `KC x NC` floats (288 KiB) stay in L2.
const NC: usize = 192;
/// Floats of `A` (`MC / kc` rows of a slice) that stay in L2 with the
/// packed block of `B`.
const MC: usize = 32768;

/// A row-major `m x k` matrix in panels of [`MR`] rows, k-major (or of
/// [`WIDE_ROWS`] rows: [`PackedA::pack_wide_rows`]).
#[derive(Debug)]
pub struct PackedA {
    pub m: usize,
    pub k: usize,
    data: Vec<f32>,
    /// Panels of [`WIDE_ROWS`] rows (one AVX-512 vector per `k`).
    wide_rows: bool,
}

/// Rows of a panel of [`PackedA::pack_wide_rows`]: one AVX-512 vector.
pub const WIDE_ROWS: usize = 16;

/// Most columns of a product the wide-row layout is for
/// ([`PackedA::pack_wide_rows`]). Measured with AVX-512 (6 to 8 layers
/// of 3x3 convolutions): 512 -> 512 on 3x3 maps 4.4 -> 2.1 ms and on 2x2
/// 1.88 -> 1.43 ms (onnxruntime 2.7 and 1.75), but 256 -> 256 on 4x4 0.89
/// -> 0.94 ms: 16 columns fill the `MR` panels' strips of 16.
pub const WIDE_ROWS_MAX_N: usize = 12;

/// Bytes of a chunk of wide-row panels that [`avx512::gemm_wide_rows`]
/// keeps in L2 while all of a pointwise product's column blocks pass:
/// half of a 1 MiB L2. Measured on 8 parallel 1x1 layers (weights cold,
/// as in a network), 1 thread: 512 -> 2048 on 7x7 5.65 -> 4.81 ms
/// (onnxruntime 3.91), 2048 -> 512 on 7x7 5.09 -> 4.18 (3.78), hot
/// weights and smaller filters unchanged; ResNet-50 about 3 % faster. A
/// 3x3 convolution's `B` read by taps lost up to 35 % so chunked (its
/// blocks' rows spread over the input planes), so only plain rows are
/// ([`Rows::gapless`]: a strided 1x1 filter's too, 1024 -> 2048 stride 2
/// on 14x14, 8 layers: 10.96 -> 8.93 ms, onnxruntime 8.43).
const CHUNK_BYTES: usize = 256 << 10;

/// The share of the L2 ([`super::cache::l2_bytes`]) that a chunk of
/// wide-row panels of a product reading `B` by taps may fill (`7 / 16`:
/// the rest holds the input planes and the sums' rows).
const TAPS_CHUNK_SHARE: (usize, usize) = (7, 16);

/// The panels of 16 rows the AVX-512 kernels run at once for blocks of
/// `nb` columns (their `G`): 4 up to 6 columns, 3 up to 8, else 2 (at
/// most 28 sums in registers) — `avx512::wide_rows_block`, and
/// `conv_blocked`'s blocks of positions.
pub(super) fn panels_at_once(nb: usize) -> usize {
    match nb {
        0..=6 => 4,
        7 | 8 => 3,
        _ => 2,
    }
}

/// Panels of [`WIDE_ROWS`] rows by `k` per chunk of [`CHUNK_BYTES`]: at
/// least two, as one panel at a time leaves too few sums in flight.
fn chunk_panels(k: usize) -> usize {
    (CHUNK_BYTES / (WIDE_ROWS * 4 * k.max(1))).max(2)
}

impl PackedA {
    /// Pack the row-major `m x k` matrix `a` (`a.len() >= m * k`).
    pub fn pack(a: &[f32], m: usize, k: usize) -> PackedA {
        Self::in_panels(a, m, k, MR)
    }

    /// Pack `a` as [`PackedA::pack`] in panels of [`WIDE_ROWS`] rows, for
    /// products with few columns (at most [`WIDE_ROWS_MAX_N`]: the filter of
    /// a convolution whose output map is 3x3 or smaller) on a CPU with
    /// AVX-512 ([`wide`]; elsewhere the [`MR`] panels). The kernel then loads
    /// 16 rows of one `k` in one vector and multiplies them by each column's
    /// value of `B`, all lanes useful, where strips of 16 columns left 7 of
    /// every 16 lanes idle on a 3x3 map and the [`MR`] panels needed four
    /// loads and three inserts per 16 rows.
    pub fn pack_wide_rows(a: &[f32], m: usize, k: usize) -> PackedA {
        match wide() {
            true => Self::in_panels(a, m, k, WIDE_ROWS),
            false => Self::pack(a, m, k),
        }
    }

    /// `a` in panels of `rows` rows, k-major (zero rows padding the last).
    pub(super) fn in_panels(a: &[f32], m: usize, k: usize, rows: usize) -> PackedA {
        let mut data = vec![0f32; Self::bytes_in_panels(m, k, rows) / std::mem::size_of::<f32>()];
        for (r, row) in a.chunks_exact(k.max(1)).take(m).enumerate() {
            let base = (r / rows) * rows * k + r % rows;
            for (kk, &v) in row.iter().enumerate() {
                data[base + kk * rows] = v;
            }
        }
        PackedA {
            m,
            k,
            data,
            wide_rows: rows == WIDE_ROWS,
        }
    }

    /// The first panel (its `k` rows of the panel's rows, then the next).
    pub(super) fn panels_ptr(&self) -> *const f32 {
        self.data.as_ptr()
    }

    /// Bytes [`PackedA::pack_wide_rows`] allocates for an `m x k` matrix.
    pub fn bytes_for_wide_rows(m: usize, k: usize) -> usize {
        Self::bytes_in_panels(m, k, WIDE_ROWS)
    }

    /// Bytes of an `m x k` matrix in panels of `rows` rows.
    fn bytes_in_panels(m: usize, k: usize, rows: usize) -> usize {
        m.div_ceil(rows) * rows * k * std::mem::size_of::<f32>()
    }

    /// Bytes it holds.
    pub fn bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<f32>()
    }

    /// Bytes [`PackedA::pack`] allocates for an `m x k` matrix.
    pub fn bytes_for(m: usize, k: usize) -> usize {
        Self::bytes_in_panels(m, k, MR)
    }

    /// Bytes of `groups` filters of `m x k` each packed by
    /// [`PackedA::pack_groups`].
    pub fn bytes_for_groups(groups: usize, m: usize, k: usize, wide_rows: bool) -> usize {
        groups
            * match wide_rows {
                true => Self::bytes_for_wide_rows(m, k),
                false => Self::bytes_for(m, k),
            }
    }

    /// A grouped convolution's filter (`groups` row-major `m x k` blocks
    /// one after another) packed group by group: in panels of
    /// [`WIDE_ROWS`] rows ([`PackedA::pack_wide_rows`]) or of [`MR`].
    pub fn pack_groups(
        f: &[f32],
        groups: usize,
        m: usize,
        k: usize,
        wide_rows: bool,
    ) -> Vec<PackedA> {
        f.chunks_exact((m * k).max(1))
            .take(groups)
            .map(|a| match wide_rows {
                true => PackedA::pack_wide_rows(a, m, k),
                false => PackedA::pack(a, m, k),
            })
            .collect()
    }

    /// `C[rows x n] = A[r0..r0 + rows] * B[k x n]` (`C` overwritten).
    ///
    /// # Safety
    /// `r0` is a multiple of the panel's rows ([`MR`], or [`WIDE_ROWS`]
    /// when packed by [`PackedA::pack_wide_rows`]) and `r0 + rows <= m`; `b` points at `k`
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
        self.gemm_rows(r0, rows, Rows::Strided(b, ldb), n, c, ldc)
    }

    /// As [`PackedA::gemm`], with `B`'s rows where `b` says (a convolution's
    /// input planes at each tap's offset: no im2col panel).
    ///
    /// # Safety
    /// As [`PackedA::gemm`], each of `b`'s `k` rows holding `n` floats.
    pub unsafe fn gemm_rows(
        &self,
        r0: usize,
        rows: usize,
        b: Rows,
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
            n,
            c,
            ldc,
        };
        #[cfg(target_arch = "x86_64")]
        if self.wide_rows {
            // SAFETY: only packed so where the CPU has AVX-512F
            // (`pack_wide_rows`); the pointers as above.
            return avx512::gemm_wide_rows(&g);
        }
        #[cfg(target_arch = "x86_64")]
        if wide() {
            // SAFETY: the CPU has AVX-512F; the pointers as above.
            return avx512::gemm(&g);
        }
        #[cfg(target_arch = "x86_64")]
        if fast() {
            // SAFETY: the CPU has AVX2 and FMA; the pointers as above.
            return avx2::gemm(&g);
        }
        scalar(&g);
    }
}

/// A row-major `k x n` matrix — a constant right operand, a fully
/// connected layer's weights — packed once in the strips [`blocked`]
/// copies `B` into on every call: strips of the vector micro-kernel's
/// `nr` columns (48 with AVX-512, 24 with AVX2; zero columns past `n`),
/// each all `k` rows of `nr` floats, 64-byte aligned. The left operand, a
/// few rows of activations, is what a call packs ([`pack_rows`]): `m·k`
/// floats where the `gemm` crate copies all `k·n` of the weights.
#[derive(Debug)]
pub struct PackedB {
    pub k: usize,
    pub n: usize,
    nr: usize,
    data: Vec<Block>,
}

impl PackedB {
    /// The strips' width here: `None` without a vector micro-kernel.
    fn width() -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        {
            match (wide(), fast()) {
                (true, _) => return Some(avx512::NR),
                (false, true) => return Some(NR),
                _ => {}
            }
        }
        None
    }

    /// Bytes [`PackedB::pack`] allocates for a `k x n` matrix (0: it
    /// would not pack).
    pub fn bytes_for(k: usize, n: usize) -> usize {
        Self::width().map_or(0, |nr| {
            n.div_ceil(nr)
                .saturating_mul(k)
                .saturating_mul(nr)
                .saturating_mul(4)
        })
    }

    /// Pack `b`: row-major `k x n`, or `n x k` when `transposed` (`b.len()
    /// >= k * n`). `None` without a vector micro-kernel.
    pub fn pack(b: &[f32], k: usize, n: usize, transposed: bool) -> Option<PackedB> {
        let nr = Self::width()?;
        let floats = n.div_ceil(nr) * k * nr;
        let mut data = vec![Block([0f32; 16]); floats.div_ceil(16)];
        // SAFETY: `data` holds at least `floats` f32s (16 per block).
        let d = unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast::<f32>(), floats) };
        for (s, strip) in d
            .chunks_exact_mut((k * nr).max(1))
            .enumerate()
            .take(n.div_ceil(nr))
        {
            let j0 = s * nr;
            for (kk, row) in strip.chunks_exact_mut(nr).enumerate() {
                for (jj, v) in row.iter_mut().take(n - j0).enumerate() {
                    *v = match transposed {
                        false => b[kk * n + j0 + jj],
                        true => b[(j0 + jj) * k + kk],
                    };
                }
            }
        }
        Some(PackedB { k, n, nr, data })
    }

    /// Bytes it holds.
    pub fn bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<Block>()
    }

    /// Columns a part of a product starts at a multiple of: one vector of
    /// the micro-kernel, a third of a strip. Products split over threads
    /// by these, not by whole strips: 128 columns are two strips and a
    /// third of 32 columns — three parts for two threads, one of which
    /// ran two — but eight vectors, four each.
    pub fn unit(&self) -> usize {
        self.nr / 3
    }

    /// Columns `cols` of `C[m x n] = A · B`, added to `C` when `add`: `a`
    /// is `A` packed by [`pack_rows`] (`m` rows of `self.k`). A strip
    /// `cols` cuts runs from its vector at `cols.start`: the micro-kernel
    /// reads its first `w` columns of every `k` in either case.
    ///
    /// # Safety
    /// `a` holds `m.div_ceil(MR) * MR * k` floats; `c` addresses `m` rows
    /// `ldc` apart holding the columns `cols`; `cols.start` is a multiple
    /// of [`PackedB::unit`] and `cols.end <= self.n`.
    pub unsafe fn gemm(
        &self,
        a: *const f32,
        m: usize,
        cols: std::ops::Range<usize>,
        c: *mut f32,
        ldc: usize,
        add: bool,
    ) {
        debug_assert!(cols.start.is_multiple_of(self.unit()) && cols.end <= self.n);
        let k = self.k;
        if k == 0 {
            if !add {
                for r in 0..m {
                    std::ptr::write_bytes(c.add(r * ldc + cols.start), 0, cols.len());
                }
            }
            return;
        }
        #[cfg(target_arch = "x86_64")]
        {
            let micro = match self.nr == avx512::NR {
                true => avx512::micro(),
                false => avx2::micro(),
            };
            // Per strip, the slices of `k` of [`blocked`], each over every
            // row panel of `A`. The micro-kernel's calls are sound: packed
            // with `nr` only where the CPU has its features (`width`); the
            // pointers as above.
            let nr = self.nr;
            let slices = k.div_ceil(KC);
            let step = k.div_ceil(slices);
            let base = self.data.as_ptr().cast::<f32>();
            for s in cols.start / nr..cols.end.div_ceil(nr) {
                // This strip's columns in `cols`: from `j`, `w` of them,
                // `j - s * nr` into each of its rows.
                let j = cols.start.max(s * nr);
                let w = cols.end.min((s + 1) * nr) - j;
                let mut k0 = 0;
                while k0 < k {
                    let kc = step.min(k - k0);
                    let strip = base.add(s * k * nr + k0 * nr + (j - s * nr));
                    let first = k0 == 0 && !add;
                    if w <= micro.thin_max {
                        let t = Tile {
                            a: a.add(k0 * MR),
                            panels: m.div_ceil(MR),
                            pstride: MR * k,
                            b: strip,
                            kc,
                            c: c.add(j),
                            ldc,
                            rows: m,
                            first,
                        };
                        (micro.thin)(&t, w);
                    } else {
                        let mut i = 0;
                        while i < m {
                            let panels = (micro.panels)(w).min((m - i).div_ceil(MR));
                            let t = Tile {
                                a: a.add(i * k + k0 * MR),
                                panels,
                                pstride: MR * k,
                                b: strip,
                                kc,
                                c: c.add(i * ldc + j),
                                ldc,
                                rows: (m - i).min(MR * panels),
                                first,
                            };
                            (micro.tile)(&t, w);
                            i += MR * panels;
                        }
                    }
                    k0 += kc;
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("PackedB exists only with a vector micro-kernel")
    }
}

/// `alpha · A` (`m` rows of `k` floats, `lda` apart) into the first
/// `m.div_ceil(MR) * MR * k` floats of `d` (grown to hold them) in the
/// [`MR`]-row panels [`PackedB::gemm`] reads (zero rows padding the last).
///
/// # Safety
/// `a` addresses `m` rows of `k` floats `lda` apart.
pub unsafe fn pack_rows(
    a: *const f32,
    lda: usize,
    m: usize,
    k: usize,
    alpha: f32,
    d: &mut Vec<f32>,
) {
    // Grown, never shrunk: one buffer serves products of different sizes
    // without zeroing its tail again (every float of `d[..len]` is written
    // below).
    let len = m.div_ceil(MR) * MR * k;
    if d.len() < len {
        d.resize(len, 0.0);
    }
    // SAFETY: row `r < m` of `a` holds `k` floats (the caller's bound).
    let row = |r: usize| unsafe { std::slice::from_raw_parts(a.add(r * lda), k) };
    for (p, panel) in d[..len].chunks_exact_mut((MR * k).max(1)).enumerate() {
        let r0 = p * MR;
        if r0 + MR <= m {
            let rows: [&[f32]; MR] = std::array::from_fn(|r| row(r0 + r));
            for (kk, out) in panel.chunks_exact_mut(MR).enumerate() {
                for (o, rw) in out.iter_mut().zip(&rows) {
                    *o = alpha * rw[kk];
                }
            }
        } else {
            panel.fill(0.0);
            for r in r0..m {
                for (kk, &v) in row(r).iter().enumerate() {
                    panel[kk * MR + r - r0] = alpha * v;
                }
            }
        }
    }
}

/// Whether the vector kernel runs here (x86-64 with AVX2 and FMA): else
/// the scalar loop, far slower than the `gemm` crate.
pub fn fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the AVX-512 kernel runs here (x86-64 with AVX-512F; `GE_GEMM_ISA=avx2`
/// turns it off to compare the two on one machine).
pub fn wide() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static WIDE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *WIDE.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::env::var("GE_GEMM_ISA").as_deref() != Ok("avx2")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Where the rows of `B` lie.
#[derive(Clone, Copy)]
pub enum Rows<'a> {
    /// Row `kk` at `b + kk * ldb`.
    Strided(*const f32, usize),
    /// Row `kk` at `b + offsets[kk]`.
    Offsets(*const f32, &'a [usize]),
    /// Row `kk` at `b + offsets[kk]`, its columns in runs of `run` floats
    /// `stride` apart, from column `from` of that grid on: column `j` at
    /// `(i / run) * stride + i % run` for `i = from + j` (a convolution's
    /// output positions in its padded input planes, without the columns
    /// of the padding between output rows).
    Grid {
        b: *const f32,
        offsets: &'a [usize],
        run: usize,
        stride: usize,
        from: usize,
    },
}

impl Rows<'_> {
    /// Row `kk`.
    ///
    /// # Safety
    /// `kk` is a row of `B` (below `offsets.len()`), inside its allocation.
    #[inline(always)]
    unsafe fn row(&self, kk: usize) -> *const f32 {
        match *self {
            Rows::Strided(b, ldb) => b.add(kk * ldb),
            Rows::Offsets(b, offsets) | Rows::Grid { b, offsets, .. } => {
                b.add(*offsets.get_unchecked(kk))
            }
        }
    }

    /// Where column `j` lies in a row (floats from [`Rows::row`]).
    #[inline(always)]
    fn column(&self, j: usize) -> usize {
        match *self {
            Rows::Grid {
                run, stride, from, ..
            } => {
                let i = from + j;
                i / run * stride + i % run
            }
            _ => j,
        }
    }

    /// How many of columns `j..n` lie side by side from column `j` on (a
    /// grid's run ends with its output row).
    #[inline(always)]
    fn contiguous(&self, j: usize, n: usize) -> usize {
        match *self {
            Rows::Grid { .. } if self.gapless() => n - j,
            Rows::Grid { run, from, .. } => (run - (from + j) % run).min(n - j),
            _ => n - j,
        }
    }

    /// Whether the columns lie side by side through whole rows: plain rows,
    /// or a grid whose runs are not apart (a pointwise convolution's
    /// stride phase), not a wider filter's taps read at offsets into
    /// padded planes.
    #[inline(always)]
    fn gapless(&self) -> bool {
        match *self {
            Rows::Strided(..) => true,
            Rows::Offsets(..) => false,
            Rows::Grid { run, stride, .. } => run == stride,
        }
    }

    /// Copy columns `j0..j0 + n` of row `kk` to `d`.
    ///
    /// # Safety
    /// As [`Rows::row`] for row `kk`, columns `j0..j0 + n` of it; `d` holds `n` floats apart from `B`.
    unsafe fn copy(&self, kk: usize, j0: usize, n: usize, d: *mut f32) {
        match *self {
            Rows::Grid {
                run, stride, from, ..
            } => {
                let row = self.row(kk);
                let (mut i, mut done) = (from + j0, 0);
                while done < n {
                    let len = (run - i % run).min(n - done);
                    let s = row.add(i / run * stride + i % run);
                    std::ptr::copy_nonoverlapping(s, d.add(done), len);
                    i += len;
                    done += len;
                }
            }
            _ => std::ptr::copy_nonoverlapping(self.row(kk).add(j0), d, n),
        }
    }
}

/// One call's operands: `a` at the first row panel.
struct Gemm<'a> {
    a: *const f32,
    k: usize,
    rows: usize,
    b: Rows<'a>,
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
            let o = g.b.column(j);
            let mut s = 0f32;
            for kk in 0..g.k {
                s = (*panel.add(kk * MR)).mul_add(*g.b.row(kk).add(o), s);
            }
            *g.c.add(r * g.ldc + j) = s;
        }
    }
}

/// One `(MR * panels) x w` block of `C` over one slice of `k`: a
/// micro-kernel's job.
#[cfg(target_arch = "x86_64")]
struct Tile {
    /// The first row panel's slice of `k`; panel `q`'s is `q * pstride`
    /// floats on.
    a: *const f32,
    panels: usize,
    pstride: usize,
    /// The packed strip of `B` (`nr` floats a row, 64-byte aligned).
    b: *const f32,
    kc: usize,
    c: *mut f32,
    ldc: usize,
    /// Rows of `C` to store (the panel's padding rows are not).
    rows: usize,
    /// The first slice of `k`: store the sums, else add them to `C`.
    first: bool,
}

/// A vector micro-kernel for [`blocked`]: the width of its strips, how it
/// packs them, how many row panels its block of `w <= nr` columns takes at
/// once (as many as keep its registers busy), that block.
#[cfg(target_arch = "x86_64")]
struct Micro {
    nr: usize,
    pack: unsafe fn(Rows, usize, usize, usize, usize, *mut f32),
    panels: fn(usize) -> usize,
    tile: unsafe fn(&Tile, usize),
    /// A strip's last columns when there are at most this many, for every
    /// row panel of the block at once (`thin`); 0: none.
    thin_max: usize,
    thin: unsafe fn(&Tile, usize),
}

/// 64 bytes, the alignment of the strips (no vector load of a
/// micro-kernel splits a cache line).
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Block(#[allow(dead_code)] [f32; 16]);

#[cfg(target_arch = "x86_64")]
thread_local! {
    /// The packed block of `B` (`KC x NC` floats), reused across calls.
    static PANEL: std::cell::Cell<Vec<Block>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The blocks of `C`: `NC` columns at a time, then slices of `k` (of
/// equal length, at most [`KC`]), then strips of `nr` columns, then row
/// panels. Each `kc x NC` block of `B` is first copied, row by row,
/// into contiguous `kc x nr` strips (zero columns past `n`): the
/// micro-kernel then reads a strip sequentially from L1 for every row
/// panel, where `B`'s own rows lie a plane apart (a 1x1 convolution's
/// input: one page per row, a TLB miss per load). The copy walks
/// along `B`'s rows, which the hardware prefetcher follows.
///
/// # Safety
/// The CPU has the micro-kernel's features; the pointers as
/// [`PackedA::gemm`].
#[cfg(target_arch = "x86_64")]
unsafe fn blocked(g: &Gemm, micro: &Micro) {
    let nr = micro.nr;
    let mut panel = PANEL.with(|p| p.take());
    panel.resize(KC * NC.next_multiple_of(nr) / 16 + 1, Block([0f32; 16]));
    let strips = panel.as_mut_ptr().cast::<f32>();
    let slices = g.k.div_ceil(KC);
    let step = g.k.div_ceil(slices);
    let mut j0 = 0;
    while j0 < g.n {
        let nc = (g.n - j0).min(NC);
        let mut k0 = 0;
        while k0 < g.k {
            let kc = step.min(g.k - k0);
            (micro.pack)(g.b, k0, j0, kc, nc, strips);
            // Row panels by blocks of `A` that stay in L2 while every
            // strip of the packed block passes.
            let mc = (MC / kc).next_multiple_of(MR);
            let mut i0 = 0;
            while i0 < g.rows {
                let i1 = (i0 + mc).min(g.rows);
                let mut j = 0;
                while j < nc {
                    let w = (nc - j).min(nr);
                    let strip = strips.add(j * kc);
                    if w <= micro.thin_max {
                        let t = Tile {
                            a: g.a.add(i0 * g.k + k0 * MR),
                            panels: (i1 - i0).div_ceil(MR),
                            pstride: MR * g.k,
                            b: strip,
                            kc,
                            c: g.c.add(i0 * g.ldc + j0 + j),
                            ldc: g.ldc,
                            rows: i1 - i0,
                            first: k0 == 0,
                        };
                        (micro.thin)(&t, w);
                        j += nr;
                        continue;
                    }
                    let mut i = i0;
                    while i < i1 {
                        // Never past the block's (or `A`'s) last panel.
                        let panels = (micro.panels)(w).min((i1 - i).div_ceil(MR));
                        let t = Tile {
                            a: g.a.add(i * g.k + k0 * MR),
                            panels,
                            pstride: MR * g.k,
                            b: strip,
                            kc,
                            c: g.c.add(i * g.ldc + j0 + j),
                            ldc: g.ldc,
                            rows: (g.rows - i).min(MR * panels),
                            first: k0 == 0,
                        };
                        (micro.tile)(&t, w);
                        i += MR * panels;
                    }
                    j += nr;
                }
                i0 = i1;
            }
            k0 += kc;
        }
        j0 += nc;
    }
    PANEL.with(|p| p.replace(panel));
}

/// Rows `k0..k0 + kc` of columns `j0..j0 + nc` of `B` into strips of
/// `NR` columns, each `kc x NR` floats, the last one padded with zero
/// columns.
///
/// # Safety
/// `b`'s rows `k0..k0 + kc` hold `j0 + nc` floats each; `d` points at
/// `kc * nc.next_multiple_of(NR)` floats; `nc <= NC`, `kc <= KC`.
#[cfg(target_arch = "x86_64")]
unsafe fn pack<const NR: usize>(b: Rows, k0: usize, j0: usize, kc: usize, nc: usize, d: *mut f32) {
    let full = nc / NR;
    let rest = nc - full * NR;
    for kk in 0..kc {
        for f in 0..full {
            b.copy(k0 + kk, j0 + f * NR, NR, d.add(f * kc * NR + kk * NR));
        }
        if rest > 0 {
            let o = d.add(full * kc * NR + kk * NR);
            b.copy(k0 + kk, j0 + full * NR, rest, o);
            std::ptr::write_bytes(o.add(rest), 0, NR - rest);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Gemm, Micro, Tile, MR, NR};
    use std::arch::asm;
    use std::arch::x86_64::*;

    /// The AVX2 micro-kernel over the shared blocking ([`super::blocked`]).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; the pointers as [`super::PackedA::gemm`].
    pub(super) unsafe fn gemm(g: &Gemm) {
        super::blocked(g, &micro())
    }

    /// The micro-kernel over the shared blocking ([`super::blocked`],
    /// [`super::PackedB`]).
    pub(super) fn micro() -> Micro {
        Micro {
            nr: NR,
            pack: super::pack::<NR>,
            panels: |_| 1,
            tile: tile_any,
            thin_max: 0,
            thin: tile_any,
        }
    }

    /// The block of `w` columns (`w <= NR`): one, two or three vectors.
    ///
    /// # Safety
    /// As [`tile`].
    #[target_feature(enable = "avx2,fma")]
    unsafe fn tile_any(t: &Tile, w: usize) {
        match w.div_ceil(8) {
            3 => tile::<3>(t, w),
            2 => tile::<2>(t, w),
            _ => tile::<1>(t, w),
        }
    }

    /// Lane mask of the first `n` of 8 lanes.
    ///
    /// # Safety
    /// The CPU has AVX2 (the only requirement: no memory is touched).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn mask(n: usize) -> __m256i {
        let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        _mm256_cmpgt_epi32(_mm256_set1_epi32(n as i32), lanes)
    }

    /// One `k` step of the micro-kernel, `$i` steps from the pointers:
    /// `NV` vectors of the strip's row, then each of the 4 rows' `A`
    /// value broadcast and multiplied into its accumulators.
    macro_rules! step {
        (3, $i:literal) => {
            concat!(
                "vmovaps ymm12, [{b} + ",
                $i,
                "*96]\n",
                "vmovaps ymm13, [{b} + ",
                $i,
                "*96 + 32]\n",
                "vmovaps ymm14, [{b} + ",
                $i,
                "*96 + 64]\n",
                "vbroadcastss ymm15, [{a} + ",
                $i,
                "*16]\n",
                "vfmadd231ps ymm0, ymm15, ymm12\n",
                "vfmadd231ps ymm1, ymm15, ymm13\n",
                "vfmadd231ps ymm2, ymm15, ymm14\n",
                "vbroadcastss ymm15, [{a} + ",
                $i,
                "*16 + 4]\n",
                "vfmadd231ps ymm3, ymm15, ymm12\n",
                "vfmadd231ps ymm4, ymm15, ymm13\n",
                "vfmadd231ps ymm5, ymm15, ymm14\n",
                "vbroadcastss ymm15, [{a} + ",
                $i,
                "*16 + 8]\n",
                "vfmadd231ps ymm6, ymm15, ymm12\n",
                "vfmadd231ps ymm7, ymm15, ymm13\n",
                "vfmadd231ps ymm8, ymm15, ymm14\n",
                "vbroadcastss ymm15, [{a} + ",
                $i,
                "*16 + 12]\n",
                "vfmadd231ps ymm9, ymm15, ymm12\n",
                "vfmadd231ps ymm10, ymm15, ymm13\n",
                "vfmadd231ps ymm11, ymm15, ymm14\n",
            )
        };
        (2, $i:literal) => {
            concat!(
                "vmovaps ymm12, [{b} + ",
                $i,
                "*96]\n",
                "vmovaps ymm13, [{b} + ",
                $i,
                "*96 + 32]\n",
                "vbroadcastss ymm15, [{a} + ",
                $i,
                "*16]\n",
                "vfmadd231ps ymm0, ymm15, ymm12\n",
                "vfmadd231ps ymm1, ymm15, ymm13\n",
                "vbroadcastss ymm15, [{a} + ",
                $i,
                "*16 + 4]\n",
                "vfmadd231ps ymm3, ymm15, ymm12\n",
                "vfmadd231ps ymm4, ymm15, ymm13\n",
                "vbroadcastss ymm15, [{a} + ",
                $i,
                "*16 + 8]\n",
                "vfmadd231ps ymm6, ymm15, ymm12\n",
                "vfmadd231ps ymm7, ymm15, ymm13\n",
                "vbroadcastss ymm15, [{a} + ",
                $i,
                "*16 + 12]\n",
                "vfmadd231ps ymm9, ymm15, ymm12\n",
                "vfmadd231ps ymm10, ymm15, ymm13\n",
            )
        };
        (1, $i:literal) => {
            concat!(
                "vmovaps ymm12, [{b} + ",
                $i,
                "*96]\n",
                "vbroadcastss ymm15, [{a} + ",
                $i,
                "*16]\n",
                "vfmadd231ps ymm0, ymm15, ymm12\n",
                "vbroadcastss ymm15, [{a} + ",
                $i,
                "*16 + 4]\n",
                "vfmadd231ps ymm3, ymm15, ymm12\n",
                "vbroadcastss ymm15, [{a} + ",
                $i,
                "*16 + 8]\n",
                "vfmadd231ps ymm6, ymm15, ymm12\n",
                "vbroadcastss ymm15, [{a} + ",
                $i,
                "*16 + 12]\n",
                "vfmadd231ps ymm9, ymm15, ymm12\n",
            )
        };
    }

    /// The `k` loop of an `MR x 8·$nv` block: unrolled by 4, then the
    /// remaining steps one at a time; the sums in `$acc` (`MR` rows of 3
    /// vectors, the unused ones zero).
    macro_rules! k_loop {
        ($nv:tt, $t:expr, $acc:ident) => {
            asm!(
                "vxorps ymm0, ymm0, ymm0",
                "vxorps ymm1, ymm1, ymm1",
                "vxorps ymm2, ymm2, ymm2",
                "vxorps ymm3, ymm3, ymm3",
                "vxorps ymm4, ymm4, ymm4",
                "vxorps ymm5, ymm5, ymm5",
                "vxorps ymm6, ymm6, ymm6",
                "vxorps ymm7, ymm7, ymm7",
                "vxorps ymm8, ymm8, ymm8",
                "vxorps ymm9, ymm9, ymm9",
                "vxorps ymm10, ymm10, ymm10",
                "vxorps ymm11, ymm11, ymm11",
                "test {n4}, {n4}",
                "jz 3f",
                "2:",
                "prefetcht0 [{a} + 512]",
                step!($nv, 0),
                step!($nv, 1),
                step!($nv, 2),
                step!($nv, 3),
                "add {a}, 64",
                "add {b}, 384",
                "dec {n4}",
                "jnz 2b",
                "3:",
                "test {n1}, {n1}",
                "jz 5f",
                "4:",
                step!($nv, 0),
                "add {a}, 16",
                "add {b}, 96",
                "dec {n1}",
                "jnz 4b",
                "5:",
                a = inout(reg) $t.a => _,
                b = inout(reg) $t.b => _,
                n4 = inout(reg) $t.kc / 4 => _,
                n1 = inout(reg) $t.kc % 4 => _,
                out("ymm0") $acc[0][0],
                out("ymm1") $acc[0][1],
                out("ymm2") $acc[0][2],
                out("ymm3") $acc[1][0],
                out("ymm4") $acc[1][1],
                out("ymm5") $acc[1][2],
                out("ymm6") $acc[2][0],
                out("ymm7") $acc[2][1],
                out("ymm8") $acc[2][2],
                out("ymm9") $acc[3][0],
                out("ymm10") $acc[3][1],
                out("ymm11") $acc[3][2],
                out("ymm12") _,
                out("ymm13") _,
                out("ymm14") _,
                out("ymm15") _,
                options(nostack, readonly),
            )
        };
    }

    /// # Safety
    /// As [`gemm`]; `w` columns (`8·(NV-1) < w <= 8·NV`) lie in `C`; the
    /// strip holds `kc` rows of `NR` floats, 32-byte aligned; the panel
    /// `kc` steps of `MR` floats.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn tile<const NV: usize>(t: &Tile, w: usize) {
        let mut acc = [[_mm256_setzero_ps(); 3]; MR];
        // SAFETY: the asm reads `kc` rows of the strip (`NR` floats, the
        // first `8·NV` of them, aligned as the caller promises) and `kc`
        // groups of `MR` floats of the panel (the prefetch may point past
        // it: a hint, never a fault); it writes only its registers.
        match NV {
            3 => k_loop!(3, t, acc),
            2 => k_loop!(2, t, acc),
            _ => k_loop!(1, t, acc),
        }
        let m = mask(w - 8 * (NV - 1));
        let partial = !w.is_multiple_of(8);
        for (r, row) in acc.iter().enumerate().take(t.rows) {
            let c = t.c.add(r * t.ldc);
            for (v, &x) in row.iter().enumerate().take(NV) {
                let last = partial && v == NV - 1;
                let p = c.add(8 * v);
                let x = match (t.first, last) {
                    (true, _) => x,
                    (false, false) => _mm256_add_ps(x, _mm256_loadu_ps(p)),
                    (false, true) => _mm256_add_ps(x, _mm256_maskload_ps(p, m)),
                };
                if last {
                    _mm256_maskstore_ps(p, m, x);
                } else {
                    _mm256_storeu_ps(p, x);
                }
            }
        }
    }
}

/// The AVX-512 kernel: the blocking of [`avx2`], with register blocks of
/// `MR` rows x 3 vectors of 16 columns (12 of the 32 registers accumulate;
/// the compiler keeps them all in registers, no assembly needed) over
/// strips of [`avx512::NR`] columns.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Gemm, Micro, Rows, Tile, MR};
    use std::arch::x86_64::*;

    /// Columns of a register block (three AVX-512 vectors).
    pub(super) const NR: usize = 48;

    /// Most columns of `C` the narrow kernel takes ([`narrow`]).
    const NARROW: usize = 8;

    /// # Safety
    /// The CPU has AVX-512F; the pointers as [`super::PackedA::gemm`].
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn gemm(g: &Gemm) {
        match g.n {
            1 => return narrow::<1, 8>(g),
            2 => return narrow::<2, 8>(g),
            3 => return narrow::<3, 8>(g),
            4 => return narrow::<4, 6>(g),
            5 => return narrow::<5, 4>(g),
            6 => return narrow::<6, 4>(g),
            7 => return narrow::<7, 3>(g),
            NARROW => return narrow::<NARROW, 3>(g),
            _ => {}
        }
        if g.k <= DIRECT_MAX_K {
            return direct(g);
        }
        super::blocked(g, &micro())
    }

    /// The micro-kernel over the shared blocking ([`super::blocked`],
    /// [`super::PackedB`]).
    pub(super) fn micro() -> Micro {
        Micro {
            nr: NR,
            pack,
            panels,
            tile: tile_any,
            thin_max: NARROW,
            thin,
        }
    }

    /// Longest `k` whose products read `B` where it lies ([`direct`]): a
    /// block's `k x 48` floats of it (24 KiB) stay in L1 while every row
    /// panel passes, so the strips' copy buys nothing. Measured on the stems
    /// and pointwise layers of k 16 to 147 (docs/benchmarks.md, seventh
    /// session).
    const DIRECT_MAX_K: usize = 128;

    /// The product with `B` unpacked: each run of its contiguous columns
    /// (a grid's output row, or all of them) in blocks of up to 48, each
    /// block every row panel of `A` over the whole `k` (no slices: `k` is
    /// short), its vectors of `B` loaded from `B`'s rows (masked past the
    /// block's last column). A row's sums are the same chain of
    /// multiply-adds as in [`tile`].
    ///
    /// # Safety
    /// As [`gemm`].
    #[target_feature(enable = "avx512f")]
    unsafe fn direct(g: &Gemm) {
        let mut j = 0;
        while j < g.n {
            let run = g.b.contiguous(j, g.n);
            let end = j + run;
            while j < end {
                let w = (end - j).min(NR);
                let c0 = g.b.column(j);
                let mut i = 0;
                while i < g.rows {
                    let panels = panels(w).min((g.rows - i).div_ceil(MR));
                    match (w.div_ceil(16), panels) {
                        (3, 1) => direct_tile::<3, 1>(g, i, c0, j, w),
                        (3, _) => direct_tile::<3, 2>(g, i, c0, j, w),
                        (2, 1) => direct_tile::<2, 1>(g, i, c0, j, w),
                        (2, 2) => direct_tile::<2, 2>(g, i, c0, j, w),
                        (2, _) => direct_tile::<2, 3>(g, i, c0, j, w),
                        (_, 1) => direct_tile::<1, 1>(g, i, c0, j, w),
                        (_, 2) => direct_tile::<1, 2>(g, i, c0, j, w),
                        (_, _) => direct_tile::<1, 3>(g, i, c0, j, w),
                    }
                    i += MR * panels;
                }
                j += w;
            }
        }
    }

    /// Rows `i..` (`P` panels) by columns `j..j + w` of [`direct`], `B`'s
    /// columns at `c0` in its rows (`16 (NV - 1) < w <= 16 NV`).
    ///
    /// # Safety
    /// As [`direct`]; the panels exist; `B`'s rows hold `w` floats from
    /// `c0`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn direct_tile<const NV: usize, const P: usize>(
        g: &Gemm,
        i: usize,
        c0: usize,
        j: usize,
        w: usize,
    ) {
        let tail = w - 16 * (NV - 1);
        let last: __mmask16 = if tail == 16 { !0 } else { (1u16 << tail) - 1 };
        let lanes = |v: usize| if v == NV - 1 { last } else { !0 };
        let pstride = MR * g.k;
        let a = g.a.add(i * g.k);
        let mut acc = [[[_mm512_setzero_ps(); NV]; MR]; P];
        for kk in 0..g.k {
            let row = g.b.row(kk).add(c0);
            let bv: [__m512; NV] =
                std::array::from_fn(|v| _mm512_maskz_loadu_ps(lanes(v), row.add(16 * v)));
            for (q, panel) in acc.iter_mut().enumerate() {
                let ap = a.add(q * pstride + kk * MR);
                for (r, sums) in panel.iter_mut().enumerate() {
                    let av = _mm512_set1_ps(*ap.add(r));
                    for (x, &y) in sums.iter_mut().zip(&bv) {
                        *x = _mm512_fmadd_ps(av, y, *x);
                    }
                }
            }
        }
        for (q, panel) in acc.iter().enumerate() {
            for (r, sums) in panel.iter().enumerate() {
                let r = i + q * MR + r;
                if r >= g.rows {
                    return;
                }
                let c = g.c.add(r * g.ldc + j);
                for (v, &x) in sums.iter().enumerate() {
                    _mm512_mask_storeu_ps(c.add(16 * v), lanes(v), x);
                }
            }
        }
    }

    /// Row panels a block of `w` columns takes: 24 accumulators for 3 and 2
    /// vectors of columns (8 x 48, 12 x 32), 12 for one (12 x 16) — a
    /// narrow block of one panel would have 4 sums in flight, too few to
    /// hide the multiply-add's latency, and fewer panels load more of `B`
    /// per multiply-add.
    fn panels(w: usize) -> usize {
        match w.div_ceil(16) {
            3 => 2,
            _ => 3,
        }
    }

    /// The product of an `A` packed in panels of [`super::WIDE_ROWS`] rows
    /// ([`super::PackedA::pack_wide_rows`]): `B`'s columns go in blocks of
    /// up to 12 (14 read in place), then `G` panels at a time run the whole
    /// `k`: per step, `G` loads of 16 rows and `NB` broadcasts of `B` for
    /// `G * NB` multiply-adds (at most 28 sums, no spill). A row's sums are the same
    /// chain whichever block computes it.
    ///
    /// With at most [`super::WIDE_ROWS_MAX_N`] columns (a 3x3 map or
    /// smaller), each block is first copied k-major (`NB` floats a row: a
    /// 3x3 map's 576 x 9 floats fit in L1). With more (a filter of few
    /// output channels, packed so by the convolution), the blocks lie
    /// within one run of `B`'s columns (an output row) and the kernel
    /// broadcasts them from `B`'s rows where they are: no copy of `B`,
    /// where the 48-column strips copied all of it for a few row panels.
    ///
    /// # Safety
    /// As [`gemm`], with `g.a` in panels of 16 rows (`g.rows` of them real).
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn gemm_wide_rows(g: &Gemm) {
        if g.n > super::WIDE_ROWS_MAX_N {
            return wide_rows_in_place(g);
        }
        let mut buf = super::PANEL.with(|p| p.take());
        // Blocks of at most 12 columns, as even as they go (16: 8 + 8).
        let blocks = g.n.div_ceil(12);
        let per = g.n.div_ceil(blocks);
        let mut j0 = 0;
        while j0 < g.n {
            let nb = per.min(g.n - j0);
            buf.resize((g.k * nb).div_ceil(16), super::Block([0f32; 16]));
            let bp = buf.as_mut_ptr().cast::<f32>();
            // Where each column lies in a row (a grid's divisions worked
            // out once, not per element).
            let mut cols = [0usize; 12];
            for (j, c) in cols.iter_mut().enumerate().take(nb) {
                *c = g.b.column(j0 + j);
            }
            for kk in 0..g.k {
                let row = g.b.row(kk);
                for (j, &c) in cols[..nb].iter().enumerate() {
                    *bp.add(kk * nb + j) = *row.add(c);
                }
            }
            wide_rows_block(g, Rows::Strided(bp, nb), 0, j0, nb, 0..g.rows.div_ceil(16));
            j0 += nb;
        }
        super::PANEL.with(|p| p.replace(buf));
    }

    /// [`gemm_wide_rows`] reading `B` where it lies: each run of contiguous
    /// columns (a grid's output row, or all of them) in blocks of up to 14
    /// as even as they go (a 28-wide row: 14 + 14; 55: 14 + 3 x 13; 14
    /// measured up to 5 % faster than 12 on 14-wide rows, even elsewhere).
    ///
    /// A pointwise convolution's `B` (plain rows) goes through every block
    /// per [`super::chunk_panels`] of `A` rather than all of `A` per block: a
    /// filter larger than L2 is then read from memory once, not once per
    /// block.
    ///
    /// # Safety
    /// As [`gemm_wide_rows`].
    #[target_feature(enable = "avx512f")]
    unsafe fn wide_rows_in_place(g: &Gemm) {
        let panels = g.rows.div_ceil(16);
        let chunk = match g.b.gapless() {
            true => super::chunk_panels(g.k),
            false => taps_chunk_panels(g, panels),
        };
        let mut p0 = 0;
        while p0 < panels {
            let p1 = (p0 + chunk).min(panels);
            let mut j = 0;
            while j < g.n {
                let run = g.b.contiguous(j, g.n);
                let per = block_width(run);
                let end = j + run;
                while j < end {
                    let nb = per.min(end - j);
                    wide_rows_block(g, g.b, g.b.column(j), j, nb, p0..p1);
                    j += nb;
                }
            }
            p0 = p1;
        }
    }

    /// The columns of the blocks [`wide_rows_in_place`] cuts a run of `run`
    /// contiguous columns into: at most 14, as even as they go.
    fn block_width(run: usize) -> usize {
        run.div_ceil(run.div_ceil(14).max(1))
    }

    /// Panels of `A` per chunk of [`wide_rows_in_place`] reading `B` by
    /// taps (a 3x3 convolution's padded input planes): whole groups of
    /// the panels [`wide_rows_block`] runs at once for the first run's
    /// blocks, as many as [`TAPS_CHUNK_SHARE`] of the L2 holds — so every
    /// block of columns reads them from L2, not the whole filter from L3
    /// per block (a 512 -> 512 3x3 filter on 7x7 is 9.4 MB, read once per
    /// output row). All panels when one group does not fit (what this
    /// path did before chunking at all: on a 1 MiB L2 a 4608-long `k`).
    ///
    /// Measured on an Intel Xeon (AVX-512, 2 MiB L2), 8 copies, 1 thread,
    /// p50 ms, interleaved (docs/benchmarks.md, "fifteenth session"): 512
    /// -> 512 3x3 on 7x7 26.0 -> 16.2 (chunks of 3 panels; onnxruntime
    /// 12.6-15.0), on 14x14 58.2 -> 48.1 (2); 256 -> 256 on 14x14 12.1 ->
    /// 11.7 (6; onnxruntime 11.0); 128 -> 128 on 28x28 unchanged (its 8
    /// panels fit).
    fn taps_chunk_panels(g: &Gemm, panels: usize) -> usize {
        let group = panels_at_once(block_width(g.b.contiguous(0, g.n)));
        let group_bytes = group * 16 * 4 * g.k.max(1);
        let (num, den) = super::TAPS_CHUNK_SHARE;
        let groups = super::super::cache::l2_bytes() * num / den / group_bytes;
        match groups {
            0 => panels,
            n => (n * group).min(panels),
        }
    }

    /// Columns `j0..j0 + nb` of [`gemm_wide_rows`], read from `b`'s rows
    /// `c0` floats on (`nb` contiguous floats a row): [`wide_rows_cols`]
    /// for that count.
    ///
    /// # Safety
    /// As [`gemm_wide_rows`]; `1 <= nb <= 14`, and `b`'s rows hold the
    /// floats read.
    #[target_feature(enable = "avx512f")]
    unsafe fn wide_rows_block(
        g: &Gemm,
        b: Rows,
        c0: usize,
        j0: usize,
        nb: usize,
        panels: std::ops::Range<usize>,
    ) {
        // `G` as `panels_at_once(nb)` says.
        match nb {
            1 => wide_rows_cols::<1, 4>(g, b, c0, j0, panels),
            2 => wide_rows_cols::<2, 4>(g, b, c0, j0, panels),
            3 => wide_rows_cols::<3, 4>(g, b, c0, j0, panels),
            4 => wide_rows_cols::<4, 4>(g, b, c0, j0, panels),
            5 => wide_rows_cols::<5, 4>(g, b, c0, j0, panels),
            6 => wide_rows_cols::<6, 4>(g, b, c0, j0, panels),
            7 => wide_rows_cols::<7, 3>(g, b, c0, j0, panels),
            8 => wide_rows_cols::<8, 3>(g, b, c0, j0, panels),
            9 => wide_rows_cols::<9, 2>(g, b, c0, j0, panels),
            10 => wide_rows_cols::<10, 2>(g, b, c0, j0, panels),
            11 => wide_rows_cols::<11, 2>(g, b, c0, j0, panels),
            12 => wide_rows_cols::<12, 2>(g, b, c0, j0, panels),
            13 => wide_rows_cols::<13, 2>(g, b, c0, j0, panels),
            _ => wide_rows_cols::<14, 2>(g, b, c0, j0, panels),
        }
    }

    /// Steps of `k` (one cache line of each panel a step) that
    /// [`wide_rows_panels`] prefetches its panels ahead. Measured on an Intel
    /// Xeon (2 MiB L2), 1 thread, against none: TResNet-M (gauntlet, 1x1
    /// and 3x3 filters of 256-1024 channels on 4x4 maps, the filters read
    /// from L3 at each call) 15.7 -> 14.2 ms, Inception v3 -8 %, HRNet -5 %,
    /// ResNet-50 -1.5 % (interleaved A/B, `tools/bench/ab_om.py`); 4 and 16
    /// steps within noise of 8.
    const PREFETCH_K: usize = 8;

    use super::panels_at_once;

    /// Columns `j0..j0 + NB` of [`gemm_wide_rows`] (`B`'s values of step
    /// `kk` at `b.row(kk) + c0`), every panel, at most `G` at a time (`G
    /// <= 4`, at most 3 when `NB > 6` and 2 when `NB > 8`: 24 sums at most,
    /// 28 with 14 columns).
    ///
    /// # Safety
    /// As [`wide_rows_block`] with `nb == NB`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn wide_rows_cols<const NB: usize, const G: usize>(
        g: &Gemm,
        b: Rows,
        c0: usize,
        j0: usize,
        panels: std::ops::Range<usize>,
    ) {
        // The panels in as few groups of at most `G` as they go, as even as
        // they go (4 panels of a 64-channel filter: 2 + 2, where 3 + 1 left
        // one pass with a third of the sums in flight).
        let count = panels.len();
        let per = count.div_ceil(count.div_ceil(G));
        let mut p0 = panels.start;
        while p0 < panels.end {
            let take = per.min(panels.end - p0);
            match take {
                1 => wide_rows_panels::<NB, 1>(g, b, c0, j0, p0),
                2 => wide_rows_panels::<NB, 2>(g, b, c0, j0, p0),
                3 => wide_rows_panels::<NB, 3>(g, b, c0, j0, p0),
                _ => wide_rows_panels::<NB, G>(g, b, c0, j0, p0),
            }
            p0 += take;
        }
    }

    /// Panels `p0..p0 + G` of [`wide_rows_cols`].
    ///
    /// # Safety
    /// As [`wide_rows_cols`]; the panels exist.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn wide_rows_panels<const NB: usize, const G: usize>(
        g: &Gemm,
        b: Rows,
        c0: usize,
        j0: usize,
        p0: usize,
    ) {
        let pstride = 16 * g.k;
        let a = g.a.add(p0 * pstride);
        let mut acc = [[_mm512_setzero_ps(); NB]; G];
        for kk in 0..g.k {
            // The panels' floats [`PREFETCH_K`] steps on, into L1: `G`
            // streams of the filter, which a large filter brings from L3
            // (past a panel's end the address is only a hint, never read).
            for q in 0..G {
                let ahead = a.wrapping_add(q * pstride + 16 * (kk + PREFETCH_K));
                _mm_prefetch::<_MM_HINT_T0>(ahead.cast());
            }
            let av: [__m512; G] =
                std::array::from_fn(|q| _mm512_loadu_ps(a.add(q * pstride + 16 * kk)));
            let bk = b.row(kk).add(c0);
            for j in 0..NB {
                let bv = _mm512_set1_ps(*bk.add(j));
                for (sums, &v) in acc.iter_mut().zip(&av) {
                    sums[j] = _mm512_fmadd_ps(v, bv, sums[j]);
                }
            }
        }
        // Each sum vector holds a column's 16 rows: transposed, each row's
        // `NB` columns go in one masked store.
        let lanes = ((1u32 << NB) - 1) as __mmask16;
        for (q, sums) in acc.iter().enumerate() {
            let r0 = (p0 + q) * 16;
            let mut cols = [_mm512_setzero_ps(); 16];
            cols[..NB].copy_from_slice(sums);
            super::super::lanes::transpose16(&mut cols);
            for (r, &v) in cols.iter().enumerate().take(g.rows - r0) {
                _mm512_mask_storeu_ps(g.c.add((r0 + r) * g.ldc + j0), lanes, v);
            }
        }
    }

    /// `C` with `N` (at most [`NARROW`]) columns: a convolution over a map
    /// of 1, 2x2 or 3x3 pixels (late layers of small images, squeeze-excite
    /// blocks, a classifier at batch 1), where a strip of 48 columns would
    /// be mostly zeros. Such a product streams the filter once and does few
    /// multiply-adds per float of it, so it reads `A` as it is packed: one
    /// vector of a row panel holds its 4 rows at 4 steps of `k`. `B` is
    /// first spread to match ([`spread`]: per 4 steps of `k` and column, the
    /// 4 values each repeated over the 4 rows), and each panel's vector is
    /// multiplied by the `N` spread vectors into `N` sums whose four lanes
    /// of 4 rows hold the terms of `k` modulo 4; they are added at the end.
    /// No shuffle and one load per 16 floats of `A`, where gathering 16
    /// rows of one `k` took four loads and three inserts.
    ///
    /// `P` row panels go at once (`P * N` sums in flight, at most 24 of the
    /// 32 registers); the last `panels % P` go one at a time. A row's sum
    /// is the same whichever group computes it.
    ///
    /// # Safety
    /// As [`gemm`], with `g.n == N`.
    #[target_feature(enable = "avx512f")]
    unsafe fn narrow<const N: usize, const P: usize>(g: &Gemm) {
        let mut buf = super::PANEL.with(|p| p.take());
        let sp = spread::<N>(g, &mut buf);
        let panels = g.rows.div_ceil(MR);
        let mut p0 = 0;
        while p0 + P <= panels {
            narrow_panels::<N, P>(g, sp, p0);
            p0 += P;
        }
        while p0 < panels {
            narrow_panels::<N, 1>(g, sp, p0);
            p0 += 1;
        }
        super::PANEL.with(|p| p.replace(buf));
    }

    /// `B` (`k x N`) spread for [`narrow`] into `buf`: for each 4 steps of
    /// `k` from `4q` on and each column `j`, one vector of 16 floats,
    /// `B[4q + l][j]` in floats `4l..4l + 4` (zeros past `k`).
    ///
    /// # Safety
    /// As [`gemm`], with `g.n == N`.
    #[target_feature(enable = "avx512f")]
    unsafe fn spread<const N: usize>(g: &Gemm, buf: &mut Vec<super::Block>) -> *const f32 {
        // Where each column lies in a row of `B` (worked out once: a grid's
        // divisions per element would cost more than the copy).
        let cols: [usize; N] = std::array::from_fn(|j| g.b.column(j));
        let quads = g.k.div_ceil(4);
        buf.resize(quads * N, super::Block([0f32; 16]));
        let d = buf.as_mut_ptr().cast::<f32>();
        for q in 0..quads {
            for l in 0..4 {
                let kk = 4 * q + l;
                for (j, &o) in cols.iter().enumerate() {
                    let v = match kk < g.k {
                        true => *g.b.row(kk).add(o),
                        false => 0.0,
                    };
                    _mm_store_ps(d.add((q * N + j) * 16 + 4 * l), _mm_set1_ps(v));
                }
            }
        }
        d
    }

    /// Row panels `p0..p0 + P` of [`narrow`]'s product, from the spread
    /// `B` at `sp`.
    ///
    /// # Safety
    /// As [`narrow`]; the panels exist; `sp` is [`spread`]'s for `g`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn narrow_panels<const N: usize, const P: usize>(g: &Gemm, sp: *const f32, p0: usize) {
        let pstride = MR * g.k;
        let a = g.a.add(p0 * pstride);
        let mut acc = [[_mm512_setzero_ps(); N]; P];
        let quads = g.k / 4;
        let mut b = sp;
        for q in 0..quads {
            for (p, sums) in acc.iter_mut().enumerate() {
                let av = _mm512_loadu_ps(a.add(p * pstride + 16 * q));
                for (j, x) in sums.iter_mut().enumerate() {
                    *x = _mm512_fmadd_ps(av, _mm512_load_ps(b.add(16 * j)), *x);
                }
            }
            b = b.add(16 * N);
        }
        let tail = g.k % 4;
        if tail > 0 {
            // The panel's last `tail` steps only: past them lies the next
            // panel, or the end of `A`.
            let m = ((1u32 << (4 * tail)) - 1) as __mmask16;
            for (p, sums) in acc.iter_mut().enumerate() {
                let av = _mm512_maskz_loadu_ps(m, a.add(p * pstride + 16 * quads));
                for (j, x) in sums.iter_mut().enumerate() {
                    *x = _mm512_fmadd_ps(av, _mm512_load_ps(b.add(16 * j)), *x);
                }
            }
        }
        let mut out = [0f32; 4];
        for (p, sums) in acc.iter().enumerate() {
            let r0 = (p0 + p) * MR;
            for (j, &x) in sums.iter().enumerate() {
                let lo = _mm_add_ps(
                    _mm512_extractf32x4_ps::<0>(x),
                    _mm512_extractf32x4_ps::<1>(x),
                );
                let hi = _mm_add_ps(
                    _mm512_extractf32x4_ps::<2>(x),
                    _mm512_extractf32x4_ps::<3>(x),
                );
                _mm_storeu_ps(out.as_mut_ptr(), _mm_add_ps(lo, hi));
                for (r, &v) in out.iter().enumerate().take(g.rows - r0) {
                    *g.c.add((r0 + r) * g.ldc + j) = v;
                }
            }
        }
    }

    /// [`super::pack`] into this kernel's strips. A grid's rows (runs as
    /// short as a 7x7 map's 7 floats) are copied piece by piece — at most
    /// 16 floats of one output row within one strip — each piece for every
    /// row of the slice in turn, with the piece's vector mask made once: a
    /// `memcpy` call a run cost more than the copy, and working out the
    /// pieces again for every row cost about as much. A last strip is
    /// zeroed only as far as its last vector reads ([`thin`] reads only
    /// its own columns).
    ///
    /// # Safety
    /// As [`super::pack`].
    #[target_feature(enable = "avx512f")]
    unsafe fn pack(b: Rows, k0: usize, j0: usize, kc: usize, nc: usize, d: *mut f32) {
        // Rows without a grid are one run.
        let (run, stride, from) = match b {
            Rows::Grid {
                run, stride, from, ..
            } => (run, stride, from),
            _ => (j0 + nc, 0, 0),
        };
        // (offset in a grid row, column of the block, floats): a float at
        // least each, so at most `nc <= NC` of them.
        let mut pieces = [(0usize, 0usize, 0usize); super::NC];
        let mut np = 0;
        let (mut r, mut c, mut jj) = ((from + j0) / run, (from + j0) % run, 0);
        while jj < nc && np < pieces.len() {
            let len = (run - c).min(NR - jj % NR).min(nc - jj).min(16);
            pieces[np] = (r * stride + c, jj, len);
            np += 1;
            jj += len;
            c += len;
            if c == run {
                c = 0;
                r += 1;
            }
        }
        for &(src, col, len) in &pieces[..np] {
            let dst = d.add(col / NR * kc * NR + col % NR);
            let m = ((1u32 << len) - 1) as __mmask16;
            for kk in 0..kc {
                let s = b.row(k0 + kk).add(src);
                _mm512_mask_storeu_ps(dst.add(kk * NR), m, _mm512_maskz_loadu_ps(m, s));
            }
        }
        let rest = nc % NR;
        if rest > NARROW && !rest.is_multiple_of(16) {
            let pad = rest.next_multiple_of(16) - rest;
            let m = ((1u32 << pad) - 1) as __mmask16;
            let o = d.add(nc / NR * kc * NR + rest);
            for kk in 0..kc {
                _mm512_mask_storeu_ps(o.add(kk * NR), m, _mm512_setzero_ps());
            }
        }
    }

    /// 16 rows of `A` at `k` index `kk` in one vector: the four panels from
    /// `first` on (`pstride` floats apart), zeros for those past the
    /// `left` there are.
    ///
    /// # Safety
    /// The CPU has AVX-512F; the first `min(left, 4)` panels hold `kk`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn rows16(first: *const f32, pstride: usize, left: usize, kk: usize) -> __m512 {
        let part = |q: usize| match q < left {
            true => _mm_loadu_ps(first.add(q * pstride + kk * MR)),
            false => _mm_setzero_ps(),
        };
        _mm512_insertf32x4::<3>(
            _mm512_insertf32x4::<2>(
                _mm512_insertf32x4::<1>(_mm512_castps128_ps512(part(0)), part(1)),
                part(2),
            ),
            part(3),
        )
    }

    /// A strip's last `w <= NARROW` columns, every row panel of the block:
    /// a block of vectors along the columns would be mostly padding (a
    /// 7x7 map's 49 positions are a strip of 48 and one column, which took
    /// a whole vector per row), so here the vectors run along the rows,
    /// as in [`narrow`] — 16 rows of `A` (four panels) per vector, each
    /// multiplied by the strip's `w` values of `k` broadcast. Each sum is
    /// the same chain of multiply-adds over the slice as in [`tile`], and
    /// is stored or added to `C` as there: a column's result does not
    /// depend on which of the two computed it.
    ///
    /// # Safety
    /// As [`tile`], with `t.panels` the panels of the whole block.
    #[target_feature(enable = "avx512f")]
    unsafe fn thin(t: &Tile, w: usize) {
        match w {
            1 => thin_w::<1, 4>(t),
            2 => thin_w::<2, 4>(t),
            3 => thin_w::<3, 4>(t),
            4 => thin_w::<4, 4>(t),
            5 => thin_w::<5, 2>(t),
            6 => thin_w::<6, 2>(t),
            7 => thin_w::<7, 2>(t),
            _ => thin_w::<8, 2>(t),
        }
    }

    /// [`thin`] for `W` columns, `G` vectors of 16 rows at a time (`G * W`
    /// sums in flight: at least 4, the multiply-add's latency).
    ///
    /// # Safety
    /// As [`thin`], with `W` columns of the strip in `C`.
    #[target_feature(enable = "avx512f")]
    unsafe fn thin_w<const W: usize, const G: usize>(t: &Tile) {
        let mut out = [0f32; 16];
        let mut p0 = 0;
        while p0 < t.panels {
            // Rows `16 g ..` of this block at `kk`.
            let rows_at = |g: usize, kk: usize| {
                let q = p0 + 4 * g;
                rows16(
                    t.a.add(q * t.pstride),
                    t.pstride,
                    t.panels.saturating_sub(q),
                    kk,
                )
            };
            let mut acc = [[_mm512_setzero_ps(); W]; G];
            let mut b = t.b;
            for kk in 0..t.kc {
                for (g, set) in acc.iter_mut().enumerate() {
                    let av = rows_at(g, kk);
                    for (j, x) in set.iter_mut().enumerate() {
                        *x = _mm512_fmadd_ps(av, _mm512_set1_ps(*b.add(j)), *x);
                    }
                }
                b = b.add(NR);
            }
            for (g, set) in acc.iter().enumerate() {
                let r0 = (p0 + 4 * g) * MR;
                if r0 >= t.rows {
                    break;
                }
                for (j, &x) in set.iter().enumerate() {
                    _mm512_storeu_ps(out.as_mut_ptr(), x);
                    for (r, &v) in out.iter().enumerate().take(t.rows - r0) {
                        let c = t.c.add((r0 + r) * t.ldc + j);
                        *c = match t.first {
                            true => v,
                            false => v + *c,
                        };
                    }
                }
            }
            p0 += 4 * G;
        }
    }

    /// The block of `w` columns (`w <= NR`: one, two or three vectors) of
    /// `t.panels` row panels.
    ///
    /// # Safety
    /// As [`tile`].
    #[target_feature(enable = "avx512f")]
    unsafe fn tile_any(t: &Tile, w: usize) {
        match (w.div_ceil(16), t.panels) {
            (3, 1) => tile::<3, 1>(t, w),
            (3, _) => tile::<3, 2>(t, w),
            (2, 1) => tile::<2, 1>(t, w),
            (2, 2) => tile::<2, 2>(t, w),
            (2, _) => tile::<2, 3>(t, w),
            (_, 1) => tile::<1, 1>(t, w),
            (_, 2) => tile::<1, 2>(t, w),
            (_, _) => tile::<1, 3>(t, w),
        }
    }

    /// # Safety
    /// As [`gemm`]; `w` columns (`16·(NV-1) < w <= 16·NV`) lie in `C`; the
    /// strip holds `kc` rows of `NR` floats, 64-byte aligned; each of the
    /// `P` panels (`t.panels >= P`) `kc` steps of `MR` floats.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn tile<const NV: usize, const P: usize>(t: &Tile, w: usize) {
        let mut acc = [[[_mm512_setzero_ps(); NV]; MR]; P];
        let mut b = t.b;
        for kk in 0..t.kc {
            let mut bv = [_mm512_setzero_ps(); NV];
            for (v, x) in bv.iter_mut().enumerate() {
                *x = _mm512_load_ps(b.add(16 * v));
            }
            for (q, panel) in acc.iter_mut().enumerate() {
                let a = t.a.add(q * t.pstride + kk * MR);
                for (r, row) in panel.iter_mut().enumerate() {
                    let av = _mm512_set1_ps(*a.add(r));
                    for (x, &y) in row.iter_mut().zip(&bv) {
                        *x = _mm512_fmadd_ps(av, y, *x);
                    }
                }
            }
            b = b.add(NR);
        }
        let tail = w - 16 * (NV - 1);
        let m: __mmask16 = if tail == 16 { !0 } else { (1u16 << tail) - 1 };
        for (q, panel) in acc.iter().enumerate() {
            for (r, row) in panel.iter().enumerate() {
                let r = q * MR + r;
                if r >= t.rows {
                    return;
                }
                let c = t.c.add(r * t.ldc);
                for (v, &x) in row.iter().enumerate() {
                    let lanes = if v == NV - 1 { m } else { !0 };
                    let p = c.add(16 * v);
                    let x = match t.first {
                        true => x,
                        false => _mm512_add_ps(x, _mm512_maskz_loadu_ps(lanes, p)),
                    };
                    _mm512_mask_storeu_ps(p, lanes, x);
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
    fn a_column_sums_the_same_in_a_thin_strip_as_in_a_full_one() {
        // Column 48 is the whole last strip of an n = 49 product (`thin` on
        // AVX-512) and inside a full strip of an n = 96 one: the same bits,
        // over one slice of `k` and over three.
        for k in [100, 2 * KC + 5] {
            let m = 37;
            let a: Vec<f32> = (0..m * k)
                .map(|i| ((i * 7 % 13) as f32) * 0.37 - 2.1)
                .collect();
            let b: Vec<f32> = (0..k * 96)
                .map(|i| ((i * 5 % 11) as f32) * 0.53 - 1.7)
                .collect();
            let p = PackedA::pack(&a, m, k);
            let mut wide = vec![0f32; m * 96];
            let mut thin = vec![0f32; m * 49];
            // SAFETY: `b` holds `k` rows of 96 floats (the first 49 of each
            // read for `thin`); `wide` and `thin` hold `m` rows of 96 and 49.
            unsafe {
                p.gemm(0, m, b.as_ptr(), 96, 96, wide.as_mut_ptr(), 96);
                p.gemm(0, m, b.as_ptr(), 96, 49, thin.as_mut_ptr(), 49);
            }
            for r in 0..m {
                for j in 0..49 {
                    assert_eq!(
                        wide[r * 96 + j].to_bits(),
                        thin[r * 49 + j].to_bits(),
                        "k {k} row {r} column {j}"
                    );
                }
            }
        }
    }

    #[test]
    fn packed_weights_match_the_reference() {
        // Rows in whole panels and not, a narrow last strip (thin), k in
        // one slice and in three, B row-major and transposed, C
        // overwritten and added to, columns in two runs (two threads), A
        // packed into a longer buffer left over from a larger product.
        for (m, k, n) in [
            (4, 7, 5),
            (8, 100, 49),
            (13, 2 * KC + 5, 130),
            (64, 48, 96),
            (16, 512, 128),
        ] {
            let a: Vec<f32> = (0..m * k)
                .map(|i| ((i * 7 % 13) as f32) * 0.37 - 2.1)
                .collect();
            let b: Vec<f32> = (0..k * n)
                .map(|i| ((i * 5 % 11) as f32) * 0.53 - 1.7)
                .collect();
            let bt: Vec<f32> = (0..n * k).map(|i| b[(i % k) * n + i / k]).collect();
            let want = reference(&a, &b, m, k, n);
            for (transposed, src) in [(false, &b), (true, &bt)] {
                let Some(p) = PackedB::pack(src, k, n, transposed) else {
                    return; // no vector micro-kernel here
                };
                assert_eq!(p.bytes(), PackedB::bytes_for(k, n).next_multiple_of(64));
                let mut rows = vec![f32::NAN; 3 * m.div_ceil(MR) * MR * k + 5];
                // SAFETY: `a` holds `m` rows of `k` floats.
                unsafe { pack_rows(a.as_ptr(), k, m, k, 0.5, &mut rows) };
                // Two runs cut at a strip's edge, at a vector inside a
                // strip, and the whole in one.
                let u = p.unit();
                let cuts = [(n / (3 * u)) * 3 * u, (n / 2 / u) * u, 0];
                for (add, cut) in [false, true].into_iter().flat_map(|a| cuts.map(|c| (a, c))) {
                    let mut c = vec![1f32; m * n];
                    // SAFETY: `rows` is `A` packed for `m` rows of `k`; `c`
                    // holds `m` rows of `n`; the two runs cover the
                    // columns, the second from a multiple of `unit`.
                    unsafe {
                        p.gemm(rows.as_ptr(), m, 0..cut, c.as_mut_ptr(), n, add);
                        p.gemm(rows.as_ptr(), m, cut..n, c.as_mut_ptr(), n, add);
                    }
                    for (i, (&g, &w)) in c.iter().zip(&want).enumerate() {
                        let w = 0.5 * w + if add { 1.0 } else { 0.0 };
                        assert!(
                            (g - w).abs() <= 1e-3 * (1.0 + w.abs()),
                            "{m}x{k}x{n} transposed {transposed} add {add} cut {cut} at {i}: {g} vs {w}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn packed_gemm_matches_the_reference_on_every_edge() {
        // Rows off the panel size, columns off the vector and block sizes,
        // k across several slices.
        let cases = [
            (1, 1, 1),
            (5, 3, 7),
            (8, 130, 49),
            (13, 300, 25),
            (4, 9, 24),
            // Blocks of several row panels (AVX-512: 2 panels for 3 vectors
            // of columns, 3 for 1 or 2), the last one cut short.
            (10, 17, 16),
            (21, 50, 40),
            (27, 40, 33),
            // Several `NC` blocks (a partial strip in each), `KC` slices of
            // equal length, `MC` row blocks (`MC / kc` rows at most).
            (7, 20, 2 * NC + 30),
            (6, 2 * KC + 5, 50),
            (MC / KC + 13, KC, 17),
            // A strip's last 1 to 8 columns (AVX-512: vectors along the
            // rows, `thin`), over several slices of `k` and a partial
            // group of 16 rows.
            (37, 2 * KC + 5, 48 + 1),
            (70, 20, 96 + 8),
            (9, 7, 48 + 5),
        ];
        products_match_the_reference(&cases, PackedA::pack, MR, PackedA::bytes_for);
    }

    #[test]
    fn wide_row_panels_match_the_reference() {
        // Every column count of the copied layout (blocks of up to 12
        // columns, 4, 3 or 2 panels at a time and the rest evenly), rows off
        // 16, `k` from 1; then more than 12 columns, read in place: blocks
        // cut at the grids' runs, 1 to 9 panels (groups of 2 + 2, 3 + 2, 2 +
        // 1, ...), every transposed row count, chunks of panels.
        let cases = [
            (1, 1, 1),
            (17, 9, 1),
            (77, 13, 2),
            (61, 10, 4),
            (130, 7, 6),
            (27, 33, 7),
            (50, 5, 8),
            (33, 40, 9),
            (16, 3, 11),
            (70, 300, 12),
            (1, 5, 13),
            (32, 40, 14),
            (64, 9, 29),
            (80, 17, 56),
            (47, 3, 25),
            (130, 30, 17),
            (15, 100, 100),
            // Plain rows of `B` by chunks of panels (`chunk_panels`): 3 +
            // 3 + 2 panels of k 1100, 2 + 2 + 1 of k 4100.
            (120, 1100, 30),
            (70, 4100, 20),
        ];
        let (rows, bytes): (usize, fn(usize, usize) -> usize) = match wide() {
            true => (WIDE_ROWS, PackedA::bytes_for_wide_rows),
            false => (MR, PackedA::bytes_for),
        };
        products_match_the_reference(&cases, PackedA::pack_wide_rows, rows, bytes);
    }

    /// Each `(m, k, n)` product of `pack`'s matrices (`rows` rows a panel,
    /// `bytes(m, k)` bytes) against the reference: the whole, from the
    /// second panel on, `B` by offsets and as grids.
    fn products_match_the_reference(
        cases: &[(usize, usize, usize)],
        pack: fn(&[f32], usize, usize) -> PackedA,
        rows: usize,
        bytes: fn(usize, usize) -> usize,
    ) {
        for &(m, k, n) in cases {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7 % 13) as f32) - 6.0).collect();
            let b: Vec<f32> = (0..k * n).map(|i| ((i * 5 % 11) as f32) * 0.5).collect();
            let p = pack(&a, m, k);
            let want = reference(&a, &b, m, k, n);
            // The whole matrix, and rows from the second panel on.
            let mut c = vec![f32::NAN; m * n];
            // SAFETY: row 0 is a panel start and `0 + m <= m`; `b` holds
            // `k` rows of `n` floats, `c` `m` rows of `n`, separate vectors.
            unsafe { p.gemm(0, m, b.as_ptr(), n, n, c.as_mut_ptr(), n) };
            for (x, y) in c.iter().zip(&want) {
                assert!(
                    (x - y).abs() <= 1e-3 * y.abs().max(1.0),
                    "{m}x{k}x{n}: {x} {y}"
                );
            }
            if m > rows {
                let mut c = vec![f32::NAN; (m - rows) * n];
                // SAFETY: `rows` is a panel start and `rows + (m - rows) =
                // m`; `b` holds `k x n` floats, `c` `(m - rows) x n`,
                // separate vectors.
                unsafe { p.gemm(rows, m - rows, b.as_ptr(), n, n, c.as_mut_ptr(), n) };
                for (x, y) in c.iter().zip(&want[rows * n..]) {
                    assert!(
                        (x - y).abs() <= 1e-3 * y.abs().max(1.0),
                        "{m}x{k}x{n} rows {rows}.."
                    );
                }
            }
            // B's rows by offsets: row kk stored at row (kk * 7) % k of a
            // copy of B (7 is prime to every k here but 7 and 14).
            if k % 7 != 0 {
                let mut bp = vec![0f32; k * n];
                let offsets: Vec<usize> = (0..k).map(|kk| (kk * 7) % k * n).collect();
                for (kk, &o) in offsets.iter().enumerate() {
                    bp[o..o + n].copy_from_slice(&b[kk * n..(kk + 1) * n]);
                }
                let mut c = vec![f32::NAN; m * n];
                // SAFETY: row 0 is a panel start; every offset leaves `n`
                // floats of `bp`; `c` holds `m x n` floats, apart from `bp`.
                unsafe {
                    p.gemm_rows(
                        0,
                        m,
                        Rows::Offsets(bp.as_ptr(), &offsets),
                        n,
                        c.as_mut_ptr(),
                        n,
                    )
                };
                for (x, y) in c.iter().zip(&want) {
                    assert!(
                        (x - y).abs() <= 1e-3 * y.abs().max(1.0),
                        "{m}x{k}x{n} by offsets: {x} {y}"
                    );
                }
            }
            // B's rows as grids: runs of 1, 7 or 16 columns 3 floats
            // further apart than they are long (NaN between, which no
            // column reads), or side by side (a pointwise filter's stride
            // phase: gap 0), from columns 0 and 5 of the grid on.
            for (run, gap, from) in [(1, 3, 0), (7, 3, 0), (7, 3, 5), (16, 3, 5), (7, 0, 5)] {
                let stride = run + gap;
                let span = (from + n).div_ceil(run) * stride;
                let mut bp = vec![f32::NAN; k * span];
                let offsets: Vec<usize> = (0..k).map(|kk| (k - 1 - kk) * span).collect();
                for (kk, &o) in offsets.iter().enumerate() {
                    for j in 0..n {
                        let i = from + j;
                        bp[o + i / run * stride + i % run] = b[kk * n + j];
                    }
                }
                let mut c = vec![f32::NAN; m * n];
                let rows = Rows::Grid {
                    b: bp.as_ptr(),
                    offsets: &offsets,
                    run,
                    stride,
                    from,
                };
                // SAFETY: row 0 is a panel start; every offset leaves the
                // grid's `n` columns in `bp`; `c` holds `m x n` floats.
                unsafe { p.gemm_rows(0, m, rows, n, c.as_mut_ptr(), n) };
                for (x, y) in c.iter().zip(&want) {
                    assert!(
                        (x - y).abs() <= 1e-3 * y.abs().max(1.0),
                        "{m}x{k}x{n} as a grid of runs of {run} {gap} apart from {from}: {x} {y}"
                    );
                }
            }
            assert_eq!(p.bytes(), bytes(m, k));
        }
    }

    /// Each vector kernel this CPU has (whichever `PackedA::gemm` picks), on
    /// edges of both strip widths (24 and 48 columns).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn each_vector_kernel_matches_the_reference() {
        type Kernel = unsafe fn(&Gemm);
        let mut kernels: Vec<(&str, Kernel)> = vec![];
        if fast() {
            // SAFETY: pushed only when the CPU has AVX2 and FMA; the caller
            // upholds `gemm`'s pointer contract.
            kernels.push(("avx2", |g| unsafe { avx2::gemm(g) }));
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: pushed only when the CPU has AVX-512F; the caller
            // upholds `gemm`'s pointer contract.
            kernels.push(("avx512", |g| unsafe { avx512::gemm(g) }));
        }
        for (m, k, n) in [
            (1, 1, 1),
            // The narrow kernel: 1..=8 columns, rows off 16 and off 4;
            // groups of 8, 6 and 3 row panels with single panels after
            // them, `k` off 4 by 1, 2 and 3.
            (17, 9, 1),
            (77, 13, 1),
            (61, 10, 4),
            (27, 7, 8),
            (33, 40, 3),
            (16, 5, 8),
            (7, 300, 2),
            (4, 7, 16),
            (5, 3, 47),
            (9, 33, 48),
            (3, 10, 49),
            (8, 5, 95),
            (6, 2 * KC + 5, 2 * NC + 31),
        ] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7 % 13) as f32) - 6.0).collect();
            let b: Vec<f32> = (0..k * n).map(|i| ((i * 5 % 11) as f32) * 0.5).collect();
            let p = PackedA::pack(&a, m, k);
            let want = reference(&a, &b, m, k, n);
            for &(isa, kernel) in &kernels {
                let mut c = vec![f32::NAN; m * n];
                let g = Gemm {
                    a: p.data.as_ptr(),
                    k,
                    rows: m,
                    b: Rows::Strided(b.as_ptr(), n),
                    n,
                    c: c.as_mut_ptr(),
                    ldc: n,
                };
                // SAFETY: the CPU has the kernel's features (checked above);
                // `a` is the whole packed matrix, `b` `k x n` floats, `c`
                // `m x n`, separate vectors.
                unsafe { kernel(&g) };
                for (x, y) in c.iter().zip(&want) {
                    assert!(
                        (x - y).abs() <= 1e-3 * y.abs().max(1.0),
                        "{isa} {m}x{k}x{n}: {x} {y}"
                    );
                }
            }
        }
    }
}
