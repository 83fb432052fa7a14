//! Max / average pooling (NCHW) and global pooling, one plane per task.
//! Pools with non-negative pads take a vectorised path ([`pool_plane`]):
//! the plane padded with the pool's neutral value and split into column
//! phases, so every tap reads a contiguous run. With AVX-512, small output
//! planes go to `pool_lanes.rs` (16 channels in the lanes) and max pools of
//! wide rows to `pool_rows.rs` (along rows, then down columns).

use super::norm::RedKind;
use super::{F32In, F32Out, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::nn::{AvgPool2dAttrView, MaxPool2dAttrView};
use std::cell::RefCell;

#[derive(Clone, Debug)]
pub struct Pool {
    pub avg: bool,
    pub kernel: [isize; 2],
    pub strides: [isize; 2],
    pub pads: [isize; 4],
    pub dilations: [isize; 2],
    pub include_pad: bool,
}

impl Pool {
    /// A max pool from its attributes.
    pub fn max(a: MaxPool2dAttrView) -> Pool {
        Pool::new(
            false,
            a.kernel_shape(),
            a.strides(),
            a.pads(),
            a.dilations(),
            false,
        )
    }

    /// An average pool from its attributes.
    pub fn avg(a: AvgPool2dAttrView) -> Pool {
        Pool::new(
            true,
            a.kernel_shape(),
            a.strides(),
            a.pads(),
            a.dilations(),
            a.count_include_pad() != 0,
        )
    }

    fn new(
        avg: bool,
        kernel: Option<Vec<i64>>,
        strides: Vec<i64>,
        p: Vec<i64>,
        dilations: Vec<i64>,
        include_pad: bool,
    ) -> Pool {
        let two = |v: Vec<i64>| {
            [
                v.first().copied().unwrap_or(1) as isize,
                v.get(1).copied().unwrap_or(1) as isize,
            ]
        };
        let pg = |i: usize| p.get(i).copied().unwrap_or(0) as isize;
        Pool {
            avg,
            kernel: two(kernel.unwrap_or_else(|| vec![1, 1])),
            strides: two(strides),
            pads: [pg(0), pg(1), pg(2), pg(3)],
            dilations: two(dilations),
            include_pad,
        }
    }

    pub fn run(&self, x: &Slot, out: &Slot, par: &Par) -> Result<(), String> {
        let [n, c, h, w] = super::conv::dims4(&x.shape)?;
        let [_, _, oh, ow] = super::conv::dims4(&out.shape)?;
        let xi = F32In::new(x);
        let mut o = F32Out::new(out);
        let (xp, op) = (Shared(xi.ptr()), Shared(o.ptr()));
        // The fast paths walk every tap of a window (or pad the plane to
        // it); one far wider than its padded input — a broken or hostile
        // model's 2^31 taps — takes the generic loop, which visits only the
        // taps that read a value.
        let fits = self.window_fits(h, w);
        #[cfg(target_arch = "x86_64")]
        if let Some(r) = fits
            .then(|| self.run_avx512([n, c, h, w], [oh, ow], (xp, op), par))
            .flatten()
        {
            r?;
            o.finish();
            return Ok(());
        }
        if let Some(g) = fits.then(|| self.window(h, w, oh, ow)).flatten() {
            par.run(n * c, n * c * oh * ow > 1 << 14, &|pl| {
                PADDED.with(|buf| {
                    // SAFETY: one input and one output plane per task.
                    unsafe {
                        pool_plane(
                            &g,
                            xp.p().add(pl * h * w),
                            op.p().add(pl * oh * ow),
                            &mut buf.borrow_mut(),
                        )
                    }
                });
                Ok(())
            })?;
            o.finish();
            return Ok(());
        }
        let (y, x) = (self.axis(0, h, oh), self.axis(1, w, ow));
        par.run(n * c, n * c * oh * ow > 1 << 14, &|pl| {
            // SAFETY: one input and one output plane per task.
            unsafe { self.plane(&y, &x, xp.p().add(pl * h * w), op.p().add(pl * oh * ow)) };
            Ok(())
        })?;
        o.finish();
        Ok(())
    }
}

impl Pool {
    /// The AVX-512 kernels' run of this pool over `[n, c, h, w]` pooled to
    /// `[oh, ow]`, when one takes it (its windows fit: `window_fits`).
    #[cfg(target_arch = "x86_64")]
    fn run_avx512(
        &self,
        [n, c, h, w]: [usize; 4],
        [oh, ow]: [usize; 2],
        (xp, op): (Shared<*const f32>, Shared<*mut f32>),
        par: &Par,
    ) -> Option<Result<(), String>> {
        let big = n * c * oh * ow > 1 << 14;
        let rows = super::pool_rows::geometry(self, (h, w), (oh, ow));
        // Max pools along rows, then down columns, one plane a task.
        let by_rows = |g: &super::pool_rows::Rows| {
            in_blocks(
                par,
                n * c,
                super::pool_rows::planes_per_task(g),
                big,
                &|p0, count| {
                    // SAFETY: `geometry` took `g` for this pool; the task reads
                    // and writes its `count` planes from plane `p0` only.
                    unsafe {
                        super::pool_rows::planes(
                            g,
                            xp.p().add(p0 * h * w),
                            op.p().add(p0 * oh * ow),
                            count,
                        )
                    }
                },
            )
        };
        // Max pools of tiny planes: each plane in two vectors.
        if let Some(t) = super::pool_tiny::tables(self, (h, w), (oh, ow)) {
            let per = super::pool_tiny::PLANES_PER_TASK;
            return Some(in_blocks(par, n * c, per, big, &|p0, count| {
                // SAFETY: `tables` took this pool (AVX-512F checked); the
                // task reads and writes its `count` planes from `p0` only.
                unsafe {
                    super::pool_tiny::planes(
                        &t,
                        xp.p().add(p0 * h * w),
                        op.p().add(p0 * oh * ow),
                        count,
                    )
                }
            }));
        }
        // Stride-2 pools of narrow rows next: two loads a row beat
        // interleaving their planes into the lanes.
        if let Some(g) = rows.as_ref().filter(|g| g.fits_two_vectors()) {
            return Some(by_rows(g));
        }
        if let Some(g) = super::pool_lanes::geometry(self, (h, w), (oh, ow)) {
            // Small maps: 16 channels a task, in the vector lanes.
            let blocks = c.div_ceil(16);
            let divisors = self.avg.then(|| self.divisors((h, w), (oh, ow)));
            return Some(par.run(n * blocks, big, &|t| {
                let (bi, c0) = (t / blocks, t % blocks * 16);
                let cnt = (c - c0).min(16);
                // SAFETY: `geometry` took `g` for this pool; the task reads
                // channels `c0..c0 + cnt` of image `bi` and writes only
                // their output planes (NCHW, `c` planes an image).
                unsafe {
                    let plane = bi * c + c0;
                    super::pool_lanes::block(
                        self,
                        &g,
                        xp.p().add(plane * h * w),
                        op.p().add(plane * oh * ow),
                        cnt,
                        divisors.as_deref(),
                    )
                };
                Ok(())
            }));
        }
        // Max pools of wide rows.
        rows.as_ref().map(by_rows)
    }

    /// The generic loop over one plane: each output folds only the taps
    /// that read a value ([`Axis::valid`]), in order.
    ///
    /// # Safety
    /// `src` holds the `y.n x x.n` input plane and `dst` the `y.on x x.on`
    /// output plane; a valid tap's position lies inside the input.
    unsafe fn plane(&self, y: &Axis, x: &Axis, src: *const f32, dst: *mut f32) {
        let (w, ow) = (x.n as usize, x.on);
        for oy in 0..y.on {
            let rows = y.valid(oy);
            for ox in 0..ow {
                let cols = x.valid(ox);
                let mut acc = if self.avg { 0.0f32 } else { f32::NEG_INFINITY };
                for ky in rows.clone() {
                    let row = src.add(y.at(oy, ky) * w);
                    for kx in cols.clone() {
                        let v = *row.add(x.at(ox, kx));
                        if self.avg {
                            acc += v;
                        } else if v > acc || v.is_nan() {
                            acc = v;
                        }
                    }
                }
                let r = if self.avg {
                    let d = match self.include_pad {
                        true => y.padded(oy).saturating_mul(x.padded(ox)),
                        false => rows.clone().len() * cols.clone().len(),
                    };
                    if d == 0 {
                        f32::NAN
                    } else {
                        acc / d as f32
                    }
                } else {
                    acc
                };
                *dst.add(oy * ow + ox) = r;
            }
        }
    }

    /// Axis `i` (0: rows, 1: columns) of the pool over `n` inputs pooled to
    /// `on` outputs.
    fn axis(&self, i: usize, n: usize, on: usize) -> Axis {
        Axis {
            n: n as isize,
            on,
            k: self.kernel[i],
            s: self.strides[i],
            d: self.dilations[i],
            p: self.pads[i],
            max: (n as isize).saturating_add(self.pads[i + 2]),
        }
    }

    /// Whether each window spans at most its padded input (and a stride
    /// more: a `ceil_mode` window may hang past it) and the padding is not
    /// much larger than the input: what the fast paths assume when they
    /// walk every tap or pad a plane to the windows (a window of 2^31 taps
    /// with SAME padding to match would make a plane of 2^31 rows).
    fn window_fits(&self, h: usize, w: usize) -> bool {
        [h, w].into_iter().enumerate().all(|(i, len)| {
            let [k, d, s] = [self.kernel[i], self.dilations[i], self.strides[i]].map(|v| v as i128);
            let pads = (self.pads[i] as i128).max(0) + (self.pads[i + 2] as i128).max(0);
            let len = len as i128;
            pads <= 3 * len + 256 && (k - 1) * d < len + pads + s
        })
    }

    /// The divisor of each output of an average pool over `h x w` planes
    /// pooled to `oh x ow` (row-major): how many of its taps count, with
    /// the padding or without (`include_pad`); NaN where none does, as in
    /// the generic loop (x / NaN is NaN). The counts are separable: a
    /// product of per-axis counts.
    pub(super) fn divisors(&self, (h, w): (usize, usize), (oh, ow): (usize, usize)) -> Vec<f32> {
        let (y, x) = (self.axis(0, h, oh), self.axis(1, w, ow));
        let cols: Vec<_> = (0..ow).map(|o| x.counts(o)).collect();
        (0..oh)
            .flat_map(|oy| {
                let (rv, rp) = y.counts(oy);
                cols.iter().map(move |&(cv, cp)| {
                    let n = if self.include_pad { rp * cp } else { rv * cv };
                    if n > 0 {
                        n as f32
                    } else {
                        f32::NAN
                    }
                })
            })
            .collect()
    }

    /// The geometry of the padded-plane path ([`pool_plane`]): positive
    /// kernel, strides and dilations, non-negative pads, an output.
    fn window(&self, h: usize, w: usize, oh: usize, ow: usize) -> Option<Window> {
        let ok = oh > 0
            && ow > 0
            && self.pads.iter().all(|&p| p >= 0)
            && self.strides.iter().all(|&s| s > 0)
            && self.dilations.iter().all(|&d| d > 0)
            && self.kernel.iter().all(|&k| k > 0);
        if !ok {
            return None;
        }
        let (y, x) = (self.axis(0, h, oh), self.axis(1, w, ow));
        let (pt, pl) = (y.p as usize, x.p as usize);
        let (sh, sw, dy, dx) = (y.s as usize, x.s as usize, y.d as usize, x.d as usize);
        // Padded rows and columns: the input's and every one a window reads,
        // in phases of `sh` rows and `sw` columns.
        let rh = (h + pt).max(y.span()).div_ceil(sh);
        let qw = (w + pl).max(x.span()).div_ceil(sw);
        let taps = (0..y.k as usize)
            .flat_map(|ky| {
                (0..x.k as usize).map(move |kx| {
                    let (row, col) = (ky * dy, kx * dx);
                    ((row % sh * sw + col % sw) * rh + row / sh) * qw + col / sw
                })
            })
            .collect();
        // The run of outputs, rounded up to whole vectors of LANES.
        let run = ((oh - 1) * qw + ow).next_multiple_of(LANES);
        let divisors = self.avg.then(|| {
            // The outputs' divisors at their places in the run (NaN between
            // rows: those sums are dropped).
            let mut d = vec![f32::NAN; run];
            for (row, divs) in d
                .chunks_mut(qw)
                .zip(self.divisors((h, w), (oh, ow)).chunks(ow))
            {
                row[..ow].copy_from_slice(divs);
            }
            d
        });
        Some(Window {
            h,
            w,
            oh,
            ow,
            sh,
            sw,
            pt,
            pl,
            rh,
            qw,
            run,
            taps,
            divisors,
        })
    }
}

/// One axis of a pool: input size `n`, output size `on`; tap `k` of output
/// `o` reads `o·s - p + k·d`, which counts as a (padded) tap below `max` and
/// as a value inside `[0, n)`.
struct Axis {
    n: isize,
    on: usize,
    k: isize,
    s: isize,
    d: isize,
    p: isize,
    max: isize,
}

impl Axis {
    /// The position tap `k` of output `o` reads (`k` from [`Axis::valid`]:
    /// inside the input).
    fn at(&self, o: usize, k: usize) -> usize {
        (o as i128 * self.s as i128 - self.p as i128 + k as i128 * self.d as i128) as usize
    }
    /// Output `o`'s taps in order, as far as they read a value (computed,
    /// so a window of 2^31 taps costs nothing).
    fn valid(&self, o: usize) -> std::ops::Range<usize> {
        let r = self.taps(o, 0, self.n as i64);
        r.start as usize..r.end as usize
    }
    /// How many of output `o`'s taps count with the padding.
    fn padded(&self, o: usize) -> usize {
        let r = self.taps(o, i64::MIN, self.max as i64);
        (r.end - r.start) as usize
    }
    fn taps(&self, o: usize, lo: i64, hi: i64) -> std::ops::Range<i64> {
        let (s, p, d, k) = (self.s as i64, self.p as i64, self.d as i64, self.k as i64);
        ge_dialects::graph::nn::taps_in(o, s, p, d, k, lo, hi)
    }
    /// Of output `o`'s taps: how many read a value, and how many count
    /// with the padding.
    fn counts(&self, o: usize) -> (usize, usize) {
        (self.valid(o).len(), self.padded(o))
    }
    /// Padded positions up to the last tap of the last output.
    fn span(&self) -> usize {
        (self.on - 1) * self.s as usize + (self.k as usize - 1) * self.d as usize + 1
    }
}

/// Geometry of one pooled plane on the padded-plane path. The plane is
/// copied into a buffer of `sh x sw` phases (phase `(a, b)` holds the padded
/// rows `a, a + sh, ...` and columns `b, b + sw, ...`), each `rh x qw` and
/// filled with the pool's padding value around the input. Output `(oy, ox)`
/// then reads tap `(ky, kx)` at `oy * qw + ox` plus an offset of the tap's
/// alone: taking the outputs as one run (with `qw - ow` unused columns
/// between rows), every tap is one contiguous run, read with no bounds or
/// padding checks.
struct Window {
    h: usize,
    w: usize,
    oh: usize,
    ow: usize,
    sh: usize,
    sw: usize,
    pt: usize,
    pl: usize,
    rh: usize,
    qw: usize,
    /// Outputs in the run: `(oh - 1) * qw + ow`, rounded up to whole
    /// vectors (the buffer has slack for the last one's reads).
    run: usize,
    /// Per window tap (rows, then columns: the generic loop's order): its
    /// offset in the buffer from output (0, 0)'s.
    taps: Vec<usize>,
    /// Average pooling's divisor of each output in the run (NaN where no
    /// tap counts); `None` for a max pool.
    divisors: Option<Vec<f32>>,
}

/// How a pool folds its taps. The padding value is also the fold's start,
/// and folding it in changes nothing, bit for bit: -inf never wins a max;
/// +0.0 added to a sum that starts at +0.0 (which no sum of floats then
/// turns into -0.0) leaves it as it is. So padded taps need no skipping and
/// each output folds its taps in the generic loop's order: the results are
/// bitwise that loop's.
trait Fold {
    const PAD: f32;
    fn fold(a: f32, v: f32) -> f32;
}

struct Max;
impl Fold for Max {
    const PAD: f32 = f32::NEG_INFINITY;
    #[inline(always)]
    fn fold(a: f32, v: f32) -> f32 {
        // NaN wins, as in the generic loop.
        if v > a || v.is_nan() {
            v
        } else {
            a
        }
    }
}

struct Sum;
impl Fold for Sum {
    const PAD: f32 = 0.0;
    #[inline(always)]
    fn fold(a: f32, v: f32) -> f32 {
        a + v
    }
}

/// Floats in the widest vector: the fold loops run over whole ones.
const LANES: usize = 16;

/// Outputs folded at once: four vectors, four independent chains.
const FOLD_BLOCK: usize = 4 * LANES;

/// `folds[at..at + B]`: the fold of each output's taps (`padded` from the
/// tap's offset), from the padding value.
#[inline(always)]
fn fold_block<F: Fold, const B: usize>(
    folds: &mut [f32],
    padded: &[f32],
    taps: &[usize],
    at: usize,
) {
    let mut acc = [F::PAD; B];
    for &t in taps {
        let v = &padded[t + at..t + at + B];
        // A new array, not a fold in place: the compiler keeps it in
        // registers (in place it keeps it on the stack with masked stores,
        // the stall above).
        acc = std::array::from_fn(|i| F::fold(acc[i], v[i]));
    }
    folds[at..at + B].copy_from_slice(&acc);
}

/// `f(p0, count)` over `planes` planes in blocks of `per` (the last may be
/// shorter), a block a task, in parallel when `parallel`.
fn in_blocks(
    par: &Par,
    planes: usize,
    per: usize,
    parallel: bool,
    f: &(dyn Fn(usize, usize) + Sync),
) -> Result<(), String> {
    par.run(planes.div_ceil(per), parallel, &|t| {
        let p0 = t * per;
        f(p0, per.min(planes - p0));
        Ok(())
    })
}

thread_local! {
    /// A plane padded and split into its phases, then its outputs' folds
    /// (or `pool_rows.rs`'s rows' maxima).
    pub(super) static PADDED: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Max or average pooling of one plane (`g.divisors` says which), compiled
/// again for AVX-512 and AVX2.
///
/// # Safety
/// `src` holds `g.h x g.w` floats, `dst` `g.oh x g.ow`.
unsafe fn pool_plane(g: &Window, src: *const f32, dst: *mut f32, buf: &mut Vec<f32>) {
    by_cpu_features!(pool_plane_folds(g: &Window, src: *const f32, dst: *mut f32, buf: &mut Vec<f32>))
}

#[inline(always)]
unsafe fn pool_plane_folds(g: &Window, src: *const f32, dst: *mut f32, buf: &mut Vec<f32>) {
    match &g.divisors {
        Some(d) => fold_plane::<Sum>(g, src, dst, buf, Some(d)),
        None => fold_plane::<Max>(g, src, dst, buf, None),
    }
}

#[inline(always)]
unsafe fn fold_plane<F: Fold>(
    g: &Window,
    src: *const f32,
    dst: *mut f32,
    buf: &mut Vec<f32>,
    divisors: Option<&[f32]>,
) {
    let plane = g.rh * g.qw;
    let phases = g.sh * g.sw * plane;
    buf.clear();
    // The phases with slack for the run's rounding, then the outputs' folds.
    buf.resize(phases + LANES + g.run, F::PAD);
    let (padded, folds) = buf.split_at_mut(phases + LANES);
    for y in 0..g.h {
        let r = y + g.pt;
        let at = (r % g.sh * g.sw * g.rh + r / g.sh) * g.qw;
        let row = std::slice::from_raw_parts(src.add(y * g.w), g.w);
        split_row(row, &mut padded[at..], plane, g);
    }
    // Blocks of the run, each folded over every tap in registers and
    // stored once. (Folding the whole run tap by tap compiles to masked
    // stores, and on a short run the next tap's pass reads them back before
    // they leave the store buffer: no forwarding, a stall per vector —
    // 64x31x31 planes took 42 µs so.) Each output still folds its taps in
    // order, from the padding value.
    let mut at = 0;
    while at < g.run {
        match g.run - at {
            FOLD_BLOCK.. => fold_block::<F, FOLD_BLOCK>(folds, padded, &g.taps, at),
            _ => fold_block::<F, LANES>(folds, padded, &g.taps, at),
        }
        at += if g.run - at >= FOLD_BLOCK {
            FOLD_BLOCK
        } else {
            LANES
        };
    }
    if let Some(d) = divisors {
        for (a, &d) in folds.iter_mut().zip(d) {
            *a /= d;
        }
    }
    let out = std::slice::from_raw_parts_mut(dst, g.oh * g.ow);
    for (row, folds) in out.chunks_exact_mut(g.ow).zip(folds.chunks(g.qw)) {
        row.copy_from_slice(&folds[..g.ow]);
    }
}

/// Input row `row` into its padded row of every column phase: `dst` starts
/// at the row in the first column phase; phases are `plane` floats apart. Padded column
/// `c = x + pl` of input column `x` goes to phase `c % sw`, index `c / sw`.
#[inline(always)]
fn split_row(row: &[f32], dst: &mut [f32], plane: usize, g: &Window) {
    let (w, pl, sw, qw) = (g.w, g.pl, g.sw, g.qw);
    match sw {
        1 => dst[pl..pl + w].copy_from_slice(row),
        2 => {
            // Even input columns go to phase pl % 2, odd ones to the other.
            let (p0, p1) = dst.split_at_mut(plane);
            let (even, odd) = match pl % 2 {
                0 => (&mut p0[pl / 2..qw], &mut p1[pl / 2..qw]),
                _ => (&mut p1[pl / 2..qw], &mut p0[pl / 2 + 1..qw]),
            };
            let pairs = row.chunks_exact(2);
            if let &[last] = pairs.remainder() {
                even[w / 2] = last;
            }
            for ((e, o), p) in even.iter_mut().zip(odd.iter_mut()).zip(pairs) {
                *e = p[0];
                *o = p[1];
            }
        }
        _ => {
            for p in 0..sw {
                let dst = &mut dst[p * plane..p * plane + qw];
                let lo = pl.saturating_sub(p).div_ceil(sw);
                let hi = (pl + w).saturating_sub(p).div_ceil(sw).min(qw);
                if lo < hi {
                    // Every sw-th input column from lo's.
                    let src = row[lo * sw + p - pl..].iter().step_by(sw);
                    for (d, &v) in dst[lo..hi].iter_mut().zip(src) {
                        *d = v;
                    }
                }
            }
        }
    }
}

/// Mean or max over the spatial dims (rank >= 3: N x C x spatial...).
pub fn global(max: bool, x: &Slot, out: &Slot) -> Result<(), String> {
    if x.shape.len() < 3 {
        return Err(format!("global pooling needs rank >= 3, got {:?}", x.shape));
    }
    let planes = x.shape[0] * x.shape[1];
    let size: usize = x.shape[2..].iter().product();
    let xi = F32In::new(x);
    let mut o = F32Out::new(out);
    // SAFETY: the output holds `planes` floats.
    let ys = unsafe { std::slice::from_raw_parts_mut(o.ptr(), planes) };
    if size == 0 {
        // No element: max's start, and a mean of 0 / 1, as the reference.
        ys.fill(if max { f32::NEG_INFINITY } else { 0.0 });
    } else {
        // A reduction of each plane: `norm.rs`'s kernel, with the inner
        // run of one.
        let kind = if max { RedKind::Max } else { RedKind::Mean };
        super::norm::reduce_runs(kind, xi.slice(), ys, size, 1, size as f64);
    }
    o.finish();
    Ok(())
}
