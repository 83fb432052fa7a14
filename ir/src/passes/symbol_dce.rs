//! `symbol-dce`: erase private symbols nothing references (transitively).

use crate::attributes::{AttrData, Attribute};
use crate::body::{Body, OpData, OpId, WalkOrder};
use crate::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use std::collections::{HashMap, HashSet};

pub static INFO: PassInfo = PassInfo {
    name: "symbol-dce",
    summary: "Eliminate dead private symbols",
    description: "Public symbols and ops that are not symbols are roots; every symbol they reference \
                  (through symbol-reference attributes anywhere inside them) is live, transitively. \
                  Private symbols (`sym_visibility = \"private\"`) that are not live are erased.",
    anchor: None,
    options: &[],
};

struct SymbolDce;

pub fn make(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(SymbolDce))
}

fn collect_refs(a: Attribute, out: &mut Vec<String>) {
    a.for_each_nested(&mut |x| {
        if let AttrData::Symbol(parts) = x.data() {
            if let Some(p) = parts.first() {
                out.push(p.to_string())
            }
        }
    });
}

/// Symbol names referenced anywhere inside `op` (including nested bodies).
fn refs_in(body: &Body, op: OpId) -> Vec<String> {
    let mut out = vec![];
    let mut visit = |b: &Body, o: OpId| {
        for (k, v) in b.op(o).attrs.entries() {
            if k.as_str() != "sym_name" {
                collect_refs(*v, &mut out);
            }
        }
    };
    visit(body, op);
    let d = body.op(op);
    match d.inner.as_deref() {
        Some(inner) => inner.walk_deep(WalkOrder::Pre, &mut visit),
        None => {
            for &r in d.regions() {
                body.walk_region(r, WalkOrder::Pre, &mut |o| visit(body, o));
            }
        }
    }
    out
}

impl Pass for SymbolDce {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, _cx: &PassContext) -> PassResult {
        let Some(body) = op.inner.as_deref_mut() else {
            return Ok(());
        };
        let top: Vec<OpId> = body
            .root_regions()
            .iter()
            .flat_map(|&r| body.region(r).blocks.clone())
            .flat_map(|b| body.block_ops(b).collect::<Vec<_>>())
            .collect();
        let mut by_name: HashMap<String, OpId> = HashMap::new();
        for &o in &top {
            if let Some(n) = body.op(o).attr("sym_name").and_then(|a| a.as_str()) {
                by_name.insert(n.to_string(), o);
            }
        }
        let is_private = |b: &Body, o: OpId| {
            b.op(o).attr("sym_visibility").and_then(|a| a.as_str()) == Some("private")
        };
        let mut live: HashSet<OpId> = HashSet::new();
        let mut work: Vec<OpId> = top
            .iter()
            .copied()
            .filter(|&o| !is_private(body, o))
            .collect();
        while let Some(o) = work.pop() {
            if !live.insert(o) {
                continue;
            }
            for name in refs_in(body, o) {
                if let Some(&t) = by_name.get(&name) {
                    work.push(t);
                }
            }
        }
        for o in top {
            if !live.contains(&o) {
                body.erase_op(o);
            }
        }
        Ok(())
    }
}
