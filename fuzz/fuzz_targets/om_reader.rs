//! Fuzz the `.om` reader: arbitrary bytes must give a validated model or a
//! one-line error, never a panic. A model that loads is printed back as
//! `.air` (`ge-translate --om-to-air`), which must not panic either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn ctx() -> &'static ge_ir::Context {
    static CTX: OnceLock<ge_ir::Context> = OnceLock::new();
    CTX.get_or_init(|| {
        let mut c = ge_dialects::context();
        ge_lowering::register(&mut c);
        c
    })
}

fuzz_target!(|data: &[u8]| {
    match ge_om::parse(data) {
        Ok(om) => {
            // What the reader accepted validates, and converts without panicking.
            assert!(om.to_model().validate().is_ok());
            if let Ok(m) = ge_lowering::om::to_module(ctx(), &om) {
                let _ = ge_ir::printer::print_module(&m, Default::default());
            }
        }
        Err(e) => assert!(!e.0.contains('\n'), "multi-line error: {}", e.0),
    }
});
