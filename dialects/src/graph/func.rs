//! Functions, returns and calls.

use crate::interfaces::*;
use ge_ir::attributes::Attribute;
use ge_ir::body::{Body, OpId};
use ge_ir::def_op;
use ge_ir::opdef::{CustomSyntax, OpDef, OpError, Trait};
use ge_ir::parser::{OpParser, PResult};
use ge_ir::printer::OpPrinter;
use ge_ir::types::Type;

def_op! {
    /// A function: a named graph with typed inputs and outputs
    ///
    /// `graph.func @name(%x: T, ...) -> (T, ...) attributes {...} { ... }`. The body's entry
    /// block arguments are the inputs; `graph.return` gives the outputs. Without a body
    /// (`graph.func private @f(T) -> T`) it declares an external function. Functions are
    /// isolated from above and processed in parallel by the pass manager.
    pub Func = "graph.func" {
        attrs {
            /// the function's symbol name
            sym_name: Str,
            /// input and output types
            function_type: Type,
            /// symbol visibility
            sym_visibility: Option<Enum(&["public", "private", "nested"])>,
        },
        regions {
            /// the function body (empty for declarations)
            body,
        },
        traits [IsolatedFromAbove, Symbol, FunctionLike],
        syntax: CustomSyntax { parse: parse_func, print: print_func },
        verify: verify_func,
        interfaces [
            CPU_ENGINES,
        ],
        es(
            none = "a GraphBuilder builds one function: GraphBuilder::new names it, input() adds arguments"
        ),
    }
}

fn parse_func(p: &mut OpParser<'_, '_, '_>) -> PResult<()> {
    for vis in ["private", "public", "nested"] {
        if p.peek_keyword(vis) {
            let span = p.here();
            p.try_keyword(vis);
            p.add_attr("sym_visibility", Attribute::string(vis), span)?;
            break;
        }
    }
    let (name, span) = p.parse_symbol_name()?;
    p.add_attr("sym_name", Attribute::string(&name), span.clone())?;
    p.expect_punct("(")?;
    let mut args = vec![];
    let mut inputs = vec![];
    if !p.try_punct(")") {
        loop {
            if p.peek_operand() {
                let a = p.parse_arg_decl()?;
                inputs.push(a.ty);
                args.push(a);
            } else {
                inputs.push(p.parse_type()?);
            }
            if !p.try_punct(",") {
                break;
            }
        }
        p.expect_punct(")")?;
    }
    if !args.is_empty() && args.len() != inputs.len() {
        return Err(p.error_at(span, "function arguments must all be named or all be types"));
    }
    let results = if p.try_punct("->") {
        if p.peek_punct("(") {
            p.parse_paren_type_list()?
        } else {
            vec![p.parse_type()?]
        }
    } else {
        vec![]
    };
    p.add_attr(
        "function_type",
        Attribute::ty(Type::function(&inputs, &results)),
        span.clone(),
    )?;
    p.parse_optional_attr_dict_with_keyword()?;
    if p.peek_region() {
        if args.is_empty() && !inputs.is_empty() {
            return Err(p.error_at(span, "a function with a body must name its arguments"));
        }
        p.parse_region(&args)?;
    } else {
        p.add_empty_region();
    }
    p.result_types = Some(vec![]);
    Ok(())
}

fn print_func(pr: &mut OpPrinter<'_, '_>, op: OpId) {
    let d = pr.body.op(op);
    let a = Func::attrs(d);
    if let Some(v) = a.sym_visibility() {
        pr.write(" ");
        pr.write(v);
    }
    let name = a.sym_name().unwrap_or("");
    pr.write(" ");
    pr.symbol_name(name);
    let (inputs, results) = a
        .function_type()
        .and_then(|t| t.as_function())
        .unwrap_or((&[], &[]));
    pr.write("(");
    let region_body = d.region_body(pr.body);
    let has_body = d
        .regions()
        .first()
        .is_some_and(|&r| !region_body.region(r).blocks.is_empty());
    if has_body {
        pr.entry_arg_decls(op);
    } else {
        pr.type_list(inputs);
    }
    pr.write(")");
    if !results.is_empty() {
        pr.write(" -> ");
        if results.len() == 1 && results[0].as_function().is_none() {
            pr.ty(results[0]);
        } else {
            pr.write("(");
            pr.type_list(results);
            pr.write(")");
        }
    }
    pr.attr_dict(op, &["sym_name", "function_type", "sym_visibility"], true);
    if has_body {
        pr.write(" ");
        let r = pr.body.op(op).regions()[0];
        pr.region(op, r, false);
    }
}

/// The input and output types of a function-like op.
pub fn function_signature(body: &Body, op: OpId) -> Option<(&'static [Type], &'static [Type])> {
    Func::attrs(body.op(op)).function_type()?.as_function()
}

fn verify_func(body: &Body, op: OpId) -> Result<(), OpError> {
    let d = body.op(op);
    let Some((inputs, results)) = function_signature(body, op) else {
        return Err("attribute 'function_type' must be a function type".into());
    };
    let inner = d.region_body(body);
    let Some(&region) = d.regions().first() else {
        return Ok(());
    };
    let Some(entry) = inner.entry_block(region) else {
        return Ok(());
    };
    let args = &inner.block(entry).args;
    if args.len() != inputs.len() {
        return Err(format!(
            "has {} entry block arguments but its type has {} inputs",
            args.len(),
            inputs.len()
        )
        .into());
    }
    for (i, (&a, &t)) in args.iter().zip(inputs).enumerate() {
        let at = inner.value_type(a);
        if at != t {
            return Err(format!(
                "entry block argument #{i} has type '{at}' but the function type says '{t}'"
            )
            .into());
        }
    }
    for &b in &inner.region(region).blocks {
        let Some(term) = inner.block_last_op(b) else {
            continue;
        };
        let td = inner.op(term);
        if td.def.is_some() && td.has_trait(Trait::Terminator) && !td.has_trait(Trait::ReturnLike) {
            return Err(OpError {
                msg: format!("body must end with 'graph.return', not '{}'", td.name),
                loc: Some(td.loc),
            });
        }
        if !td.has_trait(Trait::ReturnLike) {
            continue;
        }
        let got: Vec<Type> = inner.operand_types(term);
        if got.len() != results.len() {
            return Err(OpError {
                msg: format!(
                    "returns {} values but the function type has {} results",
                    got.len(),
                    results.len()
                ),
                loc: Some(inner.op(term).loc),
            });
        }
        for (i, (g, w)) in got.iter().zip(results).enumerate() {
            if g != w {
                return Err(OpError {
                    msg: format!("return value #{i} has type '{g}' but the function returns '{w}'"),
                    loc: Some(inner.op(term).loc),
                });
            }
        }
    }
    Ok(())
}

def_op! {
    /// Return values from a function
    ///
    /// `graph.return %a, %b : T, T` ends a function body; the values become its outputs.
    pub Return = "graph.return" {
        operands { values: Variadic<Any> },
        traits [Pure, Terminator, ReturnLike],
        format: "attr-dict (operands `:` type(operands))?",
        es(none = "built by GraphBuilder::output"),
    }
}

def_op! {
    /// Call a function
    ///
    /// `graph.call @f(%a) : (T) -> T` calls the `graph.func` named `@f` in the enclosing
    /// module; operand and result types must match the callee's signature. Calls may not
    /// recurse, directly or through other functions: the verifier rejects a cycle in the
    /// module's call graph (nothing would bound its depth).
    pub Call = "graph.call" {
        operands { args: Variadic<Any> },
        results { results: Variadic<Any> },
        attrs {
            /// the function to call
            callee: Symbol,
        },
        traits [CallLike],
        format: "$callee `(` operands `)` attr-dict `:` functional-type(operands, results)",
        interfaces [
            CPU_ENGINES,
        ],
        es(none = "needs a callee in the same module; a GraphBuilder builds a single function"),
    }
}

pub static OPS: &[&OpDef] = &[&FUNC, &RETURN, &CALL];
