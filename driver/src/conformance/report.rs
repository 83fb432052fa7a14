//! The conformance summary lines and the Markdown report (docs/conformance.md).

use super::{CaseResult, Executor, Status, NODE_SUITE};
use std::collections::BTreeMap;

pub struct Summary {
    pub total: usize,
    /// Cases per status, indexed by `Status as usize`.
    pub count: [usize; Status::ALL.len()],
    /// Passes that ran every kernel on the interpreter.
    pub all_interpreted: usize,
    /// Passes that bound graph inputs as constants (--bind-constant-inputs).
    pub pass_bound: usize,
}

/// Another runtime's status per case (onnxruntime's, read from
/// tools/conformance/onnxruntime.tsv), shown beside ge's.
pub struct Peer {
    /// "onnxruntime 1.32.0"
    pub name: String,
    pub status: BTreeMap<String, super::expected::Expected>,
}

impl Peer {
    fn passes(&self, case: &str) -> Option<bool> {
        self.status.get(case).map(|e| e.status.is_pass())
    }

    /// The peer's status word for a case ("–" when it has none).
    fn word(&self, case: &str) -> &'static str {
        self.status.get(case).map_or("–", |e| e.status.name())
    }

    /// How many of `rs` the peer passes, and of how many it has a status for.
    fn pass_count(&self, rs: &[&CaseResult]) -> (usize, usize) {
        let known: Vec<bool> = rs.iter().filter_map(|r| self.passes(&r.name)).collect();
        (known.iter().filter(|&&p| p).count(), known.len())
    }
}

/// The results grouped by suite, the node tests first.
pub fn by_suite(results: &[CaseResult]) -> Vec<(String, Vec<CaseResult>)> {
    let mut m: BTreeMap<(bool, String), Vec<CaseResult>> = BTreeMap::new();
    for r in results {
        let suite = if r.suite.is_empty() {
            NODE_SUITE.to_string()
        } else {
            r.suite.clone()
        };
        m.entry((suite != NODE_SUITE, suite))
            .or_default()
            .push(r.clone());
    }
    m.into_iter().map(|((_, s), v)| (s, v)).collect()
}

/// "ONNX node tests" or "pytorch-converted tests".
fn suite_title(suite: &str) -> String {
    if suite == NODE_SUITE {
        "ONNX node tests".into()
    } else {
        format!("{suite} tests")
    }
}

fn pct(n: usize, total: usize) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * n as f64 / total as f64
    }
}

impl Summary {
    pub fn of(results: &[CaseResult]) -> Summary {
        let mut count = [0; Status::ALL.len()];
        for r in results {
            count[r.status as usize] += 1;
        }
        Summary {
            total: results.len(),
            count,
            all_interpreted: results
                .iter()
                .filter(|r| r.status == Status::PassInterpreted && r.all_interpreted)
                .count(),
            pass_bound: results
                .iter()
                .filter(|r| r.status.is_pass() && !r.bound_inputs.is_empty())
                .count(),
        }
    }

    pub fn n(&self, s: Status) -> usize {
        self.count[s as usize]
    }

    pub fn pct(&self, n: usize) -> f64 {
        pct(n, self.total)
    }

    /// Passes of either kind.
    pub fn passes(&self) -> usize {
        self.n(Status::Pass) + self.n(Status::PassInterpreted)
    }

    /// The one-line summary ge-conformance prints for a suite.
    pub fn line(&self, suite: &str, bound: bool) -> String {
        let mut s = format!(
            "{} passed ({} with every kernel native, {} with interpreter kernels), {} checked \
             (random outputs), {} failed, {} unsupported of {} {}: pass rate {:.1}%, native \
             {:.1}%",
            self.passes(),
            self.n(Status::Pass),
            self.n(Status::PassInterpreted),
            self.n(Status::RandomChecked),
            self.n(Status::Fail),
            self.n(Status::Unsupported),
            self.total,
            suite_title(suite),
            self.pct(self.passes()),
            self.pct(self.n(Status::Pass)),
        );
        if bound {
            s.push_str(&format!(
                " ({} passes bind constant inputs)",
                self.pass_bound
            ));
        }
        s
    }
}

/// What the report says about the cases it counts as out of scope.
const SCOPE_TEXT: &str = "ge compiles inference graphs of numeric tensors. Cases that need \
     training operators (the `ai.onnx.preview.training` domain, `Gradient`), or values that \
     are not numeric tensors — sequences, optionals, maps, strings (and the operators on \
     them) — are out of its scope: they run and are counted like every other case (as \
     unsupported), and the rates \"in scope\" leave them out, for ge and onnxruntime alike.";

/// The Markdown report (docs/conformance.md).
pub fn report(
    results: &[CaseResult],
    exec: &dyn Executor,
    onnx_version: &str,
    bound: bool,
    peer: Option<&Peer>,
) -> String {
    let suites = by_suite(results);
    let node: Vec<CaseResult> = suites
        .iter()
        .find(|(s, _)| s == NODE_SUITE)
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let s = Summary::of(&node);
    let mut out = String::new();
    intro(&mut out, &s, exec, onnx_version, bound, peer);
    suites_table(&mut out, &suites, peer);
    scope(&mut out, results);
    per_op(&mut out, results, peer);
    case_lists(&mut out, results, peer);
    out
}

/// The title, what was run and how, the commands, and the node tests' result table.
fn intro(
    out: &mut String,
    s: &Summary,
    exec: &dyn Executor,
    onnx_version: &str,
    bound: bool,
    peer: Option<&Peer>,
) {
    out.push_str("# ONNX conformance\n\n");
    out.push_str(
        "<!-- Generated by tools/conformance/run.sh (ge-conformance --report); do not edit. -->\n\n",
    );
    out.push_str(&format!(
        "The ONNX backend tests of `onnx` {onnx_version} — the node tests ({} cases) and the \
         model suites shipped beside them (pytorch-converted, pytorch-operator, simple) — each \
         imported with `ge-frontends` and run by the {}, as a user would run the model file: \
         inputs fed by name, no input bound to a constant. Every output is compared with the \
         case's tolerances (rtol 1e-3, atol 1e-7 unless the case says otherwise): element type \
         and shape exactly, integers and bools exactly.",
        s.total,
        exec.name()
    ));
    if let Some(p) = peer {
        out.push_str(&format!(
            " {} (CPU provider) ran the same files the same way and is compared the same way \
             (`tools/conformance/onnxruntime_status.py`, recorded in \
             `tools/conformance/onnxruntime.tsv`).",
            p.name
        ));
    }
    out.push_str("\n\n");
    if bound {
        out.push_str(&format!(
            "**This run used `--bind-constant-inputs`:** graph inputs that an op needs as a \
             constant were bound to the test's values before import ({} passes needed it), \
             which a user's model cannot do.\n\n",
            s.pass_bound
        ));
    }
    out.push_str(
        "```sh\ntools/conformance/run.sh                    # generate the cases, run them, \
         rewrite this page, compare with tools/conformance/expected.tsv\n\
         tools/conformance/run.sh --check            # CI: fail when any case is worse than \
         expected.tsv says\n\
         tools/conformance/run.sh --update-expected  # record improvements in expected.tsv\n```\n\n",
    );
    out.push_str("| result | tests | share |\n|---|---:|---:|\n");
    for st in Status::ALL {
        out.push_str(&format!(
            "| {} | {} | {:.1}% |\n",
            st.title(),
            s.n(st),
            s.pct(s.n(st))
        ));
    }
    out.push_str(&format!(
        "\n**Pass rate: {:.1}%** ({} of {}); **{:.1}% with every kernel native** ({}). \
         \"pass (interpreter kernels)\" counts passes where the compiled model ran at least \
         one kernel on the reference interpreter (no native kernel for an op or a type): \
         right answers, but not the runtime's own kernels; {} of them ran every kernel there. \
         \"checked (random outputs)\" counts cases whose outputs come from random ops \
         (Bernoulli, RandomUniform, ...), whose values no implementation can reproduce: their \
         element type and shape match exactly and every value lies in the op's set (Bernoulli: \
         {{0, 1}}, a uniform draw: [low, high), ...), every other output matches — not a pass, \
         and not in the pass rate.\n\n",
        s.pct(s.passes()),
        s.passes(),
        s.total,
        s.pct(s.n(Status::Pass)),
        s.n(Status::Pass),
        s.all_interpreted,
    ));
}

/// The "Scope" section: what is out of scope, and how many cases for each reason.
fn scope(out: &mut String, results: &[CaseResult]) {
    out.push_str("## Scope\n\n");
    out.push_str(SCOPE_TEXT);
    out.push_str("\n\n");
    let mut why: BTreeMap<String, usize> = BTreeMap::new();
    for r in results {
        if let Some(w) = &r.out_of_scope {
            // "SequenceAt is a sequence operator" -> "a sequence operator"
            let kind = w
                .split_once(" is ")
                .map_or(w.as_str(), |(_, k)| k)
                .to_string();
            *why.entry(kind).or_default() += 1;
        }
    }
    if why.is_empty() {
        out.push_str("No case is out of scope.\n\n");
    } else {
        out.push_str("| out of scope because the model uses | cases |\n|---|---:|\n");
        for (w, n) in &why {
            out.push_str(&format!("| {w} | {n} |\n"));
        }
        out.push('\n');
    }
}

/// The failures, unsupported cases and passes with interpreter kernels, each
/// with its reason (and the peer's status).
fn case_lists(out: &mut String, results: &[CaseResult], peer: Option<&Peer>) {
    for (title, st) in [
        ("Failures", Status::Fail),
        ("Unsupported", Status::Unsupported),
        ("Passes with interpreter kernels", Status::PassInterpreted),
        ("Random outputs checked", Status::RandomChecked),
    ] {
        out.push_str(&format!("\n## {title}\n\n"));
        let list: Vec<&CaseResult> = results.iter().filter(|r| r.status == st).collect();
        if list.is_empty() {
            out.push_str("None.\n");
            continue;
        }
        match peer {
            Some(p) => {
                out.push_str(&format!(
                    "| test | reason | {} |\n|---|---|---|\n",
                    p.name.split(' ').next().unwrap_or("peer")
                ));
                for r in list {
                    out.push_str(&format!(
                        "| {} | {} | {} |\n",
                        r.name,
                        r.reason.replace('|', "\\|"),
                        p.word(&r.name)
                    ));
                }
            }
            None => {
                out.push_str("| test | reason |\n|---|---|\n");
                for r in list {
                    out.push_str(&format!(
                        "| {} | {} |\n",
                        r.name,
                        r.reason.replace('|', "\\|")
                    ));
                }
            }
        }
    }
}

/// One row per suite (and its cases in scope): ge's counts and rate, and
/// the peer's rate on the same cases.
fn suites_table(out: &mut String, suites: &[(String, Vec<CaseResult>)], peer: Option<&Peer>) {
    out.push_str("## Suites\n\n");
    out.push_str(
        "| suite | cases | pass | pass (interpreter kernels) | checked (random outputs) | fail | \
         unsupported | ge pass rate |",
    );
    if let Some(p) = peer {
        out.push_str(&format!(" {} pass rate |", p.name));
    }
    out.push_str("\n|---|---:|---:|---:|---:|---:|---:|---:|");
    if peer.is_some() {
        out.push_str("---:|");
    }
    out.push('\n');
    for (suite, rs) in suites {
        let all: Vec<&CaseResult> = rs.iter().collect();
        let in_scope: Vec<&CaseResult> = rs.iter().filter(|r| r.out_of_scope.is_none()).collect();
        let rows: Vec<(String, &Vec<&CaseResult>)> = if in_scope.len() == all.len() {
            vec![(suite.clone(), &all)]
        } else {
            vec![
                (suite.clone(), &all),
                (format!("{suite}, in scope"), &in_scope),
            ]
        };
        for (label, rs) in rows {
            let owned: Vec<CaseResult> = rs.iter().map(|r| (*r).clone()).collect();
            let s = Summary::of(&owned);
            out.push_str(&format!(
                "| {label} | {} | {} | {} | {} | {} | {} | **{:.1}%** |",
                s.total,
                s.n(Status::Pass),
                s.n(Status::PassInterpreted),
                s.n(Status::RandomChecked),
                s.n(Status::Fail),
                s.n(Status::Unsupported),
                s.pct(s.passes()),
            ));
            if let Some(p) = peer {
                let (pass, known) = p.pass_count(rs);
                if known == rs.len() {
                    out.push_str(&format!(" {:.1}% |", pct(pass, known)));
                } else {
                    out.push_str(&format!(
                        " {:.1}% ({pass} of the {known} it has) |",
                        pct(pass, known)
                    ));
                }
            }
            out.push('\n');
        }
    }
    out.push('\n');
    if let Some(p) = peer {
        let (mut ge_only, mut peer_only) = (0, 0);
        for (_, rs) in suites {
            for r in rs {
                match (r.status.is_pass(), p.passes(&r.name)) {
                    (true, Some(false)) => ge_only += 1,
                    (false, Some(true)) => peer_only += 1,
                    _ => {}
                }
            }
        }
        out.push_str(&format!(
            "{ge_only} cases pass on ge and not on {0}; {peer_only} pass on {0} and not on ge \
             (the {0} column of the lists below).\n\n",
            p.name
        ));
    }
}

fn per_op(out: &mut String, results: &[CaseResult], peer: Option<&Peer>) {
    out.push_str("## Per op\n\nA test counts for every op its model uses.\n\n");
    out.push_str(
        "| op | tests | pass | pass (interpreter kernels) | checked (random outputs) | fail | \
         unsupported |",
    );
    if let Some(p) = peer {
        out.push_str(&format!(
            " {} pass |",
            p.name.split(' ').next().unwrap_or("peer")
        ));
    }
    out.push_str("\n|---|---:|---:|---:|---:|---:|---:|");
    if peer.is_some() {
        out.push_str("---:|");
    }
    out.push('\n');
    let mut per_op: BTreeMap<&str, ([usize; Status::ALL.len()], usize)> = BTreeMap::new();
    for r in results {
        for op in &r.ops {
            let e = per_op.entry(op.as_str()).or_default();
            e.0[r.status as usize] += 1;
            if peer.and_then(|p| p.passes(&r.name)) == Some(true) {
                e.1 += 1;
            }
        }
    }
    for (op, (c, peer_pass)) in &per_op {
        let n = |st: Status| c[st as usize];
        out.push_str(&format!(
            "| {op} | {} | {} | {} | {} | {} | {} |",
            c.iter().sum::<usize>(),
            n(Status::Pass),
            n(Status::PassInterpreted),
            n(Status::RandomChecked),
            n(Status::Fail),
            n(Status::Unsupported)
        ));
        if peer.is_some() {
            out.push_str(&format!(" {peer_pass} |"));
        }
        out.push('\n');
    }
}
