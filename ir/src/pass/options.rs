//! Typed pass options with defaults (shown by `--list-passes`).

use super::PassInfo;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OptKind {
    Bool,
    Int,
    Str,
    /// Comma-separated strings.
    List,
    Enum(&'static [&'static str]),
}

impl OptKind {
    pub fn name(self) -> String {
        match self {
            OptKind::Bool => "bool".into(),
            OptKind::Int => "int".into(),
            OptKind::Str => "string".into(),
            OptKind::List => "list".into(),
            OptKind::Enum(v) => v.join("|"),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct OptionDef {
    pub name: &'static str,
    pub kind: OptKind,
    pub default: &'static str,
    pub doc: &'static str,
}

#[derive(Clone, Debug, PartialEq)]
pub enum OptValue {
    Bool(bool),
    Int(i64),
    Str(String),
    List(Vec<String>),
}

/// Validated option values of one pass instance (defaults filled in).
#[derive(Clone, Debug, Default)]
pub struct PassOptions {
    values: BTreeMap<&'static str, OptValue>,
}

fn parse_value(d: &OptionDef, text: &str) -> Result<OptValue, String> {
    Ok(match d.kind {
        OptKind::Bool => match text {
            "" | "true" | "1" => OptValue::Bool(true),
            "false" | "0" => OptValue::Bool(false),
            _ => {
                return Err(format!(
                    "option '{}' expects true or false, got '{text}'",
                    d.name
                ))
            }
        },
        OptKind::Int => OptValue::Int(
            text.parse()
                .map_err(|_| format!("option '{}' expects an integer, got '{text}'", d.name))?,
        ),
        OptKind::Str => OptValue::Str(text.trim_matches('"').to_string()),
        OptKind::List => OptValue::List(
            text.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
        ),
        OptKind::Enum(vs) => {
            if !vs.contains(&text) {
                return Err(format!(
                    "option '{}' expects one of {}, got '{text}'",
                    d.name,
                    vs.join(", ")
                ));
            }
            OptValue::Str(text.to_string())
        }
    })
}

impl PassOptions {
    pub fn parse(
        info: &PassInfo,
        given: &[(String, Option<String>)],
    ) -> Result<PassOptions, String> {
        let mut values = BTreeMap::new();
        for d in info.options {
            values.insert(d.name, parse_value(d, d.default)?);
        }
        for (k, v) in given {
            let d = info.options.iter().find(|d| d.name == k).ok_or_else(|| {
                let known: Vec<&str> = info.options.iter().map(|d| d.name).collect();
                if known.is_empty() {
                    format!("pass '{}' has no options, got '{k}'", info.name)
                } else {
                    format!(
                        "no such option '{k}' for pass '{}' (options: {})",
                        info.name,
                        known.join(", ")
                    )
                }
            })?;
            values.insert(d.name, parse_value(d, v.as_deref().unwrap_or(""))?);
        }
        Ok(PassOptions { values })
    }

    pub fn bool(&self, name: &str) -> bool {
        matches!(self.values.get(name), Some(OptValue::Bool(true)))
    }
    pub fn int(&self, name: &str) -> i64 {
        match self.values.get(name) {
            Some(OptValue::Int(i)) => *i,
            _ => 0,
        }
    }
    pub fn str(&self, name: &str) -> &str {
        match self.values.get(name) {
            Some(OptValue::Str(s)) => s,
            _ => "",
        }
    }
    pub fn list(&self, name: &str) -> Vec<String> {
        match self.values.get(name) {
            Some(OptValue::List(l)) => l.clone(),
            _ => vec![],
        }
    }

    /// `a=1 b=x` in MLIR's spelling, every option included.
    pub fn to_text(&self) -> String {
        self.values
            .iter()
            .map(|(k, v)| match v {
                OptValue::Bool(b) => format!("{k}={b}"),
                OptValue::Int(i) => format!("{k}={i}"),
                OptValue::Str(s) if s.is_empty() || s.contains(' ') => format!("{k}=\"{s}\""),
                OptValue::Str(s) => format!("{k}={s}"),
                OptValue::List(l) => format!("{k}={}", l.join(",")),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}
