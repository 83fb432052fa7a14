//! Streams taking turns on the calling thread (`runtime/src/serial.rs`, the
//! default) against one worker thread per stream: the same outputs, bit for
//! bit, every launch run once, every wait after the launches its record
//! follows — checked on the zoo models whose branches the compiler puts on
//! several streams.

use crate::common;
use common::*;
use ge_compile::{compile_text, CompileOptions};
use ge_om::model::Task;
use ge_runtime::{HostTensor, LoadOptions, Model, RunOptions, StreamExecution};

const BRANCHY: &[&str] = &["inception_v3", "squeezenet", "nasnet_a", "bert_base"];

fn load_as(om: &[u8], threads: usize, mode: StreamExecution) -> Model {
    let m = Model::from_bytes(
        om,
        &LoadOptions {
            threads,
            stream_execution: mode,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("load: {e}"));
    assert_native(&m, &[]);
    m
}

fn host(ts: &[ge_ir::tensor::Tensor]) -> Vec<HostTensor> {
    ts.iter().map(HostTensor::from_tensor).collect()
}

#[test]
fn serial_and_worker_streams_give_identical_outputs() {
    for name in BRANCHY {
        let text = read(&format!("testdata/models/{name}.air"));
        let om = om_bytes(name, &text, &CompileOptions::default());
        let (types, m) = signature(&text, "main");
        let ins = random_inputs(&types, &[("B", 2)], 7);
        let want = interpret(&m, "main", &ins);
        for threads in [1, 2] {
            let serial = load_as(&om, threads, StreamExecution::Serial);
            let workers = load_as(&om, threads, StreamExecution::Workers);
            assert!(serial.num_streams() > 1, "{name}: one stream");
            assert!(serial.runs_streams_serially(), "{name}");
            assert!(!workers.runs_streams_serially(), "{name}");
            let a = serial.run(&host(&ins)).expect("serial run");
            let b = workers.run(&host(&ins)).expect("worker run");
            assert!(
                a == b,
                "{name} threads={threads}: serial and worker outputs differ"
            );
            let got: Vec<_> = a.iter().map(|t| t.to_tensor().expect("tensor")).collect();
            assert_close(&got, &want, &format!("{name} threads={threads} serial"));
        }
    }
}

/// Per stream, its tasks in program order; per wait task, its record (the
/// latest record of its event before it in program order).
fn layout(tasks: &[Task], streams: usize) -> (Vec<Vec<usize>>, Vec<(usize, usize)>) {
    let mut lists = vec![vec![]; streams];
    let mut last_record = std::collections::HashMap::new();
    let mut waits = vec![];
    for (i, t) in tasks.iter().enumerate() {
        let s = match t {
            Task::Launch { stream, .. } | Task::Memcpy { stream, .. } => *stream,
            Task::Record { event, stream } => {
                last_record.insert(*event, i);
                *stream
            }
            Task::Wait { event, stream } => {
                waits.push((i, last_record[event]));
                *stream
            }
            _ => continue,
        };
        lists[s as usize].push(i);
    }
    (lists, waits)
}

#[test]
fn the_serial_order_runs_each_launch_once_and_keeps_every_event() {
    for name in BRANCHY {
        let text = read(&format!("testdata/models/{name}.air"));
        let om = compile_text(name, &text, &CompileOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let bytes = ge_compile::to_bytes(&om).expect("bytes");
        let (types, _) = signature(&text, "main");
        let ins = host(&random_inputs(&types, &[("B", 1)], 3));
        let traced = |mode| {
            let model = load_as(&bytes, 1, mode);
            let trace = model
                .session()
                .run_with(&ins, &RunOptions { trace: true })
                .expect("run")
                .trace
                .expect("a trace");
            (model.num_streams(), trace)
        };
        let (streams, trace) = traced(StreamExecution::Serial);
        let (_, by_workers) = traced(StreamExecution::Workers);
        let (lists, waits) = layout(&om.program.tasks, streams);
        // The tasks the workers run (records and waits only traced), each once.
        let mut ran: Vec<usize> = trace.events.iter().map(|e| e.task).collect();
        ran.sort();
        let mut want: Vec<usize> = by_workers.events.iter().map(|e| e.task).collect();
        want.sort();
        assert!(!ran.is_empty(), "{name}: nothing ran");
        assert_eq!(
            ran, want,
            "{name}: the tasks run serially and by the workers"
        );
        let at = |task: usize| trace.events.iter().position(|e| e.task == task);
        for (s, list) in lists.iter().enumerate() {
            for &t in list {
                if let Some(k) = at(t) {
                    assert_eq!(trace.events[k].stream, s, "{name}: task {t}'s stream");
                }
            }
        }
        // What a stream ran before a record comes before what the waiting
        // stream runs after the wait.
        let stream_of = |t: usize| lists.iter().position(|l| l.contains(&t)).expect("a stream");
        for &(w, rec) in &waits {
            let (sw, sr) = (stream_of(w), stream_of(rec));
            let before = lists[sr]
                .iter()
                .take_while(|&&t| t != rec)
                .filter_map(|&t| at(t))
                .max();
            let after = lists[sw]
                .iter()
                .skip_while(|&&t| t != w)
                .filter_map(|&t| at(t))
                .min();
            if let (Some(b), Some(a)) = (before, after) {
                assert!(
                    b < a,
                    "{name}: wait {w} on stream {sw} ran before record {rec}'s work on stream {sr}"
                );
            }
        }
    }
}
