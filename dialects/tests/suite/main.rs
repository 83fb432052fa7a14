//! ge-dialects' integration tests, one test binary (CI's disk holds only so
//! many linked executables). One module per former binary: `cargo test -p
//! ge-dialects --test suite fixtures::` runs one of them.

mod fixtures;
mod graph_nn_robustness;
mod infer_vs_interpreter;
mod interfaces_match_tables;
mod interp_call_depth;
mod malformed;
mod op_definitions;
mod op_name_literals;
mod parallel_parse;
mod top_level_split;
mod transdata_prop;
