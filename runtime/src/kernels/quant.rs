//! Native kernels of `graph.quantize_linear` and `graph.dequantize_linear`:
//! one pass over the elements with the op's own element rules
//! (`ge_dialects::graph::quant`), so the compiled model and the reference
//! agree bit for bit.

use super::{Kernel, Par, Slot};
use crate::buffer::{class_of, load_f64, store_f32, store_f64, store_i64, Class};
use ge_dialects::graph::quant::{
    dequantize_value, quantize_value, scale_indices, DequantizeLinear, QuantizeLinear,
};
use ge_ir::body::{Body, OpId};

/// Quantize (`to` set) or dequantize.
#[derive(Clone, Debug)]
pub struct Quant {
    quantize: bool,
    axis: i64,
    block_size: i64,
    saturate: bool,
}

impl Quant {
    pub fn quantize(b: &Body, o: OpId) -> Quant {
        let a = QuantizeLinear::attrs(b.op(o));
        Quant {
            quantize: true,
            axis: a.axis(),
            block_size: a.block_size(),
            saturate: a.saturate() != 0,
        }
    }
    pub fn dequantize(b: &Body, o: OpId) -> Quant {
        let a = DequantizeLinear::attrs(b.op(o));
        Quant {
            quantize: false,
            axis: a.axis(),
            block_size: a.block_size(),
            saturate: false,
        }
    }
}

/// A slot's elements as f64 (exact for every dtype these ops read).
fn load(s: &Slot) -> Result<Vec<f64>, String> {
    let mut v = vec![0f64; s.numel()];
    load_f64(s.dtype, s.ptr, 0, &mut v);
    Ok(v)
}

impl Kernel for Quant {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let (x, s, out) = match (ins, outs) {
            ([x, s], [o]) | ([x, s, _], [o]) => (*x, *s, *o),
            _ => return Err("quantize: expects 2 or 3 operands and 1 result".into()),
        };
        if out.shape != x.shape {
            return Err(format!(
                "result shape {:?} is not the input's {:?}",
                out.shape, x.shape
            ));
        }
        let idx = scale_indices(&x.shape, &s.shape, self.axis, self.block_size)?;
        let scale = load(s)?;
        let zp = match ins.get(2) {
            Some(z) if z.numel() != s.numel() => {
                return Err(format!(
                    "the zero point has {} values, the scale {}",
                    z.numel(),
                    s.numel()
                ))
            }
            Some(z) => load(z)?,
            None => vec![0.0; scale.len()],
        };
        let xv = load(x)?;
        let (to, from) = (out.dtype, x.dtype);
        let y = xv.iter().zip(&idx).map(|(&v, &k)| {
            if self.quantize {
                quantize_value(v, scale[k], zp[k], from, to, self.saturate)
            } else {
                dequantize_value(v, scale[k], zp[k], from, to)
            }
        });
        match class_of(to).ok_or("f64 data")? {
            Class::F => store_f32(to, out.ptr, 0, &y.map(|v| v as f32).collect::<Vec<_>>()),
            Class::I => store_i64(to, out.ptr, 0, &y.map(|v| v as i64).collect::<Vec<_>>()),
            Class::D => store_f64(to, out.ptr, 0, &y.collect::<Vec<_>>()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ge_ir::DType;

    fn slot(dtype: DType, shape: &[usize], bytes: &mut [u8]) -> Slot {
        Slot {
            ptr: bytes.as_mut_ptr(),
            shape: shape.to_vec(),
            dtype,
        }
    }

    /// Per-axis quantisation to i8: rounded half to even, shifted, clamped.
    #[test]
    fn per_axis_quantize() {
        let mut x: Vec<u8> = [2.5f32, -300.0, 3.0, 4.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut s: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut z = vec![1u8, 0];
        let mut y = vec![0u8; 4];
        let q = Quant {
            quantize: true,
            axis: 1,
            block_size: 0,
            saturate: true,
        };
        let (xs, ss, zs, ys) = (
            slot(DType::F32, &[2, 2], &mut x),
            slot(DType::F32, &[2], &mut s),
            slot(DType::I8, &[2], &mut z),
            slot(DType::I8, &[2, 2], &mut y),
        );
        q.run(&[&xs, &ss, &zs], &[&ys], &Par::NONE).unwrap();
        assert_eq!(
            y.iter().map(|&b| b as i8).collect::<Vec<_>>(),
            vec![3, -128, 4, 2]
        );
    }
}
