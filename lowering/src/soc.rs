//! SoC profiles: the one loader lives in ge-rewrites (the eqsat cost model,
//! below this crate, needs it too); lowering uses it under this name.

pub use ge_rewrites::soc::*;
