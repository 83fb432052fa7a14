//! Text a tool prints: built in memory, or a compile cache entry's bytes
//! (mapped from disk, so answering from the cache copies nothing).

use crate::incremental::cache::Entry;
use std::ops::Range;

pub enum OutText {
    Owned(String),
    /// `entry[range]`, checked to be UTF-8 when it was made.
    Cached(Entry, Range<usize>),
}

impl OutText {
    /// `entry[range]` as text; `None` unless it is in bounds and UTF-8.
    pub fn from_entry(entry: Entry, range: Range<usize>) -> Option<OutText> {
        std::str::from_utf8(entry.get(range.clone())?).ok()?;
        Some(OutText::Cached(entry, range))
    }

    pub fn clear(&mut self) {
        *self = OutText::Owned(String::new());
    }

    /// The bytes to write (without checking them as text again).
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            OutText::Owned(s) => s.as_bytes(),
            OutText::Cached(e, r) => &e[r.clone()],
        }
    }
}

impl std::ops::Deref for OutText {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            OutText::Owned(s) => s,
            // Validated in `from_entry`, and an entry never changes; checking
            // again is cheap next to anything done with 1 MB of text, and
            // keeps this free of `unsafe`.
            OutText::Cached(e, r) => std::str::from_utf8(&e[r.clone()]).unwrap_or_default(),
        }
    }
}

impl Default for OutText {
    fn default() -> OutText {
        OutText::Owned(String::new())
    }
}

impl From<String> for OutText {
    fn from(s: String) -> OutText {
        OutText::Owned(s)
    }
}

impl PartialEq for OutText {
    fn eq(&self, other: &OutText) -> bool {
        **self == **other
    }
}

impl PartialEq<str> for OutText {
    fn eq(&self, other: &str) -> bool {
        &**self == other
    }
}

impl PartialEq<&str> for OutText {
    fn eq(&self, other: &&str) -> bool {
        &**self == *other
    }
}

impl std::fmt::Debug for OutText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl std::fmt::Display for OutText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}
