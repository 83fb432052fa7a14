//! Snapshots of rendered diagnostics (codespan-reporting text, as ge-opt
//! prints them) for bad inputs: one snapshot per kind of mistake, so a change
//! in wording, position or label shows up in review (`cargo insta review`).

use ge_ir::diagnostics::{Diagnostic, Pos, SourceMap};
use ge_ir::parser::{parse_module, ParseOptions};
use ge_ir::pass::parse_pipeline;
use ge_ir::verifier::verify_module;
use std::sync::Arc;

/// Parse and verify `src` as ge-opt does; render every diagnostic.
fn render(src: &str) -> String {
    let ctx = ge_compile::context();
    let mut sm = SourceMap::new();
    let file = sm.add("input.air", Arc::from(src));
    let diags: Vec<Diagnostic> =
        match parse_module(&ctx, "input.air", src, ParseOptions::file(file)) {
            Err(d) => vec![*d],
            Ok(m) => verify_module(&m),
        };
    assert!(!diags.is_empty(), "expected a diagnostic for:\n{src}");
    diags.iter().map(|d| sm.render(d)).collect()
}

/// A `--pass-pipeline` error, rendered against the pipeline text.
fn render_pipeline(text: &str) -> String {
    let ctx = ge_compile::context();
    let e = match parse_pipeline(&ctx.passes, text) {
        Ok(_) => panic!("pipeline '{text}' should not parse"),
        Err(e) => e,
    };
    let mut sm = SourceMap::new();
    let f = sm.add("<pass-pipeline>", Arc::from(text));
    sm.render(&Diagnostic::error(
        e.message,
        Pos::Span {
            file: f,
            range: e.range,
        },
    ))
}

#[test]
fn unterminated_string() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {doc = \"abc} {\n  graph.return %x : tensor<4xf32>\n}\n"
    ));
}

#[test]
fn bad_element_type() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf7>) -> tensor<4xf32> {\n  graph.return %x : tensor<4xf32>\n}\n"
    ));
}

#[test]
fn malformed_tensor_type() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4x?xf32) {\n  graph.return\n}\n"
    ));
}

#[test]
fn undefined_value() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = graph.relu %y : (tensor<4xf32>) -> tensor<4xf32>\n  graph.return %0 : tensor<4xf32>\n}\n"
    ));
}

#[test]
fn duplicate_definition() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>\n  %0 = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>\n  graph.return %0 : tensor<4xf32>\n}\n"
    ));
}

#[test]
fn wrong_arity() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = graph.add %x : (tensor<4xf32>) -> tensor<4xf32>\n  graph.return %0 : tensor<4xf32>\n}\n"
    ));
}

#[test]
fn operand_and_type_counts_disagree() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = \"graph.relu\"(%x, %x) : (tensor<4xf32>) -> tensor<4xf32>\n  graph.return %0 : tensor<4xf32>\n}\n"
    ));
}

#[test]
fn unknown_custom_op() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = graph.frobnicate %x : (tensor<4xf32>) -> tensor<4xf32>\n  graph.return %0 : tensor<4xf32>\n}\n"
    ));
}

#[test]
fn unregistered_dialect() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = \"tf.Relu\"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n  graph.return %0 : tensor<4xf32>\n}\n"
    ));
}

#[test]
fn use_type_mismatch() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>\n  %1 = graph.relu %0 : (tensor<4xf16>) -> tensor<4xf16>\n  graph.return %0 : tensor<4xf32>\n}\n"
    ));
}

#[test]
fn op_and_return_type_mismatch() {
    // Two problems, two diagnostics.
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = graph.relu %x : (tensor<4xf32>) -> tensor<4xf16>\n  graph.return %0 : tensor<4xf16>\n}\n"
    ));
}

#[test]
fn missing_terminator() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>\n}\n"
    ));
}

#[test]
fn use_before_def() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %1 = graph.relu %0 : (tensor<4xf32>) -> tensor<4xf32>\n  %0 = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>\n  graph.return %1 : tensor<4xf32>\n}\n"
    ));
}

#[test]
fn symbol_redefinition() {
    insta::assert_snapshot!(render(
        "graph.func @f() {\n  graph.return\n}\n\ngraph.func @f() {\n  graph.return\n}\n"
    ));
}

#[test]
fn call_to_undefined_symbol() {
    insta::assert_snapshot!(render(
        "graph.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = graph.call @nowhere(%x) : (tensor<4xf32>) -> tensor<4xf32>\n  graph.return %0 : tensor<4xf32>\n}\n"
    ));
}

#[test]
fn bad_dense_literal() {
    insta::assert_snapshot!(render(
        "graph.func @f() attributes {w = dense<[[1, 2], [3]]> : tensor<2x2xi32>} {\n  graph.return\n}\n"
    ));
}

#[test]
fn bad_pipeline_text() {
    insta::assert_snapshot!(render_pipeline("builtin.module(graph.func(cse)"));
}

#[test]
fn unknown_pass() {
    insta::assert_snapshot!(render_pipeline(
        "builtin.module(graph.func(cse, frobnicate))"
    ));
}

#[test]
fn unknown_pass_option() {
    insta::assert_snapshot!(render_pipeline("builtin.module(print-ir{lable=x})"));
}
