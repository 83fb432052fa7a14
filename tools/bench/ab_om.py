#!/usr/bin/env python3
"""Two ge-run builds (or one build under two environments) on the same .om files,
rounds interleaved (issue 17): what a kernel change does to whole models, without
onnxruntime (tools/bench/ab_models.py adds it, for gauntlet folders).

Each round runs `BASE X.om --random-inputs --iterations N --warmup 3 --threads T
--json` and then the same with NEW; the table gives each side's median p50 over the
rounds and new / base, then the geomean. `--base-env K=V` sets a variable for the base
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
    ratios = []
    print("| model | base p50 ms | new p50 ms | new / base |")
    print("|---|---|---|---|")
    for om in a.oms:
        b, n = [], []
        for _ in range(a.rounds):
            b.append(p50(a.base, om, a.threads, a.iterations, base_env))
            n.append(p50(a.new, om, a.threads, a.iterations, os.environ))
        r = statistics.median(n) / statistics.median(b)
        ratios.append(r)
        print(f"| {os.path.basename(om)} | {statistics.median(b):.3f} | {statistics.median(n):.3f} | {r:.3f} |",
              flush=True)
    print(f"\ngeomean new / base: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")


if __name__ == "__main__":
    main()
