//! Outputs written into the caller's memory (`HostTensor::lend_mut` with
//! `Session::run_reusing`, what the Python package does with the numpy
//! arrays it returns, issue 20): a lent tensor of the run's output dtype and
//! shape receives the output in place and stays lent; one that does not fit
//! (another shape or dtype, a length that no longer matches a changed
//! public shape) is left unwritten and the output goes to memory of the
//! tensor's own; an ended loan lets go of the memory.

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_ir::DType;
use ge_runtime::{HostTensor, Model};

const MODEL: &str = r#"module attributes {ge.symbol_bounds = {B = 8 : i64}} {
  graph.func @main(%x: tensor<Bx4xf32> {ge.name = "x"}, %s: tensor<4xf32> {ge.name = "scale"})
      -> (tensor<Bx4xf32> {ge.name = "y"}, tensor<4xf32> {ge.name = "t"}) {
    %0 = graph.mul %x, %s : (tensor<Bx4xf32>, tensor<4xf32>) -> tensor<Bx4xf32>
    %1 = graph.relu %0 : (tensor<Bx4xf32>) -> tensor<Bx4xf32>
    %2 = graph.add %s, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.return %1, %2 : tensor<Bx4xf32>, tensor<4xf32>
  }
}"#;

fn model(threads: usize) -> Model {
    load(
        &om_bytes("lent_out", MODEL, &CompileOptions::default()),
        threads,
    )
}

fn inputs(b: usize, seed: usize) -> Vec<HostTensor> {
    let x: Vec<f32> = (0..b * 4)
        .map(|i| ((i * 7 + seed * 3) % 11) as f32 - 5.0)
        .collect();
    let s: Vec<f32> = (0..4).map(|i| (i + seed) as f32 * 0.5).collect();
    vec![
        HostTensor::from_f32(&[b, 4], &x).expect("x"),
        HostTensor::from_f32(&[4], &s).expect("s"),
    ]
}

/// 8-byte aligned memory of the caller's own, `n` f32 elements (filled
/// with a marker a run's output never holds).
fn words(n: usize) -> Vec<u64> {
    let marker = u64::from(f32::to_bits(-7.25)) * 0x1_0000_0001;
    vec![marker; n.div_ceil(2)]
}

fn f32s(w: &[u64], n: usize) -> Vec<f32> {
    w.iter()
        .flat_map(|x| x.to_ne_bytes())
        .collect::<Vec<u8>>()
        .chunks(4)
        .take(n)
        .map(|c| f32::from_ne_bytes(c.try_into().expect("4 bytes")))
        .collect()
}

#[test]
fn a_fitting_loan_is_written_in_place() {
    for threads in [1, 2] {
        let m = model(threads);
        let sess = m.session();
        let (mut yw, mut tw) = (words(8), words(4));
        let mut outs = vec![
            HostTensor::zeros(DType::U8, &[1]),
            HostTensor::zeros(DType::U8, &[1]),
        ];
        for seed in 0..3 {
            let ins = inputs(2, seed);
            // SAFETY: `yw` and `tw` outlive the loans (ended below) and
            // are not touched while they last.
            unsafe {
                outs[0]
                    .lend_mut(DType::F32, &[2, 4], yw.as_mut_ptr().cast(), 32)
                    .expect("y");
                outs[1]
                    .lend_mut(DType::F32, &[4], tw.as_mut_ptr().cast(), 16)
                    .expect("t");
            }
            sess.run_reusing(&ins, &mut outs).expect("run");
            assert!(outs.iter().all(HostTensor::is_lent_mut), "written in place");
            let want = sess.run(&ins).expect("run");
            assert_eq!(outs, want);
            for o in &mut outs {
                o.end_loan();
            }
            assert_eq!(f32s(&yw, 8), want[0].to_f32_vec());
            assert_eq!(f32s(&tw, 4), want[1].to_f32_vec());
            assert!(outs.iter().all(|o| !o.is_borrowed() && o.shape == [0]));
        }
    }
}

/// A loan (dtype, shape, bytes) and the public shape set after it.
type Case = (DType, &'static [usize], usize, Option<Vec<usize>>);

#[test]
fn a_loan_that_does_not_fit_is_left_unwritten() {
    let m = model(1);
    let sess = m.session();
    let ins = inputs(3, 1);
    let want = sess.run(&ins).expect("run");
    let untouched = words(12);
    // Another shape, another dtype, and a public shape changed after the
    // loan to the run's (its length no longer matches).
    let cases: [Case; 3] = [
        (DType::F32, &[2, 4], 32, None),
        (DType::I32, &[3, 4], 48, None),
        (DType::F32, &[2, 4], 32, Some(vec![3, 4])),
    ];
    for (dt, shape, len, changed) in cases {
        let mut w = words(12);
        let mut outs = vec![HostTensor::zeros(DType::F32, &[3, 4])];
        // SAFETY: `w` outlives the loan and is not touched while it lasts.
        unsafe { outs[0].lend_mut(dt, shape, w.as_mut_ptr().cast(), len) }.expect("lend");
        if let Some(s) = changed {
            outs[0].shape = s;
        }
        sess.run_reusing(&ins, &mut outs).expect("run");
        assert!(!outs[0].is_lent_mut(), "{dt} {shape:?}: not in place");
        assert_eq!(outs, want, "{dt} {shape:?}");
        assert_eq!(w, untouched, "{dt} {shape:?}: the caller's memory");
    }
}

#[test]
fn loans_are_checked() {
    let mut t = HostTensor::zeros(DType::F32, &[2]);
    let mut w = words(4);
    let p: *mut u8 = w.as_mut_ptr().cast();
    // SAFETY: each call is refused before it keeps the pointer.
    unsafe {
        assert!(t.lend_mut(DType::F32, &[2, 4], p, 16).is_err(), "length");
        assert!(t.lend_mut(DType::F32, &[0], p, 0).is_err(), "empty");
        assert!(
            t.lend_mut(DType::F32, &[2], p.add(4), 8).is_err(),
            "alignment"
        );
        assert!(t
            .lend_mut(DType::F32, &[2], std::ptr::null_mut(), 8)
            .is_err());
    }
    assert!(!t.is_borrowed() && t.shape == [2] && t.bytes().len() == 8);
    // A write through the tensor goes to the loan; a clone owns a copy.
    // SAFETY: `w` outlives the loan (ended below), untouched meanwhile.
    unsafe { t.lend_mut(DType::F32, &[2], p, 8) }.expect("lend");
    t.bytes_mut().copy_from_slice(&[0, 0, 128, 63, 0, 0, 0, 64]);
    let c = t.clone();
    t.end_loan();
    assert_eq!(f32s(&w, 2), [1.0, 2.0]);
    assert_eq!(c.to_f32_vec(), [1.0, 2.0]);
    assert!(!c.is_borrowed());
}

#[test]
fn threads_write_into_their_own_loans() {
    let m = model(2);
    let sess = m.session();
    std::thread::scope(|sc| {
        for k in 0..4 {
            let sess = sess.clone();
            sc.spawn(move || {
                let mut w = words(4 * 4);
                let mut outs: Vec<HostTensor> = vec![];
                for r in 0..20 {
                    let b = 1 + (k + r) % 4;
                    let ins = inputs(b, k * 31 + r);
                    if outs.len() == 2 {
                        // SAFETY: `w` outlives the loan (ended below).
                        unsafe {
                            outs[0].lend_mut(DType::F32, &[b, 4], w.as_mut_ptr().cast(), b * 16)
                        }
                        .expect("lend");
                    }
                    sess.run_reusing(&ins, &mut outs).expect("run");
                    let want = sess.run(&ins).expect("run");
                    assert_eq!(outs, want);
                    if outs[0].is_lent_mut() {
                        outs[0].end_loan();
                        assert_eq!(f32s(&w, b * 4), want[0].to_f32_vec());
                    }
                }
            });
        }
    });
}
