//! ge-driver: the command-line tools and what they share.

pub mod atc;
pub mod conformance;
pub mod diag_verify;
pub mod docgen;
pub mod incremental;
pub mod npy;
pub mod opt;
pub mod registry;
pub mod run;
pub mod translate;
pub mod zoo;
