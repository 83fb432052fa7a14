#!/usr/bin/env python3
"""2-thread scaling (issue 17 item 3): a base ge-run, a new ge-run and onnxruntime at
1 and 2 threads on the same models, interleaved.

Uses the .om files and inputs tools/bench/runtime.py left in target/bench/runtime/
(run it once, e.g. `--models light --no-variants`). Per model and round it runs, in
this order: base t1, new t1, ort t1, base t2, new t2, ort t2 (ge-run --json timed
inside ge-run, onnxruntime inside Python as runtime.py does); the table gives the
median over the rounds of each p50 and the speed-ups t1/t2 of each.

On a machine shared with builds, `--fifo` runs every timed process under
`chrt -f 10` (SCHED_FIFO: the benchmark's threads preempt the builds', so a 2-thread
run gets both cores — the kernel still keeps 5 % of each second for the others);
without it, 2-thread numbers on a loaded machine measure the load.

Usage: python3 tools/bench/scaling.py --base target/release/ge-run.base
           [--new target/release/ge-run] [--models light|a,b] [--rounds 3]
           [--iterations 20] [--warmup 3] [--fifo]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from benchlib import REPO, die, log  # noqa: E402
from runtime import LIGHT, ORT, PYTHON, last_json, light_dir  # noqa: E402

OUT = os.path.join(REPO, "target", "bench", "runtime")


def timed(cmd, fifo):
    cmd = (["chrt", "-f", "10"] if fifo else []) + cmd
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return last_json(p.stdout)["p50_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", default=os.path.join(REPO, "target", "release", "ge-run"))
    ap.add_argument("--models", default="light")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--fifo", action="store_true")
    a = ap.parse_args()
    models = (["light_" + n for n in LIGHT] if a.models == "light" else a.models.split(","))
    rows = []
    for m in models:
        om = os.path.join(OUT, f"{m}.default.om")
        npz = os.path.join(OUT, f"{m}.inputs.npz")
        if not os.path.exists(om):
            die(f"{om} missing: run tools/bench/runtime.py --models {m} --no-variants first")
        ins = []
        k = 0
        while os.path.exists(os.path.join(OUT, f"{m}.in{k}.npy")):
            ins += ["--input", f"arg{k}={os.path.join(OUT, f'{m}.in{k}.npy')}"]
            k += 1
        onnx_path = os.path.join(light_dir(), m + ".onnx") if m.startswith("light_") else \
            os.path.join(OUT, m + ".onnx")
        t = {}
        for _ in range(a.rounds):
            for th in (1, 2):
                for who, exe in (("base", a.base), ("new", a.new)):
                    cmd = [exe, om, "--iterations", str(a.iterations), "--warmup",
                           str(a.warmup), "--threads", str(th), "--json"] + ins
                    t.setdefault((who, th), []).append(timed(cmd, a.fifo))
                cmd = [PYTHON, "-c", ORT, onnx_path, str(th), str(a.iterations),
                       str(a.warmup), npz, "-"]
                t.setdefault(("ort", th), []).append(timed(cmd, a.fifo))
        med = {k: statistics.median(v) for k, v in t.items()}
        rows.append((m, med))
        log(f"{m}: " + json.dumps({f"{w}{th}": round(v, 2) for (w, th), v in med.items()}))
    print("| model | base t1 | new t1 | ort t1 | base t2 | new t2 | ort t2 | speed-up base / new / ort "
          "| new/ort t1 | new/ort t2 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    g = {k: [] for k in ("b", "n", "o", "r1", "r2", "rb2")}
    for m, d in rows:
        sb, sn, so = (d[(w, 1)] / d[(w, 2)] for w in ("base", "new", "ort"))
        r1, r2 = d[("new", 1)] / d[("ort", 1)], d[("new", 2)] / d[("ort", 2)]
        for k, v in zip(g, (sb, sn, so, r1, r2, d[("base", 2)] / d[("ort", 2)])):
            g[k].append(v)
        print(f"| {m} | {d[('base', 1)]:.2f} | {d[('new', 1)]:.2f} | {d[('ort', 1)]:.2f} | "
              f"{d[('base', 2)]:.2f} | {d[('new', 2)]:.2f} | {d[('ort', 2)]:.2f} | "
              f"{sb:.2f} / {sn:.2f} / {so:.2f} | {r1:.2f}x | {r2:.2f}x |")
    gm = {k: statistics.geometric_mean(v) for k, v in g.items()}
    print(f"\ngeomean speed-up t1/t2: base {gm['b']:.2f}, new {gm['n']:.2f}, "
          f"onnxruntime {gm['o']:.2f}; ge/ort at 2 threads: base {gm['rb2']:.2f}x, "
          f"new {gm['r2']:.2f}x; new/ort at 1 thread {gm['r1']:.2f}x")


if __name__ == "__main__":
    main()
