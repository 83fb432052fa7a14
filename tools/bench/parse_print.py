#!/usr/bin/env python3
"""Parse + verify + print: ge-opt vs mlir-opt-22 on the same module (issue 2, "Measure").

    python3 tools/bench/parse_print.py                 # 1,000 x 1,000 = 1,000,000 ops, 3 runs
    python3 tools/bench/parse_print.py -F 100 -N 1000 --runs 5

Steps, all in one run:
  1. cargo build --release -p ge-driver (shared target dir; waits if cargo holds the lock);
  2. generate the inputs with gen_module.py into target/bench/ (git-ignored), unless they are
     already there and up to date;
  3. for each form (custom, generic, unregistered) run, interleaved, `--runs` times each:
         ge-opt      <ge-FxN[.generic].air>       -o /dev/null
         mlir-opt-22 <mlir-FxN[.generic].mlir>    -o /dev/null
     and for the unregistered form (issue 18) both tools on the same file, generic ops of an
     unregistered dialect that neither tool knows to be isolated from above:
         ge-opt      --allow-unregistered-dialect unreg-FxN.generic.mlir -o /dev/null
         mlir-opt-22 --allow-unregistered-dialect unreg-FxN.generic.mlir -o /dev/null
     measuring wall time and peak RSS of the process (rusage of the child, as GNU time's %M);
  4. one extra `ge-opt --timing` run on the custom form for the phase breakdown;
  5. print a markdown report (tables + ratios ge/mlir) on stdout and save it, with a JSON
     copy of the raw numbers, as target/bench/parse_print-FxN.{md,json}.

Both tools run with their default threading. Targets from issue 2: ge-opt time <= 0.5x and
peak memory <= 1x mlir-opt's. This is a measurement, not a test: nothing fails on a ratio.
Needs Rust, Python 3 and mlir-opt-22 (apt package mlir-22-tools, installed automatically when
run as root; or set MLIR_OPT=/path/to/mlir-opt).
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("-F", "--functions", type=int, default=1000)
    ap.add_argument("-N", "--ops", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3, help="runs per command (3)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out-dir", default=os.path.join(bl.REPO, "target", "bench"))
    ap.add_argument("--no-build", action="store_true", help="use the existing release ge-opt")
    ap.add_argument("--regen", action="store_true", help="regenerate the inputs")
    ap.add_argument("--forms", default="custom,generic,unregistered",
                    help="custom,generic,unregistered")
    a = ap.parse_args()
    F, N = a.functions, a.ops
    forms = [f for f in a.forms.split(",") if f]

    mlir_opt = bl.find_mlir_opt()
    ge_opt = bl.build_ge_opt(a.no_build)
    inp = bl.ensure_inputs(a.out_dir, F, N, a.seed, regen=a.regen)

    cases = []
    for form in forms:
        if form == "unregistered":
            ge_in = ml_in = inp["unreg"]
            flags = ["--allow-unregistered-dialect"]
        else:
            suffix = "" if form == "custom" else "-generic"
            ge_in, ml_in = inp["ge" + suffix], inp["mlir" + suffix]
            flags = []
        cases.append(bl.Case((form, "ge"), "ge-opt", f"ge-opt {os.path.basename(ge_in)}",
                             [ge_opt, *flags, ge_in, "-o", "/dev/null"], ge_in))
        cases.append(bl.Case((form, "mlir"), "mlir-opt-22",
                             f"mlir-opt-22 {os.path.basename(ml_in)}",
                             [mlir_opt, *flags, ml_in, "-o", "/dev/null"], ml_in))
    load_before = bl.loadavg()
    bl.measure(cases, a.runs)

    # Phase breakdown (one run; --timing adds no measurable cost).
    phases = {}
    bl.log("ge-opt --timing (custom form)")
    _, _, rc, err, _ = bl.run_once([ge_opt, inp["ge"], "-o", "/dev/null", "--timing"])
    if rc == 0:
        for m in re.finditer(r"^\s+([\d.]+) \(\s*[\d.]+%\)\s+(.+)$", err, re.M):
            phases[m.group(2).strip()] = float(m.group(1))

    by = {c.key: c for c in cases}
    cmdline = "python3 tools/bench/parse_print.py" + "".join(
        f" {x}" for x in sys.argv[1:])
    L = []
    L.append(f"### {F:,} functions × {N:,} ops = {F * N:,} ops\n")
    L.append(f"- command: `{cmdline}`")
    L.append(f"- machine: {bl.machine()}")
    L.append(f"- ge-opt: release build of {bl.git_rev()}; "
             f"mlir-opt: {bl.tool_version([mlir_opt, '--version'])}")
    L.append(f"- {a.runs} interleaved runs per command; wall time = median (min–max); CPU "
             "time = median user+system seconds of all threads (less sensitive to other load); "
             "memory = median peak RSS")
    L.append(f"- 1-min load average just before the runs: {load_before:.2f} "
             f"(on {os.cpu_count()} cores; above ~0.3, other jobs were competing for them)")
    L.append("")
    L.append("| form | tool | input | size MB | wall time s | CPU time s | peak RSS MiB |")
    L.append("|---|---|---|---:|---:|---:|---:|")
    for c in cases:
        size = os.path.getsize(c.path) / 1e6
        rss = "failed" if c.error else f"{c.m:.0f}"
        L.append(f"| {c.key[0]} | {c.tool} | `{os.path.basename(c.path)}` | {size:.1f} | "
                 f"{bl.fmt_t(c)} | {bl.fmt_cpu(c)} | {rss} |")
    L.append("")
    L.append("| form | wall time ge/mlir | CPU time ge/mlir | memory ge/mlir "
             "| time target ≤ 0.5× | memory target ≤ 1× |")
    L.append("|---|---:|---:|---:|---|---|")
    for form in forms:
        g, m = by[(form, "ge")], by[(form, "mlir")]
        tr = g.t / m.t if g.t and m.t else None
        mr = g.m / m.m if g.m and m.m else None
        L.append(f"| {form} | {bl.fmt_ratio(g.t, m.t)} | {bl.fmt_ratio(g.c, m.c)} | "
                 f"{bl.fmt_ratio(g.m, m.m)} | "
                 f"{'–' if tr is None else ('met' if tr <= 0.5 else 'not met')} | "
                 f"{'–' if mr is None else ('met' if mr <= 1.0 else 'not met')} |")
    if phases:
        L.append("")
        L.append("ge-opt phases (`--timing`, custom form, one run): " + ", ".join(
            f"{k} {v:.2f} s" for k, v in phases.items() if k != "Total")
            + f"; total {phases.get('Total', 0):.2f} s")
    for c in cases:
        if c.error:
            L.append(f"\n**{c.label} failed**: `{c.error}`")
    report = "\n".join(L) + "\n"
    print(report)

    base = os.path.join(a.out_dir, f"parse_print-{F}x{N}")
    with open(base + ".md", "w") as f:
        f.write(report)
    with open(base + ".json", "w") as f:
        json.dump({
            "F": F, "N": N, "runs": a.runs, "machine": bl.machine(), "ge_rev": bl.git_rev(),
            "phases": phases,
            "cases": [{"form": c.key[0], "tool": c.tool, "cmd": c.cmd, "times": c.times,
                       "cpu": c.cpu,
                       "rss_kib": c.rss, "error": c.error} for c in cases],
        }, f, indent=1)
    bl.log(f"saved {bl.rel(base)}.md and .json")
    return 1 if any(c.error for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
