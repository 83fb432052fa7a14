#!/usr/bin/env python3
"""Incremental compilation and the compile cache (issue 9): a module of F functions
(default 200), each a stack of zoo-style MLP residual blocks, compiled

  cold          plain `ge-opt m.air --pass-pipeline=P` (no cache, nothing memoized)
  re-compile    `ge-opt --watch`, after a simulated save that edits one function:
                the time of the second compile as --watch reports it
  cache hit     `ge-opt --cache-dir D` a second time (whole process, start-up included)

    python3 tools/bench/incremental.py                      # F=200, atc and graph pipelines
    python3 tools/bench/incremental.py -F 200 --runs 5 --no-build

Targets (issue 9): re-compile <= 5% of cold, cache hit <= 2% of cold. Prints a markdown
table for docs/benchmarks.md.
"""

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

PIPELINES = {
    "graph": "builtin.module(graph.func(canonicalize, cse))",
    "atc": "atc",
}


def block(i, reps, edit):
    """Function i: `reps` MLP residual blocks (matmul, bias, relu, matmul, residual) with
    a recomputed matmul (for cse) and a double negation (for canonicalize)."""
    x = "tensor<Bx64x32xf32>"
    h = "tensor<Bx64x64xf32>"
    lines = [f"  graph.func @block{i}(%x: {x}, %w1: tensor<32x64xf32>, "
             f"%w2: tensor<64x32xf32>, %b: tensor<32xf32>) -> {x} {{"]
    cur = "%x"
    for r in range(reps):
        p = f"%r{r}_"
        lines += [
            f"    {p}0 = graph.matmul {cur}, %w1 : ({x}, tensor<32x64xf32>) -> {h}",
            f"    {p}1 = graph.matmul {cur}, %w1 : ({x}, tensor<32x64xf32>) -> {h}",
            f"    {p}2 = graph.add {p}0, {p}1 : ({h}, {h}) -> {h}",
            f"    {p}3 = graph.relu {p}2 : ({h}) -> {h}",
            f"    {p}4 = graph.matmul {p}3, %w2 : ({h}, tensor<64x32xf32>) -> {x}",
            f"    {p}5 = graph.add {p}4, %b : ({x}, tensor<32xf32>) -> {x}",
            f"    {p}6 = graph.neg {p}5 : ({x}) -> {x}",
            f"    {p}7 = graph.neg {p}6 : ({x}) -> {x}",
            f"    {p}8 = graph.add {p}7, {cur} : ({x}, {x}) -> {x}",
        ]
        cur = f"{p}8"
    if edit:
        lines += [f"    %edit = graph.sigmoid {cur} : ({x}) -> {x}"]
        cur = "%edit"
    lines += [f"    graph.return {cur} : {x}", "  }"]
    return "\n".join(lines) + "\n"


def module(F, reps, edited=None):
    s = "module attributes {ge.symbol_bounds = {B = 8 : i64}} {\n"
    for i in range(F):
        s += block(i, reps, i == edited)
    return s + "}\n"


def watch_times(exe, path, pipeline, edit_path):
    """Compile times (ms) --watch reports for: cold, after the edit."""
    cmd = [exe, path, f"--pass-pipeline={pipeline}", "--watch", "--watch-iterations=2",
           "--watch-poll-ms=2", f"--watch-simulate-edits={edit_path}", "-o", os.devnull]
    _, _, code, err, _ = benchlib.run_once(cmd)
    if code != 0:
        benchlib.die(f"--watch failed:\n{err}")
    ms = [float(m) for m in re.findall(r"compiled in ([0-9.]+) ms", err)]
    n = re.findall(r"\((\d+) of (\d+) functions re-optimised\)", err)
    return ms, n


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-F", type=int, default=200, help="functions (default 200)")
    ap.add_argument("--reps", type=int, default=4, help="blocks per function (default 4)")
    ap.add_argument("--runs", type=int, default=3, help="runs per measurement (median)")
    ap.add_argument("--pipelines", default="graph,atc")
    ap.add_argument("--no-build", action="store_true", help="use target/release/ge-opt as is")
    a = ap.parse_args()
    exe = benchlib.build_ge_opt(a.no_build)
    tmp = tempfile.mkdtemp(prefix="ge-bench-incremental-")
    try:
        src = os.path.join(tmp, "m.air")
        v1 = module(a.F, a.reps)
        v2 = module(a.F, a.reps, edited=a.F // 2)
        edit = os.path.join(tmp, "edit.air")
        with open(edit, "w") as f:
            f.write(v2)
        ops = v1.count(" = graph.")
        benchlib.log(f"module: {a.F} functions, {ops} ops, {len(v1) / 1e6:.2f} MB")
        rows = []
        for name in a.pipelines.split(","):
            p = PIPELINES.get(name, name)
            cold, inc, inc_cold, hit = [], [], [], []
            for _ in range(a.runs):
                with open(src, "w") as f:
                    f.write(v1)
                w, _, code, err, _ = benchlib.run_once([exe, src, f"--pass-pipeline={p}"],
                                                       stdout_path=os.devnull)
                if code != 0:
                    benchlib.die(f"cold compile failed:\n{err}")
                cold.append(w * 1e3)
                with open(src, "w") as f:
                    f.write(v1)
                ms, n = watch_times(exe, src, p, edit)
                inc_cold.append(ms[0])
                inc.append(ms[1])
                assert n[1][0] == "1", n
                cache = os.path.join(tmp, "cache")
                shutil.rmtree(cache, ignore_errors=True)
                cmd = [exe, src, f"--pass-pipeline={p}", f"--cache-dir={cache}"]
                benchlib.run_once(cmd, stdout_path=os.devnull)
                w, _, code, err, _ = benchlib.run_once(cmd, stdout_path=os.devnull)
                if code != 0:
                    benchlib.die(f"cache hit failed:\n{err}")
                hit.append(w * 1e3)
            med = statistics.median
            c = med(cold)
            rows.append((name, p, c, med(inc_cold), med(inc), med(hit)))
            benchlib.log(f"{name}: cold {c:.0f} ms, watch cold {med(inc_cold):.0f} ms, "
                         f"re-compile {med(inc):.1f} ms ({100 * med(inc) / c:.1f}%), "
                         f"cache hit {med(hit):.1f} ms ({100 * med(hit) / c:.1f}%)")
        print(f"| pipeline | cold ge-opt | cold --watch | re-compile after editing 1 of {a.F} "
              "| % of cold (target <= 5%) | cache hit | % of cold (target <= 2%) |")
        print("|---|---|---|---|---|---|---|")
        for name, p, c, ic, i, h in rows:
            print(f"| `{p}` | {c:.0f} ms | {ic:.0f} ms | {i:.1f} ms | {100 * i / c:.1f}% "
                  f"| {h:.1f} ms | {100 * h / c:.1f}% |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
