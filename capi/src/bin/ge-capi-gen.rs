//! Writes capi/src/es_ops.rs (one C function per ES op, from the op
//! declarations) and include/ge/ge.h (cbindgen over capi/src).
//! `cargo run -p ge-capi --features generate --bin ge-capi-gen`

fn main() {
    match ge_capi::gen::write_all() {
        Ok(files) => {
            for f in files {
                println!("wrote {}", f.display());
            }
        }
        Err(e) => {
            eprintln!("ge-capi-gen: {e}");
            std::process::exit(1);
        }
    }
}
