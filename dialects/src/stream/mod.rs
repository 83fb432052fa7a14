//! The `stream` dialect: the task program after stream assignment.
//!
//! A `stream.program` holds the task list of a model in *program order*:
//! kernel launches on engines (`stream.launch`), cross-stream events
//! (`stream.record` / `stream.wait`), copies (`stream.memcpy`), control flow
//! (`stream.label`, `stream.switch`, `stream.goto`) and `stream.end`. Its
//! region's arguments are the arenas it works on (the program's operands),
//! and its results are the arenas' final contents.
//!
//! ```mlir
//! %a1 = stream.program(%a0) streams 2 events 1 {
//! ^bb0(%arena: !memory.arena):
//!   %x = memory.view %arena[0] : tensor<4xf32>
//!   %y = memory.view %arena[64] : tensor<4xf32>
//!   %z = memory.view %arena[128] : tensor<4xf32>
//!   stream.launch @relu on 0 engine "AICore" ins(%x : tensor<4xf32>) outs(%y : tensor<4xf32>)
//!   stream.record 0 on 0
//!   stream.wait 0 on 1
//!   stream.launch @neg on 1 engine "AICore" ins(%y : tensor<4xf32>) outs(%z : tensor<4xf32>)
//!   stream.end
//! }
//! ```
//!
//! ## Rules (checked by `stream.program`'s verifier)
//!
//! - stream ids are `< num_streams`, event ids `< num_events`;
//! - every `stream.wait E on S` comes after (in program order) a
//!   `stream.record E on S'` with `S' != S`. So running the tasks in program
//!   order never waits for an event that has not been recorded yet, which
//!   makes program order a valid schedule of the parallel program;
//! - labels are unique; a `stream.switch` / `stream.goto` on stream S jumps to
//!   a label on S, and every task between the jump and its target (in program
//!   order) is on S — so jumping in the single program-order list and jumping
//!   in stream S's own task list mean the same thing;
//! - the region holds only `memory.view`s of its arena arguments,
//!   `memory.weight` / `data.constant` constants and the task ops above;
//!   views fit their arena (checked against the `memory.arena` behind each
//!   operand).
//!
//! ## Reference semantics
//!
//! The interpreter runs the tasks one at a time in program order (a valid
//! single-threaded schedule, by the rules above): a launch calls the kernel
//! function with the tensors its `ins` views hold and writes the results into
//! its `outs` views; memcpy copies bytes; switch/goto move the program counter.
//! It also tracks happens-before with vector clocks (one per stream, advanced
//! by tasks and joined by record/wait) and reports a *race* when a task reads
//! or writes bytes that a task on another stream wrote (or read, for writes)
//! without an event chain ordering the two — so a stream assignment that
//! forgets an event fails in the interpreter even though program order alone
//! would have computed the right answer.

pub mod exec;
pub mod ops;

use ge_ir::opdef::Dialect;

pub static DIALECT: Dialect = Dialect {
    name: "stream",
    summary: "The task program: kernel launches on streams and engines, events, copies, \
              labels/switches and end of graph",
    groups: &[ops::OPS],
};
