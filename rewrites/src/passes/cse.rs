//! `cse`: common subexpression elimination with dominance-scoped tables.
//! Commutative ops are keyed with sorted operands, so `a+b` and `b+a` merge.

use ge_ir::attributes::AttrDict;
use ge_ir::body::{Body, OpId, RegionId, ValueId};
use ge_ir::opdef::Trait;
use ge_ir::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::{Ident, OpData, Type};
use std::collections::HashMap;

pub static INFO: PassInfo = PassInfo {
    name: "cse",
    summary: "Eliminate common subexpressions",
    description: "Replaces a `Pure`, region-free op by an earlier identical one (same name, attributes, \
                  operands — in any order for `Commutative` ops — and result types) that dominates it. \
                  Ops in nested regions reuse ops of enclosing regions, never the other way round.",
    anchor: None,
    options: &[],
};

struct Cse;

pub fn make(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(Cse))
}

#[derive(Hash, PartialEq, Eq, Clone)]
struct Key {
    name: Ident,
    attrs: AttrDict,
    operands: Vec<ValueId>,
    types: Vec<Type>,
}

fn key(body: &Body, op: OpId) -> Option<Key> {
    let d = body.op(op);
    if !d.has_trait(Trait::Pure)
        || !d.regions().is_empty()
        || d.results().is_empty()
        || d.has_trait(Trait::Terminator)
    {
        return None;
    }
    let mut operands = d.operands().to_vec();
    if d.has_trait(Trait::Commutative) {
        operands.sort();
    }
    Some(Key {
        name: d.name,
        attrs: d.attrs,
        operands,
        types: body.result_types(op),
    })
}

/// CSE over a body; returns the number of ops removed.
pub fn cse_body(body: &mut Body) -> usize {
    let mut table: HashMap<Key, OpId> = HashMap::new();
    let mut removed = 0;
    for r in body.root_regions() {
        removed += cse_region(body, r, &mut table);
    }
    removed
}

fn cse_region(body: &mut Body, r: RegionId, table: &mut HashMap<Key, OpId>) -> usize {
    let mut removed = 0;
    let blocks = body.region(r).blocks.clone();
    for (bi, b) in blocks.into_iter().enumerate() {
        // Only the entry block's table flows into later blocks safely only if it
        // dominates them; keep it simple: each non-entry block gets its own scope.
        let mut added: Vec<Key> = vec![];
        let ops: Vec<OpId> = body.block_ops(b).collect();
        for op in ops {
            if !body.op(op).is_alive() {
                continue;
            }
            // Nested regions first see everything known so far.
            let d = body.op(op);
            // Regions nest as deep as the text: grow the stack, not overflow it.
            if d.inner.is_none() {
                for nr in d.regions().to_vec() {
                    let mut scope = table.clone();
                    removed += stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
                        cse_region(body, nr, &mut scope)
                    });
                }
            } else if let Some(inner) = body.inner_mut(op) {
                removed += stacker::maybe_grow(64 * 1024, 1024 * 1024, || cse_body(inner));
            }
            let Some(k) = key(body, op) else { continue };
            match table.get(&k) {
                Some(&prev) if body.op(prev).is_alive() => {
                    let new_vals = body.op(prev).results().to_vec();
                    body.replace_op(op, &new_vals);
                    removed += 1;
                }
                _ => {
                    table.insert(k.clone(), op);
                    added.push(k);
                }
            }
        }
        if bi > 0 {
            for k in added {
                table.remove(&k);
            }
        }
    }
    removed
}

impl Pass for Cse {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, _cx: &PassContext) -> PassResult {
        if let Some(body) = op.inner.as_deref_mut() {
            cse_body(body);
        }
        Ok(())
    }
}
