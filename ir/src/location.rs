//! Source locations (MLIR's `loc(...)`), interned.

use crate::attributes::Attribute;
use crate::ident::Ident;
use internment::Intern;
use std::fmt;

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum LocData {
    Unknown,
    /// `loc("file":line:col)`
    File {
        file: Ident,
        line: u32,
        col: u32,
    },
    /// `loc("name")` or `loc("name"(child))`
    Name {
        name: Ident,
        child: Option<Location>,
    },
    /// `loc(callsite(callee at caller))`
    CallSite {
        callee: Location,
        caller: Location,
    },
    /// `loc(fused[a, b])` or `loc(fused<#meta>[a, b])`
    Fused {
        locs: Box<[Location]>,
        metadata: Option<Attribute>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location(Intern<LocData>);

impl Location {
    pub fn new(d: LocData) -> Location {
        Location(Intern::new(d))
    }
    pub fn unknown() -> Location {
        Location::new(LocData::Unknown)
    }
    pub fn file(file: &str, line: u32, col: u32) -> Location {
        Location::new(LocData::File {
            file: Ident::new(file),
            line,
            col,
        })
    }
    pub fn name(name: &str, child: Option<Location>) -> Location {
        Location::new(LocData::Name {
            name: Ident::new(name),
            child,
        })
    }
    pub fn data(self) -> &'static LocData {
        self.0.as_ref()
    }
    pub fn is_unknown(self) -> bool {
        matches!(self.data(), LocData::Unknown)
    }
    /// The first file position inside this location, for diagnostics.
    pub fn file_line_col(self) -> Option<(Ident, u32, u32)> {
        match self.data() {
            LocData::Unknown => None,
            LocData::File { file, line, col } => Some((*file, *line, *col)),
            LocData::Name { child, .. } => child.and_then(|c| c.file_line_col()),
            LocData::CallSite { callee, caller } => {
                callee.file_line_col().or_else(|| caller.file_line_col())
            }
            LocData::Fused { locs, .. } => locs.iter().find_map(|l| l.file_line_col()),
        }
    }
}

impl Default for Location {
    fn default() -> Self {
        Location::unknown()
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("loc(")?;
        write_loc_inner(f, *self)?;
        f.write_str(")")
    }
}

pub(crate) fn write_loc_inner(f: &mut dyn fmt::Write, l: Location) -> fmt::Result {
    // Name and call-site locations nest arbitrarily deep.
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || write_loc_rec(f, l))
}

fn write_loc_rec(f: &mut dyn fmt::Write, l: Location) -> fmt::Result {
    match l.data() {
        LocData::Unknown => f.write_str("unknown"),
        LocData::File { file, line, col } => {
            crate::printer::write_string_literal(f, file)?;
            write!(f, ":{line}:{col}")
        }
        LocData::Name { name, child } => {
            crate::printer::write_string_literal(f, name)?;
            if let Some(c) = child {
                f.write_str("(")?;
                write_loc_inner(f, *c)?;
                f.write_str(")")?;
            }
            Ok(())
        }
        LocData::CallSite { callee, caller } => {
            f.write_str("callsite(")?;
            write_loc_inner(f, *callee)?;
            f.write_str(" at ")?;
            write_loc_inner(f, *caller)?;
            f.write_str(")")
        }
        LocData::Fused { locs, metadata } => {
            f.write_str("fused")?;
            if let Some(m) = metadata {
                write!(f, "<{m}>")?;
            }
            f.write_str("[")?;
            for (i, l) in locs.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_loc_inner(f, *l)?;
            }
            f.write_str("]")
        }
    }
}
