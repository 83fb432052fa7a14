// MLIR fidelity: location aliases
// With --print-debuginfo ge-opt writes every location in place, as
// mlir-opt-22 does with --mlir-print-local-scope: the CHECK lines are
// mlir-opt-22's output (checked everywhere), where mlir-opt-22 is installed
// the two outputs are compared whole, and ge-opt reads its own output back
// to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic --print-debuginfo %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic --print-debuginfo %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic --mlir-print-debuginfo --mlir-print-local-scope %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "x.f"() ({
// CHECK-NEXT:   ^bb0(%arg0: i32 loc("x.mlir":1:2), %arg1: f32 loc(unknown)):
// CHECK-NEXT:     %0:2 = "x.two"(%arg0) : (i32) -> (i32, f32) loc(fused["a.mlir":1:1, "b.mlir":2:2])
// CHECK-NEXT:     "x.br"(%0#0)[^bb1] : (i32) -> () loc(callsite("f"("a":1:1) at "g":2:2))
// CHECK-NEXT:   ^bb1(%1: i32 loc("c.mlir":3:4)):  // pred: ^bb0
// CHECK-NEXT:     "x.use"(%1) : (i32) -> () loc("named")
// CHECK-NEXT:     "x.ret"() : () -> () loc(fused<"meta">["q":3:3])
// CHECK-NEXT:     "x.n"() : () -> () loc("outer"("inner"))
// CHECK-NEXT:     "x.fm"() : () -> () loc(fused<{k = 1 : i64}>["z":1:1])
// CHECK-NEXT:     "x.flat"() : () -> () loc(fused["a":1:1, "b":2:2])
// CHECK-NEXT:     "x.one"() : () -> () loc("only":5:6)
// CHECK-NEXT:     "x.none"() : () -> () loc(unknown)
// CHECK-NEXT:     "x.meta_only"() : () -> () loc(fused<"m">[unknown])
// CHECK-NEXT:     "x.wide"() : () -> () loc("wide.mlir":4294967295:70000)
// CHECK-NEXT:     "x.esc"() : () -> () loc("q\22uote\0A.mlir":1:1)
// CHECK-NEXT:   }) : () -> () loc("f.mlir":10:1)
// CHECK-NEXT: }) : () -> () loc("m.mlir":1:1)
// CHECK-NOT: {{.}}

// Location aliases as mlir-opt-22 prints them by default (most defined after
// the module, uses before definitions) are resolved; this input is
// mlir-opt-22's --mlir-print-debuginfo output for locations.mlir.
#loc2 = loc("x.mlir":1:2)
#loc3 = loc(unknown)
#loc8 = loc("c.mlir":3:4)
"builtin.module"() ({
  "x.f"() ({
  ^bb0(%arg0: i32 loc("x.mlir":1:2), %arg1: f32 loc(unknown)):
    %0:2 = "x.two"(%arg0) : (i32) -> (i32, f32) loc(#loc17)
    "x.br"(%0#0)[^bb1] : (i32) -> () loc(#loc24)
  ^bb1(%1: i32 loc("c.mlir":3:4)):  // pred: ^bb0
    "x.use"(%1) : (i32) -> () loc(#loc9)
    "x.ret"() : () -> () loc(#loc19)
    "x.n"() : () -> () loc(#loc20)
    "x.fm"() : () -> () loc(#loc21)
    "x.flat"() : () -> () loc(#loc22)
    "x.one"() : () -> () loc(#loc14)
    "x.none"() : () -> () loc(#loc3)
    "x.meta_only"() : () -> () loc(#loc23)
    "x.wide"() : () -> () loc(#loc15)
    "x.esc"() : () -> () loc(#loc16)
  }) : () -> () loc(#loc1)
}) : () -> () loc(#loc)
#loc = loc("m.mlir":1:1)
#loc1 = loc("f.mlir":10:1)
#loc4 = loc("a.mlir":1:1)
#loc5 = loc("b.mlir":2:2)
#loc6 = loc("a":1:1)
#loc7 = loc("g":2:2)
#loc9 = loc("named")
#loc10 = loc("q":3:3)
#loc11 = loc("inner")
#loc12 = loc("z":1:1)
#loc13 = loc("b":2:2)
#loc14 = loc("only":5:6)
#loc15 = loc("wide.mlir":4294967295:70000)
#loc16 = loc("q\22uote\0A.mlir":1:1)
#loc17 = loc(fused[#loc4, #loc5])
#loc18 = loc("f"(#loc6))
#loc19 = loc(fused<"meta">[#loc10])
#loc20 = loc("outer"(#loc11))
#loc21 = loc(fused<{k = 1 : i64}>[#loc12])
#loc22 = loc(fused[#loc6, #loc13])
#loc23 = loc(fused<"m">[#loc3])
#loc24 = loc(callsite(#loc18 at #loc7))
