//! ge-driver's integration tests, one test binary: each links the whole
//! compiler, so separate binaries filled CI's disk. One module per former binary:
//! `cargo test -p ge-driver --test suite zoo::` runs one of them.

mod diagnostics_snapshots;
mod docs_current;
mod incremental;
mod lexer_differential;
mod zoo;
