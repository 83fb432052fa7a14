//! Convolutions that read and write NC1HWC0 blocks as they are
//! (`blocked_reads.rs`, `kernels/conv_blocked.rs`): chains of convolutions
//! on maps large enough that the loader chooses blocks (1x1 filters from
//! 28x28, others from 56x56; 64 output channels or more), with residuals,
//! padding, dilation, strides, channel counts that leave padding lanes
//! (72, 88), every activation kind (in registers or over the stored
//! rows), batch 2, 1 and 2 threads.
//! The model says how many convolutions read blocks and agrees with the
//! interpreter and with itself loaded without blocked reads. Without
//! AVX-512 the loader chooses none, and the test checks that instead.

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_runtime::{BlockedReads, LoadOptions, Model, StreamExecution};

/// One convolution of a chain: `oc` output channels, a `k`x`k` filter of
/// `stride` and `dilation` (padding keeps the map unless strided), then
/// maybe the value `residual` layers back added, then `act`.
#[derive(Clone, Copy)]
struct Layer {
    oc: usize,
    k: usize,
    stride: usize,
    dilation: usize,
    residual: Option<usize>,
    act: &'static str,
}

fn layer(oc: usize, k: usize) -> Layer {
    Layer {
        oc,
        k,
        stride: 1,
        dilation: 1,
        residual: None,
        act: "relu",
    }
}

/// A filter literal of `shape` from `seed`, its values scaled by the
/// square root of the fan-in so that activations keep their magnitude
/// down the chain (unscaled, they grow to where cancellation leaves
/// values near zero whose rounding exceeds any tolerance).
fn filter(shape: &[usize], seed: u64) -> String {
    let len: usize = shape.iter().product();
    let scale = 1.0 / ((len / shape[0]) as f64).sqrt();
    let values: Vec<String> = seeded(len, seed)
        .map(|v| format!("{:.5}", v * scale))
        .collect();
    nest(&values, shape)
}

/// `.air` text of the chain on a `c`-channel `h`x`h` batch-2 input.
fn chain(c: usize, h: usize, layers: &[Layer]) -> String {
    let mut body = String::new();
    // (name, channels, size) of each value so far.
    let mut values = vec![("%x".to_string(), c, h)];
    for (i, l) in layers.iter().enumerate() {
        let (x, cin, hin) = values.last().cloned().unwrap_or_default();
        let pad = (l.k - 1) * l.dilation / 2;
        let hout = (hin + 2 * pad - (l.k - 1) * l.dilation - 1) / l.stride + 1;
        let (xt, yt) = (
            format!("tensor<2x{cin}x{hin}x{hin}xf32>"),
            format!("tensor<2x{}x{hout}x{hout}xf32>", l.oc),
        );
        let ft = format!("tensor<{}x{cin}x{k}x{k}xf32>", l.oc, k = l.k);
        let f = filter(&[l.oc, cin, l.k, l.k], i as u64 + 3);
        let b = dense(l.oc, &[l.oc], i as u64 + 11);
        body += &format!(
            "  %f{i} = data.constant dense<{f}> : {ft}\n  \
             %b{i} = data.constant dense<{b}> : tensor<{oc}xf32>\n  \
             %y{i} = graph.conv2d {x}, %f{i}, %b{i} {{group = 1 : i64, pads = [{pad}, {pad}, {pad}, {pad}], strides = [{s}, {s}], dilations = [{d}, {d}]}} : ({xt}, {ft}, tensor<{oc}xf32>) -> {yt}\n",
            oc = l.oc,
            s = l.stride,
            d = l.dilation
        );
        let mut last = format!("%y{i}");
        if let Some(back) = l.residual {
            let (r, _, _) = &values[values.len() - back];
            body += &format!("  %s{i} = graph.add {last}, {r} : ({yt}, {yt}) -> {yt}\n");
            last = format!("%s{i}");
        }
        if l.act != "none" {
            body += &format!("  %a{i} = graph.{} {last} : ({yt}) -> {yt}\n", l.act);
            last = format!("%a{i}");
        }
        values.push((last, l.oc, hout));
    }
    let (y, oc, ho) = values.last().cloned().unwrap_or_default();
    let (xt, yt) = (
        format!("tensor<2x{c}x{h}x{h}xf32>"),
        format!("tensor<2x{oc}x{ho}x{ho}xf32>"),
    );
    format!("graph.func @main(%x: {xt}) -> {yt} {{\n{body}  graph.return {y} : {yt}\n}}\n")
}

fn load_with(bytes: &[u8], threads: usize, blocked_reads: BlockedReads) -> Model {
    let stream_execution = match threads {
        1 => StreamExecution::Serial,
        _ => StreamExecution::Workers,
    };
    let opts = LoadOptions {
        threads,
        stream_execution,
        blocked_reads,
        ..Default::default()
    };
    let model = Model::from_bytes(bytes, &opts).unwrap_or_else(|e| panic!("load: {e}"));
    assert_native(&model, &[]);
    model
}

/// Whether the loader can choose blocks here (its kernel needs AVX-512).
fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Run `src` with and without blocked reads against the interpreter; the
/// model must choose `chosen` convolutions (with AVX-512).
fn check(what: &str, src: &str, chosen: usize) {
    let (types, m) = signature(src, "main");
    let ins = random_inputs(&types, &[], 7);
    let want = interpret(&m, "main", &ins);
    let bytes = om_bytes(what, src, &CompileOptions::default());
    for threads in [1, 2] {
        let model = load_with(&bytes, threads, BlockedReads::Always);
        let expect = if avx512() { chosen } else { 0 };
        assert_eq!(
            model.blocked_reads(),
            expect,
            "{what}: convolutions on blocks"
        );
        let got = run(&model, &ins);
        assert_close(&got, &want, &format!("{what} threads={threads}"));
        let plain = load_with(&bytes, threads, BlockedReads::Never);
        assert_eq!(plain.blocked_reads(), 0, "{what}: switched off");
        assert_close(&got, &run(&plain, &ins), &format!("{what}: blocks vs not"));
    }
}

#[test]
fn pointwise_chains_with_residuals_read_blocks() {
    // The first convolution reads the model's input (converted, not
    // written as blocks by a convolution): it stays on NCHW, the rest read
    // blocks, the residual as blocks too; 72 and 88 channels leave
    // padding lanes in the last panel of 16.
    let src = chain(
        16,
        28,
        &[
            layer(64, 1),
            Layer {
                act: "none",
                ..layer(64, 1)
            },
            Layer {
                residual: Some(2),
                ..layer(64, 1)
            },
            Layer {
                act: "leaky_relu",
                ..layer(72, 1)
            },
            layer(64, 1),
            Layer {
                act: "sigmoid",
                ..layer(88, 1)
            },
        ],
    );
    check("pointwise", &src, 5);
}

#[test]
fn the_measured_choice_follows_what_the_cpu_measured() {
    // 1x1 filters only: the measured pointwise timing alone decides.
    let src = chain(16, 28, &[layer(64, 1), layer(64, 1), layer(64, 1)]);
    let bytes = om_bytes("measured", &src, &CompileOptions::default());
    let always = load_with(&bytes, 1, BlockedReads::Always);
    assert_eq!(always.blocks_verdict(), None, "always: nothing measured");
    let measured = load_with(&bytes, 1, BlockedReads::Measured);
    match measured.blocks_verdict() {
        None => {
            assert!(!avx512(), "with AVX-512 the loader measures");
            assert_eq!(measured.blocked_reads(), 0);
        }
        Some(v) => {
            let expect = if v.pointwise.pays() {
                always.blocked_reads()
            } else {
                0
            };
            assert_eq!(measured.blocked_reads(), expect, "{v:?}");
            assert_eq!(always.blocked_reads(), 2);
        }
    }
    // Nothing a shape admits: no measurement.
    let small = chain(16, 8, &[layer(64, 1), layer(64, 1)]);
    let bytes = om_bytes("small", &small, &CompileOptions::default());
    assert_eq!(
        load_with(&bytes, 1, BlockedReads::Measured).blocks_verdict(),
        None
    );
}

#[test]
fn strided_and_padded_filters_read_blocks_on_large_maps() {
    let src = chain(
        8,
        56,
        &[
            layer(16, 1),
            layer(64, 3),
            Layer {
                dilation: 2,
                act: "tanh",
                ..layer(72, 3)
            },
            Layer {
                stride: 2,
                act: "hard_swish",
                ..layer(80, 1)
            },
            layer(64, 3),
        ],
    );
    // The first convolution reads the model's input; the last reads a 28x28
    // map, too small for a 3x3 filter on blocks, but heavy enough (64 x 9
    // multiply-adds per value) to convert the strided 1x1's blocks itself.
    let chosen = 3;
    check("taps", &src, chosen);
}

#[test]
fn a_light_reader_keeps_its_producers_on_nchw() {
    // As above, but the last 3x3 filter has 16 output channels: 144
    // multiply-adds per value, too few to repay converting the strided
    // 1x1's result, which then stays on NCHW; so does the dilated 3x3
    // before it, whose result the strided 1x1 would have read as blocks
    // (20 multiply-adds per value: too light to convert it). The first 3x3
    // still reads blocks: its reader, the second 3x3, converts them (648
    // multiply-adds per value).
    let src = chain(
        8,
        56,
        &[
            layer(16, 1),
            layer(64, 3),
            layer(72, 3),
            Layer {
                stride: 2,
                ..layer(80, 1)
            },
            layer(16, 3),
        ],
    );
    check("light reader", &src, 1);
}
