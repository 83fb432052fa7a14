//! The runtime's error: one line saying what went wrong and, when it is one
//! task's failure, where — the task, its kernel and stream, the op of the
//! kernel that failed and that op's location in the model's source, as the
//! `.om` records it (the kernels partition keeps each op's `loc(...)`).

use ge_ir::location::LocData;
use ge_ir::Location;
use std::fmt;

/// A runtime error. `Display` gives the one line tools print:
/// `<loc>: [<model file>: ]task #3 (kernel @main_t3 on stream 0): graph.gather: <message>`,
/// each part present when known.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    /// What went wrong.
    pub message: String,
    /// Where, when the failure belongs to a task, a kernel or an op.
    pub site: Option<Box<Site>>,
}

/// Where a runtime error happened.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Site {
    /// The model file, for errors while loading one from a path.
    pub model: Option<String>,
    /// The task's index in the program.
    pub task: Option<usize>,
    /// The stream that ran it (run-time failures).
    pub stream: Option<usize>,
    /// The launched kernel function (without `@`).
    pub kernel: Option<String>,
    /// The op(s) of the kernel that failed (`graph.gather`, or
    /// `graph.mul+graph.sigmoid` for a fused elementwise loop).
    pub op: Option<String>,
    /// The op's (else the kernel's) source location, as the model recorded
    /// it; unknown when it was compiled from IR without locations.
    pub loc: Location,
}

/// An error without a site: `Error(message)`, the spelling of the tuple
/// struct this type used to be (kept so construction sites read as before).
#[allow(non_snake_case)]
pub fn Error(message: String) -> Error {
    Error {
        message,
        site: None,
    }
}

impl Error {
    /// An error at `site`.
    pub fn at(site: Site, message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
            site: Some(Box::new(site)),
        }
    }

    /// This error as one of loading `path` (which the line then names).
    pub fn in_model(mut self, path: &str) -> Error {
        self.site.get_or_insert_with(Default::default).model = Some(path.to_string());
        self
    }

    /// The source location, rendered (`model.air:7:5`, `model.onnx: 'Conv_3'`),
    /// when the model recorded one.
    pub fn location(&self) -> Option<String> {
        self.site.as_ref().and_then(|s| describe(s.loc))
    }
}

impl Error {
    /// The line without the source location and model file: what the task,
    /// kernel and op were and what went wrong — the same on every machine
    /// (reports that are compared across machines use it).
    pub fn brief(&self) -> String {
        let mut out = String::new();
        let _ = self.write(&mut out, false);
        out
    }

    fn write(&self, f: &mut dyn fmt::Write, with_loc: bool) -> fmt::Result {
        if let Some(s) = &self.site {
            if with_loc {
                if let Some(l) = describe(s.loc) {
                    write!(f, "{l}: ")?;
                }
                if let Some(m) = &s.model {
                    write!(f, "{m}: ")?;
                }
            }
            if let Some(t) = s.task {
                write!(f, "task #{t}")?;
                match (&s.kernel, s.stream) {
                    (Some(k), Some(st)) => write!(f, " (kernel @{k} on stream {st})")?,
                    (Some(k), None) => write!(f, " (kernel @{k})")?,
                    (None, Some(st)) => write!(f, " on stream {st}")?,
                    (None, None) => {}
                }
                f.write_str(": ")?;
            } else if let Some(k) = &s.kernel {
                write!(f, "kernel @{k}: ")?;
            }
            if let Some(op) = &s.op {
                write!(f, "{op}: ")?;
            }
        }
        f.write_str(&self.message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, true)
    }
}

impl std::error::Error for Error {}

impl From<String> for Error {
    fn from(s: String) -> Error {
        Error(s)
    }
}

/// A location as an error line's prefix: `file:line:col` (just `file` for
/// the line-less locations importers give a whole model file), a name
/// location as `'name'` after its child's position (ONNX/TF node names; the
/// outermost name of nested ones), the callee of a call site, the first
/// known part of a fused one. Iterative: locations nest arbitrarily deep.
pub fn describe(mut l: Location) -> Option<String> {
    let mut name = None;
    let pos = loop {
        match l.data() {
            LocData::File { file, line: 0, .. } => break Some(file.to_string()),
            LocData::File { file, line, col } => break Some(format!("{file}:{line}:{col}")),
            LocData::Name { name: n, child } => {
                name.get_or_insert(n);
                match child {
                    Some(c) => l = c,
                    None => break None,
                }
            }
            LocData::CallSite { callee, .. } => l = callee,
            LocData::Fused { locs, .. } => match locs.iter().find(|l| !l.is_unknown()) {
                Some(&f) => l = f,
                None => break None,
            },
            _ => break None,
        }
    };
    match (pos, name) {
        (Some(p), Some(n)) => Some(format!("{p}: '{n}'")),
        (Some(p), None) => Some(p),
        (None, Some(n)) => Some(format!("'{n}'")),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_read_as_error_prefixes() {
        let file = Location::file("m.air", 7, 5);
        assert_eq!(describe(file).as_deref(), Some("m.air:7:5"));
        let whole = Location::file("m.onnx", 0, 0);
        assert_eq!(describe(whole).as_deref(), Some("m.onnx"));
        let node = Location::name("Conv_3", Some(whole));
        assert_eq!(describe(node).as_deref(), Some("m.onnx: 'Conv_3'"));
        assert_eq!(
            describe(Location::name("Conv_3", None)).as_deref(),
            Some("'Conv_3'")
        );
        let fused = Location::fused(&[Location::unknown(), file, node], None);
        assert_eq!(describe(fused).as_deref(), Some("m.air:7:5"));
        assert_eq!(describe(Location::unknown()), None);
    }

    #[test]
    fn the_line_names_each_known_part() {
        let site = Site {
            task: Some(3),
            stream: Some(1),
            kernel: Some("main_t3".into()),
            op: Some("graph.gather".into()),
            loc: Location::file("m.air", 7, 5),
            model: None,
        };
        let e = Error::at(site.clone(), "index 9 out of range");
        assert_eq!(
            e.to_string(),
            "m.air:7:5: task #3 (kernel @main_t3 on stream 1): graph.gather: index 9 out of range"
        );
        assert_eq!(
            e.brief(),
            "task #3 (kernel @main_t3 on stream 1): graph.gather: index 9 out of range"
        );
        assert_eq!(
            e.clone().in_model("x.om").to_string(),
            "m.air:7:5: x.om: task #3 (kernel @main_t3 on stream 1): graph.gather: index 9 out of range"
        );
        let kernel_only = Site {
            kernel: Some("k".into()),
            ..Site::default()
        };
        assert_eq!(Error::at(kernel_only, "bad").to_string(), "kernel @k: bad");
        assert_eq!(Error("plain".into()).to_string(), "plain");
        assert_eq!(
            Error("plain".into()).in_model("x.om").to_string(),
            "x.om: plain"
        );
    }
}
