//! The per-case expected status file (tools/conformance/expected.tsv): what
//! each ONNX node test gave when the file was last updated. A run is checked
//! against it case by case — any case that got worse fails CI, however many
//! others improved — and `--update-expected` rewrites it.

use super::CaseResult;
use std::collections::BTreeMap;
use std::fmt;

/// A case's result, worst first (the order is "better than").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Status {
    /// Wrong results, a crash, or an error from a model ge claims to handle.
    #[default]
    Fail,
    /// A clear refusal: an op, type or form ge does not handle yet.
    Unsupported,
    /// Outputs drawn by random ops, which no implementation can reproduce,
    /// checked by element type, shape and the set their values lie in
    /// (`super::random`); every other output right. Not a pass.
    RandomChecked,
    /// Right results, but at least one kernel ran on the reference interpreter.
    PassInterpreted,
    /// Right results, every kernel native.
    Pass,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Pass,
        Status::PassInterpreted,
        Status::RandomChecked,
        Status::Fail,
        Status::Unsupported,
    ];

    /// The word in the file.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::PassInterpreted => "pass-interp",
            Status::RandomChecked => "checked-random",
            Status::Fail => "fail",
            Status::Unsupported => "unsupported",
        }
    }

    /// How the report says it.
    pub fn title(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::PassInterpreted => "pass (interpreter kernels)",
            Status::RandomChecked => "checked (random outputs)",
            Status::Fail => "fail",
            Status::Unsupported => "unsupported",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|x| x.name() == s)
    }

    pub fn is_pass(self) -> bool {
        matches!(self, Status::Pass | Status::PassInterpreted)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One line of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    pub status: Status,
    pub reason: String,
}

const HEADER: &str = "\
# ONNX backend tests (node tests; SUITE/NAME for the pytorch-converted, pytorch-operator
# and simple suites), case by case: the status each had when this file was last updated.
# tools/conformance/run.sh --check (CI) fails when any case gets worse:
#   pass > pass-interp > checked-random > unsupported > fail
# (pass-interp: right results, but some kernel ran on the reference interpreter;
# checked-random: outputs of random ops, which no implementation reproduces, have the
# right element type, shape and value set, every other output is right — not a pass;
# unsupported: a clear refusal; fail: wrong results, a crash or an unexpected error).
# After an improvement, rewrite it with: tools/conformance/run.sh --update-expected
# case\tstatus\treason
";

/// Parse the file: `case<TAB>status<TAB>reason` lines, `#` comments.
pub fn parse(text: &str, path: &str) -> Result<BTreeMap<String, Expected>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut f = line.splitn(3, '\t');
        let (name, status) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
        let status = Status::parse(status).ok_or_else(|| {
            format!(
                "{path}:{}: expected 'case<TAB>status<TAB>reason' with status pass, pass-interp, \
                 checked-random, fail or unsupported, got '{line}'",
                i + 1
            )
        })?;
        let e = Expected {
            status,
            reason: f.next().unwrap_or("").to_string(),
        };
        if out.insert(name.to_string(), e).is_some() {
            return Err(format!("{path}:{}: case '{name}' is listed twice", i + 1));
        }
    }
    Ok(out)
}

/// The file's text for `results`.
pub fn render(results: &[CaseResult]) -> String {
    let mut s = String::from(HEADER);
    for r in results {
        let reason = r.reason.replace(['\t', '\n'], " ");
        s.push_str(&format!("{}\t{}\t{reason}\n", r.name, r.status));
    }
    s
}

/// How a run differs from the file.
#[derive(Debug, Default)]
pub struct Diff {
    /// Worse than expected, or a failure the file does not list: (case, was, now, reason).
    pub worse: Vec<(String, Option<Status>, Status, String)>,
    /// Better than expected, or a case the file does not list that does not fail.
    pub better: Vec<(String, Option<Status>, Status)>,
    /// Listed in the file but not run (a case the pinned onnx no longer has).
    pub gone: Vec<String>,
}

/// Compare `results` with the file; `all` says every case ran (no --filter),
/// so listed cases that did not run are reported.
pub fn diff(results: &[CaseResult], expected: &BTreeMap<String, Expected>, all: bool) -> Diff {
    let mut d = Diff::default();
    for r in results {
        let was = expected.get(&r.name).map(|e| e.status);
        match was {
            Some(w) if r.status < w => {
                d.worse
                    .push((r.name.clone(), was, r.status, r.reason.clone()))
            }
            None if r.status == Status::Fail => {
                d.worse
                    .push((r.name.clone(), None, r.status, r.reason.clone()))
            }
            Some(w) if r.status > w => d.better.push((r.name.clone(), was, r.status)),
            None => d.better.push((r.name.clone(), None, r.status)),
            _ => {}
        }
    }
    if all {
        let ran: std::collections::HashSet<&str> =
            results.iter().map(|r| r.name.as_str()).collect();
        d.gone = expected
            .keys()
            .filter(|k| !ran.contains(k.as_str()))
            .cloned()
            .collect();
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, status: Status) -> CaseResult {
        CaseResult {
            name: name.into(),
            status,
            reason: format!("why {name}"),
            ..CaseResult::default()
        }
    }

    #[test]
    fn the_file_round_trips_and_rejects_garbage() {
        let rs = vec![
            result("a", Status::Pass),
            result("b", Status::PassInterpreted),
            result("c", Status::Unsupported),
            result("d", Status::Fail),
            result("e", Status::RandomChecked),
        ];
        let text = render(&rs);
        let e = parse(&text, "f").unwrap();
        assert_eq!(e.len(), 5);
        assert_eq!(e["e"].status, Status::RandomChecked);
        assert!(Status::Unsupported < Status::RandomChecked);
        assert!(Status::RandomChecked < Status::PassInterpreted);
        assert!(!Status::RandomChecked.is_pass());
        assert_eq!(e["b"].status, Status::PassInterpreted);
        assert_eq!(e["d"].reason, "why d");
        let err = parse("a\tpassed\tx\n", "f.tsv").unwrap_err();
        assert!(err.starts_with("f.tsv:1: expected"), "{err}");
        let err = parse("a\tpass\t\na\tfail\t\n", "f.tsv").unwrap_err();
        assert_eq!(err, "f.tsv:2: case 'a' is listed twice");
    }

    /// Any case that gets worse is reported, even when others improve (the old
    /// single pass-rate baseline hid such a regression behind any new pass).
    #[test]
    fn a_regression_is_seen_whatever_improves() {
        let before = vec![
            result("a", Status::Pass),
            result("b", Status::Pass),
            result("c", Status::Unsupported),
            result("d", Status::Unsupported),
            result("e", Status::Fail),
            result("gone", Status::Pass),
        ];
        let expected = parse(&render(&before), "f").unwrap();
        let now = vec![
            result("a", Status::PassInterpreted), // worse: a kernel fell back
            result("b", Status::Pass),
            result("c", Status::Pass),        // better
            result("d", Status::Fail),        // worse
            result("e", Status::Unsupported), // better
            result("new", Status::Fail),      // a new failure
            result("new2", Status::Pass),     // new, fine
        ];
        let d = diff(&now, &expected, true);
        let worse: Vec<&str> = d.worse.iter().map(|w| w.0.as_str()).collect();
        assert_eq!(worse, ["a", "d", "new"]);
        let better: Vec<&str> = d.better.iter().map(|w| w.0.as_str()).collect();
        assert_eq!(better, ["c", "e", "new2"]);
        assert_eq!(d.gone, ["gone"]);
        assert!(diff(&before, &expected, true).worse.is_empty());
        // With a filter, unlisted-but-not-run cases are not "gone".
        assert!(diff(&now[..1], &expected, false).gone.is_empty());
    }
}
