//! N-gram counting (ONNX TfIdfVectorizer on integer tokens).
//!
//! Each row of token ids is scanned for the n-grams of a pool, with skips
//! (an n-gram of skip distance `d` takes every `d`-th token), and each hit
//! counts in the n-gram's output column; the counts are then weighted (TF,
//! IDF, TFIDF). The counting is shared by the reference semantics and the
//! runtime's native kernel (runtime/src/kernels/tfidf.rs): [`TfIdfParams`]
//! checks the attributes and builds the pool's lookup tables once,
//! [`tfidf`] counts and weights. The scan is onnxruntime's (which the ONNX
//! reference copies): for each skip distance `1..=max_skip_count + 1`, every
//! start position, n-grams of growing length while they remain a prefix of a
//! pool n-gram; unigrams are counted on the first pass only.

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interfaces::CostCtx;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{AttrSource, InferCtx, OpDef, TypeConstraint as C};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim, Type};
use std::collections::{HashMap, HashSet};

type SemResult = Result<Vec<Tensor>, String>;

/// How counts become outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weighting {
    /// The count.
    Tf,
    /// The n-gram's weight (1 without weights) when it occurs, else 0.
    Idf,
    /// The count times the n-gram's weight.
    TfIdf,
}

/// The checked attributes of a `graph.tfidf_vectorizer` with the pool's
/// n-grams indexed.
#[derive(Clone, Debug)]
pub struct TfIdfParams {
    pub min_gram: usize,
    pub max_gram: usize,
    pub max_skip: usize,
    pub weighting: Weighting,
    /// The output column of each n-gram id (`ngram_indexes`).
    pub columns: Vec<usize>,
    /// Output row size: `max(ngram_indexes) + 1`.
    pub out_size: usize,
    /// Per output column (empty: every weight 1).
    pub weights: Vec<f64>,
    /// The pool's n-grams of lengths `min_gram..=max_gram`, to their id (a
    /// repeated n-gram keeps its last id, as the reference's trie does).
    grams: HashMap<Vec<i64>, usize>,
    /// Every prefix of those n-grams: a scan stops at the first token
    /// sequence that is none (the reference's trie walk).
    prefixes: HashSet<Vec<i64>>,
}

/// An attribute that must be present.
fn required<T>(v: Option<T>, name: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("requires attribute '{name}'"))
}

fn non_negative(v: i64, name: &str) -> Result<usize, String> {
    usize::try_from(v).map_err(|_| format!("attribute '{name}' must be >= 0, but got {v}"))
}

/// The largest output row the op accepts (a column index comes from an
/// attribute: a huge one must not allocate gigabytes per row).
const MAX_COLUMNS: usize = 1 << 24;

impl TfIdfParams {
    pub fn of(src: &impl AttrSource) -> Result<TfIdfParams, String> {
        let a = TfidfVectorizer::attrs(src);
        let min_gram = non_negative(
            required(a.min_gram_length(), "min_gram_length")?,
            "min_gram_length",
        )?;
        let max_gram = non_negative(
            required(a.max_gram_length(), "max_gram_length")?,
            "max_gram_length",
        )?;
        if min_gram < 1 || max_gram < min_gram {
            return Err(format!(
                "attributes 'min_gram_length' {min_gram} and 'max_gram_length' {max_gram} must satisfy 1 <= min <= max"
            ));
        }
        let max_skip = non_negative(
            required(a.max_skip_count(), "max_skip_count")?,
            "max_skip_count",
        )?;
        let weighting = match required(a.mode(), "mode")? {
            "TF" => Weighting::Tf,
            "IDF" => Weighting::Idf,
            _ => Weighting::TfIdf,
        };
        let counts = required(a.ngram_counts(), "ngram_counts")?;
        let pool = required(a.pool_int64s(), "pool_int64s")?;
        let columns = required(a.ngram_indexes(), "ngram_indexes")?
            .into_iter()
            .map(|v| non_negative(v, "ngram_indexes"))
            .collect::<Result<Vec<usize>, String>>()?;
        let out_size = columns.iter().max().map_or(0, |m| m + 1);
        if out_size == 0 || out_size > MAX_COLUMNS {
            return Err(format!(
                "attribute 'ngram_indexes' must be non-empty with entries below {MAX_COLUMNS}"
            ));
        }
        let weights = a.weights();
        if !weights.is_empty() && weights.len() < out_size {
            return Err(format!(
                "attribute 'weights' has {} entries, fewer than the {out_size} output columns",
                weights.len()
            ));
        }
        // ngram_counts[i] starts the pool's (i+1)-grams; they run to the next
        // start (or the end of the pool).
        let mut grams = HashMap::new();
        let mut prefixes = HashSet::new();
        let mut id = 0usize;
        for (i, &start) in counts.iter().enumerate() {
            let end = counts.get(i + 1).copied().unwrap_or(pool.len() as i64);
            if start < 0 || start > end || end > pool.len() as i64 {
                return Err(format!(
                    "attribute 'ngram_counts' {counts:?} must be non-decreasing starts within the pool of {} ids",
                    pool.len()
                ));
            }
            let size = i + 1;
            let items = &pool[start as usize..end as usize];
            let n = items.len() / size;
            if (min_gram..=max_gram).contains(&size) {
                for g in items.chunks_exact(size) {
                    for k in 1..=size {
                        prefixes.insert(g[..k].to_vec());
                    }
                    grams.insert(g.to_vec(), id);
                    id += 1;
                }
            } else {
                id += n;
            }
        }
        if id > columns.len() {
            return Err(format!(
                "the pool holds {id} n-grams but 'ngram_indexes' gives a column for {}",
                columns.len()
            ));
        }
        Ok(TfIdfParams {
            min_gram,
            max_gram,
            max_skip,
            weighting,
            columns,
            out_size,
            weights,
            grams,
            prefixes,
        })
    }

    /// Count the n-grams of one row of tokens into `freq` (one output row).
    fn count_row(&self, row: &[i64], freq: &mut [u64]) {
        let c = row.len();
        let mut start_size = self.min_gram;
        let mut gram = Vec::with_capacity(self.max_gram.min(c));
        // A skip distance of c or more fits no n-gram longer than one token
        // (and unigrams count on the first pass only): the attribute's bound
        // is cut to c, so a huge max_skip_count cannot loop for ever.
        for skip in 1..=self.max_skip.saturating_add(1).min(c.max(1)) {
            for start in 0..c {
                if start.saturating_add(skip.saturating_mul(start_size - 1)) >= c {
                    break;
                }
                gram.clear();
                let mut item = start;
                while gram.len() < self.max_gram && item < c {
                    gram.push(row[item]);
                    if !self.prefixes.contains(&gram) {
                        break;
                    }
                    if gram.len() >= start_size {
                        if let Some(&id) = self.grams.get(&gram) {
                            freq[self.columns[id]] += 1;
                        }
                    }
                    item += skip;
                }
            }
            // Unigrams do not depend on the skip: counted on the first pass.
            if start_size == 1 {
                start_size = 2;
                if start_size > self.max_gram {
                    break;
                }
            }
        }
    }

    /// The weighted value of count `f` in output column `col`.
    fn weigh(&self, f: u64, col: usize) -> f64 {
        let w = self.weights.get(col).copied().unwrap_or(1.0);
        match self.weighting {
            Weighting::Tf => f as f64,
            Weighting::Idf if f > 0 => w,
            Weighting::Idf => 0.0,
            Weighting::TfIdf => w * f as f64,
        }
    }
}

/// The output dims for an input of `dims` (`[C]` or `[N, C]`).
pub fn tfidf_dims(p_out: usize, dims: &[Dim]) -> Result<Vec<Dim>, String> {
    match dims {
        [_] => Ok(vec![Dim::Static(p_out as i64)]),
        [n, _] => Ok(vec![*n, Dim::Static(p_out as i64)]),
        _ => Err(format!(
            "operand 'input' must have rank 1 ([C]) or 2 ([N, C]), but has rank {}",
            dims.len()
        )),
    }
}

/// Count and weigh: `x` holds `rows` rows of `c` tokens; the result is
/// `rows x out_size`, row-major.
pub fn tfidf(p: &TfIdfParams, x: &[i64], rows: usize, c: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(rows * p.out_size);
    let mut freq = vec![0u64; p.out_size];
    for r in 0..rows {
        freq.iter_mut().for_each(|f| *f = 0);
        p.count_row(&x[r * c..(r + 1) * c], &mut freq);
        out.extend(freq.iter().enumerate().map(|(col, &f)| p.weigh(f, col)));
    }
    out
}

/// Rows and row length of an input shape (`[C]`: one row).
pub fn tfidf_rows(shape: &[usize]) -> Result<(usize, usize), String> {
    match shape {
        [c] => Ok((1, *c)),
        [n, c] => Ok((*n, *c)),
        _ => Err(format!(
            "operand 'input' must have rank 1 ([C]) or 2 ([N, C]), but has shape {shape:?}"
        )),
    }
}

fn infer_tfidf(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let p = TfIdfParams::of(cx)?;
    let Some(d) = dims(cx.operand_types[0], "input")? else {
        return Ok(vec![Type::unranked(DType::F32)]);
    };
    Ok(vec![Type::tensor(&tfidf_dims(p.out_size, &d)?, DType::F32)])
}

fn sem_tfidf(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    let p = TfIdfParams::of(cx)?;
    let x = t[0];
    let (rows, c) = tfidf_rows(&x.shape)?;
    let out = tfidf(&p, &x.to_i64(), rows, c);
    let mut shape = x.shape.clone();
    if let Some(last) = shape.last_mut() {
        *last = p.out_size;
    }
    Ok(vec![Tensor::from_f64(shape, DType::F32, out)])
}

/// A lookup per token, n-gram length and skip distance.
fn tfidf_flops(cx: &CostCtx) -> f64 {
    let n: f64 = cx.operand_dims(0).iter().product();
    let a = TfidfVectorizer::attrs(&cx.attrs);
    let grams = a.max_gram_length().unwrap_or(1).max(1) as f64;
    let skips = a.max_skip_count().unwrap_or(0).max(0) as f64 + 1.0;
    n * grams * skips
}

def_op! {
    /// N-gram counts of integer token rows, weighted (ONNX TfIdfVectorizer)
    ///
    /// `input` is `[C]` or `[N, C]` token ids (i32 or i64); the result is `[out]` or `[N, out]`
    /// f32 with `out = max(ngram_indexes) + 1`. The pool `pool_int64s` lists the n-grams by
    /// length: `ngram_counts[i]` is where the `(i+1)`-grams start; the n-gram with id `k` (in
    /// pool order) counts in column `ngram_indexes[k]`. Only lengths `min_gram_length..=
    /// max_gram_length` are counted, with skip distances `1..=max_skip_count + 1` (a skip-`d`
    /// n-gram takes every `d`-th token; unigrams count once). `mode` TF gives the counts, IDF
    /// the column's weight where the count is non-zero, TFIDF the count times the weight
    /// (`weights` per output column, 1 when empty). String pools are not supported.
    pub TfidfVectorizer = "graph.tfidf_vectorizer" {
        operands { input: C::TensorOf(&[DType::I32, DType::I64]) },
        results { output: C::TensorOf(&[DType::F32]) },
        attrs {
            /// the shortest n-gram counted
            min_gram_length: I64,
            /// the longest n-gram counted
            max_gram_length: I64,
            /// the largest number of tokens skipped between two of an n-gram's
            max_skip_count: I64,
            /// TF (counts), IDF (weights of the present n-grams) or TFIDF (their product)
            mode: Enum(&["TF", "IDF", "TFIDF"]),
            /// where the pool's (i+1)-grams start, for each length
            ngram_counts: I64Array,
            /// the output column of each n-gram of the pool, in pool order
            ngram_indexes: I64Array,
            /// the n-grams, shortest first, token by token
            pool_int64s: I64Array,
            /// weight per output column (empty: 1)
            weights: F64Array = [],
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_tfidf,
        semantics: sem_tfidf,
        interfaces [
            Cost::vector(tfidf_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::ClassicalMl,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&TFIDF_VECTORIZER];

#[cfg(test)]
mod tests {
    use super::*;
    use ge_ir::attributes::AttrDict;
    use ge_ir::{Attribute, Ident};

    fn params(mode: &str, min: i64, max: i64, skip: i64, weights: &[f64]) -> TfIdfParams {
        // The pool of ONNX's test_tfidfvectorizer_* cases: unigrams 2 3 5 4,
        // bigrams (5 6) (7 8) (6 7), columns 0..7.
        let a = |k: &str, v: Attribute| (Ident::new(k), v);
        let d = AttrDict::new(vec![
            a("min_gram_length", Attribute::i64(min)),
            a("max_gram_length", Attribute::i64(max)),
            a("max_skip_count", Attribute::i64(skip)),
            a("mode", Attribute::string(mode)),
            a("ngram_counts", Attribute::i64_array(&[0, 4])),
            a(
                "ngram_indexes",
                Attribute::i64_array(&[0, 1, 2, 3, 4, 5, 6]),
            ),
            a(
                "pool_int64s",
                Attribute::i64_array(&[2, 3, 5, 4, 5, 6, 7, 8, 6, 7]),
            ),
            a(
                "weights",
                Attribute::array(weights.iter().map(|&w| Attribute::f64(w)).collect()),
            ),
        ]);
        TfIdfParams::of(&d).expect("valid attributes")
    }

    const X: [i64; 12] = [1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8];

    #[test]
    fn counts_as_the_onnx_cases() {
        // test_tfidfvectorizer_tf_only_bigrams_skip0
        let p = params("TF", 2, 2, 0, &[]);
        assert_eq!(tfidf(&p, &X, 1, 12), [0., 0., 0., 0., 1., 1., 1.]);
        // test_tfidfvectorizer_tf_uniandbigrams_skip5
        let p = params("TF", 1, 2, 5, &[]);
        assert_eq!(tfidf(&p, &X, 1, 12), [0., 3., 1., 0., 1., 3., 1.]);
        // test_tfidfvectorizer_tf_onlybigrams_skip5
        let p = params("TF", 2, 2, 5, &[]);
        assert_eq!(tfidf(&p, &X, 1, 12), [0., 0., 0., 0., 1., 3., 1.]);
    }

    #[test]
    fn huge_lengths_and_skips_end() {
        // Untrusted attributes: no overflow, no loop over 2^63 skip distances
        // (before the bound was cut to the row length this test hung).
        let p = params("TF", 1, i64::MAX, i64::MAX, &[]);
        assert_eq!(tfidf(&p, &X, 1, 12), [0., 3., 1., 0., 1., 3., 1.]);
    }

    #[test]
    fn weighs_by_column() {
        let w = [1., 2., 3., 4., 5., 6., 7.];
        let p = params("IDF", 2, 2, 5, &w);
        assert_eq!(tfidf(&p, &X, 1, 12), [0., 0., 0., 0., 5., 6., 7.]);
        let p = params("TFIDF", 2, 2, 5, &w);
        assert_eq!(tfidf(&p, &X, 1, 12), [0., 0., 0., 0., 5., 18., 7.]);
    }
}
