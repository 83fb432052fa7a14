//! Runs end: a stream program that cannot finish fails with one line
//! (issue 18), here in-process on a model whose task program is edited the
//! way tools/hostile_om.py edits `.om` files for lit-tests/runtime/run-limits.test.
//! Added for a mutant cargo-mutants found surviving (docs/testing.md,
//! "Measuring test strength"): a stream that finished was never counted
//! out, so a wait no running stream could satisfy blocked forever.

use ge_om::model::{OmModel, Task};
use ge_runtime::{HostTensor, LoadOptions, Model};
use std::time::Duration;

/// Two matmuls and a relu (ge.symbol_bounds B = 4).
const TWO_STREAMS: &str = "module attributes {ge.symbol_bounds = {B = 4 : i64}} {
  graph.func @main(%x: tensor<Bx8xf32>) -> (tensor<Bx8xf32>, tensor<Bx8xf32>) {
    %w = data.constant dense<0.5> : tensor<8x8xf32>
    %a = graph.matmul %x, %w : (tensor<Bx8xf32>, tensor<8x8xf32>) -> tensor<Bx8xf32>
    %b = graph.relu %x : (tensor<Bx8xf32>) -> tensor<Bx8xf32>
    %c = graph.matmul %b, %w : (tensor<Bx8xf32>, tensor<8x8xf32>) -> tensor<Bx8xf32>
    %d = graph.add %a, %c : (tensor<Bx8xf32>, tensor<Bx8xf32>) -> tensor<Bx8xf32>
    graph.return %d, %b : tensor<Bx8xf32>, tensor<Bx8xf32>
  }
}";

fn compile() -> OmModel {
    ge_compile::compile_text("two_streams", TWO_STREAMS, &Default::default())
        .unwrap_or_else(|e| panic!("compile: {e}"))
}

/// Load `m` with a deadline (so a hang fails the test instead of stalling
/// it) and run it on 2x8 ones.
fn run(m: &OmModel) -> Result<Vec<HostTensor>, String> {
    run_with(m, ge_runtime::DEFAULT_MAX_STEPS)
}

fn run_with(m: &OmModel, max_steps: u64) -> Result<Vec<HostTensor>, String> {
    let bytes = ge_om::format::to_bytes_unchecked(m).expect("bytes");
    let model = Model::from_bytes(
        &bytes,
        &LoadOptions {
            threads: 2,
            timeout: Some(Duration::from_secs(60)),
            max_steps,
            ..Default::default()
        },
    )
    .map_err(|e| format!("load: {e}"))?;
    let x = HostTensor::from_f32(&[2, 8], &[1.0; 16]).expect("input");
    model.run(&[x]).map_err(|e| e.to_string())
}

#[test]
fn a_wait_no_running_stream_can_satisfy_is_a_deadlock() {
    let mut m = compile();
    run(&m).expect("the model as compiled runs");
    // Stream 0 ends in a loop whose wait needs a second record of an event
    // recorded once, outside the loop; a second stream runs one task to its
    // end. Whichever of them stops last, no running stream is left to
    // record: a deadlock (a finished stream must count as not running).
    let e = m.def.num_events;
    m.def.num_events += 1;
    let s1 = m.def.num_streams;
    m.def.num_streams += 1;
    let end = m
        .program
        .tasks
        .iter()
        .position(|t| matches!(t, Task::End))
        .expect("an end");
    m.program.tasks.splice(
        end..end,
        [
            Task::Record {
                event: e,
                stream: 0,
            },
            Task::Label {
                label: 77,
                stream: 0,
            },
            Task::Wait {
                event: e,
                stream: 0,
            },
            Task::Goto {
                label: 77,
                stream: 0,
            },
            Task::Label {
                label: 78,
                stream: s1,
            },
        ],
    );
    let err = run(&m).expect_err("the run cannot end");
    assert!(err.contains("deadlock"), "{err}");
    assert!(err.contains("(fired 1 of 2 times)"), "{err}");
}

/// The step budget counts the tasks a stream runs: a loop-free program whose
/// longest stream has k tasks runs with `max_steps = k` and is stopped at
/// `k - 1`, the message naming the budget.
#[test]
fn the_step_budget_is_exactly_the_tasks_a_stream_runs() {
    let m = compile();
    let per_stream = |s: u32| {
        m.program
            .tasks
            .iter()
            .filter(|t| match t {
                Task::Launch { stream, .. }
                | Task::Memcpy { stream, .. }
                | Task::Record { stream, .. }
                | Task::Wait { stream, .. }
                | Task::Label { stream, .. }
                | Task::Goto { stream, .. }
                | Task::Switch { stream, .. } => *stream == s,
                Task::End => false,
            })
            .count() as u64
    };
    let k = (0..m.def.num_streams)
        .map(per_stream)
        .max()
        .expect("a stream");
    assert!(k > 1, "{k}");
    run_with(&m, k).expect("a budget of exactly the tasks run is enough");
    let err = run_with(&m, k - 1).expect_err("one task too many");
    assert!(
        err.contains(&format!("ran {} tasks, its step budget", k - 1)),
        "{err}"
    );
}
