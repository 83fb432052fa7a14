//! Convolutions whose filter (and bias) are constants, `GE_CONV_ALGO=packed`
//! (and `taps`: the input read by tap offsets, no im2col panel):
//! the loader packs the filter once into the panels of the GEMM micro-kernel
//! (`kernels/sgemm_packed.rs`, `Conv::prepare`) and every run reads it
//! packed. Checked against the interpreter for every shape class: strides,
//! dilations, pads on any side, groups (depthwise keeps its own kernel),
//! 1x1, batch > 1, kernel sizes 1 to 5 (and 7 and 11), channel counts off
//! the 4-row panels and 24-column blocks, k across the micro-kernel's
//! 384-deep slices, planes across its 192-column blocks of `B`, NC1HWC0 outputs and FRACTAL_Z filters converted at
//! load, 1 and 2 threads.

mod common;
use common::*;
use ge_compile::CompileOptions;
use proptest::prelude::*;

/// One convolution's shape.
#[derive(Clone, Copy, Debug)]
struct Case {
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    oc: usize,
    k: [usize; 2],
    strides: [usize; 2],
    dilations: [usize; 2],
    /// top, left, bottom, right
    pads: [usize; 4],
    group: usize,
    bias: bool,
}

impl Case {
    fn out(&self) -> [usize; 2] {
        let ext = |i: usize| (self.k[i] - 1) * self.dilations[i] + 1;
        let oh = (self.h + self.pads[0] + self.pads[2] - ext(0)) / self.strides[0] + 1;
        let ow = (self.w + self.pads[1] + self.pads[3] - ext(1)) / self.strides[1] + 1;
        [oh, ow]
    }
    /// Whether the compiled convolution is 1x1 stride 1 without padding:
    /// this one, or one whose kernel keeps a single tap per axis once the
    /// taps that only ever read padding are sliced off with their padding
    /// (`rewrites/src/native.rs` `conv_dead_taps`: a 1x4 kernel padded 2
    /// and 1 over a 1-wide input keeps its third tap, unpadded).
    fn compiled_pointwise(&self) -> bool {
        let as_given = self.k == [1, 1] && self.strides == [1, 1] && self.pads == [0; 4];
        let out = self.out();
        let input = [self.h, self.w];
        let mut kernel = self.k;
        let mut pads = self.pads;
        for a in 0..2 {
            let (k, s, d) = (self.k[a], self.strides[a], self.dilations[a]);
            let (begin, end) = (self.pads[a], self.pads[a + 2]);
            // Tap `i` reads input `y * s + i * d - begin` for output `y`.
            let live = |i: usize| {
                (0..out[a]).any(|y| (begin..begin + input[a]).contains(&(y * s + i * d)))
            };
            let (Some(first), Some(last)) =
                ((0..k).find(|&i| live(i)), (0..k).rev().find(|&i| live(i)))
            else {
                return as_given;
            };
            match (
                begin.checked_sub(first * d),
                end.checked_sub((k - 1 - last) * d),
            ) {
                (Some(b), Some(e)) => {
                    kernel[a] = last - first + 1;
                    pads[a] = b;
                    pads[a + 2] = e;
                }
                // The rewrite leaves a padding that would go negative.
                _ => return as_given,
            }
        }
        kernel == [1, 1] && self.strides == [1, 1] && pads == [0; 4]
    }
    fn fits(&self) -> bool {
        let ext = |i: usize| (self.k[i] - 1) * self.dilations[i] + 1;
        self.h + self.pads[0] + self.pads[2] >= ext(0)
            && self.w + self.pads[1] + self.pads[3] >= ext(1)
    }
}

fn conv_text(k: &Case, act: &str, seed: u64) -> String {
    let Case {
        n,
        c,
        h,
        w,
        oc,
        group,
        ..
    } = *k;
    let [oh, ow] = k.out();
    let [kh, kw] = k.k;
    let cg = c / group;
    let (xt, ft, bt) = (
        format!("tensor<{n}x{c}x{h}x{w}xf32>"),
        format!("tensor<{oc}x{cg}x{kh}x{kw}xf32>"),
        format!("tensor<{oc}xf32>"),
    );
    let yt = format!("tensor<{n}x{oc}x{oh}x{ow}xf32>");
    let [t, l, b, r] = k.pads;
    let ([sh, sw], [dh, dw]) = (k.strides, k.dilations);
    let attrs = format!(
        "{{group = {group} : i64, pads = [{t}, {l}, {b}, {r}], strides = [{sh}, {sw}], \
         dilations = [{dh}, {dw}], activation = \"{act}\"}}"
    );
    let f = dense(oc * cg * kh * kw, &[oc, cg, kh, kw], seed);
    let (bias, operands, types) = match k.bias {
        true => (
            format!(
                "  %b = data.constant dense<{}> : {bt}\n",
                dense(oc, &[oc], seed.wrapping_add(1))
            ),
            ", %b",
            format!(", {bt}"),
        ),
        false => (String::new(), "", String::new()),
    };
    format!(
        "graph.func @main(%x: {xt}) -> {yt} {{\n  \
         %f = data.constant dense<{f}> : {ft}\n{bias}  \
         %y = graph.conv2d %x, %f{operands} {attrs} : ({xt}, {ft}{types}) -> {yt}\n  \
         graph.return %y : {yt}\n}}\n"
    )
}

/// Run `k` with its filter packed at load and compare with the
/// interpreter; check that the model reports the packed path (or its own
/// kernel: depthwise, Winograd).
fn check(k: &Case, act: &str, formats: bool, threads: usize, seed: u64) {
    check_algo("packed", k, act, formats, threads, seed)
}

/// Serialises setting `GE_CONV_ALGO` and loading (where it is read) among
/// the tests of this file (`cargo test` runs them on threads of one process).
static ALGO: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// As [`check`] with `GE_CONV_ALGO=algo` (`packed` or `taps`).
fn check_algo(algo: &str, k: &Case, act: &str, formats: bool, threads: usize, seed: u64) {
    let text = conv_text(k, act, seed);
    let (types, m) = signature(&text, "main");
    let ins = random_inputs(&types, &[], seed);
    let want = interpret(&m, "main", &ins);
    let opts = CompileOptions {
        formats,
        ..Default::default()
    };
    let om = om_bytes("packed", &text, &opts);
    let model = {
        let _held = ALGO.lock().unwrap_or_else(|e| e.into_inner());
        std::env::set_var("GE_CONV_ALGO", algo);
        load(&om, threads)
    };
    // A 1x1 stride-1 convolution reads its input in place as the GEMM's
    // operand on every path (no taps).
    let label = match algo {
        "taps" if !k.compiled_pointwise() => "taps packed",
        _ => "im2col packed",
    };
    let algos = model.conv_algorithms();
    assert!(
        algos
            .iter()
            .all(|(a, _, _)| a == label || a.starts_with("depthwise") || a.starts_with("winograd")),
        "{k:?}: the model reports {algos:?}"
    );
    let got = run(&model, &ins);
    assert_close(
        &got,
        &want,
        &format!("{k:?} {algo} act={act} formats={formats} threads={threads}"),
    );
}

#[allow(clippy::too_many_arguments)]
fn case(
    n: usize,
    c: usize,
    hw: [usize; 2],
    oc: usize,
    k: [usize; 2],
    strides: [usize; 2],
    dilations: [usize; 2],
    pads: [usize; 4],
    group: usize,
) -> Case {
    Case {
        n,
        c,
        h: hw[0],
        w: hw[1],
        oc,
        k,
        strides,
        dilations,
        pads,
        group,
        bias: true,
    }
}

#[test]
fn packed_filters_match_the_interpreter() {
    let cases = [
        case(1, 16, [13, 13], 64, [3, 3], [1, 1], [1, 1], [1; 4], 1), // SqueezeNet's expand
        case(1, 3, [23, 23], 8, [3, 3], [2, 2], [1, 1], [0; 4], 1),   // stride 2, 3 channels
        case(1, 3, [31, 29], 6, [11, 11], [4, 4], [1, 1], [2; 4], 1), // AlexNet's first
        case(2, 5, [9, 7], 7, [3, 3], [1, 1], [1, 1], [2, 0, 1, 3], 1), // uneven pads, batch 2
        case(1, 8, [10, 10], 12, [3, 3], [1, 1], [2, 2], [2; 4], 2),  // dilation, groups
        case(1, 6, [12, 11], 9, [5, 3], [2, 1], [1, 2], [1, 2, 0, 1], 3), // mixed
        case(1, 24, [14, 14], 36, [1, 1], [1, 1], [1, 1], [0; 4], 3), // grouped 1x1
        case(1, 4, [15, 15], 5, [7, 7], [2, 2], [1, 1], [3; 4], 1),   // ResNet's first
        case(1, 2, [3, 3], 2, [3, 3], [1, 1], [1, 1], [0; 4], 1),     // one output pixel
        case(1, 64, [7, 7], 70, [3, 3], [1, 1], [1, 1], [1; 4], 1),   // k = 576: 5 slices
        case(1, 40, [9, 9], 33, [1, 1], [1, 1], [1, 1], [0; 4], 1),   // pointwise, 81 columns
        case(2, 32, [6, 6], 130, [3, 3], [2, 2], [1, 1], [1; 4], 1),  // row blocks on 2 threads
        case(1, 800, [15, 15], 20, [1, 1], [1, 1], [1, 1], [0; 4], 1), // k 3 slices, 2 column blocks
        // Filters of 16-row panels whose GEMM reads the input in place
        // (conv.rs `in_place_pays`): stride 2 and uneven pads at batch 2 (3
        // panels), groups with dilation, pointwise (5 panels: 3 + 2), 1x1
        // stride 2, and more than 128 channels by a long `k`.
        case(2, 32, [11, 9], 48, [3, 3], [2, 2], [1, 1], [1, 0, 2, 1], 1),
        case(1, 32, [10, 10], 64, [3, 3], [1, 1], [2, 2], [2; 4], 2),
        case(1, 160, [9, 9], 80, [1, 1], [1, 1], [1, 1], [0; 4], 1),
        case(1, 136, [7, 8], 40, [1, 1], [2, 2], [1, 1], [0; 4], 1),
        case(1, 128, [5, 6], 144, [3, 3], [1, 1], [1, 1], [1; 4], 1),
        // A 1x4 kernel over a 1-wide input whose taps but one read only
        // padding: compiled to a 1x1 pointwise convolution (`compiled_pointwise`;
        // proptest found it).
        case(2, 10, [4, 1], 14, [1, 4], [1, 1], [1, 1], [0, 2, 0, 1], 2),
    ];
    for (i, k) in cases.iter().enumerate() {
        for (formats, threads) in [(false, 1), (true, 2)] {
            check(k, "relu", formats, threads, i as u64);
        }
    }
    let mut nobias = cases[3];
    nobias.bias = false;
    check(&nobias, "none", false, 2, 9);
    // The same shapes read by tap offsets, no im2col panel (conv.rs
    // `Conv::run_taps`; `GE_CONV_ALGO=taps` takes it wherever a filter is
    // packed): flat positions across rows, tiles and threads, padding
    // columns dropped, NC1HWC0 outputs.
    for (i, k) in cases.iter().enumerate() {
        for (formats, threads) in [(false, 1), (true, 2), (false, 2)] {
            check_algo("taps", k, "relu", formats, threads, i as u64);
        }
    }
    check_algo("taps", &nobias, "none", false, 2, 9);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    /// Random shapes on the im2col panel (`packed`) and on the tap
    /// offsets (`taps`: conv.rs `Conv::run_taps`).
    #[test]
    fn packed_filters_match_at_random_shapes(
        n in 1usize..3, cg in 1usize..7, ocg in 1usize..10, group in 1usize..3,
        h in 1usize..14, w in 1usize..14, kh in 1usize..6, kw in 1usize..6,
        strides in proptest::array::uniform2(1usize..4),
        dilations in proptest::array::uniform2(1usize..3),
        pads in proptest::array::uniform4(0usize..3),
        bias: bool, threads in 1usize..3, taps: bool, formats: bool, seed: u64,
    ) {
        let k = Case {
            n, c: cg * group, h, w, oc: ocg * group, k: [kh, kw], strides, dilations, pads,
            group, bias,
        };
        prop_assume!(k.fits());
        let algo = if taps { "taps" } else { "packed" };
        check_algo(algo, &k, "relu", formats && taps, threads, seed);
    }
}
