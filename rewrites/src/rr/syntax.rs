//! The `.rr` syntax: rule text to the rule IR ([`super::ast`]), with errors
//! as byte ranges of the text. It depends on nothing but pest and the rule IR,
//! so the build script compiles the same code to turn the shipped library
//! into data at build time (`rewrites/build.rs`); [`super::parse`] adds the
//! checks that need a context and turns errors into diagnostics.

use super::ast::{Rule as RrRule, *};
use pest::iterators::Pair;
use pest::Parser as _;
use std::ops::Range;

#[derive(pest_derive::Parser)]
#[grammar = "rr/rr.pest"]
struct RrGrammar;

/// A syntax error: what is wrong and where (a byte range of the text).
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    pub message: String,
    pub range: Range<usize>,
    /// The label under the range (`here` for a pest error), if any.
    pub label: Option<&'static str>,
}

type R<T> = Result<T, SyntaxError>;

struct Cx<'a> {
    file: &'a str,
}

impl Cx<'_> {
    fn err(&self, span: pest::Span, msg: impl Into<String>) -> SyntaxError {
        SyntaxError {
            message: msg.into(),
            range: span.start()..span.end(),
            label: None,
        }
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

/// The rules of `text` (named `file` in each rule), in order: `Err` when
/// the text does not parse; otherwise one result per rule, `Err` when that
/// rule's parts are malformed (a number out of range). The caller checks
/// each rule in turn, so the first error of the file is the one reported.
pub fn rules(file: &str, text: &str) -> R<Vec<R<RrRule>>> {
    let cx = Cx { file };
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
        SyntaxError {
            message: format!("rule syntax error: {msg}"),
            range: at..end,
            label: Some("here"),
        }
    })?;
    Ok(pairs
        .into_iter()
        .next()
        .into_iter()
        .flat_map(|f| f.into_inner())
        .filter(|p| p.as_rule() == Rule::rule)
        .map(|p| build_rule(&cx, p))
        .collect())
}

fn build_rule(cx: &Cx, p: Pair<Rule>) -> R<RrRule> {
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
    Ok(RrRule {
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
