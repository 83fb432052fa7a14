//! The memory budget: how many bytes one allocation sized by a model or its
//! inputs may take. Sizes in a model file are untrusted — a dim of 2^40, a
//! 200 GB external weight, an `Expand` to 256 GB — and an allocation that
//! large aborts the process. Everything sized by a file or an input asks
//! [`check`] first and gets a one-line error instead.
//!
//! The budget is the tools' `--max-memory BYTES` (ge-opt, ge-atc, ge-run,
//! ge-translate) or [`set_max_memory`] for library users. Unset, it is the
//! memory the machine has available (`MemAvailable` of `/proc/meminfo`,
//! read once), or [`FALLBACK`] where that cannot be read.
//!
//! Byte sizes are computed with checked arithmetic: an overflow is "too
//! large", never a wrapped small number.

use crate::body::{Body, WalkOrder};
use crate::diagnostics::{Diagnostic, Severity};
use crate::ident::Ident;
use crate::location::LocData;
use crate::module::Module;
use crate::types::Type;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The budget where available memory cannot be read: 64 GiB.
pub const FALLBACK: u64 = 64 << 30;

/// 0 = not set.
static MAX: AtomicU64 = AtomicU64::new(0);

/// Set the process's budget in bytes (0 restores the default).
pub fn set_max_memory(bytes: u64) {
    MAX.store(bytes, Ordering::Relaxed);
}

/// The budget in bytes.
pub fn max_memory() -> u64 {
    match MAX.load(Ordering::Relaxed) {
        0 => default_budget(),
        n => n,
    }
}

/// The machine's available memory, read once.
pub fn default_budget() -> u64 {
    static DEFAULT: OnceLock<u64> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| mem_available(&t))
            .filter(|&n| n > 0)
            .unwrap_or(FALLBACK)
    })
}

/// `MemAvailable:  123456 kB` in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// `Ok` if `bytes` (`None`: too large to count) fit in the budget; else a
/// one-line error about `what` ("'data.expand' result", "input #0").
pub fn check(bytes: Option<u64>, what: &dyn std::fmt::Display) -> Result<(), String> {
    let max = max_memory();
    match bytes {
        Some(b) if b <= max => Ok(()),
        Some(b) => Err(format!(
            "{what} needs {} ({b} bytes), more than the memory budget of {} (--max-memory)",
            human(b),
            human(max)
        )),
        None => Err(format!(
            "{what} is too large to address (its byte size overflows), more than the memory budget of {} (--max-memory)",
            human(max)
        )),
    }
}

/// `numel * elem` with checked arithmetic (`None` on overflow).
pub fn bytes_of(dims: impl IntoIterator<Item = u64>, elem: u64) -> Option<u64> {
    dims.into_iter().try_fold(elem, |acc, d| acc.checked_mul(d))
}

/// [`check_result_sizes`] for a whole module, with its symbols at their
/// upper bounds (`ge.symbol_bounds`).
pub fn check_module(m: &Module) -> Vec<Diagnostic> {
    let bounds: HashMap<Ident, i64> = m
        .outer
        .op(m.op)
        .attr("ge.symbol_bounds")
        .and_then(|a| a.as_dict())
        .map(|d| {
            d.entries()
                .iter()
                .filter_map(|(k, v)| Some((*k, v.as_int()?)))
                .collect()
        })
        .unwrap_or_default();
    check_result_sizes(m.body(), &bounds)
}

/// Check the size of every op result in `body` (nested bodies included)
/// whose type is sized at compile time — static dims, symbols at their upper
/// `bounds` — against the budget: one error per op, at its location and
/// naming it (ONNX and TensorFlow ops are located by node name). A compiler
/// (ge-atc) runs this so a model whose tensors cannot exist is refused at
/// compile time, not at run time.
pub fn check_result_sizes(body: &Body, bounds: &HashMap<Ident, i64>) -> Vec<Diagnostic> {
    let mut out = vec![];
    body.walk_deep(WalkOrder::Pre, &mut |b, o| {
        let d = b.op(o);
        for (i, &r) in d.results().iter().enumerate() {
            let ty = b.value_type(r);
            let Some(bytes) = upper_bytes(ty, bounds) else {
                continue;
            };
            let what = match d.loc.data() {
                LocData::Name { name, .. } => {
                    format!("node '{name}' ('{}') result #{i} of type '{ty}'", d.name)
                }
                _ => format!("'{}' result #{i} of type '{ty}'", d.name),
            };
            if let Err(m) = check(bytes, &what) {
                out.push(Diagnostic::at_loc(Severity::Error, m, d.loc));
                break;
            }
        }
    });
    out
}

/// The byte size of tensor type `t` with symbols at `bounds`: `None` when a
/// dim is unknown or an unbounded symbol, `Some(None)` when it overflows.
fn upper_bytes(t: Type, bounds: &HashMap<Ident, i64>) -> Option<Option<u64>> {
    let tt = t.as_tensor()?;
    Some(bytes_of(dims_at(t, bounds)?, tt.dtype.byte_size() as u64))
}

/// The dims of tensor type `t` with symbols from `symbols` (`None` when one
/// is unknown, unbound or negative).
fn dims_at(t: Type, symbols: &HashMap<Ident, i64>) -> Option<Vec<u64>> {
    t.as_tensor()?
        .shape()
        .iter()
        .map(|d| u64::try_from(d.eval(symbols)?).ok())
        .collect()
}

/// Before a reference tensor (8 bytes per element) of type `t` is computed:
/// `Ok` unless its size, known from the type and the bound `symbols`,
/// exceeds the budget. Types sized only by the data pass.
pub fn check_reference_tensor(
    t: Type,
    symbols: &HashMap<Ident, i64>,
    what: &dyn std::fmt::Display,
) -> Result<(), String> {
    match dims_at(t, symbols) {
        Some(dims) => check(bytes_of(dims, 8), what),
        None => Ok(()),
    }
}

/// A size for messages: `256.0 GiB`, `12.5 MiB`, `300 B`.
pub fn human(b: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// Parse `--max-memory`: bytes, or a number with a K, M, G or T suffix
/// (powers of 1024; `KiB`, `MB`… spellings accepted).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (bytes, or a number with K, M, G or T)"))?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => {
            return Err(format!(
                "'{s}' is not a size (bytes, or a number with K, M, G or T)"
            ))
        }
    };
    let v = n
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("size '{s}' is too large"))?;
    if v == 0 {
        return Err("the memory budget must be more than 0 bytes".into());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("2K"), Ok(2048));
        assert_eq!(parse_size("3GiB"), Ok(3 << 30));
        assert_eq!(parse_size("1 t"), Ok(1 << 40));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999999999999T").is_err());
        assert!(parse_size("17179869184T").is_err());
        assert_eq!(human(300), "300 B");
        assert_eq!(human(256 << 30), "256.0 GiB");
    }

    #[test]
    fn byte_sizes_are_checked() {
        assert_eq!(bytes_of([2, 3], 4), Some(24));
        assert_eq!(bytes_of([1 << 40, 1 << 30], 4), None);
        assert_eq!(bytes_of([], 8), Some(8));
        assert_eq!(
            mem_available("MemTotal: 10 kB\nMemAvailable:    2048 kB\n"),
            Some(2 << 20)
        );
        assert_eq!(mem_available("MemTotal: 10 kB\n"), None);
    }

    #[test]
    fn check_names_what_and_the_budget() {
        assert!(check(Some(1), &"x").is_ok());
        let e = check(Some(u64::MAX), &"'data.expand' result").expect_err("too big");
        assert!(e.starts_with("'data.expand' result needs 16.0 EiB"), "{e}");
        assert!(e.contains("--max-memory"), "{e}");
        let e = check(None, &"input #0").expect_err("overflow");
        assert!(e.contains("overflows"), "{e}");
    }
}
