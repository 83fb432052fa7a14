//! The depthwise convolution kernel (zero-padded plane; a fused 3x3 path)
//! against the interpreter over strides, dilations, kernel sizes and
//! asymmetric padding, with bias and an activation epilogue (relu, relu6,
//! hard_swish, and sigmoid and SiLU, which the lanes and tiny-plane
//! kernels also apply in registers).

use crate::common;
use common::*;
use ge_compile::CompileOptions;

#[test]
fn depthwise_variants_match_the_interpreter() {
    // (kernel, stride, dilation, pads [top, left, bottom, right], H, W)
    let cases = [
        (3, 1, 1, [1, 1, 1, 1], 9, 7),
        (3, 2, 1, [1, 1, 1, 1], 9, 8),
        (3, 2, 1, [0, 0, 1, 1], 10, 10),
        (3, 1, 2, [2, 2, 2, 2], 8, 9),
        (5, 2, 1, [2, 1, 2, 3], 11, 7),
        (7, 1, 1, [3, 3, 3, 3], 6, 6),
        (1, 2, 1, [0, 0, 0, 0], 5, 5),
        (3, 2, 2, [2, 2, 2, 2], 11, 9),
        (3, 2, 1, [1, 1, 1, 1], 16, 17),
        // Wide filters at stride 1 on lanes-sized maps (with AVX-512):
        // rows of eight outputs at a time with each input pixel loaded
        // once (`depthwise_lanes::row_pixels`; 9 wide in two sweeps), the
        // rest of a row pixel by pixel.
        (7, 1, 1, [3, 3, 3, 3], 16, 14),
        (9, 1, 1, [4, 4, 4, 4], 12, 19),
        // Planes of up to 32 pixels into up to 16 (with AVX-512): one
        // channel at a time in two vectors (`kernels/depthwise_tiny.rs`).
        (3, 1, 1, [1, 1, 1, 1], 2, 2),
        (5, 1, 1, [2, 2, 2, 2], 4, 4),
        (3, 2, 1, [1, 1, 1, 1], 4, 4),
        (3, 1, 1, [0, 1, 2, 1], 3, 5),
        (5, 1, 1, [2, 2, 2, 2], 2, 2),
        // Maps past the lanes kernel's limits (with AVX-512): the
        // plane-wise kernel, 3x3 in one pass and 5x5 tap by tap, its zero
        // padding kept from one channel to the next.
        (3, 1, 1, [1, 1, 1, 1], 20, 19),
        (5, 1, 1, [2, 2, 2, 2], 34, 33),
    ];
    for (i, (k, s, d, p, h, w)) in cases.into_iter().enumerate() {
        // The one-pass epilogues (bias + relu, bias + relu6, bias +
        // hard_swish) and the logistic ones (in the lanes kernel's
        // registers, else a pass over the block).
        let act = ["relu", "relu6", "silu", "sigmoid", "hard_swish"][i % 5];
        // 20 channels once: two blocks of the lanes kernel (small maps,
        // `kernels/depthwise_lanes.rs`), the second partial.
        let c = if i == 0 { 20 } else { 6 };
        let oh = (h + p[0] + p[2] - d * (k - 1) - 1) / s + 1;
        let ow = (w + p[1] + p[3] - d * (k - 1) - 1) / s + 1;
        let text = format!(
            "graph.func @main(%x: tensor<2x{c}x{h}x{w}xf32>, %f: tensor<{c}x1x{k}x{k}xf32>, %b: tensor<{c}xf32>) -> tensor<2x{c}x{oh}x{ow}xf32> {{\n  \
             %y = graph.conv2d %x, %f, %b {{group = {c} : i64, strides = [{s}, {s}], dilations = [{d}, {d}], pads = [{}, {}, {}, {}], activation = \"{act}\"}} : \
             (tensor<2x{c}x{h}x{w}xf32>, tensor<{c}x1x{k}x{k}xf32>, tensor<{c}xf32>) -> tensor<2x{c}x{oh}x{ow}xf32>\n  \
             graph.return %y : tensor<2x{c}x{oh}x{ow}xf32>\n}}\n",
            p[0], p[1], p[2], p[3]
        );
        for formats in [false, true] {
            let opts = CompileOptions {
                formats,
                ..Default::default()
            };
            let om = om_bytes("dw", &text, &opts);
            let (types, m) = signature(&text, "main");
            let model = load(&om, 2);
            let ins = random_inputs(&types, &[], 9);
            let want = interpret(&m, "main", &ins);
            let got = run(&model, &ins);
            assert_close(
                &got,
                &want,
                &format!("k={k} s={s} d={d} pads={p:?} {h}x{w} {act} formats={formats}"),
            );
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
    /// The stride-phase depthwise kernel (runtime/src/kernels/conv.rs
    /// `depthwise_plane`) against the interpreter on random shapes: any
    /// kernel size (non-square too), stride and dilation per axis,
    /// asymmetric pads, planes smaller than the filter's reach, batch > 1,
    /// with and without NC1HWC0 formats, 1 and 2 threads.
    #[test]
    fn depthwise_random_shapes_match_the_interpreter(
        n in 1usize..3, c in 1usize..5, h in 1usize..14, w in 1usize..14,
        k in proptest::array::uniform2(1usize..6),
        s in proptest::array::uniform2(1usize..4),
        d in proptest::array::uniform2(1usize..3),
        p in proptest::array::uniform4(0usize..3),
        formats: bool, threads in 1usize..3,
    ) {
        let ext = |i: usize| (k[i] - 1) * d[i] + 1;
        let (hp, wp) = (h + p[0] + p[2], w + p[1] + p[3]);
        proptest::prop_assume!(hp >= ext(0) && wp >= ext(1));
        let (oh, ow) = ((hp - ext(0)) / s[0] + 1, (wp - ext(1)) / s[1] + 1);
        let ([kh, kw], [sh, sw], [dh, dw]) = (k, s, d);
        let text = format!(
            "graph.func @main(%x: tensor<{n}x{c}x{h}x{w}xf32>, %f: tensor<{c}x1x{kh}x{kw}xf32>, %b: tensor<{c}xf32>) -> tensor<{n}x{c}x{oh}x{ow}xf32> {{\n  \
             %y = graph.conv2d %x, %f, %b {{group = {c} : i64, strides = [{sh}, {sw}], dilations = [{dh}, {dw}], pads = [{}, {}, {}, {}]}} : \
             (tensor<{n}x{c}x{h}x{w}xf32>, tensor<{c}x1x{kh}x{kw}xf32>, tensor<{c}xf32>) -> tensor<{n}x{c}x{oh}x{ow}xf32>\n  \
             graph.return %y : tensor<{n}x{c}x{oh}x{ow}xf32>\n}}\n",
            p[0], p[1], p[2], p[3]
        );
        let opts = CompileOptions { formats, ..Default::default() };
        let om = om_bytes("dwp", &text, &opts);
        let (types, m) = signature(&text, "main");
        let ins = random_inputs(&types, &[], 5);
        let want = interpret(&m, "main", &ins);
        let got = run(&load(&om, threads), &ins);
        assert_close(&got, &want, &format!("k={k:?} s={s:?} d={d:?} p={p:?} {h}x{w} formats={formats}"));
    }
}
