//! `Session::run_reusing` (issue 20): a run writes its outputs into the
//! tensors an earlier run left, reusing their memory. The outputs are each
//! run's own — at the actual count of a size symbol, known only after the
//! run, as `Session::run` gives them — whether the count grows or shrinks
//! between runs, and with one session run from several threads at once
//! (each run on its own execution context, whose reused scratch — events,
//! kernel slots, worker mailboxes — must not leak between runs).

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_runtime::{HostTensor, Session};

/// `x` with `on` of its 12 elements positive (from `seed`'s position on).
fn input(on: usize, seed: usize) -> HostTensor {
    let v: Vec<f32> = (0..12)
        .map(|i| match (i + 12 - seed % 12) % 12 < on {
            true => 0.5 + i as f32,
            false => -1.0 - i as f32,
        })
        .collect();
    HostTensor::from_f32(&[3, 4], &v).expect("x")
}

/// The indices of the positive elements of `x`, as data.nonzero gives them.
fn nonzero(x: &HostTensor) -> Vec<i64> {
    let v = x.to_f32_vec();
    let on: Vec<usize> = (0..12).filter(|&i| v[i] > 0.0).collect();
    on.iter()
        .map(|&i| (i / 4) as i64)
        .chain(on.iter().map(|&i| (i % 4) as i64))
        .collect()
}

fn i64s(t: &HostTensor) -> Vec<i64> {
    t.bytes()
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

/// Runs `sess` reusing `outs` at counts growing and shrinking; each run's
/// outputs equal a fresh `Session::run`'s, at the actual count.
fn counts_up_and_down(sess: &Session, outs: &mut Vec<HostTensor>, seed: usize) {
    for (r, on) in [5, 12, 0, 7, 1, 12, 3, 3].into_iter().enumerate() {
        let x = [input(on, seed + r)];
        sess.run_reusing(&x, outs)
            .unwrap_or_else(|e| panic!("count {on}: {e}"));
        assert_eq!(outs.len(), 3);
        assert_eq!(outs[0].shape, [2, on], "count {on}");
        assert_eq!(outs[1].shape, [on, 2], "count {on}");
        assert_eq!(i64s(&outs[0]), nonzero(&x[0]), "count {on}");
        assert_eq!(*outs, sess.run(&x).expect("run"), "count {on}");
    }
}

#[test]
fn reused_outputs_have_each_runs_shape_and_values() {
    let bytes = om_bytes("nonzero", NONZERO_MODEL, &CompileOptions::default());
    for threads in [1, 2] {
        let model = load(&bytes, threads);
        let sess = model.session();
        // From nothing, from too many tensors, from tensors of other types.
        counts_up_and_down(&sess, &mut vec![], 0);
        let mut extra = vec![HostTensor::zeros(ge_ir::DType::U8, &[3]); 5];
        counts_up_and_down(&sess, &mut extra, 1);
    }
}

#[test]
fn threads_sharing_a_session_reuse_their_own_outputs() {
    let model = load(
        &om_bytes("nonzero", NONZERO_MODEL, &CompileOptions::default()),
        2,
    );
    let sess = model.session();
    std::thread::scope(|sc| {
        for t in 0..4 {
            let sess = sess.clone();
            sc.spawn(move || {
                let mut outs = vec![];
                for k in 0..10 {
                    counts_up_and_down(&sess, &mut outs, t * 3 + k);
                }
            });
        }
    });
}
