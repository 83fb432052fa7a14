//! Tree ensembles (ONNX ai.onnx.ml TreeEnsemble, opset 5).
//!
//! Interior nodes and leaves are two tables: node `i` compares feature
//! `nodes_featureids[i]` with `nodes_splits[i]` (or tests membership of a set)
//! and goes to its true or false child, each either another node or a leaf
//! (`nodes_trueleafs`/`nodes_falseleafs`); a leaf adds `leaf_weights[j]` to
//! target `leaf_targetids[j]`. Each row of `[N, F]` features walks every tree
//! from its root, and the leaves' weights are aggregated per target (sum,
//! average, min, max) into `[N, n_targets]`. [`TreeParams`] checks the tables
//! (indices in range, no cycles, so every walk ends at a leaf) and is shared
//! by the reference semantics and the runtime's native kernel
//! (runtime/src/kernels/tree_ensemble.rs), which both call [`predict`].

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interfaces::CostCtx;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{AttrSource, InferCtx, OpDef, TypeConstraint as C};
use ge_ir::tensor::{round_f, Tensor};
use ge_ir::{DType, Dim, Type};

type SemResult = Result<Vec<Tensor>, String>;

/// The comparison of an interior node (ONNX's `nodes_modes` codes 0..=6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Leq,
    Lt,
    Gte,
    Gt,
    Eq,
    Neq,
    Member,
}

/// How the leaves of the trees combine per target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregate {
    Average,
    Sum,
    Min,
    Max,
}

/// Where a branch leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Node(usize),
    Leaf(usize),
}

#[derive(Clone, Debug)]
struct TreeNode {
    mode: Mode,
    feature: usize,
    split: f64,
    /// The set of a `Member` node.
    members: Vec<f64>,
    missing_true: bool,
    on_true: Next,
    on_false: Next,
}

/// The checked tables of a `graph.tree_ensemble`.
#[derive(Clone, Debug)]
pub struct TreeParams {
    pub n_targets: usize,
    pub aggregate: Aggregate,
    nodes: Vec<TreeNode>,
    /// (target, weight) of each leaf.
    leaves: Vec<(usize, f64)>,
    roots: Vec<usize>,
    /// One more than the largest feature id (the least `F` of the input).
    pub min_features: usize,
}

fn required<T>(v: Option<T>, name: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("requires attribute '{name}'"))
}

/// How the trees' leaf weights combine (the declaration's enum admits only
/// these names; SUM is its default).
fn aggregate_of(name: &str) -> Aggregate {
    match name {
        "AVERAGE" => Aggregate::Average,
        "MIN" => Aggregate::Min,
        "MAX" => Aggregate::Max,
        _ => Aggregate::Sum,
    }
}

/// The comparison of an ONNX `nodes_modes` entry.
fn mode_of(m: i64) -> Result<Mode, String> {
    Ok(match m {
        0 => Mode::Leq,
        1 => Mode::Lt,
        2 => Mode::Gte,
        3 => Mode::Gt,
        4 => Mode::Eq,
        5 => Mode::Neq,
        6 => Mode::Member,
        m => {
            return Err(format!(
                "attribute 'nodes_modes' entry {m} is not a mode (0..=6)"
            ))
        }
    })
}

/// Every per-node attribute has one entry per node (`nodes_modes` has `n`);
/// `nodes_missing_value_tracks_true` has one or none.
fn check_node_lengths(n: usize, lens: &[(&str, usize)], missing: usize) -> Result<(), String> {
    for &(name, len) in lens {
        if len != n {
            return Err(format!(
                "attribute '{name}' has {len} entries, but 'nodes_modes' has {n} (one per node)"
            ));
        }
    }
    if missing != 0 && missing != n {
        return Err(format!(
            "attribute 'nodes_missing_value_tracks_true' has {missing} entries, but there are {n} nodes"
        ));
    }
    Ok(())
}

/// The (target, weight) of each leaf, targets checked against `n_targets`.
fn leaves_of(
    targets: &[i64],
    weights: &[f64],
    n_targets: usize,
) -> Result<Vec<(usize, f64)>, String> {
    if targets.len() != weights.len() {
        return Err(format!(
            "attributes 'leaf_targetids' ({} entries) and 'leaf_weights' ({}) must have one entry per leaf",
            targets.len(),
            weights.len()
        ));
    }
    targets
        .iter()
        .zip(weights)
        .map(|(&t, &w)| match usize::try_from(t) {
            Ok(t) if t < n_targets => Ok((t, w)),
            _ => Err(format!(
                "leaf target {t} is out of range for 'n_targets' {n_targets}"
            )),
        })
        .collect()
}

/// The largest `n_targets` accepted (a row of the result is allocated).
const MAX_TARGETS: usize = 1 << 24;

impl TreeParams {
    pub fn of(src: &impl AttrSource) -> Result<TreeParams, String> {
        let a = TreeEnsemble::attrs(src);
        let n_targets = required(a.n_targets(), "n_targets")?;
        let n_targets = usize::try_from(n_targets)
            .ok()
            .filter(|&n| n <= MAX_TARGETS)
            .ok_or_else(|| {
                format!("attribute 'n_targets' must be in [0, {MAX_TARGETS}], but got {n_targets}")
            })?;
        let aggregate = aggregate_of(a.aggregate_function());
        let modes = required(a.nodes_modes(), "nodes_modes")?;
        let features = required(a.nodes_featureids(), "nodes_featureids")?;
        let splits = required(a.nodes_splits(), "nodes_splits")?;
        let true_ids = required(a.nodes_truenodeids(), "nodes_truenodeids")?;
        let false_ids = required(a.nodes_falsenodeids(), "nodes_falsenodeids")?;
        let true_leafs = required(a.nodes_trueleafs(), "nodes_trueleafs")?;
        let false_leafs = required(a.nodes_falseleafs(), "nodes_falseleafs")?;
        let missing = a.nodes_missing_value_tracks_true();
        let n = modes.len();
        check_node_lengths(
            n,
            &[
                ("nodes_featureids", features.len()),
                ("nodes_splits", splits.len()),
                ("nodes_truenodeids", true_ids.len()),
                ("nodes_falsenodeids", false_ids.len()),
                ("nodes_trueleafs", true_leafs.len()),
                ("nodes_falseleafs", false_leafs.len()),
            ],
            missing.len(),
        )?;
        let leaves = leaves_of(
            &required(a.leaf_targetids(), "leaf_targetids")?,
            &required(a.leaf_weights(), "leaf_weights")?,
            n_targets,
        )?;
        let next = |id: i64, leaf: i64, what: &str| -> Result<Next, String> {
            let (limit, kind) = match leaf {
                0 => (n, "node"),
                1 => (leaves.len(), "leaf"),
                v => {
                    return Err(format!(
                        "attribute '{what}leafs' entries must be 0 or 1, but got {v}"
                    ))
                }
            };
            match usize::try_from(id) {
                Ok(i) if i < limit && leaf == 1 => Ok(Next::Leaf(i)),
                Ok(i) if i < limit => Ok(Next::Node(i)),
                _ => Err(format!(
                    "attribute '{what}nodeids' entry {id} is out of range for the {limit} {kind}s it indexes"
                )),
            }
        };
        let member_values = a.membership_values();
        let member_counts = a.membership_counts();
        let mut member_sets = member_counts.iter();
        let mut member_at = 0usize;
        let mut nodes = Vec::with_capacity(n);
        for i in 0..n {
            let mode = mode_of(modes[i])?;
            let feature = usize::try_from(features[i])
                .map_err(|_| format!("feature id {} must be >= 0", features[i]))?;
            let mut members = vec![];
            if mode == Mode::Member {
                let count = member_sets.next().ok_or_else(|| {
                    format!(
                        "attribute 'membership_counts' has {} sets, fewer than the set-membership nodes",
                        member_counts.len()
                    )
                })?;
                let end = usize::try_from(*count)
                    .ok()
                    .and_then(|c| member_at.checked_add(c))
                    .filter(|&e| e <= member_values.len())
                    .ok_or_else(|| {
                        format!(
                            "attribute 'membership_counts' {member_counts:?} does not fit the {} 'membership_values'",
                            member_values.len()
                        )
                    })?;
                members = member_values[member_at..end].to_vec();
                member_at = end;
            }
            nodes.push(TreeNode {
                mode,
                feature,
                split: splits[i],
                members,
                missing_true: missing.get(i).is_some_and(|&m| m != 0),
                on_true: next(true_ids[i], true_leafs[i], "nodes_true")?,
                on_false: next(false_ids[i], false_leafs[i], "nodes_false")?,
            });
        }
        if member_sets.next().is_some() || member_at != member_values.len() {
            return Err(format!(
                "attributes 'membership_counts' {member_counts:?} and 'membership_values' ({} values) do not match the set-membership nodes",
                member_values.len()
            ));
        }
        let roots = required(a.tree_roots(), "tree_roots")?
            .into_iter()
            .map(|r| match usize::try_from(r) {
                Ok(r) if r < n => Ok(r),
                _ => Err(format!("tree root {r} is out of range for {n} nodes")),
            })
            .collect::<Result<Vec<_>, String>>()?;
        check_acyclic(&nodes)?;
        let min_features = nodes.iter().map(|t| t.feature + 1).max().unwrap_or(0);
        Ok(TreeParams {
            n_targets,
            aggregate,
            nodes,
            leaves,
            roots,
            min_features,
        })
    }

    /// The leaf a row of features reaches from `root` (the tables are
    /// acyclic, so the walk takes at most one step per node).
    fn leaf(&self, root: usize, x: &[f64]) -> usize {
        let mut at = root;
        loop {
            let t = &self.nodes[at];
            let v = x[t.feature];
            let hit = match t.mode {
                Mode::Leq => v <= t.split,
                Mode::Lt => v < t.split,
                Mode::Gte => v >= t.split,
                Mode::Gt => v > t.split,
                Mode::Eq => v == t.split,
                Mode::Neq => v != t.split,
                Mode::Member => t.members.contains(&v),
            } || (t.missing_true && v.is_nan());
            match if hit { t.on_true } else { t.on_false } {
                Next::Leaf(l) => return l,
                Next::Node(n) => at = n,
            }
        }
    }
}

/// Kahn's algorithm over the node-to-node edges: an error names a node on a
/// cycle (a walk through it would never reach a leaf).
fn check_acyclic(nodes: &[TreeNode]) -> Result<(), String> {
    let children = |t: &TreeNode| {
        [t.on_true, t.on_false].into_iter().filter_map(|n| match n {
            Next::Node(i) => Some(i),
            Next::Leaf(_) => None,
        })
    };
    let mut indegree = vec![0usize; nodes.len()];
    for t in nodes {
        for c in children(t) {
            indegree[c] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..nodes.len()).filter(|&i| indegree[i] == 0).collect();
    let mut seen = 0;
    while let Some(i) = ready.pop() {
        seen += 1;
        for c in children(&nodes[i]) {
            indegree[c] -= 1;
            if indegree[c] == 0 {
                ready.push(c);
            }
        }
    }
    match indegree.iter().position(|&d| d > 0) {
        Some(i) if seen < nodes.len() => Err(format!(
            "node {i} lies on a cycle of 'nodes_truenodeids'/'nodes_falsenodeids': a walk would never reach a leaf"
        )),
        _ => Ok(()),
    }
}

/// The largest finite value of a float type (numpy's `finfo(dtype).max`).
fn largest(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 65504.0,
        DType::BF16 => 3.389_531_389_251_535_5e38,
        DType::F32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

/// Predict `rows` rows of `f` features: `rows x n_targets`, row-major. The
/// aggregation runs tree by tree, each step rounded to `dtype` (the reference
/// accumulates in an array of the input's type).
pub fn predict(p: &TreeParams, x: &[f64], rows: usize, f: usize, dtype: DType) -> Vec<f64> {
    let r = |v: f64| round_f(dtype, v);
    let init = match p.aggregate {
        Aggregate::Sum | Aggregate::Average => 0.0,
        Aggregate::Min => largest(dtype),
        Aggregate::Max => -largest(dtype),
    };
    let trees = p.roots.len() as f64;
    let mut out = vec![init; rows * p.n_targets];
    for (row, acc) in out.chunks_mut(p.n_targets.max(1)).enumerate().take(rows) {
        let xs = &x[row * f..(row + 1) * f];
        for &root in &p.roots {
            let (target, w) = p.leaves[p.leaf(root, xs)];
            let a = &mut acc[target];
            *a = match p.aggregate {
                Aggregate::Sum => r(*a + w),
                Aggregate::Average => r(*a + w / trees),
                Aggregate::Min if w < *a => r(w),
                Aggregate::Max if w > *a => r(w),
                Aggregate::Min | Aggregate::Max => *a,
            };
        }
    }
    out
}

/// Rows and features of an input shape `[N, F]`, checked against the feature
/// ids the trees read.
pub fn tree_rows(p: &TreeParams, shape: &[usize]) -> Result<(usize, usize), String> {
    match shape {
        [n, f] if *f >= p.min_features => Ok((*n, *f)),
        [_, f] => Err(format!(
            "the trees read feature {}, but operand 'input' has {f} features",
            p.min_features - 1
        )),
        _ => Err(format!(
            "operand 'input' must have rank 2 ([N, F]), but has shape {shape:?}"
        )),
    }
}

fn infer_tree_ensemble(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let p = TreeParams::of(cx)?;
    let t = cx.operand_types[0];
    let dt = dtype_of(t)?;
    let Some(d) = dims_rank(t, "input", 2, "N, F")? else {
        return Ok(vec![Type::unranked(dt)]);
    };
    if let Dim::Static(f) = d[1] {
        if (f as usize) < p.min_features {
            return Err(format!(
                "the trees read feature {}, but operand 'input' has {f} features",
                p.min_features - 1
            ));
        }
    }
    Ok(vec![Type::tensor(
        &[d[0], Dim::Static(p.n_targets as i64)],
        dt,
    )])
}

fn sem_tree_ensemble(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    let p = TreeParams::of(cx)?;
    let x = t[0];
    let (rows, f) = tree_rows(&p, &x.shape)?;
    let out = predict(&p, &x.to_f64(), rows, f, x.dtype);
    Ok(vec![Tensor::from_f64(
        vec![rows, p.n_targets],
        x.dtype,
        out,
    )])
}

/// A comparison per tree level per row (the depth is not known here: the
/// node count bounds it).
fn tree_flops(cx: &CostCtx) -> f64 {
    let rows = cx.operand_dims(0).first().copied().unwrap_or(1.0);
    let a = TreeEnsemble::attrs(&cx.attrs);
    let trees = a.tree_roots().map_or(1, |r| r.len()) as f64;
    let nodes = a.nodes_modes().map_or(1, |m| m.len()) as f64;
    rows * trees * (nodes / trees.max(1.0)).log2().max(1.0)
}

def_op! {
    /// A tree ensemble's per-target scores (ONNX ai.onnx.ml TreeEnsemble)
    ///
    /// `input` is `[N, F]` features; the result `[N, n_targets]` of the same type. Node `i`
    /// compares feature `nodes_featureids[i]` with `nodes_splits[i]` by `nodes_modes[i]` (0 `<=`,
    /// 1 `<`, 2 `>=`, 3 `>`, 4 `==`, 5 `!=`, 6 membership of its set) — a NaN feature takes the
    /// true branch where `nodes_missing_value_tracks_true` is 1 — and goes on to node or leaf
    /// `nodes_truenodeids[i]` / `nodes_falsenodeids[i]` (a leaf where `nodes_trueleafs` /
    /// `nodes_falseleafs` is 1). Each row walks every tree from `tree_roots` to a leaf, whose
    /// `leaf_weights` entry is aggregated into target `leaf_targetids` by `aggregate_function`,
    /// tree by tree, rounded to the element type at each step. The sets of the membership nodes
    /// are `membership_values` cut by `membership_counts` (node order); ONNX's NaN-delimited
    /// list becomes the two at import. ONNX's `post_transform` other than NONE is not
    /// supported.
    pub TreeEnsemble = "graph.tree_ensemble" {
        operands { input: C::TensorOf(&[DType::F16, DType::F32, DType::F64]) },
        results { output: C::TensorOf(&[DType::F16, DType::F32, DType::F64]) },
        attrs {
            /// the number of targets (columns of the result)
            n_targets: I64,
            /// how the trees' leaves combine per target
            aggregate_function: Enum(&["AVERAGE", "SUM", "MIN", "MAX"]) = "SUM",
            /// the node each tree starts at
            tree_roots: I64Array,
            /// per node: its comparison, 0..=6 (leq, lt, gte, gt, eq, neq, member)
            nodes_modes: I64Array,
            /// per node: the feature it reads
            nodes_featureids: I64Array,
            /// per node: the value it compares with (unused by membership nodes)
            nodes_splits: F64Array,
            /// per node: the node or leaf of its true branch
            nodes_truenodeids: I64Array,
            /// per node: the node or leaf of its false branch
            nodes_falsenodeids: I64Array,
            /// per node: 1 when its true branch is a leaf
            nodes_trueleafs: I64Array,
            /// per node: 1 when its false branch is a leaf
            nodes_falseleafs: I64Array,
            /// per node: 1 when a NaN feature takes the true branch (empty: none does)
            nodes_missing_value_tracks_true: I64Array = [],
            /// per leaf: the target it adds to
            leaf_targetids: I64Array,
            /// per leaf: its weight
            leaf_weights: F64Array,
            /// the sets of the membership nodes, concatenated in node order
            membership_values: F64Array = [],
            /// the size of each membership node's set, in node order
            membership_counts: I64Array = [],
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_tree_ensemble,
        semantics: sem_tree_ensemble,
        interfaces [
            Cost::vector(tree_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Black,
            KernelFamily::ClassicalMl,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&TREE_ENSEMBLE];
