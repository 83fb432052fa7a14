//! Parsing and printing MLIR's textual pass pipelines.

use super::{Pass, PassOptions, PassRegistry};
use pest::Parser as _;

#[derive(pest_derive::Parser)]
#[grammar = "pass/pipeline.pest"]
struct PipelineGrammar;

pub enum PipelineElem {
    Pass {
        pass: Box<dyn Pass>,
        options: PassOptions,
    },
    Nested(OpPipeline),
}

/// Passes to run on ops named `anchor` (`any` for every isolated op).
pub struct OpPipeline {
    pub anchor: String,
    pub elems: Vec<PipelineElem>,
}

/// A pipeline error: message and byte range in the pipeline text.
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineError {
    pub message: String,
    pub range: std::ops::Range<usize>,
}

/// The deepest bracket nesting a pipeline may have (real ones nest two or three).
const MAX_PIPELINE_NESTING: usize = 256;

/// Parse `text` (or a registered pipeline name) into nested op pipelines.
/// A bare list of passes is anchored on `builtin.module`.
pub fn parse_pipeline(reg: &PassRegistry, text: &str) -> Result<OpPipeline, PipelineError> {
    let trimmed = text.trim();
    if let Some(expanded) = reg.pipeline(trimmed) {
        return parse_pipeline(reg, expanded);
    }
    // Pipelines are parsed and built recursively: bound how deep they nest.
    if let Some(at) = crate::parser::nesting::scan(text, MAX_PIPELINE_NESTING).too_deep_at {
        return Err(PipelineError {
            message: format!(
                "invalid pass pipeline: nested more than {MAX_PIPELINE_NESTING} levels deep"
            ),
            range: at..at + 1,
        });
    }
    let pairs = PipelineGrammar::parse(Rule::pipeline, text).map_err(|e| {
        let at = match e.location {
            pest::error::InputLocation::Pos(p) => p,
            pest::error::InputLocation::Span((s, _)) => s,
        };
        let expected = match &e.variant {
            pest::error::ErrorVariant::ParsingError { positives, .. } => positives
                .iter()
                .map(|r| match r {
                    Rule::name => "a pass or op name",
                    Rule::nested => "'('",
                    Rule::options => "'{'",
                    Rule::EOI => "end of pipeline",
                    _ => "',' or ')'",
                })
                .collect::<Vec<_>>()
                .join(" or "),
            pest::error::ErrorVariant::CustomError { message } => message.clone(),
        };
        PipelineError {
            message: format!("invalid pass pipeline: expected {expected}"),
            range: at..(at + 1).min(text.len().max(at)),
        }
    })?;
    let list = pairs
        .into_iter()
        .next()
        .and_then(|p| p.into_inner().next())
        .ok_or_else(|| PipelineError {
            message: "empty pass pipeline".into(),
            range: 0..0,
        })?;
    let elems = build_list(reg, list)?;
    // `builtin.module(...)` at the top is the module pipeline itself.
    if elems.len() == 1 {
        if let PipelineElem::Nested(p) = &elems[0] {
            if p.anchor == crate::builtin::Module::NAME {
                if let Some(PipelineElem::Nested(p)) = elems.into_iter().next() {
                    return Ok(p);
                }
                unreachable!("checked above");
            }
        }
    }
    Ok(OpPipeline {
        anchor: crate::builtin::Module::NAME.into(),
        elems,
    })
}

fn build_list(
    reg: &PassRegistry,
    list: pest::iterators::Pair<Rule>,
) -> Result<Vec<PipelineElem>, PipelineError> {
    let mut out = vec![];
    for el in list.into_inner() {
        let span = el.as_span();
        let range = span.start()..span.end();
        let mut name = "";
        let mut opts: Vec<(String, Option<String>)> = vec![];
        let mut nested = None;
        for part in el.into_inner() {
            match part.as_rule() {
                Rule::name => name = part.as_str(),
                Rule::options => {
                    for o in part.into_inner() {
                        let mut it = o.into_inner();
                        let k = it
                            .next()
                            .map(|x| x.as_str().to_string())
                            .unwrap_or_default();
                        let v = it.next().map(|x| {
                            let s = x.as_str();
                            let s = s
                                .strip_prefix('{')
                                .and_then(|s| s.strip_suffix('}'))
                                .unwrap_or(s);
                            s.trim_matches('"').to_string()
                        });
                        opts.push((k, v));
                    }
                }
                Rule::nested => nested = Some(part),
                _ => {}
            }
        }
        match nested {
            Some(n) => {
                if !opts.is_empty() {
                    return Err(PipelineError {
                        message: format!("op anchor '{name}' takes no options"),
                        range,
                    });
                }
                let elems = match n.into_inner().next() {
                    Some(l) => build_list(reg, l)?,
                    None => vec![],
                };
                let anchor = if name.contains('.') || name == "any" {
                    name.to_string()
                } else {
                    format!("builtin.{name}")
                };
                out.push(PipelineElem::Nested(OpPipeline { anchor, elems }));
            }
            None => {
                if let Some(text) = reg.pipeline(name) {
                    let p = parse_pipeline(reg, text)?;
                    if p.anchor == crate::builtin::Module::NAME {
                        out.extend(p.elems);
                    } else {
                        out.push(PipelineElem::Nested(p));
                    }
                    continue;
                }
                let e = reg.get(name).ok_or_else(|| PipelineError {
                    message: format!(
                        "'{name}' does not refer to a registered pass or pass pipeline"
                    ),
                    range: range.clone(),
                })?;
                let options = PassOptions::parse(e.info, &opts).map_err(|m| PipelineError {
                    message: m,
                    range: range.clone(),
                })?;
                let pass = (e.make)(&options).map_err(|m| PipelineError {
                    message: m,
                    range: range.clone(),
                })?;
                out.push(PipelineElem::Pass { pass, options });
            }
        }
    }
    Ok(out)
}

impl OpPipeline {
    /// MLIR's textual form with every option spelled out.
    pub fn to_text(&self) -> String {
        let inner: Vec<String> = self
            .elems
            .iter()
            .map(|e| match e {
                PipelineElem::Pass { pass, options } => {
                    let o = options.to_text();
                    if o.is_empty() {
                        pass.info().name.to_string()
                    } else {
                        format!("{}{{{o}}}", pass.info().name)
                    }
                }
                PipelineElem::Nested(p) => p.to_text(),
            })
            .collect();
        format!("{}({})", self.anchor, inner.join(", "))
    }

    pub fn is_empty(&self) -> bool {
        self.elems.is_empty()
    }
}
