//! Fuzz the runtime with hostile `.om` models: a structure-aware mutator
//! (runtime/tests/suite/om_mutator, shared with the proptest that runs in CI)
//! edits compiled models — task program, sizes, offsets, types, counts,
//! kernels text — writes them with valid checksums, loads them with tight
//! limits and runs what loads. Anything but `Ok` or a one-line error (a
//! panic, an abort, a hang, an out-of-bounds access under ASan) is a finding.
#![no_main]

#[path = "../../runtime/tests/suite/om_mutator/mod.rs"]
mod om_mutator;

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn seeds() -> &'static [ge_om::OmModel] {
    static SEEDS: OnceLock<Vec<ge_om::OmModel>> = OnceLock::new();
    SEEDS.get_or_init(om_mutator::seeds)
}

fuzz_target!(|data: &[u8]| {
    om_mutator::check(seeds(), data);
});
