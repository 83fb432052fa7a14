//! Hostile attributes and inputs for the nn / linalg / index ops of the graph
//! dialect: verification answers with the promised diagnostic (message and
//! location) and interpretation with an error naming the op, never a panic
//! (overflowing pads, strides, scales, sizes...).

use ge_ir::diagnostics::Pos;
use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

const BIG: &str = "9223372036854775807";
const NEG: &str = "-9223372036854775808";

/// A hostile case: op text (`%x: tensor<1x2x4x4xf32>`, `%w` a 2x2x1x1
/// filter), and what the verifier must say about it — `None` when the op is
/// valid after all (a dilation of a 1x1 kernel changes nothing).
struct Case {
    op: String,
    want: Option<String>,
}

fn case(op: String, want: Option<&str>) -> Case {
    Case {
        op,
        want: want.map(str::to_string),
    }
}

fn cases() -> Vec<Case> {
    let inferred = |t: &str| format!("but inferred '{t}' from the operands");
    let big_h = inferred(&format!("tensor<1x2x{BIG}x4xf32>"));
    let mut v = vec![];
    // (attribute, conv2d says, conv_transpose2d says)
    for (attr, conv, convt) in [
        (
            format!("{{pads = [{BIG}, 0, {BIG}, 0]}}"),
            Some(big_h.clone()),
            Some("the pads remove the whole output".to_string()),
        ),
        (
            format!("{{pads = [{NEG}, 0, 0, 0]}}"),
            Some(format!(
                "attribute 'pads' entries must be >= 0, but got {NEG}"
            )),
            Some(format!(
                "attribute 'pads' entries must be >= 0, but got {NEG}"
            )),
        ),
        (
            format!("{{strides = [{BIG}, 1]}}"),
            Some(inferred("tensor<1x2x1x4xf32>")),
            Some(big_h.clone()),
        ),
        (format!("{{dilations = [{BIG}, 1]}}"), None, None),
        (
            format!("{{group = {BIG} : i64}}"),
            Some(format!("expects 2 per group x group {BIG}")),
            Some(format!("is not a multiple of group {BIG}")),
        ),
        (
            "{group = 0 : i64}".to_string(),
            Some("attribute 'group' must be >= 1, but got 0".to_string()),
            Some("attribute 'group' must be >= 1, but got 0".to_string()),
        ),
    ] {
        v.push(case(
            format!("graph.conv2d %x, %w {attr} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>"),
            conv.as_deref(),
        ));
        v.push(case(
            format!("graph.conv_transpose2d %x, %w {attr} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>"),
            convt.as_deref(),
        ));
    }
    let extent = format!("kernel extent {BIG} along H exceeds the padded input size 4");
    for (attr, want) in [
        (format!("{{kernel_shape = [{BIG}, 1]}}"), extent.clone()),
        (
            format!("{{kernel_shape = [2, 2], strides = [{BIG}, {BIG}], ceil_mode = 1 : i64}}"),
            inferred("tensor<1x2x1x1xf32>"),
        ),
        (
            format!("{{kernel_shape = [2, 2], dilations = [{BIG}, 1]}}"),
            extent,
        ),
        (
            format!("{{kernel_shape = [{NEG}, 1]}}"),
            format!("attribute 'kernel_shape' entries must be >= 1, but got {NEG}"),
        ),
    ] {
        for op in ["max_pool2d", "avg_pool2d"] {
            v.push(case(
                format!("graph.{op} %x {attr} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>"),
                Some(&want),
            ));
        }
    }
    let big_w = inferred(&format!("tensor<1x2x4x{BIG}xf32>"));
    for (attr, want) in [
        (
            format!("{{pads = [0, 0, 0, {BIG}, 0, 0, 0, 0]}}"),
            big_w.clone(),
        ),
        (
            format!("{{pads = [0, 0, 0, {NEG}, 0, 0, 0, {BIG}]}}"),
            inferred("tensor<1x2x4x3xf32>"),
        ),
        (
            format!("{{pads = [0, 0, 0, {BIG}, 0, 0, 0, 0], mode = \"reflect\"}}"),
            big_w,
        ),
    ] {
        v.push(case(
            format!("graph.pad %x {attr} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>"),
            Some(&want),
        ));
    }
    for (attr, want) in [
        (
            "{scales = [1.0, 1.0, 1.0e300, 1.0]}".to_string(),
            big_h.clone(),
        ),
        (format!("{{sizes = [1, 2, {BIG}, 4]}}"), big_h),
        (
            format!("{{sizes = [1, 2, {BIG}, {BIG}], mode = \"linear\"}}"),
            inferred(&format!("tensor<1x2x{BIG}x{BIG}xf32>")),
        ),
        (
            "{scales = [1.0, 1.0, 1.0e-300, 1.0]}".to_string(),
            "the output would have an empty dim (0)".to_string(),
        ),
    ] {
        v.push(case(
            format!("graph.resize %x {attr} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>"),
            Some(&want),
        ));
    }
    for axis in [BIG, NEG] {
        for op in ["softmax", "log_softmax"] {
            v.push(case(
                format!("graph.{op} %x {{axis = {axis} : i64}} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>"),
                Some(&format!("attribute 'axis' {axis} is out of range for rank 4 (expected -4..=3)")),
            ));
        }
    }
    v
}

fn module(ctx: &ge_ir::Context, op: &str) -> ge_ir::Module {
    let ty = "tensor<1x2x4x4xf32>";
    let args = if op.contains("%w") {
        "%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>"
    } else {
        "%x: tensor<1x2x4x4xf32>"
    };
    let text =
        format!("graph.func @main({args}) -> {ty} {{\n  %0 = {op}\n  graph.return %0 : {ty}\n}}\n");
    ge_ir::parser::parse_module(ctx, "t.air", &text, ge_ir::parser::ParseOptions::default())
        .unwrap_or_else(|d| panic!("{op}: parse error {}", d.message))
}

/// The verifier rejects each hostile attribute with the promised message, at
/// the op (t.air:2:3); the interpreter answers with an error naming the op,
/// never a panic. The valid cases run and equal the op without the attribute.
#[test]
fn hostile_attributes_are_diagnosed_never_panic() {
    let ctx = ge_dialects::context();
    let x = Tensor::from_f64(
        vec![1, 2, 4, 4],
        DType::F32,
        (0..32).map(f64::from).collect(),
    );
    let w = Tensor::from_f64(vec![2, 2, 1, 1], DType::F32, vec![1.0; 4]);
    for Case { op, want } in cases() {
        let name = op.split_whitespace().next().unwrap_or_default().to_string();
        let m = module(&ctx, &op);
        let diags = ge_ir::verifier::verify_module(&m);
        let inputs = if op.contains("%w") {
            vec![x.clone(), w.clone()]
        } else {
            vec![x.clone()]
        };
        let run = Interpreter::new(&m).run_function("main", inputs.clone());
        match want {
            Some(want) => {
                let d = diags
                    .iter()
                    .find(|d| d.is_error() && d.message.contains(&want))
                    .unwrap_or_else(|| {
                        panic!(
                            "{op}: no error containing \"{want}\"; got {:?}",
                            diags.iter().map(|d| &d.message).collect::<Vec<_>>()
                        )
                    });
                assert!(
                    d.message.starts_with(&format!("'{name}' ")),
                    "{}",
                    d.message
                );
                let at = match &d.pos {
                    Pos::Loc(l) => l.file_line_col().map(|(f, l, c)| (f.to_string(), l, c)),
                    _ => None,
                };
                assert_eq!(at, Some(("t.air".to_string(), 2, 3)), "{op}: location");
                match run {
                    Ok(_) => panic!("{op}: the interpreter ran an op the verifier rejects"),
                    Err(e) => assert!(e.msg.contains(&format!("'{name}'")), "{op}: {}", e.msg),
                }
            }
            None => {
                assert!(
                    diags.is_empty(),
                    "{op}: {:?}",
                    diags.iter().map(|d| &d.message).collect::<Vec<_>>()
                );
                let got = run.unwrap_or_else(|e| panic!("{op}: {}", e.msg));
                let plain = without_attrs(&op);
                let want = Interpreter::new(&module(&ctx, &plain))
                    .run_function("main", inputs)
                    .unwrap_or_else(|e| panic!("{plain}: {}", e.msg));
                assert_eq!(got, want, "{op}: differs from {plain}");
            }
        }
    }
}

/// The op text without its `{...}` attribute dictionary.
fn without_attrs(op: &str) -> String {
    match (op.find(" {"), op.find("} :")) {
        (Some(a), Some(b)) => format!("{}{}", &op[..a], &op[b + 1..]),
        _ => op.to_string(),
    }
}

#[test]
fn out_of_range_indices_are_errors() {
    let ctx = ge_dialects::context();
    let text = r#"
graph.func @main(%d: tensor<2x3xf32>, %i: tensor<2x2xi64>, %u: tensor<2x2xf32>, %t: tensor<4x3xf32>) -> (tensor<2x2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x2x3xf32>) {
  %0 = graph.gather %d, %i : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
  %1 = graph.gather_elements %d, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
  %2 = graph.scatter_elements %d, %i, %u {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> tensor<2x3xf32>
  %3 = graph.embedding %t, %i : (tensor<4x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
  graph.return %0, %1, %2, %3 : tensor<2x2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x2x3xf32>
}
"#;
    let m =
        ge_ir::parser::parse_module(&ctx, "t.air", text, ge_ir::parser::ParseOptions::default())
            .expect("parses");
    assert!(ge_ir::verifier::verify_module(&m).is_empty());
    let d = Tensor::from_f64(vec![2, 3], DType::F32, vec![0.0; 6]);
    let u = Tensor::from_f64(vec![2, 2], DType::F32, vec![0.0; 4]);
    let t = Tensor::from_f64(vec![4, 3], DType::F32, vec![0.0; 12]);
    for bad in [i64::MAX, i64::MIN, 7, -7] {
        let i = Tensor::from_i64(vec![2, 2], DType::I64, vec![0, bad, 1, 0]);
        let err = Interpreter::new(&m)
            .run_function("main", vec![d.clone(), i, u.clone(), t.clone()])
            .expect_err("out-of-range index must fail");
        assert!(err.msg.contains("out of range"), "{}", err.msg);
    }
}
