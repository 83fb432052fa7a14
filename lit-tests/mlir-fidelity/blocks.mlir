// MLIR fidelity: blocks, successors, regions, results and value numbering
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   %0:2 = "x.multi"() : () -> (i32, f32)
// CHECK-NEXT:   %1 = "x.use"(%0#1, %0#0) : (f32, i32) -> i64
// CHECK-NEXT:   "x.cfg"() ({
// CHECK-NEXT:   ^bb0(%arg0: i32, %arg1: i64):
// CHECK-NEXT:     %7 = "x.c"() : () -> i1
// CHECK-NEXT:     "x.cond_br"(%7, %arg0)[^bb1, ^bb2] : (i1, i32) -> ()
// CHECK-NEXT:   ^bb1:  // pred: ^bb0
// CHECK-NEXT:     "x.br"(%arg0)[^bb3] : (i32) -> ()
// CHECK-NEXT:   ^bb2:  // pred: ^bb0
// CHECK-NEXT:     "x.br"(%arg0)[^bb3] : (i32) -> ()
// CHECK-NEXT:   ^bb3(%8: i32):  // 2 preds: ^bb1, ^bb2
// CHECK-NEXT:     "x.br2"()[^bb4, ^bb4] : () -> ()
// CHECK-NEXT:   ^bb4:  // 2 preds: ^bb3, ^bb3
// CHECK-NEXT:     "x.ret"(%8, %arg1) : (i32, i64) -> ()
// CHECK-NEXT:   ^bb5:  // no predecessors
// CHECK-NEXT:     "x.dead"() : () -> ()
// CHECK-NEXT:   }, {
// CHECK-NEXT:     "x.other"(%1) : (i64) -> ()
// CHECK-NEXT:   }, {
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT:   "x.graph"() ({
// CHECK-NEXT:     %3 = "x.a"(%4) : (i32) -> i32
// CHECK-NEXT:     %4 = "x.b"(%3) : (i32) -> i32
// CHECK-NEXT:     "x.nested"() ({
// CHECK-NEXT:       %5 = "x.c"(%3, %6) : (i32, i32) -> i32
// CHECK-NEXT:       %6 = "x.d"() : () -> i32
// CHECK-NEXT:     }) : () -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT:   %2 = "x.late"() : () -> f32
// CHECK-NEXT:   "x.empty_block"() ({
// CHECK-NEXT:   ^bb0:
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// Blocks, successors (with predecessor comments), block arguments, several
// regions, several results, graph regions (uses before definitions), and
// the generic form's value numbering: one counter for the module, a
// region's own values first, nested regions from the last to the first.
%0:2 = "x.multi"() : () -> (i32, f32)
%1 = "x.use"(%0#1, %0#0) : (f32, i32) -> i64
"x.cfg"() ({
^bb0(%a: i32, %b: i64):
  %2 = "x.c"() : () -> i1
  "x.cond_br"(%2, %a)[^bb1, ^bb2] : (i1, i32) -> ()
^bb1:
  "x.br"(%a)[^bb3] : (i32) -> ()
^bb2:
  "x.br"(%a)[^bb3] : (i32) -> ()
^bb3(%c: i32):
  "x.br2"()[^bb4, ^bb4] : () -> ()
^bb4:
  "x.ret"(%c, %b) : (i32, i64) -> ()
^bb5:
  "x.dead"() : () -> ()
}, {
  "x.other"(%1) : (i64) -> ()
}, {
}) : () -> ()
"x.graph"() ({
  %3 = "x.a"(%4) : (i32) -> i32
  %4 = "x.b"(%3) : (i32) -> i32
  "x.nested"() ({
    %5 = "x.c"(%3, %6) : (i32, i32) -> i32
    %6 = "x.d"() : () -> i32
  }) : () -> ()
}) : () -> ()
%7 = "x.late"() : () -> f32
"x.empty_block"() ({
^bb0:
}) : () -> ()
