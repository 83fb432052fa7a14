//! `infer-shapes`: refine result types from the operands with every op's
//! shape-inference hook — unknown (`?`) and unranked (`*`) results become
//! what the operands imply — then refine each function's declared results
//! from what it returns. A declared type that contradicts inference is an
//! error naming both types (the verifier reports the same).

use crate::attributes::Attribute;
use crate::body::{Body, OpData, OpId, WalkOrder};
use crate::builder::{constant_value, infer_result_types};
use crate::diagnostics::Diagnostic;
use crate::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use crate::verifier::types_compatible;
use crate::{Dim, Type};

pub static INFO: PassInfo = PassInfo {
    name: "infer-shapes",
    summary: "Fill unknown and unranked result types from the operands",
    description: "Runs each op's shape-inference hook in program order and replaces `?` dims, \
                  unranked results and less precise symbolic dims by what the operands imply; \
                  a graph.func's declared results are refined from its return. Results that \
                  contradict inference are errors naming the declared and inferred types.",
    anchor: None,
    options: &[],
};

struct InferShapes;

pub fn make(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(InferShapes))
}

/// `declared` with every dim `inferred` knows better (they are compatible).
fn refine(declared: Type, inferred: Type) -> Type {
    let (Some(d), Some(i)) = (declared.as_tensor(), inferred.as_tensor()) else {
        return declared;
    };
    match (&d.dims, &i.dims) {
        (None, Some(_)) => inferred,
        (Some(dd), Some(id)) if dd.len() == id.len() => {
            let dims: Vec<Dim> = dd
                .iter()
                .zip(id.iter())
                .map(|(&a, &b)| match (a, b) {
                    (Dim::Unknown, b) => b,
                    (Dim::Sym(_), Dim::Static(n)) => Dim::Static(n),
                    (a, _) => a,
                })
                .collect();
            declared.with_dims(&dims)
        }
        _ => declared,
    }
}

/// Refine every op of `body` (and nested isolated bodies); returns errors.
fn infer_body(body: &mut Body, errors: &mut Vec<Diagnostic>) {
    for op in body.all_ops(WalkOrder::Pre) {
        if body.inner(op).is_some() {
            let d = body.op_mut(op);
            if let Some(inner) = d.inner.as_deref_mut() {
                // Bodies nest as deep as the text: grow the stack, not overflow it.
                stacker::maybe_grow(64 * 1024, 1024 * 1024, || infer_body(inner, errors));
            }
            refine_signature(d);
            continue;
        }
        infer_op(body, op, errors);
    }
}

fn infer_op(body: &mut Body, op: OpId, errors: &mut Vec<Diagnostic>) {
    let d = body.op(op);
    let Some(def) = d.def else { return };
    if def.infer.is_none() {
        return;
    }
    let ots = body.operand_types(op);
    let consts: Vec<_> = d
        .operands()
        .iter()
        .map(|&v| constant_value(body, v))
        .collect();
    let Ok(inferred) = infer_result_types(def, &ots, d.attrs, &consts) else {
        return; // the verifier reports ops that cannot be inferred
    };
    let results = d.results().to_vec();
    if inferred.len() != results.len() {
        return;
    }
    for (i, (&r, &want)) in results.iter().zip(&inferred).enumerate() {
        let got = body.value_type(r);
        if got == want {
            continue;
        }
        if !types_compatible(want, got) {
            errors.push(Diagnostic::at_loc(
                crate::diagnostics::Severity::Error,
                format!(
                    "infer-shapes: '{}' result #{i} is declared '{got}' but inferred '{want}' from the operands",
                    body.op(op).name
                ),
                body.op(op).loc,
            ));
            continue;
        }
        body.set_value_type(r, refine(got, want));
    }
}

/// A function's declared results from the types its entry block returns.
fn refine_signature(f: &mut OpData) {
    if !f.has_trait(crate::opdef::Trait::FunctionLike) {
        return;
    }
    let Some(ft) = f.attr("function_type").and_then(|a| a.as_type()) else {
        return;
    };
    let Some((ins, outs)) = ft.as_function() else {
        return;
    };
    let (Some(inner), Some(&r)) = (f.inner.as_deref(), f.regions().first()) else {
        return;
    };
    let Some(ret) = inner
        .region(r)
        .blocks
        .first()
        .and_then(|&b| inner.block_last_op(b))
    else {
        return;
    };
    let returned = inner.operand_types(ret);
    if returned.len() != outs.len() {
        return;
    }
    let new_outs: Vec<Type> = outs
        .iter()
        .zip(&returned)
        .map(|(&o, &r)| {
            if types_compatible(o, r) {
                refine(o, r)
            } else {
                o
            }
        })
        .collect();
    if new_outs.as_slice() != outs {
        let ft = Type::function(ins, &new_outs);
        f.attrs = f
            .attrs
            .with(crate::ident::Ident::new("function_type"), Attribute::ty(ft));
    }
}

impl Pass for InferShapes {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, _cx: &PassContext) -> PassResult {
        let mut errors = vec![];
        if let Some(b) = op.inner.as_deref_mut() {
            infer_body(b, &mut errors);
        }
        // The anchor itself may be a function.
        refine_signature(op);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// Run `infer-shapes` over a whole module (for tools and tests); errors are
/// one message per contradiction.
pub fn infer_module(m: &mut crate::Module) -> Result<(), String> {
    let mut errors = vec![];
    let op = m.op;
    let d = m.outer.op_mut(op);
    if let Some(b) = d.inner.as_deref_mut() {
        infer_body(b, &mut errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join("\n"))
    }
}
