//! `graph.tree_ensemble` (ONNX ai.onnx.ml TreeEnsemble): the op's own
//! `predict` over the checked tables (built once, with the kernel), in f64
//! with every aggregation step rounded to the element type; rows in
//! parallel.

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f64, store_f64};
use crate::shared::Shared;
use ge_dialects::graph::tree_ensemble::{predict, tree_rows, TreeParams};

#[derive(Clone, Debug)]
pub struct TreeEnsemble {
    pub params: TreeParams,
}

impl Kernel for TreeEnsemble {
    fn float_only(&self) -> bool {
        true
    }

    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x], &[y]) = (ins, outs) else {
            return Err("tree_ensemble takes 1 operand and gives 1 result".into());
        };
        let (rows, f) = tree_rows(&self.params, &x.shape)?;
        let width = self.params.n_targets;
        if y.shape != [rows, width] {
            return Err(format!(
                "tree_ensemble of {:?} cannot give {:?} ({width} targets)",
                x.shape, y.shape
            ));
        }
        let mut xs = vec![0f64; x.numel()];
        load_f64(x.dtype, x.ptr, 0, &mut xs);
        let xs = &xs;
        let yp = Shared(y.ptr);
        let dtype = y.dtype;
        par.run(rows, rows * self.params.n_targets > 1 << 12, &|r| {
            let v = predict(&self.params, &xs[r * f..(r + 1) * f], 1, f, dtype);
            // Row `r` of the output: elements r*width..(r+1)*width of the
            // `rows x width` checked above; each task writes its own row.
            store_f64(dtype, yp.p(), r * width, &v);
            Ok(())
        })
    }
}
