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
    /// `loc(#name)`, an alias the parser has not seen defined yet (mlir-opt
    /// defines most location aliases after the module). Only while parsing:
    /// the parser replaces every one before it returns.
    Alias(Ident),
}

/// A location in 8 bytes. `file:line:col` locations — one per parsed op —
/// are packed inline (file name as an index into a small global table, the
/// column saturating at 65535), so parsing a million ops interns no million
/// locations; every other kind is an interned `LocData`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location(u64);

const FILE_TAG: u64 = 1 << 63;
/// Columns up to this are packed; wider ones are interned whole.
const MAX_PACKED_COL: u32 = 0xffff;

/// File names used by packed locations (few: one per input file), and their indices.
type FileTable = std::sync::RwLock<(Vec<Ident>, std::collections::HashMap<Ident, u16>)>;

fn file_table() -> &'static FileTable {
    static T: std::sync::OnceLock<FileTable> = std::sync::OnceLock::new();
    T.get_or_init(Default::default)
}

/// The packed index of a file name (`None` once 32767 distinct files exist).
pub fn file_index(file: Ident) -> Option<u16> {
    if let Some(&i) = file_table().read().ok()?.1.get(&file) {
        return Some(i);
    }
    let mut t = file_table().write().ok()?;
    if let Some(&i) = t.1.get(&file) {
        return Some(i);
    }
    let i = u16::try_from(t.0.len()).ok().filter(|&i| i < 0x7fff)?;
    t.0.push(file);
    t.1.insert(file, i);
    Some(i)
}

impl Location {
    pub fn new(d: LocData) -> Location {
        if let LocData::File { file, line, col } = d {
            if let Some(i) = file_index(file).filter(|_| col <= MAX_PACKED_COL) {
                return Location::packed(i, line, col);
            }
        }
        if let LocData::Fused { locs, metadata } = d {
            return Location::fused(&locs, metadata);
        }
        if d == LocData::Unknown {
            return Location(0);
        }
        Location::intern(d)
    }
    /// A `file:line:col` location from a file index (see [`file_index`]).
    pub fn packed(file: u16, line: u32, col: u32) -> Location {
        if col > MAX_PACKED_COL {
            // Too wide to pack: kept whole, never clamped.
            let file = file_table()
                .read()
                .ok()
                .and_then(|t| t.0.get(file as usize).copied())
                .unwrap_or_else(|| Ident::new("?"));
            return Location::intern(LocData::File { file, line, col });
        }
        Location(FILE_TAG | ((file as u64 & 0x7fff) << 48) | ((line as u64) << 16) | col as u64)
    }

    /// `fused<metadata>[locs]` as MLIR builds it: nested fused locations with
    /// the same metadata flattened, unknown ones and duplicates dropped, one
    /// location without metadata is itself, none is unknown.
    pub fn fused(locs: &[Location], metadata: Option<Attribute>) -> Location {
        let mut flat: Vec<Location> = vec![];
        for &l in locs {
            let parts = match l.data() {
                LocData::Fused { locs, metadata: m } if m == metadata => locs.to_vec(),
                LocData::Unknown => vec![],
                _ => vec![l],
            };
            for p in parts {
                // (A nested `fused<m>[unknown]` keeps its unknown in MLIR,
                // which then drops it when the text is read again; dropping
                // it here keeps printing stable.)
                if !p.is_unknown() && !flat.contains(&p) {
                    flat.push(p);
                }
            }
        }
        match (flat.len(), metadata) {
            (0, None) => Location::unknown(),
            (0, Some(_)) => Location::intern(LocData::Fused {
                locs: Box::new([Location::unknown()]),
                metadata,
            }),
            (1, None) => flat[0],
            _ => Location::intern(LocData::Fused {
                locs: flat.into(),
                metadata,
            }),
        }
    }

    fn intern(d: LocData) -> Location {
        let p: &'static LocData = Intern::new(d).as_ref();
        Location(p as *const LocData as u64)
    }
    pub fn unknown() -> Location {
        Location(0)
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
    pub fn data(self) -> LocData {
        if self.0 == 0 {
            return LocData::Unknown;
        }
        if self.0 & FILE_TAG != 0 {
            let idx = ((self.0 >> 48) & 0x7fff) as usize;
            let file = file_table()
                .read()
                .ok()
                .and_then(|t| t.0.get(idx).copied())
                .unwrap_or_else(|| Ident::new("?"));
            return LocData::File {
                file,
                line: (self.0 >> 16) as u32,
                col: (self.0 & 0xffff) as u32,
            };
        }
        // SAFETY: non-file, non-zero locations hold the address of an interned
        // `LocData`; interned values live for the whole process.
        unsafe { &*(self.0 as *const LocData) }.clone()
    }
    pub fn is_unknown(self) -> bool {
        self.0 == 0
    }

    /// The metadata attributes of the fused locations inside this one.
    pub fn for_each_metadata(self, f: &mut dyn FnMut(Attribute)) {
        if self.0 == 0 || self.0 & FILE_TAG != 0 {
            return;
        }
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || match self.data() {
            LocData::Name { child, .. } => child.into_iter().for_each(|c| c.for_each_metadata(f)),
            LocData::CallSite { callee, caller } => {
                callee.for_each_metadata(f);
                caller.for_each_metadata(f);
            }
            LocData::Fused { locs, metadata } => {
                metadata.into_iter().for_each(&mut *f);
                locs.iter().for_each(|l| l.for_each_metadata(f));
            }
            _ => {}
        })
    }

    /// Whether an alias not yet resolved is inside (see [`LocData::Alias`]).
    pub fn has_alias(self) -> bool {
        if self.0 == 0 || self.0 & FILE_TAG != 0 {
            return false;
        }
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || match self.data() {
            LocData::Alias(_) => true,
            LocData::Unknown | LocData::File { .. } => false,
            LocData::Name { child, .. } => child.is_some_and(|c| c.has_alias()),
            LocData::CallSite { callee, caller } => callee.has_alias() || caller.has_alias(),
            LocData::Fused { locs, .. } => locs.iter().any(|l| l.has_alias()),
        })
    }

    /// This location with every alias replaced by `lookup(name)`; the name
    /// `lookup` does not know as the error.
    pub fn resolve_aliases(
        self,
        lookup: &mut dyn FnMut(Ident) -> Option<Location>,
    ) -> Result<Location, Ident> {
        if !self.has_alias() {
            return Ok(self);
        }
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
            Ok(match self.data() {
                LocData::Alias(name) => lookup(name).ok_or(name)?,
                LocData::Name { name, child } => Location::new(LocData::Name {
                    name,
                    child: child.map(|c| c.resolve_aliases(lookup)).transpose()?,
                }),
                LocData::CallSite { callee, caller } => Location::new(LocData::CallSite {
                    callee: callee.resolve_aliases(lookup)?,
                    caller: caller.resolve_aliases(lookup)?,
                }),
                LocData::Fused { locs, metadata } => {
                    let locs = locs
                        .iter()
                        .map(|l| l.resolve_aliases(lookup))
                        .collect::<Result<Vec<_>, _>>()?;
                    Location::fused(&locs, metadata)
                }
                d => Location::new(d),
            })
        })
    }
    /// The first file position inside this location, for diagnostics.
    pub fn file_line_col(self) -> Option<(Ident, u32, u32)> {
        // Each level may nest another (name, call site): keep deep chains off the stack limit.
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.file_line_col_rec())
    }

    fn file_line_col_rec(self) -> Option<(Ident, u32, u32)> {
        match self.data() {
            LocData::Unknown => None,
            LocData::File { file, line, col } => Some((file, line, col)),
            LocData::Name { child, .. } => child.and_then(|c| c.file_line_col()),
            LocData::CallSite { callee, caller } => {
                callee.file_line_col().or_else(|| caller.file_line_col())
            }
            LocData::Fused { locs, .. } => locs.iter().find_map(|l| l.file_line_col()),
            LocData::Alias(_) => None,
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
            crate::printer::write_string_literal(f, &file)?;
            write!(f, ":{line}:{col}")
        }
        LocData::Name { name, child } => {
            crate::printer::write_string_literal(f, &name)?;
            if let Some(c) = child {
                f.write_str("(")?;
                write_loc_inner(f, c)?;
                f.write_str(")")?;
            }
            Ok(())
        }
        LocData::CallSite { callee, caller } => {
            f.write_str("callsite(")?;
            write_loc_inner(f, callee)?;
            f.write_str(" at ")?;
            write_loc_inner(f, caller)?;
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
        LocData::Alias(name) => write!(f, "#{name}"),
    }
}
