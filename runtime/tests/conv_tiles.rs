//! How the convolution kernel splits its work over the compute pool: column
//! tiles of the output plane, and — when a plane is too small to give every
//! thread a tile (ResNet's 7x7 stage) — blocks of output channels too.
//! Every split is checked against the interpreter, on 1 and 2 threads.

mod common;
use common::*;
use ge_runtime::compile::CompileOptions;

#[test]
fn row_and_column_splits_match_the_interpreter() {
    // (batch, in channels, H, W, out channels, kernel, pad, group)
    let cases = [
        (1, 16, 7, 7, 64, 3, 1, 1),  // 49 columns, one tile: 2 row blocks of 32
        (1, 32, 5, 5, 48, 1, 0, 1),  // pointwise: row blocks of 32 and 16
        (1, 8, 6, 6, 64, 3, 1, 2),   // two groups of 32 output channels
        (2, 4, 9, 9, 40, 3, 0, 1),   // two batch planes
        (1, 3, 40, 40, 16, 3, 1, 1), // many column tiles, no row split
    ];
    for (n, c, h, w, oc, k, pad, g) in cases {
        let (oh, ow) = (h + 2 * pad - k + 1, w + 2 * pad - k + 1);
        let cg = c / g;
        let text = format!(
            "graph.func @main(%x: tensor<{n}x{c}x{h}x{w}xf32>, %f: tensor<{oc}x{cg}x{k}x{k}xf32>, %b: tensor<{oc}xf32>) -> tensor<{n}x{oc}x{oh}x{ow}xf32> {{\n  \
             %y = graph.conv2d %x, %f, %b {{group = {g} : i64, pads = [{pad}, {pad}, {pad}, {pad}], activation = \"relu\"}} : \
             (tensor<{n}x{c}x{h}x{w}xf32>, tensor<{oc}x{cg}x{k}x{k}xf32>, tensor<{oc}xf32>) -> tensor<{n}x{oc}x{oh}x{ow}xf32>\n  \
             graph.return %y : tensor<{n}x{oc}x{oh}x{ow}xf32>\n}}\n"
        );
        let (types, m) = signature(&text, "main");
        let ins = random_inputs(&types, &[], 3);
        let want = interpret(&m, "main", &ins);
        for formats in [false, true] {
            let opts = CompileOptions {
                formats,
                ..Default::default()
            };
            let om = om_bytes("conv", &text, &opts);
            for threads in [1, 2] {
                let got = run(&load(&om, threads), &ins);
                assert_close(
                    &got,
                    &want,
                    &format!(
                        "{n}x{c}x{h}x{w} -> {oc} k={k} g={g} formats={formats} threads={threads}"
                    ),
                );
            }
        }
    }
}
