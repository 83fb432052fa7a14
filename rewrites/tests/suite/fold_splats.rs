//! Folding an elementwise op whose operands are splats computes one element
//! (`ge_ir::interp::fold_splats`): the constant is the one folding every
//! element through the op's semantics gives (`fold_with_semantics`), for
//! unary, binary and broadcasting ops, ops with attributes, and float, half,
//! integer and bool types; non-elementwise ops and non-splat operands are left
//! to the full fold.

use crate::common;
use common::{folds, parse};
use ge_ir::interp::fold_splats;

/// Graph ops (not the function or its return) are folded.
fn graph_op(name: &str) -> bool {
    name.starts_with("graph.") && name != "graph.func" && name != "graph.return"
}

#[test]
fn splat_folds_equal_the_elementwise_folds() {
    let m = parse(
        r#"
graph.func @f() -> () {
  %a = data.constant dense<1.5> : tensor<4x3xf32>
  %b = data.constant dense<-0.375> : tensor<4x3xf32>
  %r = data.constant dense<3.0> : tensor<3xf32>
  %c = data.constant dense<0.2> : tensor<4x1xf32>
  %h = data.constant dense<0.1> : tensor<8xf16>
  %i = data.constant dense<7> : tensor<5xi32>
  %j = data.constant dense<-2> : tensor<5xi32>
  %t = data.constant dense<true> : tensor<5xi1>
  %lo = data.constant dense<0.0> : tensor<f32>
  %hi = data.constant dense<1.0> : tensor<f32>
  %0 = graph.add %a, %b : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = graph.mul %c, %r : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %2 = graph.div %b, %c : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  %3 = graph.sub %a, %r : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %4 = graph.pow %c, %r : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %5 = graph.exp %b : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %6 = graph.sqrt %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %7 = graph.relu %b : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %8 = graph.clip %a min %lo max %hi : (tensor<4x3xf32>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
  %9 = graph.cast %a {to = f16} : (tensor<4x3xf32>) -> tensor<4x3xf16>
  %10 = graph.mul %h, %h : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
  %11 = graph.div %i, %j : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
  %12 = graph.cast %j {to = i1} : (tensor<5xi32>) -> tensor<5xi1>
  %13 = graph.not %t : (tensor<5xi1>) -> tensor<5xi1>
  %14 = graph.leaky_relu %b {alpha = 0.125 : f32} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %15 = graph.where %t, %i, %j : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
  graph.return
}
"#,
    );
    let fs = folds(&m, graph_op, fold_splats);
    assert_eq!(fs.len(), 16);
    for (name, splat, full) in fs {
        let full = full.unwrap_or_else(|| panic!("{name} does not fold"));
        let splat = splat.unwrap_or_else(|| panic!("{name} does not fold as a splat"));
        assert!(full[0].splat, "{name}: the full fold is a splat");
        assert_eq!(splat, full, "{name}");
    }
}

#[test]
fn other_ops_and_operands_are_left_to_the_full_fold() {
    let m = parse(
        r#"
graph.func @f() -> () {
  %a = data.constant dense<1.5> : tensor<4x3xf32>
  %v = data.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %e = data.constant dense<1.0> : tensor<0x3xf32>
  %0 = graph.add %a, %v : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %1 = graph.softmax %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = graph.add %e, %e : (tensor<0x3xf32>, tensor<0x3xf32>) -> tensor<0x3xf32>
  graph.return
}
"#,
    );
    for (name, splat, full) in folds(&m, graph_op, fold_splats) {
        assert!(full.is_some(), "{name} folds");
        assert!(splat.is_none(), "{name} is not folded as a splat");
    }
}
