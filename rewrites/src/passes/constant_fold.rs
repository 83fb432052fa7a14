//! `constant-fold`: evaluate every op whose operands are all constants, through
//! its reference semantics, up to a size limit.

use crate::greedy::{apply_greedily, GreedyConfig};
use crate::pattern::PatternSet;
use ge_ir::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::OpData;

pub static INFO: PassInfo = PassInfo {
    name: "constant-fold",
    summary: "Fold constant subgraphs into constants using the reference kernels",
    description: "Whole constant subgraphs fold bottom-up (each folded op makes its users foldable). \
                  Results larger than `size-limit` elements are left unfolded so huge constants are not \
                  materialised. Dead ops left behind are erased.",
    anchor: None,
    options: ConstantFoldOptions::DEFS,
};

#[derive(ge_ir::PassOptions)]
struct ConstantFoldOptions {
    /// largest folded result, in elements
    #[option("size-limit", default = 65536)]
    size_limit: i64,
}

struct ConstantFold {
    cfg: GreedyConfig,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    let o = ConstantFoldOptions::from_options(o);
    Ok(Box::new(ConstantFold {
        cfg: GreedyConfig {
            fold_size_limit: o.size_limit.max(0) as usize,
            ..GreedyConfig::default()
        },
    }))
}

impl Pass for ConstantFold {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, cx: &PassContext) -> PassResult {
        let Some(body) = op.inner.as_deref_mut() else {
            return Ok(());
        };
        apply_greedily(cx.ctx, body, &PatternSet::new(), &self.cfg)
            .map_err(|m| super::fail(op, "constant-fold", m))?;
        Ok(())
    }
}
