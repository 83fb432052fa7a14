//! ge-om's integration tests, one test binary. One module per former binary:
//! `cargo test -p ge-om --test suite validate::` runs one of them.

mod streaming;
mod validate;
