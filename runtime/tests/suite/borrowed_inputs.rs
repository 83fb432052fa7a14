//! Inputs lent by the caller (`HostTensor::borrowed`, what the Python
//! package and the C API do with the caller's arrays): a model whose input
//! arenas are bound zero-copy reads them in place, and a run gives the same
//! outputs as with owned copies. A tensor whose shape no longer matches its
//! bytes is refused before any memory is bound.

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_ir::DType;
use ge_runtime::HostTensor;

const MODEL: &str = r#"module attributes {ge.symbol_bounds = {B = 8 : i64}} {
  graph.func @main(%x: tensor<Bx4xf32> {ge.name = "x"}, %s: tensor<4xf32> {ge.name = "scale"})
      -> (tensor<Bx4xf32> {ge.name = "y"}) {
    %0 = graph.mul %x, %s : (tensor<Bx4xf32>, tensor<4xf32>) -> tensor<Bx4xf32>
    %1 = graph.relu %0 : (tensor<Bx4xf32>) -> tensor<Bx4xf32>
    graph.return %1 : tensor<Bx4xf32>
  }
}"#;

fn bytes_of(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn lent_inputs_are_read_in_place_with_the_same_result() {
    let model = load(&om_bytes("borrowed", MODEL, &CompileOptions::default()), 2);
    assert_eq!(model.zero_copy_inputs(), [true, true]);
    // f32 values in u64 words: 8-byte aligned memory of the caller's own.
    let x = bytes_of(&[1.0, -2.0, 3.0, -4.0, 0.5, 0.5, -0.5, 0.5]);
    let s = bytes_of(&[1.0, 2.0, 3.0, 4.0]);
    let mut xw = [0u64; 4];
    let mut sw = [0u64; 2];
    for (w, c) in xw.iter_mut().zip(x.chunks(8)) {
        *w = u64::from_ne_bytes(c.try_into().expect("8 bytes"));
    }
    for (w, c) in sw.iter_mut().zip(s.chunks(8)) {
        *w = u64::from_ne_bytes(c.try_into().expect("8 bytes"));
    }
    // SAFETY: `xw` and `sw` outlive the tensors and are not written meanwhile.
    let lent = unsafe {
        [
            HostTensor::borrowed(DType::F32, &[2, 4], xw.as_ptr().cast(), 32).expect("x"),
            HostTensor::borrowed(DType::F32, &[4], sw.as_ptr().cast(), 16).expect("s"),
        ]
    };
    let owned = [
        HostTensor::from_bytes(DType::F32, &[2, 4], &x).expect("x"),
        HostTensor::from_bytes(DType::F32, &[4], &s).expect("s"),
    ];
    let a = model.run(&lent).expect("lent run");
    let b = model.run(&owned).expect("owned run");
    assert_eq!(a, b);
    assert_eq!(a[0].to_f32_vec(), [1.0, 0.0, 9.0, 0.0, 0.5, 1.0, 0.0, 2.0]);
    assert!(
        lent.iter().all(HostTensor::is_borrowed),
        "the run wrote no input"
    );
}

#[test]
fn an_input_whose_shape_outgrew_its_bytes_is_refused() {
    let model = load(&om_bytes("borrowed", MODEL, &CompileOptions::default()), 1);
    let mut x = HostTensor::zeros(DType::F32, &[2, 4]);
    x.shape = vec![8, 4]; // within the bound: only the byte check catches it
    let s = HostTensor::zeros(DType::F32, &[4]);
    let e = model.run(&[x, s]).expect_err("shape and bytes disagree");
    assert!(
        e.to_string()
            .contains("input #0 'x': 32 bytes do not hold a [8, 4] f32"),
        "{e}"
    );
}
