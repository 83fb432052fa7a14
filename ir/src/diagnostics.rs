//! Diagnostics as values: every user-caused error carries a position (a byte
//! span from the parser, or an op [`Location`]) and is rendered in one place
//! with codespan-reporting.

use crate::location::Location;
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{Files, SimpleFiles};
use codespan_reporting::term;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Note,
    Remark,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Remark => "remark",
        }
    }
}

/// Where a diagnostic points: a byte range in a source file, or an op location.
#[derive(Clone, Debug, PartialEq)]
pub enum Pos {
    Span { file: usize, range: Range<usize> },
    Loc(Location),
    None,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    pub message: String,
    pub pos: Pos,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub pos: Pos,
    /// Text under the caret (the label).
    pub label: String,
    pub notes: Vec<Note>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>, pos: Pos) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            pos,
            label: String::new(),
            notes: vec![],
        }
    }
    pub fn at_loc(severity: Severity, message: impl Into<String>, loc: Location) -> Diagnostic {
        Diagnostic {
            severity,
            message: message.into(),
            pos: Pos::Loc(loc),
            label: String::new(),
            notes: vec![],
        }
    }
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }
    pub fn with_note(mut self, message: impl Into<String>, pos: Pos) -> Diagnostic {
        self.notes.push(Note {
            message: message.into(),
            pos,
        });
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity.name(), self.message)
    }
}

/// All source files of a run; resolves spans and locations to lines.
#[derive(Default)]
pub struct SourceMap {
    files: SimpleFiles<String, Arc<str>>,
    names: Vec<String>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&mut self, name: &str, text: Arc<str>) -> usize {
        self.names.push(name.to_string());
        self.files.add(name.to_string(), text)
    }

    pub fn text(&self, file: usize) -> &str {
        self.files
            .get(file)
            .map(|f| f.source().as_ref())
            .unwrap_or("")
    }

    pub fn name(&self, file: usize) -> &str {
        &self.names[file]
    }

    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, file: usize, offset: usize) -> (usize, usize) {
        let line = self.files.line_index(file, offset).unwrap_or(0);
        let col = self.files.column_number(file, line, offset).unwrap_or(1);
        (line + 1, col)
    }

    /// Byte range for a location `file:line:col` if the file is known: from
    /// the column to the end of that line (trailing blanks trimmed).
    pub fn loc_range(&self, loc: Location) -> Option<(usize, Range<usize>)> {
        let (fname, line, col) = loc.file_line_col()?;
        let file = self.names.iter().rposition(|n| n == fname.as_str())?;
        let lr = self
            .files
            .line_range(file, (line as usize).checked_sub(1)?)
            .ok()?;
        let text = self.text(file);
        let start = (lr.start + (col as usize).saturating_sub(1)).min(lr.end);
        let line_text = text[start..lr.end].trim_end();
        Some((file, start..start + line_text.len()))
    }

    /// The 1-based line a diagnostic position refers to, with its file name.
    pub fn line_of(&self, pos: &Pos) -> Option<(String, usize)> {
        match pos {
            Pos::Span { file, range } => Some((
                self.names[*file].clone(),
                self.line_col(*file, range.start).0,
            )),
            Pos::Loc(l) => l
                .file_line_col()
                .map(|(f, line, _)| (f.to_string(), line as usize)),
            Pos::None => None,
        }
    }

    fn resolve(&self, pos: &Pos) -> Option<(usize, Range<usize>)> {
        match pos {
            Pos::Span { file, range } => Some((*file, range.clone())),
            Pos::Loc(l) => self.loc_range(*l),
            Pos::None => None,
        }
    }

    /// Render one diagnostic as codespan-reporting text.
    pub fn render(&self, d: &Diagnostic) -> String {
        let severity = match d.severity {
            Severity::Error => cs::Severity::Error,
            Severity::Warning => cs::Severity::Warning,
            Severity::Note => cs::Severity::Note,
            Severity::Remark => cs::Severity::Help,
        };
        let mut diag = cs::Diagnostic::new(severity).with_message(&d.message);
        let mut labels = vec![];
        let mut trailing = vec![];
        match self.resolve(&d.pos) {
            Some((file, range)) => {
                labels.push(cs::Label::primary(file, range).with_message(&d.label))
            }
            None => {
                if let Pos::Loc(l) = &d.pos {
                    if !l.is_unknown() {
                        trailing.push(format!("at {l}"));
                    }
                }
            }
        }
        for n in &d.notes {
            match self.resolve(&n.pos) {
                Some((file, range)) => {
                    labels.push(cs::Label::secondary(file, range).with_message(&n.message))
                }
                None => trailing.push(format!("note: {}", n.message)),
            }
        }
        diag = diag.with_labels(labels).with_notes(trailing);
        let config = term::Config::default();
        term::emit_into_string(&config, &self.files, &diag)
            .unwrap_or_else(|_| format!("{}: {}\n", d.severity.name(), d.message))
    }
}
