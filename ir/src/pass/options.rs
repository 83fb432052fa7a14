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
                    // A misspelling names the option it probably meant.
                    let near = known
                        .iter()
                        .map(|n| (strsim::damerau_levenshtein(k, n), *n))
                        .filter(|(d, n)| *d <= 2.max(n.len() / 4))
                        .min()
                        .map(|(_, n)| format!("; did you mean '{n}'?"))
                        .unwrap_or_default();
                    format!(
                        "no such option '{k}' for pass '{}' (options: {}){near}",
                        info.name,
                        known.join(", ")
                    )
                }
            })?;
            let value = parse_value(d, v.as_deref().unwrap_or(""))
                .map_err(|e| format!("{e} (pass '{}')", info.name))?;
            values.insert(d.name, value);
        }
        Ok(PassOptions { values })
    }

    /// The value of a declared option, for code that walks a pass's
    /// `OptionDef`s generically (printing a pipeline back). A pass reads its
    /// options through its `#[derive(PassOptions)]` struct, never by name.
    pub fn value(&self, name: &str) -> Option<&OptValue> {
        self.values.get(name)
    }

    // The typed reads below are what `#[derive(PassOptions)]` generates
    // `from_options` from: the name comes from the same declaration as the
    // `OptionDef`, so it cannot be misspelt. A name the options were not
    // parsed with means the struct and the pass's `PassInfo::options`
    // disagree (a programming error, caught by every test in debug builds).
    fn declared(&self, name: &str) -> Option<&OptValue> {
        let v = self.values.get(name);
        debug_assert!(
            v.is_some(),
            "pass option '{name}' read but not declared in the pass's options"
        );
        v
    }
    #[doc(hidden)]
    pub fn derived_bool(&self, name: &str) -> bool {
        matches!(self.declared(name), Some(OptValue::Bool(true)))
    }
    #[doc(hidden)]
    pub fn derived_int(&self, name: &str) -> i64 {
        match self.declared(name) {
            Some(OptValue::Int(i)) => *i,
            _ => 0,
        }
    }
    #[doc(hidden)]
    pub fn derived_str(&self, name: &str) -> String {
        match self.declared(name) {
            Some(OptValue::Str(s)) => s.clone(),
            _ => String::new(),
        }
    }
    #[doc(hidden)]
    pub fn derived_list(&self, name: &str) -> Vec<String> {
        match self.declared(name) {
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

/// How many options `parts` hold (for `#[derive(PassOptions)]` with
/// `#[option(flatten)]`: a pass's list is its own options and the lists of
/// the option structs it flattens, concatenated at compile time).
pub const fn option_count(parts: &[&[OptionDef]]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < parts.len() {
        n += parts[i].len();
        i += 1;
    }
    n
}

const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// `parts` concatenated into one option list; `N` is `option_count(parts)`.
/// Two options of one name are a compile error (the pipeline parser could
/// not tell them apart).
pub const fn concat_options<const N: usize>(parts: &[&[OptionDef]]) -> [OptionDef; N] {
    let mut out = [OptionDef {
        name: "",
        kind: OptKind::Bool,
        default: "",
        doc: "",
    }; N];
    let mut n = 0;
    let mut i = 0;
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            let mut k = 0;
            while k < n {
                if same_str(out[k].name, parts[i][j].name) {
                    panic!("two pass options of one name (a flattened struct repeats an option)");
                }
                k += 1;
            }
            out[n] = parts[i][j];
            n += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(n == N, "option count does not match");
    out
}
