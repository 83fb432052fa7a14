//! Max / average pooling (NCHW) and global pooling, one plane per task.

use super::{CPtrF, F32In, F32Out, Par, PtrF, Slot};
use ge_ir::body::{Body, OpId};

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
    pub fn from_op(b: &Body, o: OpId) -> Pool {
        let d = b.op(o);
        let arr = |k: &str, def: &[i64]| {
            d.attr(k)
                .and_then(|a| a.as_i64_array())
                .unwrap_or_else(|| def.to_vec())
        };
        let two = |v: Vec<i64>| {
            [
                v.first().copied().unwrap_or(1) as isize,
                v.get(1).copied().unwrap_or(1) as isize,
            ]
        };
        let p = arr("pads", &[0, 0, 0, 0]);
        let pg = |i: usize| p.get(i).copied().unwrap_or(0) as isize;
        Pool {
            avg: d.name.as_str() == "graph.avg_pool2d",
            kernel: two(arr("kernel_shape", &[1, 1])),
            strides: two(arr("strides", &[1, 1])),
            pads: [pg(0), pg(1), pg(2), pg(3)],
            dilations: two(arr("dilations", &[1, 1])),
            include_pad: d
                .attr("count_include_pad")
                .and_then(|a| a.as_int())
                .unwrap_or(0)
                != 0,
        }
    }

    pub fn run(&self, x: &Slot, out: &Slot, par: &Par) -> Result<(), String> {
        let [n, c, h, w] = super::conv::dims4(&x.shape)?;
        let [_, _, oh, ow] = super::conv::dims4(&out.shape)?;
        let xi = F32In::new(x);
        let mut o = F32Out::new(out);
        let (xp, op) = (CPtrF(xi.ptr()), PtrF(o.ptr()));
        let (h_, w_) = (h as isize, w as isize);
        let (hmax, wmax) = (h_ + self.pads[2], w_ + self.pads[3]);
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
