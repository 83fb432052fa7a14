//! ge-rewrites' integration tests, one test binary (CI's disk holds only so
//! many linked executables). One module per former binary: `cargo test -p
//! ge-rewrites --test suite eqsat::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod eqsat;
mod eqsat_cost;
mod eqsat_options;
mod eqsat_testdata;
mod fold_bytes;
mod fold_splats;
mod greedy_driver;
mod library;
mod rule_equivalence;
mod rule_syntax;
