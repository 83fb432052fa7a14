//! The kernels of issue 16's small gaps against the reference interpreter:
//! graph.tfidf_vectorizer and graph.tree_ensemble (runtime/src/kernels/
//! {tfidf,tree_ensemble}.rs), reduce_max/reduce_min on i1 (kernels/norm.rs)
//! and the inverse DFT, which transforms f32 data in f32
//! (kernels/signal.rs). Each case compiles a one-op function, loads it with
//! every kernel native (`common::load` fails when one runs on the
//! interpreter), runs it at 1 and 2 threads and compares. Tokens are random
//! in 0..8, so the pool's n-grams (ids 2..8) occur; features are random in
//! -1..1 against splits in that range. A bool max kernel that starts from
//! i64::MIN fails the empty-axis case (checked once).

use crate::common;
use common::*;

fn one_op(x: &str, y: &str, op: &str, attrs: &str) -> String {
    format!(
        "graph.func @main(%x: {x}) -> {y} {{\n  %y = {op} %x {{{attrs}}} : ({x}) -> {y}\n  graph.return %y : {y}\n}}\n"
    )
}

fn check(text: &str, seed: u64, what: &str) {
    let (types, m) = signature(text, "main");
    let ins = random_inputs(&types, &[], seed);
    native_matches_interpreter(text, &m, &ins, what);
}

#[test]
fn tfidf_matches_the_interpreter() {
    let pool = "ngram_counts = [0, 4, 7], ngram_indexes = [0, 1, 2, 3, 4, 5, 6, 7, 8], \
                pool_int64s = [2, 3, 5, 4, 5, 6, 7, 1, 6, 7, 2, 7, 3]";
    // (input, output, min, max, skip, mode, weights)
    let cases = [
        ("tensor<12xi64>", "tensor<9xf32>", 1, 3, 0, "TF", ""),
        ("tensor<5x40xi32>", "tensor<5x9xf32>", 2, 2, 5, "TF", ""),
        (
            "tensor<3x30xi64>",
            "tensor<3x9xf32>",
            1,
            3,
            3,
            "TFIDF",
            ", weights = [1.0, 0.5, 2.0, 3.0, 0.25, 1.5, 4.0, 2.5, 0.75]",
        ),
        (
            "tensor<64x16xi32>",
            "tensor<64x9xf32>",
            1,
            2,
            2,
            "IDF",
            ", weights = [1.0, 0.5, 2.0, 3.0, 0.25, 1.5, 4.0, 2.5, 0.75]",
        ),
        ("tensor<4x9xi32>", "tensor<4x9xf32>", 3, 3, 1, "IDF", ""),
        ("tensor<0x5xi64>", "tensor<0x9xf32>", 1, 1, 0, "TF", ""),
    ];
    for (x, y, min, max, skip, mode, w) in cases {
        let attrs = format!(
            "min_gram_length = {min} : i64, max_gram_length = {max} : i64, max_skip_count = {skip} : i64, mode = \"{mode}\", {pool}{w}"
        );
        let text = one_op(x, y, "graph.tfidf_vectorizer", &attrs);
        check(
            &text,
            5,
            &format!("tfidf {x} {min}..{max} skip {skip} {mode}"),
        );
    }
}

#[test]
fn tree_ensemble_matches_the_interpreter() {
    // Two trees over 3 features: tree A (root 0) x0 <= 0.1 → node 1 else
    // node 2; node 1: x1 < -0.3 → leaf 0 else leaf 1; node 2: x2 in {..} (a
    // NaN goes true) → leaf 2 else leaf 3; tree B (root 3) x1 >= 0.2 → leaf
    // 4 else leaf 5. Targets 0..3.
    let tables = "tree_roots = [0, 3], nodes_modes = [0, 1, 6, 2], nodes_featureids = [0, 1, 2, 1], \
                  nodes_splits = [0.1, -0.3, 0.0, 0.2], nodes_truenodeids = [1, 0, 2, 4], \
                  nodes_falsenodeids = [2, 1, 3, 5], nodes_trueleafs = [0, 1, 1, 1], \
                  nodes_falseleafs = [0, 1, 1, 1], nodes_missing_value_tracks_true = [0, 0, 1, 0], \
                  leaf_targetids = [0, 1, 2, 0, 1, 2], leaf_weights = [0.5, -1.25, 3.0, 0.75, 2.5, -0.5], \
                  membership_values = [0.0, 0.5], membership_counts = [2]";
    for (dt, agg, n) in [
        ("f32", "SUM", 7),
        ("f32", "AVERAGE", 50),
        ("f64", "MIN", 9),
        ("f16", "MAX", 12),
        ("f32", "MAX", 300),
    ] {
        let (x, y) = (format!("tensor<{n}x3x{dt}>"), format!("tensor<{n}x3x{dt}>"));
        let attrs = format!("n_targets = 3 : i64, aggregate_function = \"{agg}\", {tables}");
        let text = one_op(&x, &y, "graph.tree_ensemble", &attrs);
        check(&text, 9, &format!("tree_ensemble {x} {agg}"));
    }
}

#[test]
fn bool_max_min_match_the_interpreter() {
    for (x, y, axes) in [
        (
            "tensor<4x2xi1>",
            "tensor<4xi1>",
            "axes = [1], keepdims = 0 : i64",
        ),
        ("tensor<3x5x7xi1>", "tensor<1x5x1xi1>", "axes = [0, 2]"),
        ("tensor<2x0x4xi1>", "tensor<2x1x4xi1>", "axes = [1]"),
        ("tensor<6x6xi1>", "tensor<i1>", "keepdims = 0 : i64"),
    ] {
        for op in ["graph.reduce_max", "graph.reduce_min"] {
            let text = one_op(x, y, op, axes);
            check(&text, 3, &format!("{op} {x}"));
        }
    }
}

#[test]
fn inverse_dft_in_f32_matches_the_interpreter() {
    for (x, y, attrs) in [
        (
            "tensor<1x10x10x2xf32>",
            "tensor<1x10x10x2xf32>",
            "axis = 1 : i64, inverse = 1 : i64",
        ),
        (
            "tensor<3x16x2xf32>",
            "tensor<3x16x2xf32>",
            "axis = 1 : i64, inverse = 1 : i64",
        ),
        (
            "tensor<2x7x2xf16>",
            "tensor<2x7x2xf16>",
            "axis = 1 : i64, inverse = 1 : i64",
        ),
        (
            "tensor<2x5x2xf32>",
            "tensor<2x8x1xf32>",
            "axis = 1 : i64, inverse = 1 : i64, onesided = 1 : i64",
        ),
    ] {
        let text = one_op(x, y, "graph.dft", attrs);
        check(&text, 4, &format!("inverse dft {x}"));
    }
}
