//! `graph.center_crop_pad` (ONNX CenterCropPad) and `graph.affine_grid`
//! (ONNX AffineGrid). A center crop-or-pad is a zero pad by the amounts
//! (negative: cropped) that `crop_pad_amounts` — shared with the op's
//! semantics — gives for the run's input and output shapes, run by the pad
//! kernel (one `memcpy` per row). The affine grid is the op's own
//! `affine_grid` in f32, batch entries in parallel.

use super::{F32In, F32Out, Kernel, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::geometry::{affine_grid, affine_grid_dims, crop_pad_amounts};
use ge_ir::Dim;

#[derive(Clone, Debug)]
pub struct CenterCropPad;

impl Kernel for CenterCropPad {
    /// Copies element bytes: f64 as well.
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x], &[y]) = (ins, outs) else {
            return Err("center_crop_pad takes 1 operand and gives 1 result".into());
        };
        if x.shape.len() != y.shape.len() {
            return Err(format!(
                "center_crop_pad of {:?} cannot give {:?}",
                x.shape, y.shape
            ));
        }
        let pads = crop_pad_amounts(&x.shape, &y.shape);
        // The pad kernel checks the shapes and dtypes against the amounts.
        super::pad::Pad::zeros(pads, x.dtype).run(ins, outs, par)
    }
}

#[derive(Clone, Debug)]
pub struct AffineGrid {
    pub size: Vec<i64>,
    pub align: bool,
}

impl Kernel for AffineGrid {
    fn float_only(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[th], &[y]) = (ins, outs) else {
            return Err("affine_grid takes 1 operand and gives 1 result".into());
        };
        let td: Vec<Dim> = th.shape.iter().map(|&d| Dim::Static(d as i64)).collect();
        let want: Vec<usize> = affine_grid_dims(Some(&td), &self.size)?
            .iter()
            .map(|d| d.as_static().unwrap_or(-1) as usize)
            .collect();
        if want != y.shape {
            return Err(format!(
                "affine_grid of {:?} at size {:?} gives {want:?}, not {:?}",
                th.shape, self.size, y.shape
            ));
        }
        let n = y.shape[0];
        let spatial = &y.shape[1..y.shape.len() - 1];
        let per_batch = y.numel() / n.max(1);
        let ti = F32In::new(th);
        let ts = ti.slice();
        let mut yo = F32Out::new(y);
        let yp = Shared(yo.ptr());
        par.run(n, y.numel() > 1 << 14, &|b| {
            // SAFETY: batch entry `b` is the `per_batch` elements at
            // `b * per_batch` of the output, which holds n * per_batch f32s
            // (its shape was checked above); tasks own distinct entries.
            let out =
                unsafe { std::slice::from_raw_parts_mut(yp.p().add(b * per_batch), per_batch) };
            affine_grid(ts, spatial, self.align, b..b + 1, out);
            Ok(())
        })?;
        yo.finish();
        Ok(())
    }
}
