//! Chrome / Perfetto traces of a run: one track per stream, one slice per
//! task, and a flow arrow from each `record` to the `wait` it releases (open
//! the JSON in ui.perfetto.dev or chrome://tracing).

use crate::model::Inner;
use ge_om::model::{Operand, Task};
use serde_json::{json, Value};

/// One executed task.
#[derive(Clone, Debug)]
pub struct TraceEvent {
    pub task: usize,
    pub stream: usize,
    pub start_us: f64,
    pub end_us: f64,
}

/// A recorded run.
#[derive(Clone, Debug)]
pub struct Trace {
    pub model: String,
    pub events: Vec<TraceEvent>,
    /// Display name and engine of each task.
    names: Vec<(String, String)>,
    /// For each wait task: its record task.
    waits: Vec<(usize, usize)>,
    streams: usize,
}

impl Trace {
    pub(crate) fn new(inner: &Inner, per_stream: Vec<Vec<TraceEvent>>) -> Trace {
        let names = inner
            .tasks
            .iter()
            .map(|t| match &t.task {
                Task::Launch { engine, ins, .. } => {
                    let k = t
                        .kernel
                        .as_ref()
                        .map_or("?".to_string(), |k| k.name.clone());
                    let w = ins
                        .iter()
                        .filter(|o| matches!(o, Operand::Weight(_)))
                        .count();
                    let _ = w;
                    (k, engine.clone())
                }
                Task::Memcpy { .. } => ("memcpy".into(), "DMA".into()),
                Task::Record { event, .. } => (format!("record e{event}"), "event".into()),
                Task::Wait { event, .. } => (format!("wait e{event}"), "event".into()),
                Task::Label { label, .. } => (format!("label {label}"), "control".into()),
                Task::Goto { label, .. } => (format!("goto {label}"), "control".into()),
                Task::Switch { .. } => ("switch".into(), "control".into()),
                Task::End => ("end".into(), "control".into()),
            })
            .collect();
        let waits = inner
            .tasks
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.wait_for.map(|r| (i, r)))
            .collect();
        let mut events: Vec<TraceEvent> = per_stream.into_iter().flatten().collect();
        events.sort_by(|a, b| a.start_us.total_cmp(&b.start_us));
        Trace {
            model: inner.name.clone(),
            events,
            names,
            waits,
            streams: inner.streams.len(),
        }
    }

    /// A task's display name: its kernel's name, `memcpy`, `record e3`, ...
    pub fn name(&self, task: usize) -> Option<&str> {
        self.names.get(task).map(|(n, _)| n.as_str())
    }

    /// The engine a task ran on ("AICore", "AICPU", "DMA", "event", ...).
    pub fn engine(&self, task: usize) -> Option<&str> {
        self.names.get(task).map(|(_, e)| e.as_str())
    }

    /// Busy time per stream (µs).
    pub fn busy_us(&self) -> Vec<f64> {
        let mut v = vec![0.0; self.streams];
        for e in &self.events {
            v[e.stream] += e.end_us - e.start_us;
        }
        v
    }

    /// Chrome trace-event JSON.
    pub fn to_json(&self) -> String {
        let mut out: Vec<Value> = vec![json!({
            "name": "process_name", "ph": "M", "pid": 1, "tid": 0,
            "args": {"name": format!("ge-run {}", self.model)}
        })];
        for s in 0..self.streams {
            out.push(json!({
                "name": "thread_name", "ph": "M", "pid": 1, "tid": s,
                "args": {"name": format!("stream {s}")}
            }));
            out.push(json!({
                "name": "thread_sort_index", "ph": "M", "pid": 1, "tid": s,
                "args": {"sort_index": s}
            }));
        }
        let mut at: std::collections::HashMap<usize, &TraceEvent> = Default::default();
        for e in &self.events {
            at.insert(e.task, e);
            let (name, cat) = &self.names[e.task];
            let dur = (e.end_us - e.start_us).max(0.5);
            out.push(json!({
                "name": name, "cat": cat, "ph": "X", "pid": 1, "tid": e.stream,
                "ts": e.start_us, "dur": dur, "args": {"task": e.task}
            }));
        }
        for (k, &(w, r)) in self.waits.iter().enumerate() {
            if let (Some(re), Some(we)) = (at.get(&r), at.get(&w)) {
                out.push(json!({
                    "name": "event", "cat": "event", "ph": "s", "id": k, "pid": 1,
                    "tid": re.stream, "ts": re.start_us
                }));
                out.push(json!({
                    "name": "event", "cat": "event", "ph": "f", "bp": "e", "id": k, "pid": 1,
                    "tid": we.stream, "ts": we.start_us
                }));
            }
        }
        serde_json::to_string_pretty(&json!({"traceEvents": out, "displayTimeUnit": "ms"}))
            .unwrap_or_else(|_| "{}".into())
    }
}
