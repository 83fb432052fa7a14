//! Fuzz the ONNX importer through compile and run: bytes are decoded as an
//! ONNX model, imported, compiled with the atc pipeline and run on the
//! runtime, under a 64 MiB budget, a 10,000-step budget and a 2 s deadline.
//! External data is resolved in a directory that does not exist. Every input
//! must end in `Ok` or an error, never a panic, abort or hang.
#![no_main]

#[path = "../../runtime/tests/suite/om_mutator/mod.rs"]
mod om_mutator;

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn ctx() -> &'static ge_ir::Context {
    static CTX: OnceLock<ge_ir::Context> = OnceLock::new();
    CTX.get_or_init(ge_compile::context)
}

fuzz_target!(|data: &[u8]| {
    ge_ir::budget::set_max_memory(64 << 20);
    let base = std::path::Path::new("/nonexistent/ge-fuzz");
    let opts = ge_frontends::onnx::ImportOptions::default();
    let Ok(mut m) = ge_frontends::onnx::import_bytes(ctx(), data, "fuzz.onnx", base, &opts) else {
        return;
    };
    let _ = ge_compile::compile_module(ctx(), &mut m, &Default::default())
        .and_then(|om| ge_om::to_bytes(&om))
        .and_then(|bytes| {
            ge_runtime::Model::from_bytes(&bytes, &om_mutator::limits()).map_err(|e| e.to_string())
        })
        .and_then(|model| om_mutator::run_model(&model, 2));
});
