//! Native kernels of `graph.matmul_integer`, `graph.qlinear_matmul`,
//! `graph.conv_integer` and `graph.qlinear_conv`: the op's own integer
//! product (or convolution) and requantisation
//! (`ge_dialects::graph::qlinear`), accumulated in i32, so the compiled model
//! and the reference agree bit for bit.

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f64, load_i64, store_i64};
use ge_dialects::graph::nn::ConvAttrs;
use ge_dialects::graph::qlinear::{
    conv_integer, matmul_integer, requantize_all, ConvInteger, Product, QlinearConv, Scales,
};
use ge_ir::body::{Body, OpId};

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
                requantized(&p, (sa, sb), sy, yz, out)?
            }
            _ => return Err("quantised matmul: wrong number of operands".into()),
        };
        store_i64(out.dtype, out.ptr, 0, &values);
        Ok(())
    }
}

/// `p` requantised to `out`'s type with the per-row and per-column scales
/// `rows_cols`, `y_scale` and `y_zero_point`.
fn requantized(
    p: &Product,
    rows_cols: (&Slot, &Slot),
    y: &Slot,
    yz: &Slot,
    out: &Slot,
) -> Result<Vec<i64>, String> {
    let (sa, sb, sy) = (floats(rows_cols.0), floats(rows_cols.1), floats(y));
    let s = Scales {
        a: &sa,
        b: &sb,
        y: &sy,
        dtype: y.dtype,
    };
    let v = requantize_all(p, &s, &floats(yz), out.dtype)?;
    Ok(v.into_iter().map(|v| v as i64).collect())
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

/// A quantised 2-D convolution: plain (i32 accumulators) or requantised.
#[derive(Clone, Debug)]
pub struct QConv {
    requantize: bool,
    strides: Vec<i64>,
    pads: Vec<i64>,
    dilations: Vec<i64>,
    group: i64,
}

impl QConv {
    pub fn conv_integer(b: &Body, o: OpId) -> QConv {
        let a = ConvInteger::attrs(b.op(o));
        QConv {
            requantize: false,
            strides: a.strides(),
            pads: a.pads(),
            dilations: a.dilations(),
            group: a.group(),
        }
    }
    pub fn qlinear_conv(b: &Body, o: OpId) -> QConv {
        let a = QlinearConv::attrs(b.op(o));
        QConv {
            requantize: true,
            strides: a.strides(),
            pads: a.pads(),
            dilations: a.dilations(),
            group: a.group(),
        }
    }
}

impl Kernel for QConv {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let [out] = outs else {
            return Err("quantised conv: expects 1 result".into());
        };
        let a = ConvAttrs::check(
            self.strides.clone(),
            self.pads.clone(),
            self.dilations.clone(),
            self.group,
        )?;
        let conv = |x: &Slot, xz: &Slot, w: &Slot, wz: &Slot, bias: Option<&Slot>| {
            let b = bias.map(ints);
            let p = conv_integer(
                (&ints(x), &x.shape, &ints(xz)),
                (&ints(w), &w.shape, &ints(wz)),
                b.as_deref(),
                &a,
            )?;
            check_shape(&p, out)?;
            Ok::<Product, String>(p)
        };
        let values = match (self.requantize, ins) {
            (false, [x, w, xz, wz]) => conv(x, xz, w, wz, None)?.values,
            (true, [x, sx, xz, w, sw, wz, sy, yz, bias]) => {
                let p = conv(x, xz, w, wz, Some(bias))?;
                if sx.numel() != 1 {
                    return Err("'input_scale' must have one value".into());
                }
                // Per output channel: the filter's scale is the rows' scale.
                requantized(&p, (sw, sx), sy, yz, out)?
            }
            _ => return Err("quantised conv: wrong number of operands".into()),
        };
        store_i64(out.dtype, out.ptr, 0, &values);
        Ok(())
    }
}
