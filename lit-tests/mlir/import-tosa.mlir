// REQUIRES: mlir-bridge
// RUN: ge-translate --import-mlir %s | filecheck %s
// RUN: ge-translate --import-mlir %s -o %t.air && ge-opt %t.air > /dev/null
// A func + tosa module in the style torch-mlir's TOSA backend emits: NCHW
// arguments transposed to NHWC around the convolution, OHWI weights,
// !tosa.shape constants, zero points and the mul shift as operands.

// CHECK-LABEL: graph.func @forward(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x10xf32>
// The input transpose is cancelled against the one the conv2d needs:
// CHECK-NOT: data.transpose
// CHECK: graph.conv2d %arg0, %{{.*}}, %{{.*}} {pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// The clamp works in NHWC, as in the source:
// CHECK-NEXT: data.transpose %{{.*}} {perm = [0, 2, 3, 1]}
// CHECK: graph.clip %{{.*}} min %{{.*}} max %{{.*}} : (tensor<1x8x8x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT: data.transpose %{{.*}} {perm = [0, 3, 1, 2]}
// CHECK-NEXT: graph.max_pool2d %{{.*}} {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
// The pool's NHWC->NCHW transpose cancels the source's NCHW one:
// CHECK-NEXT: data.reshape %{{.*}} {shape = [1, 1, 64]} : (tensor<1x4x4x4xf32>)
// CHECK: graph.matmul %{{.*}} : (tensor<1x1x64xf32>, tensor<1x64x10xf32>) -> tensor<1x1x10xf32>
// CHECK: graph.add
// CHECK: graph.reduce_max %{{.*}} {axes = [1]}
// CHECK: graph.sub
// CHECK: graph.exp
// CHECK: graph.reduce_sum %{{.*}} {axes = [1]}
// CHECK: graph.reciprocal
// CHECK: graph.mul
// CHECK: graph.return %{{.*}} : tensor<1x10xf32>

// A module that does not parse is a clear error:
// RUN: echo 'func.func @f(%x: tensor<2xf32>) { tosa.bogus }' > %t.bad.mlir
// RUN: not ge-translate --import-mlir %t.bad.mlir 2>&1 | filecheck %s --check-prefix=BAD
// BAD: error: '{{.*}}.bad.mlir' is not a valid MLIR module:
func.func @forward(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x10xf32> {
  %w = "tosa.const"() <{values = dense<0.1> : tensor<4x3x3x3xf32>}> : () -> tensor<4x3x3x3xf32>
  %b = "tosa.const"() <{values = dense<[0.0, 0.5, -0.5, 1.0]> : tensor<4xf32>}> : () -> tensor<4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %x = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32>
  %c = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  %r = tosa.clamp %c {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %p = tosa.max_pool2d %r {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  %pt = tosa.transpose %p {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %s = tosa.const_shape {values = dense<[1, 1, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %f = tosa.reshape %pt, %s : (tensor<1x4x4x4xf32>, !tosa.shape<3>) -> tensor<1x1x64xf32>
  %fw = "tosa.const"() <{values = dense<0.01> : tensor<1x64x10xf32>}> : () -> tensor<1x64x10xf32>
  %mm = tosa.matmul %f, %fw, %zp, %zp : (tensor<1x1x64xf32>, tensor<1x64x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x10xf32>
  %s2 = tosa.const_shape {values = dense<[1, 10]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %l = tosa.reshape %mm, %s2 : (tensor<1x1x10xf32>, !tosa.shape<2>) -> tensor<1x10xf32>
  %fb = "tosa.const"() <{values = dense<0.25> : tensor<1x10xf32>}> : () -> tensor<1x10xf32>
  %lb = tosa.add %l, %fb : (tensor<1x10xf32>, tensor<1x10xf32>) -> tensor<1x10xf32>
  %m = tosa.reduce_max %lb {axis = 1 : i32} : (tensor<1x10xf32>) -> tensor<1x1xf32>
  %d = tosa.sub %lb, %m : (tensor<1x10xf32>, tensor<1x1xf32>) -> tensor<1x10xf32>
  %e = tosa.exp %d : (tensor<1x10xf32>) -> tensor<1x10xf32>
  %sum = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<1x10xf32>) -> tensor<1x1xf32>
  %rc = tosa.reciprocal %sum : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.mul %e, %rc, %shift : (tensor<1x10xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x10xf32>
  return %y : tensor<1x10xf32>
}
