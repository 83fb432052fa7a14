//! Rewrite patterns: a name, labels, a benefit, a root op (or any), and
//! `match_and_rewrite`, which changes IR only through the [`Rewriter`].

use crate::rewriter::Rewriter;
use ge_ir::{Ident, OpId};
// Looked up once per op visit: interned names hash as a pointer.
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

pub trait Pattern: Send + Sync {
    fn name(&self) -> &str;
    /// Free-form tags (`canonical`, `algebraic`, `fusion`, …) for filtering.
    fn labels(&self) -> &[String] {
        &[]
    }
    /// Higher benefit is tried first.
    fn benefit(&self) -> u16 {
        1
    }
    /// The op name this pattern is rooted at; `None` for any op.
    fn root(&self) -> Option<&str>;
    /// Try to rewrite `op`. `Ok(true)` means the IR changed; `Ok(false)` that
    /// the pattern did not match (and must not have changed anything).
    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter) -> Result<bool, String>;
}

/// A pattern written as a plain function.
pub struct FnPattern {
    pub name: &'static str,
    pub root: Option<&'static str>,
    pub benefit: u16,
    pub labels: Vec<String>,
    pub f: fn(OpId, &mut Rewriter) -> Result<bool, String>,
}

impl Pattern for FnPattern {
    fn name(&self) -> &str {
        self.name
    }
    fn labels(&self) -> &[String] {
        &self.labels
    }
    fn benefit(&self) -> u16 {
        self.benefit
    }
    fn root(&self) -> Option<&str> {
        self.root
    }
    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter) -> Result<bool, String> {
        (self.f)(op, rw)
    }
}

/// Patterns indexed by root op name, each list sorted by benefit (highest first).
#[derive(Clone, Default)]
pub struct PatternSet {
    by_root: HashMap<Ident, Vec<Arc<dyn Pattern>>>,
    any: Vec<Arc<dyn Pattern>>,
}

impl PatternSet {
    pub fn new() -> PatternSet {
        PatternSet::default()
    }

    pub fn add(&mut self, p: Arc<dyn Pattern>) {
        let list = match p.root() {
            Some(r) => self.by_root.entry(Ident::new(r)).or_default(),
            None => &mut self.any,
        };
        list.push(p);
        list.sort_by_key(|p| std::cmp::Reverse(p.benefit()));
    }

    pub fn extend(&mut self, ps: impl IntoIterator<Item = Arc<dyn Pattern>>) {
        for p in ps {
            self.add(p);
        }
    }

    /// Patterns to try on an op named `name`, best first.
    pub fn for_op(&self, name: Ident) -> impl Iterator<Item = &Arc<dyn Pattern>> {
        let rooted = self.by_root.get(&name).map(|v| v.as_slice()).unwrap_or(&[]);
        rooted.iter().chain(self.any.iter())
    }

    pub fn len(&self) -> usize {
        self.by_root.values().map(Vec::len).sum::<usize>() + self.any.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn all(&self) -> Vec<Arc<dyn Pattern>> {
        let mut v: Vec<_> = self
            .by_root
            .values()
            .flatten()
            .chain(self.any.iter())
            .cloned()
            .collect();
        v.sort_by(|a, b| a.name().cmp(b.name()));
        v
    }

    /// Keep only patterns accepted by `keep`.
    pub fn filtered(&self, keep: impl Fn(&dyn Pattern) -> bool) -> PatternSet {
        let mut out = PatternSet::new();
        for p in self.all() {
            if keep(p.as_ref()) {
                out.add(p);
            }
        }
        out
    }
}
