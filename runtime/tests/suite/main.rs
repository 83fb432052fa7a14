//! The runtime's integration tests, one test binary: each was a binary of its
//! own, and every one links the compiler (the tests compile their models in
//! process), so 48 of them filled CI's disk with near-identical executables.
//! Tests that set or count process-wide state stay binaries of their own in
//! `tests/`, so a `cargo test` run (threads in one process) cannot mix them
//! with these: `GE_CONV_ALGO` (conv_tiles, packed_conv, winograd), the
//! process's threads (worker_threads) and its allocations (run_allocations).
//!
//! One module per former binary: `cargo test -p ge-runtime --test suite
//! hostile_om::` runs one of them.

#[path = "../common/mod.rs"]
mod common;
mod om_mutator;

mod blocked_reads;
mod borrowed_inputs;
mod col2im_kernels;
mod control_flow;
mod conv_residual;
mod depthwise;
mod det_reverse_sequence_kernels;
mod folding_lifetimes;
mod gemv;
mod geometry_kernels;
mod hostile_om;
mod hybrid_info;
mod io_names;
mod kernel_constants;
mod kernels_vs_interpreter;
mod launch_operands;
mod launch_placement;
mod layout_readers;
mod lent_outputs;
mod loop_body_values;
mod loop_trip_count;
mod matmul_packed;
mod matmul_split;
mod max_pool;
mod max_unpool_kernels;
mod measured_split;
mod mixed_dtypes;
mod model_info;
mod plain_layouts;
mod properties;
mod readme;
mod resize_kernels;
mod rnn_kernel;
mod run_limits;
mod run_reusing;
mod scan_kernels;
mod sequence_kernels;
mod serial_streams;
mod signal_kernels;
mod size_symbols;
mod size_unique_nms;
mod small_gaps_kernels;
mod smoke;
mod symbolic_shapes;
mod transdata;
mod value_symbols;
mod vision_kernels;
mod weight_folding;
mod zoo;
