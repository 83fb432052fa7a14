//! Matrix products with a constant right operand pack it once at load for
//! products of 4 to `packed_right::MAX_ROWS` rows in whole panels of 4
//! (`runtime/src/kernels/packed_right.rs`). Each case — rows in and out of
//! that rule, a last strip of fewer columns than the micro-kernel's (the
//! thin kernel's columns too), the batch folded into the rows,
//! `transpose_b`, Gemm's C, alpha, beta and activation — equals the
//! interpreter on 1 and 2 threads, and the load reports packed bytes
//! exactly when the rule holds.

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_runtime::kernels::packed_right::MAX_ROWS;

/// The rule the tests expect, written out: 4 to 64 rows, a multiple of 4.
fn packed(rows: usize) -> bool {
    (4..=64).contains(&rows) && rows.is_multiple_of(4)
}

/// Compile `text`, check the packed bytes the load reports against
/// `packs`, and compare with the interpreter on 1 and 2 threads.
fn check(text: &str, packs: bool, what: &str) {
    let om = om_bytes("matmul_packed", text, &CompileOptions::default());
    let (types, m) = signature(text, "main");
    let ins = random_inputs(&types, &[], 23);
    let want = interpret(&m, "main", &ins);
    for threads in [1, 2] {
        let model = load(&om, threads);
        // The packed GEMM needs AVX2 and FMA; elsewhere nothing is packed.
        if ge_runtime::kernels::sgemm_packed::fast() {
            assert_eq!(
                model.prepared_bytes() > 0,
                packs,
                "{what}: packed at load ({} bytes)",
                model.prepared_bytes()
            );
        }
        assert_close(
            &run(&model, &ins),
            &want,
            &format!("{what} threads={threads}"),
        );
    }
}

#[test]
fn matmul_with_constant_weights_matches_the_interpreter() {
    // (A's shape, k, n)
    let cases: [(&[usize], usize, usize); 10] = [
        (&[4, 40], 40, 24),
        (&[8, 800], 800, 60), // k in three slices
        (&[4, 96], 96, 384),
        (&[12, 33], 33, 50),
        (&[13, 64], 64, 17),
        (&[1, 16, 130], 130, 200),
        (&[2, 8, 20], 20, 31),
        (&[40, 5], 5, 70),
        (&[MAX_ROWS, 48], 48, 100),
        (&[MAX_ROWS + 1, 48], 48, 100),
    ];
    for (a, k, n) in cases {
        let rows: usize = a[..a.len() - 1].iter().product();
        let dims = |s: &[usize]| {
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("x")
        };
        for tb in [false, true] {
            // batch_matmul (which has transpose_b) wants operands of one
            // rank, at least 3: a batch of one.
            if tb && a.len() != 2 {
                continue;
            }
            let (op, a, bshape) = match tb {
                false => ("graph.matmul %a, %w", a.to_vec(), vec![k, n]),
                true => (
                    "graph.batch_matmul %a, %w {transpose_b = true}",
                    [&[1], a].concat(),
                    vec![1, n, k],
                ),
            };
            let (at, yt) = (dims(&a), dims(&[&a[..a.len() - 1], &[n]].concat()));
            let text = format!(
                "graph.func @main(%a: tensor<{at}xf32>) -> tensor<{yt}xf32> {{\n  \
                 %w = data.constant dense<{}> : tensor<{}xf32>\n  \
                 %y = {op} : (tensor<{at}xf32>, tensor<{}xf32>) -> tensor<{yt}xf32>\n  \
                 graph.return %y : tensor<{yt}xf32>\n}}\n",
                dense(k * n, &bshape, 7),
                dims(&bshape),
                dims(&bshape),
            );
            check(
                &text,
                packed(rows),
                &format!("matmul {at} x {k}x{n} transpose_b={tb}"),
            );
        }
    }
}

#[test]
fn gemm_with_constant_weights_matches_the_interpreter() {
    let (k, n) = (70, 45);
    for m in [2, 4, 5, 16, MAX_ROWS + 4] {
        for tb in [0, 1] {
            let bshape = if tb == 1 { [n, k] } else { [k, n] };
            let bt = format!("{}x{}", bshape[0], bshape[1]);
            for (c, alpha, beta, act) in [
                (false, 1.0, 1.0, "none"),
                (true, 0.5, 2.0, "relu"),
                (true, 1.0, 0.0, "none"),
                (true, 1.5, 1.0, "sigmoid"),
            ] {
                let (cdef, cop, cty) = optional_vector("c", c, n, 9);
                let text = format!(
                    "graph.func @main(%a: tensor<{m}x{k}xf32>) -> tensor<{m}x{n}xf32> {{\n  \
                     %w = data.constant dense<{}> : tensor<{bt}xf32>\n{cdef}  \
                     %y = graph.gemm %a, %w{cop} {{transB = {tb} : i64, alpha = {alpha:?} : f32, \
                     beta = {beta:?} : f32, activation = \"{act}\"}} : \
                     (tensor<{m}x{k}xf32>, tensor<{bt}xf32>{cty}) -> tensor<{m}x{n}xf32>\n  \
                     graph.return %y : tensor<{m}x{n}xf32>\n}}\n",
                    dense(k * n, &bshape, 3),
                );
                check(
                    &text,
                    packed(m),
                    &format!("gemm {m}x{k} transB={tb} C={c} alpha={alpha} beta={beta} {act}"),
                );
            }
        }
    }
}
