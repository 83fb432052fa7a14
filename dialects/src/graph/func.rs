//! Functions, returns and calls.

use crate::interfaces::*;
use ge_ir::attributes::{AttrDict, Attribute};
use ge_ir::body::{Body, OpData, OpId};
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
    ///
    /// Arguments and results carry attribute dictionaries as MLIR's functions do
    /// (`%x: T {ge.name = "input_ids"}`, `-> (T {ge.name = "logits"})`; in the generic
    /// form the `arg_attrs` / `res_attrs` arrays). `ge.name` is the model's name of an
    /// input or output (the ONNX graph input, the TensorFlow `node:port`): the `.om`
    /// records it and the runtime addresses inputs and outputs by it.
    pub Func = "graph.func" {
        attrs {
            /// the function's symbol name
            sym_name: Str,
            /// input and output types
            function_type: Type,
            /// symbol visibility
            sym_visibility: Option<Enum(&["public", "private", "nested"])>,
            /// one attribute dictionary per argument (MLIR's `arg_attrs`)
            arg_attrs: Option<Any>,
            /// one attribute dictionary per result (MLIR's `res_attrs`)
            res_attrs: Option<Any>,
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
    let mut in_attrs = vec![];
    if !p.try_punct(")") {
        loop {
            if p.peek_operand() {
                let a = p.parse_arg_decl()?;
                inputs.push(a.ty);
                in_attrs.push(a.attrs);
                args.push(a);
            } else {
                inputs.push(p.parse_type()?);
                in_attrs.push(p.parse_optional_arg_attrs());
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
    let mut results = vec![];
    let mut out_attrs = vec![];
    if p.try_punct("->") {
        if p.try_punct("(") {
            if !p.try_punct(")") {
                loop {
                    results.push(p.parse_type()?);
                    out_attrs.push(p.parse_optional_arg_attrs());
                    if !p.try_punct(",") {
                        break;
                    }
                }
                p.expect_punct(")")?;
            }
        } else {
            results.push(p.parse_type()?);
        }
    }
    p.add_attr(
        "function_type",
        Attribute::ty(Type::function(&inputs, &results)),
        span.clone(),
    )?;
    for (key, list) in [(ARG_ATTRS, in_attrs), (RES_ATTRS, out_attrs)] {
        if let Some(a) = attr_array(&list) {
            p.add_attr(key, a, span.clone())?;
        }
    }
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
    let (in_attrs, out_attrs) = (dicts(d.attr(ARG_ATTRS)), dicts(d.attr(RES_ATTRS)));
    // Printed inline only when they fit the signature; otherwise (bad IR
    // being printed for a diagnostic) they stay in the attribute dictionary.
    let inline_in = in_attrs.as_ref().is_some_and(|a| a.len() == inputs.len());
    let inline_out = out_attrs.as_ref().is_some_and(|a| a.len() == results.len());
    let in_attrs = in_attrs.filter(|_| inline_in).unwrap_or_default();
    let out_attrs = out_attrs.filter(|_| inline_out).unwrap_or_default();
    if has_body {
        pr.entry_arg_decls_with_attrs(op, &in_attrs);
    } else {
        for (i, &t) in inputs.iter().enumerate() {
            if i > 0 {
                pr.write(", ");
            }
            pr.ty(t);
            pr.arg_attrs(in_attrs.get(i).copied().flatten());
        }
    }
    pr.write(")");
    if !results.is_empty() {
        pr.write(" -> ");
        if results.len() == 1 && results[0].as_function().is_none() && out_attrs.is_empty() {
            pr.ty(results[0]);
        } else {
            pr.write("(");
            for (i, &t) in results.iter().enumerate() {
                if i > 0 {
                    pr.write(", ");
                }
                pr.ty(t);
                pr.arg_attrs(out_attrs.get(i).copied().flatten());
            }
            pr.write(")");
        }
    }
    let mut skip = vec!["sym_name", "function_type", "sym_visibility"];
    if inline_in {
        skip.push(ARG_ATTRS);
    }
    if inline_out {
        skip.push(RES_ATTRS);
    }
    pr.attr_dict(op, &skip, true);
    if has_body {
        pr.write(" ");
        let r = pr.body.op(op).regions()[0];
        pr.region(op, r, false);
    }
}

/// MLIR's attribute of a function holding its arguments' attribute dictionaries.
pub const ARG_ATTRS: &str = "arg_attrs";
/// MLIR's attribute of a function holding its results' attribute dictionaries.
pub const RES_ATTRS: &str = "res_attrs";
/// The argument/result attribute naming a model input or output.
pub const NAME_ATTR: &str = "ge.name";
/// The longest input or output name accepted (bytes): names come from
/// untrusted model files and end up in every message about an input.
pub const MAX_IO_NAME_BYTES: usize = 1024;

/// `[{...}, {}, ...]` from per-position dictionaries; `None` when all are empty
/// (MLIR leaves the attribute out then).
fn attr_array(list: &[Option<AttrDict>]) -> Option<Attribute> {
    if list.iter().all(|d| d.is_none_or(|d| d.is_empty())) {
        return None;
    }
    Some(Attribute::array(
        list.iter()
            .map(|d| Attribute::dict(d.unwrap_or_else(AttrDict::empty)))
            .collect(),
    ))
}

/// The dictionaries of an `arg_attrs` / `res_attrs` value (`None` when it is
/// absent or not an array of dictionaries).
fn dicts(a: Option<Attribute>) -> Option<Vec<Option<AttrDict>>> {
    a?.as_array()?
        .iter()
        .map(|x| x.as_dict().map(Some))
        .collect()
}

/// The names (`ge.name`) of a function's inputs and outputs, `None` where a
/// position has none.
pub fn io_names(d: &OpData) -> (Vec<Option<String>>, Vec<Option<String>>) {
    let (n_in, n_out) = Func::attrs(d)
        .function_type()
        .and_then(|t| t.as_function())
        .map_or((0, 0), |(i, o)| (i.len(), o.len()));
    let names = |key: &str, n: usize| -> Vec<Option<String>> {
        let ds = dicts(d.attr(key)).unwrap_or_default();
        (0..n)
            .map(|i| {
                ds.get(i)
                    .copied()
                    .flatten()
                    .and_then(|x| x.get(NAME_ATTR))
                    .and_then(|a| a.as_str())
                    .map(str::to_string)
            })
            .collect()
    };
    (names(ARG_ATTRS, n_in), names(RES_ATTRS, n_out))
}

/// The names of a function's inputs and outputs, unnamed positions called
/// `argN` / `outN` (what an `.om` of a function without names records).
pub fn io_names_or_default(d: &OpData) -> (Vec<String>, Vec<String>) {
    let (i, o) = io_names(d);
    let fill = |v: Vec<Option<String>>, prefix: &str| -> Vec<String> {
        v.into_iter()
            .enumerate()
            .map(|(k, n)| n.unwrap_or_else(|| format!("{prefix}{k}")))
            .collect()
    };
    (fill(i, "arg"), fill(o, "out"))
}

/// Set the `ge.name` of every input and output of function `f` (keeping the
/// other argument/result attributes). An empty slice leaves that side alone.
pub fn set_io_names(body: &mut Body, f: OpId, inputs: &[String], outputs: &[String]) {
    for (key, names) in [(ARG_ATTRS, inputs), (RES_ATTRS, outputs)] {
        if names.is_empty() {
            continue;
        }
        let old = dicts(body.op(f).attr(key)).unwrap_or_default();
        let list: Vec<Option<AttrDict>> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let d = old
                    .get(i)
                    .copied()
                    .flatten()
                    .unwrap_or_else(AttrDict::empty);
                Some(d.with(ge_ir::Ident::new(NAME_ATTR), Attribute::string(n)))
            })
            .collect();
        if let Some(a) = attr_array(&list) {
            body.set_attr(f, key, a);
        }
    }
}

/// Check the input (or output, as `kind` says) names of a model: each one
/// non-empty, at most [`MAX_IO_NAME_BYTES`] bytes, free of control
/// characters, and no two the same. The error names the offending one.
pub fn check_io_names<'a>(
    kind: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for (i, n) in names.into_iter().enumerate() {
        if n.is_empty() {
            return Err(format!("{kind} #{i} has an empty name"));
        }
        if n.len() > MAX_IO_NAME_BYTES {
            let mut cut = 40;
            while !n.is_char_boundary(cut) {
                cut -= 1;
            }
            return Err(format!(
                "{kind} #{i}'s name ('{}…') is {} bytes, more than the {MAX_IO_NAME_BYTES} allowed",
                &n[..cut],
                n.len()
            ));
        }
        if n.chars().any(char::is_control) {
            return Err(format!(
                "{kind} #{i}'s name {n:?} contains a control character"
            ));
        }
        if !seen.insert(n) {
            return Err(format!("{kind} name '{n}' occurs more than once"));
        }
    }
    Ok(())
}

/// `arg_attrs` / `res_attrs`: an array of dictionaries, one per input /
/// output, with well-formed, distinct `ge.name`s.
fn verify_io_attrs(d: &OpData, n_in: usize, n_out: usize) -> Result<(), OpError> {
    for (key, n, kind) in [(ARG_ATTRS, n_in, "input"), (RES_ATTRS, n_out, "output")] {
        let Some(a) = d.attr(key) else { continue };
        let Some(list) = dicts(Some(a)) else {
            return Err(format!("'{key}' must be an array of dictionaries").into());
        };
        if list.len() != n {
            return Err(format!(
                "'{key}' has {} entries but the function has {n} {kind}s",
                list.len()
            )
            .into());
        }
        let mut names = vec![];
        for (i, dict) in list.iter().enumerate() {
            match dict.and_then(|x| x.get(NAME_ATTR)).map(|a| a.as_str()) {
                None => {}
                Some(Some(s)) => names.push(s),
                Some(None) => {
                    return Err(format!("{kind} #{i}: '{NAME_ATTR}' must be a string").into())
                }
            }
        }
        check_io_names(kind, names)?;
    }
    Ok(())
}

/// The input and output types of a function-like op.
/// A new `graph.func` appended to `m`, with an empty entry block: the op,
/// its body and that block (importers and `graph.specialize` build their
/// functions this way; the caller sets `sym_name` and `function_type`).
pub fn new_function<'m>(
    ctx: &ge_ir::Context,
    m: &'m mut ge_ir::Module,
    loc: ge_ir::Location,
) -> Result<(OpId, &'m mut Body, ge_ir::body::BlockId), String> {
    let mut st = ge_ir::body::OpState::new(Func::NAME, loc);
    st.def = ctx.op_def(Func::NAME);
    st.num_regions = 1;
    let block = m.block();
    let body = m.body_mut();
    let func = body.create_op(st);
    body.append_op(block, func);
    let inner = body.inner_mut(func).ok_or("graph.func has no body")?;
    let r = inner.root_regions()[0];
    let entry = inner.add_block(r);
    Ok((func, inner, entry))
}

pub fn function_signature(body: &Body, op: OpId) -> Option<(&'static [Type], &'static [Type])> {
    Func::attrs(body.op(op)).function_type()?.as_function()
}

fn verify_func(body: &Body, op: OpId) -> Result<(), OpError> {
    let d = body.op(op);
    let Some((inputs, results)) = function_signature(body, op) else {
        return Err("attribute 'function_type' must be a function type".into());
    };
    verify_io_attrs(d, inputs.len(), results.len())?;
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
