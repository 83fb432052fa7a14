//! Which readers let a blocked activation stay plain (runtime/src/layouts.rs
//! `unblocked_arg`): only a reader that converts the blocks to their own
//! plain layout (NC1HWC0 to NCHW, FRACTAL_NZ to ND). The compiler emits no
//! other reader conversion, so the condition's format test was never
//! exercised: its mutants (`layouts.rs:99:43` guard → `true`, `99:84`
//! `&& → ||`) survived the crate's tests (docs/testing.md, "Runtime, third
//! pass"). This test hand-writes a reader converting NC1HWC0 to NHWC.

use crate::common;
use common::*;
use ge_compile::{compile_text, CompileOptions};
use ge_om::model::{ArenaRole, Task};
use ge_runtime::{LoadOptions, Model};

const NC1HWC0: &str =
    "tensor<1x2x12x12x8xf32, #ge.format<NC1HWC0, origin = NCHW, origin_shape = [1, 16, 12, 12]>>";

/// conv_chain's output conversion of %b (the depthwise convolution's
/// result), written as NC1HWC0 → NHWC and a transpose back to NCHW: the same
/// values, but a reader that does not convert the blocks to NCHW.
fn nhwc_reader() -> String {
    format!(
        "(%arg0: {NC1HWC0}) -> tensor<1x16x12x12xf32> {{
    %0 = data.transdata %arg0 {{dst_format = \"NHWC\", src_format = \"NC1HWC0\"}} : ({NC1HWC0}) -> tensor<1x12x12x16xf32>
    %1 = data.transpose %0 {{perm = [0, 3, 1, 2]}} : (tensor<1x12x12x16xf32>) -> tensor<1x16x12x12xf32>
    graph.return %1 : tensor<1x16x12x12xf32>
  "
    )
}

/// With the NHWC reader, %b stays NC1HWC0: three activations plain, not
/// conv_chain's four, and the outputs still equal the interpreter's. (With
/// either mutant, tried once: one more plain, and the reader takes %b's NCHW
/// bytes as NHWC, so output #1 differs.)
#[test]
fn a_reader_converting_blocks_to_another_layout_keeps_them_blocked() {
    let text = read("lit-tests/runtime/Inputs/conv_chain.air");
    let mut om =
        compile_text("chain", &text, &CompileOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    // The kernel converting %b for the model output (the launch writing
    // the 1x16x12x12 tensor into an output arena).
    let outputs: Vec<u32> = (0..om.def.arenas.len() as u32)
        .filter(|&a| om.def.arenas[a as usize].role == ArenaRole::Output)
        .collect();
    let kernel = om
        .program
        .tasks
        .iter()
        .find_map(|t| match t {
            Task::Launch { kernel, outs, .. }
                if outputs.contains(&outs[0].arena) && outs[0].ty == "tensor<1x16x12x12xf32>" =>
            {
                Some(*kernel as usize)
            }
            _ => None,
        })
        .expect("%b's output conversion");
    let name = om.program.kernels[kernel].name.clone();
    let f = om.kernels.find(&format!("@{name}(")).expect("the kernel");
    let end = f + om.kernels[f..].find("} loc(").expect("its end");
    assert!(om.kernels[f..end].contains("dst_format = \"NCHW\", src_format = \"NC1HWC0\""));
    om.kernels
        .replace_range(f..end, &format!("@{name}{}", nhwc_reader()));
    let bytes = ge_om::format::to_bytes_unchecked(&om).expect("bytes");

    let (types, m) = signature(&text, "main");
    let ins = random_inputs(&types, &[], 4);
    let want = interpret(&m, "main", &ins);
    for (plain_layouts, plain) in [(true, 3), (false, 0)] {
        let opts = LoadOptions {
            threads: 1,
            plain_layouts,
            ..Default::default()
        };
        let model = Model::from_bytes(&bytes, &opts).unwrap_or_else(|e| panic!("load: {e}"));
        assert_native(&model, &[]);
        let got = run(&model, &ins);
        assert_close(&got, &want, &format!("plain_layouts = {plain_layouts}"));
        assert_eq!(
            model.plain_buffers(),
            plain,
            "plain_layouts = {plain_layouts}"
        );
    }
}
