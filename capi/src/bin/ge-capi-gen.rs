//! Writes capi/src/es_ops.rs (one C function per ES op, from the op
//! declarations) and include/ge/ge.h (cbindgen over capi/src), and promises
//! new declarations in capi/abi-<MAJOR>.txt under the next minor version.
//! `cargo run -p ge-capi --features generate --bin ge-capi-gen [-- --check]`;
//! with `--check` nothing is written and the exit status is 1 when a file is
//! stale (tools/regen.sh runs it either way).

fn main() {
    let check = std::env::args().skip(1).any(|a| a == "--check");
    let result = if check {
        ge_capi::gen::stale().map(|stale| {
            for f in &stale {
                eprintln!("ge-capi-gen: stale: {f}");
            }
            if !stale.is_empty() {
                std::process::exit(1);
            }
        })
    } else {
        ge_capi::gen::write_all().map(|files| {
            for f in files {
                println!("wrote {}", f.display());
            }
        })
    };
    if let Err(e) = result {
        eprintln!("ge-capi-gen: {e}");
        std::process::exit(1);
    }
}
