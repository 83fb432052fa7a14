//! Parsing a module's functions on several threads.
//!
//! Ops that are isolated from above and take no operands (functions) cannot
//! refer to anything parsed before them except aliases, so a run of them is cut
//! at lexical op boundaries ([`lex::next_independent`]) into batches, and each
//! batch is parsed by its own [`Parser`] on rayon's threads while the calling
//! thread goes on cutting. Each op must end exactly where the cut said; if any
//! batch fails or disagrees, the whole run is parsed again serially, so the
//! result and every diagnostic are those of the serial parser.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Ops parsed by workers so far in this process (for tests: the parallel path ran).
static PARALLEL_OPS: AtomicUsize = AtomicUsize::new(0);

/// How many ops this process has parsed on worker threads so far.
pub fn parallel_ops_parsed() -> usize {
    PARALLEL_OPS.load(Ordering::Relaxed)
}

/// Runs of independent ops shorter than this (bytes) are parsed serially.
const MIN_PARALLEL_BYTES: usize = 256 * 1024;
/// Bytes of source per batch handed to a worker.
const BATCH_BYTES: usize = 256 * 1024;

/// An op parsed by a worker, to be adopted by the body of the region being parsed.
struct Parsed {
    state: OpState,
    regions: Vec<RegionId>,
    inner: Option<Box<Body>>,
}

/// What a worker returns for a batch: its ops, the resources they use, the
/// location aliases they use before their definitions.
type BatchResult<'s> = (
    Vec<Parsed>,
    Vec<(String, Range<usize>)>,
    Vec<(&'s str, Range<usize>)>,
);

impl<'c, 's> Parser<'c, 's> {
    /// A parser for a batch: this one's source, line table and aliases, with
    /// a scratch body standing for the region the batch's ops belong to.
    fn worker(&self) -> Parser<'c, 's> {
        Parser {
            pos: 0,
            type_aliases: self.type_aliases.clone(),
            attr_aliases: self.attr_aliases.clone(),
            loc_aliases: self.loc_aliases.clone(),
            loc_alias_uses: vec![],
            type_cache: HashMap::default(),
            op_names: Default::default(),
            frames: vec![Frame {
                isolated: true,
                ..Frame::default()
            }],
            bodies: vec![Body::new()],
            resource_uses: vec![],
            resources: indexmap::IndexMap::new(),
            external_resources: indexmap::IndexMap::new(),
            line_starts: self.line_starts.clone(),
            parallel: false,
            serial_until: 0,
            last_line: 0,
            ..*self
        }
    }

    /// Parse `segs` in order; `None` if an op fails or ends elsewhere than cut.
    fn parse_batch(mut self, segs: &[Range<usize>]) -> Option<BatchResult<'s>> {
        // Worker threads have small stacks: deep nesting is left to the
        // serial parse on its big stack.
        let text = &self.src[segs.first()?.start..segs.last()?.end];
        self.shallow = is_shallow(text);
        if !self.shallow {
            return None;
        }
        let mut out = Vec::with_capacity(segs.len());
        for seg in segs {
            self.pos = seg.start;
            let op = self.parse_op().ok()?;
            self.skip_ws();
            if self.pos != seg.end {
                return None;
            }
            let body = self.body();
            let inner = body.take_inner(op);
            let d = body.op(op);
            let state = OpState::like(d);
            out.push(Parsed {
                state,
                regions: d.regions().to_vec(),
                inner,
            });
        }
        Some((out, self.resource_uses, self.loc_alias_uses))
    }
    /// At the start of an op in `block`: when a long run of independent ops
    /// starts here, parse it on rayon's threads, append its ops to `block` and
    /// return true; false (nothing consumed) to let the caller parse serially.
    pub(super) fn parse_parallel_run(&mut self, block: BlockId) -> bool {
        if !self.parallel || self.pos < self.serial_until {
            return false;
        }
        let ctx = self.ctx;
        let src: &[u8] = self.src.as_bytes();
        let mut seen: SmallVec<[(&str, bool); 4]> = SmallVec::new();
        let mut independent = |name| {
            if let Some(&(_, ok)) = seen.iter().find(|(n, _)| *n == name) {
                return ok;
            }
            let ok = independent_op(ctx, name);
            seen.push((name, ok));
            ok
        };
        let mut at = self.pos;
        let mut batch = |at: &mut usize, bytes: usize| {
            let (start, mut segs) = (*at, vec![]);
            while *at - start < bytes {
                let Some(seg) = lex::next_independent(src, *at, &mut independent) else {
                    break;
                };
                *at = seg.end;
                segs.push(seg);
            }
            segs
        };
        let first = batch(&mut at, MIN_PARALLEL_BYTES);
        if at - self.pos < MIN_PARALLEL_BYTES {
            // The run is short: nothing in it (nested ops included) is worth it.
            self.serial_until = at.max(self.pos + 1);
            return false;
        }
        let results: Mutex<Vec<(usize, Option<BatchResult<'s>>)>> = Mutex::new(vec![]);
        rayon::scope(|scope| {
            let mut segs = first;
            for index in 0.. {
                if segs.is_empty() {
                    break;
                }
                let (worker, results) = (self.worker(), &results);
                scope.spawn(move |_| {
                    let r = worker.parse_batch(&segs);
                    if let Ok(mut all) = results.lock() {
                        all.push((index, r));
                    }
                });
                segs = batch(&mut at, BATCH_BYTES);
            }
        });
        // Parallel or not, this run is not looked at again.
        self.serial_until = at;
        let mut results = results.into_inner().unwrap_or_default();
        results.sort_unstable_by_key(|r| r.0);
        let Some(parsed) = results.into_iter().map(|r| r.1).collect::<Option<Vec<_>>>() else {
            return false;
        };
        for (ops, uses, loc_uses) in parsed {
            PARALLEL_OPS.fetch_add(ops.len(), Ordering::Relaxed);
            for p in ops {
                let body = self.body();
                let op = body.create_op_with_regions(p.state, p.regions, p.inner);
                body.append_op(block, op);
            }
            self.resource_uses.extend(uses);
            self.loc_alias_uses.extend(loc_uses);
        }
        self.pos = at;
        true
    }
}

/// Registered, isolated from above, without operands or results: nothing in
/// it can refer to a value parsed before it. Symbol tables (modules) are left
/// to the serial parser, which then finds the runs of functions inside them.
pub(super) fn independent_op(ctx: &Context, name: &str) -> bool {
    let def = if name.contains('.') {
        ctx.op_def(name)
    } else {
        ctx.op_def(&format!("builtin.{name}"))
    };
    def.is_some_and(|d| {
        d.has_trait(Trait::IsolatedFromAbove)
            && !d.has_trait(Trait::SymbolTable)
            && d.operands.is_empty()
            && d.results.is_empty()
    })
}
