//! The README's "Rust API" example is the doctest of `runtime/src/lib.rs`
//! (its visible lines), so the README shows code that compiles and runs.

fn read(rel: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn readme_rust_api_example_is_the_crate_doctest() {
    let readme = read("../README.md");
    let section = readme
        .split("## Running compiled models: ge-run and the Rust API")
        .nth(1)
        .expect("README section 'Running compiled models: ge-run and the Rust API'");
    let block = section
        .split("```rust\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("a ```rust block in the section");
    let lib = read("src/lib.rs");
    let doc: Vec<&str> = lib
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .map(|l| {
            l.strip_prefix("//! ")
                .unwrap_or(l.trim_start_matches("//!"))
        })
        .collect();
    let start = doc.iter().position(|l| *l == "```").expect("a doctest");
    let visible: Vec<&str> = doc[start + 1..]
        .iter()
        .take_while(|l| **l != "```")
        .filter(|l| !(l.starts_with("# ") || **l == "#"))
        .copied()
        .collect();
    assert!(!visible.is_empty());
    assert_eq!(
        block.lines().collect::<Vec<_>>(),
        visible,
        "README example and lib.rs doctest differ"
    );
}
