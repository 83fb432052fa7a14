//! Parsing `.rr` files into [`Rule`]s, with diagnostics pointing into the file:
//! the syntax ([`super::syntax`]), then the checks that need a context (op
//! names exist, variables are bound, helpers are called with their arity).

use super::ast::*;
use super::helpers;
use super::syntax::{self, SyntaxError};
use ge_ir::diagnostics::{Diagnostic, Pos};
use ge_ir::Context;

type R<T> = Result<T, Box<Diagnostic>>;

/// The deepest bracket nesting a rule file may have (rules nest a few levels).
const MAX_RULE_NESTING: usize = 256;

/// A rule's text, for placing diagnostics inside it.
struct Cx<'a> {
    file_id: usize,
    /// The rule's span in its file.
    span: std::ops::Range<usize>,
    /// The rule's text (`span` of the file).
    text: &'a str,
}

impl Cx<'_> {
    fn err(&self, msg: impl Into<String>) -> Box<Diagnostic> {
        Box::new(Diagnostic::error(
            msg,
            Pos::Span {
                file: self.file_id,
                range: self.span.clone(),
            },
        ))
    }
}

fn diagnostic(file_id: usize, e: SyntaxError) -> Box<Diagnostic> {
    let d = Diagnostic::error(
        e.message,
        Pos::Span {
            file: file_id,
            range: e.range,
        },
    );
    Box::new(match e.label {
        Some(l) => d.with_label(l),
        None => d,
    })
}

/// Parse a rule file. `ctx` checks that op names exist; `file_id` places
/// diagnostics in the caller's source map.
pub fn parse_rules(ctx: &Context, file: &str, file_id: usize, text: &str) -> R<Vec<Rule>> {
    // Rules are parsed and built recursively: bound how deep they nest.
    if let Some(at) = ge_ir::parser::nesting::scan(text, MAX_RULE_NESTING).too_deep_at {
        return Err(Box::new(
            Diagnostic::error(
                format!("rule file nested more than {MAX_RULE_NESTING} brackets deep"),
                Pos::Span {
                    file: file_id,
                    range: at..at + 1,
                },
            )
            .with_label("here"),
        ));
    }
    let rules = syntax::rules(file, text).map_err(|e| diagnostic(file_id, e))?;
    checked(
        ctx,
        file_id,
        text,
        rules
            .into_iter()
            .map(|r| r.map_err(|e| diagnostic(file_id, e))),
    )
}

/// The rules of the file `text` (built from it, in order) after the checks
/// that need a context: names are distinct, op names exist, variables are
/// bound, helpers exist and get their arity. The first error is returned.
pub(crate) fn checked(
    ctx: &Context,
    file_id: usize,
    text: &str,
    rules: impl IntoIterator<Item = R<Rule>>,
) -> R<Vec<Rule>> {
    let mut out: Vec<Rule> = vec![];
    for r in rules {
        let r = r?;
        if let Some(prev) = out.iter().find(|p| p.name == r.name) {
            let d = Diagnostic::error(
                format!("rule '{}' is defined twice", r.name),
                Pos::Span {
                    file: file_id,
                    range: r.span.clone(),
                },
            )
            .with_note(
                "first defined here",
                Pos::Span {
                    file: file_id,
                    range: prev.span.clone(),
                },
            );
            return Err(Box::new(d));
        }
        let cx = Cx {
            file_id,
            span: r.span.clone(),
            text: text.get(r.span.clone()).unwrap_or_default(),
        };
        validate(ctx, &cx, &r)?;
        out.push(r);
    }
    Ok(out)
}

/// Check op names, variables and helper calls; errors point at the rule.
fn validate(ctx: &Context, cx: &Cx, r: &Rule) -> R<()> {
    let start = cx.span.start;
    let mut ops = vec![];
    for root in &r.roots {
        root.op_names(&mut ops);
        if !matches!(root, Pat::Op(_)) {
            return Err(cx.err(format!(
                "rule '{}': every root must be an op pattern `(op ...)`",
                r.name
            )));
        }
    }
    for e in r.results.iter().chain(r.lets.iter().map(|(_, e)| e)) {
        e.op_names(&mut ops);
    }
    let unknown: Vec<&String> = ops.iter().filter(|n| ctx.op_def(n).is_none()).collect();
    if let Some(n) = unknown.first() {
        let at = cx.text.find(n.as_str()).map_or(start, |i| start + i);
        return Err(Box::new(
            Diagnostic::error(
                format!("rule '{}' uses unknown op '{n}'", r.name),
                Pos::Span {
                    file: cx.file_id,
                    range: at..at + n.len(),
                },
            )
            .with_label("not a registered op"),
        ));
    }
    if r.results.len() != r.roots.len() {
        return Err(cx.err(format!(
            "rule '{}' has {} roots but {} replacements",
            r.name,
            r.roots.len(),
            r.results.len()
        )));
    }
    let mut bound = vec![];
    for root in &r.roots {
        root.vars(&mut bound);
    }
    let check = |vars: Vec<String>, bound: &Vec<String>| -> R<()> {
        for v in vars {
            if !bound.contains(&v) {
                let at = cx.text.rfind(v.as_str()).map_or(start, |i| start + i);
                return Err(Box::new(
                    Diagnostic::error(
                        format!(
                            "rule '{}': variable '{v}' is not bound by the pattern",
                            r.name
                        ),
                        Pos::Span {
                            file: cx.file_id,
                            range: at..at + v.len(),
                        },
                    )
                    .with_label("unbound"),
                ));
            }
        }
        Ok(())
    };
    if let Some(c) = &r.cond {
        let mut vs = vec![];
        c.vars(&mut vs);
        check(vs, &bound)?;
    }
    for (v, e) in &r.lets {
        let mut vs = vec![];
        e.vars(&mut vs);
        check(vs, &bound)?;
        bound.push(v.clone());
    }
    for e in &r.results {
        let mut vs = vec![];
        e.vars(&mut vs);
        check(vs, &bound)?;
    }
    let mut calls = vec![];
    collect_calls_rule(r, &mut calls);
    for (name, arity) in calls {
        match helpers::lookup(&name) {
            None => {
                return Err(cx.err(format!(
                    "rule '{}' calls unknown helper '{name}' (see docs/writing-rewrite-rules.md)",
                    r.name
                )))
            }
            Some(h) if !h.arity.contains(&arity) => {
                return Err(cx.err(format!(
                    "rule '{}': helper '{name}' takes {} arguments, got {arity}",
                    r.name,
                    h.arity_text()
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

fn collect_calls(e: &AExpr, out: &mut Vec<(String, usize)>) {
    match e {
        AExpr::Call(n, args) => {
            out.push((n.clone(), args.len()));
            args.iter().for_each(|a| collect_calls(a, out));
        }
        AExpr::List(xs) => xs.iter().for_each(|a| collect_calls(a, out)),
        AExpr::Neg(x) | AExpr::Not(x) => collect_calls(x, out),
        AExpr::Bin(_, a, b) => {
            collect_calls(a, out);
            collect_calls(b, out)
        }
        _ => {}
    }
}

fn collect_calls_expr(e: &Expr, out: &mut Vec<(String, usize)>) {
    match e {
        Expr::Op {
            operands, attrs, ..
        } => {
            operands.iter().for_each(|o| collect_calls_expr(o, out));
            attrs.iter().for_each(|(_, a)| collect_calls(a, out));
        }
        Expr::A(a) => collect_calls(a, out),
    }
}

fn collect_calls_pat(p: &Pat, out: &mut Vec<(String, usize)>) {
    if let Pat::Op(o) = p {
        o.operands.iter().for_each(|x| collect_calls_pat(x, out));
        o.attrs.iter().for_each(|(_, a)| collect_calls(a, out));
    }
}

fn collect_calls_rule(r: &Rule, out: &mut Vec<(String, usize)>) {
    r.roots.iter().for_each(|p| collect_calls_pat(p, out));
    r.lets.iter().for_each(|(_, e)| collect_calls_expr(e, out));
    r.results.iter().for_each(|e| collect_calls_expr(e, out));
    if let Some(c) = &r.cond {
        collect_calls(c, out);
    }
}
