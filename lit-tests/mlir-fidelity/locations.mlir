// MLIR fidelity: locations
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

// Locations of every kind: file:line:col (columns past 65535 too), unknown,
// names with and without a child, call sites, fused locations with and
// without metadata (unknown parts dropped, duplicates merged and nested
// fused locations flattened, as MLIR builds them), block arguments'.
"builtin.module"() ({
  "x.f"() ({
  ^bb0(%a: i32 loc("x.mlir":1:2), %b: f32 loc(unknown)):
    %0:2 = "x.two"(%a) : (i32) -> (i32, f32) loc(fused["a.mlir":1:1, "b.mlir":2:2])
    "x.br"(%0#0)[^bb1] : (i32) -> () loc(callsite("f"("a":1:1) at "g":2:2))
  ^bb1(%c: i32 loc("c.mlir":3:4)):
    "x.use"(%c) : (i32) -> () loc("named")
    "x.ret"() : () -> () loc(fused<"meta">["q":3:3, unknown])
    "x.n"() : () -> () loc("outer"("inner"))
    "x.fm"() : () -> () loc(fused<{k = 1 : i64}>["z":1:1])
    "x.flat"() : () -> () loc(fused["a":1:1, fused["b":2:2, "a":1:1], unknown])
    "x.one"() : () -> () loc(fused["only":5:6, unknown])
    "x.none"() : () -> () loc(fused[unknown])
    "x.meta_only"() : () -> () loc(fused<"m">[])
    "x.wide"() : () -> () loc("wide.mlir":4294967295:70000)
    "x.esc"() : () -> () loc("q\"uote\n.mlir":1:1)
  }) : () -> () loc("f.mlir":10:1)
}) : () -> () loc("m.mlir":1:1)
