// MLIR fidelity: the 8-, 4- and 2-bit element types (ONNX float8 x5, float4,
// int4/uint4, int2/uint2; ir/src/minifloat.rs). The CHECK lines are
// mlir-opt-22's generic output for this file; where mlir-opt-22 is installed
// the two outputs are compared whole, and ge-opt reads its own output back.
// (Tried once with f8E5M2's NaN in the CHECK line as 0x7F: the test fails.)
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: ge-opt --allow-unregistered-dialect %s | ge-opt --allow-unregistered-dialect --print-op-generic | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "x.small"() {a = dense<[1.500000e+00, 4.480000e+02, 0x7F, -0.000000e+00, 6.250000e-02]> : tensor<5xf8E4M3FN>, b = dense<[1.500000e+00, 2.400000e+02, 0x80]> : tensor<3xf8E4M3FNUZ>, c = dense<[1.500000e+00, 5.734400e+04, 0x7C, 0x7E]> : tensor<4xf8E5M2>, d = dense<[-2.000000e+00, 0x80]> : tensor<2xf8E5M2FNUZ>, e = dense<[5.000000e-01, 6.000000e+00, -1.500000e+00]> : tensor<3xf4E2M1FN>, f = dense<[-8, 7]> : tensor<2xi4>, g = dense<[15, 0]> : tensor<2xui4>, h = dense<[-2, 1]> : tensor<2xi2>, i = dense<[3, 1]> : tensor<2xui2>, j = 3.000000e+00 : f8E4M3FN, k = 6.000000e+00 : f4E2M1FN, l = -3 : i4, m = dense<1.000000e+00> : tensor<2xf8E5M2>, n = dense<[1.000000e+00, 5.000000e-01, 0xFF, 5.877470e-39, 1.701410e+38, 4.000000e+00]> : tensor<6xf8E8M0FNU>, o = 2.000000e+00 : f8E8M0FNU} : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// Largest values, NaNs (0x7F, 0x80, 0x7E), infinity (0x7C), negative zero,
// subnormals (0.0625 in f8E4M3FN); 0x7 of f4E2M1FN is 6.0. f8E8M0FNU: powers
// of two, 0xFF NaN, 0x00 the smallest (2^-127), 0xFE the largest, 3.0 rounds
// to 4.0 (nearest, as MLIR's APFloat).
"x.small"() {a = dense<[1.5, 448.0, 0x7F, -0.0, 0.0625]> : tensor<5xf8E4M3FN>, b = dense<[1.5, 240.0, 0x80]> : tensor<3xf8E4M3FNUZ>, c = dense<[1.5, 57344.0, 0x7C, 0x7E]> : tensor<4xf8E5M2>, d = dense<[-2.0, 0x80]> : tensor<2xf8E5M2FNUZ>, e = dense<[0.5, 6.0, -1.5]> : tensor<3xf4E2M1FN>, f = dense<[-8, 7]> : tensor<2xi4>, g = dense<[15, 0]> : tensor<2xui4>, h = dense<[-2, 1]> : tensor<2xi2>, i = dense<[3, 1]> : tensor<2xui2>, j = 3.0 : f8E4M3FN, k = 0x7 : f4E2M1FN, l = -3 : i4, m = dense<1.0> : tensor<2xf8E5M2>, n = dense<[1.0, 0.5, 0xFF, 0x00, 0xFE, 3.0]> : tensor<6xf8E8M0FNU>, o = 2.0 : f8E8M0FNU} : () -> ()
