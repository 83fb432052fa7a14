// MLIR fidelity: sparse elements attributes
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "x.sparse"() {a = sparse<0, 1.000000e+00> : tensor<2x2xf32>, b = sparse<{{\[\[}}0, 1], [1, 0]], [1, 2]> : tensor<2x2xi32>, c = sparse<> : tensor<2xf32>, d = sparse<0, 1.500000e+00> : tensor<2xf32>, e = sparse<[0, 1], 5> : tensor<4xi64>, f = sparse<1, true> : tensor<2x2xi1>, g = sparse<{{\[\[}}0, 0, 1], [1, 2, 3]], [-1.000000e-03, 2.500000e-01]> : tensor<2x3x4xf64>, h = sparse<{{\[\[}}0], [1]], 7> : tensor<3xi8>} : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// Indices are an [N, rank] list (or [N] for rank 1, or one splat index),
// values N elements or a splat; both print as MLIR's dense bodies (splats
// when all equal — so [[1, 1]] is `1`), the values in MLIR's float spelling.
"x.sparse"() {a = sparse<[[0, 0]], [1.0]> : tensor<2x2xf32>, b = sparse<[[0, 1], [1, 0]], [1, 2]> : tensor<2x2xi32>, c = sparse<> : tensor<2xf32>, d = sparse<0, 1.5> : tensor<2xf32>, e = sparse<[0, 1], [5, 5]> : tensor<4xi64>, f = sparse<[[1, 1]], [true]> : tensor<2x2xi1>, g = sparse<[[0, 0, 1], [1, 2, 3]], [-1.0e-3, 0.25]> : tensor<2x3x4xf64>, h = sparse<[[0], [1]], 7> : tensor<3xi8>} : () -> ()
