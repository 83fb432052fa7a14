//! The interpreter's call-depth limit: the verifier rejects recursive calls,
//! and IR run without verifying gets a short, clear error instead of
//! recursing until the stack cannot grow.

use ge_ir::interp::{Interpreter, MAX_CALL_DEPTH};
use ge_ir::tensor::Tensor;
use ge_ir::{Context, DType};

const RECURSIVE: &str = "
graph.func @main(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.if %c : (tensor<i1>) -> tensor<4xf32> {
    %y = graph.call @main(%c, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %y : tensor<4xf32>
  } else {
    graph.yield %x : tensor<4xf32>
  }
  graph.return %r : tensor<4xf32>
}";

fn ctx() -> Context {
    let mut c = Context::new();
    ge_dialects::register(&mut c);
    c
}

fn inputs(cond: i64) -> Vec<Tensor> {
    vec![
        Tensor::from_i64(vec![], DType::I1, vec![cond]),
        Tensor::from_f64(vec![4], DType::F32, vec![1.0, 2.0, 3.0, 4.0]),
    ]
}

#[test]
fn unbounded_recursion_stops_at_the_call_depth_limit() {
    let ctx = ctx();
    let m = ge_ir::parser::parse_module(
        &ctx,
        "t.air",
        RECURSIVE,
        ge_ir::parser::ParseOptions::default(),
    )
    .expect("parses");
    // The verifier refuses it; the interpreter is the second line of defence.
    let diags = ge_ir::verifier::verify_module(&m);
    assert!(
        diags.iter().any(|d| d.message.contains("is recursive")),
        "{:?}",
        diags.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
    let err = Interpreter::new(&m)
        .run_function("main", inputs(1))
        .expect_err("recursion is stopped");
    assert!(
        err.msg
            .starts_with(&format!("call depth limit ({MAX_CALL_DEPTH}) exceeded")),
        "{}",
        err.msg
    );
    // Not one prefix per level.
    assert!(err.msg.len() < 200, "{}", err.msg);
    // The limit is per chain of calls: a recursion that ends is fine, and a
    // lower limit is honoured.
    let ok = Interpreter::new(&m).run_function("main", inputs(0));
    assert!(ok.is_ok());
    let mut interp = Interpreter::new(&m);
    interp.max_call_depth = 1;
    assert!(interp.run_function("main", inputs(0)).is_ok());
    let err = interp.run_function("main", inputs(1)).expect_err("depth 2");
    assert!(
        err.msg.starts_with("call depth limit (1) exceeded"),
        "{}",
        err.msg
    );
}
