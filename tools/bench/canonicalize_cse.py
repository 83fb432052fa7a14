#!/usr/bin/env python3
"""canonicalize + cse: ge-opt vs mlir-opt-22 on the redundant module (issue 4, "Measure").

    python3 tools/bench/canonicalize_cse.py                # 1,000 x 1,000 ops, 3 runs
    python3 tools/bench/canonicalize_cse.py -F 100 -N 1000 --runs 5

Inputs: gen_module.py --redundant (ge-FxN-redundant.air / mlir-FxN-redundant.mlir, in
target/bench/): the same computation, ~30% of its ops redundant (recomputations, swapped
commutative operands, x*1, x/1, x-0, x+(-0.0), neg(neg x)). Measured, interleaved, --runs
times each, with output to /dev/null:

    ge-opt      --pass-pipeline='builtin.module(graph.func(canonicalize,cse))' ge-...air
    mlir-opt-22 --pass-pipeline='builtin.module(func.func(canonicalize,cse))'  mlir-...mlir

then each once more with the output kept, to count the ops left (how much each tool
removed: a faster run that removes less is not a win). Reports wall time, peak RSS and the
ratios; target from issue 4: ge-opt <= 0.5x mlir-opt's time. Saves
target/bench/canonicalize_cse-FxN.{md,json}. Until ge-opt has both passes, only mlir-opt is
measured (the baseline) and the report says so.
"""

import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

GE_PIPE = "builtin.module(graph.func(canonicalize,cse))"
MLIR_PIPE = "builtin.module(func.func(canonicalize,cse))"
OP_LINE = re.compile(rb"^\s*%[\w$.#:-]+(?:\s*,\s*%[\w$.#:-]+)*\s*=\s", re.M)


def count_ops(path):
    """Value-defining ops in a printed module (same measure for both dialects)."""
    with open(path, "rb") as f:
        return len(OP_LINE.findall(f.read()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("-F", "--functions", type=int, default=1000)
    ap.add_argument("-N", "--ops", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out-dir", default=os.path.join(bl.REPO, "target", "bench"))
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--regen", action="store_true")
    a = ap.parse_args()
    F, N = a.functions, a.ops

    mlir_opt = bl.find_mlir_opt()
    ge_opt = bl.build_ge_opt(a.no_build)
    inp = bl.ensure_inputs(a.out_dir, F, N, a.seed, redundant=True, regen=a.regen)

    passes = subprocess.run([ge_opt, "--list-passes"], capture_output=True, text=True).stdout
    have = {p: re.search(rf"^\s+{p}\s", passes, re.M) is not None for p in ("canonicalize", "cse")}
    ge_ready = all(have.values())
    ge_cmd = [ge_opt, f"--pass-pipeline={GE_PIPE}", inp["ge-redundant"]]
    ml_cmd = [mlir_opt, f"--pass-pipeline={MLIR_PIPE}", inp["mlir-redundant"]]
    cases = []
    if ge_ready:
        cases.append(bl.Case("ge", "ge-opt", "ge-opt canonicalize,cse", ge_cmd + ["-o", "/dev/null"],
                             inp["ge-redundant"]))
    cases.append(bl.Case("mlir", "mlir-opt-22", "mlir-opt-22 canonicalize,cse",
                         ml_cmd + ["-o", "/dev/null"], inp["mlir-redundant"]))
    load_before = bl.loadavg()
    bl.measure(cases, a.runs)

    # One more run each, output kept, to count what is left.
    before = {"ge": count_ops(inp["ge-redundant"]), "mlir": count_ops(inp["mlir-redundant"])}
    after = {}
    for c in cases:
        if c.error:
            continue
        out = os.path.join(a.out_dir, f"canonicalize_cse-{F}x{N}.{c.key}.out")
        _, _, rc, err, _ = bl.run_once(c.cmd[:-2], stdout_path=out)
        if rc == 0:
            after[c.key] = count_ops(out)
        os.remove(out)

    cmdline = "python3 tools/bench/canonicalize_cse.py" + "".join(f" {x}" for x in sys.argv[1:])
    L = [f"### {F:,} functions × {N:,} ops, redundant variant\n",
         f"- command: `{cmdline}`",
         f"- machine: {bl.machine()}",
         f"- ge-opt: release build of {bl.git_rev()}; "
         f"mlir-opt: {bl.tool_version([mlir_opt, '--version'])}",
         f"- ge-opt: `{bl.shell_join(ge_cmd)} -o /dev/null`",
         f"- mlir-opt: `{bl.shell_join(ml_cmd)} -o /dev/null`",
         f"- {a.runs} interleaved runs per command; wall time = median (min–max); CPU time = "
         "median user+system seconds of all threads; memory = median peak RSS",
         f"- 1-min load average just before the runs: {load_before:.2f} "
         f"(on {os.cpu_count()} cores; above ~0.3, other jobs were competing for them)", ""]
    if not ge_ready:
        missing = ", ".join(p for p, ok in have.items() if not ok)
        L.append(f"**ge-opt has no {missing} pass yet: only the mlir-opt baseline is measured.**\n")
    L.append("| tool | wall time s | CPU time s | peak RSS MiB | ops before | ops after | removed |")
    L.append("|---|---:|---:|---:|---:|---:|---:|")
    for c in cases:
        b, af = before[c.key], after.get(c.key)
        rss = "failed" if c.error else f"{c.m:.0f}"
        rem = f"{100 * (b - af) / b:.1f}%" if af is not None and b else "–"
        L.append(f"| {c.tool} | {bl.fmt_t(c)} | {bl.fmt_cpu(c)} | {rss} | {b:,} | "
                 f"{'–' if af is None else f'{af:,}'} | {rem} |")
    if ge_ready:
        g, m = cases[0], cases[1]
        tr = g.t / m.t if g.t and m.t else None
        L.append("")
        L.append(f"time ge/mlir: **{bl.fmt_ratio(g.t, m.t)}** (target ≤ 0.5×: "
                 f"{'–' if tr is None else ('met' if tr <= 0.5 else 'not met')}); "
                 f"CPU time ge/mlir: **{bl.fmt_ratio(g.c, m.c)}**; "
                 f"memory ge/mlir: **{bl.fmt_ratio(g.m, m.m)}**")
    for c in cases:
        if c.error:
            L.append(f"\n**{c.label} failed**: `{c.error}`")
    report = "\n".join(L) + "\n"
    print(report)
    base = os.path.join(a.out_dir, f"canonicalize_cse-{F}x{N}")
    with open(base + ".md", "w") as f:
        f.write(report)
    with open(base + ".json", "w") as f:
        json.dump({"F": F, "N": N, "runs": a.runs, "ge_ready": ge_ready,
                   "ops_before": before, "ops_after": after,
                   "cases": [{"tool": c.tool, "cmd": c.cmd, "times": c.times, "cpu": c.cpu,
                              "rss_kib": c.rss, "error": c.error} for c in cases]},
                  f, indent=1)
    bl.log(f"saved {bl.rel(base)}.md and .json")
    return 1 if any(c.error for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
