//! Fuzz the .air parser: arbitrary bytes must give a module or a diagnostic,
//! never a panic. Whatever parses is also verified and printed (custom and
//! generic), diagnostics are rendered as ge-opt renders them, and a module
//! that verifies must read back from its own printed text.
#![no_main]

use ge_ir::diagnostics::SourceMap;
use ge_ir::parser::{parse_module, ParseOptions};
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::verifier::verify_module;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Builtin ops only; other dialects are kept verbatim.
    let ctx = ge_ir::context::bare();
    let mut sm = SourceMap::new();
    let file = sm.add("fuzz.air", Arc::from(text));
    let m = match parse_module(ctx, "fuzz.air", text, ParseOptions::file(file)) {
        Ok(m) => m,
        Err(d) => {
            let _ = sm.render(&d);
            return;
        }
    };
    let diags = verify_module(&m);
    for d in &diags {
        let _ = sm.render(d);
    }
    for generic in [false, true] {
        let opts = PrintOptions {
            generic,
            debuginfo: true,
            ..Default::default()
        };
        let out = print_module(&m, opts);
        if diags.is_empty() {
            if let Err(d) = parse_module(ctx, "printed.air", &out, ParseOptions::default()) {
                panic!("printed module does not parse: {}\n{out}", d.message);
            }
        }
    }
});
