//! The fast segment lexer must parse exactly like the pest grammar: every
//! .air/.mlir input under lit-tests/ and testdata/ (valid or not, each
//! `// -----` chunk on its own) gives the same module or the same error.

use ge_ir::parser::lex::set_fast_lexer;
use ge_ir::parser::{parse_module, ParseOptions};
use ge_ir::printer::{print_module, PrintOptions};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if matches!(p.extension().and_then(|x| x.to_str()), Some("air" | "mlir"))
            // Regular files only: reading a FIFO a lit test left behind would block.
            && std::fs::metadata(&p).is_ok_and(|m| m.is_file())
        {
            out.push(p);
        }
    }
}

fn outcome(ctx: &ge_ir::Context, text: &str) -> String {
    match parse_module(ctx, "t.air", text, ParseOptions::default()) {
        Ok(m) => print_module(
            &m,
            PrintOptions {
                debuginfo: true,
                ..Default::default()
            },
        ),
        Err(d) => format!("error {:?}: {}", d.pos, d.message),
    }
}

#[test]
fn fast_lexer_parses_like_pest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut all = vec![];
    files(&root.join("lit-tests"), &mut all);
    files(&root.join("testdata"), &mut all);
    all.sort();
    let mut ctx = ge_compile::context();
    ctx.allow_unregistered = true;
    let mut checked = 0;
    let mut diffs = vec![];
    for f in &all {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        if text.len() > 2_000_000 {
            continue;
        }
        for chunk in ge_ir::split::split_input(&text) {
            set_fast_lexer(true);
            let fast = outcome(&ctx, chunk.text);
            set_fast_lexer(false);
            let slow = outcome(&ctx, chunk.text);
            set_fast_lexer(true);
            checked += 1;
            if fast != slow {
                diffs.push(format!(
                    "{}:{}\n  fast: {}\n  pest: {}",
                    f.display(),
                    chunk.first_line,
                    fast.lines().next().unwrap_or(""),
                    slow.lines().next().unwrap_or("")
                ));
            }
        }
    }
    assert!(checked > 100, "only {checked} inputs found");
    assert!(
        diffs.is_empty(),
        "{} of {checked} inputs differ:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}
