//! Hostile `.om` models, a bounded number of cases per CI run: the
//! structure-aware mutator of the `om_runtime` fuzz target (shared:
//! tests/suite/om_mutator) edits compiled models — task program, sizes, offsets,
//! types, counts, kernels text — and writes them with valid checksums; every
//! one must load and run or fail with a one-line error, never panic, abort
//! or hang. (The long runs are `cargo +nightly fuzz run om_runtime`, see
//! docs/security.md.)

use crate::om_mutator;

use proptest::prelude::*;
use std::sync::OnceLock;

fn seeds() -> &'static [ge_om::OmModel] {
    static SEEDS: OnceLock<Vec<ge_om::OmModel>> = OnceLock::new();
    SEEDS.get_or_init(om_mutator::seeds)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn mutated_models_load_and_run_or_fail_with_one_line(data in proptest::collection::vec(any::<u8>(), 0..96)) {
        om_mutator::check(seeds(), &data);
    }
}

/// The unmutated seeds load and run (so the property above starts from
/// models that reach the executor).
#[test]
fn the_seeds_run() {
    for m in seeds() {
        let r = om_mutator::load_and_run(m, &mut om_mutator::Bytes(&[3]));
        assert_eq!(r, Ok(true));
    }
}
