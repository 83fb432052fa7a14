//! The flags every tool that reads a model shares: where external weights
//! may be read from and the memory budget (`ge_ir::external`,
//! `ge_ir::budget`). Each tool flattens [`LimitArgs`] into its own flags
//! and applies them once, for the model it was given, before reading it.

use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct LimitArgs {
    /// Also read external weights (`#ge.external`, ONNX external data) from DIR
    /// (repeatable). By default they are read only from inside the model's
    /// directory (after symbolic links are resolved; `..` is refused)
    #[arg(long = "allow-external-dir", value_name = "DIR")]
    pub allow_external_dir: Vec<PathBuf>,
    /// Memory budget for anything the model or its inputs size (constants,
    /// folded values, external weights, inputs, tensors): bytes, or a number
    /// with K, M, G or T. Default: the memory the machine has available
    #[arg(long = "max-memory", value_name = "BYTES", value_parser = ge_ir::budget::parse_size)]
    pub max_memory: Option<u64>,
}

impl LimitArgs {
    /// Make these the process's settings for the model read from `model`
    /// (`-` for stdin: the working directory is the model's directory).
    pub fn apply(&self, model: &str) -> Result<(), String> {
        let access = ge_ir::external::Access::for_model_file(model, &self.allow_external_dir)?;
        ge_ir::external::set_policy(access);
        ge_ir::budget::set_max_memory(self.max_memory.unwrap_or(0));
        Ok(())
    }
}
