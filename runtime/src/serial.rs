//! Streams run one after another on the caller's thread.
//!
//! A model's streams are the NPU's hardware queues: the compiler puts every
//! independent chain of tasks on a stream of its own (`assign-streams`) and
//! syncs them with events. On the CPU each stream beyond the first could be a
//! worker thread, but every hand-off between them (a mailbox, an event, a
//! compute slot passed between threads) costs microseconds of scheduling,
//! and what they would gain — two kernels at once — the compute pool already
//! gives by splitting each kernel over the run's threads. Measured (idle
//! 2-core machine, `ge-run --streams serial|workers`, p50): a tiny BERT (105
//! tasks on 10 streams) 0.022 ms serial vs 0.17 ms on workers at 1 thread,
//! 0.023 vs 0.23 ms at 2; Inception v1 at 2 threads 21.4 vs 25.5 ms,
//! Inception v3 9.4 vs 11.1 ms, SqueezeNet 4.2 vs 4.8 ms; DenseNet-121 and
//! ShuffleNet equal within noise; nowhere were workers faster
//! (docs/benchmarks.md). So by default the loader turns the streams into
//! one task order that keeps every event's promise (a wait comes after the
//! record it waits for) and a run walks that order on the calling thread.
//!
//! The order is found once, at load, by running the streams' task lists
//! symbolically: each stream advances until a wait whose record has not run
//! yet, then the next stream takes over. Programs with control flow (labels,
//! gotos, switches: the number of times a task runs is only known at run
//! time) or whose events cannot all be met (a deadlock, which the stream
//! workers report when the run reaches it) keep the workers.

use crate::model::TaskRt;
use ge_om::model::Task;

/// How a model's streams run ([`crate::LoadOptions::stream_execution`];
/// ge-run's `--streams`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StreamExecution {
    /// In turns on the calling thread where the program allows it (no
    /// control flow, every event met), on workers otherwise.
    #[default]
    Serial,
    /// One worker thread per stream beyond the first.
    Workers,
}

impl std::str::FromStr for StreamExecution {
    type Err = String;
    fn from_str(s: &str) -> Result<StreamExecution, String> {
        match s {
            "serial" => Ok(StreamExecution::Serial),
            "workers" => Ok(StreamExecution::Workers),
            _ => Err(format!(
                "unknown stream execution '{s}' (serial or workers)"
            )),
        }
    }
}

/// One step of the serial order: a task, the stream it belongs to and its
/// place in that stream's list (1-based: the tasks a stream worker would
/// have run by then, records and waits included — the step budget counts
/// those).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub stream: usize,
    pub task: usize,
    pub pos: usize,
}

/// Whether the run uses the serial order (`None`: stream workers).
pub(crate) fn chosen(
    mode: StreamExecution,
    tasks: &[TaskRt],
    streams: &[Vec<usize>],
) -> Option<Vec<Step>> {
    // One stream already runs on the caller's thread without workers.
    if mode == StreamExecution::Workers || streams.len() < 2 {
        return None;
    }
    order(tasks, streams)
}

/// The streams' tasks in one order that puts every record before the waits
/// on it; `None` when the program has control flow or a wait that no
/// record before it can satisfy.
pub(crate) fn order(tasks: &[TaskRt], streams: &[Vec<usize>]) -> Option<Vec<Step>> {
    let mut recorded = vec![false; tasks.len()];
    let mut pc = vec![0usize; streams.len()];
    let mut out = Vec::with_capacity(streams.iter().map(Vec::len).sum());
    loop {
        let mut advanced = false;
        for (s, list) in streams.iter().enumerate() {
            while let Some(&ti) = list.get(pc[s]) {
                match &tasks.get(ti)?.task {
                    Task::Label { .. } | Task::Goto { .. } | Task::Switch { .. } => return None,
                    Task::Wait { .. } => match tasks[ti].wait_for {
                        Some(rec) if *recorded.get(rec)? => {}
                        Some(_) => break,
                        None => return None,
                    },
                    Task::Record { .. } => recorded[ti] = true,
                    Task::End | Task::Launch { .. } | Task::Memcpy { .. } => {}
                }
                // Records and waits stay in the order (a run does nothing
                // for them) so a trace shows the events as the workers' does.
                out.push(Step {
                    stream: s,
                    task: ti,
                    pos: pc[s] + 1,
                });
                pc[s] += 1;
                advanced = true;
            }
        }
        if pc.iter().zip(streams).all(|(&p, l)| p >= l.len()) {
            return Some(out);
        }
        if !advanced {
            // Every unfinished stream waits for a record that never runs.
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ge_om::model::Buffer;

    /// A program's tasks as the loader lays them out: (task, the record a
    /// wait waits for).
    fn program(tasks: Vec<(Task, Option<usize>)>) -> (Vec<TaskRt>, Vec<Vec<usize>>) {
        let mut streams: Vec<Vec<usize>> = vec![];
        let rts = tasks
            .into_iter()
            .enumerate()
            .map(|(i, (task, wait_for))| {
                let s = match &task {
                    Task::Memcpy { stream, .. }
                    | Task::Record { stream, .. }
                    | Task::Wait { stream, .. }
                    | Task::Label { stream, .. }
                    | Task::Goto { stream, .. } => Some(*stream as usize),
                    _ => None,
                };
                if let Some(s) = s {
                    if streams.len() <= s {
                        streams.resize(s + 1, vec![]);
                    }
                    streams[s].push(i);
                }
                TaskRt {
                    task,
                    kernel: None,
                    folded: Default::default(),
                    skip: vec![],
                    alias: vec![],
                    wait_for,
                    compute: false,
                    dead: false,
                    split: Default::default(),
                }
            })
            .collect();
        (rts, streams)
    }

    fn copy(stream: u32) -> (Task, Option<usize>) {
        let b = Buffer {
            arena: 0,
            offset: 0,
            ty: "tensor<1xf32>".into(),
            bytes: 4,
            id: 0,
        };
        let task = Task::Memcpy {
            stream,
            src: b.clone(),
            dst: b,
        };
        (task, None)
    }

    fn record(stream: u32) -> (Task, Option<usize>) {
        (Task::Record { event: 0, stream }, None)
    }

    fn wait(stream: u32, rec: usize) -> (Task, Option<usize>) {
        (Task::Wait { event: 0, stream }, Some(rec))
    }

    fn tasks_of(order: &[Step]) -> Vec<usize> {
        order.iter().map(|s| s.task).collect()
    }

    #[test]
    fn a_wait_runs_after_its_record_whichever_stream_comes_first() {
        // Stream 0 waits (task 1) for stream 1's record (task 4), which
        // comes after stream 1's copy (task 3): stream 0's first copy runs,
        // then all of stream 1 (a stream goes on until it must wait), then
        // the rest of stream 0.
        let (rts, streams) = program(vec![
            copy(0),
            wait(0, 4),
            copy(0),
            copy(1),
            record(1),
            copy(1),
        ]);
        let order = order(&rts, &streams).expect("an order");
        assert_eq!(tasks_of(&order), vec![0, 3, 4, 5, 1, 2]);
        let pos: Vec<(usize, usize)> = order.iter().map(|s| (s.stream, s.pos)).collect();
        assert_eq!(pos, vec![(0, 1), (1, 1), (1, 2), (1, 3), (0, 2), (0, 3)]);
    }

    #[test]
    fn a_cycle_of_waits_has_no_order() {
        // Each stream waits for the other's record before its own.
        let (rts, streams) = program(vec![wait(0, 3), record(0), wait(1, 1), record(1)]);
        assert_eq!(order(&rts, &streams), None);
    }

    #[test]
    fn a_wait_with_no_record_before_it_has_no_order() {
        let (mut rts, streams) = program(vec![copy(0), wait(1, 0)]);
        rts[1].wait_for = None;
        assert_eq!(order(&rts, &streams), None);
    }

    #[test]
    fn control_flow_keeps_the_workers() {
        let (rts, streams) = program(vec![
            (
                Task::Label {
                    label: 0,
                    stream: 0,
                },
                None,
            ),
            copy(0),
            (
                Task::Goto {
                    label: 0,
                    stream: 0,
                },
                None,
            ),
            copy(1),
        ]);
        assert_eq!(order(&rts, &streams), None);
    }

    #[test]
    fn workers_are_chosen_when_asked_or_with_one_stream() {
        let (rts, streams) = program(vec![copy(0), record(0), wait(1, 1), copy(1)]);
        assert!(chosen(StreamExecution::Serial, &rts, &streams).is_some());
        assert_eq!(chosen(StreamExecution::Workers, &rts, &streams), None);
        let (rts, streams) = program(vec![copy(0), copy(0)]);
        assert_eq!(chosen(StreamExecution::Serial, &rts, &streams), None);
    }

    #[test]
    fn modes_parse_by_name() {
        assert_eq!("serial".parse(), Ok(StreamExecution::Serial));
        assert_eq!("workers".parse(), Ok(StreamExecution::Workers));
        let e = "auto".parse::<StreamExecution>().expect_err("unknown");
        assert!(e.contains("serial or workers"), "{e}");
    }
}
