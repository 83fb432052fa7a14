//! The greedy driver's options, shared by `canonicalize`, `apply-rules` and
//! `algebraic-simplify` (each flattens this struct into its own options, as
//! MLIR's rewrite passes inherit the canonicalizer's options).

use crate::greedy::GreedyConfig;

#[derive(ge_ir::PassOptions, Debug, Clone)]
pub struct GreedyOptions {
    /// seed the worklist top-down
    #[option("top-down", default = true)]
    pub top_down: bool,
    /// fixed-point iterations before giving up
    #[option("max-iterations", default = 10)]
    pub max_iterations: i64,
    /// stop after this many rewrites (-1: no limit)
    #[option("max-num-rewrites", default = -1)]
    pub max_num_rewrites: i64,
    /// re-run after convergence and fail if anything still applies
    #[option("test-convergence", default = false)]
    pub test_convergence: bool,
    /// largest constant (in elements) folding may create
    #[option("fold-size-limit", default = 65536)]
    pub fold_size_limit: i64,
}

impl GreedyOptions {
    /// The driver configuration these options ask for (folding and dead-code
    /// erasure always on).
    pub fn config(&self) -> GreedyConfig {
        GreedyConfig {
            max_iterations: self.max_iterations.max(1) as usize,
            max_num_rewrites: usize::try_from(self.max_num_rewrites).ok(),
            top_down: self.top_down,
            test_convergence: self.test_convergence,
            fold_size_limit: self.fold_size_limit.max(0) as usize,
            ..GreedyConfig::default()
        }
    }
}
