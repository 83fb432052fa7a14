// MLIR fidelity: arrays, dense arrays, dictionaries, unit and type attributes
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "x.arrays"() {a = array<i64: 1, 2>, b = array<f32: 1.000000e+00, 2.500000e+00>, c = array<i1: true, false>, d = array<i64>, e = array<i8: -1, 127>, f = array<i16: 300>, g = array<i32: 1, 0>, h = array<f64: 5.000000e-01>, i = [], j = {{\[\[}}], [1, [2, [3]]]], k = [unit, true, "s", 1.500000e+00 : f16, i32, @f]} : () -> ()
// CHECK-NEXT:   "x.dicts"() {a = {}, b = {x, y = 1 : i32, "z w" = [1]}, c = {nested = {deeper = {deepest}}}, f = (i32, f32) -> (), n = none, t = tensor<2xf32>, u} : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// Arrays, dense arrays of every element type, dictionaries, unit attributes
// and type attributes.
"x.arrays"() {a = array<i64: 1, 2>, b = array<f32: 1.0, 2.5>, c = array<i1: true, false>, d = array<i64>, e = array<i8: -1, 127>, f = array<i16: 300>, g = array<i32: 1, 0>, h = array<f64: 0.5>, i = [], j = [[], [1, [2, [3]]]], k = [unit, true, "s", 1.5 : f16, i32, @f]} : () -> ()
"x.dicts"() {a = {}, b = {x, y = 1 : i32, "z w" = [1]}, c = {nested = {deeper = {deepest}}}, u, t = tensor<2xf32>, f = (i32, f32) -> (), n = none} : () -> ()
