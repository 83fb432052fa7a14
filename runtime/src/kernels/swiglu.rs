//! Native kernel of `graph.swiglu`: the op's element function
//! (`ge_dialects::graph::swiglu::swiglu`, rounding where the ONNX reference
//! casts) over the two inputs: computed in f64, every factor rounded to the
//! element type (f32, f16, bf16 as the reference's arithmetic in that type;
//! f64 data kept at f64).

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f64, store_f64};
use ge_dialects::graph::swiglu::swiglu;
use ge_ir::tensor::round_f;

/// SwiGLU with its `alpha`.
#[derive(Clone, Debug)]
pub struct Swiglu {
    pub alpha: f64,
}

impl Kernel for Swiglu {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let (&[a, b], &[y]) = (ins, outs) else {
            return Err("swiglu takes 2 operands and gives 1 result".into());
        };
        if a.shape != b.shape || y.shape != a.shape {
            return Err(format!(
                "swiglu of {:?} and {:?} cannot give {:?} (one shape, no broadcasting)",
                a.shape, b.shape, y.shape
            ));
        }
        let n = a.numel();
        let (mut av, mut bv) = (vec![0f64; n], vec![0f64; n]);
        load_f64(a.dtype, a.ptr, 0, &mut av);
        load_f64(b.dtype, b.ptr, 0, &mut bv);
        let dt = y.dtype;
        let round = |v: f64| round_f(dt, v);
        let out: Vec<f64> = av
            .iter()
            .zip(&bv)
            .map(|(&x, &g)| swiglu(x, g, self.alpha, round))
            .collect();
        store_f64(dt, y.ptr, 0, &out);
        Ok(())
    }

    fn float_only(&self) -> bool {
        true
    }

    fn f64_ok(&self) -> bool {
        true
    }
}
