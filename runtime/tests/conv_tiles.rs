//! How the convolution kernel splits its work over the compute pool: column
//! tiles of the output plane, or — when a plane is too small to give every
//! thread a few tiles (ResNet's 14x14 and 7x7 stages) — whole planes in
//! blocks of output channels sharing one im2col panel.
//! Every split is checked against the interpreter, on 1 and 2 threads, with
//! and without Ascend formats (then the kernel writes NC1HWC0 blocks itself).

mod common;
use common::*;
use ge_compile::CompileOptions;

#[test]
fn row_and_column_splits_match_the_interpreter() {
    // The GEMM path's splits, whatever the default: both tests of this
    // file force it alike.
    std::env::set_var("GE_CONV_ALGO", "im2col");
    // (batch, in channels, H, W, out channels, kernel, pad, group)
    let cases = [
        // Whole planes (more output channels than columns) split by output
        // channels, sharing one im2col panel filled by input-channel ranges
        // (on 2 threads):
        (1, 16, 7, 7, 64, 3, 1, 1), // 49 columns: 2 row blocks of 32
        (1, 3, 6, 6, 64, 3, 1, 1),  // 3 input channels: 3 panel parts
        (1, 8, 5, 5, 64, 3, 1, 2),  // two groups of 32 output channels
        (2, 4, 8, 8, 40, 3, 0, 1),  // two batch planes, a block each
        // Too few channels to split that way, or more columns than
        // channels: column tiles, then rows.
        (1, 32, 5, 5, 48, 1, 0, 1),  // pointwise: row blocks of 32 and 16
        (1, 3, 40, 40, 16, 3, 1, 1), // many column tiles, no row split
        (2, 6, 8, 8, 20, 3, 1, 1),   // 20 channels: NC1HWC0 pad channels
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

/// A convolution whose result is converted to NC1HWC0 and returned: the
/// kernel writes the blocks itself, pad channels (20 of 24) included.
#[test]
fn convolutions_write_nc1hwc0_blocks_with_zero_pad_channels() {
    std::env::set_var("GE_CONV_ALGO", "im2col");
    let (x, f, b) = (
        "tensor<2x6x8x8xf32>",
        "tensor<20x6x3x3xf32>",
        "tensor<20xf32>",
    );
    let (y, y5) = (
        "tensor<2x20x8x8xf32>",
        "tensor<2x3x8x8x8xf32, #ge.format<NC1HWC0, origin = NCHW, origin_shape = [2, 20, 8, 8]>>",
    );
    let text = format!(
        "graph.func @main(%x: {x}, %f: {f}, %b: {b}) -> {y5} {{\n  \
         %y = graph.conv2d %x, %f, %b {{pads = [1, 1, 1, 1], activation = \"relu\"}} : ({x}, {f}, {b}) -> {y}\n  \
         %z = data.transdata %y {{src_format = \"NCHW\", dst_format = \"NC1HWC0\"}} : ({y}) -> {y5}\n  \
         graph.return %z : {y5}\n}}\n"
    );
    let (types, m) = signature(&text, "main");
    let ins = random_inputs(&types, &[], 4);
    let want = interpret(&m, "main", &ins);
    // With Ascend formats the conversion joins the convolution's kernel.
    let om = om_bytes("conv5", &text, &CompileOptions::default());
    for threads in [1, 2] {
        let got = run(&load(&om, threads), &ins);
        assert_close(&got, &want, &format!("threads={threads}"));
    }
}
