//! The NCHW <-> NC1HWC0 conversion kernel (tiled over rows of the blocked
//! side) against the interpreter: channels that do not fill the last C0
//! block (zero pad channels), planes longer than a tile, f32 (C0 = 8) and f16
//! (C0 = 16), both directions.

use crate::common;
use common::*;
use ge_compile::CompileOptions;

fn blocked(n: usize, c: usize, h: usize, w: usize, c0: usize, ty: &str) -> String {
    format!(
        "tensor<{n}x{}x{h}x{w}x{c0}x{ty}, #ge.format<NC1HWC0, origin = NCHW, origin_shape = [{n}, {c}, {h}, {w}]>>",
        c.div_ceil(c0)
    )
}

#[test]
fn nchw_and_nc1hwc0_convert_both_ways_like_the_interpreter() {
    // (n, c, h, w, element type, C0): 17 x 19 = 323 rows, more than one tile.
    let cases = [
        (2, 5, 17, 19, "f32", 8),
        (1, 20, 17, 19, "f16", 16),
        (1, 16, 3, 3, "f32", 8),
    ];
    for (n, c, h, w, ty, c0) in cases {
        let plain = format!("tensor<{n}x{c}x{h}x{w}x{ty}>");
        let b = blocked(n, c, h, w, c0, ty);
        let text = format!(
            "graph.func @to5(%x: {plain}) -> {b} {{\n  \
             %0 = data.transdata %x {{src_format = \"NCHW\", dst_format = \"NC1HWC0\"}} : ({plain}) -> {b}\n  \
             graph.return %0 : {b}\n}}\n\
             graph.func @from5(%x: {b}) -> {plain} {{\n  \
             %0 = data.transdata %x {{src_format = \"NC1HWC0\", dst_format = \"NCHW\"}} : ({b}) -> {plain}\n  \
             graph.return %0 : {plain}\n}}\n"
        );
        for entry in ["to5", "from5"] {
            let opts = CompileOptions {
                entry: Some(entry.to_string()),
                ..Default::default()
            };
            let om = om_bytes("transdata", &text, &opts);
            let (types, m) = signature(&text, entry);
            let model = load(&om, 1);
            let ins = random_inputs(&types, &[], 5);
            let want = interpret(&m, entry, &ins);
            let got = run(&model, &ins);
            assert_close(&got, &want, &format!("{entry} {n}x{c}x{h}x{w}x{ty}"));
        }
    }
}
