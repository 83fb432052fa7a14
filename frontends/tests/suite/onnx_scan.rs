//! ONNX Scan imports to a `graph.while` the reference interpreter runs with
//! Scan's semantics: scan inputs read (and scan outputs written) along their
//! axes and in their directions. Models: tools/frontends/gen_scan_models.py.

use ge_frontends::onnx::{import_bytes, ImportOptions};
use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use ge_ir::DType;
use std::path::Path;

fn import(model: &str) -> ge_ir::Module {
    let ctx = ge_dialects::context();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/onnx/scan");
    let bytes = std::fs::read(dir.join(model)).expect("test model");
    import_bytes(&ctx, &bytes, model, &dir, &ImportOptions::default()).expect("imports")
}

fn f32s(shape: &[usize], v: &[f64]) -> Tensor {
    Tensor::from_f64(shape.to_vec(), DType::F32, v.to_vec())
}

/// scan_axes.onnx: s += a_t * b_t with a read along axis 0 forwards and b
/// along its last axis from the end; y_t = s stacked along axis 0, z_t = 2 b_t
/// stacked along the last axis from the end — so z is 2 b in b's own order.
#[test]
fn scan_axes_and_directions_match_a_direct_computation() {
    let m = import("scan_axes.onnx");
    let s0 = [0.5, -1.0];
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 3x2
    let b = [0.1, 0.2, 0.3, -1.0, -2.0, -3.0]; // 2x3
    let args = vec![f32s(&[2], &s0), f32s(&[3, 2], &a), f32s(&[2, 3], &b)];
    let out = Interpreter::new(&m)
        .run_function("main", args)
        .expect("runs");
    let mut s = s0;
    let mut y = vec![];
    for t in 0..3 {
        for j in 0..2 {
            s[j] += a[t * 2 + j] * b[j * 3 + (2 - t)];
        }
        y.extend_from_slice(&s);
    }
    let close = |got: &Tensor, want: &[f64]| {
        let g = got.to_f64();
        assert_eq!(g.len(), want.len());
        for (x, w) in g.iter().zip(want) {
            assert!((x - w).abs() < 1e-5, "{g:?} vs {want:?}");
        }
    };
    close(&out[0], &s);
    close(&out[1], &y);
    let z: Vec<f64> = b.iter().map(|v| 2.0 * v).collect();
    close(&out[2], &z);
    assert_eq!(out[2].shape, vec![2, 3]);
}

/// scan8_batch.onnx: opset 8, each batch element scanned from the end with
/// s += x_t * w (w from the enclosing graph).
#[test]
fn opset8_scans_each_batch_element() {
    let m = import("scan8_batch.onnx");
    let s0 = [1.0, 2.0, 3.0, 4.0]; // 2x2
    let x: Vec<f64> = (0..16).map(f64::from).collect(); // 2x4x2
    let w = [0.5, -1.0];
    let args = vec![f32s(&[2, 2], &s0), f32s(&[2, 4, 2], &x), f32s(&[2], &w)];
    let out = Interpreter::new(&m)
        .run_function("main", args)
        .expect("runs");
    let (mut s_want, mut y_want) = (vec![], vec![]);
    for bi in 0..2 {
        let mut s = [s0[bi * 2], s0[bi * 2 + 1]];
        for t in 0..4 {
            let src = 3 - t;
            for j in 0..2 {
                s[j] += x[(bi * 4 + src) * 2 + j] * w[j];
            }
            y_want.extend_from_slice(&s);
        }
        s_want.extend_from_slice(&s);
    }
    assert_eq!(out[0].to_f64(), s_want);
    assert_eq!(out[1].to_f64(), y_want);
    assert_eq!(out[1].shape, vec![2, 4, 2]);
}
