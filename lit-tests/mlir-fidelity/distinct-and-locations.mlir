// MLIR fidelity: `distinct[N]<...>` and locations as attribute values (issue
// 18). ge keeps both and prints them in place, as mlir-opt-22 does with
// --mlir-print-local-scope: the CHECK lines are mlir-opt-22's output
// (checked everywhere), where mlir-opt-22 is installed the two outputs are
// compared whole, and ge-opt reads its own output back to the same text.
// The input is mlir-opt-22's default output (aliases defined first).
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic --mlir-print-local-scope %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "x.op"() {a = distinct[0]<42 : i64>, b = loc("file.mlir":1:2), c = distinct[1]<>, d = [distinct[0]<42 : i64>, loc(unknown)], e = loc(fused["a", "b":3:4]), f = loc("n"("f":1:2)), g = distinct[1]<>} : () -> ()
// CHECK-NEXT:   "x.op2"() <{p = distinct[2]<"s">}> {q = loc(callsite("a":1:1 at "b":2:2))} : () -> ()
// CHECK-NEXT:   "x.nest"() {a = distinct[3]<distinct[4]<>>, b = distinct[5]<[1, 2]>, c = distinct[6]<{k = 1 : i64}>, d = distinct[7]<>} : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

#distinct = distinct[0]<42 : i64>
#distinct1 = distinct[1]<>
#loc = loc("file.mlir":1:2)
#loc1 = loc(unknown)
#loc2 = loc("a")
#loc3 = loc("b":3:4)
#loc4 = loc("f":1:2)
#loc5 = loc("a":1:1)
#loc6 = loc("b":2:2)
#loc7 = loc(fused[#loc2, #loc3])
#loc8 = loc("n"(#loc4))
#loc9 = loc(callsite(#loc5 at #loc6))
module {
  "x.op"() {a = #distinct, b = #loc, c = #distinct1, d = [#distinct, #loc1], e = #loc7, f = #loc8, g = #distinct1} : () -> ()
  "x.op2"() <{p = distinct[2]<"s">}> {q = #loc9} : () -> ()
  "x.nest"() {a = distinct[3]<distinct[4]<>>, b = distinct[5]<[1, 2]>, c = distinct[6]<{k = 1}>, d = distinct[7]<unit>} : () -> ()
}
