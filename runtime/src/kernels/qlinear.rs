//! Native kernels of `graph.matmul_integer` and `graph.qlinear_matmul`: the
//! op's own integer product and requantisation
//! (`ge_dialects::graph::qlinear`), accumulated in i32, so the compiled model
//! and the reference agree bit for bit.

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f64, load_i64, store_i64};
use ge_dialects::graph::qlinear::{matmul_integer, requantize_all, Product, Scales};

/// A quantised matrix product: plain (i32 accumulators) or requantised.
#[derive(Clone, Debug)]
pub struct QMatMul {
    pub requantize: bool,
}

/// A slot's elements as i64.
fn ints(s: &Slot) -> Vec<i64> {
    let mut v = vec![0i64; s.numel()];
    load_i64(s.dtype, s.ptr, 0, &mut v);
    v
}

/// A slot's elements as f64.
fn floats(s: &Slot) -> Vec<f64> {
    let mut v = vec![0f64; s.numel()];
    load_f64(s.dtype, s.ptr, 0, &mut v);
    v
}

/// The product of `a` and `b` with their zero points.
fn product(a: &Slot, a_zp: &Slot, b: &Slot, b_zp: &Slot) -> Result<Product, String> {
    matmul_integer(
        (&ints(a), &a.shape, &ints(a_zp)),
        (&ints(b), &b.shape, &ints(b_zp)),
    )
}

impl Kernel for QMatMul {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let [out] = outs else {
            return Err("quantised matmul: expects 1 result".into());
        };
        let values = match (self.requantize, ins) {
            (false, [a, b, az, bz]) => {
                let p = product(a, az, b, bz)?;
                check_shape(&p, out)?;
                p.values
            }
            (true, [a, sa, az, b, sb, bz, sy, yz]) => {
                let p = product(a, az, b, bz)?;
                check_shape(&p, out)?;
                if sy.numel() != 1 || yz.numel() != 1 {
                    return Err("'y_scale' and 'y_zero_point' must have one value each".into());
                }
                let (fa, fb) = (floats(sa), floats(sb));
                let s = Scales {
                    a: &fa,
                    b: &fb,
                    y: floats(sy)[0],
                    dtype: sa.dtype,
                };
                let y = requantize_all(&p, &s, floats(yz)[0], out.dtype)?;
                y.into_iter().map(|v| v as i64).collect()
            }
            _ => return Err("quantised matmul: wrong number of operands".into()),
        };
        store_i64(out.dtype, out.ptr, 0, &values);
        Ok(())
    }
}

/// The result slot must have the product's shape.
fn check_shape(p: &Product, out: &Slot) -> Result<(), String> {
    if p.shape != out.shape {
        return Err(format!(
            "result shape {:?} is not the product's {:?}",
            out.shape, p.shape
        ));
    }
    Ok(())
}
