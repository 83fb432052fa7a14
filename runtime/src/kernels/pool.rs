//! Max / average pooling (NCHW) and global pooling, one plane per task.
//! Max pooling without dilation takes a vectorised path ([`max_plane`]).

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
        let (h_, w_) = (h as isize, w as isize);
        let (hmax, wmax) = (h_ + self.pads[2], w_ + self.pads[3]);
        if let Some(g) = self.max_geometry(h, w, oh, ow) {
            par.run(n * c, n * c * oh * ow > 1 << 14, &|pl| {
                PHASES.with(|buf| {
                    // SAFETY: one input and one output plane per task.
                    unsafe {
                        max_plane(
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
        if let Some(g) = self.avg_geometry(h, w, oh, ow) {
            par.run(n * c, n * c * oh * ow > 1 << 14, &|pl| {
                AVG_ROW.with(|buf| {
                    // SAFETY: one input and one output plane per task.
                    unsafe {
                        avg_plane(
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
        par.run(n * c, n * c * oh * ow > 1 << 14, &|pl| {
            // SAFETY: one output plane per task.
            unsafe {
                let src = xp.p().add(pl * h * w);
                let dst = op.p().add(pl * oh * ow);
                for oy in 0..oh as isize {
                    for ox in 0..ow as isize {
                        let mut acc = if self.avg { 0.0f32 } else { f32::NEG_INFINITY };
                        let (mut count, mut padded) = (0usize, 0usize);
                        for ky in 0..self.kernel[0] {
                            let iy = oy * self.strides[0] - self.pads[0] + ky * self.dilations[0];
                            if iy >= hmax {
                                continue;
                            }
                            for kx in 0..self.kernel[1] {
                                let ix =
                                    ox * self.strides[1] - self.pads[1] + kx * self.dilations[1];
                                if ix >= wmax {
                                    continue;
                                }
                                padded += 1;
                                if iy < 0 || ix < 0 || iy >= h_ || ix >= w_ {
                                    continue;
                                }
                                let v = *src.add(iy as usize * w + ix as usize);
                                count += 1;
                                if self.avg {
                                    acc += v;
                                } else if v > acc || v.is_nan() {
                                    acc = v;
                                }
                            }
                        }
                        let r = if self.avg {
                            let d = if self.include_pad { padded } else { count };
                            if d == 0 {
                                f32::NAN
                            } else {
                                acc / d as f32
                            }
                        } else {
                            acc
                        };
                        *dst.add(oy as usize * ow + ox as usize) = r;
                    }
                }
            }
            Ok(())
        })?;
        o.finish();
        Ok(())
    }
}

impl Pool {
    /// The geometry of the vectorised max path: max pooling, no dilation,
    /// non-negative pads and positive strides.
    fn max_geometry(&self, h: usize, w: usize, oh: usize, ow: usize) -> Option<MaxGeo> {
        let ok = !self.avg
            && oh > 0
            && ow > 0
            && self.dilations == [1, 1]
            && self.pads.iter().all(|&p| p >= 0)
            && self.strides.iter().all(|&s| s > 0)
            && self.kernel.iter().all(|&k| k > 0);
        ok.then(|| MaxGeo {
            h,
            w,
            oh,
            ow,
            kh: self.kernel[0] as usize,
            kw: self.kernel[1] as usize,
            sh: self.strides[0] as usize,
            sw: self.strides[1] as usize,
            pt: self.pads[0] as usize,
            pl: self.pads[1] as usize,
        })
    }
}

impl Pool {
    /// The geometry of the row-wise average path: positive kernel, strides
    /// and dilations, non-negative pads.
    fn avg_geometry(&self, h: usize, w: usize, oh: usize, ow: usize) -> Option<AvgGeo> {
        let ok = self.avg
            && self.pads.iter().all(|&p| p >= 0)
            && self.strides.iter().all(|&s| s > 0)
            && self.dilations.iter().all(|&d| d > 0)
            && self.kernel.iter().all(|&k| k > 0);
        let axis = |i: usize, n: usize, on: usize| Axis {
            n: n as isize,
            on,
            k: self.kernel[i],
            s: self.strides[i],
            d: self.dilations[i],
            p: self.pads[i],
            max: n as isize + self.pads[i + 2],
        };
        ok.then(|| {
            let x = axis(1, w, ow);
            AvgGeo {
                cols: (0..ow).map(|o| x.counts(o)).collect(),
                runs: (0..x.k).map(|k| x.valid(k)).collect(),
                y: axis(0, h, oh),
                x,
                w,
                include_pad: self.include_pad,
            }
        })
    }
}

/// One axis of an average pool: input size `n`, output size `on`; tap `k`
/// of output `o` reads `o·s - p + k·d`, which counts as a (padded) tap
/// below `max` and as a value inside `[0, n)`.
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
    fn at(&self, o: usize, k: isize) -> isize {
        o as isize * self.s - self.p + k * self.d
    }
    /// Of output `o`'s taps: how many read a value, and how many count
    /// with the padding.
    fn counts(&self, o: usize) -> (usize, usize) {
        let (mut valid, mut padded) = (0, 0);
        for k in 0..self.k {
            let i = self.at(o, k);
            if i < self.max {
                padded += 1;
                valid += (i >= 0 && i < self.n) as usize;
            }
        }
        (valid, padded)
    }
    /// The outputs `[lo, hi)` whose tap `k` reads inside `[0, n)`.
    fn valid(&self, k: isize) -> (usize, usize) {
        let lo = (0..self.on)
            .find(|&o| self.at(o, k) >= 0)
            .unwrap_or(self.on);
        let hi = (lo..self.on)
            .find(|&o| self.at(o, k) >= self.n)
            .unwrap_or(self.on);
        (lo, hi)
    }
}

/// Geometry of one average-pooled plane.
struct AvgGeo {
    y: Axis,
    x: Axis,
    w: usize,
    include_pad: bool,
    /// Per output column: its valid and padded tap counts (`Axis::counts`).
    cols: Vec<(usize, usize)>,
    /// Per column tap: the outputs it reads inside the row (`Axis::valid`).
    runs: Vec<(usize, usize)>,
}

/// Average pooling of one plane, a row of outputs at a time: each valid
/// window row and tap adds its input run to the row of sums (contiguous for
/// stride 1, so the loop vectorises), then each sum is divided by its count
/// — the taps are separable, so the count is a product of per-axis counts.
/// Each output sums its taps in the generic loop's order (window rows, then
/// columns), so the results are bitwise that loop's.
///
/// # Safety
/// `src` holds `h x w` floats, `dst` `oh x ow`.
unsafe fn avg_plane(g: &AvgGeo, src: *const f32, dst: *mut f32, acc: &mut Vec<f32>) {
    by_cpu_features!(avg_plane_rows(g: &AvgGeo, src: *const f32, dst: *mut f32, acc: &mut Vec<f32>))
}

#[inline(always)]
unsafe fn avg_plane_rows(g: &AvgGeo, src: *const f32, dst: *mut f32, acc: &mut Vec<f32>) {
    let (ax, ay) = (&g.x, &g.y);
    let ow = ax.on;
    // A strided pool reads every s-th column: each window row is first
    // split into its s column phases (phase r: columns r, r + s, ...), so
    // every tap's run is contiguous again and the loop vectorises.
    let s = ax.s as usize;
    let q = g.w.div_ceil(s);
    acc.clear();
    acc.resize(ow + if s > 1 { s * q } else { 0 }, 0.0);
    let (acc, phases) = acc.split_at_mut(ow);
    for oy in 0..ay.on {
        acc.fill(0.0);
        let (rows_valid, rows_padded) = ay.counts(oy);
        for ky in 0..ay.k {
            let iy = ay.at(oy, ky);
            if iy < 0 || iy >= ay.n {
                continue;
            }
            let row = std::slice::from_raw_parts(src.add(iy as usize * g.w), g.w);
            if s > 1 {
                for r in 0..s {
                    let phase = &mut phases[r * q..(r + 1) * q];
                    for (d, &v) in phase.iter_mut().zip(row.iter().skip(r).step_by(s)) {
                        *d = v;
                    }
                }
            }
            for (kx, &(lo, hi)) in g.runs.iter().enumerate() {
                if lo >= hi {
                    continue;
                }
                // Input column of output `lo` at this tap: inside the row.
                let first = ax.at(lo, kx as isize) as usize;
                let taps = match s {
                    1 => &row[first..],
                    _ => &phases[first % s * q + first / s..],
                };
                for (a, &v) in acc[lo..hi].iter_mut().zip(taps) {
                    *a += v;
                }
            }
        }
        let out = std::slice::from_raw_parts_mut(dst.add(oy * ow), ow);
        for ((o, &a), &(cv, cp)) in out.iter_mut().zip(acc.iter()).zip(&g.cols) {
            let d = match g.include_pad {
                true => rows_padded * cp,
                false => rows_valid * cv,
            };
            *o = if d == 0 { f32::NAN } else { a / d as f32 };
        }
    }
}

/// Geometry of one max-pooled plane.
struct MaxGeo {
    h: usize,
    w: usize,
    oh: usize,
    ow: usize,
    kh: usize,
    kw: usize,
    sh: usize,
    sw: usize,
    pt: usize,
    pl: usize,
}

thread_local! {
    /// A plane padded with -inf, split into its column phases.
    static PHASES: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// A row of an average pool's sums.
    static AVG_ROW: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Max pooling of one plane: the plane padded with -inf (a padded tap never
/// wins, as a skipped one) and split into its `sw` column phases, so each
/// tap of a window row reads a contiguous run and the loops vectorise —
/// compiled again for AVX-512 and AVX2. NaN wins as in the generic loop.
///
/// # Safety
/// `src` holds `h x w` floats, `dst` `oh x ow`.
unsafe fn max_plane(g: &MaxGeo, src: *const f32, dst: *mut f32, buf: &mut Vec<f32>) {
    by_cpu_features!(max_plane_loops(g: &MaxGeo, src: *const f32, dst: *mut f32, buf: &mut Vec<f32>))
}

#[inline(always)]
unsafe fn max_plane_loops(g: &MaxGeo, src: *const f32, dst: *mut f32, buf: &mut Vec<f32>) {
    // Rows and columns any window reads, padding included.
    let ph = (g.h + g.pt).max((g.oh - 1) * g.sh + g.kh);
    let pw = (g.w + g.pl).max((g.ow - 1) * g.sw + g.kw);
    let qw = pw.div_ceil(g.sw);
    buf.clear();
    buf.resize(g.sw * ph * qw, f32::NEG_INFINITY);
    for y in 0..g.h {
        let row = std::slice::from_raw_parts(src.add(y * g.w), g.w);
        for p in 0..g.sw {
            // Phase p holds padded columns i*sw + p: input column i*sw + p - pl.
            let dst = &mut buf[(p * ph + y + g.pt) * qw..][..qw];
            let lo = g.pl.saturating_sub(p).div_ceil(g.sw);
            let hi = (g.pl + g.w).saturating_sub(p).div_ceil(g.sw).min(qw);
            if lo < hi {
                // Every sw-th input column from lo's: no index checks left.
                let src = row[lo * g.sw + p - g.pl..].iter().step_by(g.sw);
                for (d, &v) in dst[lo..hi].iter_mut().zip(src) {
                    *d = v;
                }
            }
        }
    }
    // Sixteen outputs at a time in registers (a row of partial maxima in
    // memory, updated tap by tap, stalls on its own stores). The taps'
    // offsets in the phase planes are the same for every output row but for
    // `oy * sh` rows: computed once, not per output (a division per tap and
    // output cost more than the maxima). The row's last, partial group of
    // lanes reads past the row into the next one (or the L slack floats at
    // the end of `buf`) and keeps only its own lanes: every output takes the
    // same vector path.
    const L: usize = 16;
    let ow = g.ow;
    let take = |a: f32, v: f32| if v > a || v.is_nan() { v } else { a };
    let taps: Vec<usize> = (0..g.kh)
        .flat_map(|ky| (0..g.kw).map(move |kx| ((kx % g.sw) * ph + ky) * qw + kx / g.sw))
        .collect();
    buf.resize(buf.len() + L, f32::NEG_INFINITY);
    let buf = &buf[..];
    for oy in 0..g.oh {
        let out = std::slice::from_raw_parts_mut(dst.add(oy * ow), ow);
        let row0 = oy * g.sh * qw;
        for ox in (0..ow).step_by(L) {
            let mut acc = [f32::NEG_INFINITY; L];
            for &t in &taps {
                let at = row0 + t + ox;
                let lanes: &[f32; L] = buf[at..at + L].try_into().unwrap_or(&[0.0; L]);
                for (a, &v) in acc.iter_mut().zip(lanes) {
                    *a = take(*a, v);
                }
            }
            let n = L.min(ow - ox);
            out[ox..ox + n].copy_from_slice(&acc[..n]);
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
    let v = xi.slice();
    let mut o = F32Out::new(out);
    let op = o.ptr();
    for p in 0..planes {
        let s = &v[p * size..(p + 1) * size];
        let r = if max {
            s.iter().fold(
                f32::NEG_INFINITY,
                |a, &b| if b > a || b.is_nan() { b } else { a },
            )
        } else {
            (s.iter().map(|&x| x as f64).sum::<f64>() / size.max(1) as f64) as f32
        };
        // SAFETY: the output holds `planes` floats.
        unsafe { *op.add(p) = r };
    }
    o.finish();
    Ok(())
}
