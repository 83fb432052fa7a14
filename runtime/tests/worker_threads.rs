//! A model's stream workers end with it: dropping a loaded model joins the
//! threads it started (LeakSanitizer under the om_runtime fuzzer saw a worker's
//! channel context outlive its model — the workers were detached and ended some
//! time after the drop). Its own test binary: no other test's workers run here.

mod common;
use common::TWO_STREAMS;
use ge_runtime::{HostTensor, LoadOptions, Model, StreamExecution};

/// Threads of this process whose name starts with `ge-stream`.
fn stream_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                .filter(|name| name.starts_with("ge-stream"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn dropping_a_model_joins_its_stream_workers() {
    let om = ge_compile::compile_text("two_streams", TWO_STREAMS, &Default::default())
        .unwrap_or_else(|e| panic!("compile: {e}"));
    assert!(om.def.num_streams >= 2, "the test needs a second stream");
    let bytes = ge_om::format::to_bytes_unchecked(&om).expect("bytes");
    for _ in 0..20 {
        // Workers: by default the streams would take turns on this thread.
        let opts = LoadOptions {
            stream_execution: StreamExecution::Workers,
            ..Default::default()
        };
        let model = Model::from_bytes(&bytes, &opts).expect("load");
        let x = HostTensor::from_f32(&[2, 8], &[1.0; 16]).expect("input");
        model.run(&[x]).expect("run");
        assert!(
            stream_threads() >= 1,
            "a run starts the workers of stream 1.."
        );
        drop(model);
        // Not "eventually": joined by the time the drop returns.
        assert_eq!(stream_threads(), 0, "workers still alive after the drop");
    }
}
