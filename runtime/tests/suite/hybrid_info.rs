//! `Model::hybrid_ops`: the ops a model decides from run-time values
//! (`graph.specialize`), as ge-run `--info` and ge-atc's `mode` report them.
//! Added for a mutant cargo-mutants found surviving in the crate's tests
//! (docs/testing.md, "Runtime, third pass": `hybrid_ops -> vec![]`; only
//! lit's hybrid.test read it, through ge-run).

use crate::common;
use common::*;
use ge_compile::CompileOptions;

const SRC: &str = r#"graph.func @main(%x: tensor<2x3x4xf32>, %shape: tensor<2xi64>, %axes: tensor<1xi64>) -> tensor<Sxf32> {
  %r = graph.specialize %x, %shape {op = "data.reshape", static_attrs = {allowzero = 0 : i64}, from_values = ["shape:ints"]} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<R0xR1xf32>
  %a = graph.relu %r : (tensor<R0xR1xf32>) -> tensor<R0xR1xf32>
  %s = graph.specialize %a, %axes {op = "graph.reduce_sum", static_attrs = {keepdims = 0 : i64}, from_values = ["axes:ints"]} : (tensor<R0xR1xf32>, tensor<1xi64>) -> tensor<Sxf32>
  graph.return %s : tensor<Sxf32>
}
"#;

/// Each specialised op once, with the operand its values decide and its
/// source line (in kernel-module order; sorted here).
#[test]
fn hybrid_ops_name_each_specialised_op() {
    let model = load(&om_bytes("hyb", SRC, &CompileOptions::default()), 1);
    let mut ops = model.hybrid_ops();
    ops.sort();
    assert_eq!(
        ops,
        [
            r#"data.reshape (shape from values) at loc("hyb":2:3)"#,
            r#"graph.reduce_sum (axes from values) at loc("hyb":4:3)"#,
        ]
    );
}

/// A model without `graph.specialize` has none.
#[test]
fn a_static_model_has_no_hybrid_ops() {
    let src = "graph.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}";
    let model = load(&om_bytes("st", src, &CompileOptions::default()), 1);
    assert!(model.hybrid_ops().is_empty(), "{:?}", model.hybrid_ops());
}
