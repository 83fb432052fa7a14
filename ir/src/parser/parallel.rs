//! Parsing runs of independent ops on several threads.
//!
//! An op without results whose generic or custom form takes no operands can
//! refer to nothing parsed before it but aliases — if it is isolated from
//! above (a function), or if its regions turn out to use only values defined
//! inside them (an op of an unregistered dialect, whose isolation nobody
//! knows). A run of them is cut at lexical op boundaries
//! ([`lex::next_independent`]) into batches, and each batch is parsed by its
//! own [`Parser`] into its own arena on rayon's threads while the calling
//! thread goes on cutting; the arenas are then shifted and appended to the
//! region's body. Each op must end exactly where the cut said, use no value it
//! does not define, and define no name the enclosing scopes see; if anything
//! fails or disagrees, the whole run is parsed again serially, so the result
//! and every diagnostic are those of the serial parser.

use super::*;
use crate::body::IdShift;
use rayon::prelude::*;
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
/// Runs are looked for only this many regions deep. Finding one scans the
/// ops ahead to their ends; at every level of a deep nest that would rescan
/// the rest of the nest (quadratic: 10,000 nested ops of an unregistered
/// dialect took a minute). Real runs (functions) sit a few levels deep.
const MAX_PARALLEL_DEPTH: usize = 8;

/// What a worker returns for a batch.
struct Batch<'s> {
    /// The arena the batch's ops were parsed into (detached, in order).
    body: Body,
    ops: Vec<OpId>,
    /// Value names defined inside the ops' (non-isolated) regions.
    names: Vec<&'s str>,
    resource_uses: Vec<(String, Range<usize>)>,
    /// Location aliases used before their definitions.
    loc_alias_uses: Vec<(&'s str, Range<usize>)>,
    distinct_uses: Vec<(u64, Attribute, Range<usize>)>,
}

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
            distinct_uses: vec![],
            defined_names: None,
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

    /// Parse `segs` in order; `None` if an op fails, ends elsewhere than
    /// cut, or uses a value it does not define.
    fn parse_batch(mut self, segs: &[Range<usize>]) -> Option<Batch<'s>> {
        // Worker threads have small stacks: deep nesting is left to the
        // serial parse on its big stack.
        let text = &self.src[segs.first()?.start..segs.last()?.end];
        self.shallow = is_shallow(text);
        if !self.shallow {
            return None;
        }
        self.defined_names = Some(vec![]);
        let mut ops = Vec::with_capacity(segs.len());
        for seg in segs {
            self.pos = seg.start;
            let op = self.parse_op().ok()?;
            self.skip_ws();
            // A use of a name defined nowhere in the op would be a value from
            // outside (or an error), a successor a block outside: either way,
            // the serial parser decides.
            if self.pos != seg.end
                || !self.frames[0].forward.is_empty()
                || !self.frames[0].blocks.is_empty()
                || !self.body().op(op).successors().is_empty()
            {
                return None;
            }
            ops.push(op);
        }
        Some(Batch {
            body: self.bodies.pop()?,
            ops,
            names: self.defined_names.take().unwrap_or_default(),
            resource_uses: self.resource_uses,
            loc_alias_uses: self.loc_alias_uses,
            distinct_uses: self.distinct_uses,
        })
    }

    /// Whether names defined inside independently parsed ops could mean
    /// anything else here: a name the enclosing scopes see (the serial parse
    /// reports a redefinition), or a forward reference still open (its
    /// definition would resolve it).
    fn names_clash(&self, names: &[&'s str]) -> bool {
        let fi = self.isolated_frame_index();
        if !self.frames[fi].forward.is_empty() {
            return true;
        }
        let frames = &self.frames[fi..];
        if frames.iter().all(|f| f.names.is_empty()) {
            return false;
        }
        names.iter().any(|n| self.lookup(n).is_some())
    }

    /// At the start of an op in `block`: when a long run of independent ops
    /// starts here, parse it on rayon's threads, append its ops to `block` and
    /// return true; false (nothing consumed) to let the caller parse serially.
    pub(super) fn parse_parallel_run(&mut self, block: BlockId) -> bool {
        if !self.parallel || self.pos < self.serial_until || self.frames.len() > MAX_PARALLEL_DEPTH
        {
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
        if at - self.pos < MIN_PARALLEL_BYTES || first.len() < 2 {
            // A short run: nothing in it (nested ops included) is worth it.
            // A single big op: parsed serially, which looks for runs inside it.
            self.serial_until = if first.len() < 2 {
                self.pos + 1
            } else {
                at.max(self.pos + 1)
            };
            return false;
        }
        let results: Mutex<Vec<(usize, Option<Batch<'s>>)>> = Mutex::new(vec![]);
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
        let Some(mut batches) = results.into_iter().map(|r| r.1).collect::<Option<Vec<_>>>() else {
            return false;
        };
        if batches.iter().any(|b| self.names_clash(&b.names)) {
            return false;
        }
        // Each batch's arena goes after the previous ones: shift their ids
        // (in parallel), then append them and place their ops.
        let mut shift = self.body().next_ids();
        let mut shifts = Vec::with_capacity(batches.len());
        for b in &batches {
            shifts.push(shift);
            let n = b.body.next_ids();
            shift.ops += n.ops;
            shift.values += n.values;
            shift.blocks += n.blocks;
            shift.regions += n.regions;
        }
        let start = self.body().next_ids();
        self.body().reserve(IdShift {
            ops: shift.ops - start.ops,
            values: shift.values - start.values,
            blocks: shift.blocks - start.blocks,
            regions: shift.regions - start.regions,
        });
        batches
            .par_iter_mut()
            .zip(shifts.par_iter())
            .for_each(|(b, &by)| b.body.shift_ids(by));
        for (b, by) in batches.into_iter().zip(shifts) {
            PARALLEL_OPS.fetch_add(b.ops.len(), Ordering::Relaxed);
            let body = self.body();
            body.append_shifted(b.body);
            for op in b.ops {
                body.append_op(block, by.op(op));
            }
            self.resource_uses.extend(b.resource_uses);
            self.loc_alias_uses.extend(b.loc_alias_uses);
            self.distinct_uses.extend(b.distinct_uses);
        }
        self.pos = at;
        true
    }
}

/// An op a run may hold: registered, isolated from above, without operands or
/// results (nothing in it can refer to a value parsed before it; symbol
/// tables — modules — are left to the serial parser, which then finds the
/// runs of functions inside them), or of an unregistered dialect (workers
/// check that its regions use only what they define).
pub(super) fn independent_op(ctx: &Context, name: &str) -> bool {
    let def = if name.contains('.') {
        ctx.op_def(name)
    } else {
        ctx.op_def(&format!("builtin.{name}"))
    };
    match def {
        Some(d) => {
            d.has_trait(Trait::IsolatedFromAbove)
                && !d.has_trait(Trait::SymbolTable)
                && d.operands.is_empty()
                && d.results.is_empty()
        }
        None => {
            let dialect = name.split_once('.').map_or("", |(d, _)| d);
            ctx.allow_unregistered && !ctx.is_dialect_registered(dialect)
        }
    }
}
