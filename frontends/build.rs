//! Compile the .proto subsets in `proto/` with protox (a pure-Rust protobuf
//! compiler, so no system `protoc`) and generate prost messages.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/onnx.proto",
        "proto/tensorflow/graph.proto",
        "proto/tensorflow/node_def.proto",
        "proto/tensorflow/attr_value.proto",
        "proto/tensorflow/tensor.proto",
        "proto/tensorflow/tensor_shape.proto",
        "proto/tensorflow/types.proto",
        "proto/tensorflow/function.proto",
        "proto/tensorflow/saved_model.proto",
        "proto/tensorflow/tensor_bundle.proto",
    ];
    for f in &files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["proto"])?;
    prost_build::Config::new().compile_fds(fds)?;
    Ok(())
}
