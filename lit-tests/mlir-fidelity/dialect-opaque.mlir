// MLIR fidelity: attributes and types of other dialects
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   %0 = "x.dialect"() {a = #foo<bar baz>, b = #foo.op<"x">, c = !foo.bar<x>, d = !foo<"q">, e = #foo.simple, f = !foo.simple, g = #foo<"str">, h = #foo.nest<<1>, [2], "(">, i = !foo.nest<!bar.t<#baz.a>>, j = [#foo.x, !foo.y]} : () -> !foo.t
// CHECK-NEXT:   %1 = "x.use"(%0) : (!foo.t) -> !foo.u<tensor<4xf32>>
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// Attributes and types of dialects ge does not know, kept as written.
%0 = "x.dialect"() {a = #foo<bar baz>, b = #foo.op<"x">, c = !foo.bar<x>, d = !foo<"q">, e = #foo.simple, f = !foo.simple, g = #foo<"str">, h = #foo.nest<<1>, [2], "(">, i = !foo.nest<!bar.t<#baz.a>>, j = [#foo.x, !foo.y]} : () -> !foo.t
%1 = "x.use"(%0) : (!foo.t) -> !foo.u<tensor<4xf32>>
