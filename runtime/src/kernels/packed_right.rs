//! Products whose right operand is a constant — a fully connected layer's
//! weights in `graph.matmul` and `graph.gemm` — with that operand packed
//! once, at load ([`PackedB`]), as onnxruntime packs its weights at
//! session creation.
//!
//! The `gemm` crate copies its right operand into its own panels on every
//! call. With many rows that copy is a small part of the product; with a
//! few (a batch of 4 or 8, a short sequence) it is not. Here the weights
//! `B` (`k x n`) are packed at load into the strips of the packed GEMM's
//! micro-kernel — the strips its products with a packed filter copy `B`
//! into on every call; a product packs only its left operand, `m·k`
//! floats, into row panels ([`pack_rows`]) and runs the same micro-kernel
//! ([`PackedB::gemm`]). Which products do: [`packs`].

use super::prepared::Prepared;
use super::sgemm_packed::{pack_rows, PackedB, MR};
use super::{F32In, Par, Slot};
use crate::buffer::{class_of, Class};
use crate::shared::Shared;
use std::cell::RefCell;

/// Most rows of the left operand for which a product runs on the packed
/// weights ([`packs`]).
pub const MAX_ROWS: usize = 64;

/// Whether a product of `rows` rows runs on weights packed at load: up to
/// [`MAX_ROWS`] rows in whole panels of [`MR`]. Measured with AVX-512
/// against the `gemm` crate (docs/benchmarks.md, "Weights of matrix
/// products packed at load"): 8 rows by 512 x 512 weights -19 %, 4 by 96
/// x 384 -10 %, 64 by 256 x 256 -6 %, 16 by 384 x 1536 even; but 17 rows
/// lost 10-20 %, the last panel's one row costing as much as four (a
/// kernel for the last rows alone, over several strips, still lost
/// 8-12 %: one row streams all of `B` for one multiply-add per load), and
/// more rows repay the `gemm` crate's copy of the weights.
pub fn packs(rows: usize) -> bool {
    (MR..=MAX_ROWS).contains(&rows) && rows.is_multiple_of(MR)
}

thread_local! {
    /// `A` packed by [`pack_rows`] for [`PackedRight::product`], per
    /// calling thread.
    static ROWS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// One constant right operand, packed in the micro-kernel's strips.
#[derive(Debug)]
pub struct PackedRight(PackedB);

impl PackedRight {
    /// `c = alpha · a · B`, plus `c` when `add`, for `a` of `m` rows (`k`
    /// floats each, contiguous) and `c` of `m` rows of `n` (contiguous):
    /// `alpha · a` packed once, then the columns split over the pool.
    ///
    /// # Safety
    /// `a` addresses `m · k` floats and `c` `m · n`, not overlapping.
    pub unsafe fn product(
        &self,
        a: *const f32,
        m: usize,
        c: *mut f32,
        (alpha, add): (f32, bool),
        par: &Par,
    ) -> Result<(), String> {
        let (k, n) = (self.0.k, self.0.n);
        ROWS.with(|rows| {
            let mut rows = rows.borrow_mut();
            // SAFETY: `a` holds `m` rows of `k` floats (the caller's bound).
            unsafe { pack_rows(a, k, m, k, alpha, &mut rows) };
            let (ap, cp) = (Shared(rows.as_ptr()), Shared(c));
            // Runs of whole vectors of columns ([`PackedB::unit`]); one
            // unless the product is worth the pool's start (as
            // `linalg::split_run`).
            let unit = self.0.unit();
            let units = n.div_ceil(unit);
            let parts = match par.threads() > 1 && m * n * k >= 1 << 16 {
                true => (par.threads() * 2).min(units),
                false => 1,
            };
            let per = units.div_ceil(parts.max(1)).max(1) * unit;
            par.run(n.div_ceil(per), parts > 1, &|p| {
                // SAFETY: `rows` is `A` packed for `m` rows of `k`; the
                // caller's bound on `c`; each part writes its own columns,
                // from a multiple of `unit`, below `n`.
                unsafe {
                    self.0
                        .gemm(ap.p(), m, p * per..((p + 1) * per).min(n), cp.p(), n, add)
                };
                Ok(())
            })
        })
    }

    /// The product's `k` and `n`.
    pub fn dims(&self) -> (usize, usize) {
        (self.0.k, self.0.n)
    }
}

/// The constant right operands of a product kernel packed at load.
pub type RightCache = Prepared<PackedRight>;

impl Prepared<PackedRight> {
    /// Pack the constant right operand `b` — `k x n`, or `n x k` when `tb`
    /// (leading dims of 1 allowed) — of products of `rows` rows whose left
    /// operand is not transposed (`ta`), if [`packs`] says so, the CPU has
    /// the packed GEMM's kernels and the copy fits `budget` bytes. Returns
    /// the bytes it allocated.
    pub fn prepare(&self, b: &Slot, (ta, tb): (bool, bool), rows: usize, budget: usize) -> usize {
        let r = b.shape.len();
        if ta || r < 2 || b.shape[..r - 2].iter().any(|&d| d != 1) || b.ptr.is_null() {
            return 0;
        }
        let (k, n) = match tb {
            false => (b.shape[r - 2], b.shape[r - 1]),
            true => (b.shape[r - 1], b.shape[r - 2]),
        };
        let bytes = PackedB::bytes_for(k, n);
        let useful = packs(rows) && bytes > 0;
        if !useful || !matches!(class_of(b.dtype), Some(Class::F)) || bytes > budget {
            return 0;
        }
        if self.find(b).is_some() {
            return 0;
        }
        let values = F32In::new(b);
        let Some(packed) = PackedB::pack(values.slice(), k, n, tb) else {
            return 0;
        };
        let bytes = packed.bytes();
        self.insert(b, PackedRight(packed), bytes)
    }
}
