//! The task graph of a function: which top-level ops become tasks, which are
//! no-copy *views* of other buffers, and which tasks depend on which.
//!
//! - **Constants** (`data.constant`, `memory.weight`) become weights.
//! - **Aliases**: `data.reshape`, `squeeze`, `unsqueeze`, `identity` of a
//!   plain-format, non-constant value reinterpret its bytes (same place).
//! - **Concat views**: a `data.concat` whose parts are laid out contiguously
//!   (every dim before the axis is statically 1, static part sizes, plain
//!   formats, slices 32-byte aligned) and whose parts are whole buffers
//!   written by tasks, not already
//!   part of another concat: each producer writes straight into its slice of
//!   the concat's buffer, and the concat itself does nothing.
//! - **Split views**: a `data.split` under the same layout conditions: each
//!   output is a slice of the input's buffer.
//! - Everything else is a **task** (one kernel launch), including copies
//!   (`data.identity {ge.copy}`) inserted so that every model output can be
//!   written in place by its producer.
//!
//! Places form a tree: a value's place is `(parent, byte offset)` up to a
//! *root* value that owns the allocation (a task result, a model input, or a
//! constant). The memory planner places roots; everything else follows.

use crate::error::{AtOp, LowerResult};
use crate::funcs::{inputs_of, Bounds};
use ge_dialects::memory::byte_size_bound;
use ge_ir::body::{BlockId, Body, OpId, ValueDef, ValueId};
use ge_ir::opdef::Trait;
use ge_ir::{Dim, Type};
use std::collections::{HashMap, HashSet};

/// Slices a concat/split view hands out must start at multiples of this
/// (Ascend's DMA alignment); otherwise the op copies.
pub const VIEW_ALIGN: i64 = 32;

/// The attribute marking a `data.identity` that must copy (a task).
pub const COPY_ATTR: &str = "ge.copy";

#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Constant,
    /// Reinterprets the bytes of `src`.
    Alias {
        src: ValueId,
    },
    /// Parts laid out back to back (part root, byte offset of the part).
    ConcatView {
        parts: Vec<ValueId>,
    },
    /// Outputs are slices of `src` at these byte offsets.
    SplitView {
        src: ValueId,
        offsets: Vec<i64>,
    },
    Task,
    Return,
}

/// Where a root value lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootKind {
    /// A model input (function argument `i`).
    Input(usize),
    /// A constant (weight).
    Constant,
    /// Written by a task.
    Task,
}

pub struct TaskGraph {
    pub block: BlockId,
    /// Top-level ops in block order.
    pub ops: Vec<OpId>,
    pub node: HashMap<OpId, Node>,
    /// Tasks in block order.
    pub tasks: Vec<OpId>,
    pub task_index: HashMap<OpId, usize>,
    /// Predecessor tasks of each task (sorted, no repeats).
    pub deps: Vec<Vec<usize>>,
    /// `value → (parent, byte offset in the parent)`.
    pub parent: HashMap<ValueId, (ValueId, i64)>,
    /// Byte size of every value (symbols at their bounds).
    pub size: HashMap<ValueId, i64>,
    /// The function's return op.
    pub ret: Option<OpId>,
}

/// Whether a tensor type's bytes are in plain row-major order (no padded format).
pub fn plain(t: Type) -> bool {
    t.as_tensor().is_some_and(|tt| {
        tt.dims.is_some()
            && tt
                .encoding
                .and_then(|e| e.as_format())
                .is_none_or(|f| !ge_dialects::data::layout::is_padded(f.storage))
    })
}

fn static_dims(t: Type) -> Option<Vec<i64>> {
    t.as_tensor()?.static_shape()
}

fn axis_attr(body: &Body, op: OpId, rank: usize) -> Option<usize> {
    let a = body
        .op(op)
        .attr("axis")
        .and_then(|a| a.as_int())
        .unwrap_or(0);
    let r = rank as i64;
    (a >= -r && a < r).then_some(if a < 0 { a + r } else { a } as usize)
}

/// Every dim before `axis` is statically 1 (so slices along `axis` are contiguous).
fn outer_is_one(t: Type, axis: usize) -> bool {
    t.as_tensor()
        .is_some_and(|tt| tt.shape()[..axis].iter().all(|d| *d == Dim::Static(1)))
}

impl TaskGraph {
    /// Analyse the single block `block` of a function body.
    pub fn build(body: &Body, block: BlockId, bounds: &Bounds) -> LowerResult<TaskGraph> {
        let ops: Vec<OpId> = body.block_ops(block).collect();
        let mut g = TaskGraph {
            block,
            ops: ops.clone(),
            node: HashMap::new(),
            tasks: vec![],
            task_index: HashMap::new(),
            deps: vec![],
            parent: HashMap::new(),
            size: HashMap::new(),
            ret: None,
        };
        let size_of = |v: ValueId| -> Result<i64, String> {
            let t = body.value_type(v);
            if t.as_tensor().is_none() {
                return Err(format!(
                    "lowering needs tensor values, but a value has type '{t}'"
                ));
            }
            byte_size_bound(t, bounds).map_err(|m| {
                if let Some((head, _)) = m.split_once(" (give the arena") {
                    format!("{head}: give the module attribute `ge.symbol_bounds = {{B = 64 : i64}}` (or plan-memory{{symbol-bounds=B=64}})")
                } else {
                    m
                }
            })
        };
        for &a in &body.block(block).args {
            // An argument's error is at its declaration.
            let s = size_of(a).at_op(body.value(a).loc)?;
            g.size.insert(a, s);
        }
        // Concat parts already claimed by a concat view.
        let mut claimed: HashSet<ValueId> = HashSet::new();
        for &op in &ops {
            let d = body.op(op);
            for &r in d.results() {
                let s = size_of(r).at_op(d.loc)?;
                g.size.insert(r, s);
            }
            let name = d.name.as_str();
            let node = if d.has_trait(Trait::ReturnLike) {
                g.ret = Some(op);
                Node::Return
            } else if d.has_trait(Trait::ConstantLike) && d.operands().is_empty() {
                Node::Constant
            } else if d.attr(crate::sync::STREAM_ATTR).is_some() {
                // Scheduled as a task already: stay one (a concat that could
                // also be a view must not change its mind when the ops move).
                Node::Task
            } else {
                g.view_kind(body, op, name, &mut claimed)
                    .unwrap_or(Node::Task)
            };
            match &node {
                Node::Alias { src } => {
                    g.parent.insert(d.results()[0], (*src, 0));
                }
                Node::ConcatView { parts } => {
                    let mut off = 0;
                    for &p in parts {
                        let (root, _) = g.place(p);
                        g.parent.insert(root, (d.results()[0], off));
                        off += g.size[&p];
                    }
                }
                Node::SplitView { src, offsets } => {
                    for (&r, &o) in d.results().iter().zip(offsets) {
                        g.parent.insert(r, (*src, o));
                    }
                }
                _ => {}
            }
            if node == Node::Task {
                g.task_index.insert(op, g.tasks.len());
                g.tasks.push(op);
            }
            g.node.insert(op, node);
        }
        // Dependencies between tasks, through views.
        let mut deps = Vec::with_capacity(g.tasks.len());
        for &t in &g.tasks {
            let mut p: Vec<usize> = inputs_of(body, t)
                .into_iter()
                .flat_map(|v| g.producers(body, v))
                .collect();
            p.sort_unstable();
            p.dedup();
            deps.push(p);
        }
        g.deps = deps;
        Ok(g)
    }

    fn view_kind(
        &self,
        body: &Body,
        op: OpId,
        name: &str,
        claimed: &mut HashSet<ValueId>,
    ) -> Option<Node> {
        let d = body.op(op);
        match name {
            "data.reshape" | "data.squeeze" | "data.unsqueeze" | "data.identity" => {
                if d.attr(COPY_ATTR).is_some() {
                    return None;
                }
                let src = *d.operands().first()?;
                let r = *d.results().first()?;
                let (root, _) = self.place(src);
                let ok = plain(body.value_type(src))
                    && plain(body.value_type(r))
                    && self.root_kind(body, root) != RootKind::Constant;
                ok.then_some(Node::Alias { src })
            }
            "data.concat" => {
                let r = *d.results().first()?;
                let rt = body.value_type(r);
                let axis = axis_attr(body, op, rt.as_tensor()?.rank()?)?;
                if !plain(rt) || !outer_is_one(rt, axis) {
                    return None;
                }
                let mut roots = HashSet::new();
                let mut at = 0;
                for &p in d.operands() {
                    if at % VIEW_ALIGN != 0 {
                        return None;
                    }
                    at += self.size[&p];
                    let (root, off) = self.place(p);
                    let ok = plain(body.value_type(p))
                        && static_dims(body.value_type(p)).is_some()
                        && off == 0
                        && self.size[&p] == self.size[&root]
                        && self.root_kind(body, root) == RootKind::Task
                        && !claimed.contains(&root)
                        && roots.insert(root);
                    if !ok {
                        return None;
                    }
                }
                claimed.extend(roots);
                Some(Node::ConcatView {
                    parts: d.operands().to_vec(),
                })
            }
            "data.split" => {
                let src = *d.operands().first()?;
                let st = body.value_type(src);
                let axis = axis_attr(body, op, st.as_tensor()?.rank()?)?;
                let (root, base) = self.place(src);
                if !plain(st)
                    || !outer_is_one(st, axis)
                    || self.root_kind(body, root) == RootKind::Constant
                {
                    return None;
                }
                let mut offsets = vec![];
                let mut off = 0;
                for &r in d.results() {
                    static_dims(body.value_type(r))?;
                    if (base + off) % VIEW_ALIGN != 0 {
                        return None;
                    }
                    offsets.push(off);
                    off += self.size[&r];
                }
                Some(Node::SplitView { src, offsets })
            }
            _ => None,
        }
    }

    /// The root owning `v`'s bytes and `v`'s byte offset in it.
    pub fn place(&self, mut v: ValueId) -> (ValueId, i64) {
        let mut off = 0;
        while let Some(&(p, o)) = self.parent.get(&v) {
            off += o;
            v = p;
        }
        (v, off)
    }

    /// What kind of root a value is.
    pub fn root_kind(&self, body: &Body, root: ValueId) -> RootKind {
        match body.value(root).def {
            ValueDef::BlockArg { index, .. } => RootKind::Input(index as usize),
            ValueDef::Result { op, .. } => match self.node.get(&op) {
                Some(Node::Constant) => RootKind::Constant,
                _ if body.op(op).has_trait(Trait::ConstantLike) => RootKind::Constant,
                _ => RootKind::Task,
            },
        }
    }

    /// Tasks that write (part of) the bytes `v` reads.
    pub fn producers(&self, body: &Body, v: ValueId) -> Vec<usize> {
        let mut out = vec![];
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            let Some(op) = body.defining_op(v) else {
                continue;
            };
            match self.node.get(&op) {
                Some(Node::Task) => out.push(self.task_index[&op]),
                Some(Node::Alias { src }) => stack.push(*src),
                Some(Node::SplitView { src, .. }) => stack.push(*src),
                Some(Node::ConcatView { parts }) => stack.extend(parts.iter().copied()),
                _ => {}
            }
        }
        out
    }

    /// The tasks that read `v` (directly or through views), in task order.
    pub fn readers(&self, body: &Body, v: ValueId) -> Vec<usize> {
        let mut out = vec![];
        let mut stack = vec![v];
        let mut seen = HashSet::new();
        while let Some(v) = stack.pop() {
            if !seen.insert(v) {
                continue;
            }
            for u in body.uses(v) {
                let mut user = u.op;
                // A use inside a task's region belongs to the task.
                while !self.node.contains_key(&user) {
                    match body.parent_op(user) {
                        Some(p) => user = p,
                        None => break,
                    }
                }
                match self.node.get(&user) {
                    Some(Node::Task) => out.push(self.task_index[&user]),
                    Some(Node::Alias { .. }) | Some(Node::SplitView { .. }) => {
                        stack.extend(body.op(user).results().iter().copied())
                    }
                    Some(Node::ConcatView { .. }) => {
                        stack.extend(body.op(user).results().iter().copied())
                    }
                    _ => {}
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The return op's operands (the model outputs).
    pub fn outputs(&self, body: &Body) -> Vec<ValueId> {
        self.ret
            .map(|r| body.op(r).operands().to_vec())
            .unwrap_or_default()
    }
}

/// Make every model output writable in place by its producer: outputs that
/// are model inputs, constants, slices of a bigger buffer, or a buffer
/// already returned get a copy (`data.identity {ge.copy}`) before the
/// return. Idempotent. Returns whether it changed the function.
pub fn prepare_outputs(
    ctx: &ge_ir::Context,
    body: &mut Body,
    block: BlockId,
    bounds: &Bounds,
) -> LowerResult<bool> {
    let g = TaskGraph::build(body, block, bounds)?;
    let Some(ret) = g.ret else {
        return Ok(false);
    };
    let outs = g.outputs(body);
    let mut claimed = HashSet::new();
    let mut changed = false;
    for (i, &v) in outs.iter().enumerate() {
        let (root, off) = g.place(v);
        let ok = g.root_kind(body, root) == RootKind::Task
            && off == 0
            && g.size[&v] == g.size[&root]
            && claimed.insert(root)
            // A concat part's root is the concat: covered by the checks above.
            ;
        if ok {
            continue;
        }
        let loc = body.op(ret).loc;
        let mut b = ge_ir::builder::Builder::before(ctx, body, ret);
        b.loc = loc;
        let c = b
            .create(
                "data.identity",
                &[v],
                vec![(COPY_ATTR, ge_ir::Attribute::unit())],
                None,
                0,
            )
            .at_op(loc)?;
        let cv = body.result(c, 0);
        body.set_operand(ret, i, cv);
        changed = true;
    }
    Ok(changed)
}
