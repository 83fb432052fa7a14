//! A residual add after a convolution runs in the convolution's epilogue
//! (`fuse_conv_residuals`, runtime/src/kernels/mod.rs; `Conv::residual`):
//! `act(conv + bias + residual)` per output tile. Over every conv kernel
//! (1x1, packed taps, im2col, Winograd, depthwise, strided, grouped), with
//! and without bias and relu, the residual on either side of the add, NCHW
//! and NC1HWC0 models, 1 and 2 threads: the model reports the fusion, agrees
//! with the interpreter, and is bit for bit the unfused model (`fuse`
//! off: the add in a kernel of its own) on these NaN-free inputs. Transcendental activations in the
//! epilogue, run over blocks of rows, agree with the interpreter too.

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_ir::tensor::Tensor;

/// A conv (`k`x`k`, `stride`, pad `k / 2`, `group`) of `c` -> `oc`
/// channels on `h`x`h`, then `add` with the residual argument and maybe a
/// relu.
#[derive(Clone, Copy)]
struct Case {
    c: usize,
    oc: usize,
    h: usize,
    k: usize,
    stride: usize,
    group: usize,
    bias: bool,
    relu: bool,
    residual_first: bool,
}

fn text(t: &Case) -> String {
    let Case {
        c,
        oc,
        h,
        k,
        stride,
        group,
        ..
    } = *t;
    let p = k / 2;
    let o = (h + 2 * p - k) / stride + 1;
    let (xt, yt) = (
        format!("tensor<2x{c}x{h}x{h}xf32>"),
        format!("tensor<2x{oc}x{o}x{o}xf32>"),
    );
    let ft = format!("tensor<{oc}x{}x{k}x{k}xf32>", c / group);
    let f = dense(oc * c / group * k * k, &[oc, c / group, k, k], 3);
    let (bias, bop, bty) = optional_vector("b", t.bias, oc, 5);
    let sum = match t.residual_first {
        true => format!("%s = graph.add %r, %y : ({yt}, {yt}) -> {yt}"),
        false => format!("%s = graph.add %y, %r : ({yt}, {yt}) -> {yt}"),
    };
    let (last, relu) = match t.relu {
        true => ("%a", format!("  %a = graph.relu %s : ({yt}) -> {yt}\n")),
        false => ("%s", String::new()),
    };
    format!(
        "graph.func @main(%x: {xt}, %r: {yt}) -> {yt} {{\n  \
         %f = data.constant dense<{f}> : {ft}\n{bias}  \
         %y = graph.conv2d %x, %f{bop} {{group = {group} : i64, pads = [{p}, {p}, {p}, {p}], strides = [{stride}, {stride}]}} : ({xt}, {ft}{bty}) -> {yt}\n  \
         {sum}\n{relu}  \
         graph.return {last} : {yt}\n}}\n"
    )
}

fn case(c: usize, oc: usize, h: usize, k: usize, stride: usize, group: usize) -> Case {
    Case {
        c,
        oc,
        h,
        k,
        stride,
        group,
        bias: true,
        relu: true,
        residual_first: false,
    }
}

#[test]
fn residual_adds_run_in_the_conv_epilogue() {
    let cases = [
        case(16, 32, 9, 1, 1, 1),   // 1x1: the input is the GEMM's operand
        case(8, 24, 12, 3, 1, 1),   // 3x3: packed taps or Winograd
        case(6, 20, 11, 5, 1, 1),   // 5x5
        case(8, 16, 13, 3, 2, 1),   // strided: im2col
        case(12, 12, 10, 3, 1, 12), // depthwise
        case(8, 12, 9, 3, 1, 2),    // grouped
        Case {
            bias: false,
            ..case(16, 32, 9, 1, 1, 1)
        },
        Case {
            relu: false,
            ..case(8, 24, 12, 3, 1, 1)
        },
        Case {
            residual_first: true,
            ..case(8, 16, 13, 3, 2, 1)
        },
        Case {
            bias: false,
            relu: false,
            residual_first: true,
            ..case(12, 12, 10, 3, 1, 12)
        },
    ];
    for (i, t) in cases.iter().enumerate() {
        let src = text(t);
        let (types, m) = signature(&src, "main");
        let ins: Vec<Tensor> = random_inputs(&types, &[], 40 + i as u64);
        let want = interpret(&m, "main", &ins);
        let what = format!(
            "case {i}: {}->{} {}x{} k{} s{} g{} bias={} relu={}",
            t.c, t.oc, t.h, t.h, t.k, t.stride, t.group, t.bias, t.relu
        );
        for formats in [false, true] {
            let fused = CompileOptions {
                formats,
                ..Default::default()
            };
            let unfused = CompileOptions {
                formats,
                fuse: false,
                ..Default::default()
            };
            let fused = om_bytes("fused", &src, &fused);
            let unfused = om_bytes("unfused", &src, &unfused);
            for threads in [1, 2] {
                let model = load(&fused, threads);
                assert_eq!(
                    model.fused_residuals(),
                    1,
                    "{what}: the add is in the conv's epilogue"
                );
                let got = run(&model, &ins);
                assert_close(&got, &want, &what);
                let apart = load(&unfused, threads);
                assert_eq!(apart.fused_residuals(), 0, "{what}: unfused");
                let (g, u) = (got[0].to_f64(), run(&apart, &ins)[0].to_f64());
                assert!(
                    g.iter().zip(&u).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{what} formats={formats} threads={threads}: fused and unfused differ"
                );
            }
        }
    }
}

/// Near misses keep the add apart: a residual that broadcasts (a bias-like
/// [C, 1, 1] operand), and a conv result the kernel also returns.
#[test]
fn adds_that_are_not_residuals_stay_apart() {
    let broadcast =
        "graph.func @main(%x: tensor<1x4x6x6xf32>, %r: tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> {
  %f = data.constant dense<0.5> : tensor<4x4x1x1xf32>
  %y = graph.conv2d %x, %f : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %s = graph.add %y, %r : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  graph.return %s : tensor<1x4x6x6xf32>
}
";
    let both = "graph.func @main(%x: tensor<1x4x6x6xf32>, %r: tensor<1x4x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %f = data.constant dense<0.5> : tensor<4x4x1x1xf32>
  %y = graph.conv2d %x, %f : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %s = graph.add %y, %r : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  graph.return %s, %y : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}
";
    for (name, src) in [("broadcast", broadcast), ("both", both)] {
        let (types, m) = signature(src, "main");
        let ins = random_inputs(&types, &[], 9);
        let want = interpret(&m, "main", &ins);
        let model = load(&om_bytes(name, src, &CompileOptions::default()), 1);
        assert_eq!(model.fused_residuals(), 0, "{name}");
        assert_close(&run(&model, &ins), &want, name);
    }
}

/// Transcendental epilogue activations (sigmoid, silu, tanh, gelu) run over
/// whole blocks of rows after the bias (`Conv::finish_block`), hard_swish
/// in the bias's pass, and on small maps the depthwise lanes kernel applies
/// the bias and the activation in registers (`LaneEpilogue`): every conv kernel, maps down
/// to 2x2 (rows shorter than a vector), with a residual folded in or not,
/// NCHW and NC1HWC0, 1 and 2 threads.
#[test]
fn block_activations_match_the_interpreter() {
    let shapes = [
        case(16, 32, 2, 1, 1, 1),
        case(16, 24, 3, 3, 1, 1),
        case(8, 24, 12, 3, 1, 1),
        case(8, 16, 13, 3, 2, 1),
        case(12, 12, 2, 3, 1, 12),
        case(12, 12, 10, 3, 1, 12),
    ];
    for (i, t) in shapes.iter().enumerate() {
        for act in [
            "sigmoid",
            "silu",
            "tanh",
            "gelu",
            "relu",
            "relu6",
            "hard_swish",
            "none",
        ] {
            for residual in [false, true] {
                let t = Case { relu: false, ..*t };
                let mut src = text(&t).replace(
                    "strides = [",
                    &format!("activation = \"{act}\", strides = ["),
                );
                if !residual {
                    // Return the conv itself.
                    src = src.replace("graph.return %s", "graph.return %y");
                }
                let (types, m) = signature(&src, "main");
                let ins = random_inputs(&types, &[], 70 + i as u64);
                let want = interpret(&m, "main", &ins);
                let what = format!("case {i} {act} residual={residual}");
                for formats in [false, true] {
                    let opts = CompileOptions {
                        formats,
                        ..Default::default()
                    };
                    let om = om_bytes("act", &src, &opts);
                    for threads in [1, 2] {
                        assert_close(&run(&load(&om, threads), &ins), &want, &what);
                    }
                }
            }
        }
    }
}
