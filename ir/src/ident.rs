//! Interned strings: op names, attribute names, symbols, file names.
//!
//! Interning is process-wide (like an `MLIRContext` that lives for the whole
//! process): handles are `Copy`, compare by pointer and need no context to read.

use internment::Intern;
use std::fmt;

/// An interned string. Equality and hashing are O(1) (pointer based).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ident(Intern<str>);

impl Ident {
    pub fn new(s: &str) -> Ident {
        Ident(Intern::from(s))
    }
    pub fn as_str(self) -> &'static str {
        self.0.as_ref()
    }
}

impl From<&str> for Ident {
    fn from(s: &str) -> Ident {
        Ident::new(s)
    }
}

impl std::ops::Deref for Ident {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialOrd for Ident {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Ordered by text, so attribute dictionaries sort the way MLIR prints them.
impl Ord for Ident {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if self == other {
            std::cmp::Ordering::Equal
        } else {
            self.as_str().cmp(other.as_str())
        }
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}
