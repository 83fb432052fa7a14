// What ge cannot represent is a diagnostic at file:line:col, never dropped
// or changed silently.
// RUN: not ge-opt --allow-unregistered-dialect --split-input-file %s 2>&1 | filecheck %s

// Strings are UTF-8 text in ge; MLIR's are bytes.
// CHECK: error: string escapes spell bytes that are not UTF-8 text, which ge cannot keep
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:14
"x.a"() {s = "\FF"} : () -> ()

// -----

// Element types ge does not model.
// CHECK: error: unsupported element type 'si8'
// CHECK-NEXT: cannot-keep.mlir:[[# @LINE + 1]]:22
"x.a"() {t = i8, u = si8} : () -> ()

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
