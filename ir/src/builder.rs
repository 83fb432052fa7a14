//! Building IR from Rust: attribute defaults, result-type inference and a
//! builder with an insertion point (MLIR's `OpBuilder`).

use crate::attributes::{AttrDict, Attribute, NamedAttr};
use crate::body::{BlockId, Body, OpId, OpState, ValueId};
use crate::context::Context;
use crate::ident::Ident;
use crate::location::Location;
use crate::opdef::{AttrDef, InferCtx, OpDef, Trait};
use crate::types::Type;

/// Add every missing attribute that has a default.
pub fn fill_default_attrs(def: &'static OpDef, attrs: &mut Vec<NamedAttr>) {
    for (ad, dv) in def.attrs.iter().zip(def.default_values()) {
        if let Some(dv) = dv {
            if !attrs.iter().any(|(n, _)| n.as_str() == ad.name) {
                attrs.push((Ident::new(ad.name), *dv));
            }
        }
    }
}

/// Whether `a` equals the attribute's declared default (elided when printing).
pub fn is_default(ad: &AttrDef, a: Attribute) -> bool {
    let Some(text) = ad.default else { return false };
    match crate::parser::parse_attr_str(crate::context::bare(), text) {
        Ok(d) => d == a || (d.as_i64_array().is_some() && d.as_i64_array() == a.as_i64_array()),
        Err(_) => false,
    }
}

/// Infer result types for `def` from operand types and attributes.
pub fn infer_result_types(
    def: &'static OpDef,
    operand_types: &[Type],
    attrs: AttrDict,
    consts: &[Option<Attribute>],
) -> Result<Vec<Type>, String> {
    let sizes = def
        .group_sizes(
            def.operands,
            operand_types.len(),
            attrs
                .get("operand_segment_sizes")
                .and_then(|a| a.as_i64_array())
                .as_deref(),
        )
        .ok_or_else(|| {
            format!(
                "'{}' does not take {} operands",
                def.name,
                operand_types.len()
            )
        })?;
    if let Some(infer) = def.infer {
        let cx = InferCtx {
            operand_types,
            attrs,
            operand_consts: consts,
            group_sizes: &sizes,
            op: None,
        };
        return infer(&cx);
    }
    if def.has_trait(Trait::SameOperandsAndResultType) {
        if let Some(&t) = operand_types.first() {
            return Ok(vec![t; def.results.len()]);
        }
    }
    if def.results.is_empty() {
        return Ok(vec![]);
    }
    Err(format!(
        "cannot infer the result types of '{}'; give them explicitly",
        def.name
    ))
}

/// Where new ops go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InsertPoint {
    End(BlockId),
    Before(OpId),
    Detached,
}

/// Creates ops at an insertion point, filling defaults and inferring types.
pub struct Builder<'a> {
    pub ctx: &'a Context,
    pub body: &'a mut Body,
    pub ip: InsertPoint,
    pub loc: Location,
}

impl<'a> Builder<'a> {
    pub fn new(ctx: &'a Context, body: &'a mut Body, ip: InsertPoint) -> Builder<'a> {
        Builder {
            ctx,
            body,
            ip,
            loc: Location::unknown(),
        }
    }

    pub fn at_end(ctx: &'a Context, body: &'a mut Body, block: BlockId) -> Builder<'a> {
        Builder::new(ctx, body, InsertPoint::End(block))
    }

    pub fn before(ctx: &'a Context, body: &'a mut Body, op: OpId) -> Builder<'a> {
        Builder::new(ctx, body, InsertPoint::Before(op))
    }

    pub fn set_insertion_point(&mut self, ip: InsertPoint) {
        self.ip = ip;
    }

    /// Insert an already-created op at the insertion point.
    pub fn insert(&mut self, op: OpId) -> OpId {
        match self.ip {
            InsertPoint::End(b) => self.body.append_op(b, op),
            InsertPoint::Before(o) => self.body.insert_op_before(o, op),
            InsertPoint::Detached => {}
        }
        op
    }

    /// Create an op by name. Attributes get their defaults; result types are
    /// inferred when `result_types` is `None`.
    pub fn create(
        &mut self,
        name: &str,
        operands: &[ValueId],
        attrs: Vec<(&str, Attribute)>,
        result_types: Option<Vec<Type>>,
        num_regions: usize,
    ) -> Result<OpId, String> {
        let def = self.ctx.op_def(name);
        let mut named: Vec<NamedAttr> =
            attrs.into_iter().map(|(k, v)| (Ident::new(k), v)).collect();
        if let Some(def) = def {
            fill_default_attrs(def, &mut named);
        } else if !self.ctx.allow_unregistered {
            return Err(format!("unregistered operation '{name}'"));
        }
        let attrs = AttrDict::new(named);
        let result_types = match (result_types, def) {
            (Some(t), _) => t,
            (None, Some(def)) => {
                let tys: Vec<Type> = operands.iter().map(|&v| self.body.value_type(v)).collect();
                let consts: Vec<Option<Attribute>> = operands
                    .iter()
                    .map(|&v| constant_value(self.body, v))
                    .collect();
                infer_result_types(def, &tys, attrs, &consts)?
            }
            (None, None) => vec![],
        };
        let st = OpState {
            name: Ident::new(def.map_or(name, |d| d.name)),
            def,
            loc: self.loc,
            operands: operands.to_vec(),
            result_types,
            attrs,
            props: None,
            num_regions,
            successors: vec![],
        };
        let op = self.body.create_op(st);
        Ok(self.insert(op))
    }

    /// Create an op and return its single result.
    pub fn create_value(
        &mut self,
        name: &str,
        operands: &[ValueId],
        attrs: Vec<(&str, Attribute)>,
    ) -> Result<ValueId, String> {
        let op = self.create(name, operands, attrs, None, 0)?;
        self.body
            .op(op)
            .results()
            .first()
            .copied()
            .ok_or_else(|| format!("'{name}' has no result"))
    }
}

/// The constant a value holds, if its defining op is constant-like.
pub fn constant_value(body: &Body, v: ValueId) -> Option<Attribute> {
    let op = body.defining_op(v)?;
    let d = body.op(op);
    if d.has_trait(Trait::ConstantLike) {
        d.attr("value")
    } else {
        None
    }
}
