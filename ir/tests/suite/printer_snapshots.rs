//! Snapshots of the printer: custom and generic forms, locations, resources
//! and hex elements, for IR built from text with only the IR core registered
//! (ops of other dialects in the generic form). Review changes with
//! `cargo insta review` (or `INSTA_UPDATE=always cargo test` and `git diff`).

use ge_ir::parser::{parse_module, ParseOptions};
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::Context;

fn print_with(src: &str, opts: PrintOptions) -> String {
    let mut ctx = Context::new();
    ctx.allow_unregistered = true;
    let m = match parse_module(&ctx, "snap.air", src, ParseOptions::default()) {
        Ok(m) => m,
        Err(d) => panic!("{}", d.message),
    };
    let diags = ge_ir::verifier::verify_module(&m);
    assert!(diags.is_empty(), "{:?}", diags.first());
    let out = print_module(&m, opts);
    // Whatever we print must read back to the same text.
    let again = match parse_module(&ctx, "again.air", &out, ParseOptions::default()) {
        Ok(m) => m,
        Err(d) => panic!("printed text does not parse: {}\n{out}", d.message),
    };
    assert_eq!(print_module(&again, opts), out, "printing is not stable");
    out
}

fn custom(src: &str) -> String {
    print_with(src, PrintOptions::default())
}

fn generic(src: &str) -> String {
    print_with(
        src,
        PrintOptions {
            generic: true,
            ..Default::default()
        },
    )
}

const CFG: &str = r#"
"x.func"() ({
^entry(%c: i1, %v: tensor<Bx4xf32>):
  %r:2 = "x.split"(%v) {axis = 0 : i64} : (tensor<Bx4xf32>) -> (tensor<Bx2xf32>, tensor<Bx2xf32>)
  "x.cond_br"(%c, %r#1)[^then, ^join] : (i1, tensor<Bx2xf32>) -> ()
^then:
  %e = "x.exp"(%r#0) : (tensor<Bx2xf32>) -> tensor<Bx2xf32>
  "x.br"(%e)[^join] : (tensor<Bx2xf32>) -> ()
^join(%j: tensor<Bx2xf32>):
  "x.ret"(%j) : (tensor<Bx2xf32>) -> ()
}, {
^bb0:
}) {sym_name = "cfg"} : () -> ()
"#;

#[test]
fn control_flow_regions_and_blocks() {
    insta::assert_snapshot!(custom(CFG));
}

#[test]
fn control_flow_regions_and_blocks_generic() {
    insta::assert_snapshot!(generic(CFG));
}

const ATTRS: &str = r#"
"x.attrs"() {
  i = 1, i8 = -2 : i8, u = 255 : ui8, idx = 3 : index, b = true, bit = 0 : i1,
  f = 2.5, f16 = 0.1 : f16, bf = 1.0 : bf16, inf = 0x7F800000 : f32,
  s = "tab\there \"quoted\" \\ \01",
  arr = [1, 2.0, "x", [[]], {k}], d = {z = 1, a = {b = @s::@t}},
  sym = @"with space", t = (tensor<*xf32>, i1) -> (), unit_flag,
  dense_splat = dense<0.5> : tensor<2x2xf16>, dense_list = dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>,
  dense_bool = dense<[true, false]> : tensor<2xi1>, dense_empty = dense<> : tensor<0x3xf32>,
  dense_hex = dense<"0x0000803F0000C0FF"> : tensor<2xf32>,
  arr_i = array<i64: 1, 2, 3>, arr_f = array<f32: 0.5>, arr_e = array<i8>,
  ext = #ge.external<"w.bin", offset = 16, length = 32, type = tensor<8xf32>>,
  opaque = #foo.bar<"payload" [1, 2] {x}>
} : () -> ()
"#;

#[test]
fn every_attribute_kind() {
    insta::assert_snapshot!(custom(ATTRS));
}

#[test]
fn every_attribute_kind_generic() {
    insta::assert_snapshot!(generic(ATTRS));
}

const TYPES: &str = r#"
"x.types"() : () -> (tensor<f32>, tensor<0xi8>, tensor<?x?xbf16>, tensor<*xi1>,
  tensor<Bx(2*S+1)x(B/2)xf16>, tensor<8x1x4x4x16xf16, #ge.format<NC1HWC0, origin = NCHW>>,
  tensor<Bx1x4x4x16xf16, #ge.format<NC1HWC0, origin = NCHW, origin_shape = [8, 16, 4, 4]>>,
  i64, ui16, index, none, !foo.handle<"h">)
"#;

#[test]
fn every_type_kind() {
    insta::assert_snapshot!(custom(TYPES));
}

#[test]
fn every_type_kind_generic() {
    insta::assert_snapshot!(generic(TYPES));
}

#[test]
fn locations_with_debuginfo() {
    let src = r#"
"x.a"() : () -> () loc("a.py":1:2)
"x.b"() : () -> () loc("scope"("b.py":3:4))
"x.c"() : () -> () loc(callsite("c.py":5:6 at "d.py":7:8))
"x.d"() : () -> () loc(fused<{k = 1}>["e.py":9:10, unknown])
"x.e"() ({
^bb0(%a: i32 loc("arg.py":1:1), %b: i32):
  "x.f"(%a, %b) : (i32, i32) -> ()
}) : () -> ()
"#;
    insta::assert_snapshot!(print_with(
        src,
        PrintOptions {
            debuginfo: true,
            ..Default::default()
        }
    ));
}

#[test]
fn modules_resources_and_hex_elements() {
    let src = r#"
module @outer attributes {ge.version = 2 : i32} {
  module @inner {
  }
  "x.w"() {big = dense<[1, 2, 3, 4]> : tensor<4xi16>, small = dense<[1, 2]> : tensor<2xi16>, r = dense_resource<blob> : tensor<2xi8>} : () -> ()
}
{-#
  dialect_resources: {
    builtin: {
      blob: "0x080000000102"
    }
  }
#-}
"#;
    insta::assert_snapshot!(print_with(
        src,
        PrintOptions {
            hex_elements_over: Some(2),
            ..Default::default()
        }
    ));
}
