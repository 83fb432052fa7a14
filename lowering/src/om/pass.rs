//! `write-om{file=model.om}`: serialise the lowered module as an `.om`.

use super::from_ir::{stream_from_module, OmOptions};
use crate::funcs::error_at;
use ge_ir::builtin::Module;
use ge_ir::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
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
    anchor: Some(Module::NAME),
    options: WriteOmOptions::DEFS,
};

#[derive(ge_ir::PassOptions)]
struct WriteOmOptions {
    /// path of the .om to write (required; '-' for stdout)
    #[option("file")]
    file: String,
    /// function to export (default: the only lowered one)
    #[option("entry")]
    entry: String,
    /// model name in the header (default: the function name)
    #[option("name")]
    name: String,
    /// SoC the model is compiled for (recorded in the header)
    #[option("soc", default = "Ascend910B")]
    soc: String,
}

struct WriteOm {
    file: String,
    opts: OmOptions,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    let o = WriteOmOptions::from_options(o);
    if o.file.is_empty() {
        return Err("write-om needs a file: write-om{file=model.om}".into());
    }
    let soc = ge_soc::Soc::load(o.soc.as_str())?;
    let opt = |s: String| Some(s).filter(|s| !s.is_empty());
    Ok(Box::new(WriteOm {
        file: o.file,
        opts: OmOptions {
            entry: opt(o.entry),
            name: opt(o.name),
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
        let m = stream_from_module(body, None, &self.opts)
            .map_err(|e| vec![e.diagnostic("write-om", op.loc)])?;
        ge_om::format::write_stream(std::path::Path::new(&self.file), &m)
            .map(drop)
            .map_err(|m| error_at(op.loc, format!("write-om: {m}")))
    }
}
