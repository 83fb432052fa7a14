// MLIR fidelity: builtin types and attributes ge keeps as written
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      #map = affine_map<(d0) -> (d0 * 3)>
// CHECK-NEXT: #map1 = affine_map<(d0) -> (d0 + 1)>
// CHECK-NEXT: #map2 = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-NEXT: #map3 = affine_map<(d0) -> (d0 + 2)>
// CHECK-NEXT: #map4 = affine_map<(d0) -> (d0 + 5)>
// CHECK-NEXT: #map5 = affine_map<(d0) -> (d0 + 7)>
// CHECK-NEXT: #map6 = affine_map<() -> (0)>
// CHECK-NEXT: #map7 = affine_map<(d0)[s0] -> (d0 + s0)>
// CHECK-NEXT: #set = affine_set<(d0) : (d0 >= 0)>
// CHECK-NEXT: #set1 = affine_set<(d0) : (d0 - 1 >= 0)>
// CHECK-NEXT: "builtin.module"() ({
// CHECK-NEXT:   "x.a"() ({
// CHECK-NEXT:     "x.in"() {z = #map} : () -> ()
// CHECK-NEXT:   }) {a = #map1, al = #map2, b = #map3, m = memref<4xf32, #map4>, s = #set, st = strided<[4, 1], offset: ?>, ty = memref<2x2xf32, #map2>} : () -> ()
// CHECK-NEXT:   %0 = "x.b"() {c = #map1, t = #set1} : () -> memref<2xf32, #map5>
// CHECK-NEXT:   "x.c"(%0) : (memref<2xf32, #map5>) -> ()
// CHECK-NEXT:   %1:4 = "x.types"() : () -> (memref<4x?xf32, strided<[?, 1], offset: ?>, 1>, vector<[4]x2xf32>, complex<f32>, tuple<(i32) -> f32, i8>)
// CHECK-NEXT:   "x.more"(%1#3) {u = memref<*xf32>, v = vector<4xi1>, w = tuple<>, x = [#map6, {k = #map7}]} : (tuple<(i32) -> f32, i8>) -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// Builtin types and attributes ge does not model are kept as written:
// memref (with strided and affine layouts, memory spaces), vector (scalable
// dims), complex, tuple, affine maps and sets, strided layouts. Affine maps
// and sets get mlir-opt's #map/#set aliases, numbered in print order, also
// inside types; aliases in the input are resolved. (Written as mlir-opt
// prints them: ge does not simplify affine expressions.)
#in_alias = affine_map<(d0, d1) -> (d1, d0)>
!t_alias = memref<2x2xf32, #in_alias>
"x.a"() ({
  "x.in"() {z = affine_map<(d0) -> (d0 * 3)>} : () -> ()
}) {b = affine_map<(d0) -> (d0 + 2)>, a = affine_map<(d0) -> (d0 + 1)>, s = affine_set<(d0) : (d0 >= 0)>, m = memref<4xf32, affine_map<(d0) -> (d0 + 5)>>, st = strided<[4, 1], offset: ?>, al = #in_alias, ty = !t_alias} : () -> ()
%0 = "x.b"() {c = affine_map<(d0) -> (d0 + 1)>, t = affine_set<(d0) : (d0 - 1 >= 0)>} : () -> memref<2xf32, affine_map<(d0) -> (d0 + 7)>>
"x.c"(%0) : (memref<2xf32, affine_map<(d0) -> (d0 + 7)>>) -> ()
%1:4 = "x.types"() : () -> (memref<4x?xf32, strided<[?, 1], offset: ?>, 1>, vector<[4]x2xf32>, complex<f32>, tuple<(i32) -> f32, i8>)
"x.more"(%1#3) {u = memref<*xf32>, v = vector<4xi1>, w = tuple<>, x = [affine_map<() -> (0)>, {k = affine_map<(d0)[s0] -> (d0 + s0)>}]} : (tuple<(i32) -> f32, i8>) -> ()
