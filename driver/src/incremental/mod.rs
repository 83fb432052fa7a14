//! Incremental compilation (DESIGN.md §7): a salsa database that recompiles
//! only what an edit touched, `ge-opt --watch`, and an on-disk compile cache.
//!
//! - [`db`]: the salsa inputs and queries; [`Session`] is the API over them.
//! - [`slices`]: parsing the source function by function.
//! - [`units`]: cutting a module into per-function units and reassembling it.
//! - [`pipeline`]: which part of a pass pipeline can run per function.
//! - [`rules`]: rule files grouped by root op, so functions depend only on
//!   the rules that can match them.
//! - [`cache`]: the content-addressed compile cache (`--cache-dir`).
//! - [`cli`]: the ge-opt flags (`--watch`, `--incremental-stats`, the cache).
//!
//! The design is in docs/architecture.md, "Incremental compilation".

pub mod cache;
pub mod cli;
pub mod db;
pub mod pipeline;
pub mod rules;
pub mod slices;
pub mod text;
pub mod units;

pub use db::QueryStats;
use db::{Config, IncrDb, Job, RuleFiles};
use salsa::{Durability, Setter};
use std::collections::HashSet;
use std::sync::Arc;

/// What a [`Session`] compiles with (everything but the source text).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    pub pipeline: Option<String>,
    pub generic: bool,
    pub debuginfo: bool,
    pub hex_over: Option<usize>,
    pub verify_each: bool,
    pub allow_unregistered: bool,
    /// SoC profile files the pipeline names: (path, contents).
    pub socs: Vec<(String, Arc<str>)>,
}

/// The result of one compilation.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The printed module (what ge-opt prints), empty on failure.
    pub stdout: text::Text,
    /// Rendered diagnostics and pass reports.
    pub stderr: String,
    pub failed: bool,
    /// Top-level ops (functions) in the module.
    pub units: usize,
    /// Queries that ran for this compilation.
    pub stats: QueryStats,
}

/// A long-lived compilation: set inputs, compile, edit, compile again; only
/// the queries whose inputs changed run again.
pub struct Session {
    db: IncrDb,
    job: Job,
    config: Config,
    rules: RuleFiles,
    /// Compile units on this many threads (1: on the caller's thread).
    pub threads: usize,
    /// Keys whose queries already ran (under the current settings and
    /// rules): only new ones are worth handing to threads.
    warmed: std::sync::Mutex<Warmed>,
}

#[derive(Default)]
struct Warmed {
    slices: HashSet<slices::Slice>,
    in_context: HashSet<slices::SliceInContext>,
    units: HashSet<db::UnitKey>,
    outlines: slices::OutlineCache,
}

impl Warmed {
    /// The items of `all` not in `seen`, which then are.
    fn fresh<T: Copy + Eq + std::hash::Hash>(seen: &mut HashSet<T>, all: &[T]) -> Vec<T> {
        all.iter().copied().filter(|x| seen.insert(*x)).collect()
    }
}

impl Session {
    pub fn new(name: &str, text: &str, settings: &Settings) -> Session {
        let db = IncrDb::default();
        // Settings and rules change seldom, the source on every save: as
        // durable inputs, memos that read only them (`plan`, the rule
        // index) are trusted after an edit without walking their
        // dependencies again.
        let config = Config::builder(
            settings.pipeline.clone(),
            settings.generic,
            settings.debuginfo,
            settings.hex_over,
            settings.verify_each,
            settings.allow_unregistered,
            settings.socs.clone(),
        )
        .durability(Durability::HIGH)
        .new(&db);
        let rules = RuleFiles::builder(vec![])
            .durability(Durability::HIGH)
            .new(&db);
        let job = Job::builder(name.to_string(), Arc::from(text), config, rules, None)
            .durability(Durability::HIGH)
            .text_durability(Durability::LOW)
            .layout_durability(Durability::LOW)
            .new(&db);
        Session {
            db,
            job,
            config,
            rules,
            threads: std::env::var("GE_INCREMENTAL_THREADS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| {
                    std::thread::available_parallelism()
                        .map(|n| n.get())
                        .unwrap_or(1)
                })
                .max(1),
            warmed: Default::default(),
        }
    }

    fn warmed(&self) -> std::sync::MutexGuard<'_, Warmed> {
        match self.warmed.lock() {
            Ok(w) => w,
            Err(p) => p.into_inner(),
        }
    }

    /// Replace the source text (a no-op if it is unchanged).
    pub fn set_source(&mut self, text: &str) {
        if &**self.job.text(&self.db) != text {
            self.set_source_arc(Arc::from(text));
        }
    }

    /// [`Session::set_source`] with text already in an `Arc` (no copy), and
    /// without comparing it first: `--watch` calls it when the file was
    /// saved, and an unchanged text costs only the cut's one comparison.
    pub fn set_source_arc(&mut self, text: Arc<str>) {
        self.job.set_text(&mut self.db).to(text);
    }

    /// Replace the rule files: (path, text) in order.
    pub fn set_rules(&mut self, files: Vec<(String, String)>) {
        let files: Vec<(String, Arc<str>)> =
            files.into_iter().map(|(p, t)| (p, Arc::from(t))).collect();
        if *self.rules.files(&self.db) != files {
            self.rules
                .set_files(&mut self.db)
                .with_durability(Durability::HIGH)
                .to(files);
            *self.warmed() = Warmed::default();
        }
    }

    /// The current settings.
    pub fn settings(&self) -> Settings {
        let (c, db) = (self.config, &self.db);
        Settings {
            pipeline: c.pipeline(db).clone(),
            generic: c.generic(db),
            debuginfo: c.debuginfo(db),
            hex_over: c.hex_over(db),
            verify_each: c.verify_each(db),
            allow_unregistered: c.allow_unregistered(db),
            socs: c.socs(db).clone(),
        }
    }

    /// Replace the settings (only the fields that changed are set).
    pub fn set_settings(&mut self, s: &Settings) {
        if self.settings() == *s {
            return;
        }
        *self.warmed() = Warmed::default();
        let (c, db) = (self.config, &mut self.db);
        if *c.pipeline(db) != s.pipeline {
            c.set_pipeline(db)
                .with_durability(Durability::HIGH)
                .to(s.pipeline.clone());
        }
        if c.generic(db) != s.generic {
            c.set_generic(db)
                .with_durability(Durability::HIGH)
                .to(s.generic);
        }
        if c.debuginfo(db) != s.debuginfo {
            c.set_debuginfo(db)
                .with_durability(Durability::HIGH)
                .to(s.debuginfo);
        }
        if c.hex_over(db) != s.hex_over {
            c.set_hex_over(db)
                .with_durability(Durability::HIGH)
                .to(s.hex_over);
        }
        if c.verify_each(db) != s.verify_each {
            c.set_verify_each(db)
                .with_durability(Durability::HIGH)
                .to(s.verify_each);
        }
        if c.allow_unregistered(db) != s.allow_unregistered {
            c.set_allow_unregistered(db)
                .with_durability(Durability::HIGH)
                .to(s.allow_unregistered);
        }
        if *c.socs(db) != s.socs {
            c.set_socs(db)
                .with_durability(Durability::HIGH)
                .to(s.socs.clone());
        }
    }

    /// Cut the source into slices in context and hand the layout to the
    /// queries. Done here, outside any query: what it interns (slices,
    /// slices in context) then depends on no input, so the per-function
    /// queries keyed by them read only durable inputs and salsa trusts
    /// their memos after an edit without walking their dependencies —
    /// a one-function edit costs that function, not 200 verifications.
    fn refresh_layout(&mut self) {
        // Run what is new on threads first; the queries then find it
        // memoized. (An edit of one function runs it on this thread.)
        let layout = slices::cut(&self.db, self.job).and_then(|cut| {
            let fresh = Warmed::fresh(&mut self.warmed().slices, &cut.slices);
            self.par_each(&fresh, |db, s| {
                slices::parse_slice(db, *s);
            });
            let contexts = slices::slices_in_context(&self.db, &cut, &mut self.warmed().outlines)?;
            let fresh = Warmed::fresh(&mut self.warmed().in_context, &contexts);
            self.par_each(&fresh, |db, s| {
                slices::check_slice(db, *s);
            });
            Some(slices::Layout {
                prelude: cut.prelude,
                contexts,
            })
        });
        if *self.job.layout(&self.db) != layout {
            self.job.set_layout(&mut self.db).to(layout);
        }
    }

    /// Compile (units in parallel on `threads` threads), returning the output
    /// and the queries that ran.
    pub fn compile(&mut self) -> Compiled {
        self.refresh_layout();
        let parsed = slices::module_units(&self.db, self.job);
        if !parsed.failed {
            let fresh = Warmed::fresh(&mut self.warmed().units, &parsed.units);
            self.par_each(&fresh, |db, u| {
                db::optimize_unit(db, *u);
            });
        }
        let out = db::module_output(&self.db, self.job);
        Compiled {
            stdout: out.stdout.clone(),
            stderr: out.stderr.clone(),
            failed: out.failed,
            units: out.units,
            stats: self.db.take_stats(),
        }
    }

    /// Run `f` on every item on [`Session::threads`] threads (nothing with
    /// one thread: the queries then run on demand). Each thread has its own
    /// handle on the database; they share the memo tables, so a result
    /// computed by one is seen by all.
    fn par_each<T: Sync>(&self, items: &[T], f: impl Fn(&IncrDb, &T) + Sync) {
        if self.threads < 2 || items.len() < 2 {
            return;
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..self.threads.min(items.len()) {
                let (db, next, f) = (self.db.clone(), &next, &f);
                s.spawn(move || loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    f(&db, item);
                });
            }
        });
    }

    /// The `.om` of the compiled module (the pipeline must lower it, e.g.
    /// `atc`): `entry` picks the function when several were lowered.
    pub fn om_bytes(&mut self, entry: Option<&str>, soc: &str) -> Result<Arc<[u8]>, String> {
        self.refresh_layout();
        let e = db::OmEntry::new(&self.db, entry.map(str::to_string), soc.to_string());
        db::om_bytes(&self.db, self.job, e).clone()
    }

    /// Queries run since the last compile (or call to this).
    pub fn take_stats(&self) -> QueryStats {
        self.db.take_stats()
    }
}
