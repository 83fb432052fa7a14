//! The max-pooling kernel's vectorised path (plane padded with -inf and split
//! into column phases) against the interpreter, bit for bit, over kernel
//! sizes, strides, asymmetric padding and ceil mode; NaN wins as in the
//! reference; dilated pools take the same path.

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_ir::tensor::Tensor;

fn pool_text(
    k: usize,
    s: usize,
    d: usize,
    p: [usize; 4],
    ceil: bool,
    h: usize,
    w: usize,
) -> String {
    pool_text_2d([k, k], [s, s], [d, d], p, ceil, h, w)
}

/// A max pool with its own kernel size, stride and dilation per axis.
fn pool_text_2d(
    k: [usize; 2],
    s: [usize; 2],
    d: [usize; 2],
    p: [usize; 4],
    ceil: bool,
    h: usize,
    w: usize,
) -> String {
    let c = 5;
    let out = |i: usize, len: usize, lo: usize, hi: usize| {
        let span = len + lo + hi - d[i] * (k[i] - 1) - 1;
        match ceil {
            true => span.div_ceil(s[i]) + 1,
            false => span / s[i] + 1,
        }
    };
    let (oh, ow) = (out(0, h, p[0], p[2]), out(1, w, p[1], p[3]));
    format!(
        "graph.func @main(%x: tensor<2x{c}x{h}x{w}xf32>) -> tensor<2x{c}x{oh}x{ow}xf32> {{\n  \
         %y = graph.max_pool2d %x {{kernel_shape = [{}, {}], strides = [{}, {}], dilations = [{}, {}], \
         pads = [{}, {}, {}, {}], ceil_mode = {} : i64}} : (tensor<2x{c}x{h}x{w}xf32>) -> tensor<2x{c}x{oh}x{ow}xf32>\n  \
         graph.return %y : tensor<2x{c}x{oh}x{ow}xf32>\n}}\n",
        k[0],
        k[1],
        s[0],
        s[1],
        d[0],
        d[1],
        p[0],
        p[1],
        p[2],
        p[3],
        ceil as i64
    )
}

/// The average pool of the same window as max pool `text`.
fn as_average(text: &str, ceil: bool, include_pad: i64) -> String {
    text.replace("graph.max_pool2d", "graph.avg_pool2d")
        .replace(
            &format!("ceil_mode = {} : i64}}", ceil as i64),
            &format!(
                "ceil_mode = {} : i64, count_include_pad = {include_pad} : i64}}",
                ceil as i64
            ),
        )
}

fn check(text: &str, ins: &[Tensor], what: &str) {
    let (_, m) = signature(text, "main");
    let want = interpret(&m, "main", ins);
    for formats in [false, true] {
        let opts = CompileOptions {
            formats,
            ..Default::default()
        };
        let om = om_bytes("pool", text, &opts);
        for threads in [1, 2] {
            let got = run(&load(&om, threads), ins);
            let (g, w) = (got[0].to_f64(), want[0].to_f64());
            assert_eq!(g.len(), w.len(), "{what}");
            for (i, (a, b)) in g.iter().zip(&w).enumerate() {
                assert!(
                    a == b || (a.is_nan() && b.is_nan()),
                    "{what} formats={formats} threads={threads}: element {i} is {a}, the interpreter's {b}"
                );
            }
        }
    }
}

#[test]
fn max_pooling_variants_match_the_interpreter_bitwise() {
    // (kernel, stride, dilation, pads [top, left, bottom, right], ceil, H, W)
    let cases = [
        (3, 2, 1, [1, 1, 1, 1], false, 12, 12), // ResNet's stem pool
        (2, 2, 1, [0, 0, 0, 0], false, 8, 9),
        (3, 1, 1, [1, 1, 1, 1], false, 7, 6),
        (3, 3, 1, [0, 1, 2, 0], false, 11, 10),
        (2, 2, 1, [0, 0, 0, 0], true, 5, 7), // a partial last window
        (5, 2, 1, [2, 2, 2, 2], true, 9, 9),
        (1, 1, 1, [0, 0, 0, 0], false, 4, 4),
        (3, 2, 2, [2, 2, 2, 2], false, 11, 9), // dilated: the generic loop
        // Rows wider than the 16 lanes, with a partial last group of lanes
        // that reads on into the next row (SqueezeNet's stem pool: 111 -> 55).
        (3, 2, 1, [0, 0, 0, 0], false, 9, 37),
        (3, 2, 1, [1, 1, 1, 1], false, 6, 70),
        (3, 2, 1, [0, 0, 0, 0], true, 31, 31), // SqueezeNet's at 64 x 64
        (3, 1, 1, [1, 1, 1, 1], false, 5, 33),
        (2, 2, 1, [0, 0, 0, 0], true, 5, 65),
        // Output planes past the lanes kernel's 1024 pixels (with AVX-512):
        // rows then columns (column strides 1 and 2), else the plane-wise
        // kernel (a column stride of 3, a column dilation).
        (3, 2, 1, [1, 1, 1, 1], false, 80, 72),
        (3, 1, 1, [1, 1, 1, 1], true, 40, 33),
        (3, 3, 1, [0, 1, 2, 0], false, 100, 110),
        (3, 2, 2, [2, 2, 2, 2], false, 80, 80),
    ];
    for (k, s, d, p, ceil, h, w) in cases {
        let text = pool_text(k, s, d, p, ceil, h, w);
        let (types, _) = signature(&text, "main");
        let ins = random_inputs(&types, &[], 4);
        check(
            &text,
            &ins,
            &format!("k={k} s={s} d={d} pads={p:?} ceil={ceil} {h}x{w}"),
        );
    }
}

/// Max pools of more than 1024 output pixels in rows of 16 or more, on an
/// AVX-512 host (runtime/src/kernels/pool_rows.rs): each input row's maxima,
/// then down the columns; stride-2 pools of narrow rows the same way from
/// two vectors a row, and planes of up to 32 pixels from two vectors a
/// plane (pool_tiny.rs), NaN-free planes folded with one `MAXPS`, the
/// others again exactly; and of smaller maps with 16 channels in the lanes
/// (pool_lanes.rs), whose NaN-free blocks fold with one `MAXPS`. Bit for bit
/// the interpreter, signed zeros included: the inputs are mostly +0.0, -0.0
/// and 1.0, so most windows hold ties, and a few NaNs (not in every block
/// of 16 channels: both of pool_lanes' folds run). Column strides 1 and 2,
/// the specialised 2- and 3-wide kernels and others, pads (which the row
/// ends read as -inf), ceil mode, unequal axes with a row stride and
/// dilation.
#[test]
fn max_pools_keep_the_first_of_equal_values_bit_for_bit() {
    // (kernel, stride, dilation, pads [top, left, bottom, right], ceil, H, W)
    let cases = [
        ([3, 3], [2, 2], [1, 1], [0, 0, 0, 0], false, 47, 111), // SqueezeNet's stem pool
        ([3, 3], [2, 2], [1, 1], [1, 1, 1, 1], false, 80, 56),  // ResNet's stem pool
        ([2, 2], [2, 2], [1, 1], [0, 0, 0, 0], false, 70, 64),  // VGG's
        ([2, 2], [2, 2], [1, 1], [0, 0, 0, 0], true, 61, 67),
        ([5, 5], [2, 2], [1, 1], [2, 2, 2, 2], true, 84, 50),
        ([3, 3], [1, 1], [1, 1], [1, 1, 1, 1], false, 32, 33),
        ([4, 4], [1, 1], [1, 1], [1, 2, 2, 1], false, 28, 40),
        ([1, 6], [1, 2], [1, 1], [0, 3, 0, 3], true, 45, 45),
        ([3, 4], [3, 2], [2, 1], [2, 1, 1, 2], false, 100, 70),
        ([3, 3], [2, 2], [1, 1], [0, 1, 2, 0], true, 75, 75),
        // Stride-2 pools 2 or 3 wide of rows under 16 outputs whose windows
        // lie in 32 columns: two masked loads a row (pool_rows.rs's
        // `pool_narrow`); SqueezeNet's pools at 64 x 64, pads at either
        // end, ceil mode, row strides and dilations, a row of one output.
        ([3, 3], [2, 2], [1, 1], [0, 0, 0, 0], true, 31, 31),
        ([3, 3], [2, 2], [1, 1], [0, 0, 0, 0], true, 15, 15),
        ([3, 3], [2, 2], [1, 1], [1, 1, 1, 1], false, 9, 28),
        ([2, 2], [2, 2], [1, 1], [0, 0, 0, 0], true, 7, 29),
        ([3, 3], [2, 2], [2, 1], [0, 1, 1, 0], true, 20, 7),
        ([4, 3], [3, 2], [1, 1], [2, 2, 3, 2], false, 13, 23),
        ([3, 2], [1, 2], [1, 1], [0, 0, 0, 0], false, 5, 3),
        // Planes of up to 32 pixels into up to 16: each plane in two
        // vectors, a permute a tap (pool_tiny.rs); GoogLeNet's 3x3
        // stride-1 pools over 2x2 and 4x4, strides, a row dilation, pads
        // wider than the plane's reach.
        ([3, 3], [1, 1], [1, 1], [1, 1, 1, 1], false, 2, 2),
        ([3, 3], [1, 1], [1, 1], [1, 1, 1, 1], false, 4, 4),
        ([2, 2], [2, 2], [1, 1], [0, 0, 0, 0], true, 4, 4),
        ([3, 3], [2, 2], [2, 1], [1, 1, 2, 0], false, 5, 6),
        ([1, 3], [1, 2], [1, 1], [0, 2, 0, 2], false, 3, 5),
        // Output planes up to 1024 pixels: pool_lanes.
        ([3, 3], [2, 2], [1, 1], [0, 1, 2, 0], true, 37, 37),
        ([3, 3], [1, 1], [1, 1], [1, 1, 1, 1], false, 14, 14),
        ([3, 3], [2, 2], [1, 1], [0, 0, 0, 0], false, 12, 12),
    ];
    for (k, s, d, p, ceil, h, w) in cases {
        let what = format!("k={k:?} s={s:?} d={d:?} pads={p:?} ceil={ceil} {h}x{w}");
        let text = pool_text_2d(k, s, d, p, ceil, h, w);
        let (types, m) = signature(&text, "main");
        let x = &random_inputs(&types, &[], 8)[0];
        let v: Vec<f64> = (0..x.shape.iter().product::<usize>())
            .map(|i| match (i * 7919 + i / 13) % 97 {
                // NaN in the first 4 channels' planes only.
                0 if i < 4 * h * w => f64::NAN,
                r if r < 40 => 0.0,
                r if r < 80 => -0.0,
                _ => 1.0,
            })
            .collect();
        let ins = [Tensor::from_f64(x.shape.clone(), x.dtype, v)];
        let want = interpret(&m, "main", &ins)[0].to_f64();
        let om = om_bytes("pool", &text, &CompileOptions::default());
        for threads in [1, 2] {
            let got = run(&load(&om, threads), &ins)[0].to_f64();
            assert_eq!(got.len(), want.len(), "{what}");
            for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!(
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                    "{what} threads={threads}: element {i} is {a:?}, the interpreter's {b:?}"
                );
            }
        }
    }
}

#[test]
fn nan_wins_a_window_as_in_the_reference() {
    let text = pool_text(3, 2, 1, [1, 1, 1, 1], false, 12, 12);
    let (types, _) = signature(&text, "main");
    let x = &random_inputs(&types, &[], 5)[0];
    let mut v = x.to_f64();
    for i in [0, 13, 77, 500, v.len() - 1] {
        v[i] = f64::NAN;
    }
    let x = Tensor::from_f64(x.shape.clone(), x.dtype, v);
    check(&text, &[x], "NaN inputs");
}

/// Average pooling's padded-plane path (runtime/src/kernels/pool.rs `pool_plane`):
/// the same windows as the max cases, with and without the padding counted,
/// against the interpreter at the f32 tolerance (the interpreter's sums
/// round differently: 1 ulp apart).
#[test]
fn average_pooling_matches_the_interpreter() {
    // (kernel, stride, dilation, pads [top, left, bottom, right], ceil, H, W)
    let cases = [
        (3, 2, 1, [1, 1, 1, 1], false, 14, 14), // ShuffleNet's stride-2 units
        (2, 2, 1, [0, 0, 0, 0], false, 8, 9),
        (3, 1, 1, [1, 1, 1, 1], false, 7, 6),
        (3, 3, 1, [0, 1, 2, 0], false, 11, 10),
        (2, 2, 1, [0, 0, 0, 0], true, 5, 7), // a partial last window
        (5, 2, 1, [2, 2, 2, 2], true, 9, 9),
        (1, 1, 1, [0, 0, 0, 0], false, 4, 4),
        (3, 2, 2, [2, 2, 2, 2], false, 11, 9), // dilated
        (7, 1, 1, [0, 0, 0, 0], false, 7, 7),  // a global-like window
        (3, 2, 1, [1, 1, 1, 1], true, 6, 70),
        (1, 3, 1, [0, 0, 0, 0], false, 2, 2), // fewer columns than the stride
        (2, 3, 1, [0, 1, 0, 1], false, 5, 4), // column phases of unequal length
        // Past the lanes kernel's 1024 output pixels: the plane-wise kernel.
        (3, 1, 1, [1, 1, 1, 1], false, 40, 33),
        (3, 2, 1, [1, 1, 1, 1], true, 80, 66),
    ];
    for (k, s, d, p, ceil, h, w) in cases {
        for include_pad in [0, 1] {
            let text = as_average(&pool_text(k, s, d, p, ceil, h, w), ceil, include_pad);
            let (types, m) = signature(&text, "main");
            let ins = random_inputs(&types, &[], 6);
            let want = interpret(&m, "main", &ins);
            let what = format!(
                "avg k={k} s={s} d={d} pads={p:?} ceil={ceil} include_pad={include_pad} {h}x{w}"
            );
            for threads in [1, 2] {
                let om = om_bytes("avg", &text, &CompileOptions::default());
                assert_close(&run(&load(&om, threads), &ins), &want, &what);
            }
        }
    }
}

/// Windows whose kernel, stride and dilation differ between the axes: the
/// padded planes split into row phases and column phases of their own
/// (runtime/src/kernels/pool.rs `Window`). Max pools bit for bit, average
/// pools (with and without the padding counted) at the f32 tolerance.
#[test]
fn pools_with_unequal_axes_match_the_interpreter() {
    // (kernel, stride, dilation, pads [top, left, bottom, right], ceil, H, W)
    let cases = [
        ([3, 2], [1, 2], [1, 1], [1, 0, 1, 0], false, 9, 21),
        ([2, 3], [3, 1], [1, 1], [0, 1, 1, 1], true, 13, 8),
        ([3, 3], [2, 3], [2, 1], [2, 1, 2, 1], false, 12, 40),
        ([1, 4], [1, 2], [1, 2], [0, 3, 0, 3], true, 4, 19),
    ];
    for (k, s, d, p, ceil, h, w) in cases {
        let what = format!("k={k:?} s={s:?} d={d:?} pads={p:?} ceil={ceil} {h}x{w}");
        let text = pool_text_2d(k, s, d, p, ceil, h, w);
        let (types, _) = signature(&text, "main");
        let ins = random_inputs(&types, &[], 7);
        check(&text, &ins, &format!("max {what}"));
        for include_pad in [0, 1] {
            let avg = as_average(&text, ceil, include_pad);
            let (_, m) = signature(&avg, "main");
            let want = interpret(&m, "main", &ins);
            for threads in [1, 2] {
                let om = om_bytes("avg", &avg, &CompileOptions::default());
                assert_close(
                    &run(&load(&om, threads), &ins),
                    &want,
                    &format!("avg include_pad={include_pad} {what}"),
                );
            }
        }
    }
}

#[test]
fn global_pooling_matches_the_interpreter() {
    // Planes of 1, 7 (under one lane group), 35 (four groups of 8 and a
    // remainder: `norm::sum_f64`'s partial sums) and 169 elements.
    for (h, w) in [(1, 1), (1, 7), (5, 7), (13, 13)] {
        let text = format!(
            "graph.func @main(%x: tensor<2x3x{h}x{w}xf32>) -> (tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>) {{\n  \
             %a = graph.global_avg_pool %x : (tensor<2x3x{h}x{w}xf32>) -> tensor<2x3x1x1xf32>\n  \
             %m = graph.global_max_pool %x : (tensor<2x3x{h}x{w}xf32>) -> tensor<2x3x1x1xf32>\n  \
             graph.return %a, %m : tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>\n}}\n"
        );
        let (types, m) = signature(&text, "main");
        let ins = random_inputs(&types, &[], 6);
        let want = interpret(&m, "main", &ins);
        let om = om_bytes("gp", &text, &CompileOptions::default());
        let got = run(&load(&om, 1), &ins);
        assert_close(&got, &want, &format!("global pools of {h}x{w}"));
    }
}
