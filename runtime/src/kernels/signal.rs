//! Native kernels of the signal ops (dialects/src/graph/signal.rs). DFT and
//! STFT walk their lines with the op's own drivers (`dft_run`, `stft_run`:
//! zero padding, one-sided output, the IRFFT spectrum) and transform each
//! with rustfft's FFT, O(n log n) at any length: in f64 for every float type
//! (rounded once when stored) except an inverse DFT of f32 or narrower data,
//! in f32 as the ONNX reference data was made — the op's semantics sum the definition
//! directly, which makes the interpreter an independent oracle. The windows
//! and the mel matrix are computed by the op's own functions.

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f64, store_f64};
use ge_dialects::graph::signal::{
    dft_run, mel_weight_matrix, stft_run, window, DftParams, DftPlan, MelParams, StftParams,
    StftPlan, Window as Kind, C,
};
use ge_ir::DType;
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftNum, FftPlanner};
use std::sync::Arc;

fn f64s(s: &Slot) -> Vec<f64> {
    let mut v = vec![0f64; s.numel()];
    load_f64(s.dtype, s.ptr, 0, &mut v);
    v
}

/// Check that the result slot has the shape the op computes.
fn check_out(op: &str, out: &Slot, want: &[usize]) -> Result<(), String> {
    if out.shape != want {
        return Err(format!(
            "{op}: result shape {:?} is not the computed {want:?}",
            out.shape
        ));
    }
    Ok(())
}

/// A length-`n` FFT as the drivers' `transform`: the buffer goes through
/// rustfft's complex type of `T` and back.
struct Transform<T: FftNum> {
    fft: Arc<dyn Fft<T>>,
    buf: Vec<Complex<T>>,
    scratch: Vec<Complex<T>>,
}

impl<T: FftNum> Transform<T> {
    fn new(n: usize, inverse: bool) -> Transform<T> {
        let mut planner = FftPlanner::new();
        let fft = if inverse {
            planner.plan_fft_inverse(n)
        } else {
            planner.plan_fft_forward(n)
        };
        let scratch = vec![Complex::new(T::zero(), T::zero()); fft.get_inplace_scratch_len()];
        Transform {
            fft,
            buf: vec![Complex::new(T::zero(), T::zero()); n],
            scratch,
        }
    }

    fn run(&mut self, b: &mut [C], to: impl Fn(f64) -> T, from: impl Fn(T) -> f64) {
        for (c, &(re, im)) in self.buf.iter_mut().zip(b.iter()) {
            *c = Complex::new(to(re), to(im));
        }
        self.fft
            .process_with_scratch(&mut self.buf, &mut self.scratch);
        for (v, c) in b.iter_mut().zip(&self.buf) {
            *v = (from(c.re), from(c.im));
        }
    }
}

/// `graph.dft`.
#[derive(Clone, Debug)]
pub struct Dft {
    pub params: DftParams,
}

impl Kernel for Dft {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let ([x], [out]) = (ins, outs) else {
            return Err("dft: expects 1 operand and 1 result".into());
        };
        let plan = DftPlan::new(&self.params, &x.shape)?;
        check_out("dft", out, &plan.out_shape)?;
        let mut y = vec![0.0; out.numel()];
        if x.dtype == DType::F64 || !plan.inverse {
            let mut t = Transform::<f64>::new(plan.len, plan.inverse);
            dft_run(&plan, &f64s(x), &mut y, &mut |b| t.run(b, |v| v, |v| v));
        } else {
            // An inverse of f32 (or narrower) data transforms in f32, as
            // numpy's ifft of the complex64 spectrum the ONNX test data was
            // made from: its rounding noise is what the reference holds where
            // the exact value is 0 (test_dft_inverse: 1.9e-7, not an f64
            // transform's 1e-15). The forward cases were made in f64
            // (test_dft: 7e-15 where an f32 transform gives 2e-6), so a
            // forward DFT stays in f64.
            let mut t = Transform::<f32>::new(plan.len, plan.inverse);
            dft_run(&plan, &f64s(x), &mut y, &mut |b| {
                t.run(b, |v| v as f32, f64::from)
            });
        }
        store_f64(out.dtype, out.ptr, 0, &y);
        Ok(())
    }

    fn float_only(&self) -> bool {
        true
    }

    fn f64_ok(&self) -> bool {
        true
    }
}

/// `graph.stft`.
#[derive(Clone, Debug)]
pub struct Stft {
    pub params: StftParams,
}

impl Kernel for Stft {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let (x, w, out) = match (ins, outs) {
            ([x], [o]) => (*x, None, *o),
            ([x, w], [o]) => (*x, Some(*w), *o),
            _ => return Err("stft: expects 1 or 2 operands and 1 result".into()),
        };
        let plan = StftPlan::new(&self.params, &x.shape, w.map(|w| &w.shape[..]))?;
        check_out("stft", out, &plan.out_shape)?;
        let wv = w.map(f64s);
        let mut y = vec![0.0; out.numel()];
        let mut t = Transform::<f64>::new(plan.frame, false);
        stft_run(&plan, &f64s(x), wv.as_deref(), &mut y, &mut |b| {
            t.run(b, |v| v, |v| v)
        });
        store_f64(out.dtype, out.ptr, 0, &y);
        Ok(())
    }

    fn float_only(&self) -> bool {
        true
    }

    fn f64_ok(&self) -> bool {
        true
    }
}

/// `graph.hann_window`, `graph.hamming_window`, `graph.blackman_window`.
#[derive(Clone, Debug)]
pub struct Window {
    pub kind: Kind,
    pub size: usize,
    pub periodic: bool,
}

impl Kernel for Window {
    fn run(&self, _: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let [out] = outs else {
            return Err("window: expects 1 result".into());
        };
        check_out("window", out, &[self.size])?;
        let v = window(self.kind, self.size, self.periodic);
        store_f64(out.dtype, out.ptr, 0, &v);
        Ok(())
    }

    fn f64_ok(&self) -> bool {
        true
    }
}

/// `graph.mel_weight_matrix`.
#[derive(Clone, Debug)]
pub struct Mel {
    pub params: MelParams,
}

impl Kernel for Mel {
    fn run(&self, _: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let [out] = outs else {
            return Err("mel_weight_matrix: expects 1 result".into());
        };
        check_out("mel_weight_matrix", out, &self.params.shape())?;
        let v = mel_weight_matrix(&self.params)?;
        store_f64(out.dtype, out.ptr, 0, &v);
        Ok(())
    }

    fn f64_ok(&self) -> bool {
        true
    }
}
