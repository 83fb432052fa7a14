//! `ge-mlir-crosscheck FILE.air...`: export each public function to upstream
//! MLIR (func + tosa), lower it with MLIR's pipeline (TOSA → linalg →
//! bufferize → LLVM), run it in MLIR's execution engine and compare with
//! ge's interpreter on the same random inputs. Exit code 1 on any mismatch
//! or failure. Needs the cargo feature `mlir` (LLVM/MLIR 22).

use clap::Parser;
use ge_frontends::mlir::crosscheck::{check_function, Options};
use std::io::Write;

#[derive(Parser, Debug)]
#[command(
    name = "ge-mlir-crosscheck",
    version,
    about = "Check ge's op semantics against MLIR's own execution (TOSA → LLVM JIT)"
)]
struct Args {
    /// .air files; every public function of each is checked
    #[arg(required = true)]
    files: Vec<String>,
    /// Only check this function (repeatable)
    #[arg(long = "function", value_name = "NAME")]
    functions: Vec<String>,
    /// Random input sets per function
    #[arg(long, default_value_t = 3)]
    trials: usize,
    /// Seed of the random inputs
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Relative tolerance (default: by dtype)
    #[arg(long)]
    rtol: Option<f64>,
    /// Absolute tolerance (default: by dtype)
    #[arg(long)]
    atol: Option<f64>,
}

fn main() {
    let args = Args::parse();
    let ctx = ge_compile::context();
    let opts = Options {
        trials: args.trials,
        seed: args.seed,
        rtol: args.rtol,
        atol: args.atol,
    };
    let mut out = String::new();
    let mut failed = 0usize;
    let mut passed = 0usize;
    for path in &args.files {
        let m = match ge_driver::translate::load_air(&ctx, path) {
            Ok(m) => m,
            Err(e) => {
                out.push_str(&e);
                failed += 1;
                continue;
            }
        };
        let names: Vec<String> = ge_driver::run::public_functions(&m)
            .into_iter()
            .filter(|n| args.functions.is_empty() || args.functions.contains(n))
            .collect();
        if names.is_empty() {
            out.push_str(&format!("FAIL {path}: no function to check\n"));
            failed += 1;
        }
        for name in names {
            match check_function(&m, &name, &opts) {
                Ok(r) if r.mismatches.is_empty() => {
                    passed += 1;
                    out.push_str(&format!(
                        "PASS {path} @{name}: {} trials, max |ours - MLIR| = {:.3e}\n",
                        r.trials, r.max_abs_diff
                    ));
                }
                Ok(r) => {
                    failed += 1;
                    out.push_str(&format!("FAIL {path} @{name}: results differ\n"));
                    for mm in r.mismatches {
                        out.push_str(&format!("  {mm}\n"));
                    }
                }
                Err(e) => {
                    failed += 1;
                    out.push_str(&format!("FAIL {path} @{name}: {e}\n"));
                }
            }
        }
    }
    out.push_str(&format!("{passed} passed, {failed} failed\n"));
    let _ = std::io::stdout().write_all(out.as_bytes());
    std::process::exit(if failed > 0 { 1 } else { 0 });
}
