//! ge-opt's incremental features: `--watch`, `--incremental-stats` and the
//! compile cache (`--cache`, `--cache-dir DIR`, `--no-cache`).

use super::cache::{self, CompileCache, KeyBuilder, Lookup};
use super::{Session, Settings};
use crate::opt::{OptArgs, OptOutput};
use ge_ir::Context;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Handle `--watch` and the compile cache; `None` when neither applies.
pub fn intercept(
    args: &OptArgs,
    ctx: &mut Context,
    uncached: fn(OptArgs, &mut Context) -> OptOutput,
) -> Option<OptOutput> {
    if args.watch {
        let (mut o, mut e) = (Vec::new(), Vec::new());
        let code = watch(args, &mut o, &mut e);
        return Some(OptOutput {
            stdout: String::from_utf8_lossy(&o).into_owned().into(),
            stderr: String::from_utf8_lossy(&e).into_owned(),
            code,
        });
    }
    let dir = cache_dir(args)?;
    Some(with_cache(args, ctx, &dir, uncached))
}

/// The cache directory in use, if any.
pub fn cache_dir(args: &OptArgs) -> Option<std::path::PathBuf> {
    if args.no_cache {
        return None;
    }
    match &args.cache_dir {
        Some(d) => Some(d.into()),
        None if args.cache => cache::default_dir(),
        None => None,
    }
}

/// Why a run cannot be served from the cache, judged from its flags alone.
fn not_cacheable(args: &OptArgs) -> Option<String> {
    if args.input == "-" {
        return Some("input is stdin".into());
    }
    if args.timing {
        return Some("--timing measures a compile".into());
    }
    if args.list_ops || args.list_passes || args.list_rule_helpers {
        return Some("nothing is compiled".into());
    }
    if args.emit_om.is_some() {
        return Some("--emit-om writes a file".into());
    }
    None
}

/// Why a run's result cannot be stored. Its pipeline is parsed only here, on
/// a miss: a run that could not be stored has no entry to hit, so a hit
/// needs no parse (canonicalize alone takes ~0.1 ms to set up).
fn not_storable(args: &OptArgs, ctx: &Context) -> Option<String> {
    if let Some(p) = &args.pass_pipeline {
        if let Ok(p) = ge_ir::pass::parse_pipeline(&ctx.passes, p) {
            if super::pipeline::has_side_effects(&p) {
                return Some("the pipeline writes files".into());
            }
        }
    }
    None
}

/// The cache key of a ge-opt run, or an error reading one of its inputs
/// (then the normal path reports it).
fn key_of(args: &OptArgs) -> Result<cache::CacheKey, ()> {
    let mut k = KeyBuilder::new(&cache::tool_version());
    k.file_field("input", &args.input).map_err(|_| ())?;
    // Every flag that can change the output, whatever flags are added
    // later: the arguments minus those that only say where things go.
    let mut a = args.clone();
    a.output = "-".into();
    a.cache = false;
    a.cache_dir = None;
    a.no_cache = false;
    a.incremental_stats = false;
    k.field("args", format!("{a:?}").as_bytes());
    for r in &args.rewrite_rules {
        k.field("rules", r.as_bytes());
        k.field("rules-text", &std::fs::read(r).map_err(|_| ())?);
    }
    if let Some(p) = &args.pass_pipeline {
        for s in super::pipeline::soc_files(p) {
            k.field("soc", s.as_bytes());
            k.field("soc-text", &std::fs::read(&s).map_err(|_| ())?);
        }
    }
    Ok(k.finish())
}

fn with_cache(
    args: &OptArgs,
    ctx: &mut Context,
    dir: &Path,
    uncached: fn(OptArgs, &mut Context) -> OptOutput,
) -> OptOutput {
    let start = Instant::now();
    let stats = args.incremental_stats;
    let note = |out: &mut OptOutput, msg: String| {
        if stats {
            out.stderr.push_str(&format!("ge-opt: cache: {msg}\n"));
        }
    };
    if let Some(why) = not_cacheable(args) {
        let mut out = uncached(args.clone(), ctx);
        note(&mut out, format!("not used ({why})"));
        return out;
    }
    let Ok(key) = key_of(args) else {
        return uncached(args.clone(), ctx);
    };
    let cache = match CompileCache::open(dir) {
        Ok(c) => c,
        Err(e) => {
            let mut out = uncached(args.clone(), ctx);
            out.stderr.push_str(&format!(
                "warning: compile cache '{}' unusable: {e}\n",
                dir.display()
            ));
            return out;
        }
    };
    let mut prefix = String::new();
    match cache.get(&key) {
        Lookup::Hit(p) => {
            if let Some((stdout, stderr)) = cache::decode_output(p) {
                let out = OptOutput {
                    stdout,
                    stderr,
                    code: 0,
                };
                let mut out = finish(args, out);
                // From looking for the entry to the output written (the
                // process's start-up is not in it).
                let ms = start.elapsed().as_secs_f64() * 1e3;
                note(
                    &mut out,
                    format!("hit {} (served in {ms:.2} ms)", key.short()),
                );
                return out;
            }
            prefix = format!("corrupt entry {} (undecodable), recompiled", key.short());
        }
        Lookup::Corrupt(why) => {
            prefix = format!("corrupt entry {} ({why}), recompiled", key.short());
        }
        Lookup::Miss => {}
    }
    if let Some(why) = not_storable(args, ctx) {
        let mut out = uncached(args.clone(), ctx);
        note(&mut out, format!("not used ({why})"));
        return out;
    }
    let mut a = args.clone();
    a.output = "-".into();
    let mut out = uncached(a, ctx);
    if !prefix.is_empty() {
        note(&mut out, prefix);
    }
    if out.code == 0 {
        match cache.put(&key, &cache::encode_output(&out.stdout, &out.stderr)) {
            Ok(()) => note(&mut out, format!("miss {} (stored)", key.short())),
            Err(e) => out.stderr.push_str(&format!(
                "warning: cannot write compile cache entry in '{}': {e}\n",
                dir.display()
            )),
        }
    } else {
        note(
            &mut out,
            format!("miss {} (failed, not stored)", key.short()),
        );
    }
    finish(args, out)
}

/// Write the output file if one was asked for.
fn finish(args: &OptArgs, mut out: OptOutput) -> OptOutput {
    if args.output != "-" && out.code == 0 {
        if let Err(e) = ge_ir::output::write(&args.output, out.stdout.as_bytes()) {
            out.stderr
                .push_str(&format!("error: cannot write '{}': {e}\n", args.output));
            out.code = 1;
        }
        out.stdout.clear();
    }
    out
}

// ---- --watch ----------------------------------------------------------------

/// `ge-opt --watch` writing to the process's stdout/stderr as it goes.
pub fn watch_main(args: &OptArgs) -> i32 {
    let mut o = std::io::stdout();
    let mut e = std::io::stderr();
    watch(args, &mut o, &mut e)
}

fn unsupported(args: &OptArgs) -> Option<&'static str> {
    [
        (args.input == "-", "reading stdin"),
        (args.split_input_file, "--split-input-file"),
        (args.verify_diagnostics, "--verify-diagnostics"),
        (args.print_ir_after_all, "--print-ir-after-all"),
        (args.print_ir_after_change, "--print-ir-after-change"),
        (args.timing, "--timing"),
        (args.emit_om.is_some(), "--emit-om (use Session::om_bytes)"),
        (args.dump_pass_pipeline, "--dump-pass-pipeline"),
        (
            args.list_ops || args.list_passes || args.list_rule_helpers,
            "--list-*",
        ),
    ]
    .into_iter()
    .find(|(bad, _)| *bad)
    .map(|(_, what)| what)
}

/// Files whose edits trigger a recompile: input, rule files, SoC profiles.
fn watched(args: &OptArgs) -> Vec<String> {
    let mut v = vec![args.input.clone()];
    v.extend(args.rewrite_rules.iter().cloned());
    if let Some(p) = &args.pass_pipeline {
        v.extend(super::pipeline::soc_files(p));
    }
    v
}

type Stamp = Vec<Option<(SystemTime, u64, u64)>>;

fn stamp(files: &[String]) -> Stamp {
    files
        .iter()
        .map(|f| {
            std::fs::metadata(f).ok().map(|m| {
                (
                    m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    m.len(),
                    inode(&m),
                )
            })
        })
        .collect()
}

/// The file's inode: a save by rename within one tick of the file system's
/// coarse clock can keep mtime and size, never the inode.
#[cfg(unix)]
fn inode(m: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(m)
}

#[cfg(not(unix))]
fn inode(_: &std::fs::Metadata) -> u64 {
    0
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("error: cannot read '{path}': {e}\n"))
}

/// `path` read straight into the shared text the session keeps (one copy,
/// from the kernel: a save re-reads the whole file, and copying it again
/// into the session's `Arc` was a tenth of a re-compile).
fn read_arc(path: &str) -> Result<Arc<str>, String> {
    use std::io::Read;
    let e = |e: std::io::Error| format!("error: cannot read '{path}': {e}\n");
    let mut f = std::fs::File::open(path).map_err(e)?;
    let len = f.metadata().map_err(e)?.len() as usize;
    // Zeroed memory comes fresh from the allocator (no pass to clear it).
    // SAFETY: all-zero bytes are a valid `[u8]`, so the zeroed slice is initialised.
    let mut bytes: Arc<[u8]> = unsafe { Arc::new_zeroed_slice(len).assume_init() };
    let whole = match Arc::get_mut(&mut bytes) {
        Some(dst) => f.read_exact(dst).is_ok() && f.read(&mut [0u8]).is_ok_and(|n| n == 0),
        None => false,
    };
    if !whole {
        // The file changed size while being read: read it the plain way.
        let mut v = vec![];
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_end(&mut v))
            .map_err(e)?;
        bytes = Arc::from(v);
    }
    if std::str::from_utf8(&bytes).is_err() {
        return Err(format!(
            "error: cannot read '{path}': stream did not contain valid UTF-8\n"
        ));
    }
    // SAFETY: `str` is `[u8]` that is valid UTF-8 (checked just above), with
    // the same layout.
    Ok(unsafe { Arc::from_raw(Arc::into_raw(bytes) as *const str) })
}

/// Read every watched file into the session's inputs.
fn load(
    args: &OptArgs,
    session: &mut Option<Session>,
    settings: &mut Settings,
) -> Result<(), String> {
    let text = read_arc(&args.input)?;
    let mut rules = vec![];
    for r in &args.rewrite_rules {
        rules.push((r.clone(), read(r)?));
    }
    let mut socs = vec![];
    if let Some(p) = &args.pass_pipeline {
        for s in super::pipeline::soc_files(p) {
            let t = read(&s)?;
            socs.push((s, Arc::from(t)));
        }
    }
    settings.socs = socs;
    match session {
        Some(s) => {
            s.set_source_arc(text);
            s.set_settings(settings);
            s.set_rules(rules);
        }
        None => {
            let mut s = Session::new(&args.input, &text, settings);
            s.set_rules(rules);
            *session = Some(s);
        }
    }
    Ok(())
}

/// The watch loop: compile, report, wait for a change, repeat. Returns the
/// last compile's exit code when `--watch-iterations` stops it.
pub fn watch(args: &OptArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    if let Some(what) = unsupported(args) {
        let _ = writeln!(err, "error: --watch does not support {what}");
        return 1;
    }
    let mut settings = Settings {
        pipeline: args.pass_pipeline.clone(),
        generic: args.print_op_generic,
        debuginfo: args.print_debuginfo,
        hex_over: args.print_elements_hex_over,
        verify_each: args.verify_each,
        allow_unregistered: args.allow_unregistered_dialect,
        socs: vec![],
    };
    let files = watched(args);
    let poll = Duration::from_millis(args.watch_poll_ms.max(1));
    let mut session: Option<Session> = None;
    let mut edits = args.watch_simulate_edits.iter();
    let mut iteration = 0usize;
    let mut code;
    loop {
        let seen = stamp(&files);
        let t0 = Instant::now();
        let loaded = load(args, &mut session, &mut settings);
        match (&loaded, &mut session) {
            (Ok(()), Some(s)) => {
                let c = s.compile();
                let ms = t0.elapsed().as_secs_f64() * 1e3;
                code = c.failed as i32;
                if !c.failed {
                    // The pieces as they are (no module-sized join).
                    if args.output == "-" {
                        let _ = c.stdout.write_to(out);
                    } else if let Err(e) =
                        ge_ir::output::write_with(&args.output, |w| c.stdout.write_to(w))
                    {
                        let _ = writeln!(err, "error: cannot write '{}': {e}", args.output);
                        code = 1;
                    }
                }
                let _ = err.write_all(c.stderr.as_bytes());
                let n = c.stats.optimized.len();
                let _ = writeln!(
                    err,
                    "ge-opt --watch: {} {} in {ms:.1} ms ({n} of {} functions re-optimised)",
                    args.input,
                    if c.failed { "failed" } else { "compiled" },
                    c.units
                );
                if args.incremental_stats {
                    let _ = err.write_all(stats_lines(&c.stats).as_bytes());
                }
            }
            (Err(e), _) => {
                code = 1;
                let _ = err.write_all(e.as_bytes());
            }
            (Ok(()), None) => {
                code = 1;
            }
        }
        let _ = out.flush();
        let _ = err.flush();
        iteration += 1;
        if args.watch_iterations.is_some_and(|n| iteration >= n) {
            return code;
        }
        if let Some(next) = edits.next() {
            // A simulated save: the next version replaces the input.
            let r = std::fs::read(next).and_then(|b| ge_ir::output::write(&args.input, &b));
            if let Err(e) = r {
                let _ = writeln!(err, "error: cannot apply simulated edit '{next}': {e}");
                return 1;
            }
            continue;
        }
        // Wait for a save (mtime or size of a watched file changes).
        loop {
            std::thread::sleep(poll);
            if stamp(&files) != seen {
                break;
            }
        }
    }
}

/// `--incremental-stats` lines: which queries ran, which functions re-ran.
pub fn stats_lines(s: &super::QueryStats) -> String {
    let q: Vec<String> = s.executed.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut out = format!(
        "incremental-stats: queries re-run: {}\n",
        if q.is_empty() {
            "none".to_string()
        } else {
            q.join(" ")
        }
    );
    out.push_str(&format!(
        "incremental-stats: functions re-optimised: {}\n",
        if s.optimized.is_empty() {
            "none".to_string()
        } else {
            s.optimized.join(" ")
        }
    ));
    out
}
