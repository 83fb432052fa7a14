// MLIR fidelity: scalar types ge keeps as written, typed strings
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "x.types"() {a = si8, b = si32, c = i3, d = i1024, e = ui1, f = i0, g = f80, h = f128, i = tf32, j = f8E4M3FN, k = f8E5M2, l = f4E2M1FN, m = f6E2M3FN, n = f6E3M2FN, o = f8E8M0FNU, p = f8E3M4, q = f8E4M3, r = f8E4M3FNUZ, s = f8E4M3B11FNUZ, t = f8E5M2FNUZ} : () -> ()
// CHECK-NEXT:   "x.ints"() {a = 12345678901234567890123 : i128, b = -1 : i3, c = 7 : ui3, d = -4 : si3, e = -1 : i128, f = 0 : i0, g = -1 : i3, h = 127 : si8} : () -> ()
// CHECK-NEXT:   %0:2 = "x.values"() : () -> (si8, f8E4M3FN)
// CHECK-NEXT:   %1 = "x.use"(%0#0, %0#1) : (si8, f8E4M3FN) -> i3
// CHECK-NEXT:   "x.signless"() {a = -1 : i8, b = -1 : i8, c = -1 : i32, d = -1 : i16, e = -1 : i64, f = true} : () -> ()
// CHECK-NEXT:   "x.strings"() {a = "s" : i32, b = "t\0A" : !x.y, c = "u" : tensor<2xf32>} : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// Builtin scalar types ge does not model outside tensors (signed and
// odd-width integers, i0, wide integers, every other float type of MLIR 22)
// are kept as written; integer attributes of them too, by MLIR's range
// rules (value printed signed for signless types, hex input read).
"x.types"() {a = si8, b = si32, c = i3, d = i1024, e = ui1, f = i0, g = f80, h = f128, i = tf32, j = f8E4M3FN, k = f8E5M2, l = f4E2M1FN, m = f6E2M3FN, n = f6E3M2FN, o = f8E8M0FNU, p = f8E3M4, q = f8E4M3, r = f8E4M3FNUZ, s = f8E4M3B11FNUZ, t = f8E5M2FNUZ} : () -> ()
"x.ints"() {a = 12345678901234567890123 : i128, b = -1 : i3, c = 7 : ui3, d = -4 : si3, e = 340282366920938463463374607431768211455 : i128, f = 0 : i0, g = 0x7 : i3, h = 127 : si8} : () -> ()
%0:2 = "x.values"() : () -> (si8, f8E4M3FN)
"x.use"(%0#0, %0#1) : (si8, f8E4M3FN) -> i3
// Signless integers of ge's widths print as their signed value, as in MLIR.
"x.signless"() {a = 255 : i8, b = 0xFF : i8, c = 4294967295 : i32, d = 65535 : i16, e = 18446744073709551615 : i64, f = -1 : i1} : () -> ()
// Typed strings keep their type.
"x.strings"() {a = "s" : i32, b = "t\n" : !x.y, c = "u" : tensor<2xf32>} : () -> ()
