//! TfIdfVectorizer maps to `graph.tfidf_vectorizer`
//! (dialects/src/graph/tfidf.rs) with integer pools; string pools are
//! refused (ge has no string tensors).

use super::{invalid, one, unsupported, Cx, Node, Res};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;

pub fn tfidf_vectorizer(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    if n.has("pool_strings") {
        return Err(unsupported(
            n,
            "with a string pool (pool_strings; ge has no string tensors)",
        ));
    }
    let need_i = |name: &str| -> Res<i64> {
        n.opt_i(name)?
            .ok_or_else(|| invalid(n, format!("requires attribute '{name}'")))
    };
    let need_ints = |name: &str| -> Res<Vec<i64>> {
        n.ints(name)
            .ok_or_else(|| invalid(n, format!("requires attribute '{name}'")))
    };
    let mode = n.s("mode", "")?;
    if !matches!(mode.as_str(), "TF" | "IDF" | "TFIDF") {
        return Err(invalid(
            n,
            format!("mode must be TF, IDF or TFIDF, got '{mode}'"),
        ));
    }
    let weights: Vec<Attribute> = n
        .floats("weights")
        .unwrap_or_default()
        .into_iter()
        .map(|w| Attribute::f64(w as f64))
        .collect();
    let attrs = vec![
        (
            "min_gram_length",
            Attribute::i64(need_i("min_gram_length")?),
        ),
        (
            "max_gram_length",
            Attribute::i64(need_i("max_gram_length")?),
        ),
        ("max_skip_count", Attribute::i64(need_i("max_skip_count")?)),
        ("mode", Attribute::string(&mode)),
        (
            "ngram_counts",
            Attribute::i64_array(&need_ints("ngram_counts")?),
        ),
        (
            "ngram_indexes",
            Attribute::i64_array(&need_ints("ngram_indexes")?),
        ),
        (
            "pool_int64s",
            Attribute::i64_array(&need_ints("pool_int64s")?),
        ),
        ("weights", Attribute::array(weights)),
    ];
    one(cx.e.op("graph.tfidf_vectorizer", &[x], attrs)?)
}
