//! Kernels that compute in f32 and, on f64 data, in f64 ([`RealKernel`]):
//! one generic body over the element type ([`Elem`]: `Real` plus its GEMM —
//! the runtime's `sgemm` for f32, the `gemm` crate's f64 kernel for f64).
//! [`run_real`] gives the body its operands and result: f32 (and f16/bf16,
//! converted) through [`F32In`]/[`F32Out`], f64 as f64 copies (f64 models are
//! small; the copy keeps the body free of aliasing concerns).

use super::{sgemm, F32In, F32Out, Par, Slot};
use crate::buffer::{load_f64, store_f64};
use ge_dialects::graph::opkit::Real;
use ge_ir::DType;

/// An element type a [`RealKernel`] computes in.
pub trait Elem: Real + 'static {
    /// `C[m x n] = A[m x k] · B[k x n]` (C overwritten), strides (row,
    /// column) in elements.
    ///
    /// # Safety
    /// The pointers must be valid for the strided ranges.
    unsafe fn gemm(
        mkn: (usize, usize, usize),
        a: *const Self,
        a_strides: (isize, isize),
        b: *const Self,
        b_strides: (isize, isize),
        c: *mut Self,
        c_strides: (isize, isize),
    );
}

impl Elem for f32 {
    unsafe fn gemm(
        (m, k, n): (usize, usize, usize),
        a: *const f32,
        (rsa, csa): (isize, isize),
        b: *const f32,
        (rsb, csb): (isize, isize),
        c: *mut f32,
        (rsc, csc): (isize, isize),
    ) {
        // SAFETY: the caller's contract is sgemm's.
        unsafe { sgemm(m, k, n, 1.0, a, rsa, csa, b, rsb, csb, 0.0, c, rsc, csc) }
    }
}

impl Elem for f64 {
    unsafe fn gemm(
        (m, k, n): (usize, usize, usize),
        a: *const f64,
        (rsa, csa): (isize, isize),
        b: *const f64,
        (rsb, csb): (isize, isize),
        c: *mut f64,
        (rsc, csc): (isize, isize),
    ) {
        if m == 0 || n == 0 {
            return;
        }
        if k == 0 {
            for i in 0..m as isize {
                for j in 0..n as isize {
                    // SAFETY: (i, j) lies in C's m x n range (the contract).
                    unsafe { *c.offset(i * rsc + j * csc) = 0.0 };
                }
            }
            return;
        }
        // SAFETY: the caller's contract; gemm's convention is dst := alpha·dst
        // + beta·lhs·rhs with (column, row) strides, dst not read (alpha 0).
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                c,
                csc,
                rsc,
                false,
                a,
                csa,
                rsa,
                b,
                csb,
                rsb,
                0.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::None,
            )
        }
    }
}

/// A kernel body generic over the element type.
pub trait RealKernel {
    /// Compute `out` (the result's elements) from `ins` (each operand's
    /// elements, in order; their shapes are the slots' of [`run_real`]).
    fn compute<T: Elem>(&self, ins: &[&[T]], out: &mut [T], par: &Par) -> Result<(), String>;
}

/// Run `k` on the operand slots `ins` into result `y`: in f64 when `y` is
/// f64, else in f32.
pub fn run_real<K: RealKernel>(k: &K, ins: &[&Slot], y: &Slot, par: &Par) -> Result<(), String> {
    if y.dtype == DType::F64 {
        let vals: Vec<Vec<f64>> = ins
            .iter()
            .map(|s| {
                let mut v = vec![0f64; s.numel()];
                load_f64(s.dtype, s.ptr, 0, &mut v);
                v
            })
            .collect();
        let refs: Vec<&[f64]> = vals.iter().map(|v| &v[..]).collect();
        let mut out = vec![0f64; y.numel()];
        k.compute(&refs, &mut out, par)?;
        store_f64(y.dtype, y.ptr, 0, &out);
        return Ok(());
    }
    let views: Vec<F32In> = ins.iter().map(|s| F32In::new(s)).collect();
    let refs: Vec<&[f32]> = views.iter().map(F32In::slice).collect();
    let mut yo = F32Out::new(y);
    // SAFETY: the result's f32 view holds `y.numel()` elements (the slot's
    // memory or F32Out's buffer), which no operand view shares (the executor
    // redirects outputs that alias inputs of non-elementwise kernels).
    let out = unsafe { std::slice::from_raw_parts_mut(yo.ptr(), y.numel()) };
    k.compute(&refs, out, par)?;
    yo.finish();
    Ok(())
}
