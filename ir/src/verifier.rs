//! The verifier: structural rules (arity, types, attributes, terminators,
//! dominance, symbol uniqueness, single blocks) plus each op's own verifier
//! and result-type inference check. Reports every problem it finds.

use crate::body::{BlockId, Body, OpId, RegionId, ValueDef, ValueId};
use crate::diagnostics::{Diagnostic, Pos, Severity};
use crate::module::Module;
use crate::opdef::{Arity, OpDef, Trait};
use crate::types::Type;
use petgraph::algo::dominators;
use petgraph::graph::{DiGraph, NodeIndex};
use rayon::prelude::*;
// FxHash: keys are short strings and small ids, hashed millions of times.
use rustc_hash::FxHashMap as HashMap;

/// Verify a whole module; returns all diagnostics (empty when valid).
pub fn verify_module(m: &Module) -> Vec<Diagnostic> {
    let mut out = verify_op(&m.outer, m.op);
    out.sort_by_key(|d| d.pos.clone().sort_key());
    out
}

trait SortKey {
    fn sort_key(self) -> (u32, u32);
}
impl SortKey for Pos {
    fn sort_key(self) -> (u32, u32) {
        match self {
            Pos::Loc(l) => l.file_line_col().map_or((0, 0), |(_, l, c)| (l, c)),
            Pos::Span { range, .. } => (0, range.start as u32),
            Pos::None => (0, 0),
        }
    }
}

/// Verify `op` (in `body`) and everything nested in it.
pub fn verify_op(body: &Body, op: OpId) -> Vec<Diagnostic> {
    // Nested isolated ops recurse through `verify_inner`: keep deep nesting off the stack limit.
    stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || verify_op_rec(body, op))
}

fn verify_op_rec(body: &Body, op: OpId) -> Vec<Diagnostic> {
    // Whose body this is is not known here: check dominance as in a function
    // (a module's own body is verified through `verify_inner`, which knows).
    verify_tree(body, &[op], false)
}

/// Verify `ops` of `body` and everything nested in them, with one verifier
/// (and one block-order cache) for the whole body; nested isolated bodies
/// are verified independently, in parallel.
fn verify_tree(body: &Body, ops: &[OpId], root_graph: bool) -> Vec<Diagnostic> {
    let check = |ops: &[OpId]| {
        let mut v = Verifier {
            body,
            root_graph,
            out: vec![],
            order: HashMap::default(),
            isolated: vec![],
        };
        for &op in ops {
            v.check_op(op);
        }
        (v.out, v.isolated)
    };
    // Ops holding regions (functions of an unregistered dialect, say) are
    // checked on several threads; a function's own ops are not worth it.
    let with_regions = ops
        .iter()
        .filter(|&&o| !body.op(o).regions().is_empty())
        .take(2)
        .count();
    let parts: Vec<(Vec<Diagnostic>, Vec<OpId>)> = if with_regions > 1 {
        ops.par_chunks(4).map(check).collect()
    } else {
        vec![check(ops)]
    };
    let mut out = vec![];
    let mut isolated = vec![];
    for (d, i) in parts {
        out.extend(d);
        isolated.extend(i);
    }
    let nested: Vec<Diagnostic> = if isolated.len() > 1 {
        isolated
            .par_iter()
            .flat_map(|&o| verify_inner(body, o))
            .collect()
    } else {
        isolated
            .iter()
            .flat_map(|&o| verify_inner(body, o))
            .collect()
    };
    out.extend(nested);
    out
}

/// Verify an isolated op on its own (from a pass-manager thread).
pub fn verify_data(op: &mut crate::body::OpData) -> Vec<Diagnostic> {
    crate::pass::manager::with_scratch(op, |b, id| {
        let d = b.op(id);
        if d.inner.is_none() {
            return verify_op(b, id);
        }
        // The op's own checks need its operands, which live outside; verify
        // the op's attributes/regions and everything inside it.
        let mut out = verify_inner(b, id);
        if let Some(def) = d
            .def
            .filter(|def| def.operands.is_empty() && def.results.is_empty())
        {
            let mut v = Verifier {
                body: b,
                isolated: vec![],
                root_graph: true,
                out: vec![],
                order: HashMap::default(),
            };
            v.check_def(id, def);
            out.extend(v.out);
        }
        out
    })
}

fn verify_inner(body: &Body, op: OpId) -> Vec<Diagnostic> {
    let d = body.op(op);
    let Some(inner) = d.inner.as_deref() else {
        return vec![];
    };
    let mut top = vec![];
    for &r in d.regions() {
        for &b in &inner.region(r).blocks {
            top.extend(inner.block_ops(b));
        }
    }
    let root_graph = may_be_graph_region(d);
    let mut out = stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || {
        verify_tree(inner, &top, root_graph)
    });
    let mut v = Verifier {
        body: inner,
        isolated: vec![],
        root_graph,
        out: vec![],
        order: HashMap::default(),
    };
    v.check_regions_of(op, d.regions(), body);
    out.extend(v.out);
    out
}

struct Verifier<'a> {
    body: &'a Body,
    /// Isolated ops met, whose bodies are verified after this one.
    isolated: Vec<OpId>,
    /// Whether the body's root regions are graph regions (no dominance
    /// between ops of a block): their owner, outside the body, says.
    root_graph: bool,
    out: Vec<Diagnostic>,
    /// Position of each op within its block (filled per block on demand).
    order: HashMap<BlockId, HashMap<OpId, usize>>,
}

fn err(body: &Body, op: OpId, msg: String) -> Diagnostic {
    Diagnostic::at_loc(Severity::Error, msg, body.op(op).loc)
}

impl<'a> Verifier<'a> {
    fn error(&mut self, op: OpId, msg: String) {
        self.out.push(err(self.body, op, msg));
    }

    fn check_op(&mut self, op: OpId) {
        stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || self.check_op_inner(op))
    }

    fn check_op_inner(&mut self, op: OpId) {
        let body = self.body;
        let d = body.op(op);
        if let Some(def) = d.def {
            self.check_def(op, def);
        }
        self.check_dominance(op);
        if d.inner.is_some() {
            self.isolated.push(op);
        } else {
            let regions = d.regions().to_vec();
            self.check_regions_of(op, &regions, body);
            for r in regions {
                for &b in &body.region(r).blocks {
                    for o in body.block_ops(b) {
                        self.check_op(o);
                    }
                }
            }
        }
    }

    /// Terminators and block structure of `op`'s regions (which live in `self.body`).
    fn check_regions_of(&mut self, op: OpId, regions: &[RegionId], owner_body: &Body) {
        let od = owner_body.op(op);
        let name = od.name;
        let loc = od.loc;
        let no_term = od.has_trait(Trait::NoTerminator) || od.def.is_none();
        let single = od.has_trait(Trait::SingleBlock);
        let body = self.body;
        for &r in regions {
            let blocks = &body.region(r).blocks;
            if single && blocks.len() > 1 {
                self.out.push(Diagnostic::at_loc(
                    Severity::Error,
                    format!(
                        "'{name}' expects a single block in its region, found {}",
                        blocks.len()
                    ),
                    loc,
                ));
            }
            let entry = blocks.first().copied();
            for &b in blocks {
                let last = body.block_last_op(b);
                for o in body.block_ops(b) {
                    let od = body.op(o);
                    if entry.is_some_and(|e| od.successors().contains(&e)) {
                        // As in MLIR: the entry block is where the region starts.
                        self.error(
                            o,
                            format!(
                                "'{}' branches to the entry block of its region, which may not have predecessors",
                                od.name
                            ),
                        );
                    }
                    if od.has_trait(Trait::Terminator) && Some(o) != last {
                        self.error(
                            o,
                            format!(
                                "'{}' must be the last operation in the parent block",
                                od.name
                            ),
                        );
                    }
                }
                if no_term {
                    continue;
                }
                match last {
                    None => self.out.push(Diagnostic::at_loc(
                        Severity::Error,
                        format!("empty block in '{name}': expected at least a terminator"),
                        loc,
                    )),
                    Some(l) => {
                        let ld = body.op(l);
                        if ld.def.is_some() && !ld.has_trait(Trait::Terminator) {
                            self.error(
                                l,
                                format!(
                                    "block in '{name}' has no terminator: it ends with '{}'",
                                    ld.name
                                ),
                            );
                        }
                    }
                }
            }
        }
        if od.has_trait(Trait::SymbolTable) {
            self.check_symbols(regions);
        }
    }

    fn check_symbols(&mut self, regions: &[RegionId]) {
        let body = self.body;
        let mut seen: HashMap<&str, OpId> = HashMap::default();
        self.check_symbol_dups(regions, &mut seen);
        // Calls inside the table must name a symbol of it, with matching types.
        let mut calls: Vec<Diagnostic> = vec![];
        let mut check = |b: &Body, o: OpId| {
            let d = b.op(o);
            if !d.has_trait(Trait::CallLike) {
                return;
            }
            let Some(callee) = d.attr("callee").and_then(|a| a.as_symbol()) else {
                return;
            };
            let Some(&f) = seen.get(callee.as_str()) else {
                calls.push(err(
                    b,
                    o,
                    format!(
                        "'{}' calls '@{callee}', which is not defined in the enclosing module",
                        d.name
                    ),
                ));
                return;
            };
            let Some((ins, outs)) = body
                .op(f)
                .attr("function_type")
                .and_then(|a| a.as_type())
                .and_then(|t| t.as_function())
            else {
                return;
            };
            let got_in = b.operand_types(o);
            let got_out = b.result_types(o);
            if got_in != ins || got_out != outs {
                let want = Type::function(ins, outs);
                let got = Type::function(&got_in, &got_out);
                calls.push(
                    err(b, o, format!("'{}' to '@{callee}' has type '{got}' but the callee's type is '{want}'", d.name))
                        .with_note("callee defined here", Pos::Loc(body.op(f).loc)),
                );
            }
        };
        for_each_in_symbol_table(body, regions, &mut check);
        self.out.extend(calls);
        self.check_call_cycles(regions, &seen);
    }

    /// Calls may not recurse, directly or through other functions: nothing
    /// bounds the depth (the interpreter and the runtime would recurse until
    /// they run out of stack). The call graph of the table's symbols must be
    /// acyclic; each cycle is reported once, at its first call in the text,
    /// with the cycle spelled out.
    fn check_call_cycles(&mut self, regions: &[RegionId], symbols: &HashMap<&str, OpId>) {
        let body = self.body;
        let mut graph: DiGraph<&'a str, ()> = DiGraph::new();
        let mut node: HashMap<&'a str, NodeIndex> = HashMap::default();
        let mut index = |g: &mut DiGraph<&'a str, ()>, name: &'a str| {
            *node.entry(name).or_insert_with(|| g.add_node(name))
        };
        // (caller, callee, the call's body and op), in text order.
        let mut calls: Vec<(NodeIndex, NodeIndex, &Body, OpId)> = vec![];
        for &r in regions {
            for &blk in &body.region(r).blocks {
                for f in body.block_ops(blk) {
                    let fd = body.op(f);
                    let Some(caller) = fd.attr("sym_name").and_then(|a| a.as_str()) else {
                        continue;
                    };
                    if fd.has_trait(Trait::SymbolTable) {
                        continue;
                    }
                    let from = index(&mut graph, caller);
                    for_each_in_symbol_table(fd.region_body(body), fd.regions(), &mut |b, o| {
                        let d = b.op(o);
                        if !d.has_trait(Trait::CallLike) {
                            return;
                        }
                        let Some(callee) = d.attr("callee").and_then(|a| a.as_symbol()) else {
                            return;
                        };
                        if !symbols.contains_key(callee.as_str()) {
                            return;
                        }
                        let to = index(&mut graph, callee.as_str());
                        graph.add_edge(from, to, ());
                        calls.push((from, to, b, o));
                    });
                }
            }
        }
        if calls.is_empty() {
            return;
        }
        let mut component = vec![usize::MAX; graph.node_count()];
        for (k, scc) in petgraph::algo::tarjan_scc(&graph).iter().enumerate() {
            for n in scc {
                component[n.index()] = k;
            }
        }
        let mut reported = std::collections::HashSet::new();
        for &(from, to, b, o) in &calls {
            let k = component[from.index()];
            if component[to.index()] != k || !reported.insert(k) {
                continue;
            }
            // The shortest way back from the callee to the caller, inside the cycle.
            let back = petgraph::algo::astar(
                &petgraph::visit::NodeFiltered::from_fn(&graph, |n| component[n.index()] == k),
                to,
                |n| n == from,
                |_| 1,
                |_| 0,
            )
            .map(|(_, path)| path)
            .unwrap_or_default();
            let mut names = vec![format!("@{}", graph[from])];
            names.extend(back.iter().map(|n| format!("@{}", graph[*n])));
            if back.is_empty() {
                names.push(format!("@{}", graph[to]));
            }
            let d = b.op(o);
            self.out.push(err(
                b,
                o,
                format!(
                    "'{}' to '@{}' is recursive: {}; recursive calls are not supported",
                    d.name,
                    graph[to],
                    names.join(" -> ")
                ),
            ));
        }
    }

    fn check_symbol_dups<'b>(&mut self, regions: &[RegionId], seen: &mut HashMap<&'b str, OpId>)
    where
        'a: 'b,
    {
        let body: &'a Body = self.body;
        for &r in regions {
            for &b in &body.region(r).blocks {
                for o in body.block_ops(b) {
                    let Some(name) = body.op(o).attr("sym_name").and_then(|a| a.as_str()) else {
                        continue;
                    };
                    if let Some(&prev) = seen.get(name) {
                        let d = err(body, o, format!("redefinition of symbol named '{name}'"))
                            .with_note(
                                "see existing symbol definition here",
                                Pos::Loc(body.op(prev).loc),
                            );
                        self.out.push(d);
                    } else {
                        seen.insert(name, o);
                    }
                }
            }
        }
    }

    fn check_def(&mut self, op: OpId, def: &'static OpDef) {
        self.check_operands(op, def);
        self.check_results(op, def);
        self.check_attrs(op, def);
        self.check_regions(op, def);
        let ots = self.body.operand_types(op);
        let rts = self.body.result_types(op);
        self.check_shape_traits(op, def, &ots, &rts);
        self.run_op_verifier(op, def);
        // Declared result types must agree with inference.
        if def.infer.is_some() && self.out.is_empty() {
            self.check_inferred_types(op, def, &ots, &rts);
        }
    }

    /// The operand groups: their count (with `operand_segment_sizes`) and type constraints.
    fn check_operands(&mut self, op: OpId, def: &'static OpDef) {
        let body = self.body;
        let d = body.op(op);
        let name = def.name;
        let segs = d
            .attr("operand_segment_sizes")
            .and_then(|a| a.as_i64_array());
        match def.group_sizes(def.operands, d.operands().len(), segs.as_deref()) {
            None => self.error(
                op,
                format!(
                    "'{name}' expects {} operands, but found {}",
                    arity_text(def.operands),
                    d.operands().len()
                ),
            ),
            Some(sizes) => {
                let mut i = 0;
                for (g, n) in def.operands.iter().zip(sizes) {
                    for k in 0..n {
                        let t = body.value_type(d.operands()[i]);
                        if !g.constraint.accepts(t) {
                            let which = if g.arity == Arity::One {
                                format!("operand '{}'", g.name)
                            } else {
                                format!("operand '{}' #{k}", g.name)
                            };
                            self.error(
                                op,
                                format!(
                                    "'{name}' {which} must be {}, but got '{t}'",
                                    g.constraint.describe()
                                ),
                            );
                        }
                        i += 1;
                    }
                }
            }
        }
    }

    /// The result groups: their count and type constraints.
    fn check_results(&mut self, op: OpId, def: &'static OpDef) {
        let body = self.body;
        let d = body.op(op);
        let name = def.name;
        match def.group_sizes(def.results, d.results().len(), None) {
            None => self.error(
                op,
                format!(
                    "'{name}' expects {} results, but found {}",
                    arity_text(def.results),
                    d.results().len()
                ),
            ),
            Some(sizes) => {
                let mut i = 0;
                for (g, n) in def.results.iter().zip(sizes) {
                    for _ in 0..n {
                        let t = body.value_type(d.results()[i]);
                        if !g.constraint.accepts(t) {
                            self.error(
                                op,
                                format!(
                                    "'{name}' result '{}' must be {}, but got '{t}'",
                                    g.name,
                                    g.constraint.describe()
                                ),
                            );
                        }
                        i += 1;
                    }
                }
            }
        }
    }

    /// The declared attributes: present unless defaulted or optional, of their kind.
    fn check_attrs(&mut self, op: OpId, def: &'static OpDef) {
        let body = self.body;
        let d = body.op(op);
        let name = def.name;
        for ad in def.attrs {
            match d.attr(ad.name) {
                None if ad.default.is_none() && !ad.optional => self.error(
                    op,
                    format!(
                        "'{name}' requires attribute '{}' ({})",
                        ad.name,
                        ad.kind.describe()
                    ),
                ),
                Some(a) if !ad.kind.accepts(a) => self.error(
                    op,
                    format!(
                        "'{name}' attribute '{}' must be {}, but got {} '{a}'",
                        ad.name,
                        ad.kind.describe(),
                        a.kind_name()
                    ),
                ),
                _ => {}
            }
        }
    }

    /// The region count (at least it, with `VariadicRegions`).
    fn check_regions(&mut self, op: OpId, def: &'static OpDef) {
        let body = self.body;
        let d = body.op(op);
        let name = def.name;
        let variadic_regions = def.has_trait(Trait::VariadicRegions);
        if d.regions().len() != def.regions.len()
            && !(variadic_regions && d.regions().len() > def.regions.len())
        {
            self.error(
                op,
                format!(
                    "'{name}' expects {}{} regions, but found {}",
                    if variadic_regions { "at least " } else { "" },
                    def.regions.len(),
                    d.regions().len()
                ),
            );
        }
    }

    /// The shape traits: same type, same shape, same operand element type.
    fn check_shape_traits(&mut self, op: OpId, def: &'static OpDef, ots: &[Type], rts: &[Type]) {
        let name = def.name;
        if def.has_trait(Trait::SameOperandsAndResultType) {
            if let Some(&t0) = ots.first().or(rts.first()) {
                if let Some(bad) = ots.iter().chain(rts.iter()).find(|&&t| t != t0) {
                    self.error(op, format!("'{name}' requires all operands and results to have the same type, but '{t0}' differs from '{bad}'"));
                }
            }
        } else if def.has_trait(Trait::SameOperandsAndResultShape) {
            let shape = |t: Type| t.as_tensor().map(|t| t.shape().to_vec());
            if let Some(s0) = ots.first().or(rts.first()).map(|&t| shape(t)) {
                if let Some(bad) = ots.iter().chain(rts.iter()).find(|&&t| shape(t) != s0) {
                    self.error(op, format!("'{name}' requires all operands and results to have the same shape, but '{bad}' differs"));
                }
            }
        }
        if def.has_trait(Trait::SameOperandsElementType) {
            if let Some(d0) = ots.first().and_then(|t| t.dtype()) {
                if let Some(bad) = ots.iter().find(|t| t.dtype() != Some(d0)) {
                    self.error(op, format!("'{name}' requires all operands to have element type '{d0}', but got '{bad}'"));
                }
            }
        }
    }

    /// The op's own `verify` hook; its error is reported at its location (or the op's).
    fn run_op_verifier(&mut self, op: OpId, def: &'static OpDef) {
        let body = self.body;
        let d = body.op(op);
        let name = def.name;
        if let Some(v) = def.verify {
            if let Err(e) = v(body, op) {
                let loc = e.loc.unwrap_or(d.loc);
                self.out.push(Diagnostic::at_loc(
                    Severity::Error,
                    format!("'{name}' {}", e.msg),
                    loc,
                ));
            }
        }
    }

    /// The declared result types agree with the types `infer` gives from the operands.
    fn check_inferred_types(&mut self, op: OpId, def: &'static OpDef, ots: &[Type], rts: &[Type]) {
        let body = self.body;
        let d = body.op(op);
        let name = def.name;
        let consts: Vec<_> = d
            .operands()
            .iter()
            .map(|&v| crate::builder::constant_value(body, v))
            .collect();
        match crate::builder::infer_result_types(def, ots, d.attrs, &consts) {
            Ok(inferred) => {
                if inferred.len() != rts.len() {
                    self.error(
                        op,
                        format!(
                            "'{name}' infers {} results but declares {}",
                            inferred.len(),
                            rts.len()
                        ),
                    );
                } else {
                    for (i, (want, got)) in inferred.iter().zip(rts).enumerate() {
                        if !types_compatible(*want, *got) {
                            self.error(op, format!("'{name}' result #{i} is declared '{got}' but inferred '{want}' from the operands"));
                        }
                    }
                }
            }
            Err(m) => self.error(op, format!("'{name}' {m}")),
        }
    }

    fn block_order(&mut self, b: BlockId) -> &HashMap<OpId, usize> {
        let body = self.body;
        self.order
            .entry(b)
            .or_insert_with(|| body.block_ops(b).enumerate().map(|(i, o)| (o, i)).collect())
    }

    fn check_dominance(&mut self, op: OpId) {
        let body = self.body;
        let operands: Vec<ValueId> = body.op(op).operands().to_vec();
        for (i, v) in operands.into_iter().enumerate() {
            if !self.dominates(v, op) {
                let vd = body.value(v);
                let def_loc = match vd.def {
                    ValueDef::Result { op: d, .. } => body.op(d).loc,
                    ValueDef::BlockArg { .. } => vd.loc,
                };
                let d = err(
                    body,
                    op,
                    format!(
                        "operand #{i} of '{}' does not dominate this use",
                        body.op(op).name
                    ),
                )
                .with_note("operand defined here", Pos::Loc(def_loc));
                self.out.push(d);
            }
        }
    }

    /// Whether the definition of `v` dominates `user`.
    fn dominates(&mut self, v: ValueId, user: OpId) -> bool {
        let body = self.body;
        let (def_block, def_op) = match body.value(v).def {
            ValueDef::Result { op, .. } => match body.op(op).parent_block() {
                Some(b) => (b, Some(op)),
                None => return false,
            },
            ValueDef::BlockArg { block, .. } => (block, None),
        };
        // Walk up from the user to the ancestor in the def's region.
        let def_region = body.block_parent(def_block);
        let mut cur = user;
        loop {
            let Some(ub) = body.op(cur).parent_block() else {
                return false;
            };
            if body.block_parent(ub) == def_region {
                if ub == def_block {
                    return match def_op {
                        None => true,
                        Some(d) => {
                            if self.in_graph_region(ub) {
                                return true;
                            }
                            let ord = self.block_order(ub);
                            ord.get(&d) < ord.get(&cur)
                        }
                    };
                }
                return match def_region {
                    Some(r) => self.block_dominates(r, def_block, ub),
                    None => false,
                };
            }
            match body.block_parent_op(ub) {
                Some(p) => cur = p,
                None => return false,
            }
        }
    }

    fn in_graph_region(&self, b: BlockId) -> bool {
        match self.body.block_parent_op(b) {
            Some(p) => may_be_graph_region(self.body.op(p)),
            None => self.root_graph,
        }
    }

    fn block_dominates(&self, r: RegionId, a: BlockId, b: BlockId) -> bool {
        let body = self.body;
        let blocks = &body.region(r).blocks;
        let mut g: DiGraph<BlockId, ()> = DiGraph::new();
        let idx: HashMap<BlockId, NodeIndex> = blocks.iter().map(|&b| (b, g.add_node(b))).collect();
        for &blk in blocks {
            if let Some(t) = body.block_last_op(blk) {
                for s in body.op(t).successors() {
                    if let (Some(&x), Some(&y)) = (idx.get(&blk), idx.get(s)) {
                        g.add_edge(x, y, ());
                    }
                }
            }
        }
        let Some(&entry) = blocks.first().and_then(|e| idx.get(e)) else {
            return false;
        };
        let doms = dominators::simple_fast(&g, entry);
        let (Some(&na), Some(&nb)) = (idx.get(&a), idx.get(&b)) else {
            return false;
        };
        match doms.dominators(nb) {
            Some(mut it) => it.any(|x| x == na),
            // Unreachable blocks are dominated by everything.
            None => true,
        }
    }
}

/// Whether `op`'s regions may be graph regions, where an op may use a value
/// defined after it in its block: as in MLIR, those of ops with the
/// `GraphRegion` trait (modules) and of every unregistered op.
fn may_be_graph_region(op: &crate::body::OpData) -> bool {
    op.def.is_none() || op.has_trait(Trait::GraphRegion)
}

/// Visit every op nested in `regions` whose nearest symbol table is the op
/// owning them: nested symbol tables are visited but not entered (their calls
/// resolve against their own symbols, and each table is checked once).
fn for_each_in_symbol_table<'b>(
    body: &'b Body,
    regions: &[RegionId],
    f: &mut dyn FnMut(&'b Body, OpId),
) {
    let mut stack: Vec<(&'b Body, RegionId)> = regions.iter().rev().map(|&r| (body, r)).collect();
    while let Some((b, r)) = stack.pop() {
        for &blk in &b.region(r).blocks {
            for o in b.block_ops(blk) {
                f(b, o);
                let d = b.op(o);
                if d.has_trait(Trait::SymbolTable) {
                    continue;
                }
                let rb = d.region_body(b);
                stack.extend(d.regions().iter().rev().map(|&nr| (rb, nr)));
            }
        }
    }
}

fn arity_text(groups: &[crate::opdef::OperandDef]) -> String {
    let fixed = groups.iter().filter(|g| g.arity == Arity::One).count();
    if groups.iter().any(|g| g.arity == Arity::Variadic) {
        format!("at least {fixed}")
    } else if groups.iter().any(|g| g.arity == Arity::Optional) {
        format!("{fixed} to {}", groups.len())
    } else {
        format!("{fixed}")
    }
}

/// Same element type and rank; dims equal or one of them unknown.
pub fn types_compatible(a: Type, b: Type) -> bool {
    if a == b {
        return true;
    }
    match (a.as_tensor(), b.as_tensor()) {
        (Some(x), Some(y)) => {
            if x.dtype != y.dtype || x.encoding != y.encoding {
                return false;
            }
            match (&x.dims, &y.dims) {
                (Some(dx), Some(dy)) => {
                    dx.len() == dy.len() && dx.iter().zip(dy.iter()).all(|(p, q)| p.compatible(*q))
                }
                _ => true,
            }
        }
        _ => false,
    }
}
