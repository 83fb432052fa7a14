//! `graph.tfidf_vectorizer` (ONNX TfIdfVectorizer): rows of i32/i64 tokens
//! counted and weighted by the op's own `tfidf` (the pool's n-grams indexed
//! once, when the kernel is built), rows in parallel.

use super::{Kernel, Par, Slot};
use crate::buffer::{load_i64, store_f64};
use crate::shared::Shared;
use ge_dialects::graph::tfidf::{tfidf, tfidf_rows, TfIdfParams};

#[derive(Clone, Debug)]
pub struct TfIdf {
    pub params: TfIdfParams,
}

impl Kernel for TfIdf {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String> {
        let (&[x], &[y]) = (ins, outs) else {
            return Err("tfidf_vectorizer takes 1 operand and gives 1 result".into());
        };
        let (rows, c) = tfidf_rows(&x.shape)?;
        let width = self.params.out_size;
        if y.numel() != rows * width || y.shape.last().copied() != Some(width) {
            return Err(format!(
                "tfidf_vectorizer of {:?} cannot give {:?} ({width} columns)",
                x.shape, y.shape
            ));
        }
        let mut tokens = vec![0i64; x.numel()];
        load_i64(x.dtype, x.ptr, 0, &mut tokens);
        let tokens = &tokens;
        let yp = Shared(y.ptr);
        let dtype = y.dtype;
        par.run(rows, rows * c > 1 << 14, &|r| {
            let v = tfidf(&self.params, &tokens[r * c..(r + 1) * c], 1, c);
            // Row `r` of the output: elements r*width..(r+1)*width of the
            // `rows * width` checked above; each task writes its own row.
            store_f64(dtype, yp.p(), r * width, &v);
            Ok(())
        })
    }
}
