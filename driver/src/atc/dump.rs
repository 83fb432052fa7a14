//! `ge-atc --mode=1 --om=model.om --json=model.json`: an `.om` as JSON (the
//! header, partitions, model definition, I/O, task program and kernel IR),
//! or as `.air` text when `--json` names an `.air` file.

use super::AtcArgs;
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::Context;
use std::path::Path;

fn error(msg: impl std::fmt::Display) -> String {
    format!("error: {msg}")
}

/// Convert `--om` into `--json`; returns a progress message.
pub fn om_to_file(ctx: &Context, args: &AtcArgs) -> Result<String, String> {
    let om_path = args
        .om
        .as_deref()
        .ok_or_else(|| error("--mode=1 needs --om=MODEL.om"))?;
    let out = args
        .json
        .as_deref()
        .ok_or_else(|| error("--mode=1 needs --json=OUT.json (or OUT.air)"))?;
    if args.model.is_some() || args.output.is_some() {
        return Err(error(
            "--mode=1 reads --om and writes --json; --model and --output are for --mode=0",
        ));
    }
    let bytes = ge_om::format::read(Path::new(om_path)).map_err(|e| error(e.0))?;
    let om = ge_om::format::parse(&bytes).map_err(|e| error(format!("{om_path}: {e}")))?;
    let text = if out.ends_with(".air") {
        let m =
            ge_lowering::om::to_module(ctx, &om).map_err(|e| error(format!("{om_path}: {e}")))?;
        print_module(&m, PrintOptions::default())
    } else {
        let partitions: Vec<serde_json::Value> = om
            .partitions
            .iter()
            .map(|p| {
                serde_json::json!({
                    "kind": p.kind.name(),
                    "offset": p.offset,
                    "length": p.length,
                    "checksum": format!("{:08x}", p.checksum),
                })
            })
            .collect();
        let v = serde_json::json!({
            "version": om.version,
            "soc": om.soc,
            "name": om.name,
            "partitions": partitions,
            "model": om.def,
            "io": om.io,
            "program": om.program,
            "kernels": om.kernels,
        });
        serde_json::to_string_pretty(&v).map_err(error)? + "\n"
    };
    ge_ir::output::write(out, text.as_bytes())
        .map_err(|e| error(format!("cannot write '{out}': {e}")))?;
    Ok(format!("wrote {out} from {om_path}"))
}
