// MLIR fidelity: builtin types ge models
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   %0 = "x.t"() : () -> i1
// CHECK-NEXT:   %1:3 = "x.u"(%0) : (i1) -> (tensor<*xf32>, tensor<?x4x?xbf16>, tensor<f64>)
// CHECK-NEXT:   %2 = "x.v"(%1#0, %1#2) : (tensor<*xf32>, tensor<f64>) -> tensor<2x3xf16, #x.enc<"e">>
// CHECK-NEXT:   "x.w"() {a = i8, b = i16, c = i32, d = i64, e = ui8, f = ui16, g = ui32, h = ui64, i = f16, j = bf16, k = f32, l = f64, m = index, n = none, o = (i32) -> (i32, f32), p = () -> (), q = (tensor<1xi1>) -> (() -> i32), r = tensor<0x5xi8>} : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// Builtin types ge models: integers, floats, index, none, tensors (ranked,
// unranked, dynamic, with an encoding), function types; values of them.
%0 = "x.t"() : () -> i1
%1:3 = "x.u"(%0) : (i1) -> (tensor<*xf32>, tensor<?x4x?xbf16>, tensor<f64>)
%2 = "x.v"(%1#0, %1#2) : (tensor<*xf32>, tensor<f64>) -> tensor<2x3xf16, #x.enc<"e">>
"x.w"() {a = i8, b = i16, c = i32, d = i64, e = ui8, f = ui16, g = ui32, h = ui64, i = f16, j = bf16, k = f32, l = f64, m = index, n = none, o = (i32) -> (i32, f32), p = () -> (), q = (tensor<1xi1>) -> (() -> i32), r = tensor<0x5xi8>} : () -> ()
