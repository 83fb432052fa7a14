//! Parsing a module function by function: the source text is cut lexically
//! into its top-level ops ([`ge_ir::parser::split_module_text`]), each op is
//! parsed in a query of its own keyed by its text, so an edit re-parses only
//! the functions it touched. The cut and the pairing with declarations
//! ([`cut`], [`slices_in_context`]) are plain code the session runs outside
//! any query, so the keys they intern depend on no input (see
//! `Session::refresh_layout`); the result is the job's `layout`.
//!
//! Two queries per function: [`parse_slice`] parses the op alone and reports
//! its symbol, its declaration and the symbols it refers to (and, if it
//! refers to none, verifies and prints it as its unit text);
//! [`check_slice`] parses it again together with the declarations of those
//! symbols, verifies it (calls are checked against their callees'
//! signatures) and prints the unit text. Both ignore positions (a slice's
//! key is its text, not where it is in the file): whenever anything reports
//! a diagnostic, or the cut is not one op per slice, [`module_units`] falls back to
//! parsing the whole file ([`super::db::parse`]), whose diagnostics point
//! into the user's file. Likewise when locations are printed
//! (`--print-debuginfo`) or the module has a resource section.

use super::db::{parse, print_options, Config, Db, Job, Parsed, RuleFiles, UnitKey};
use super::units;
use ge_ir::parser::TopLevel;
use ge_ir::printer::print_module;
use ge_ir::{Context, Module};
use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::sync::Arc;

/// The text around the top-level ops: aliases and the `module … {` line,
/// and from the closing `}` on (both without comments, whitespace collapsed).
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct Prelude {
    #[returns(ref)]
    pub prefix: Arc<str>,
    #[returns(ref)]
    pub suffix: Arc<str>,
    pub config: Config,
    pub rules: RuleFiles,
}

/// One top-level op's text (whole lines, trailing comments included),
/// keyed by a digest of it: every slice is interned again in each revision,
/// and hashing 16 bytes instead of the text keeps that cheap. The text is in
/// [`super::db::Tools`] (`slice_text`), a function of the digest.
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct Slice {
    pub prelude: Prelude,
    pub digest: [u8; 16],
}

impl Slice {
    pub fn text(self, db: &dyn Db) -> Arc<str> {
        db.tools().slice_text(&self.digest(db))
    }
}

/// A slice with the declarations of the symbols it refers to.
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct SliceInContext {
    pub slice: Slice,
    #[returns(ref)]
    pub declarations: Arc<str>,
}

/// The source cut into slices, or `None` (parse the whole file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    pub prelude: Prelude,
    pub slices: Vec<Slice>,
}

/// The previous version's cut (untracked: the cut is a function of the
/// text either way, this only makes computing it proportional to the edit).
pub struct LastCut {
    text: Arc<str>,
    top: TopLevel,
    prelude: Prelude,
    /// Each op's digest.
    digests: Vec<[u8; 16]>,
}

/// Cut the job's text (plain code, run by [`super::Session`] outside any
/// query: the slices it interns then carry no dependency on the text, so
/// every query keyed by one is trusted after an edit without re-checking).
pub fn cut(db: &dyn Db, job: Job) -> Option<Cut> {
    let cfg = job.config(db);
    if cfg.debuginfo(db) {
        return None;
    }
    let ctx = db.tools().context(cfg.allow_unregistered(db), None);
    let text = job.text(db);
    let mut last = match db.tools().last_cut.lock() {
        Ok(l) => l,
        Err(p) => p.into_inner(),
    };
    // Where the texts differ: ops wholly outside it are the old ones.
    let ends = last
        .as_ref()
        .map(|l| ge_ir::parser::common_ends(&l.text, text));
    let top = match (&*last, ends) {
        (Some(l), Some(e)) => ge_ir::parser::resplit_with_ends(&ctx, &l.text, &l.top, text, e),
        _ => ge_ir::parser::split_module_text(&ctx, text),
    };
    let Some(top) = top.filter(|t| !text[t.suffix.clone()].contains("{-#")) else {
        *last = None;
        return None;
    };
    // Without comments and blank lines, so editing them leaves every slice's key.
    let strip = |r: Range<usize>| Arc::from(ge_ir::parser::strip_trivia(&text[r]));
    let prelude = Prelude::new(
        db,
        strip(top.prefix.clone()),
        strip(top.suffix.clone()),
        cfg,
        job.rules(db),
    );
    let old = last.as_ref().filter(|l| l.prelude == prelude);
    // An op whose text did not change keeps its digest (compared, not hashed).
    let digests: Vec<[u8; 16]> = top
        .ops
        .iter()
        .map(|r| {
            old.and_then(|l| l.unchanged_digest(text, r.clone(), ends))
                .unwrap_or_else(|| db.tools().add_slice_text(&text[r.clone()]))
        })
        .collect();
    let slices = digests
        .iter()
        .map(|d| Slice::new(db, prelude, *d))
        .collect();
    *last = Some(LastCut {
        text: text.clone(),
        top,
        prelude,
        digests,
    });
    Some(Cut { prelude, slices })
}

impl LastCut {
    /// The digest of the old op with exactly the text of `new[r]`: the op
    /// that started at the same offset, or at the same offset from the end.
    /// Outside the edit (`ends`: the texts' common prefix and suffix) the
    /// text is known to be the same; inside it, it is compared.
    fn unchanged_digest(
        &self,
        new: &str,
        r: Range<usize>,
        ends: Option<(usize, usize)>,
    ) -> Option<[u8; 16]> {
        let old_op = |start: usize| {
            let i = self
                .top
                .ops
                .binary_search_by_key(&start, |o| o.start)
                .ok()?;
            (self.top.ops[i].len() == r.len()).then(|| self.digests[i])
        };
        match ends {
            Some((p, _)) if r.end <= p => return old_op(r.start),
            Some((_, q)) if r.start >= new.len() - q => {
                return old_op(r.start + self.text.len() - new.len())
            }
            _ => {}
        }
        let piece = &new[r.clone()];
        let from_end = (r.start + self.text.len()).checked_sub(new.len());
        [Some(r.start), from_end]
            .into_iter()
            .flatten()
            .find_map(|start| {
                let i = self
                    .top
                    .ops
                    .binary_search_by_key(&start, |o| o.start)
                    .ok()?;
                let o = &self.top.ops[i];
                (self.text.get(o.clone()) == Some(piece)).then(|| self.digests[i])
            })
    }
}

/// The printed module around its units, if the prelude parses and verifies
/// without a diagnostic.
#[salsa::tracked(returns(ref))]
pub fn prelude_frame(db: &dyn Db, p: Prelude) -> Option<units::Frame> {
    let cfg = p.config(db);
    let ctx = db.tools().context(cfg.allow_unregistered(db), None);
    let text = format!("{}\n{}", p.prefix(db), p.suffix(db));
    let m = parse_clean(&ctx, &text)?;
    Some(units::frame(&ctx, &m, print_options(db, cfg)))
}

/// What a slice defines and uses, for its neighbours' declarations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceOutline {
    /// `@symbol`, or `None` for an op without a symbol.
    pub symbol: Option<String>,
    /// The op as a declaration, printed as a module member.
    pub declaration: String,
    /// Symbols it refers to (any, resolved against the module later).
    pub refs: BTreeSet<String>,
    /// With no symbol to refer to, the slice is its own context: its unit
    /// text when it verifies alone (what [`check_slice`] would print), so
    /// the slice is parsed once, not twice.
    pub alone: Option<Arc<str>>,
}

#[salsa::tracked(returns(ref))]
pub fn parse_slice(db: &dyn Db, slice: Slice) -> Option<SliceOutline> {
    let p = slice.prelude(db);
    let cfg = p.config(db);
    let ctx = db.tools().context(cfg.allow_unregistered(db), None);
    let text = format!("{}\n{}\n{}", p.prefix(db), &*slice.text(db), p.suffix(db));
    let m = parse_clean(&ctx, &text)?;
    let &[o] = m.top_ops().as_slice() else {
        return None;
    };
    let mut blobs = BTreeSet::new();
    let refs = units::symbol_refs(m.body(), o, &mut blobs);
    if !blobs.is_empty() {
        return None;
    }
    let alone = (refs.is_empty() && ge_ir::verifier::verify_module(&m).is_empty())
        .then(|| Arc::from(print_module(&m, print_options(db, cfg))));
    Some(SliceOutline {
        symbol: m
            .body()
            .op(o)
            .attr("sym_name")
            .and_then(|a| a.as_str())
            .map(str::to_string),
        declaration: units::declaration(&ctx, &m, o, print_options(db, cfg)),
        refs,
        alone,
    })
}

/// A slice that parsed and verified cleanly in its context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedSlice {
    /// The unit text: the module's attributes, the op, the declarations it uses.
    pub text: Arc<str>,
    /// Its unit, when the op has a symbol to name it by (else the module
    /// names it by its position).
    pub unit: Option<UnitKey>,
}

#[salsa::tracked(returns(ref))]
pub fn check_slice(db: &dyn Db, s: SliceInContext) -> Option<CheckedSlice> {
    let slice = s.slice(db);
    let p = slice.prelude(db);
    let cfg = p.config(db);
    let outline = parse_slice(db, slice).as_ref()?;
    let text: Arc<str> = match outline.refs.is_empty() {
        // Nothing to declare: the outline has the text (parsed once).
        true => outline.alone.clone()?,
        false => {
            let ctx = db.tools().context(cfg.allow_unregistered(db), None);
            let text = format!(
                "{}\n{}{}\n{}",
                p.prefix(db),
                &*slice.text(db),
                s.declarations(db),
                p.suffix(db)
            );
            let m = parse_clean(&ctx, &text)?;
            if !ge_ir::verifier::verify_module(&m).is_empty() {
                return None;
            }
            Arc::from(print_module(&m, print_options(db, cfg)))
        }
    };
    let symbol = outline.symbol.as_deref();
    let unit = symbol.map(|sym| {
        let name = units::unit_name(Some(sym), 0);
        UnitKey::new(db, name, text.clone(), cfg, p.rules(db))
    });
    Some(CheckedSlice { text, unit })
}

/// What the session keeps of each slice's outline between compiles: the
/// outline is a function of the slice and the settings, so it is kept
/// until they change (the session then starts a new cache). Reading 200
/// memoized outlines and re-interning 200 contexts on every save cost more
/// than the edited function itself.
#[derive(Default)]
pub struct OutlineCache {
    facts: HashMap<Slice, Option<Facts>>,
    /// The context of each slice that refers to nothing (its own).
    alone: HashMap<Slice, SliceInContext>,
}

struct Facts {
    symbol: Option<String>,
    declaration: String,
    refs: Vec<String>,
}

/// Each slice with the declarations it needs (in module order), or `None`
/// if a slice does not parse on its own. Plain code like [`cut`] (the
/// outlines come from the `parse_slice` queries, through `cache`).
pub fn slices_in_context(
    db: &dyn Db,
    c: &Cut,
    cache: &mut OutlineCache,
) -> Option<Vec<SliceInContext>> {
    for &s in &c.slices {
        cache.facts.entry(s).or_insert_with(|| {
            parse_slice(db, s).as_ref().map(|o| Facts {
                symbol: o.symbol.clone(),
                declaration: o.declaration.clone(),
                refs: o.refs.iter().cloned().collect(),
            })
        });
    }
    let facts: Vec<&Facts> = c
        .slices
        .iter()
        .map(|s| cache.facts.get(s).and_then(Option::as_ref))
        .collect::<Option<_>>()?;
    let mut defined: HashMap<&str, usize> = HashMap::new();
    if facts.iter().any(|f| !f.refs.is_empty()) {
        defined = facts
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.symbol.as_deref().map(|s| (s, i)))
            .collect();
    }
    if references_cycle(&facts, &defined) {
        return None;
    }
    let mut out = Vec::with_capacity(facts.len());
    for (i, f) in facts.iter().enumerate() {
        let slice = c.slices[i];
        if f.refs.is_empty() {
            let ctx = *cache
                .alone
                .entry(slice)
                .or_insert_with(|| SliceInContext::new(db, slice, Arc::from("")));
            out.push(ctx);
            continue;
        }
        let mut used: Vec<usize> = f
            .refs
            .iter()
            .filter_map(|r| defined.get(r.as_str()).copied())
            .filter(|&j| j != i)
            .collect();
        used.sort_unstable();
        let decls: String = used
            .iter()
            .map(|&j| facts[j].declaration.as_str())
            .collect();
        out.push(SliceInContext::new(db, slice, Arc::from(decls)));
    }
    Some(out)
}

/// Whether the slices refer to each other in a cycle (recursive calls). No
/// slice sees that on its own (it has only its callees' declarations), so
/// the whole file is parsed and verified instead, and the verifier reports it.
fn references_cycle(facts: &[&Facts], defined: &HashMap<&str, usize>) -> bool {
    let mut g = petgraph::graph::DiGraph::<(), ()>::new();
    let nodes: Vec<_> = facts.iter().map(|_| g.add_node(())).collect();
    for (i, f) in facts.iter().enumerate() {
        for r in &f.refs {
            if let Some(&j) = defined.get(r.as_str()) {
                g.add_edge(nodes[i], nodes[j], ());
            }
        }
    }
    petgraph::algo::is_cyclic_directed(&g)
}

/// How the session cut the source: the prelude and each slice in context,
/// or `None` when it could not (then the whole file is parsed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub prelude: Prelude,
    pub contexts: Vec<SliceInContext>,
}

/// The module's units: from the slices when every one parses and verifies
/// cleanly on its own, else from parsing the whole file.
#[salsa::tracked(returns(ref))]
pub fn module_units(db: &dyn Db, job: Job) -> Parsed {
    sliced_units(db, job).unwrap_or_else(|| parse(db, job).clone())
}

fn sliced_units(db: &dyn Db, job: Job) -> Option<Parsed> {
    let layout = job.layout(db).as_ref()?;
    let frame = prelude_frame(db, layout.prelude).clone()?;
    let cfg = job.config(db);
    let mut keys = Vec::with_capacity(layout.contexts.len());
    for (i, &s) in layout.contexts.iter().enumerate() {
        let checked = check_slice(db, s).as_ref()?;
        keys.push(checked.unit.unwrap_or_else(|| {
            let name = units::unit_name(None, i);
            UnitKey::new(db, name, checked.text.clone(), cfg, job.rules(db))
        }));
    }
    Some(Parsed {
        units: keys,
        frame,
        diagnostics: String::new(),
        failed: false,
    })
}

/// `text` parsed as a module, if the parse reports nothing.
fn parse_clean(ctx: &Context, text: &str) -> Option<Module> {
    ge_ir::parser::parse_module(ctx, "<slice>", text, ge_ir::parser::ParseOptions::default()).ok()
}
