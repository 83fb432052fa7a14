//! ge-lowering's integration tests, one test binary: each links the compiler,
//! so separate binaries filled CI's disk. One module per former binary: `cargo
//! test -p ge-lowering --test suite om_fuzz::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod memory_plan_details;
mod om_fuzz;
mod om_stream;
mod properties;
