//! docs/dialects/*.md must match what the op definitions generate.

#[test]
fn dialect_docs_are_generated_from_current_definitions() {
    let ctx = ge_compile::context();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/dialects");
    let mut stale = vec![];
    for (name, text) in ge_driver::docgen::all_pages(&ctx) {
        let on_disk = std::fs::read_to_string(dir.join(&name)).unwrap_or_default();
        if on_disk != text {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "stale docs: {stale:?}; run tools/regen.sh"
    );
}
