//! Native kernels of the volumetric ops: `graph.conv3d` as im2col and a GEMM
//! per sample and group (f32, the samples and groups in parallel), and
//! `graph.max_pool3d` / `graph.avg_pool3d` as the op's own pooling loop
//! (`ge_dialects::graph::nn3d::pool3d_plane`) in f32, one plane per task.

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
}

impl Conv3d {
    pub fn from_op(b: &Body, o: OpId) -> Option<Conv3d> {
        let (win, group) = conv_window_of(b.op(o)).ok()?;
        Some(Conv3d { win, group })
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
        let tasks = n * self.group;
        par.run(tasks, tasks > 1 && n * m * p * k > 1 << 16, &|t| {
            let (b, g) = (t / self.group, t % self.group);
            let mut col = vec![0f32; k * p];
            // SAFETY: `x` holds n*c planes of `pin` elements; this task reads
            // the cg planes of group g of sample b.
            let xs =
                unsafe { std::slice::from_raw_parts(xp.p().add((b * c + g * cg) * pin), cg * pin) };
            im2col(&geo, xs, cg, &mut col);
            // SAFETY: the filter rows of group g are mg rows of k elements;
            // the output rows of (b, g) are mg rows of p elements, written by
            // this task only; `col` is k x p.
            unsafe {
                let dst = op.p().add((b * m + g * mg) * p);
                sgemm(
                    mg,
                    k,
                    p,
                    1.0,
                    fp.p().add(g * mg * k),
                    k as isize,
                    1,
                    col.as_ptr(),
                    p as isize,
                    1,
                    0.0,
                    dst,
                    p as isize,
                    1,
                );
                if let Some(bp) = bp {
                    for r in 0..mg {
                        let bv = *bp.p().add(g * mg + r);
                        let row = std::slice::from_raw_parts_mut(dst.add(r * p), p);
                        row.iter_mut().for_each(|v| *v += bv);
                    }
                }
            }
            Ok(())
        })?;
        o.finish();
        Ok(())
    }

    fn float_only(&self) -> bool {
        true
    }
}

/// The geometry im2col needs.
struct Geo<'a> {
    win: &'a Window3,
    idims: [usize; 3],
    odims: [usize; 3],
    kernel: [usize; 3],
}

/// Unfold `cg` input planes into `col` (`cg·kD·kH·kW` rows of `OD·OH·OW`
/// output positions; zero where a tap falls in the padding).
fn im2col(g: &Geo, xs: &[f32], cg: usize, col: &mut [f32]) {
    let [id, ih, iw] = g.idims;
    let [od, oh, ow] = g.odims;
    let [kd, kh, kw] = g.kernel;
    let w = g.win;
    let p = od * oh * ow;
    let at = |o: usize, k: usize, a: usize| {
        (o * w.strides[a] + k * w.dilations[a]) as isize - w.pads[a] as isize
    };
    let mut row = 0;
    for ci in 0..cg {
        let plane = &xs[ci * id * ih * iw..(ci + 1) * id * ih * iw];
        for k0 in 0..kd {
            for k1 in 0..kh {
                for k2 in 0..kw {
                    let dst = &mut col[row * p..(row + 1) * p];
                    let mut j = 0;
                    for o0 in 0..od {
                        let z = at(o0, k0, 0);
                        for o1 in 0..oh {
                            let y = at(o1, k1, 1);
                            let line_ok = z >= 0 && z < id as isize && y >= 0 && y < ih as isize;
                            for o2 in 0..ow {
                                let xx = at(o2, k2, 2);
                                dst[j] = if line_ok && xx >= 0 && xx < iw as isize {
                                    plane[(z as usize * ih + y as usize) * iw + xx as usize]
                                } else {
                                    0.0
                                };
                                j += 1;
                            }
                        }
                    }
                    row += 1;
                }
            }
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
