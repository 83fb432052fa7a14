//! Winograd F(2x2, 3x3) and F(4x4, 3x3) convolutions against the im2col
//! path and the interpreter: odd sizes (edge tiles cut), pads on any side,
//! groups, batch > 1, channel counts off the vector width, no bias, NC1HWC0
//! outputs, filters as inputs (transformed at every run) and as constants
//! (transformed once at load). `GE_CONV_ALGO` picks the path at load time,
//! so the loads of one test run one after the other (`ALGO` lock).

mod common;
use common::*;
use ge_compile::CompileOptions;
use proptest::prelude::*;
use std::sync::Mutex;

static ALGO: Mutex<()> = Mutex::new(());

/// One convolution's shape.
#[derive(Clone, Copy, Debug)]
struct Case {
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    oc: usize,
    /// top, left, bottom, right
    pads: [usize; 4],
    group: usize,
    bias: bool,
}

fn conv_text(k: &Case, act: &str) -> String {
    let Case {
        n,
        c,
        h,
        w,
        oc,
        pads,
        group,
        ..
    } = *k;
    let (oh, ow) = (h + pads[0] + pads[2] - 2, w + pads[1] + pads[3] - 2);
    let cg = c / group;
    let (xt, ft, bt) = (
        format!("tensor<{n}x{c}x{h}x{w}xf32>"),
        format!("tensor<{oc}x{cg}x3x3xf32>"),
        format!("tensor<{oc}xf32>"),
    );
    let yt = format!("tensor<{n}x{oc}x{oh}x{ow}xf32>");
    let [t, l, b, r] = pads;
    let attrs =
        format!("{{group = {group} : i64, pads = [{t}, {l}, {b}, {r}], activation = \"{act}\"}}");
    match k.bias {
        true => format!(
            "graph.func @main(%x: {xt}, %f: {ft}, %b: {bt}) -> {yt} {{\n  \
             %y = graph.conv2d %x, %f, %b {attrs} : ({xt}, {ft}, {bt}) -> {yt}\n  \
             graph.return %y : {yt}\n}}\n"
        ),
        false => format!(
            "graph.func @main(%x: {xt}, %f: {ft}) -> {yt} {{\n  \
             %y = graph.conv2d %x, %f {attrs} : ({xt}, {ft}) -> {yt}\n  \
             graph.return %y : {yt}\n}}\n"
        ),
    }
}

/// Run `k` on every path and compare with the interpreter; check that each
/// forced path is the one the model reports.
fn check(k: &Case, act: &str, formats: bool, threads: usize, seed: u64) {
    let text = conv_text(k, act);
    let (types, m) = signature(&text, "main");
    let ins = random_inputs(&types, &[], seed);
    let want = interpret(&m, "main", &ins);
    let opts = CompileOptions {
        formats,
        ..Default::default()
    };
    let om = om_bytes("wino", &text, &opts);
    let _lock = ALGO.lock().unwrap_or_else(|e| e.into_inner());
    // One input and one output channel per group: the direct depthwise kernel.
    let plain = match k.c == k.group && k.oc == k.group {
        true => "depthwise",
        false => "im2col",
    };
    for (algo, label) in [
        ("im2col", plain),
        ("winograd2", "winograd F(2x2,3x3)"),
        ("winograd4", "winograd F(4x4,3x3)"),
    ] {
        std::env::set_var("GE_CONV_ALGO", algo);
        let model = load(&om, threads);
        let algos = model.conv_algorithms();
        assert!(
            algos
                .iter()
                .any(|(a, n, _)| (a == label || a.starts_with(&format!("{label} ("))) && *n == 1),
            "{k:?} {algo}: the model reports {algos:?}"
        );
        let got = run(&model, &ins);
        assert_close(
            &got,
            &want,
            &format!("{k:?} act={act} formats={formats} threads={threads} {algo}"),
        );
    }
    std::env::remove_var("GE_CONV_ALGO");
}

#[test]
fn winograd_matches_im2col_and_the_interpreter() {
    let case = |n, c, h, w, oc, pads, group, bias| Case {
        n,
        c,
        h,
        w,
        oc,
        pads,
        group,
        bias,
    };
    let cases = [
        case(1, 16, 8, 8, 16, [1; 4], 1, true),     // whole tiles
        case(1, 5, 7, 9, 3, [1; 4], 1, true),       // odd sizes: edge tiles cut
        case(2, 3, 6, 5, 7, [0; 4], 1, false),      // batch 2, no pads, no bias
        case(1, 4, 9, 6, 6, [2, 0, 1, 3], 1, true), // uneven pads
        case(2, 8, 5, 5, 12, [1; 4], 2, true),      // two groups
        case(1, 17, 13, 13, 9, [1; 4], 1, true),    // AlexNet's 13x13 plane
        case(1, 2, 3, 3, 2, [0; 4], 1, true),       // a single output pixel
    ];
    for (i, k) in cases.iter().enumerate() {
        for (formats, threads) in [(false, 1), (true, 2)] {
            check(k, "relu", formats, threads, i as u64);
        }
    }
    check(&cases[1], "none", false, 1, 9);
}

/// A constant filter: the transform is a weight-only step, folded at load.
#[test]
fn a_constant_filter_is_transformed_once_at_load() {
    let (x, f, y) = (
        "tensor<1x6x10x10xf32>",
        "tensor<8x6x3x3xf32>",
        "tensor<1x8x10x10xf32>",
    );
    let values: Vec<String> = (0..8 * 6 * 9)
        .map(|i| format!("{:.3}", ((i * 37 % 101) as f64 - 50.0) / 100.0))
        .collect();
    let text = format!(
        "graph.func @main(%x: {x}) -> {y} {{\n  \
         %f = data.constant dense<{}> : {f}\n  \
         %y = graph.conv2d %x, %f {{pads = [1, 1, 1, 1]}} : ({x}, {f}) -> {y}\n  \
         graph.return %y : {y}\n}}\n",
        nest(&values, &[8, 6, 3, 3])
    );
    let (types, m) = signature(&text, "main");
    let ins = random_inputs(&types, &[], 11);
    let want = interpret(&m, "main", &ins);
    let om = om_bytes("wino_const", &text, &CompileOptions::default());
    let _lock = ALGO.lock().unwrap_or_else(|e| e.into_inner());
    std::env::set_var("GE_CONV_ALGO", "winograd4");
    let model = load(&om, 1);
    std::env::remove_var("GE_CONV_ALGO");
    assert_eq!(
        model.conv_algorithms(),
        vec![("winograd F(4x4,3x3)".to_string(), 1, 1)],
        "one Winograd convolution, its filter transformed at load"
    );
    assert_close(&run(&model, &ins), &want, "constant filter");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn winograd_matches_at_random_shapes(
        n in 1usize..3, cg in 1usize..7, ocg in 1usize..7, group in 1usize..3,
        h in 1usize..12, w in 1usize..12, pads in proptest::array::uniform4(0usize..3),
        bias: bool, seed: u64,
    ) {
        // The output must have at least one pixel.
        prop_assume!(h + pads[0] + pads[2] >= 3 && w + pads[1] + pads[3] >= 3);
        // Every tap reads the input somewhere: else canonicalize's
        // conv_dead_taps slices the filter and the conv is no longer 3x3.
        prop_assume!(h + pads[0] > 2 && h + pads[2] > 2 && w + pads[1] > 2 && w + pads[3] > 2);
        let k = Case { n, c: cg * group, h, w, oc: ocg * group, pads, group, bias };
        check(&k, "relu", false, 1, seed);
    }
}
