//! Fuzz the `.om` reader past its checksums: the input is the JSON of the
//! model def, task program and I/O description (separated by NUL bytes),
//! wrapped in a well-formed container with correct checksums and a small
//! weights blob. The reader's content validation must reject anything a
//! runtime could not execute safely, and never panic.
#![no_main]

use ge_om::format::{parse, to_bytes_unchecked};
use ge_om::model::OmModel;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(4, |&b| b == 0);
    let (Some(def), Some(prog), Some(io)) = (parts.next(), parts.next(), parts.next()) else {
        return;
    };
    let kernels = parts
        .next()
        .and_then(|k| std::str::from_utf8(k).ok())
        .unwrap_or("");
    let (Ok(def), Ok(program), Ok(io)) = (
        serde_json::from_slice(def),
        serde_json::from_slice(prog),
        serde_json::from_slice(io),
    ) else {
        return;
    };
    let m = OmModel {
        def,
        weights: vec![0; 256],
        program,
        kernels: kernels.to_string(),
        io,
    };
    let Ok(bytes) = to_bytes_unchecked(&m) else {
        return;
    };
    if let Ok(f) = parse(&bytes) {
        assert!(f.to_model().validate().is_ok());
    }
});
