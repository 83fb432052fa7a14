#!/usr/bin/env python3
"""Two ge-run builds (or one build under two environments) on the same .om files,
rounds interleaved (issue 17): what a kernel change does to whole models, without
onnxruntime (tools/bench/ab_models.py adds it, for gauntlet folders).

Each round runs `BASE X.om --random-inputs --iterations N --warmup 3 --threads T
--json` and the same with NEW, in turns (base first in even rounds, new first in odd
ones); the table gives each side's median p50 over the rounds and new / base, and the
minimum over the rounds with its ratio — on a VM whose second vCPU is sometimes a
sibling of the first (2-thread speed bimodal from process to process) the minima compare
the rounds in which both computed — then the geomeans. `--base-env K=V` sets a variable for the base
side only (e.g. `GE_L2_BYTES=65536`, with BASE and NEW the same binary).

Usage: .venv/bin/python tools/bench/ab_om.py BASE NEW [--rounds 3] [--threads 1]
           [--iterations 20] [--base-env K=V]... X.om...
(the .om files tools/bench/runtime.py compiles are target/bench/runtime/*.default.om)
"""

import argparse
import json
import math
import os
import statistics
import subprocess


def p50(ge_run, om, threads, iterations, env):
    cmd = [ge_run, om, "--random-inputs", "--iterations", str(iterations), "--warmup", "3",
           "--threads", str(threads), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])["p50_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("oms", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--base-env", action="append", default=[], help="K=V for the base side only")
    a = ap.parse_args()
    base_env = dict(os.environ, **dict(kv.split("=", 1) for kv in a.base_env))
    ratios, minima = [], []
    print("| model | base p50 ms | new p50 ms | new / base | base min | new min | min new / base |")
    print("|---|---|---|---|---|---|---|")
    for om in a.oms:
        b, n = [], []
        for r in range(a.rounds):
            # The two sides in turns, first one then the other, so that
            # neither always runs right after the other's process.
            sides = [(a.base, base_env, b), (a.new, os.environ, n)]
            for exe, env, out in (sides if r % 2 == 0 else sides[::-1]):
                out.append(p50(exe, om, a.threads, a.iterations, env))
        ratio = statistics.median(n) / statistics.median(b)
        ratios.append(ratio)
        minima.append(min(n) / min(b))
        print(f"| {os.path.basename(om)} | {statistics.median(b):.3f} | {statistics.median(n):.3f} | "
              f"{ratio:.3f} | {min(b):.3f} | {min(n):.3f} | {minima[-1]:.3f} |", flush=True)
    geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))
    print(f"\ngeomean new / base: {geo(ratios):.3f} (medians), {geo(minima):.3f} (minima)")


if __name__ == "__main__":
    main()
