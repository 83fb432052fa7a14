use ge_ir::parser::{parse_module, ParseOptions};
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::Context;

fn roundtrip(src: &str, generic: bool) -> String {
    let mut ctx = Context::new();
    ctx.allow_unregistered = true;
    let m = match parse_module(&ctx, "t.air", src, ParseOptions::default()) {
        Ok(m) => m,
        Err(d) => panic!("{d:?}"),
    };
    let diags = ge_ir::verifier::verify_module(&m);
    assert!(diags.is_empty(), "{diags:?}");
    print_module(
        &m,
        PrintOptions {
            generic,
            ..Default::default()
        },
    )
}

#[test]
fn smoke() {
    let src = r#"
"x.f"() ({
^bb0(%a: tensor<Bx4xf32>, %b: tensor<4xi64>):
  %0 = "x.add"(%a, %a) {k = 1 : i64, s = "hi", arr = [1, 2], d = dense<[1.0, 2.5]> : tensor<2xf32>} : (tensor<Bx4xf32>, tensor<Bx4xf32>) -> tensor<Bx4xf32>
  %1:2 = "x.split"(%0) : (tensor<Bx4xf32>) -> (tensor<Bx2xf32>, tensor<Bx2xf32>)
  "x.ret"(%1#1) : (tensor<Bx2xf32>) -> ()
}) {sym_name = "f"} : () -> ()
"#;
    let out = roundtrip(src, false);
    println!("{out}");
    println!("{out}");
    let out2 = roundtrip(&out, false);
    assert_eq!(out, out2);
    let g = roundtrip(src, true);
    println!("{g}");
}
