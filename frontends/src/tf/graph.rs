//! TensorFlow graphs as the importer walks them: the nodes of a GraphDef or
//! of a FunctionDef with every input resolved to `(node, output index)`,
//! consumers, and the v1 control-flow frames.
//!
//! GraphDef inputs are `node`, `node:k` or `^node` (a control input).
//! FunctionDef inputs are `arg` (a function argument), `node:out_arg:k` —
//! output `k` of the node's output argument `out_arg`, whose flat index needs
//! the op's output arguments ([`OUTPUT_ARGS`] for the ops with more than one;
//! every other op has one output argument) — or `^node`.

use super::Res;
use crate::error::ImportError;
use crate::proto::tensorflow::{AttrValue, FunctionDef, NodeDef};
use std::collections::HashMap;

/// The output arguments of ops with more than one, in order (each a single
/// tensor). Other ops have one output argument (possibly a list).
pub static OUTPUT_ARGS: &[(&str, &[&str])] = &[
    ("Switch", &["output_false", "output_true"]),
    ("Merge", &["output", "value_index"]),
    (
        "FusedBatchNorm",
        &[
            "y",
            "batch_mean",
            "batch_variance",
            "reserve_space_1",
            "reserve_space_2",
        ],
    ),
    (
        "FusedBatchNormV2",
        &[
            "y",
            "batch_mean",
            "batch_variance",
            "reserve_space_1",
            "reserve_space_2",
        ],
    ),
    (
        "FusedBatchNormV3",
        &[
            "y",
            "batch_mean",
            "batch_variance",
            "reserve_space_1",
            "reserve_space_2",
            "reserve_space_3",
        ],
    ),
    ("TopKV2", &["values", "indices"]),
    ("Unique", &["y", "idx"]),
    ("TensorListPopBack", &["output_handle", "tensor"]),
];

/// A node with resolved inputs.
#[derive(Clone)]
pub struct GNode {
    pub name: String,
    pub op: String,
    /// Data inputs: (node index, output index).
    pub inputs: Vec<(usize, usize)>,
    /// Control inputs (node indices).
    pub ctrl: Vec<usize>,
    pub attrs: HashMap<String, AttrValue>,
}

/// A graph or function body (cloned for a re-import, see `ListShapes`).
#[derive(Clone)]
pub struct Graph {
    pub nodes: Vec<GNode>,
    pub by_name: HashMap<String, usize>,
    /// Functions: the `_Arg` node of each input argument, in order.
    pub args: Vec<usize>,
    /// Functions: the value of each output argument, in order.
    pub rets: Vec<(usize, usize)>,
    consumers: Vec<Vec<usize>>,
    frames: Option<Frames>,
}

/// `name:k` / `name` / `^name` of a GraphDef input.
pub fn parse_graph_input(s: &str) -> (bool, &str, usize) {
    if let Some(c) = s.strip_prefix('^') {
        return (true, c, 0);
    }
    match s.rsplit_once(':') {
        Some((n, i)) if !i.is_empty() && i.chars().all(|c| c.is_ascii_digit()) => {
            (false, n, i.parse().unwrap_or(usize::MAX))
        }
        _ => (false, s, 0),
    }
}

impl Graph {
    fn finish(mut self) -> Graph {
        let mut consumers = vec![vec![]; self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            for &(s, _) in &n.inputs {
                consumers[s].push(i);
            }
            for &s in &n.ctrl {
                consumers[s].push(i);
            }
        }
        for c in &mut consumers {
            c.sort_unstable();
            c.dedup();
        }
        self.consumers = consumers;
        if self.nodes.iter().any(|n| n.op == "Enter") {
            self.frames = Some(Frames::build(&self));
        }
        self
    }

    /// A GraphDef's nodes (node names must be unique; inputs must exist).
    pub fn from_nodes(what: &str, nodes: &[NodeDef]) -> Res<Graph> {
        let mut by_name = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            if n.name.is_empty() || n.op.is_empty() {
                return Err(ImportError::malformed(format!(
                    "{what} has a node without a name or op"
                )));
            }
            if by_name.insert(n.name.clone(), i).is_some() {
                return Err(ImportError::invalid(format!(
                    "{what} has two nodes named '{}'",
                    n.name
                )));
            }
        }
        let mut out = vec![];
        for n in nodes {
            let mut inputs = vec![];
            let mut ctrl = vec![];
            for s in &n.input {
                let (is_ctrl, src, k) = parse_graph_input(s);
                let &j = by_name.get(src).ok_or_else(|| {
                    ImportError::invalid(format!(
                        "node '{}' ({}): input '{s}' is not a node of {what}",
                        n.name, n.op
                    ))
                })?;
                if is_ctrl {
                    ctrl.push(j);
                } else {
                    inputs.push((j, k));
                }
            }
            out.push(GNode {
                name: n.name.clone(),
                op: n.op.clone(),
                inputs,
                ctrl,
                attrs: n.attr.clone(),
            });
        }
        Ok(Graph {
            nodes: out,
            by_name,
            args: vec![],
            rets: vec![],
            consumers: vec![],
            frames: None,
        }
        .finish())
    }

    /// A FunctionDef's body, its input arguments as `_Arg` nodes.
    pub fn from_function(f: &FunctionDef) -> Res<Graph> {
        let sig = f
            .signature
            .as_ref()
            .ok_or_else(|| ImportError::malformed("a library function has no signature"))?;
        let what = format!("function '{}'", sig.name);
        let mut nodes: Vec<GNode> = vec![];
        let mut by_name = HashMap::new();
        let mut args = vec![];
        for a in &sig.input_arg {
            by_name.insert(a.name.clone(), nodes.len());
            args.push(nodes.len());
            nodes.push(GNode {
                name: a.name.clone(),
                op: "_Arg".into(),
                inputs: vec![],
                ctrl: vec![],
                attrs: HashMap::new(),
            });
        }
        for n in &f.node_def {
            if n.name.is_empty() || n.op.is_empty() {
                return Err(ImportError::malformed(format!(
                    "{what} has a node without a name or op"
                )));
            }
            if by_name.insert(n.name.clone(), nodes.len()).is_some() {
                return Err(ImportError::invalid(format!(
                    "{what} has two nodes named '{}'",
                    n.name
                )));
            }
            nodes.push(GNode {
                name: n.name.clone(),
                op: n.op.clone(),
                inputs: vec![],
                ctrl: vec![],
                attrs: n.attr.clone(),
            });
        }
        let resolve = |s: &str, nodes: &[GNode]| -> Res<(bool, usize, usize)> {
            if let Some(c) = s.strip_prefix('^') {
                let &j = by_name.get(c).ok_or_else(|| {
                    ImportError::invalid(format!("{what}: control input '{s}' is not a node"))
                })?;
                return Ok((true, j, 0));
            }
            let mut parts = s.split(':');
            let node = parts.next().unwrap_or("");
            let &j = by_name.get(node).ok_or_else(|| {
                ImportError::invalid(format!("{what}: input '{s}' is not a node"))
            })?;
            let (arg, k) = (parts.next(), parts.next());
            let port = match (arg, k) {
                (None, _) => 0,
                (Some(arg), k) => {
                    let k: usize = match k {
                        Some(k) => k.parse().map_err(|_| {
                            ImportError::invalid(format!("{what}: bad input reference '{s}'"))
                        })?,
                        None => 0,
                    };
                    let op = nodes[j].op.as_str();
                    let base = OUTPUT_ARGS
                        .iter()
                        .find(|(o, _)| *o == op)
                        .and_then(|(_, a)| a.iter().position(|x| *x == arg))
                        .unwrap_or(0);
                    base + k
                }
            };
            Ok((false, j, port))
        };
        let first_node = sig.input_arg.len();
        for (i, n) in f.node_def.iter().enumerate() {
            let mut inputs = vec![];
            let mut ctrl = vec![];
            for s in &n.input {
                let (is_ctrl, j, k) = resolve(s, &nodes)?;
                if is_ctrl {
                    ctrl.push(j);
                } else {
                    inputs.push((j, k));
                }
            }
            nodes[first_node + i].inputs = inputs;
            nodes[first_node + i].ctrl = ctrl;
        }
        let mut rets = vec![];
        for a in &sig.output_arg {
            let r = f.ret.get(&a.name).ok_or_else(|| {
                ImportError::invalid(format!("{what}: output '{}' has no value", a.name))
            })?;
            let (_, j, k) = resolve(r, &nodes)?;
            rets.push((j, k));
        }
        Ok(Graph {
            nodes,
            by_name,
            args,
            rets,
            consumers: vec![],
            frames: None,
        }
        .finish())
    }

    pub fn consumers(&self, n: usize) -> &[usize] {
        &self.consumers[n]
    }

    pub fn s_attr(&self, n: usize, name: &str) -> Option<String> {
        match self.nodes[n].attrs.get(name).and_then(|a| a.value.as_ref()) {
            Some(crate::proto::tensorflow::attr_value::Value::S(b)) => {
                Some(String::from_utf8_lossy(b).into_owned())
            }
            _ => None,
        }
    }

    fn b_attr(&self, n: usize, name: &str) -> bool {
        matches!(
            self.nodes[n].attrs.get(name).and_then(|a| a.value.as_ref()),
            Some(crate::proto::tensorflow::attr_value::Value::B(true))
        )
    }

    /// The v1 control-flow frames, when the graph has any `Enter`.
    pub fn frames(&self) -> Option<&Frames> {
        self.frames.as_ref()
    }
}

/// v1 control-flow frames (TensorFlow's `BuildControlFlowInfo`): a forward
/// walk from the source nodes puts every node in a frame; an `Enter` opens a
/// child frame named by its `frame_name`, the consumers of an `Exit` are back
/// in the parent frame.
#[derive(Clone)]
pub struct Frames {
    /// The frame of each node (0: the graph's own).
    pub of: Vec<usize>,
    pub names: Vec<String>,
}

/// One loop variable of a frame: Enter → Merge ← NextIteration, Merge →
/// Switch → (Exit on port 0, the body on port 1).
pub struct LoopVar {
    pub enter: usize,
    pub merge: usize,
    pub switch: usize,
    pub exit: Option<usize>,
    /// The value NextIteration feeds back.
    pub next: (usize, usize),
}

/// The structure of one while loop.
pub struct Loop {
    pub vars: Vec<LoopVar>,
    /// Loop-invariant inputs (`Enter` with `is_constant`).
    pub invariants: Vec<usize>,
    /// The value LoopCond reads.
    pub cond: (usize, usize),
}

impl Frames {
    fn build(g: &Graph) -> Frames {
        let n = g.nodes.len();
        let mut of: Vec<Option<usize>> = vec![None; n];
        let mut parent: Vec<Option<usize>> = vec![None];
        let mut names = vec![String::new()];
        let mut keyed: HashMap<(usize, String), usize> = HashMap::new();
        let mut queue = std::collections::VecDeque::new();
        for (i, node) in g.nodes.iter().enumerate() {
            if node.inputs.is_empty() && node.ctrl.is_empty() {
                of[i] = Some(0);
                queue.push_back(i);
            }
        }
        while let Some(i) = queue.pop_front() {
            let f = of[i].unwrap_or(0);
            for &m in &g.consumers[i] {
                if of[m].is_some() {
                    continue;
                }
                let mf = if g.nodes[m].op == "Enter" {
                    let name = g.s_attr(m, "frame_name").unwrap_or_default();
                    *keyed.entry((f, name.clone())).or_insert_with(|| {
                        parent.push(Some(f));
                        names.push(name);
                        parent.len() - 1
                    })
                } else if g.nodes[i].op == "Exit" {
                    parent[f].unwrap_or(0)
                } else {
                    f
                };
                of[m] = Some(mf);
                queue.push_back(m);
            }
        }
        Frames {
            of: of.into_iter().map(|f| f.unwrap_or(0)).collect(),
            names,
        }
    }
}

/// The loop of frame `f`, from its Enter nodes.
pub fn loop_of(g: &Graph, frames: &Frames, f: usize) -> Res<Loop> {
    let name = &frames.names[f];
    let err = |m: String| ImportError::unsupported(format!("while loop '{name}': {m}"));
    let mut vars = vec![];
    let mut invariants = vec![];
    let mut cond = None;
    for (i, node) in g.nodes.iter().enumerate() {
        if node.op != "Enter" || frames.of[i] != f {
            continue;
        }
        if g.b_attr(i, "is_constant") {
            invariants.push(i);
            continue;
        }
        let find = |from: usize, op: &str| {
            g.consumers(from)
                .iter()
                .copied()
                .find(|&c| g.nodes[c].op == op && g.nodes[c].inputs.iter().any(|x| x.0 == from))
        };
        let merge =
            find(i, "Merge").ok_or_else(|| err(format!("Enter '{}' feeds no Merge", node.name)))?;
        let switch = find(merge, "Switch")
            .ok_or_else(|| err(format!("Merge '{}' feeds no Switch", g.nodes[merge].name)))?;
        let exit =
            g.consumers(switch).iter().copied().find(|&c| {
                g.nodes[c].op == "Exit" && g.nodes[c].inputs.first() == Some(&(switch, 0))
            });
        let ni = g.nodes[merge]
            .inputs
            .iter()
            .find(|x| g.nodes[x.0].op == "NextIteration")
            .map(|x| x.0)
            .ok_or_else(|| {
                err(format!(
                    "Merge '{}' has no NextIteration",
                    g.nodes[merge].name
                ))
            })?;
        let next = *g.nodes[ni]
            .inputs
            .first()
            .ok_or_else(|| err("a NextIteration without input".into()))?;
        let pred = *g.nodes[switch]
            .inputs
            .get(1)
            .ok_or_else(|| err("a Switch without predicate".into()))?;
        if g.nodes[pred.0].op != "LoopCond" {
            return Err(err(format!(
                "the Switch '{}' is not controlled by a LoopCond",
                g.nodes[switch].name
            )));
        }
        let c = *g.nodes[pred.0]
            .inputs
            .first()
            .ok_or_else(|| err("a LoopCond without input".into()))?;
        if cond.is_some_and(|x| x != c) {
            return Err(err("its Switch nodes disagree on the LoopCond".into()));
        }
        cond = Some(c);
        vars.push(LoopVar {
            enter: i,
            merge,
            switch,
            exit,
            next,
        });
    }
    let cond = cond.ok_or_else(|| err("no loop variables".into()))?;
    Ok(Loop {
        vars,
        invariants,
        cond,
    })
}

/// For a v1 `Merge` of a conditional: the predicate (node, port) and, per
/// Merge input, whether it is the true branch, found by walking back (data
/// and control edges) to the Switch nodes that feed each input.
pub fn cond_of(g: &Graph, merge: usize) -> Res<CondInfo> {
    let m = &g.nodes[merge];
    let err = |s: &str| {
        ImportError::unsupported(format!(
            "node '{}' (Merge): {s} (an unrecognised v1 conditional)",
            m.name
        ))
    };
    // For each input: the (pred, port, switch) of every Switch upstream
    // (through data and control edges, not leaving the loop frame). The
    // conditional's predicate is the one each input reaches through one port
    // only, and the two inputs through opposite ports; switches of nested or
    // earlier conditionals are reached through both ports or by one input only.
    // First stop at the nearest switches (conditionals in sequence on one
    // predicate), then look through them (a conditional nested in a branch).
    for through in [false, true] {
        if let Some(r) = find_pred(g, merge, through) {
            return Ok(r);
        }
    }
    Err(err("no Switch predicate separates its inputs"))
}

type CondInfo = ((usize, usize), Vec<bool>, Vec<usize>);
/// A Switch reached from a Merge input: (its predicate, the port taken, the Switch).
type SwitchHit = ((usize, usize), usize, usize);

fn find_pred(g: &Graph, merge: usize, through: bool) -> Option<CondInfo> {
    let m = &g.nodes[merge];
    let mut per_input: Vec<Vec<SwitchHit>> = vec![];
    for &(src, port) in &m.inputs {
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![(src, port)];
        let mut found = vec![];
        while let Some((n, p)) = stack.pop() {
            if !seen.insert((n, p)) {
                continue;
            }
            let node = &g.nodes[n];
            if node.op == "Switch" {
                if let Some(&pred) = node.inputs.get(1) {
                    found.push((pred, p, n));
                }
                if !through {
                    continue;
                }
            }
            if node.op == "Enter" || node.op == "Merge" && is_loop_merge(g, n) {
                continue;
            }
            for &(s, sp) in &node.inputs {
                stack.push((s, sp));
            }
            for &c in &node.ctrl {
                // A control edge carries no port: a Switch reached this way
                // (not through its Identity pivot) does not count.
                stack.push((c, usize::MAX));
            }
        }
        per_input.push(found);
    }
    if per_input.len() != 2 {
        return None;
    }
    let ports = |v: &[((usize, usize), usize, usize)], pred: (usize, usize)| {
        let mut p: Vec<usize> = v.iter().filter(|x| x.0 == pred).map(|x| x.1).collect();
        p.sort_unstable();
        p.dedup();
        p
    };
    let (a, b) = (&per_input[0], &per_input[1]);
    for &(pred, _, _) in a {
        let (pa, pb) = (ports(a, pred), ports(b, pred));
        if pa.len() == 1 && pb.len() == 1 && pa[0] <= 1 && pb[0] == 1 - pa[0] {
            let switches: Vec<usize> = a
                .iter()
                .chain(b.iter())
                .filter(|x| x.0 == pred)
                .map(|x| x.2)
                .collect();
            return Some((pred, vec![pa[0] == 1, pb[0] == 1], switches));
        }
    }
    None
}

fn is_loop_merge(g: &Graph, n: usize) -> bool {
    g.nodes[n]
        .inputs
        .iter()
        .any(|x| matches!(g.nodes[x.0].op.as_str(), "Enter" | "NextIteration"))
}

pub fn is_loop_merge_node(g: &Graph, n: usize) -> bool {
    is_loop_merge(g, n)
}
