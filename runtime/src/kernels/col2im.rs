//! `graph.col2im` (ONNX Col2Im): the op's own `col2im` (shared with its
//! semantics in dialects/src/graph/col2im.rs) in f32, one (batch entry,
//! channel) plane per task: planes read disjoint columns and write disjoint
//! image planes. f64 computes in f64.

use super::{F32In, F32Out, Kernel, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::col2im::{col2im, Col2ImGeom};
use ge_dialects::graph::opkit::Real;
use ge_ir::DType;

/// Run `g` over every plane of `xs` into `y`, `il` elements per plane.
fn planes<T: Real>(
    g: &Col2ImGeom,
    xs: &[T],
    y: *mut T,
    planes: usize,
    il: usize,
    par: &Par,
) -> Result<(), String> {
    let yp = Shared(y);
    par.run(planes, xs.len() > 1 << 14, &|p| {
        // SAFETY: plane `p` is the `il` elements at `p * il` of the output,
        // which holds `planes * il` elements (its shape was checked by the
        // caller); tasks own distinct planes.
        let out = unsafe { std::slice::from_raw_parts_mut(yp.p().add(p * il), il) };
        col2im(g, xs, p..p + 1, out);
        Ok(())
    })
}

#[derive(Clone, Debug)]
pub struct Col2Im {
    pub geom: Col2ImGeom,
}

impl Kernel for Col2Im {
    fn float_only(&self) -> bool {
        true
    }

    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x], &[y]) = (ins, outs) else {
            return Err("col2im takes 1 operand and gives 1 result".into());
        };
        let g = &self.geom;
        let (kl, ll, il) = (g.block_len(), g.cols_len(), g.image_len());
        let bad = || {
            format!(
                "col2im of {:?} into {:?} does not fit blocks {:?} at {} positions",
                x.shape, y.shape, g.block, ll
            )
        };
        let &[n, ck, l] = &x.shape[..] else {
            return Err(bad());
        };
        let c = ck / kl.max(1);
        let mut want = vec![n, c];
        want.extend(&g.image);
        if l != ll || ck != c * kl || y.shape != want {
            return Err(bad());
        }
        if x.dtype == DType::F64 && y.dtype == DType::F64 {
            // SAFETY: the input slot holds `x.numel()` f64s (its dtype and
            // shape were checked) and is not written while the kernel runs.
            let xs = unsafe { std::slice::from_raw_parts(x.ptr as *const f64, x.numel()) };
            return planes(g, xs, y.ptr as *mut f64, n * c, il, par);
        }
        let xi = F32In::new(x);
        let mut yo = F32Out::new(y);
        planes(g, xi.slice(), yo.ptr(), n * c, il, par)?;
        yo.finish();
        Ok(())
    }
}
