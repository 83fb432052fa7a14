// MLIR fidelity: integer and boolean attributes
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "x.ints"() {a = 1 : i8, b = -2 : i32, c = 3 : i64, d = 255 : ui8, f = 7 : index, g = true, h = false, i = 16 : i32, j = 18446744073709551615 : ui64, k = -9223372036854775808 : i64, l = 5 : i16, m = [1, 2 : i32, true, 3 : index], n = true, o = false, p = 4294967295 : ui32, q = 65535 : ui16, u = 42 : i64} : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// Integer and boolean attributes: widths, signedness, hex input, i1 as bool,
// i64 elided in arrays only.
"x.ints"() {a = 1 : i8, b = -2 : i32, c = 3 : i64, d = 255 : ui8, f = 7 : index, g = true, h = false, i = 0x10 : i32, j = 18446744073709551615 : ui64, k = -9223372036854775808 : i64, l = 5 : i16, m = [1, 2 : i32, true, 3 : index], n = 1 : i1, o = 0 : i1, p = 4294967295 : ui32, q = 65535 : ui16, u = 42} : () -> ()
