//! A printed module kept as the pieces it was assembled from: the module
//! header, each unit's printed op (shared with the unit's memoized result)
//! and the trailer. A re-compile after a one-function edit then copies no
//! module-sized buffer; `--watch` writes the pieces one after another, and
//! whoever wants one `&str` gets the pieces joined once, on first use.

use std::fmt;
use std::sync::{Arc, OnceLock};

#[derive(Clone, Default)]
pub struct Text(Arc<Inner>);

#[derive(Default)]
struct Inner {
    pieces: Vec<Arc<str>>,
    joined: OnceLock<String>,
}

impl Text {
    pub fn from_pieces(pieces: Vec<Arc<str>>) -> Text {
        Text(Arc::new(Inner {
            pieces,
            joined: OnceLock::new(),
        }))
    }

    pub fn pieces(&self) -> &[Arc<str>] {
        &self.0.pieces
    }

    pub fn len(&self) -> usize {
        self.0.pieces.iter().map(|p| p.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0.pieces.iter().all(|p| p.is_empty())
    }

    /// The whole text (joined on first use, unless it is one piece).
    pub fn as_str(&self) -> &str {
        match self.0.pieces.as_slice() {
            [] => "",
            [one] => one,
            many => self.0.joined.get_or_init(|| many.concat()),
        }
    }

    /// Write the pieces in order.
    pub fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.0
            .pieces
            .iter()
            .try_for_each(|p| w.write_all(p.as_bytes()))
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::from_pieces(vec![Arc::from(s)])
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

/// Equal when the texts are, however they are cut into pieces (compared
/// piece by piece, without joining).
impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        if Arc::ptr_eq(&self.0, &other.0) {
            return true;
        }
        if self.len() != other.len() {
            return false;
        }
        // Equal lengths: when either side runs out, every byte matched.
        let mut a = self.0.pieces.iter().map(|p| p.as_bytes());
        let mut b = other.0.pieces.iter().map(|p| p.as_bytes());
        let (mut x, mut y): (&[u8], &[u8]) = (&[], &[]);
        loop {
            if x.is_empty() {
                match a.next() {
                    Some(n) => x = n,
                    None => return true,
                }
                continue;
            }
            if y.is_empty() {
                match b.next() {
                    Some(n) => y = n,
                    None => return true,
                }
                continue;
            }
            let k = x.len().min(y.len());
            if x[..k] != y[..k] {
                return false;
            }
            (x, y) = (&x[k..], &y[k..]);
        }
    }
}

impl Eq for Text {}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.pieces.iter().try_for_each(|p| f.write_str(p))
    }
}

#[cfg(test)]
mod tests {
    use super::Text;
    use std::sync::Arc;

    fn cut(s: &str, at: &[usize]) -> Text {
        let mut pieces = vec![];
        let mut last = 0;
        for &i in at.iter().chain([s.len()].iter()) {
            pieces.push(Arc::from(&s[last..i]));
            last = i;
        }
        Text::from_pieces(pieces)
    }

    #[test]
    fn equal_however_cut() {
        let s = "module {\n  graph.func @f() {\n  }\n}\n";
        let (a, b) = (cut(s, &[3, 10, 20]), cut(s, &[1, 2, 30]));
        assert_eq!(a, b);
        assert_eq!(a, Text::from(s.to_string()));
        assert_eq!(a.as_str(), s);
        assert_eq!(a.to_string(), s);
        assert_eq!(a.len(), s.len());
        assert_ne!(a, cut("module {\n  graph.func @g() {\n  }\n}\n", &[5]));
        assert_ne!(a, cut(&s[..s.len() - 1], &[5]));
        assert_eq!(Text::default(), cut("", &[]));
        let mut w = vec![];
        b.write_to(&mut w).expect("write");
        assert_eq!(w, s.as_bytes());
    }
}
