//! Folding an op whose kernel is a byte copy (`KernelFamily::Copy`: reshape,
//! squeeze, unsqueeze, bitcast) gives the operand's bytes the result type
//! (`ge_ir::interp::fold_bytes`): the constant is the one the op's semantics
//! give (`fold_with_semantics`), a splat stays a splat, and other ops are left
//! to the full fold.

use crate::common;
use common::{folds, parse};
use ge_ir::attributes::DenseElements;
use ge_ir::interp::fold_bytes;

/// Every op of the function's body but constants and the return is folded.
fn body_op(name: &str) -> bool {
    !["graph.func", "graph.return", "data.constant"].contains(&name)
}

#[test]
fn byte_folds_equal_the_semantic_folds() {
    let m = parse(
        r#"
graph.func @f() -> () {
  %s = data.constant dense<0.02> : tensor<4x3xf32>
  %v = data.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %h = data.constant dense<[[1.5, -2.0]]> : tensor<1x2xf16>
  %i = data.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %0 = data.reshape %s {shape = [12]} : (tensor<4x3xf32>) -> tensor<12xf32>
  %1 = data.reshape %v {shape = [3, -1]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = data.squeeze %h {axes = [0]} : (tensor<1x2xf16>) -> tensor<2xf16>
  %3 = data.unsqueeze %i {axes = [0]} : (tensor<4xi64>) -> tensor<1x4xi64>
  %4 = graph.bitcast %v {to = i32} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %5 = graph.bitcast %s {to = ui32} : (tensor<4x3xf32>) -> tensor<4x3xui32>
  graph.return
}
"#,
    );
    let fs = folds(&m, body_op, fold_bytes);
    assert_eq!(fs.len(), 6);
    for (name, bytes, full) in fs {
        let full = full.unwrap_or_else(|| panic!("{name} does not fold"));
        let bytes = bytes.unwrap_or_else(|| panic!("{name} does not fold as bytes"));
        let canonical: Vec<DenseElements> = bytes.iter().map(|d| d.clone().canonical()).collect();
        assert_eq!(canonical, full, "{name}");
    }
}

#[test]
fn splats_stay_splats() {
    let m = parse(
        r#"
graph.func @f() -> () {
  %s = data.constant dense<0.02> : tensor<64x3x11x11xf32>
  %0 = data.reshape %s {shape = [64, -1]} : (tensor<64x3x11x11xf32>) -> tensor<64x363xf32>
  graph.return
}
"#,
    );
    let fs = folds(&m, body_op, fold_bytes);
    let d = &fs[0].1.as_ref().expect("folds as bytes")[0];
    assert!(d.splat);
    assert_eq!(d.bytes.len(), 4);
}

#[test]
fn other_ops_are_left_to_the_full_fold() {
    let m = parse(
        r#"
graph.func @f() -> () {
  %a = data.constant dense<1.5> : tensor<4x3xf32>
  %t = data.constant dense<[true, false]> : tensor<2xi1>
  %0 = graph.relu %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = graph.bitcast %t {to = i8} : (tensor<2xi1>) -> tensor<2xi8>
  graph.return
}
"#,
    );
    for (name, bytes, _) in folds(&m, body_op, fold_bytes) {
        assert!(bytes.is_none(), "{name} is not folded as bytes");
    }
}
