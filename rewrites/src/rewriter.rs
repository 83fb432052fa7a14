//! The rewriter: the only way patterns change IR. It records what changed so
//! the greedy driver's worklist stays exact.

use ge_ir::attributes::Attribute;
use ge_ir::body::{Body, OpId, ValueId};
use ge_ir::builder::{Builder, InsertPoint};
use ge_ir::opdef::Trait;
use ge_ir::{Context, Location, Type};
use std::collections::HashMap;

/// A change the driver must react to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    Inserted(OpId),
    Erased(OpId),
    Modified(OpId),
}

pub struct Rewriter<'a> {
    pub ctx: &'a Context,
    pub body: &'a mut Body,
    ip: InsertPoint,
    /// Location given to new ops (defaults to the op being rewritten).
    pub loc: Location,
    events: Vec<Event>,
    /// Materialised constants by (value, type), hoisted to the entry block.
    constants: &'a mut HashMap<Attribute, ValueId>,
}

impl<'a> Rewriter<'a> {
    pub fn new(
        ctx: &'a Context,
        body: &'a mut Body,
        constants: &'a mut HashMap<Attribute, ValueId>,
    ) -> Rewriter<'a> {
        Rewriter {
            ctx,
            body,
            ip: InsertPoint::Detached,
            loc: Location::unknown(),
            events: vec![],
            constants,
        }
    }

    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// New ops go right before `op`, with `op`'s location.
    pub fn set_insertion_point_before(&mut self, op: OpId) {
        self.ip = InsertPoint::Before(op);
        self.loc = self.body.op(op).loc;
    }

    pub fn insertion_point(&self) -> InsertPoint {
        self.ip
    }

    /// Create an op at the insertion point (defaults filled, result types
    /// inferred when `None`).
    pub fn create(
        &mut self,
        name: &str,
        operands: &[ValueId],
        attrs: Vec<(&str, Attribute)>,
        result_types: Option<Vec<Type>>,
    ) -> Result<OpId, String> {
        let mut b = Builder::new(self.ctx, self.body, self.ip);
        b.loc = self.loc;
        let op = b.create(name, operands, attrs, result_types, 0)?;
        self.events.push(Event::Inserted(op));
        Ok(op)
    }

    /// Create a single-result op and return its value.
    pub fn create_value(
        &mut self,
        name: &str,
        operands: &[ValueId],
        attrs: Vec<(&str, Attribute)>,
    ) -> Result<ValueId, String> {
        let op = self.create(name, operands, attrs, None)?;
        self.body
            .op(op)
            .results()
            .first()
            .copied()
            .ok_or_else(|| format!("'{name}' has no result"))
    }

    /// A constant value (deduplicated; placed at the start of the body's entry block).
    pub fn constant(&mut self, value: Attribute) -> Result<ValueId, String> {
        // A known constant is reused only if it dominates every op: alive and
        // in the entry block (not in a nested region such as a graph.if branch).
        if let Some(&v) = self.constants.get(&value) {
            if self.body.defining_op(v).is_some_and(|o| {
                self.body.op(o).is_alive() && crate::greedy::in_root_entry(self.body, o)
            }) {
                return Ok(v);
            }
        }
        let name = self
            .ctx
            .constant_op
            .ok_or("no constant op is registered (needed to materialise folded values)")?;
        let ty = value
            .value_type()
            .ok_or_else(|| format!("cannot materialise '{value}' as a constant"))?;
        let root = self
            .body
            .root_regions()
            .first()
            .copied()
            .ok_or("body has no region")?;
        let entry = self
            .body
            .entry_block(root)
            .ok_or("body has no entry block")?;
        let ip = match self.body.block_first_op(entry) {
            Some(first) => InsertPoint::Before(first),
            None => InsertPoint::End(entry),
        };
        let mut b = Builder::new(self.ctx, self.body, ip);
        b.loc = self.loc;
        let op = b.create(name, &[], vec![("value", value)], Some(vec![ty]), 0)?;
        self.events.push(Event::Inserted(op));
        let v = self.body.result(op, 0);
        self.constants.insert(value, v);
        Ok(v)
    }

    /// Replace `op`'s results with `values` and erase it.
    pub fn replace_op(&mut self, op: OpId, values: &[ValueId]) -> Result<(), String> {
        let results = self.body.op(op).results().to_vec();
        if results.len() != values.len() {
            return Err(format!(
                "replacing {} results with {} values",
                results.len(),
                values.len()
            ));
        }
        for (&r, &v) in results.iter().zip(values) {
            self.replace_all_uses(r, v);
        }
        self.erase_op(op);
        Ok(())
    }

    pub fn replace_all_uses(&mut self, old: ValueId, new: ValueId) {
        for u in self.body.users(old) {
            self.events.push(Event::Modified(u));
        }
        self.body.replace_all_uses(old, new);
    }

    /// Erase `op` (its results must be unused).
    pub fn erase_op(&mut self, op: OpId) {
        for &v in self.body.op(op).operands() {
            if let Some(d) = self.body.defining_op(v) {
                self.events.push(Event::Modified(d));
            }
        }
        self.events.push(Event::Erased(op));
        self.body.erase_op(op);
    }

    /// Change an op in place (attributes, operands).
    pub fn modify(&mut self, op: OpId, f: impl FnOnce(&mut Body)) {
        f(self.body);
        self.events.push(Event::Modified(op));
    }

    /// The constant `v` holds, if its defining op is constant-like.
    pub fn constant_of(&self, v: ValueId) -> Option<Attribute> {
        ge_ir::builder::constant_value(self.body, v)
    }

    pub fn is_constant(&self, op: OpId) -> bool {
        self.body.op(op).has_trait(Trait::ConstantLike)
    }
}
