//! Writes docs/dialects/*.md from the op definitions.
fn main() {
    let ctx = ge_compile::context();
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "docs/dialects".to_string());
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("error: cannot create {dir}: {e}");
        std::process::exit(1);
    }
    for (name, text) in ge_driver::docgen::all_pages(&ctx) {
        let path = std::path::Path::new(&dir).join(&name);
        if let Err(e) = ge_ir::output::write(&path, text.as_bytes()) {
            eprintln!("error: cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
        println!("wrote {}", path.display());
    }
}
