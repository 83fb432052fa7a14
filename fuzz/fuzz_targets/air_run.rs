//! Fuzz `.air` through the whole tool chain: parse, verify, compile with the
//! atc pipeline, write the `.om`, load it in the runtime and run it (the
//! path of `ge-run model.air`). Under a 64 MiB budget, a 10,000-step budget
//! and a 2 s deadline, every input must end in `Ok` or a one-line error.
#![no_main]

#[path = "../../runtime/tests/suite/om_mutator/mod.rs"]
mod om_mutator;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    ge_ir::budget::set_max_memory(64 << 20);
    // An error is a fine answer; only panics, aborts, hangs and memory
    // errors are findings.
    let _ = ge_compile::compile_text("fuzz.air", text, &Default::default())
        .and_then(|om| ge_om::to_bytes(&om))
        .and_then(|bytes| {
            ge_runtime::Model::from_bytes(&bytes, &om_mutator::limits()).map_err(|e| e.to_string())
        })
        .and_then(|model| om_mutator::run_model(&model, 2));
});
