//! eqsat's options as `make` checks them. Added for a mutant cargo-mutants
//! found surviving (docs/testing.md, "Measuring test strength"): the lit
//! test of the "ILP missing" error (`eqsat-ilp-missing.test`) is not part of
//! the crate's own tests.

use ge_ir::pass::PassOptions;

fn make(opts: &[(&str, &str)]) -> Result<(), String> {
    let info = &ge_rewrites::eqsat::pass::INFO;
    let given: Vec<(String, Option<String>)> = opts
        .iter()
        .map(|(k, v)| (k.to_string(), Some(v.to_string())))
        .collect();
    let o = PassOptions::parse(info, &given).map_err(|e| format!("{e:?}"))?;
    ge_rewrites::eqsat::pass::make(&o).map(|_| ())
}

/// `extract=ilp` is accepted exactly when this build has the solver and
/// `GE_DISABLE_FEATURES` does not switch it off; otherwise the error says
/// how to get it. (In the default build, which has no ILP feature, this is
/// the refusal.)
#[test]
fn extract_ilp_needs_the_feature() {
    let have = cfg!(feature = "ilp") && !ge_rewrites::eqsat::feature_disabled("ilp");
    match make(&[("extract", "ilp")]) {
        Ok(()) => assert!(have, "extract=ilp accepted without the ILP solver"),
        Err(e) => {
            assert!(!have, "extract=ilp refused with the solver: {e}");
            assert!(e.contains("cargo build --features ge-rewrites/ilp"), "{e}");
        }
    }
    for extract in ["greedy", "tree"] {
        make(&[("extract", extract)]).unwrap_or_else(|e| panic!("{extract}: {e}"));
    }
}
