//! `--verify-diagnostics`: match produced diagnostics against MLIR-style
//! `expected-error@+1 {{...}}` annotations in the source.

use ge_ir::diagnostics::{Diagnostic, Pos, Severity, SourceMap};
use regex::Regex;
use std::sync::OnceLock;

#[derive(Debug, Clone)]
pub struct Expected {
    pub severity: Severity,
    /// 1-based line the diagnostic must be on (`None` for `@unknown`).
    pub line: Option<usize>,
    pub text: String,
    pub regex: Option<Regex>,
    /// Where the annotation itself is (byte range in the file).
    pub at: std::ops::Range<usize>,
    pub matched: bool,
}

fn pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // As MLIR: the message runs to the last `}}` on the line.
        Regex::new(
            r"expected-(error|warning|note|remark)(-re)? *(?:@(above|below|unknown|[+-]\d+))? *\{\{(.*)\}\}\s*$",
        )
        .expect("static regex")
    })
}

/// Annotations in `text` (a chunk starting at byte `offset`, line `first_line`).
pub fn parse_expected(
    text: &str,
    offset: usize,
    first_line: usize,
) -> Result<Vec<Expected>, (std::ops::Range<usize>, String)> {
    let mut out = vec![];
    let mut pos = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let lno = first_line + i;
        for c in pattern().captures_iter(line) {
            let m = c.get(0).map_or(0..0, |m| m.range());
            let at = offset + pos + m.start..offset + pos + m.end;
            let severity = match &c[1] {
                "error" => Severity::Error,
                "warning" => Severity::Warning,
                "note" => Severity::Note,
                _ => Severity::Remark,
            };
            let target = match c.get(3).map(|m| m.as_str()) {
                None => Some(lno),
                Some("above") => Some(lno - 1),
                Some("below") => Some(lno + 1),
                Some("unknown") => None,
                Some(n) => {
                    let d: i64 = n
                        .parse()
                        .map_err(|_| (at.clone(), format!("invalid line offset '{n}'")))?;
                    Some((lno as i64 + d) as usize)
                }
            };
            let text = c[4].to_string();
            let regex = match c.get(2) {
                Some(_) => Some(
                    expected_regex(&text)
                        .map_err(|e| (at.clone(), format!("invalid expected-*-re: {e}")))?,
                ),
                None => None,
            };
            out.push(Expected {
                severity,
                line: target,
                text,
                regex,
                at,
                matched: false,
            });
        }
        pos += line.len();
    }
    Ok(out)
}

/// MLIR's `-re` messages: literal text with `{{regex}}` sections.
fn expected_regex(text: &str) -> Result<Regex, String> {
    let mut re = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        re.push_str(&regex::escape(&rest[..open]));
        let after = &rest[open + 2..];
        let close = after
            .find("}}")
            .ok_or_else(|| "found start of regex with no end '}}'".to_string())?;
        re.push('(');
        re.push_str(&after[..close]);
        re.push(')');
        rest = &after[close + 2..];
    }
    re.push_str(&regex::escape(rest));
    Regex::new(&re).map_err(|e| e.to_string())
}

/// Check `diags` against `expected`; returns the mismatches as diagnostics.
pub fn check(
    sm: &SourceMap,
    file: usize,
    diags: &[Diagnostic],
    mut expected: Vec<Expected>,
) -> Vec<Diagnostic> {
    let mut problems = vec![];
    // Notes attached to a diagnostic count as diagnostics of their own.
    let mut flat: Vec<(Severity, String, Pos)> = vec![];
    for d in diags {
        flat.push((d.severity, d.message.clone(), d.pos.clone()));
        for n in &d.notes {
            flat.push((Severity::Note, n.message.clone(), n.pos.clone()));
        }
    }
    for (sev, msg, pos) in flat {
        let line = sm.line_of(&pos).map(|(_, l)| l);
        let hit = expected.iter_mut().find(|e| {
            !e.matched
                && e.severity == sev
                && e.line == line
                && match &e.regex {
                    Some(r) => r.is_match(&msg),
                    None => msg.contains(&e.text),
                }
        });
        match hit {
            Some(e) => e.matched = true,
            None => {
                // Unexpected notes of an expected error are tolerated only if annotated.
                problems.push(Diagnostic::error(
                    format!("unexpected {}: {msg}", sev.name()),
                    pos,
                ));
            }
        }
    }
    for e in expected.into_iter().filter(|e| !e.matched) {
        problems.push(Diagnostic::error(
            format!(
                "expected {} \"{}\" was not produced",
                e.severity.name(),
                e.text
            ),
            Pos::Span { file, range: e.at },
        ));
    }
    problems
}
