//! Parsing `.rr` files into [`Rule`]s, with diagnostics pointing into the file.

use super::ast::*;
use super::helpers;
use ge_ir::diagnostics::{Diagnostic, Pos};
use ge_ir::Context;
use pest::iterators::Pair;
use pest::Parser as _;

#[derive(pest_derive::Parser)]
#[grammar = "rr/rr.pest"]
struct RrGrammar;

type R<T> = Result<T, Box<Diagnostic>>;

/// The deepest bracket nesting a rule file may have (rules nest a few levels).
const MAX_RULE_NESTING: usize = 256;

struct Cx<'a> {
    file_id: usize,
    file: &'a str,
}

impl Cx<'_> {
    fn err(&self, span: pest::Span, msg: impl Into<String>) -> Box<Diagnostic> {
        Box::new(Diagnostic::error(
            msg,
            Pos::Span {
                file: self.file_id,
                range: span.start()..span.end(),
            },
        ))
    }
}

fn rule_name(r: &Rule) -> &'static str {
    match r {
        Rule::rule => "'rule'",
        Rule::ident => "a name",
        Rule::opname => "an op name like graph.add",
        Rule::pat | Rule::op_pat => "a pattern: (op ...), ?var, _ or a number",
        Rule::expr | Rule::op_expr => "an expression",
        Rule::aexpr | Rule::atom => "a value",
        Rule::var => "a ?variable",
        Rule::EOI => "end of file",
        Rule::cond => "'if'",
        Rule::attr_pats | Rule::attr_exprs => "'{'",
        _ => "a token",
    }
}

/// Parse a rule file. `ctx` checks that op names exist; `file_id` places
/// diagnostics in the caller's source map.
pub fn parse_rules(
    ctx: &Context,
    file: &str,
    file_id: usize,
    text: &str,
) -> Result<Vec<crate::rr::ast::Rule>, Box<Diagnostic>> {
    let cx = Cx { file_id, file };
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
    let pairs = RrGrammar::parse(Rule::file, text).map_err(|e| {
        let at = match e.location {
            pest::error::InputLocation::Pos(p) => p,
            pest::error::InputLocation::Span((s, _)) => s,
        };
        let msg = match &e.variant {
            pest::error::ErrorVariant::ParsingError { positives, .. } => {
                let mut v: Vec<&str> = positives.iter().map(rule_name).collect();
                v.dedup();
                format!("expected {}", v.join(" or "))
            }
            pest::error::ErrorVariant::CustomError { message } => message.clone(),
        };
        let end = (at + 1).min(text.len()).max(at);
        Box::new(
            Diagnostic::error(
                format!("rule syntax error: {msg}"),
                Pos::Span {
                    file: file_id,
                    range: at..end,
                },
            )
            .with_label("here"),
        )
    })?;
    let mut rules = vec![];
    let mut names: Vec<(String, pest::Span)> = vec![];
    for p in pairs
        .into_iter()
        .next()
        .into_iter()
        .flat_map(|f| f.into_inner())
    {
        if p.as_rule() != Rule::rule {
            continue;
        }
        let r = build_rule(&cx, p.clone())?;
        if let Some((_, prev)) = names.iter().find(|(n, _)| *n == r.name) {
            let d = Diagnostic::error(
                format!("rule '{}' is defined twice", r.name),
                Pos::Span {
                    file: file_id,
                    range: p.as_span().start()..p.as_span().end(),
                },
            )
            .with_note(
                "first defined here",
                Pos::Span {
                    file: file_id,
                    range: prev.start()..prev.end(),
                },
            );
            return Err(Box::new(d));
        }
        names.push((r.name.clone(), p.as_span()));
        validate(ctx, &cx, &r, p)?;
        rules.push(r);
    }
    Ok(rules)
}

fn build_rule(cx: &Cx, p: Pair<Rule>) -> R<crate::rr::ast::Rule> {
    let span = p.as_span();
    let mut name = String::new();
    let mut labels = vec![];
    let mut benefit = 1u16;
    let mut roots = vec![];
    let mut lets = vec![];
    let mut results = vec![];
    let mut cond = None;
    for part in p.into_inner() {
        match part.as_rule() {
            Rule::ident => name = part.as_str().to_string(),
            Rule::labels => labels = part.into_inner().map(|l| l.as_str().to_string()).collect(),
            Rule::benefit => {
                let n = part
                    .clone()
                    .into_inner()
                    .next()
                    .map(|x| x.as_str())
                    .unwrap_or("1");
                benefit = n
                    .parse()
                    .map_err(|_| cx.err(part.as_span(), "benefit must be a number up to 65535"))?;
            }
            Rule::roots => {
                for r in part.into_inner() {
                    roots.push(build_pat(cx, r)?);
                }
            }
            Rule::rhs => {
                for x in part.into_inner() {
                    match x.as_rule() {
                        Rule::let_bind => {
                            let mut it = x.into_inner();
                            let v = it
                                .next()
                                .map(|v| v.as_str().to_string())
                                .unwrap_or_default();
                            let e = it
                                .next()
                                .ok_or_else(|| cx.err(span, "let without a value"))?;
                            lets.push((v, build_expr(cx, e)?));
                        }
                        _ => results.push(build_expr(cx, x)?),
                    }
                }
            }
            Rule::cond => {
                let e = part
                    .clone()
                    .into_inner()
                    .next()
                    .ok_or_else(|| cx.err(part.as_span(), "empty condition"))?;
                cond = Some(build_aexpr(cx, e)?);
            }
            _ => {}
        }
    }
    Ok(crate::rr::ast::Rule {
        name,
        labels,
        benefit,
        roots,
        lets,
        results,
        cond,
        span: span.start()..span.end(),
        file: cx.file.to_string(),
    })
}

fn build_pat(cx: &Cx, p: Pair<Rule>) -> R<Pat> {
    let inner = p
        .clone()
        .into_inner()
        .next()
        .ok_or_else(|| cx.err(p.as_span(), "empty pattern"))?;
    Ok(match inner.as_rule() {
        Rule::var => Pat::Var(inner.as_str().to_string()),
        Rule::wild => Pat::Wild,
        Rule::num => Pat::Num(
            inner
                .as_str()
                .parse()
                .map_err(|_| cx.err(inner.as_span(), "invalid number"))?,
        ),
        Rule::op_pat => {
            let mut name = String::new();
            let mut operands = vec![];
            let mut attrs = vec![];
            let mut bind = None;
            for x in inner.into_inner() {
                match x.as_rule() {
                    Rule::opname => name = x.as_str().to_string(),
                    Rule::pat => operands.push(build_pat(cx, x)?),
                    Rule::attr_pats => {
                        for a in x.into_inner() {
                            let mut it = a.into_inner();
                            let k = it
                                .next()
                                .map(|k| k.as_str().to_string())
                                .unwrap_or_default();
                            let v = it.next().ok_or_else(|| {
                                cx.err(p.as_span(), "attribute pattern without value")
                            })?;
                            attrs.push((k, build_atom(cx, v)?));
                        }
                    }
                    Rule::bind_as => bind = x.into_inner().next().map(|v| v.as_str().to_string()),
                    _ => {}
                }
            }
            Pat::Op(OpPat {
                name,
                operands,
                attrs,
                bind,
            })
        }
        _ => return Err(cx.err(inner.as_span(), "expected a pattern")),
    })
}

fn build_expr(cx: &Cx, p: Pair<Rule>) -> R<Expr> {
    let inner = match p.as_rule() {
        Rule::expr => p
            .clone()
            .into_inner()
            .next()
            .ok_or_else(|| cx.err(p.as_span(), "empty expression"))?,
        _ => p.clone(),
    };
    Ok(match inner.as_rule() {
        Rule::op_expr => {
            let mut name = String::new();
            let mut operands = vec![];
            let mut attrs = vec![];
            for x in inner.into_inner() {
                match x.as_rule() {
                    Rule::opname => name = x.as_str().to_string(),
                    Rule::expr => operands.push(build_expr(cx, x)?),
                    Rule::attr_exprs => {
                        for a in x.into_inner() {
                            let mut it = a.into_inner();
                            let k = it
                                .next()
                                .map(|k| k.as_str().to_string())
                                .unwrap_or_default();
                            let v = it
                                .next()
                                .ok_or_else(|| cx.err(p.as_span(), "attribute without value"))?;
                            attrs.push((k, build_aexpr(cx, v)?));
                        }
                    }
                    _ => {}
                }
            }
            Expr::Op {
                name,
                operands,
                attrs,
            }
        }
        Rule::atom => Expr::A(build_atom(cx, inner)?),
        _ => Expr::A(build_aexpr(cx, inner)?),
    })
}

fn bin_op(s: &str) -> BinOp {
    match s {
        "||" => BinOp::Or,
        "&&" => BinOp::And,
        "==" => BinOp::Eq,
        "!=" => BinOp::Ne,
        "<" => BinOp::Lt,
        "<=" => BinOp::Le,
        ">" => BinOp::Gt,
        ">=" => BinOp::Ge,
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        _ => BinOp::Rem,
    }
}

fn build_aexpr(cx: &Cx, p: Pair<Rule>) -> R<AExpr> {
    match p.as_rule() {
        Rule::aexpr => {
            let i = p
                .clone()
                .into_inner()
                .next()
                .ok_or_else(|| cx.err(p.as_span(), "empty expression"))?;
            build_aexpr(cx, i)
        }
        Rule::or_expr | Rule::and_expr | Rule::cmp_expr | Rule::add_expr | Rule::mul_expr => {
            let mut it = p.clone().into_inner();
            let first = it
                .next()
                .ok_or_else(|| cx.err(p.as_span(), "empty expression"))?;
            let mut acc = build_aexpr(cx, first)?;
            while let (Some(op), Some(rhs)) = (it.next(), it.next()) {
                acc = AExpr::Bin(
                    bin_op(op.as_str()),
                    Box::new(acc),
                    Box::new(build_aexpr(cx, rhs)?),
                );
            }
            Ok(acc)
        }
        Rule::unary => {
            let parts: Vec<Pair<Rule>> = p.clone().into_inner().collect();
            let (ops, atom) = parts.split_at(parts.len().saturating_sub(1));
            let mut e = build_atom(
                cx,
                atom.first()
                    .cloned()
                    .ok_or_else(|| cx.err(p.as_span(), "missing operand"))?,
            )?;
            for op in ops.iter().rev() {
                e = if op.as_str() == "!" {
                    AExpr::Not(Box::new(e))
                } else {
                    AExpr::Neg(Box::new(e))
                };
            }
            Ok(e)
        }
        Rule::atom => build_atom(cx, p),
        _ => Err(cx.err(p.as_span(), "expected an expression")),
    }
}

fn build_atom(cx: &Cx, p: Pair<Rule>) -> R<AExpr> {
    let inner = match p.as_rule() {
        Rule::atom => p
            .clone()
            .into_inner()
            .next()
            .ok_or_else(|| cx.err(p.as_span(), "empty value"))?,
        _ => p.clone(),
    };
    Ok(match inner.as_rule() {
        Rule::var => AExpr::Var(inner.as_str().to_string()),
        Rule::num => {
            let s = inner.as_str();
            if s.contains(['.', 'e', 'E']) {
                AExpr::Float(
                    s.parse()
                        .map_err(|_| cx.err(inner.as_span(), "invalid number"))?,
                )
            } else {
                AExpr::Int(
                    s.parse()
                        .map_err(|_| cx.err(inner.as_span(), "integer out of range"))?,
                )
            }
        }
        Rule::string => AExpr::Str(inner.as_str().trim_matches('"').to_string()),
        Rule::bool_lit => AExpr::Bool(inner.as_str() == "true"),
        Rule::list => AExpr::List(
            inner
                .into_inner()
                .map(|x| build_aexpr(cx, x))
                .collect::<R<Vec<_>>>()?,
        ),
        Rule::call => {
            let mut it = inner.clone().into_inner();
            let name = it
                .next()
                .map(|n| n.as_str().to_string())
                .unwrap_or_default();
            let args = it.map(|x| build_aexpr(cx, x)).collect::<R<Vec<_>>>()?;
            AExpr::Call(name, args)
        }
        Rule::aexpr => build_aexpr(cx, inner)?,
        _ => return Err(cx.err(inner.as_span(), "expected a value")),
    })
}

/// Check op names, variables and helper calls; errors point at the rule.
fn validate(ctx: &Context, cx: &Cx, r: &crate::rr::ast::Rule, p: Pair<Rule>) -> R<()> {
    let span = p.as_span();
    let mut ops = vec![];
    for root in &r.roots {
        root.op_names(&mut ops);
        if !matches!(root, Pat::Op(_)) {
            return Err(cx.err(
                span,
                format!(
                    "rule '{}': every root must be an op pattern `(op ...)`",
                    r.name
                ),
            ));
        }
    }
    for e in r.results.iter().chain(r.lets.iter().map(|(_, e)| e)) {
        e.op_names(&mut ops);
    }
    let unknown: Vec<&String> = ops.iter().filter(|n| ctx.op_def(n).is_none()).collect();
    if let Some(n) = unknown.first() {
        let at = p
            .as_str()
            .find(n.as_str())
            .map_or(span.start(), |i| span.start() + i);
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
        return Err(cx.err(
            span,
            format!(
                "rule '{}' has {} roots but {} replacements",
                r.name,
                r.roots.len(),
                r.results.len()
            ),
        ));
    }
    let mut bound = vec![];
    for root in &r.roots {
        root.vars(&mut bound);
    }
    let check = |vars: Vec<String>, bound: &Vec<String>| -> R<()> {
        for v in vars {
            if !bound.contains(&v) {
                let at = p
                    .as_str()
                    .rfind(v.as_str())
                    .map_or(span.start(), |i| span.start() + i);
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
                return Err(cx.err(
                    span,
                    format!(
                    "rule '{}' calls unknown helper '{name}' (see docs/writing-rewrite-rules.md)",
                    r.name
                ),
                ))
            }
            Some(h) if !h.arity.contains(&arity) => {
                return Err(cx.err(
                    span,
                    format!(
                        "rule '{}': helper '{name}' takes {} arguments, got {arity}",
                        r.name,
                        h.arity_text()
                    ),
                ))
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

fn collect_calls_rule(r: &crate::rr::ast::Rule, out: &mut Vec<(String, usize)>) {
    r.roots.iter().for_each(|p| collect_calls_pat(p, out));
    r.lets.iter().for_each(|(_, e)| collect_calls_expr(e, out));
    r.results.iter().for_each(|e| collect_calls_expr(e, out));
    if let Some(c) = &r.cond {
        collect_calls(c, out);
    }
}
