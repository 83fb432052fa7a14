// MLIR fidelity: resource sections
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "x.a"() <{p = [dense_resource<in_props> : tensor<1xi8>]}> {n = {d = [dense_resource<nested> : tensor<2xi8>]}, r = dense_resource<used> : tensor<2xi32>} : () -> ()
// CHECK-NEXT: }) {x.m = dense_resource<on_module> : tensor<1xi8>} : () -> ()
// CHECK-EMPTY:
// CHECK-NEXT: {-#
// CHECK-NEXT:   dialect_resources: {
// CHECK-NEXT:     builtin: {
// CHECK-NEXT:       in_props: "0x0800000007",
// CHECK-NEXT:       nested: "0x010000000102",
// CHECK-NEXT:       used: "0x040000000100000002000000",
// CHECK-NEXT:       on_module: "0x0100000009"
// CHECK-NEXT:     }
// CHECK-NEXT:   },
// CHECK-NEXT:   external_resources: {
// CHECK-NEXT:     foo: {
// CHECK-NEXT:       k: "0x04000000AB",
// CHECK-NEXT:       s: "str",
// CHECK-NEXT:       "quoted key": "tab\09here \22q\22 \C3\A9",
// CHECK-NEXT:       b: true
// CHECK-NEXT:     },
// CHECK-NEXT:     bar: {
// CHECK-NEXT:       z: false
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: #-}
// CHECK-NOT: {{.}}

// Resource sections: builtin blobs the IR refers to (anywhere: nested in
// arrays, dictionaries, properties) are kept and unreferenced ones dropped,
// as MLIR does; external resources of any tool are kept as read (hex blobs
// normalised to upper case, strings re-escaped, booleans); several sections
// merge, and empty groups vanish. Blobs are listed in the order the
// printer meets them (the module's attributes come last in the generic form).
"builtin.module"() ({
"x.a"() <{p = [dense_resource<in_props> : tensor<1xi8>]}> {r = dense_resource<used> : tensor<2xi32>, n = {d = [dense_resource<nested> : tensor<2xi8>]}} : () -> ()
}) {x.m = dense_resource<on_module> : tensor<1xi8>} : () -> ()
{-#
  dialect_resources: {
    builtin: {
      unused: "0x0400000001000000",
      used: "0x040000000100000002000000",
      nested: "0x010000000102",
      in_props: "0x0800000007",
      on_module: "0x0100000009"
    }
  },
  external_resources: {
    foo: {
      k: "0x04000000ab",
      s: "str",
      "quoted key": "tab\there \"q\" \C3\A9",
      b: true
    },
    empty: {}
  }
#-}
{-# external_resources: { bar: { z: false } } #-}
