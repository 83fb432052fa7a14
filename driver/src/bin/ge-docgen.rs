//! Writes docs/dialects/*.md from the op definitions:
//! `ge-docgen [--check] [DIR]` (DIR defaults to docs/dialects). With
//! `--check` nothing is written, and the exit status is 1 when a page
//! differs from what the definitions generate (tools/regen.sh runs it).
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    let dir = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .cloned()
        .unwrap_or_else(|| "docs/dialects".to_string());
    let ctx = ge_compile::context();
    if !check {
        if let Err(e) = std::fs::create_dir_all(&dir) {
            eprintln!("error: cannot create {dir}: {e}");
            std::process::exit(1);
        }
    }
    let mut stale = false;
    for (name, text) in ge_driver::docgen::all_pages(&ctx) {
        let path = std::path::Path::new(&dir).join(&name);
        if check {
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                eprintln!("ge-docgen: stale: {}", path.display());
                stale = true;
            }
        } else if let Err(e) = ge_ir::output::write(&path, text.as_bytes()) {
            eprintln!("error: cannot write {}: {e}", path.display());
            std::process::exit(1);
        } else {
            println!("wrote {}", path.display());
        }
    }
    if stale {
        std::process::exit(1);
    }
}
