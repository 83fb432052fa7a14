//! What a loaded model reports about itself (ge-run --info prints it):
//! added for a mutant cargo-mutants found surviving in the crate's tests
//! (docs/testing.md, "Measuring test strength": `weights_bytes -> 0`; only
//! lit tests read it, through ge-run).

use ge_runtime::{LoadOptions, Model};

#[test]
fn weights_bytes_is_the_weights_partition() {
    let text = "graph.func @main(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = data.constant dense<0.5> : tensor<8x16xf32>
  %y = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  graph.return %y : tensor<4x16xf32>
}";
    let om = ge_compile::compile_text("w", text, &Default::default())
        .unwrap_or_else(|e| panic!("compile: {e}"));
    // The 8x16 f32 constant (512 bytes), possibly padded or blocked.
    assert!(om.weights.len() >= 512, "{}", om.weights.len());
    let bytes = ge_compile::to_bytes(&om).expect("bytes");
    let model =
        Model::from_bytes(&bytes, &LoadOptions::default()).unwrap_or_else(|e| panic!("load: {e}"));
    assert_eq!(model.weights_bytes(), om.weights.len());
}
