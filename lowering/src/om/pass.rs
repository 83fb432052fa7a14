//! `write-om{file=model.om}`: serialise the lowered module as an `.om`.

use super::from_ir::{from_module, OmOptions};
use crate::funcs::error_at;
use ge_ir::pass::{OptKind, OptionDef, Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::OpData;

pub static INFO: PassInfo = PassInfo {
    name: "write-om",
    summary: "Write the lowered module to an .om offline model file",
    description: "Serialises the public function lowered by `emit-tasks` (its arenas, task \
                  program, weights, kernel functions and I/O) to `file` (through `ge_ir::output`: \
                  a regular file is replaced atomically, a device, FIFO or symlink is written \
                  through, `-` is stdout). `entry` picks the function when several were lowered. \
                  The IR is unchanged. Use after the `atc` pipeline: \
                  `--pass-pipeline='builtin.module(atc, write-om{file=m.om})'`.",
    anchor: Some("builtin.module"),
    options: &[
        OptionDef {
            name: "file",
            kind: OptKind::Str,
            default: "",
            doc: "path of the .om to write (required; '-' for stdout)",
        },
        OptionDef {
            name: "entry",
            kind: OptKind::Str,
            default: "",
            doc: "function to export (default: the only lowered one)",
        },
        OptionDef {
            name: "name",
            kind: OptKind::Str,
            default: "",
            doc: "model name in the header (default: the function name)",
        },
        OptionDef {
            name: "soc",
            kind: OptKind::Str,
            default: "Ascend910B",
            doc: "SoC the model is compiled for (recorded in the header)",
        },
    ],
};

struct WriteOm {
    file: String,
    opts: OmOptions,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    if o.str("file").is_empty() {
        return Err("write-om needs a file: write-om{file=model.om}".into());
    }
    let soc = ge_soc::Soc::load(o.str("soc"))?;
    let opt = |k: &str| Some(o.str(k).to_string()).filter(|s| !s.is_empty());
    Ok(Box::new(WriteOm {
        file: o.str("file").to_string(),
        opts: OmOptions {
            entry: opt("entry"),
            name: opt("name"),
            soc: soc.name,
        },
    }))
}

impl Pass for WriteOm {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, _: &PassContext) -> PassResult {
        let Some(body) = op.inner.as_deref() else {
            return Ok(());
        };
        let m = from_module(body, None, &self.opts)
            .map_err(|e| vec![e.diagnostic("write-om", op.loc)])?;
        ge_om::format::write(std::path::Path::new(&self.file), &m)
            .map_err(|m| error_at(op.loc, format!("write-om: {m}")))
    }
}
