//! Malformed data/memory/stream ops (wrong arity, wrong types, bogus
//! attributes — all reachable through the generic form) give diagnostics,
//! never panics: in the verifier, the printer and the interpreter.

use ge_ir::interp::Interpreter;
use ge_ir::printer::{print_module, PrintOptions};

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

#[test]
fn malformed_ops_are_diagnosed_not_panicked_on() {
    let ctx = ge_dialects::context();
    for op in OPS {
        for text in variants(op) {
            let Ok(m) = ge_ir::parser::parse_module(
                &ctx,
                "m.air",
                &text,
                ge_ir::parser::ParseOptions::default(),
            ) else {
                continue;
            };
            let diags = ge_ir::verifier::verify_module(&m);
            let _ = print_module(&m, PrintOptions::default());
            let generic = PrintOptions {
                generic: true,
                ..PrintOptions::default()
            };
            let _ = print_module(&m, generic);
            if diags.is_empty() {
                // Valid after all: running it must not panic either.
                let _ = Interpreter::new(&m).run_function("main", vec![]);
            }
        }
    }
}
