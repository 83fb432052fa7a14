//! Malformed data/memory/stream ops (wrong arity, wrong types, bogus
//! attributes — all reachable through the generic form) give diagnostics,
//! never panics: the verifier rejects each (an error naming the op, at its
//! line) except the few listed valid variants, which run; both printers cope
//! and the generic form reads back with the same diagnostics.

use ge_ir::diagnostics::Pos;
use ge_ir::interp::Interpreter;
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::tensor::Tensor;
use ge_ir::DType;

const OPS: &[&str] = &[
    "data.constant",
    "data.reshape",
    "data.squeeze",
    "data.unsqueeze",
    "data.identity",
    "data.transpose",
    "data.broadcast_to",
    "data.expand",
    "data.tile",
    "data.slice",
    "data.concat",
    "data.split",
    "data.transdata",
    "memory.arena",
    "memory.view",
    "memory.store",
    "memory.copy",
    "memory.weight",
    "stream.program",
    "stream.launch",
    "stream.record",
    "stream.wait",
    "stream.memcpy",
    "stream.label",
    "stream.switch",
    "stream.goto",
    "stream.end",
];

fn variants(op: &str) -> Vec<String> {
    vec![
        format!("graph.func @main() {{\n  \"{op}\"() : () -> ()\n  graph.return\n}}\n"),
        format!(
            "graph.func @main(%x: f32) {{\n  %0:2 = \"{op}\"(%x, %x) {{offset = \"a\", stream = 1.5, event = \"e\", \
             value = 3, shape = 1, perm = [7], axes = [9], src_format = 1, size = -5, num_streams = -1}} \
             : (f32, f32) -> (f32, f32)\n  graph.return\n}}\n"
        ),
        format!(
            "graph.func @main(%x: tensor<2x3xf32>) {{\n  %0 = \"{op}\"(%x) {{offset = 0, stream = 0, event = 0, label = 0, \
             shape = [-1], perm = [1, 0], axes = [0], starts = [0], ends = [1], axis = 0, repeats = [1, 1], \
             src_format = \"NCHW\", dst_format = \"NC1HWC0\", size = 64, targets = []}} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n  graph.return\n}}\n"
        ),
        format!(
            "graph.func @main() {{\n  \"{op}\"() ({{\n  ^bb0(%a: f32):\n    \"graph.return\"() : () -> ()\n  }}) : () -> ()\n  graph.return\n}}\n"
        ),
    ]
}

/// The variants that are valid after all (`variants()` index): a one-operand
/// identity, tile by [1, 1] and concat of one tensor. Every other variant
/// must be rejected by the verifier.
const VALID: &[(&str, usize)] = &[("data.identity", 2), ("data.tile", 2), ("data.concat", 2)];

#[test]
fn malformed_ops_are_diagnosed_not_panicked_on() {
    let ctx = ge_dialects::context();
    let mut valid = vec![];
    for op in OPS {
        for (k, text) in variants(op).into_iter().enumerate() {
            let m = ge_ir::parser::parse_module(
                &ctx,
                "m.air",
                &text,
                ge_ir::parser::ParseOptions::default(),
            )
            .unwrap_or_else(|d| panic!("{op} #{k}: the generic form parses: {}", d.message));
            let diags = ge_ir::verifier::verify_module(&m);
            // Every diagnostic is an error about this op, at its line (2:3).
            for d in &diags {
                assert!(d.is_error(), "{op} #{k}: {}", d.message);
                assert!(
                    d.message.starts_with(&format!("'{op}' ")),
                    "{op} #{k}: the message names the op: {}",
                    d.message
                );
                let at = match &d.pos {
                    Pos::Loc(l) => l.file_line_col(),
                    _ => None,
                };
                assert_eq!(
                    at.map(|(f, l, c)| (f.to_string(), l, c)),
                    Some(("m.air".to_string(), 2, 3)),
                    "{op} #{k}: located at the op: {}",
                    d.message
                );
            }
            // The printers cope, and the generic form reads back with the same diagnostics.
            let custom = print_module(&m, PrintOptions::default());
            assert!(
                custom.contains(op.split('.').nth(1).unwrap_or(op)),
                "{op} #{k}: {custom}"
            );
            let generic = print_module(
                &m,
                PrintOptions {
                    generic: true,
                    ..PrintOptions::default()
                },
            );
            let back = ge_ir::parser::parse_module(
                &ctx,
                "m.air",
                &generic,
                ge_ir::parser::ParseOptions::default(),
            )
            .unwrap_or_else(|d| panic!("{op} #{k}: generic form reads back: {}", d.message));
            let messages = |ds: &[ge_ir::diagnostics::Diagnostic]| {
                ds.iter().map(|d| d.message.clone()).collect::<Vec<_>>()
            };
            assert_eq!(
                messages(&ge_ir::verifier::verify_module(&back)),
                messages(&diags),
                "{op} #{k}: after a generic round trip"
            );
            if diags.is_empty() {
                // Valid after all: it runs (on a 2x3 input, for the variants that take one).
                valid.push((*op, k));
                let inputs = if text.contains("%x: tensor<2x3xf32>") {
                    vec![Tensor::from_f64(vec![2, 3], DType::F32, vec![1.0; 6])]
                } else {
                    vec![]
                };
                if let Err(e) = Interpreter::new(&m).run_function("main", inputs) {
                    panic!("{op} #{k} verifies but does not run: {}", e.msg);
                }
            }
        }
    }
    assert_eq!(valid, VALID, "malformed variants the verifier accepts");
}
