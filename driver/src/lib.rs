//! ge-driver: the command-line tools and what they share.

pub mod atc;
pub mod conformance;
pub mod diag_verify;
pub mod docgen;
pub mod incremental;
pub mod limits;
pub mod npy;
pub mod opt;
pub mod out_text;
pub mod run;
pub mod translate;
pub mod zoo;

// Every ge-* tool allocates millions of small IR objects (op states, operand lists,
// attribute vectors); mimalloc's thread-local free lists make that ~20% of glibc's cost.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
