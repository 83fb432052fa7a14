//! `data.tile` (ONNX Tile): the input repeated along each dim. A byte copy
//! of any dtype: each output row (the innermost dim) is the input row it
//! wraps to, copied once per repeat of the innermost dim. The repeats are
//! the ratio of the output's dims to the input's.

use super::{Kernel, Par, Slot};

#[derive(Clone, Debug)]
pub struct Tile;

impl Kernel for Tile {
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], _par: &Par) -> Result<(), String> {
        let (&[x], &[y]) = (ins, outs) else {
            return Err("tile takes 1 operand and gives 1 result".into());
        };
        let fits = x.shape.len() == y.shape.len()
            && x.dtype.byte_size() == y.dtype.byte_size()
            && x.shape.iter().zip(&y.shape).all(|(&d, &o)| match d {
                0 => o == 0,
                _ => o % d == 0,
            });
        if !fits {
            return Err(format!("tile of {:?} cannot give {:?}", x.shape, y.shape));
        }
        if y.numel() == 0 {
            return Ok(());
        }
        let es = x.dtype.byte_size();
        let Some((&row, outer)) = x.shape.split_last() else {
            // A scalar: one element.
            // SAFETY: both slots hold one element of `es` bytes.
            unsafe { std::ptr::copy_nonoverlapping(x.ptr, y.ptr, es) };
            return Ok(());
        };
        let out_row = y.shape[y.shape.len() - 1];
        let out_outer = &y.shape[..y.shape.len() - 1];
        let in_st = ge_ir::tensor::strides(outer);
        let rows: usize = out_outer.iter().product();
        let mut idx = vec![0usize; out_outer.len()];
        for r in 0..rows {
            let src_row: usize = idx
                .iter()
                .zip(outer)
                .zip(&in_st)
                .map(|((&i, &d), &s)| (i % d) * s)
                .sum();
            for k in 0..out_row / row {
                // SAFETY: input row `src_row` (< the product of the input's
                // outer dims, `row` elements) and output row `r` at column
                // `k * row` (`row` elements of `out_row`) lie inside their
                // slots, whose shapes were checked above; the two slots
                // are different values.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        x.ptr.add(src_row * row * es),
                        y.ptr.add((r * out_row + k * row) * es),
                        row * es,
                    )
                };
            }
            for d in (0..idx.len()).rev() {
                idx[d] += 1;
                if idx[d] < out_outer[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Ok(())
    }
}
