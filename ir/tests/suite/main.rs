//! ge-ir's integration tests, one test binary (CI's disk holds only so many
//! linked executables). One module per former binary: `cargo test -p ge-ir --test
//! suite printer_snapshots::` runs one of them.

mod def_op;
mod diagnostics;
mod output;
mod output_writers;
mod parallel_parse;
mod pass_options;
mod printer_snapshots;
mod robustness;
mod roundtrip_prop;
mod smoke;
