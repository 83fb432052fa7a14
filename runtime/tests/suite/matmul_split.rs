//! How matrix products split over the compute pool: along the longer side of
//! the result (rows when it is tall, columns when it is wide — every part
//! packs the whole other operand), including the batch folded into the rows.
//! Each split, on 1 and 2 threads, equals the interpreter.

use crate::common;
use common::*;
use ge_compile::CompileOptions;

#[test]
fn row_and_column_splits_match_the_interpreter() {
    // (a shape, b shape, result shape)
    let cases = [
        ("24x96", "96x200", "24x200"),     // wide: column split
        ("200x96", "96x24", "200x24"),     // tall: row split
        ("2x12x64", "64x100", "2x12x100"), // batch folded into 24 rows, wide
        ("4x33x40", "4x40x50", "4x33x50"), // batched: one product per batch
        ("8x96", "96x40", "8x40"),         // short and narrow: columns
    ];
    for (a, b, y) in cases {
        let text = format!(
            "graph.func @main(%a: tensor<{a}xf32>, %b: tensor<{b}xf32>) -> tensor<{y}xf32> {{\n  \
             %y = graph.matmul %a, %b : (tensor<{a}xf32>, tensor<{b}xf32>) -> tensor<{y}xf32>\n  \
             graph.return %y : tensor<{y}xf32>\n}}\n"
        );
        let om = om_bytes("matmul", &text, &CompileOptions::default());
        let (types, m) = signature(&text, "main");
        let ins = random_inputs(&types, &[], 11);
        let want = interpret(&m, "main", &ins);
        for threads in [1, 2] {
            let got = run(&load(&om, threads), &ins);
            assert_close(&got, &want, &format!("{a} x {b} threads={threads}"));
        }
    }
}
