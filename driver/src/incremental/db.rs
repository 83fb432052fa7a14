//! The salsa database: inputs, tracked queries and the event log behind
//! `--incremental-stats`. See docs/architecture.md, "Incremental compilation".
//!
//! Query graph (every arrow is a tracked read):
//!
//! ```text
//! Job.text ─▶ parse ─▶ [UnitKey per top-level op] ─▶ unit_ir ─▶ optimize_unit ─┐
//! Config ──▶ plan ───────────────────────────────────────────────┘             ├─▶ module_output ─▶ om_bytes
//! RuleFiles ─▶ rule_index ─▶ rule_group(op name) ─────────────▶ optimize_unit  │
//!                                                                  (each unit) ─┘
//! ```
//!
//! A unit is keyed by its *printed text* (interned), not by its position in
//! the file, so an edit elsewhere, whitespace or a comment leaves its key and
//! therefore every query on it untouched.

use super::pipeline::{split_pipeline, Plan};
use super::rules::{self, RuleEntry, RuleIndex};
use ge_ir::diagnostics::{Diagnostic, SourceMap};
use ge_ir::pass::{parse_pipeline, run_pipeline, Instrumentation, PassContext, PassManagerOptions};
use ge_ir::printer::{print_module, PrintOptions};
use ge_ir::{Context, Module};
use salsa::Database as _;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

/// The database API the queries need besides salsa itself.
#[salsa::db]
pub trait Db: salsa::Database {
    fn tools(&self) -> &Tools;
}

/// Untracked helpers shared by all handles of one database: contexts (a
/// deterministic function of their key, so caching them is invisible to
/// salsa) and the execution log.
pub struct Tools {
    contexts: Mutex<HashMap<[u8; 32], Arc<Context>>>,
    /// Keys of queries salsa decided to execute (from `WillExecute` events).
    executed: Arc<Mutex<Vec<salsa::DatabaseKeyIndex>>>,
    /// Names of the units whose `optimize_unit` ran.
    optimized: Mutex<Vec<String>>,
    /// The last source text cut into slices: the next version is cut
    /// starting from it (see [`super::slices::cut`]).
    pub(super) last_cut: Mutex<Option<super::slices::LastCut>>,
    /// Parsed pipelines by (context, text): pass instances keep what they
    /// build once (pattern sets), so every unit should not build it again.
    pipelines: Mutex<HashMap<(usize, String), Arc<ge_ir::pass::OpPipeline>>>,
    /// Slice texts by digest (see [`super::slices::Slice`]).
    slice_texts: Mutex<HashMap<[u8; 16], Arc<str>>>,
}

impl Tools {
    /// A context with every dialect and pass and exactly `rules` as the user
    /// rules (`None`: no rule files were given, `apply-rules` uses the library).
    pub fn context(&self, allow_unregistered: bool, rules: Option<&[RuleEntry]>) -> Arc<Context> {
        let mut h = blake3::Hasher::new();
        h.update(&[allow_unregistered as u8]);
        match rules {
            None => {
                h.update(b"no-user-rules");
            }
            Some(rs) => {
                h.update(b"user-rules");
                for r in rs {
                    h.update(&(r.key.len() as u64).to_le_bytes());
                    h.update(r.key.as_bytes());
                }
            }
        }
        let key = *h.finalize().as_bytes();
        let mut map = match self.contexts.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        map.entry(key)
            .or_insert_with(|| {
                let mut ctx = ge_compile::context();
                ctx.allow_unregistered = allow_unregistered;
                if let Some(rs) = rules {
                    let mut list: Vec<_> = rs.iter().map(|r| r.rule.clone()).collect();
                    if list.is_empty() {
                        // Rule files were given but none can match here: keep
                        // `apply-rules` on user rules (an empty set would fall
                        // back to the shipped library).
                        list.push(rules::never_rule());
                    }
                    ctx.extensions
                        .push(Arc::new(ge_rewrites::library::UserRules(list)));
                }
                Arc::new(ctx)
            })
            .clone()
    }
}

impl Tools {
    /// Remember a slice's text; its digest (BLAKE3, 128 bits).
    pub fn add_slice_text(&self, text: &str) -> [u8; 16] {
        let mut d = [0u8; 16];
        d.copy_from_slice(&blake3::hash(text.as_bytes()).as_bytes()[..16]);
        let mut map = match self.slice_texts.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        map.entry(d).or_insert_with(|| Arc::from(text));
        d
    }

    /// The text of a slice digest from [`Tools::add_slice_text`] (empty for
    /// an unknown digest, which no slice has).
    pub fn slice_text(&self, digest: &[u8; 16]) -> Arc<str> {
        let map = match self.slice_texts.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        map.get(digest).cloned().unwrap_or_else(|| Arc::from(""))
    }

    /// `text` parsed against `ctx`'s passes, once per context and text.
    pub fn pipeline(
        &self,
        ctx: &Arc<Context>,
        text: &str,
    ) -> Result<Arc<ge_ir::pass::OpPipeline>, String> {
        let key = (Arc::as_ptr(ctx) as usize, text.to_string());
        let mut map = match self.pipelines.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        if let Some(p) = map.get(&key) {
            return Ok(p.clone());
        }
        let p = Arc::new(parse_pipeline(&ctx.passes, text).map_err(|e| e.message)?);
        map.insert(key, p.clone());
        Ok(p)
    }
}

#[salsa::db]
#[derive(Clone)]
pub struct IncrDb {
    storage: salsa::Storage<Self>,
    tools: Arc<Tools>,
}

impl Default for IncrDb {
    fn default() -> Self {
        let executed: Arc<Mutex<Vec<salsa::DatabaseKeyIndex>>> = Arc::default();
        let log = executed.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |e: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = e.kind {
                if let Ok(mut l) = log.lock() {
                    l.push(database_key);
                }
            }
        })));
        IncrDb {
            storage,
            tools: Arc::new(Tools {
                contexts: Mutex::default(),
                executed,
                optimized: Mutex::default(),
                last_cut: Mutex::default(),
                pipelines: Mutex::default(),
                slice_texts: Mutex::default(),
            }),
        }
    }
}

#[salsa::db]
impl salsa::Database for IncrDb {}

#[salsa::db]
impl Db for IncrDb {
    fn tools(&self) -> &Tools {
        &self.tools
    }
}

/// Which queries ran since the last [`IncrDb::take_stats`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryStats {
    /// Query name → executions.
    pub executed: std::collections::BTreeMap<String, usize>,
    /// Units (`@name`, or `#index` for unnamed top-level ops) re-optimised, sorted.
    pub optimized: Vec<String>,
}

impl QueryStats {
    pub fn count(&self, query: &str) -> usize {
        self.executed.get(query).copied().unwrap_or(0)
    }
}

impl IncrDb {
    pub fn take_stats(&self) -> QueryStats {
        let keys = match self.tools.executed.lock() {
            Ok(mut l) => std::mem::take(&mut *l),
            Err(_) => vec![],
        };
        let mut executed = std::collections::BTreeMap::new();
        for k in keys {
            let name = self.ingredient_debug_name(k.ingredient_index()).to_string();
            *executed.entry(name).or_insert(0) += 1;
        }
        let mut optimized = match self.tools.optimized.lock() {
            Ok(mut l) => std::mem::take(&mut *l),
            Err(_) => vec![],
        };
        optimized.sort();
        QueryStats {
            executed,
            optimized,
        }
    }
}

// ---- inputs ---------------------------------------------------------------

/// Tool settings that affect the output: the pipeline, print options and the
/// SoC profiles the pipeline names (their text, so an edited profile counts).
#[salsa::input(debug)]
pub struct Config {
    #[returns(ref)]
    pub pipeline: Option<String>,
    pub generic: bool,
    pub debuginfo: bool,
    pub hex_over: Option<usize>,
    pub verify_each: bool,
    pub allow_unregistered: bool,
    #[returns(ref)]
    pub socs: Vec<(String, Arc<str>)>,
}

/// The `.rr` files, in command-line order.
#[salsa::input(debug)]
pub struct RuleFiles {
    #[returns(ref)]
    pub files: Vec<(String, Arc<str>)>,
}

/// One compilation: a source file with its settings and rules.
#[salsa::input(debug)]
pub struct Job {
    #[returns(ref)]
    pub name: String,
    #[returns(ref)]
    pub text: Arc<str>,
    pub config: Config,
    pub rules: RuleFiles,
    /// The text cut into slices, set by the session before each compile
    /// (see [`super::slices::cut`]); `None`: parse the whole file.
    #[returns(ref)]
    pub layout: Option<crate::incremental::slices::Layout>,
}

pub fn print_options(db: &dyn Db, cfg: Config) -> PrintOptions {
    PrintOptions {
        generic: cfg.generic(db),
        debuginfo: cfg.debuginfo(db),
        hex_elements_over: cfg.hex_over(db),
    }
}

/// A top-level op of the module, as a self-contained module text: the module's
/// attributes, the op, declarations of the symbols it references and the
/// resource blobs it uses. Interned: equal text means the same key.
// Immortal: with salsa's default (slots unread for one revision may be
// reused), re-interning the units of an edited module in order lets a new
// unit take the slot of an unchanged one not yet re-read, which then needs a
// new slot itself — a chain of needless re-runs. Old versions of edited units
// stay (small, and an undo finds their results again).
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct UnitKey {
    #[returns(ref)]
    pub name: String,
    #[returns(ref)]
    pub text: Arc<str>,
    pub config: Config,
    pub rules: RuleFiles,
}

/// An op name, for looking up the rules rooted at it.
#[salsa::interned(no_lifetime, revisions = usize::MAX)]
pub struct OpName {
    #[returns(ref)]
    pub name: String,
    pub rules: RuleFiles,
}

// ---- queries --------------------------------------------------------------

/// The pass pipeline split into a per-function prefix and a module suffix.
#[salsa::tracked(returns(ref))]
pub fn plan(db: &dyn Db, cfg: Config) -> Result<Plan, String> {
    let ctx = db.tools().context(cfg.allow_unregistered(db), None);
    let mut soc = blake3::Hasher::new();
    for (path, text) in cfg.socs(db) {
        soc.update(&(path.len() as u64).to_le_bytes());
        soc.update(path.as_bytes());
        soc.update(&(text.len() as u64).to_le_bytes());
        soc.update(text.as_bytes());
    }
    let soc_hash = *soc.finalize().as_bytes();
    match cfg.pipeline(db) {
        None => Ok(Plan {
            prefix: None,
            suffix: None,
            all_rules: false,
            soc_hash,
        }),
        Some(text) => {
            let p = parse_pipeline(&ctx.passes, text).map_err(|e| {
                let mut sm = SourceMap::new();
                let f = sm.add("<pass-pipeline>", Arc::from(text.as_str()));
                sm.render(&Diagnostic::error(
                    e.message,
                    ge_ir::diagnostics::Pos::Span {
                        file: f,
                        range: e.range,
                    },
                ))
            })?;
            Ok(split_pipeline(&p, soc_hash))
        }
    }
}

/// The module, parsed and verified, cut into units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub units: Vec<UnitKey>,
    /// Printed module around the units (the resource section is put
    /// together from the units' blobs).
    pub frame: super::units::Frame,
    /// Rendered parse/verifier diagnostics; `failed` if any is an error.
    pub diagnostics: String,
    pub failed: bool,
}

#[salsa::tracked(returns(ref))]
pub fn parse(db: &dyn Db, job: Job) -> Parsed {
    let cfg = job.config(db);
    let ctx = db.tools().context(cfg.allow_unregistered(db), None);
    let name = job.name(db).clone();
    let text = job.text(db).clone();
    let mut sm = SourceMap::new();
    let file = sm.add(&name, text.clone());
    let fail = |diagnostics: String| Parsed {
        units: vec![],
        frame: Default::default(),
        diagnostics,
        failed: true,
    };
    let m = match ge_ir::parser::parse_module(
        &ctx,
        &name,
        &text,
        ge_ir::parser::ParseOptions::file(file),
    ) {
        Ok(m) => m,
        Err(d) => return fail(sm.render(&d)),
    };
    let v = ge_ir::verifier::verify_module(&m);
    let mut diagnostics = String::new();
    for d in &v {
        diagnostics.push_str(&sm.render(d));
    }
    if v.iter().any(|d| d.is_error()) {
        return fail(diagnostics);
    }
    let popts = print_options(db, cfg);
    let split = super::units::split_module(&ctx, &m, popts);
    Parsed {
        units: split
            .units
            .into_iter()
            .map(|(n, t)| UnitKey::new(db, n, Arc::from(t), cfg, job.rules(db)))
            .collect(),
        frame: split.frame,
        diagnostics,
        failed: false,
    }
}

/// Rule files parsed and grouped by root op (errors rendered).
#[salsa::tracked(returns(ref))]
pub fn rule_index(db: &dyn Db, rules: RuleFiles) -> Result<Arc<RuleIndex>, String> {
    let ctx = db.tools().context(false, None);
    rules::index(&ctx, rules.files(db)).map(Arc::new)
}

/// Whether any rule file was given (then `apply-rules` runs user rules only).
#[salsa::tracked]
pub fn has_rule_files(db: &dyn Db, rules: RuleFiles) -> bool {
    !rules.files(db).is_empty()
}

/// The rules rooted at one op name (the group compares equal when only other
/// rules, or source positions, changed, so readers are not invalidated).
#[salsa::tracked(returns(ref))]
pub fn rule_group(db: &dyn Db, op: OpName) -> rules::Group {
    match rule_index(db, op.rules(db)) {
        Ok(ix) => ix.group(op.name(db)),
        Err(_) => rules::Group::default(),
    }
}

/// What a unit looks like before optimisation: the op names in it (which
/// select the rules it depends on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitIr {
    pub op_names: BTreeSet<String>,
    pub error: Option<String>,
}

#[salsa::tracked(returns(ref))]
pub fn unit_ir(db: &dyn Db, unit: UnitKey) -> UnitIr {
    let cfg = unit.config(db);
    let ctx = db.tools().context(cfg.allow_unregistered(db), None);
    match parse_unit(&ctx, unit.name(db), unit.text(db)) {
        Ok((mut m, _)) => UnitIr {
            op_names: super::units::op_names_ever(&mut m),
            error: None,
        },
        Err(e) => UnitIr {
            op_names: BTreeSet::new(),
            error: Some(e),
        },
    }
}

/// A unit after the per-function part of the pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitResult {
    /// The op printed as a module member (`"\n  " + text`, indented).
    pub chunk: Arc<str>,
    /// Top-level ops the pipeline added, printed likewise (see [`super::units::PrintedUnit`]).
    pub extra: Arc<str>,
    /// Top-level symbols of both.
    pub symbols: Vec<String>,
    /// Builtin blobs of both, in print order (see [`super::units::PrintedUnit`]).
    pub blobs: Vec<(String, Arc<str>)>,
    pub extra_blobs: Vec<(String, Arc<str>)>,
    /// Rendered diagnostics (against the unit's own text) and pass reports.
    pub diagnostics: String,
    pub failed: bool,
    /// Names of the user rules this unit's result depends on.
    pub rules: Vec<String>,
}

#[salsa::tracked(returns(ref))]
pub fn optimize_unit(db: &dyn Db, unit: UnitKey) -> UnitResult {
    if let Ok(mut l) = db.tools().optimized.lock() {
        l.push(unit.name(db).clone());
    }
    let cfg = unit.config(db);
    let popts = print_options(db, cfg);
    let fail = |diagnostics: String| UnitResult {
        chunk: Arc::from(""),
        extra: Arc::from(""),
        symbols: vec![],
        blobs: vec![],
        extra_blobs: vec![],
        diagnostics,
        failed: true,
        rules: vec![],
    };
    let plan = match plan(db, cfg) {
        Ok(p) => p.clone(),
        Err(e) => return fail(e.clone()),
    };
    let rule_files = unit.rules(db);
    let with_rules = has_rule_files(db, rule_files);
    // The op names select the rules; without rule files the unit is parsed
    // once, below (a parse error is reported there).
    let mut names: BTreeSet<String> = BTreeSet::new();
    if with_rules {
        let ir = unit_ir(db, unit);
        if let Some(e) = &ir.error {
            return fail(e.clone());
        }
        names = ir.op_names.clone();
    }
    let Some(prefix) = &plan.prefix else {
        // Nothing runs per function: print the unit as it is.
        let ctx = db.tools().context(cfg.allow_unregistered(db), None);
        return match parse_unit(&ctx, unit.name(db), unit.text(db)) {
            Ok((m, _)) => unit_result(&m, popts, unit, db, &m.top_ops(), String::new(), vec![]),
            Err(e) => fail(e),
        };
    };
    // Rules: those rooted at an op name that can occur in this unit. Start
    // from the closure of its op names under the rules' replacements, run,
    // and widen if an op appeared (even transiently) whose rules were not
    // loaded — then the run is repeated with them.
    let mut attempt = 0;
    loop {
        attempt += 1;
        let selected: Option<Vec<RuleEntry>> = if !with_rules {
            None
        } else if plan.all_rules || attempt > 4 {
            match rule_index(db, rule_files) {
                Ok(ix) => Some(ix.all().to_vec()),
                Err(e) => return fail(e.clone()),
            }
        } else {
            if let Err(e) = rule_index_ok(db, rule_files) {
                return fail(e);
            }
            Some(closure_rules(db, rule_files, &mut names))
        };
        let ctx = db
            .tools()
            .context(cfg.allow_unregistered(db), selected.as_deref());
        let (mut m, mut sm) = match parse_unit(&ctx, unit.name(db), unit.text(db)) {
            Ok(x) => x,
            Err(e) => return fail(e),
        };
        let before = m.top_ops();
        let (diags, report, ok) =
            run_text_pipeline(db.tools(), &ctx, &mut m, prefix, cfg.verify_each(db));
        let mut rendered = String::new();
        for d in &diags {
            rendered.push_str(&sm.render(d));
        }
        rendered.push_str(&report);
        if with_rules && !plan.all_rules && attempt <= 4 {
            let seen = super::units::op_names_ever(&mut m);
            let missing: Vec<String> = seen
                .into_iter()
                .filter(|n| !names.contains(n))
                .filter(|n| !rule_group(db, OpName::new(db, n.clone(), rule_files)).is_empty())
                .collect();
            if !missing.is_empty() {
                names.extend(missing);
                continue;
            }
        }
        let _ = &mut sm;
        let rules_used = selected
            .map(|rs| rs.into_iter().map(|r| r.rule.name).collect())
            .unwrap_or_default();
        if !ok {
            return UnitResult {
                rules: rules_used,
                ..fail(rendered)
            };
        }
        return unit_result(&m, popts, unit, db, &before, rendered, rules_used);
    }
}

/// A unit's printed result (see [`super::units::print_unit`]).
fn unit_result(
    m: &Module,
    popts: PrintOptions,
    unit: UnitKey,
    db: &dyn Db,
    before: &[ge_ir::OpId],
    diagnostics: String,
    rules: Vec<String>,
) -> UnitResult {
    let whole = unit.name(db) == super::units::WHOLE_MODULE;
    let p = super::units::print_unit(m, popts, whole, before);
    UnitResult {
        chunk: Arc::from(p.chunk),
        extra: Arc::from(p.extra),
        symbols: p.symbols,
        blobs: p.blobs,
        extra_blobs: p.extra_blobs,
        diagnostics,
        failed: false,
        rules,
    }
}

fn rule_index_ok(db: &dyn Db, rules: RuleFiles) -> Result<(), String> {
    // A tracked read of the whole index, but only of whether it parsed: the
    // answer is backdated, so rule edits do not invalidate callers through it.
    match rule_index_error(db, rules) {
        Some(e) => Err(e.clone()),
        None => Ok(()),
    }
}

#[salsa::tracked(returns(ref))]
pub fn rule_index_error(db: &dyn Db, rules: RuleFiles) -> Option<String> {
    rule_index(db, rules).as_ref().err().cloned()
}

/// Grow `names` to a fixed point under "a rule rooted at a name in the set
/// can create the ops of its replacement", reading one rule group per name.
fn closure_rules(db: &dyn Db, rules: RuleFiles, names: &mut BTreeSet<String>) -> Vec<RuleEntry> {
    let mut out: Vec<RuleEntry> = vec![];
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut todo: Vec<String> = names.iter().cloned().collect();
    todo.push(rules::ANY_ROOT.to_string());
    while let Some(n) = todo.pop() {
        if !done.insert(n.clone()) {
            continue;
        }
        let g = rule_group(db, OpName::new(db, n, rules));
        for e in &g.rules {
            for p in &e.creates {
                if !done.contains(p) {
                    names.insert(p.clone());
                    todo.push(p.clone());
                }
            }
            if !out.iter().any(|o| o.key == e.key) {
                out.push(e.clone());
            }
        }
    }
    // Rules keep their file order among themselves: only rules with the same
    // root compete for an op, and within a group the order is the file order.
    out.sort_by_key(|e| e.order);
    out
}

/// Parse a unit's module text (a source of its own, named after the unit).
pub fn parse_unit(
    ctx: &Context,
    name: &str,
    text: &Arc<str>,
) -> Result<(Module, SourceMap), String> {
    let mut sm = SourceMap::new();
    let label = format!("<{name}>");
    let f = sm.add(&label, text.clone());
    match ge_ir::parser::parse_module(ctx, &label, text, ge_ir::parser::ParseOptions::file(f)) {
        Ok(m) => Ok((m, sm)),
        Err(d) => Err(sm.render(&d)),
    }
}

/// Run pipeline text on a module: (diagnostics, pass reports, success).
pub fn run_text_pipeline(
    tools: &Tools,
    ctx: &Arc<Context>,
    m: &mut Module,
    pipeline: &str,
    verify_each: bool,
) -> (Vec<Diagnostic>, String, bool) {
    let p = match tools.pipeline(ctx, pipeline) {
        Ok(p) => p,
        Err(e) => {
            return (
                vec![Diagnostic::error(
                    format!("internal pipeline '{pipeline}': {e}"),
                    ge_ir::diagnostics::Pos::None,
                )],
                String::new(),
                false,
            )
        }
    };
    let opts = PassManagerOptions {
        verify_each,
        print_ir_after_all: false,
        print_ir_after_change: false,
        timing: false,
        threading: false,
        print: PrintOptions::default(),
    };
    let inst = Instrumentation::default();
    let cx = PassContext {
        ctx,
        output: Default::default(),
    };
    let r = run_pipeline(&p, m, &cx, &opts, &inst);
    let mut diags = vec![];
    let mut report = String::new();
    if let Ok(mut o) = cx.output.lock() {
        diags.append(&mut o.diagnostics);
        report.push_str(&o.report);
    }
    let ok = match r {
        Ok(()) => !diags.iter().any(|d| d.is_error()),
        Err(e) => {
            diags.extend(e);
            false
        }
    };
    (diags, report, ok)
}

/// The whole compilation's result, as ge-opt would print it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// (An `Arc<String>`: the assembled text moves in without a copy.)
    pub stdout: super::text::Text,
    pub stderr: String,
    pub failed: bool,
    /// Number of units (top-level ops).
    pub units: usize,
}

#[salsa::tracked(returns(ref))]
pub fn module_output(db: &dyn Db, job: Job) -> Output {
    let cfg = job.config(db);
    let fail = |stderr: String, units: usize| Output {
        stdout: Default::default(),
        stderr,
        failed: true,
        units,
    };
    let plan = match plan(db, cfg) {
        Ok(p) => p.clone(),
        Err(e) => return fail(e.clone(), 0),
    };
    if has_rule_files(db, job.rules(db)) {
        if let Err(e) = rule_index_ok(db, job.rules(db)) {
            return fail(e, 0);
        }
    }
    let parsed = super::slices::module_units(db, job);
    if parsed.failed {
        return fail(parsed.diagnostics.clone(), 0);
    }
    let mut stderr = parsed.diagnostics.clone();
    let results: Vec<&UnitResult> = parsed.units.iter().map(|u| optimize_unit(db, *u)).collect();
    let units = parsed.units.len();
    for r in &results {
        stderr.push_str(&r.diagnostics);
    }
    if results.iter().any(|r| r.failed) {
        return fail(stderr, units);
    }
    // Module-level passes see the whole module, assembled from the units.
    let ctx = match has_rule_files(db, job.rules(db)) {
        true => match rule_index(db, job.rules(db)) {
            Ok(ix) => db
                .tools()
                .context(cfg.allow_unregistered(db), Some(ix.all())),
            Err(e) => return fail(e.clone(), units),
        },
        false => db.tools().context(cfg.allow_unregistered(db), None),
    };
    // Units compiled alone cannot see each other's symbols: a kernel named
    // like another unit's function would have been renamed in the module.
    let mut symbols = std::collections::HashSet::new();
    if results
        .iter()
        .flat_map(|r| &r.symbols)
        .any(|s| !symbols.insert(s.as_str()))
    {
        return compile_whole(db, job, &ctx, units);
    }
    // The blobs in the order the printer meets them in the assembled module
    // (units' ops, then what the pipeline added); one name with two
    // contents means units made blobs independently: the module decides.
    let blob_lists = results
        .iter()
        .map(|r| &r.blobs)
        .chain(results.iter().map(|r| &r.extra_blobs));
    let mut blobs: Vec<(String, Arc<str>)> = vec![];
    let mut seen: std::collections::HashMap<&str, &Arc<str>> = Default::default();
    for (name, entry) in blob_lists.flatten() {
        match seen.insert(name.as_str(), entry) {
            None => blobs.push((name.clone(), entry.clone())),
            Some(prev) if prev == entry => {}
            Some(_) => return compile_whole(db, job, &ctx, units),
        }
    }
    // Each unit's op, then what the pipeline added to each (kernels), in
    // unit order — where module passes append them. One allocation of the
    // final size (a big buffer grown by doubling touches twice the pages).
    let mut pieces: Vec<Arc<str>> = Vec::with_capacity(2 * results.len() + 2);
    pieces.push(Arc::from(parsed.frame.header.as_str()));
    pieces.extend(results.iter().map(|r| r.chunk.clone()));
    pieces.extend(
        results
            .iter()
            .filter(|r| !r.extra.is_empty())
            .map(|r| r.extra.clone()),
    );
    pieces.push(Arc::from(parsed.frame.trailer(&blobs)));
    let text = super::text::Text::from_pieces(pieces);
    let Some(suffix) = &plan.suffix else {
        return Output {
            stdout: text,
            stderr,
            failed: false,
            units,
        };
    };
    let label = format!("{} (after per-function passes)", job.name(db));
    compile_text(
        db,
        cfg,
        &ctx,
        &label,
        Arc::from(text.as_str()),
        suffix,
        stderr,
        units,
    )
}

/// The whole pipeline on the whole source, as plain ge-opt runs it.
fn compile_whole(db: &dyn Db, job: Job, ctx: &Arc<Context>, units: usize) -> Output {
    let cfg = job.config(db);
    let Some(pipeline) = cfg.pipeline(db) else {
        return Output {
            stdout: Default::default(),
            stderr: "error: no pipeline to run\n".into(),
            failed: true,
            units,
        };
    };
    let text = job.text(db).clone();
    compile_text(
        db,
        cfg,
        ctx,
        job.name(db),
        text,
        pipeline,
        String::new(),
        units,
    )
}

/// Parse `text` (named `label` in diagnostics), run `pipeline` on it and
/// print the result; diagnostics are appended to `stderr`.
#[allow(clippy::too_many_arguments)]
fn compile_text(
    db: &dyn Db,
    cfg: Config,
    ctx: &Arc<Context>,
    label: &str,
    text: Arc<str>,
    pipeline: &str,
    mut stderr: String,
    units: usize,
) -> Output {
    let mut sm = SourceMap::new();
    let f = sm.add(label, text.clone());
    let mut m = match ge_ir::parser::parse_module(
        ctx,
        label,
        &text,
        ge_ir::parser::ParseOptions::file(f),
    ) {
        Ok(m) => Some(m),
        Err(d) => {
            stderr.push_str(&sm.render(&d));
            None
        }
    };
    let ok = m.as_mut().is_some_and(|m| {
        let (diags, report, ok) =
            run_text_pipeline(db.tools(), ctx, m, pipeline, cfg.verify_each(db));
        for d in &diags {
            stderr.push_str(&sm.render(d));
        }
        stderr.push_str(&report);
        ok
    });
    Output {
        stdout: match (&m, ok) {
            (Some(m), true) => print_module(m, print_options(db, cfg)).into(),
            _ => Default::default(),
        },
        stderr,
        failed: !ok,
        units,
    }
}

/// The `.om` of the compiled module's lowered entry function.
#[salsa::tracked(returns(ref))]
pub fn om_bytes(db: &dyn Db, job: Job, entry: OmEntry) -> Result<Arc<[u8]>, String> {
    let out = module_output(db, job);
    if out.failed {
        return Err(out.stderr.clone());
    }
    let cfg = job.config(db);
    let ctx = db.tools().context(cfg.allow_unregistered(db), None);
    let mut sm = SourceMap::new();
    let f = sm.add(job.name(db), Arc::from(out.stdout.as_str()));
    let m = ge_ir::parser::parse_module(
        &ctx,
        job.name(db),
        &out.stdout,
        ge_ir::parser::ParseOptions::file(f),
    )
    .map_err(|d| sm.render(&d))?;
    let opts = ge_lowering::om::OmOptions {
        entry: entry.entry(db).clone(),
        name: None,
        soc: entry.soc(db).clone(),
    };
    let model = ge_lowering::om::stream_from_module(m.body(), Some(&m), &opts)?;
    let bytes = ge_om::format::stream_to_bytes(&model)?;
    Ok(Arc::from(bytes))
}

/// Which function to export to an `.om`, and the SoC recorded in its header.
#[salsa::interned(no_lifetime, revisions = usize::MAX)]
pub struct OmEntry {
    #[returns(ref)]
    pub entry: Option<String>,
    #[returns(ref)]
    pub soc: String,
}
