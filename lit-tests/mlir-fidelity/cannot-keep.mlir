// What ge cannot represent is a diagnostic at file:line:col, never dropped
// or changed silently.
// RUN: not ge-opt --allow-unregistered-dialect --split-input-file %s 2>&1 | filecheck %s

// Strings are UTF-8 text in ge; MLIR's are bytes.
// CHECK: error: string escapes spell bytes that are not UTF-8 text, which ge cannot keep
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:14
"x.a"() {s = "\FF"} : () -> ()

// -----

// Element types ge does not model (kept as written outside tensors:
// scalars-verbatim.mlir).
// CHECK: error: unsupported element type 'si8'
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:32
"x.a"() {t = si8, u = tensor<2xsi8>} : () -> ()

// -----

// Float values of small float types ge neither models as a dtype (f8E4M3FN,
// f8E5M2 and the others of small-types.mlir) nor keeps as text (f80, f128,
// tf32, f8E4M3, f8E3M4: floats-wide.mlir).
// CHECK: error: ge cannot keep float attributes of type 'f6E2M3FN': it models f16, bf16, f32, f64, f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f8E8M0FNU and f4E2M1FN, and keeps f80, f128, tf32, f8E4M3 and f8E3M4 as text
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:14
"x.a"() {f = 1.0 : f6E2M3FN} : () -> ()

// -----

// CHECK: error: expected element type
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:31
%0 = "x.a"() : () -> tensor<4x!foo.elem>

// -----

// CHECK: error: resources of dialect 'foo' cannot be kept: ge reads the builtin dialect's (dense_resource blobs) only
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 4]]:5
"x.a"() : () -> ()
{-#
  dialect_resources: {
    foo: {
      k: "0x0400000001"
    }
  }
#-}

// -----

// CHECK: error: unknown resource section 'other_resources'
"x.a"() : () -> ()
{-# other_resources: { foo: { k: true } } #-}

// -----

// CHECK: error: resource 'k' of 'foo' is defined twice
"x.a"() : () -> ()
{-# external_resources: { foo: { k: true, k: false } } #-}

// -----

// CHECK: error: location alias '#nowhere' is not defined
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:24
"x.a"() : () -> () loc(#nowhere)

// -----

// CHECK: error: location alias '#a' is defined in terms of itself
"x.a"() : () -> () loc(#a)
#a = loc(fused[#b, "f":1:1])
#b = loc(callsite(#a at "g":1:1))

// -----

// Aliases inside a type kept as written must be defined.
// CHECK: error: undefined attribute alias '#nope'
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:14
"x.a"() {m = memref<4xf32, #nope>} : () -> ()

// -----

// Sparse elements are kept (sparse.mlir); indices outside the shape and a
// values count that is not the indices' are errors, as in MLIR.
// CHECK: error: sparse index #1 ([2, 0]) is not contained within the shape of 'tensor<2x2xf32>'
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:21
"x.a"() {a = sparse<[[0, 0], [2, 0]], [1.0, 2.0]> : tensor<2x2xf32>} : () -> ()

// -----

// CHECK: error: expected 2 sparse values, but got 3
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:39
"x.a"() {a = sparse<[[0, 0], [1, 0]], [1.0, 2.0, 3.0]> : tensor<2x2xf32>} : () -> ()

// -----

// Complex and string dense elements are kept (dense-complex-strings.mlir);
// a literal that does not fit its type is an error, as in MLIR.
// CHECK: error: inferred shape of elements literal ([1]) does not match type ([2])
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:14
"x.a"() {a = dense<[(1.0, 2.0)]> : tensor<2xcomplex<f32>>} : () -> ()

// -----

// CHECK: error: unexpected decimal integer literal for a floating point value
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:14
"x.a"() {a = dense<(1, 2)> : tensor<complex<f32>>} : () -> ()

// -----

// CHECK: error: ge cannot keep dense elements of type 'complex<f80>'
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:14
"x.a"() {a = dense<(1.0, 2.0)> : tensor<complex<f80>>} : () -> ()

// -----

// CHECK: error: expected a string element
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:14
"x.a"() {a = dense<[1]> : tensor<1x!x.str>} : () -> ()
