//! ge-lowering: the compiler's back half — what `ge-atc` runs after graph
//! optimisation (DESIGN.md §5), one pass per stage, each leaving IR the
//! reference interpreter can run:
//!
//! | pass | module | result |
//! |---|---|---|
//! | `convert-precision` | [`precision`] | f16/bf16 compute by ATC precision mode (casts around converted ops) |
//! | `fuse-kernels` | [`fuse_kernels`] | `graph.fused` kernels (TVM op patterns, [`op_pattern`]) |
//! | `partition-engines` | [`partition_engines`] | `engine` on every op/kernel ([`engines`] registry) |
//! | `select-formats` | [`select_formats`] | NC1HWC0 / FRACTAL_Z / FRACTAL_NZ at kernel boundaries |
//! | `assign-streams` | [`assign_streams`] | streams, events, program order ([`chain_cover`]) |
//! | `plan-memory` | [`memory_plan`] | the `memory` dialect: one workspace arena, views, weights |
//! | `verify-memory` | [`verify_memory`] | an independent proof that the plan is safe |
//! | `emit-tasks` | [`emit_tasks`] | the `stream` dialect: a task program and kernel functions |
//! | `write-om` | [`om`] | the `.om` offline model |
//!
//! The named pipeline `atc` runs them all after canonicalize and CSE.
//! Supporting modules: [`taskgraph`] (tasks, views, dependencies), [`sync`]
//! (happens-before across streams), [`cost`] (the SoC cost model, on `ge_soc` profiles),
//! [`funcs`] (walking and cloning), [`error`] (errors located at the op they are about).

pub mod assign_streams;
pub mod chain_cover;
pub mod cost;
pub mod emit_tasks;
pub mod engines;
pub mod error;
pub mod funcs;
pub mod fuse_kernels;
pub mod memory_plan;
pub mod om;
pub mod op_pattern;
pub mod partition_engines;
pub mod precision;
pub mod select_formats;
pub mod sync;
pub mod taskgraph;
pub mod verify_memory;

use ge_ir::Context;

/// The `atc` pipeline: graph optimisation, then every lowering stage.
pub const ATC_PIPELINE: &str = "builtin.module(graph.func(canonicalize, cse), \
     fuse-kernels, partition-engines, select-formats, assign-streams, plan-memory, \
     verify-memory, emit-tasks, verify-memory)";

/// Register the lowering passes, the `atc` pipeline and the engine registry.
pub fn register(ctx: &mut Context) {
    engines::install(ctx);
    let r = &mut ctx.passes;
    r.register(&precision::INFO, precision::make);
    r.register(&fuse_kernels::INFO, fuse_kernels::make);
    r.register(&partition_engines::INFO, partition_engines::make);
    r.register(&select_formats::INFO, select_formats::make);
    r.register(&assign_streams::INFO, assign_streams::make);
    r.register(&memory_plan::INFO, memory_plan::make);
    r.register(&verify_memory::INFO, verify_memory::make);
    r.register(&emit_tasks::INFO, emit_tasks::make);
    r.register(&om::pass::INFO, om::pass::make);
    r.register_pipeline(
        "atc",
        "Graph optimisation and every lowering stage down to the task program (what ge-atc runs)",
        ATC_PIPELINE,
    );
}
