//! `print-ir`: print the anchor op to stderr (MLIR's `print-ir`).

use crate::body::OpData;
use crate::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use crate::printer::PrintOptions;

pub static INFO: PassInfo = PassInfo {
    name: "print-ir",
    summary: "Print the IR on stderr",
    description: "Prints the op the pass runs on to stderr, preceded by `// ----- label -----`.",
    anchor: None,
    options: PrintIr::DEFS,
};

#[derive(crate::PassOptions)]
struct PrintIr {
    /// label printed before the IR
    #[option("label", default = "IR Dump")]
    label: String,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(PrintIr::from_options(o)))
}

impl Pass for PrintIr {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, _cx: &PassContext) -> PassResult {
        let text = crate::pass::manager::print_data(op, PrintOptions::default());
        eprintln!("// ----- {} -----\n{text}", self.label);
        Ok(())
    }
}
