//! Matrix products on the `gemm` crate: `graph.gemm` (ONNX Gemm with the
//! activation epilogue) and `graph.matmul` / `graph.batch_matmul` (numpy
//! broadcasting over batch dims; a 2-D right operand folds the batch into
//! the rows, so BERT's `[1, S, D] x [D, D]` is one GEMM). Rows or columns are
//! split over the compute pool.

use super::ew::Bcast;
use super::packed_right::{packs, RightCache};
use super::{activation, sgemm, F32In, F32Out, Par, Slot};
use crate::buffer::{class_of, load_f64, load_i64, store_f64, store_i64, Class};
use crate::shared::Shared;
use ge_dialects::graph::linalg::Gemm as GemmOp;
use ge_ir::body::{Body, OpId};

/// (row, column) strides of the m x k left and k x n right operands of a
/// product, stored row-major or (`ta`, `tb`) transposed.
fn operand_strides(
    ta: bool,
    tb: bool,
    m: usize,
    k: usize,
    n: usize,
) -> ((isize, isize), (isize, isize)) {
    let a = if ta { (1, m as isize) } else { (k as isize, 1) };
    let b = if tb { (1, k as isize) } else { (n as isize, 1) };
    (a, b)
}

#[derive(Clone, Debug)]
pub struct Gemm {
    pub alpha: f32,
    pub beta: f32,
    pub ta: bool,
    pub tb: bool,
    pub act: String,
    pub act_alpha: f32,
    /// A constant `B` packed at load for products of few rows
    /// ([`RightCache::prepare`], from the loader).
    pub packed: RightCache,
}

impl Gemm {
    pub fn from_op(b: &Body, o: OpId) -> Gemm {
        let a = GemmOp::attrs(b.op(o));
        Gemm {
            alpha: a.alpha() as f32,
            beta: a.beta() as f32,
            ta: a.trans_a() != 0,
            tb: a.trans_b() != 0,
            act: a.activation().to_string(),
            act_alpha: a.activation_alpha() as f32,
            packed: RightCache::default(),
        }
    }

    pub fn run(&self, ins: &[&Slot], out: &Slot, par: &Par) -> Result<(), String> {
        let (a, b) = (ins[0], ins[1]);
        let (m, n) = match out.shape.as_slice() {
            [m, n] => (*m, *n),
            s => return Err(format!("gemm: result shape {s:?} is not 2-D")),
        };
        let k = match (a.shape.as_slice(), self.ta) {
            ([_, k], false) | ([k, _], true) => *k,
            (s, _) => return Err(format!("gemm: operand shape {s:?} is not 2-D")),
        };
        let ai = F32In::new(a);
        let mut o = F32Out::new(out);
        let op = o.ptr();
        let mut beta = 0.0;
        if let Some(c) = ins.get(2) {
            let bc = Bcast::new(&out.shape, &c.shape)?;
            // SAFETY: the output holds m*n floats.
            let dst = unsafe { std::slice::from_raw_parts_mut(op, m * n) };
            bc.load_f(c.dtype, c.ptr, 0, dst);
            if self.beta != 1.0 {
                dst.iter_mut().for_each(|v| *v *= self.beta);
            }
            beta = 1.0;
        }
        let packed = (!self.ta && packs(m))
            .then(|| self.packed.find(b))
            .flatten();
        if let Some(p) = packed.filter(|p| p.dims() == (k, n)) {
            // SAFETY: A holds m x k floats and the output m x n, apart.
            unsafe { p.product(ai.ptr(), m, op, (self.alpha, beta != 0.0), par)? };
            if self.act != "none" {
                // SAFETY: the output holds m*n floats.
                let dst = unsafe { std::slice::from_raw_parts_mut(op, m * n) };
                dst.chunks_mut(n.max(1))
                    .for_each(|row| activation(&self.act, self.act_alpha, row));
            }
            o.finish();
            return Ok(());
        }
        let bi = F32In::new(b);
        let ((rsa, csa), (rsb, csb)) = operand_strides(self.ta, self.tb, m, k, n);
        let (ap, bp, cp) = (Shared(ai.ptr()), Shared(bi.ptr()), Shared(op));
        let alpha = self.alpha;
        split_run(par, m, n, k, &|r0, r1, c0, c1| {
            // SAFETY: disjoint output blocks per task.
            unsafe {
                if m == 1 {
                    // One row (batch-1 fully connected layers): a matrix-vector
                    // product streams B once; sgemm would pack all of B first.
                    let arow = std::slice::from_raw_parts(ap.p(), k);
                    let crow = std::slice::from_raw_parts_mut(cp.p().add(c0), c1 - c0);
                    gemv(arow, bp.p(), rsb, csb, c0, alpha, beta, crow);
                } else {
                    sgemm(
                        r1 - r0,
                        k,
                        c1 - c0,
                        alpha,
                        ap.p().offset(r0 as isize * rsa),
                        rsa,
                        csa,
                        bp.p().offset(c0 as isize * csb),
                        rsb,
                        csb,
                        beta,
                        cp.p().add(r0 * n + c0),
                        n as isize,
                        1,
                    );
                }
                if self.act != "none" {
                    for r in r0..r1 {
                        let row = std::slice::from_raw_parts_mut(cp.p().add(r * n + c0), c1 - c0);
                        activation(&self.act, self.act_alpha, row);
                    }
                }
            }
        })?;
        o.finish();
        Ok(())
    }
}

/// `c[j] = alpha * sum_k a[k] * B[k, c0 + j] + beta * c[j]` for the columns
/// of `c`, with `B[k, j]` at `b + k * rsb + j * csb`. Contiguous rows of the
/// transposed B (`rsb == 1`) are dot products; contiguous rows of B
/// (`csb == 1`) are scaled row additions; both vectorise.
///
/// # Safety
/// `b` must address every `B[k, c0 + j]` read.
#[allow(clippy::too_many_arguments)]
unsafe fn gemv(
    a: &[f32],
    b: *const f32,
    rsb: isize,
    csb: isize,
    c0: usize,
    alpha: f32,
    beta: f32,
    c: &mut [f32],
) {
    let k = a.len();
    if rsb == 1 {
        let last = c.len().saturating_sub(1);
        let rows = |j: usize| std::slice::from_raw_parts(b.offset((c0 + j) as isize * csb), k);
        for (g, group) in c.chunks_mut(DOT_ROWS).enumerate() {
            // A last, partial group repeats the last row (its sums unused).
            let j = g * DOT_ROWS;
            let sums = dot_rows(a, std::array::from_fn(|q| rows((j + q).min(last))));
            for (cj, s) in group.iter_mut().zip(sums) {
                *cj = alpha * s + if beta == 0.0 { 0.0 } else { beta * *cj };
            }
        }
    } else {
        if beta == 0.0 {
            c.fill(0.0);
        } else if beta != 1.0 {
            c.iter_mut().for_each(|v| *v *= beta);
        }
        let w = c.len();
        if w == 0 {
            return;
        }
        for (kk, &av) in a.iter().enumerate() {
            let s = alpha * av;
            let row = std::slice::from_raw_parts(
                b.offset(kk as isize * rsb + c0 as isize * csb),
                (w - 1) * csb as usize + 1,
            );
            if csb == 1 {
                for (o, &x) in c.iter_mut().zip(row) {
                    *o += s * x;
                }
            } else {
                for (j, o) in c.iter_mut().enumerate() {
                    *o += s * row[j * csb as usize];
                }
            }
        }
    }
}

/// Rows of the transposed `B` a matrix-vector pass reads at once: each
/// slice of `a` loaded once for them, and as many streams of the weights in
/// flight (ResNet-50's 2048 -> 1000 classifier, its weights evicted from L3
/// by the convolutions' each run: 326 µs with 4 rows, 266-301 with 8, 280
/// with 16, whose row pointers no longer fit the registers; with the
/// weights in L3 8 rows are 3 % slower than 4).
const DOT_ROWS: usize = 8;

/// `out[q] = a . rows[q]` for [`DOT_ROWS`] rows of `a.len()` floats each.
/// Batch-1 classifiers stream their weights once through here: with
/// AVX-512, 16 partial sums a row and one load of `a` for all the rows
/// (MobileNetV3's 576 -> 1024 took 36 µs one row at a time with eight sums
/// in the baseline ISA, now 23; onnxruntime 28); else eight sums a row.
fn dot_rows(a: &[f32], rows: [&[f32]; DOT_ROWS]) -> [f32; DOT_ROWS] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F.
        return unsafe { dot_rows_avx512(a, rows) };
    }
    rows.map(|r| dot(a, r))
}

/// [`dot_rows`] with AVX-512F: per 16 floats of `a`, one load of it and one
/// multiply-add per row; the last `k % 16` by masked loads.
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn dot_rows_avx512(a: &[f32], rows: [&[f32]; DOT_ROWS]) -> [f32; DOT_ROWS] {
    use std::arch::x86_64::*;
    let k = a.len();
    let rows = rows.map(|r| &r[..k]);
    // Two sums a row over whole pairs of vectors (16 chains in flight, no
    // mask in the loop: VGG's 25088 -> 256 classifier streamed its 25 MB at
    // 29 GB/s with one masked sum a row), then one over the rest.
    let mut acc = [[_mm512_setzero_ps(); DOT_ROWS]; 2];
    let pairs = k / 32 * 32;
    let mut i = 0;
    while i < pairs {
        // SAFETY: lanes `i..i + 32` lie below `k`, which `a` and every row
        // (cut to `k` above) hold.
        unsafe {
            let x0 = _mm512_loadu_ps(a.as_ptr().add(i));
            let x1 = _mm512_loadu_ps(a.as_ptr().add(i + 16));
            for (q, r) in rows.iter().enumerate() {
                acc[0][q] = _mm512_fmadd_ps(x0, _mm512_loadu_ps(r.as_ptr().add(i)), acc[0][q]);
                acc[1][q] = _mm512_fmadd_ps(x1, _mm512_loadu_ps(r.as_ptr().add(i + 16)), acc[1][q]);
            }
        }
        i += 32;
    }
    while i < k {
        let m: __mmask16 = match k - i {
            n if n >= 16 => !0,
            n => (1u16 << n) - 1,
        };
        // SAFETY: lanes `i..i + 16` masked to those below `k`, which `a`
        // and every row (cut to `k` above) hold.
        unsafe {
            let x = _mm512_maskz_loadu_ps(m, a.as_ptr().add(i));
            for (s, r) in acc[0].iter_mut().zip(&rows) {
                *s = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(m, r.as_ptr().add(i)), *s);
            }
        }
        i += 16;
    }
    std::array::from_fn(|q| _mm512_reduce_add_ps(_mm512_add_ps(acc[0][q], acc[1][q])))
}

/// `a . row` with eight partial sums (the loop vectorises: float adds do
/// not reassociate).
fn dot(a: &[f32], row: &[f32]) -> f32 {
    let k = a.len();
    let mut acc = [0f32; 8];
    let (body, tail) = (k / 8 * 8, k % 8);
    for (x, y) in a[..body].chunks_exact(8).zip(row[..body].chunks_exact(8)) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for t in 0..tail {
        s += a[body + t] * row[body + t];
    }
    s
}

/// Split an `m x n` product over the pool: row blocks when there are many
/// rows, else column blocks.
fn split_run(
    par: &Par,
    m: usize,
    n: usize,
    k: usize,
    f: &(dyn Fn(usize, usize, usize, usize) + Sync),
) -> Result<(), String> {
    let t = par.threads();
    let work = m * n * k;
    if t <= 1 || work < 1 << 16 {
        f(0, m, 0, n);
        return Ok(());
    }
    let parts = t * 2;
    // Split the longer side: every part packs the whole of the other operand
    // (a row split re-packs all of B per part — BERT's [128 x 768] x
    // [768 x 3072] would pack its weights four times).
    let by_rows = match m >= n {
        true => m >= parts * 4,
        false => n < parts * 16 && m >= parts * 4,
    };
    if by_rows {
        let rb = m.div_ceil(parts);
        par.run(m.div_ceil(rb), true, &|i| {
            f(i * rb, ((i + 1) * rb).min(m), 0, n);
            Ok(())
        })
    } else {
        let cb = n.div_ceil(parts).max(16);
        par.run(n.div_ceil(cb), true, &|i| {
            f(0, m, i * cb, ((i + 1) * cb).min(n));
            Ok(())
        })
    }
}

/// numpy matmul (with optional transposes of the last two dims).
#[derive(Clone, Debug)]
pub struct MatMul {
    pub ta: bool,
    pub tb: bool,
    /// A constant right operand packed at load for products of few rows
    /// ([`RightCache::prepare`], from the loader).
    pub packed: RightCache,
}

impl MatMul {
    pub fn new(ta: bool, tb: bool) -> MatMul {
        MatMul {
            ta,
            tb,
            packed: RightCache::default(),
        }
    }

    pub fn run(&self, ins: &[&Slot], out: &Slot, par: &Par) -> Result<(), String> {
        let (a, b) = (ins[0], ins[1]);
        let dims = self.dims(&a.shape, &b.shape)?;
        let (m, k, n, nb) = (dims.m, dims.k, dims.n, dims.nb);
        if out.numel() != nb * m * n {
            return Err(format!(
                "matmul: result {:?} does not hold {nb} x {m} x {n}",
                out.shape
            ));
        }
        match class_of(out.dtype) {
            Some(Class::D) => return self.run_f64(a, b, out, &dims),
            Some(Class::I) => return self.run_int(a, b, out, &dims),
            _ => {}
        }
        let Dims { pa, pb, obatch, .. } = dims;
        let r = obatch.len();
        let bcount: usize = pb.iter().product();
        let ai = F32In::new(a);
        let mut o = F32Out::new(out);
        let packed = (bcount == 1 && !self.ta)
            .then(|| self.packed.find(b))
            .flatten();
        if let Some(p) = packed.filter(|p| p.dims() == (k, n) && packs(nb * m)) {
            // SAFETY: A holds nb*m rows of k floats (one B for every batch:
            // the batch folds into the rows), the output nb*m x n, apart.
            unsafe { p.product(ai.ptr(), nb * m, o.ptr(), (1.0, false), par)? };
            o.finish();
            return Ok(());
        }
        let bi = F32In::new(b);
        let (ap, bp, cp) = (Shared(ai.ptr()), Shared(bi.ptr()), Shared(o.ptr()));
        let ((rsa, csa), (rsb, csb)) = operand_strides(self.ta, self.tb, m, k, n);
        if bcount == 1 && !self.ta {
            // Fold the batch into the rows: one (nb*m) x k by k x n product.
            let rows = nb * m;
            // SAFETY: split_run hands out disjoint blocks [r0, r1) x [c0, c1)
            // of the (nb*m) x n output; A holds nb*m*k and B k*n floats (their
            // slots have the shapes the kernel was built for).
            split_run(par, rows, n, k, &|r0, r1, c0, c1| unsafe {
                sgemm(
                    r1 - r0,
                    k,
                    c1 - c0,
                    1.0,
                    ap.p().add(r0 * k),
                    rsa,
                    csa,
                    bp.p().offset(c0 as isize * csb),
                    rsb,
                    csb,
                    0.0,
                    cp.p().add(r0 * n + c0),
                    n as isize,
                    1,
                );
            })?;
            o.finish();
            return Ok(());
        }
        let ast = ge_ir::tensor::strides(&pa);
        let bst = ge_ir::tensor::strides(&pb);
        let ost = ge_ir::tensor::strides(&obatch);
        let offs = |i: usize| -> (usize, usize) {
            let (mut ao, mut bo) = (0, 0);
            for d in 0..r {
                let idx = (i / ost[d]) % obatch[d];
                if pa[d] != 1 {
                    ao += idx * ast[d];
                }
                if pb[d] != 1 {
                    bo += idx * bst[d];
                }
            }
            (ao * m * k, bo * k * n)
        };
        let parallel_batches = nb >= par.threads() && nb > 1;
        par.run(nb, parallel_batches && nb * m * n * k > 1 << 16, &|i| {
            let (ao, bo) = offs(i);
            let inner = if parallel_batches { &Par::NONE } else { par };
            // SAFETY: batch i's m x k, k x n and m x n matrices start at the
            // offsets `offs` computes inside their slots; split_run's blocks
            // are disjoint within the batch and batches write disjoint outputs.
            split_run(inner, m, n, k, &|r0, r1, c0, c1| unsafe {
                sgemm(
                    r1 - r0,
                    k,
                    c1 - c0,
                    1.0,
                    ap.p().add(ao).offset(r0 as isize * rsa),
                    rsa,
                    csa,
                    bp.p().add(bo).offset(c0 as isize * csb),
                    rsb,
                    csb,
                    0.0,
                    cp.p().add(i * m * n + r0 * n + c0),
                    n as isize,
                    1,
                );
            })
        })?;
        o.finish();
        Ok(())
    }
}

/// The shapes of a (batched) matrix product: `m x k` by `k x n`, each
/// operand's batch dims padded to the result's rank, the result's batch
/// dims (broadcast) and their product.
struct Dims {
    m: usize,
    k: usize,
    n: usize,
    pa: Vec<usize>,
    pb: Vec<usize>,
    obatch: Vec<usize>,
    nb: usize,
}

impl MatMul {
    /// f64 operands at f64 precision: the `gemm` crate's f64 kernel, one
    /// batch after another (f64 models are small; no tiling over the pool).
    fn run_f64(&self, a: &Slot, b: &Slot, out: &Slot, d: &Dims) -> Result<(), String> {
        let load = |s: &Slot| {
            let mut v = vec![0f64; s.numel()];
            load_f64(s.dtype, s.ptr, 0, &mut v);
            v
        };
        let (av, bv) = (load(a), load(b));
        let (m, k, n) = (d.m, d.k, d.n);
        let mut cv = vec![0f64; d.nb * m * n];
        let ((rsa, csa), (rsb, csb)) = operand_strides(self.ta, self.tb, m, k, n);
        let (ast, bst, ost) = (
            ge_ir::tensor::strides(&d.pa),
            ge_ir::tensor::strides(&d.pb),
            ge_ir::tensor::strides(&d.obatch),
        );
        for i in 0..d.nb {
            // Batch i's operand matrices (broadcast dims of size 1 repeat).
            let (mut ao, mut bo) = (0, 0);
            for t in 0..d.obatch.len() {
                let idx = (i / ost[t]) % d.obatch[t];
                ao += if d.pa[t] != 1 { idx * ast[t] } else { 0 };
                bo += if d.pb[t] != 1 { idx * bst[t] } else { 0 };
            }
            if m * n * k == 0 {
                continue;
            }
            // SAFETY: batch i's m x k and k x n matrices start at
            // ao*m*k and bo*k*n inside `av` and `bv` (their numel are the
            // operands' batch products times m*k and k*n, `dims`); its m x n
            // result at i*m*n inside `cv` (nb*m*n elements).
            unsafe {
                gemm::gemm(
                    m,
                    n,
                    k,
                    cv.as_mut_ptr().add(i * m * n),
                    1,
                    n as isize,
                    false,
                    av.as_ptr().add(ao * m * k),
                    csa,
                    rsa,
                    bv.as_ptr().add(bo * k * n),
                    csb,
                    rsb,
                    0.0,
                    1.0,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                )
            };
        }
        store_f64(out.dtype, out.ptr, 0, &cv);
        Ok(())
    }

    /// Integer operands: the reference's own loop in wrapping i64
    /// (`ge_dialects::graph::linalg::batched`), then wrapped to the dtype.
    fn run_int(&self, a: &Slot, b: &Slot, out: &Slot, d: &Dims) -> Result<(), String> {
        let load = |s: &Slot| {
            let mut v = vec![0i64; s.numel()];
            load_i64(s.dtype, s.ptr, 0, &mut v);
            v
        };
        let (av, bv) = (load(a), load(b));
        let (_, c) = ge_dialects::graph::linalg::batched(
            &av,
            &d.pa,
            &bv,
            &d.pb,
            (d.m, d.k, d.n),
            self.ta,
            self.tb,
        )?;
        if c.len() != out.numel() {
            return Err(format!(
                "matmul: result {:?} does not hold {} elements",
                out.shape,
                c.len()
            ));
        }
        store_i64(out.dtype, out.ptr, 0, &c);
        Ok(())
    }

    fn dims(&self, a_shape: &[usize], b_shape: &[usize]) -> Result<Dims, String> {
        // Promote rank-1 operands.
        let mut ash = a_shape.to_vec();
        let mut bsh = b_shape.to_vec();
        if ash.len() == 1 {
            ash.insert(0, 1);
        }
        if bsh.len() == 1 {
            bsh.push(1);
        }
        let (ra, rb) = (ash.len(), bsh.len());
        let (m, k) = if self.ta {
            (ash[ra - 1], ash[ra - 2])
        } else {
            (ash[ra - 2], ash[ra - 1])
        };
        let (k2, n) = if self.tb {
            (bsh[rb - 1], bsh[rb - 2])
        } else {
            (bsh[rb - 2], bsh[rb - 1])
        };
        if k != k2 {
            return Err(format!(
                "matmul: inner dims differ ({a_shape:?} x {b_shape:?})"
            ));
        }
        let abatch = &ash[..ra - 2];
        let bbatch = &bsh[..rb - 2];
        let r = abatch.len().max(bbatch.len());
        let pad = |s: &[usize]| {
            let mut v = vec![1; r - s.len()];
            v.extend_from_slice(s);
            v
        };
        let (pa, pb) = (pad(abatch), pad(bbatch));
        let mut obatch = vec![];
        for (&x, &y) in pa.iter().zip(&pb) {
            if x != y && x != 1 && y != 1 {
                return Err(format!(
                    "matmul: batch dims {a_shape:?} and {b_shape:?} do not broadcast"
                ));
            }
            obatch.push(x.max(y));
        }
        let nb: usize = obatch.iter().product();
        Ok(Dims {
            m,
            k,
            n,
            pa,
            pb,
            obatch,
            nb,
        })
    }
}
