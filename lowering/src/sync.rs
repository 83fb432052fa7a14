//! Happens-before between tasks of a multi-stream program, from vector clocks.
//!
//! Tasks are listed in program order. A task on stream `s` happens after every
//! earlier task of `s`, and after everything an event it (or an earlier task
//! of `s`) waited for had seen when it was recorded. Events are recorded
//! *after* a task and waited for *before* one; a wait refers to the latest
//! record of its event id earlier in program order.

use std::collections::HashMap;

/// The synchronisation attributes on task ops before the stream dialect exists.
pub const STREAM_ATTR: &str = "ge.stream";
pub const WAIT_ATTR: &str = "ge.wait";
pub const RECORD_ATTR: &str = "ge.record";
pub const NUM_STREAMS_ATTR: &str = "ge.num_streams";
pub const NUM_EVENTS_ATTR: &str = "ge.num_events";

/// One step of a program: a task, or an event record/wait (on a stream).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    Task,
    Record(i64),
    Wait(i64),
}

#[derive(Clone, Debug)]
pub struct Schedule {
    pub stream: Vec<usize>,
    /// 1-based position of each task within its stream.
    pub epoch: Vec<u64>,
    /// Each task's view of every stream when it runs (its own entry = its epoch).
    pub clock: Vec<Vec<u64>>,
    pub num_streams: usize,
    /// Start time of each task when every task takes one time unit and
    /// streams run as early as their events allow: one legal execution.
    pub start: Vec<u64>,
}

impl Schedule {
    /// Everything on one stream, in program order.
    pub fn single(n: usize) -> Schedule {
        Schedule::new(&vec![0; n], &vec![vec![]; n], &vec![vec![]; n]).unwrap_or_else(|_| {
            Schedule {
                stream: vec![],
                epoch: vec![],
                clock: vec![],
                num_streams: 1,
                start: vec![],
            }
        })
    }

    /// Build from each task's stream, the events it waits for before running
    /// and the events it records after running.
    pub fn new(
        stream: &[usize],
        waits: &[Vec<i64>],
        records: &[Vec<i64>],
    ) -> Result<Schedule, String> {
        let mut steps = vec![];
        for (t, &s) in stream.iter().enumerate() {
            steps.extend(waits[t].iter().map(|&e| (s, Step::Wait(e))));
            steps.push((s, Step::Task));
            steps.extend(records[t].iter().map(|&e| (s, Step::Record(e))));
        }
        Schedule::from_steps(&steps)
    }

    /// Build from an explicit step list (the `stream` dialect's order of
    /// launches, records and waits), each step on a stream.
    pub fn from_steps(steps: &[(usize, Step)]) -> Result<Schedule, String> {
        let num_streams = steps.iter().map(|s| s.0).max().map_or(1, |m| m + 1);
        let mut vc = vec![vec![0u64; num_streams]; num_streams];
        let mut events: HashMap<i64, Vec<u64>> = HashMap::new();
        let mut now = vec![0u64; num_streams];
        let mut event_time: HashMap<i64, u64> = HashMap::new();
        let mut sched = Schedule {
            stream: vec![],
            epoch: vec![],
            clock: vec![],
            num_streams,
            start: vec![],
        };
        for &(s, step) in steps {
            match step {
                Step::Task => {
                    vc[s][s] += 1;
                    sched.stream.push(s);
                    sched.epoch.push(vc[s][s]);
                    sched.clock.push(vc[s].clone());
                    sched.start.push(now[s]);
                    now[s] += 1;
                }
                Step::Record(e) => {
                    events.insert(e, vc[s].clone());
                    event_time.insert(e, now[s]);
                }
                Step::Wait(e) => {
                    let ev = events.get(&e).ok_or_else(|| {
                        format!("stream {s} waits for event {e}, which is not recorded before")
                    })?;
                    for (x, &y) in vc[s].iter_mut().zip(ev) {
                        *x = (*x).max(y);
                    }
                    now[s] = now[s].max(event_time.get(&e).copied().unwrap_or(0));
                }
            }
        }
        Ok(sched)
    }

    /// Whether task `a` finishes before task `b` starts.
    pub fn hb(&self, a: usize, b: usize) -> bool {
        a != b && self.clock[b][self.stream[a]] >= self.epoch[a]
    }

    pub fn len(&self) -> usize {
        self.stream.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stream.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_order_streams() {
        // t0 on s0 records 0; t1 on s1 waits 0; t2 on s1; t3 on s0 (no wait).
        let s = Schedule::new(
            &[0, 1, 1, 0],
            &[vec![], vec![0], vec![], vec![]],
            &[vec![0], vec![], vec![], vec![]],
        )
        .unwrap();
        assert!(s.hb(0, 1) && s.hb(0, 2) && s.hb(1, 2) && s.hb(0, 3));
        assert!(!s.hb(1, 3) && !s.hb(3, 1) && !s.hb(2, 3));
        assert!(!s.hb(1, 1));
        assert!(Schedule::new(&[0], &[vec![3]], &[vec![]]).is_err());
    }
}
