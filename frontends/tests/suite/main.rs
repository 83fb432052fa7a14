//! ge-frontends' integration tests, one test binary: each links the importers
//! and the compiler, so separate binaries filled CI's disk. One module per former
//! binary: `cargo test -p ge-frontends --test suite robustness::` runs one of them.

mod onnx_scan;
mod robustness;
