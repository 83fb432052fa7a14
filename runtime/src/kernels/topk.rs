//! `graph.topk` (ONNX TopK): along the axis, the k first elements in the
//! op's own order ([`topk_order`], which the reference sorts by too: NaN
//! largest, ties in index order), their values copied as bytes (any dtype)
//! and their indices as i64. Keys are compared as f64, as the reference does.

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f64, store_i64};
use crate::shared::Shared;
use ge_dialects::graph::index::topk_order;

#[derive(Clone, Debug)]
pub struct TopK {
    pub axis: i64,
    pub largest: bool,
}

impl Kernel for TopK {
    fn f64_ok(&self) -> bool {
        true
    }

    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x], &[vals, idx]) = (ins, outs) else {
            return Err("topk takes 1 operand and gives 2 results".into());
        };
        let rank = x.shape.len();
        let ax = super::norm::norm_axis(self.axis, rank)?;
        let n = x.shape.get(ax).copied().unwrap_or(1);
        let k = vals.shape.get(ax).copied().unwrap_or(1);
        let mut want = x.shape.clone();
        if let Some(d) = want.get_mut(ax) {
            *d = k;
        }
        if k > n || vals.shape != want || idx.shape != want || vals.dtype != x.dtype {
            return Err(format!(
                "topk of {:?} along axis {ax} cannot give {:?} and {:?}",
                x.shape, vals.shape, idx.shape
            ));
        }
        let outer: usize = x.shape[..ax.min(rank)].iter().product();
        let inner: usize = x.shape.get(ax + 1..).map_or(1, |s| s.iter().product());
        let mut keys = vec![0f64; x.numel()];
        load_f64(x.dtype, x.ptr, 0, &mut keys);
        let es = x.dtype.byte_size();
        let mut ids = vec![0i64; outer * k * inner];
        let ip = Shared(ids.as_mut_ptr());
        let (xp, vp) = (Shared(x.ptr as *const u8), Shared(vals.ptr));
        let largest = self.largest;
        par.run(outer, outer * n * inner > 1 << 14, &|o| {
            let mut line: Vec<usize> = Vec::with_capacity(n);
            for i in 0..inner {
                let at = |j: usize| (o * n + j) * inner + i;
                line.clear();
                line.extend(0..n);
                line.sort_by(|&p, &q| topk_order(keys[at(p)], keys[at(q)], largest));
                for (r, &j) in line.iter().take(k).enumerate() {
                    let dst = (o * k + r) * inner + i;
                    // SAFETY: `dst` < outer*k*inner = the numel of `ids` and
                    // of the values result, `at(j)` < the input's numel
                    // (shapes checked above); task `o` writes only its own
                    // block of k*inner positions.
                    unsafe {
                        *ip.p().add(dst) = j as i64;
                        std::ptr::copy_nonoverlapping(
                            xp.p().add(at(j) * es),
                            vp.p().add(dst * es),
                            es,
                        );
                    }
                }
            }
            Ok(())
        })?;
        store_i64(idx.dtype, idx.ptr, 0, &ids);
        Ok(())
    }
}
