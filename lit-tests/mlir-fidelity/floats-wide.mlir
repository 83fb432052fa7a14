// MLIR fidelity: float attributes of float types ge does not model as dtypes
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "x.wide"() {a = 1.000000e+00 : f80, b = 2.500000e+00 : f128, c = -0.000000e+00 : f128, d = 1.0000000000000000525E+300 : f80, e = 0.100000000000000005551115123125782702 : f128, f = 0.100000000000000005551 : f80, g = 9.99988867182683005413375236765280058E-321 : f128, h = 0x7FFF8000000000000000 : f80, i = 0x7FFFC000000000000000 : f80, j = 0x7FFF0000000000000000 : f80, k = 0x7FFF0000000000000000000000000000 : f128, l = 3.000000e+00 : f80} : () -> ()
// CHECK-NEXT:   "x.narrow"() {a = 3.000000e+00 : tf32, b = 9.997550e-02 : tf32, c = 1.000240e+38 : tf32, d = 0.000000e+00 : tf32, e = 9.375000e-02 : f8E5M2, f = 0x7C : f8E5M2, g = 0x7F : f8E5M2, h = 1.525880e-05 : f8E5M2, i = 0.000000e+00 : f8E5M2, j = 1.015630e-01 : f8E4M3, k = 0x78 : f8E4M3, l = 2.968750e-01 : f8E3M4, m = 0.000000e+00 : f8E3M4, n = 0xFC : f8E5M2} : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// f80 and f128: a decimal literal is read as an f64 and widened (so 0.1 keeps
// the f64's digits, and 1.0e300 needs full precision to read back); hex is
// the bit pattern (infinity, NaN; an x87 unnormal is a NaN); values below
// f64's range would print digits that MLIR reads back as 0, so none here.
"x.wide"() {a = 1.0 : f80, b = 2.5 : f128, c = -0.0 : f128, d = 1.0e300 : f80, e = 0.1 : f128, f = 0.1 : f80, g = 1.0e-320 : f128, h = 0x7FFF8000000000000000 : f80, i = 0x7FFFC000000000000000 : f80, j = 0x3FFF0000000000000000 : f80, k = 0x7FFF0000000000000000000000000000 : f128, l = 0x4000C000000000000000 : f80} : () -> ()
// tf32 and the IEEE-like 8-bit floats: rounded to nearest-even, overflow to
// infinity, underflow to zero.
"x.narrow"() {a = 3.0 : tf32, b = 0.1 : tf32, c = 1.0e38 : tf32, d = 1.5e-45 : tf32, e = 0.1 : f8E5M2, f = 1.0e10 : f8E5M2, g = 0x7F : f8E5M2, h = 0x1 : f8E5M2, i = 1.0e-7 : f8E5M2, j = 0.1 : f8E4M3, k = 300.0 : f8E4M3, l = 0.3 : f8E3M4, m = 4.0e-5 : f8E3M4, n = -1.0e10 : f8E5M2} : () -> ()
