//! The `.om` of a compiled model written with its weights streamed from the
//! module (`stream_from_module` + `format::write_stream`, what ge-atc does)
//! is byte for byte what the writer that built the whole file in memory wrote
//! (`om/tests/common/reference_writer.rs`), on a zoo model with real weights
//! (resource blobs, batch norms folded into them) and on a model whose
//! weights are splats (written chunk by chunk); the reader accepts both.

use crate::common;
#[path = "../../../om/tests/common/reference_writer.rs"]
mod reference_writer;

use common::*;
use ge_lowering::om::{from_module, stream_from_module, OmOptions};
use reference_writer::reference_bytes;

/// A convolution with a splat filter and a batch norm of splat parameters
/// (what the ONNX light models hold), whose folded weights stay splats.
const SPLATS: &str = r#"
module {
  graph.func @main(%x: tensor<1x3x16x16xf32>) -> tensor<1x64x16x16xf32> {
    %w = data.constant dense<0.02> : tensor<64x3x3x3xf32>
    %g = data.constant dense<1.5> : tensor<64xf32>
    %b = data.constant dense<0.25> : tensor<64xf32>
    %m = data.constant dense<0.125> : tensor<64xf32>
    %v = data.constant dense<2.0> : tensor<64xf32>
    %c = graph.conv2d %x, %w {pads = [1, 1, 1, 1]} : (tensor<1x3x16x16xf32>, tensor<64x3x3x3xf32>) -> tensor<1x64x16x16xf32>
    %y = graph.batch_norm %c, %g, %b, %m, %v : (tensor<1x64x16x16xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x16x16xf32>
    graph.return %y : tensor<1x64x16x16xf32>
  }
}
"#;

/// Check `text`'s `.om`; the number of its weights that stream as splats.
fn check(name: &str, text: &str) -> usize {
    let mut m = parse(text);
    m.inline_resources();
    run(&mut m, "atc").unwrap_or_else(|e| panic!("{name}: {e}"));
    let opts = OmOptions {
        soc: "Ascend910B".into(),
        ..Default::default()
    };
    let stream = stream_from_module(m.body(), Some(&m), &opts).unwrap();
    let model = from_module(m.body(), Some(&m), &opts).unwrap();
    let want = reference_bytes(&model);
    assert_eq!(
        ge_om::format::stream_to_bytes(&stream).unwrap(),
        want,
        "{name}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.om"));
    let n = ge_om::format::write_stream(&path, &stream).unwrap();
    let file = std::fs::read(&path).unwrap();
    assert_eq!(n, file.len() as u64, "{name}");
    assert!(file == want, "{name}: the streamed file differs");
    let back = ge_om::parse(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(back.to_model(), model, "{name}");
    assert!(!model.weights.is_empty(), "{name} has weights");
    stream
        .weights
        .pieces()
        .iter()
        .filter(|(_, w)| matches!(w, ge_om::WeightBytes::Splat { .. }))
        .count()
}

#[test]
fn a_zoo_model_streams_to_the_in_memory_writers_bytes() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/models/resnet50.air"
    );
    check("resnet50", &std::fs::read_to_string(path).unwrap());
}

#[test]
fn splat_weights_stream_to_the_in_memory_writers_bytes() {
    let splats = check("splats", SPLATS);
    assert!(splats > 0, "no weight was written as a splat");
}
