// MLIR fidelity: properties <{...}> of unregistered ops
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "x.props"() <{p = 7 : i64, q = [1, 2, 3]}> ({
// CHECK-NEXT:     "x.inner"() <{flag}> : () -> ()
// CHECK-NEXT:   }) {p = 8 : i64} : () -> ()
// CHECK-NEXT:   "x.any"() <[1, "two"]> : () -> ()
// CHECK-NEXT:   "x.int"() <5 : i32> : () -> ()
// CHECK-NEXT:   "x.empty"() <{}> : () -> ()
// CHECK-NEXT:   "x.succ"() ({
// CHECK-NEXT:     "x.br"()[^bb1] <{w = array<i32: 1, 0>}> : () -> ()
// CHECK-NEXT:   ^bb1:  // pred: ^bb0
// CHECK-NEXT:     "x.end"() : () -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT:   %0 = "arith.constant"() <{value = 1.500000e+00 : f32}> : () -> f32
// CHECK-NEXT:   %1 = "arith.addf"(%0, %0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// Properties of unregistered ops are one opaque attribute, kept apart from
// the attributes (a name may be in both); ops mlir-opt knows (arith) are
// unregistered in ge and keep theirs the same way.
"x.props"() <{p = 7 : i64, q = [1, 2, 3]}> ({
  "x.inner"() <{flag}> : () -> ()
}) {p = 8 : i64} : () -> ()
"x.any"() <[1, "two"]> : () -> ()
"x.int"() <5 : i32> : () -> ()
"x.empty"() <{}> : () -> ()
"x.succ"() ({
  "x.br"()[^bb1] <{w = array<i32: 1, 0>}> : () -> ()
^bb1:
  "x.end"() : () -> ()
}) : () -> ()
%0 = "arith.constant"() <{value = 1.500000e+00 : f32}> : () -> f32
%1 = "arith.addf"(%0, %0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
