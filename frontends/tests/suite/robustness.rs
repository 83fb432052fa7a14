//! Bad bytes never panic: every prefix and many byte-flipped variants of the
//! test models import to a model or to an error.

use ge_frontends::onnx::{import_bytes, ImportOptions};
use ge_frontends::tf::{self, TfOptions};
use std::path::Path;

fn testdata(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Deterministic variants: prefixes and single-byte mutations.
fn variants(data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![];
    let step = (data.len() / 64).max(1);
    for cut in (0..data.len()).step_by(step) {
        out.push(data[..cut].to_vec());
    }
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..300 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut v = data.to_vec();
        let i = (x as usize) % v.len().max(1);
        if let Some(b) = v.get_mut(i) {
            *b = (x >> 32) as u8;
        }
        out.push(v);
    }
    out
}

#[test]
fn onnx_import_never_panics() {
    let ctx = ge_dialects::context();
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/onnx");
    for model in [
        "small_cnn.onnx",
        "control_flow.onnx",
        "local_function.onnx",
        "dyn_batch.onnx",
        "scan/scan_axes.onnx",
        "scan/scan8_batch.onnx",
    ] {
        for v in variants(&testdata(&format!("onnx/{model}"))) {
            let _ = import_bytes(&ctx, &v, model, &base, &ImportOptions::default());
        }
    }
}

#[test]
fn tf_import_never_panics() {
    let ctx = ge_dialects::context();
    let opts = TfOptions::parse(None, None, "main").expect("options");
    for model in ["small_cnn.pb", "shapes.pb"] {
        for v in variants(&testdata(&format!("tf/{model}"))) {
            let _ = tf::import_bytes(&ctx, &v, model, &opts);
        }
    }
}

#[test]
fn good_models_import_and_verify() {
    let ctx = ge_dialects::context();
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/onnx");
    for model in [
        "small_cnn.onnx",
        "control_flow.onnx",
        "local_function.onnx",
        "dyn_batch.onnx",
        "external_data.onnx",
        "shape_folding.onnx",
        "scan/scan_axes.onnx",
        "scan/scan8_batch.onnx",
    ] {
        let m = import_bytes(
            &ctx,
            &testdata(&format!("onnx/{model}")),
            model,
            &base,
            &ImportOptions::default(),
        );
        assert!(m.is_ok(), "{model}: {:?}", m.err());
    }
}
