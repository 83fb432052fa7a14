//! `ge-zoo`: write the model zoo.

use super::{generate, model, Size, DEFAULT_SEED, MODELS};
use clap::Parser as ClapParser;
use std::path::Path;

#[derive(ClapParser, Debug)]
#[command(
    name = "ge-zoo",
    version,
    about = "Write the model zoo as .air (symbolic batch dim B <= 64, seeded random weights)",
    long_about = "Write the model zoo as .air (symbolic batch dim B <= 64, seeded random weights).\n\n\
        Tiny configurations (the default) keep each model's layer structure with fewer channels \
        and embed their weights as dense_resource blobs; they are committed in testdata/models/. \
        --full writes the published sizes with weights in an external file <out>/<name>.weights \
        (referenced by that relative path: run the models from the directory ge-zoo ran in)."
)]
pub struct ZooArgs {
    /// Models to write (default: all); see --list
    pub models: Vec<String>,
    /// Full-size configurations (default: tiny)
    #[arg(long)]
    pub full: bool,
    /// Output directory (default: testdata/models, or target/zoo with --full)
    #[arg(long)]
    pub out: Option<String>,
    /// Seed of the random weights
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Compare with the files in the output directory instead of writing; exit 1 if any differs
    #[arg(long)]
    pub check: bool,
    /// List the models and exit
    #[arg(long)]
    pub list: bool,
}

pub fn main() -> i32 {
    let args = ZooArgs::parse();
    if args.list {
        for m in MODELS {
            println!("{:<14} {}", m.name, m.title);
        }
        return 0;
    }
    let size = if args.full { Size::Full } else { Size::Tiny };
    let out = args.out.clone().unwrap_or_else(|| {
        if args.full {
            "target/zoo"
        } else {
            "testdata/models"
        }
        .to_string()
    });
    let mut chosen = vec![];
    for n in &args.models {
        match model(n) {
            Some(m) => chosen.push(m),
            None => {
                eprintln!("error: no model named '{n}' (see ge-zoo --list)");
                return 1;
            }
        }
    }
    if chosen.is_empty() {
        chosen = MODELS.iter().collect();
    }
    if !args.check {
        if let Err(e) = std::fs::create_dir_all(&out) {
            eprintln!("error: cannot create {out}: {e}");
            return 1;
        }
    }
    let mut code = 0;
    for m in chosen {
        let air = Path::new(&out).join(format!("{}.air", m.name));
        let weights_path = format!("{out}/{}.weights", m.name);
        // The text names the file next to it: external weights are read
        // relative to the model's directory (ge_ir::external).
        let weights_name = format!("{}.weights", m.name);
        let g = match generate(m, size, args.seed, &weights_name) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("error: {}: {e}", m.name);
                code = 1;
                continue;
            }
        };
        let stats = format!(
            "{} ops ({} compute), {} parameters",
            g.ops, g.compute_ops, g.params
        );
        if args.check {
            match std::fs::read_to_string(&air) {
                Ok(t) if t == g.text => println!("{}: up to date ({stats})", air.display()),
                Ok(_) => {
                    eprintln!("{}: differs from what ge-zoo generates", air.display());
                    code = 1;
                }
                Err(e) => {
                    eprintln!("{}: cannot read: {e}", air.display());
                    code = 1;
                }
            }
            continue;
        }
        if let Err(e) = ge_ir::output::write(&air, g.text.as_bytes()) {
            eprintln!("error: cannot write {}: {e}", air.display());
            code = 1;
            continue;
        }
        let mut line = format!(
            "wrote {} ({stats}; {} KiB",
            air.display(),
            g.text.len() / 1024
        );
        if !g.weights.is_empty() {
            if let Err(e) = ge_ir::output::write(&weights_path, &g.weights) {
                eprintln!("error: cannot write {weights_path}: {e}");
                code = 1;
                continue;
            }
            line.push_str(&format!(
                " + {weights_path}, {} MiB",
                g.weights.len() / (1024 * 1024)
            ));
        }
        println!("{line})");
    }
    code
}
