// MLIR fidelity: float spelling
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "x.floats"() {a = 1.500000e+00 : f32, b = 1.000000e-01 : f32, c = 1.000000e-01 : f64, d = 3.14159265358979 : f64, e = 1.2345678899999999 : f64, f = -0.000000e+00 : f32, g = 0.000000e+00 : f64, h = 6.550400e+04 : f16, i = 3.004060e+38 : bf16, j = 1.000000e-300 : f64, k = 9.999940e-41 : f32, l = 0x4B800000 : f32, m = 0x419D6F3454000000 : f64, n = 2.500000e+00 : f64, o = [1.500000e+00, 2.500000e+00 : f32, 9218868437227405312]} : () -> ()
// CHECK-NEXT:   "x.special"() {a = 0x7F800000 : f32, b = 0xFF800000 : f32, c = 0x7FC00000 : f32, d = 0x7F800001 : f32, e = 0x7C01 : f16, f = 0xFF81 : bf16, g = 0x7FF0000000000001 : f64, h = 5.960460e-08 : f16} : () -> ()
// CHECK-NEXT:   "x.dense_floats"() {a = dense<[1.500000e+00, 1.000000e-01, -0.000000e+00, 0x7F800001]> : tensor<4xf32>, b = dense<[1.000400e-03, 0x7C00]> : tensor<2xf16>, c = dense<3.250000e+00> : tensor<2x2xbf16>, d = array<f32: 1.000000e+00, 0x7F800001>, e = array<f64: 1.000000e-01, 1.2345678899999999>} : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// Floats in MLIR's spelling (APFloat::toString): six digits in scientific
// form when they read back exactly, else all the digits the type needs, else
// the bits in hex (integers too long for six digits, infinities, NaNs —
// signalling NaNs and payloads kept bit for bit).
"x.floats"() {a = 1.5 : f32, b = 0.1 : f32, c = 0.1 : f64, d = 3.14159265358979 : f64, e = 1.23456789 : f64, f = -0.0 : f32, g = 0.0 : f64, h = 65504.0 : f16, i = 3.0e38 : bf16, j = 1.0e-300 : f64, k = 1.0e-40 : f32, l = 16777217.0 : f32, m = 123456789.0 : f64, n = 2.5, o = [1.5, 2.5 : f32, 0x7FF0000000000000]} : () -> ()
"x.special"() {a = 0x7F800000 : f32, b = 0xFF800000 : f32, c = 0x7FC00000 : f32, d = 0x7F800001 : f32, e = 0x7C01 : f16, f = 0xFF81 : bf16, g = 0x7FF0000000000001 : f64, h = 0x0001 : f16} : () -> ()
"x.dense_floats"() {a = dense<[1.5, 0.1, -0.0, 0x7F800001]> : tensor<4xf32>, b = dense<[1.0e-3, 2.0e5]> : tensor<2xf16>, c = dense<3.25> : tensor<2x2xbf16>, d = array<f32: 1.0, 0x7F800001>, e = array<f64: 0.1, 1.23456789>} : () -> ()
