//! Batch-1 fully connected layers take the matrix-vector path of the gemm
//! kernel (one row: B is streamed, not packed). Every layout of B, with and
//! without C, alpha and beta, on 1 and 2 threads, equals the interpreter.

use crate::common;
use common::*;
use ge_compile::CompileOptions;

#[test]
fn one_row_gemm_matches_the_interpreter() {
    // k: one pair of vectors and a partial one, one vector, pairs and a
    // partial one, pairs and a whole vector (`dot_rows_avx512`).
    for k in [37, 16, 71, 144] {
        for (tb, bshape) in [(0, format!("{k}x13")), (1, format!("13x{k}"))] {
            for (c, alpha, beta) in [("", 1.0, 1.0), (", %c", 0.5, 2.0), (", %c", 1.0, 0.0)] {
                let cdecl = if c.is_empty() {
                    ""
                } else {
                    ", %c: tensor<13xf32>"
                };
                let ctype = if c.is_empty() { "" } else { ", tensor<13xf32>" };
                let text = format!(
                "graph.func @main(%a: tensor<1x{k}xf32>, %b: tensor<{bshape}xf32>{cdecl}) -> tensor<1x13xf32> {{\n  \
                 %y = graph.gemm %a, %b{c} {{transB = {tb} : i64, alpha = {alpha:?} : f32, beta = {beta:?} : f32}} : \
                 (tensor<1x{k}xf32>, tensor<{bshape}xf32>{ctype}) -> tensor<1x13xf32>\n  \
                 graph.return %y : tensor<1x13xf32>\n}}\n"
            );
                let om = om_bytes("gemv", &text, &CompileOptions::default());
                let (types, m) = signature(&text, "main");
                for threads in [1, 2] {
                    let model = load(&om, threads);
                    let ins = random_inputs(&types, &[], 5);
                    let want = interpret(&m, "main", &ins);
                    let got = run(&model, &ins);
                    assert_close(
                        &got,
                        &want,
                        &format!(
                            "k={k} transB={tb} C={c:?} alpha={alpha} beta={beta} threads={threads}"
                        ),
                    );
                }
            }
        }
    }
}
