//! Native kernels of the volumetric ops: `graph.conv3d` as im2col and a GEMM
//! per sample and group (f32, the samples and groups in parallel), and
//! `graph.max_pool3d` / `graph.avg_pool3d` as the op's own pooling loop
//! (`ge_dialects::graph::nn3d::pool3d_plane`) in f32, one plane per task.

use super::prepared::Prepared;
use super::sgemm_packed::{PackedA, MR, WIDE_ROWS};
use super::{sgemm, F32In, F32Out, Kernel, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::nn3d::{
    conv3d_shapes, conv_window_of, dims5, pool3d_plane, pool_window_of, AvgPool3d, Window3,
};
use ge_ir::body::{Body, OpId};

/// A 3-D convolution.
#[derive(Clone, Debug)]
pub struct Conv3d {
    win: Window3,
    group: usize,
    /// Output positions (`OD·OH·OW`) when the result type fixes them: few
    /// of them take the filter in panels of 16 rows.
    out_positions: Option<usize>,
    /// Its constant filters packed at load ([`Kernel::prepare`]).
    packed: Prepared<Packed3>,
}

/// A filter `[m, cg, kd, kh, kw]` packed group by group (`m/group x k`).
#[derive(Debug)]
struct Packed3 {
    groups: Vec<PackedA>,
    /// Rows of a panel (`r0` of a GEMM call is a multiple of it).
    panel: usize,
}

impl Conv3d {
    pub fn from_op(b: &Body, o: OpId) -> Option<Conv3d> {
        let d = b.op(o);
        let (win, group) = conv_window_of(d).ok()?;
        let out_positions = d
            .results()
            .first()
            .and_then(|&r| b.value_type(r).as_tensor()?.static_shape())
            .and_then(|s| match s[..] {
                [_, _, a, h, w] => usize::try_from(a * h * w).ok(),
                _ => None,
            });
        Some(Conv3d {
            win,
            group,
            out_positions,
            packed: Prepared::default(),
        })
    }
}

impl Kernel for Conv3d {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (x, f, out) = match (ins, outs) {
            ([x, f], [o]) | ([x, f, _], [o]) => (*x, *f, *o),
            _ => return Err("conv3d: expects 2 or 3 operands and 1 result".into()),
        };
        let bias = ins.get(2).map(|b| F32In::new(b));
        let dims = conv3d_shapes(
            &self.win,
            self.group,
            &x.shape,
            &f.shape,
            ins.get(2).map(|b| &b.shape[..]),
        )?;
        if out.shape != dims {
            return Err(format!(
                "result shape {:?} is not the convolution's {dims:?}",
                out.shape
            ));
        }
        let [n, m, od, oh, ow] = dims;
        let (_, c, idims) = dims5(&x.shape, "input")?;
        let (cg, kd, kh, kw) = (f.shape[1], f.shape[2], f.shape[3], f.shape[4]);
        let (mg, k, p) = (m / self.group, cg * kd * kh * kw, od * oh * ow);
        let pin: usize = idims.iter().product();
        let (xi, fi) = (F32In::new(x), F32In::new(f));
        let mut o = F32Out::new(out);
        let (xp, fp, op) = (Shared(xi.ptr()), Shared(fi.ptr()), Shared(o.ptr()));
        let bp = bias.as_ref().map(|b| Shared(b.ptr()));
        let geo = Geo {
            win: &self.win,
            idims,
            odims: [od, oh, ow],
            kernel: [kd, kh, kw],
        };
        // Per (sample, group): the input unfolded once (its rows in
        // parallel), then the GEMM in blocks of output channels (in
        // parallel): one (sample, group) alone — a video network at batch 1
        // — still uses every thread.
        let parallel = n * m * p * k > 1 << 16;
        let mut col = COL.with(|c| c.take());
        // Every element is written by `im2col` (zeros where a tap falls in
        // the padding): no zeroing beyond what `resize` adds.
        // It only grows: a smaller layer between two large ones would cut
        // it and the next large one zero it again.
        if col.len() < k * p {
            col.resize(k * p, 0.0);
        }
        let cp = Shared(col.as_mut_ptr());
        let packed = self.packed.find(f);
        // A packed call starts at a panel's first row.
        let panel = packed.as_ref().map_or(1, |pf| pf.panel);
        let (rows_per_task, cols_per_task) = gemm_blocks(mg, p, panel, parallel, par.threads());
        let (row_blocks, col_blocks) = (mg.div_ceil(rows_per_task), p.div_ceil(cols_per_task));
        let r = (0..n * self.group).try_for_each(|t| {
            let (b, g) = (t / self.group, t % self.group);
            // A task per input plane and depth tap (a stem of 3 channels
            // still splits evenly over the threads).
            let kd = geo.kernel[0].max(1);
            par.run(cg * kd, parallel, &|t| {
                let (ci, k0) = (t / kd, t % kd);
                // SAFETY: `x` holds n*c planes of `pin` elements; this task
                // reads input plane ci of group g of sample b and writes
                // only the kh*kw rows of depth tap k0 of that plane in `col`
                // (k x p).
                unsafe {
                    let plane =
                        std::slice::from_raw_parts(xp.p().add((b * c + g * cg + ci) * pin), pin);
                    let taps = k / cg.max(1) / kd;
                    let at = (ci * kd + k0) * taps * p;
                    let rows = std::slice::from_raw_parts_mut(cp.p().add(at), taps * p);
                    im2col_plane(&geo, plane, k0, rows);
                }
                Ok(())
            })?;
            par.run(row_blocks * col_blocks, parallel, &|blk| {
                let (r0, c0) = (
                    blk / col_blocks * rows_per_task,
                    blk % col_blocks * cols_per_task,
                );
                let (rows, cols) = (rows_per_task.min(mg - r0), cols_per_task.min(p - c0));
                // SAFETY: the filter rows of group g are mg rows of k
                // elements; the output block (rows r0.., columns c0..) of
                // (b, g) is written by this task only; `col` (k x p) was
                // filled above and is only read here.
                unsafe {
                    let dst = op.p().add((b * m + g * mg + r0) * p + c0);
                    let b_cols = cp.p().add(c0);
                    match packed.as_ref().and_then(|pf| pf.groups.get(g)) {
                        // `r0` is a multiple of the panel's rows.
                        Some(pa) => pa.gemm(r0, rows, b_cols, p, cols, dst, p),
                        None => sgemm(
                            rows,
                            k,
                            cols,
                            1.0,
                            fp.p().add((g * mg + r0) * k),
                            k as isize,
                            1,
                            b_cols,
                            p as isize,
                            1,
                            0.0,
                            dst,
                            p as isize,
                            1,
                        ),
                    }
                    if let Some(bp) = bp {
                        add_bias(dst, p, cols, bp.p().add(g * mg + r0), rows);
                    }
                }
                Ok(())
            })
        });
        COL.with(|c| c.replace(col));
        r?;
        o.finish();
        Ok(())
    }

    fn float_only(&self) -> bool {
        true
    }

    /// Pack the constant filter (operand 1) for the packed GEMM
    /// (`sgemm_packed`), as a 2-D convolution's is: a call never packs it
    /// again (the `gemm` crate's path packs it at every call — 14 MB a call
    /// for a 512-channel 3x3x3 layer of a video network).
    fn prepare(&self, operand: usize, w: &Slot, budget: usize) -> usize {
        let Ok([m, cg, kd, kh, kw]) = <[usize; 5]>::try_from(&w.shape[..]) else {
            return 0;
        };
        let g = self.group.max(1);
        if operand != 1 || w.ptr.is_null() || m % g != 0 || !super::sgemm_packed::fast() {
            return 0;
        }
        let (mg, k) = (m / g, cg * kd * kh * kw);
        let wide_rows = super::sgemm_packed::wide()
            && self
                .out_positions
                .is_some_and(|p| p <= super::sgemm_packed::WIDE_ROWS_MAX_N);
        let bytes = PackedA::bytes_for_groups(g, mg, k, wide_rows);
        if bytes > budget || self.packed.find(w).is_some() {
            return 0;
        }
        let groups = PackedA::pack_groups(F32In::new(w).slice(), g, mg, k, wide_rows);
        let packed = Packed3 {
            groups,
            panel: if wide_rows { WIDE_ROWS } else { MR },
        };
        self.packed.insert(w, packed, bytes)
    }
}

/// The geometry im2col needs.
struct Geo<'a> {
    win: &'a Window3,
    idims: [usize; 3],
    odims: [usize; 3],
    kernel: [usize; 3],
}

/// Add `bias[r]` to the first `cols` floats of each of `rows` rows of
/// `dst`, `ld` floats apart.
///
/// # Safety
/// `dst` holds those rows, `bias` `rows` floats, not overlapping.
unsafe fn add_bias(dst: *mut f32, ld: usize, cols: usize, bias: *const f32, rows: usize) {
    for r in 0..rows {
        let bv = *bias.add(r);
        let row = std::slice::from_raw_parts_mut(dst.add(r * ld), cols);
        row.iter_mut().for_each(|v| *v += bv);
    }
}

/// Fewest output channels per GEMM task (the GEMM's register blocks take
/// 16 rows or more at a time).
const MIN_ROWS: usize = 16;

/// Fewest output positions per GEMM task (a strip of the packed GEMM).
const MIN_COLS: usize = 48;

/// The GEMM's blocks, `(rows, columns)` each, for `threads` threads: one
/// block without parallelism; else about two per thread, split along the
/// longer side — each call copies the columns it multiplies (`col`'s
/// strips), so a row split copies all of `col` once per block (64
/// channels on a 4x16x16 clip: 4 copies of 7 MB), a column split once in
/// all. Rows start on a panel's first row (`panel`).
fn gemm_blocks(
    mg: usize,
    p: usize,
    panel: usize,
    parallel: bool,
    threads: usize,
) -> (usize, usize) {
    let (mg1, p1) = (mg.max(1), p.max(1));
    if !parallel || threads <= 1 {
        return (mg1, p1);
    }
    let parts = 2 * threads;
    if p >= 2 * mg {
        let cols = p.div_ceil(parts).max(MIN_COLS).min(p1);
        return (mg1, cols);
    }
    let want = parts.min(mg.div_ceil(MIN_ROWS)).max(1);
    (mg.div_ceil(want).next_multiple_of(panel.max(1)).max(1), p1)
}

thread_local! {
    /// The unfolded input of the last run on this thread, reused (a
    /// video network's layers unfold up to tens of MB each run).
    static COL: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The range of output positions `o` along one axis whose tap `t` reads
/// inside the input (`0 <= o*stride + t*dilation - pad < len`), clamped to
/// `0..out`.
fn inside(out: usize, len: usize, t: usize, w: &Window3, a: usize) -> (usize, usize) {
    let (s, off) = (
        w.strides[a].max(1),
        (t * w.dilations[a]) as isize - w.pads[a] as isize,
    );
    // o*s + off >= 0  <=>  o >= ceil(-off / s)
    let lo = if off >= 0 {
        0
    } else {
        ((-off) as usize).div_ceil(s)
    };
    // o*s + off < len  <=>  o < ceil((len - off) / s)
    let hi = match len as isize - off {
        e if e <= 0 => 0,
        e => (e as usize).div_ceil(s),
    };
    (lo.min(out), hi.min(out).max(lo.min(out)))
}

/// Unfold depth tap `k0` of one input plane (`id x ih x iw`) into its
/// `kH·kW` rows of `OD·OH·OW` output positions (zero where a tap falls in
/// the padding):
/// per row and output line, zeros, then the taps inside the input — a
/// copy when the stride along W is 1 — then zeros.
fn im2col_plane(g: &Geo, plane: &[f32], k0: usize, rows: &mut [f32]) {
    let [id, ih, iw] = g.idims;
    let [od, oh, ow] = g.odims;
    let [_, kh, kw] = g.kernel;
    let w = g.win;
    let p = od * oh * ow;
    let (sw, dw, pw) = (w.strides[2], w.dilations[2], w.pads[2] as isize);
    let mut row = 0;
    let (z0, z1) = inside(od, id, k0, w, 0);
    for k1 in 0..kh {
        let (y0, y1) = inside(oh, ih, k1, w, 1);
        for k2 in 0..kw {
            let (x0, x1) = inside(ow, iw, k2, w, 2);
            let dst = &mut rows[row * p..(row + 1) * p];
            for o0 in 0..od {
                let lines = &mut dst[o0 * oh * ow..(o0 + 1) * oh * ow];
                if !(z0..z1).contains(&o0) {
                    lines.fill(0.0);
                    continue;
                }
                let z = o0 * w.strides[0] + k0 * w.dilations[0] - w.pads[0];
                for (o1, line) in lines.chunks_exact_mut(ow).enumerate() {
                    if !(y0..y1).contains(&o1) {
                        line.fill(0.0);
                        continue;
                    }
                    let y = o1 * w.strides[1] + k1 * w.dilations[1] - w.pads[1];
                    let src = &plane[(z * ih + y) * iw..(z * ih + y + 1) * iw];
                    line[..x0].fill(0.0);
                    line[x1..].fill(0.0);
                    // The first tap inside: x0*sw + k2*dw - pw >= 0.
                    let first = (x0 * sw + k2 * dw) as isize - pw;
                    let first = first.max(0) as usize;
                    let out = &mut line[x0..x1];
                    if sw == 1 {
                        out.copy_from_slice(&src[first..first + out.len()]);
                    } else {
                        for (j, v) in out.iter_mut().enumerate() {
                            *v = src[first + j * sw];
                        }
                    }
                }
            }
            row += 1;
        }
    }
}

/// A 3-D max or average pool.
#[derive(Clone, Debug)]
pub struct Pool3d {
    win: Window3,
    avg: bool,
    include_pad: bool,
}

impl Pool3d {
    pub fn from_op(b: &Body, o: OpId, avg: bool) -> Option<Pool3d> {
        let d = b.op(o);
        Some(Pool3d {
            win: pool_window_of(d, avg).ok()?,
            avg,
            include_pad: avg && AvgPool3d::attrs(d).count_include_pad() != 0,
        })
    }
}

impl Kernel for Pool3d {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (x, out) = match (ins, outs) {
            ([x], [o]) => (*x, *o),
            _ => return Err("pool3d: expects 1 operand and 1 result".into()),
        };
        let (n, c, dims) = dims5(&x.shape, "input")?;
        let od = self.win.out_sizes(dims)?;
        if out.shape != [n, c, od[0], od[1], od[2]] {
            return Err(format!(
                "result shape {:?} does not fit the window ({n}, {c}, {od:?})",
                out.shape
            ));
        }
        let (pin, pout) = (dims.iter().product::<usize>(), od.iter().product::<usize>());
        let xi = F32In::new(x);
        let mut o = F32Out::new(out);
        let (xp, op) = (Shared(xi.ptr()), Shared(o.ptr()));
        let planes = n * c;
        par.run(planes, planes * pout > 1 << 14, &|pl| {
            // SAFETY: plane `pl` of the input (`pin` elements) is read and
            // plane `pl` of the output (`pout` elements) written by this task only.
            let (src, dst) = unsafe {
                (
                    std::slice::from_raw_parts(xp.p().add(pl * pin), pin),
                    std::slice::from_raw_parts_mut(op.p().add(pl * pout), pout),
                )
            };
            pool3d_plane(src, dims, &self.win, self.avg, self.include_pad, dst);
            Ok(())
        })?;
        o.finish();
        Ok(())
    }

    fn float_only(&self) -> bool {
        true
    }
}
