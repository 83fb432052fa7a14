//! The kernels of graph.deform_conv2d (runtime/src/kernels/deform_conv.rs),
//! graph.conv_transpose3d (conv_transpose.rs) and graph.roi_align
//! (roi_align.rs) against the reference interpreter: each case compiles a
//! one-op function (with and without Ascend storage formats), loads it with
//! every kernel native (`common::load` fails when one runs on the
//! interpreter), runs it at 1 and 2 threads and compares. Offsets move taps
//! by up to two pixels (in and out of the image); regions reach past the
//! image's borders.

use crate::common;
use common::*;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

/// `@main` of one op `name` with attributes `attrs` over `args` (name,
/// type), with result type `y`.
fn func(args: &[(&str, String)], name: &str, attrs: &str, y: &str) -> String {
    let params: Vec<String> = args.iter().map(|(n, t)| format!("%{n}: {t}")).collect();
    let names: Vec<String> = args.iter().map(|(n, _)| format!("%{n}")).collect();
    let types: Vec<&str> = args.iter().map(|(_, t)| t.as_str()).collect();
    format!(
        "graph.func @main({}) -> {y} {{\n  %y = {name} {} {attrs} : ({}) -> {y}\n  graph.return %y : {y}\n}}\n",
        params.join(", "),
        names.join(", "),
        types.join(", "),
    )
}

#[test]
fn deform_conv2d_matches_the_interpreter() {
    // (N, C, H, W, M, kH, kW, group, offset_group, attrs, OH, OW)
    let cases = [
        (1, 1, 3, 3, 1, 2, 2, 1, 1, "{pads = [1, 1, 1, 1]}", 4, 4),
        (2, 4, 5, 6, 6, 3, 3, 2, 2, "{strides = [2, 1], pads = [1, 0, 1, 2], dilations = [1, 2], group = 2 : i64, offset_group = 2 : i64}", 3, 4),
        (1, 6, 7, 7, 4, 3, 2, 1, 3, "{offset_group = 3 : i64}", 5, 6),
        (1, 8, 12, 12, 16, 3, 3, 1, 1, "{pads = [1, 1, 1, 1]}", 12, 12),
    ];
    for (n, c, h, w, m, kh, kw, g, og, attrs, oh, ow) in cases {
        for (bias, mask) in [(false, false), (true, false), (true, true)] {
            let t = |s: String| format!("tensor<{s}xf32>");
            let mut args = vec![
                ("x", t(format!("{n}x{c}x{h}x{w}"))),
                ("f", t(format!("{m}x{}x{kh}x{kw}", c / g))),
                ("o", t(format!("{n}x{}x{oh}x{ow}", og * 2 * kh * kw))),
            ];
            if bias {
                args.push(("b", t(format!("{m}"))));
            }
            if mask {
                args.push(("k", t(format!("{n}x{}x{oh}x{ow}", og * kh * kw))));
            }
            let y = t(format!("{n}x{m}x{oh}x{ow}"));
            let text = func(&args, "graph.deform_conv2d", attrs, &y);
            let (types, module) = signature(&text, "main");
            let mut ins = random_inputs(&types, &[], 17);
            // Offsets of up to two pixels either way.
            ins[2] = Tensor::from_f64(
                ins[2].shape.clone(),
                DType::F32,
                ins[2].to_f64().iter().map(|v| 2.0 * v).collect(),
            );
            native_matches_interpreter(
                &text,
                &module,
                &ins,
                &format!("deform_conv2d {args:?} {attrs}"),
            );
        }
    }
}

#[test]
fn conv_transpose3d_matches_the_interpreter() {
    // (N, C, spatial, M/group, kernel, group, attrs, output spatial)
    let cases = [
        (1, 1, "3x4x5", 2, "3x3x3", 1, "{}", "5x6x7"),
        (
            2,
            4,
            "2x3x3",
            3,
            "2x2x3",
            2,
            "{strides = [2, 1, 2], pads = [0, 1, 1, 1, 0, 0], dilations = [1, 2, 1], group = 2 : i64, output_padding = [1, 0, 1]}",
            "4x4x7",
        ),
        (1, 8, "6x6x6", 8, "3x3x3", 1, "{strides = [2, 2, 2]}", "13x13x13"),
    ];
    for (n, c, sp, mg, k, g, attrs, osp) in cases {
        for bias in [false, true] {
            let t = |s: String| format!("tensor<{s}xf32>");
            let mut args = vec![
                ("x", t(format!("{n}x{c}x{sp}"))),
                ("f", t(format!("{c}x{mg}x{k}"))),
            ];
            if bias {
                args.push(("b", t(format!("{}", mg * g))));
            }
            let y = t(format!("{n}x{}x{osp}", mg * g));
            let text = func(&args, "graph.conv_transpose3d", attrs, &y);
            let (types, module) = signature(&text, "main");
            let ins = random_inputs(&types, &[], 18);
            native_matches_interpreter(
                &text,
                &module,
                &ins,
                &format!("conv_transpose3d {args:?} {attrs}"),
            );
        }
    }
}

#[test]
fn roi_align_matches_the_interpreter() {
    let rois = [
        [0.0, 0.0, 9.0, 9.0],
        [0.5, 1.5, 4.0, 7.25],
        [-3.0, -2.0, 12.0, 3.0],
        [6.0, 6.0, 5.0, 5.0],
        [2.2, 3.3, 2.4, 3.5],
    ];
    let k = rois.len();
    let attrs = [
        "{}",
        "{output_height = 3 : i64, output_width = 2 : i64, sampling_ratio = 2 : i64, spatial_scale = 0.5 : f64}",
        "{coordinate_transformation_mode = \"output_half_pixel\", mode = \"max\", output_height = 4 : i64, output_width = 4 : i64}",
        "{mode = \"max\", output_height = 2 : i64, output_width = 3 : i64, spatial_scale = 1.5 : f64}",
    ];
    let outs = [(1, 1), (3, 2), (4, 4), (2, 3)];
    for (a, (oh, ow)) in attrs.iter().zip(outs) {
        for dt in ["f32", "f64"] {
            let args = vec![
                ("x", format!("tensor<2x3x10x10x{dt}>")),
                ("r", format!("tensor<{k}x4x{dt}>")),
                ("i", format!("tensor<{k}xi64>")),
            ];
            let y = format!("tensor<{k}x3x{oh}x{ow}x{dt}>");
            let text = func(&args, "graph.roi_align", a, &y);
            let (types, module) = signature(&text, "main");
            let mut ins = random_inputs(&types, &[], 19);
            let dtype = if dt == "f32" { DType::F32 } else { DType::F64 };
            ins[1] = Tensor::from_f64(vec![k, 4], dtype, rois.concat());
            ins[2] = Tensor::from_i64(vec![k], DType::I64, vec![0, 1, 1, 0, 1]);
            native_matches_interpreter(&text, &module, &ins, &format!("roi_align {dt} {a}"));
        }
    }
}
