//! The shipped rule library built at compile time (`rewrites/build.rs`) is
//! the library parsed from its files at run time, rule for rule.

#[test]
fn built_library_equals_parsed_files() {
    let ctx = ge_dialects::context();
    let built = ge_rewrites::library::library_rules(&ctx);
    let parsed = ge_rewrites::library::parse_library(&ctx).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(built.len(), parsed.len());
    for (b, p) in built.iter().zip(&parsed) {
        assert_eq!(b, p, "rule {} of {}", p.name, p.file);
    }
    assert!(built.len() > 100, "{} rules", built.len());
}
