#!/usr/bin/env python3
"""Incremental compilation and the compile cache (issue 9): a module of F functions
(default 200), each a stack of zoo-style MLP residual blocks, compiled

  cold          plain `ge-opt m.air --pass-pipeline=P` (no cache, nothing memoized)
  re-compile    `ge-opt --watch`, after simulated saves that each edit one function
                (a different one each time): the median compile time --watch reports
                for them, and the first one (right after the cold compile) alone
  spaced saves  the same, but real saves (write + rename) --gap-ms apart while --watch
                polls, as a person saves: between saves the process sleeps and its
                data leaves the CPU caches
  cache hit     `ge-opt --cache-dir D` a second time: the whole process (start-up
                included), and in the process from looking the entry up to the output
                written (what `--incremental-stats` reports as "served in")

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
import subprocess
import sys
import tempfile
import threading
import time

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


def watch_times(exe, path, pipeline, edit_paths):
    """Compile times (ms) --watch reports for: cold, then after each edit."""
    cmd = [exe, path, f"--pass-pipeline={pipeline}", "--watch",
           f"--watch-iterations={1 + len(edit_paths)}", "--watch-poll-ms=2",
           f"--watch-simulate-edits={','.join(edit_paths)}", "-o", os.devnull]
    _, _, code, err, _ = benchlib.run_once(cmd)
    if code != 0:
        benchlib.die(f"--watch failed:\n{err}")
    ms = [float(m) for m in re.findall(r"compiled in ([0-9.]+) ms", err)]
    n = re.findall(r"\((\d+) of (\d+) functions re-optimised\)", err)
    return ms, n


def spaced_watch_times(exe, path, pipeline, versions, gap_ms):
    """Compile times (ms) --watch reports for real saves of `versions` gap_ms apart."""
    p = subprocess.Popen([exe, path, f"--pass-pipeline={pipeline}", "--watch",
                          "--watch-poll-ms=5", "-o", os.devnull],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ms, lines = [], []

    def read():
        for line in p.stderr:
            lines.append(line)
            m = re.search(r"compiled in ([0-9.]+) ms", line)
            if m:
                ms.append(float(m.group(1)))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def wait_for(n, seconds):
        deadline = time.time() + seconds
        while len(ms) < n and time.time() < deadline and p.poll() is None:
            time.sleep(0.002)

    wait_for(1, 120)  # the cold compile
    for i, v in enumerate(versions):
        time.sleep(gap_ms / 1e3)
        tmp = path + ".save"
        with open(tmp, "w") as f:
            f.write(v)
        os.replace(tmp, path)
        wait_for(i + 2, 30)
    p.terminate()
    p.wait()
    reader.join(5)
    if len(ms) != len(versions) + 1:
        benchlib.die(f"--watch reported {len(ms)} compiles, expected {len(versions) + 1}:\n"
                     + "".join(lines))
    return ms[1:]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-F", type=int, default=200, help="functions (default 200)")
    ap.add_argument("--reps", type=int, default=4, help="blocks per function (default 4)")
    ap.add_argument("--runs", type=int, default=3, help="runs per measurement (median)")
    ap.add_argument("--saves", type=int, default=5,
                    help="simulated saves per --watch run, each editing another function")
    ap.add_argument("--gap-ms", type=int, default=300,
                    help="time between spaced saves (default 300 ms)")
    ap.add_argument("--pipelines", default="graph,atc")
    ap.add_argument("--no-build", action="store_true", help="use target/release/ge-opt as is")
    a = ap.parse_args()
    exe = benchlib.build_ge_opt(a.no_build)
    tmp = tempfile.mkdtemp(prefix="ge-bench-incremental-")
    try:
        src = os.path.join(tmp, "m.air")
        v1 = module(a.F, a.reps)
        edits, versions = [], []
        for k in range(a.saves):
            edits.append(os.path.join(tmp, f"edit{k}.air"))
            versions.append(module(a.F, a.reps, edited=(a.F // 2 + 7 * k) % a.F))
            with open(edits[-1], "w") as f:
                f.write(versions[-1])
        ops = v1.count(" = graph.")
        benchlib.log(f"module: {a.F} functions, {ops} ops, {len(v1) / 1e6:.2f} MB")
        rows = []
        for name in a.pipelines.split(","):
            p = PIPELINES.get(name, name)
            cold, inc, first, inc_cold, hit, served, spaced = [], [], [], [], [], [], []
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
                ms, n = watch_times(exe, src, p, edits)
                inc_cold.append(ms[0])
                first.append(ms[1])
                inc.extend(ms[1:])
                assert all(k[0] == "1" for k in n[1:]), n
                with open(src, "w") as f:
                    f.write(v1)
                spaced.extend(spaced_watch_times(exe, src, p, versions, a.gap_ms))
                cache = os.path.join(tmp, "cache")
                shutil.rmtree(cache, ignore_errors=True)
                cmd = [exe, src, f"--pass-pipeline={p}", f"--cache-dir={cache}",
                       "--incremental-stats"]
                benchlib.run_once(cmd, stdout_path=os.devnull)
                w, _, code, err, _ = benchlib.run_once(cmd, stdout_path=os.devnull)
                if code != 0:
                    benchlib.die(f"cache hit failed:\n{err}")
                hit.append(w * 1e3)
                m = re.search(r"cache: hit \S+ \(served in ([0-9.]+) ms\)", err)
                if not m:
                    benchlib.die(f"no cache hit reported:\n{err}")
                served.append(float(m.group(1)))
            med = statistics.median
            c = med(cold)
            rows.append((name, p, c, med(inc_cold), med(inc), med(first), med(spaced),
                         med(hit), med(served)))
            benchlib.log(f"{name}: cold {c:.0f} ms, watch cold {med(inc_cold):.0f} ms, "
                         f"re-compile {med(inc):.1f} ms ({100 * med(inc) / c:.1f}%), "
                         f"saves {a.gap_ms} ms apart {med(spaced):.1f} ms "
                         f"({100 * med(spaced) / c:.1f}%), "
                         f"first re-compile {med(first):.1f} ms ({100 * med(first) / c:.1f}%), "
                         f"cache hit {med(hit):.1f} ms ({100 * med(hit) / c:.1f}%), "
                         f"served in {med(served):.2f} ms ({100 * med(served) / c:.1f}%)")
        print(f"| pipeline | cold ge-opt | cold --watch | re-compile after editing 1 of {a.F} "
              "(median of saves) | % of cold (target <= 5%) | first save after start | % of cold "
              f"| saves {a.gap_ms} ms apart (median) | % of cold "
              "| cache hit, process | % of cold | cache hit, in process | % of cold (target <= 2%) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for name, p, c, ic, i, fi, sp, h, sv in rows:
            print(f"| `{p}` | {c:.0f} ms | {ic:.0f} ms | {i:.1f} ms | {100 * i / c:.1f}% "
                  f"| {fi:.1f} ms | {100 * fi / c:.1f}% | {sp:.1f} ms | {100 * sp / c:.1f}% "
                  f"| {h:.1f} ms | {100 * h / c:.1f}% | {sv:.2f} ms | {100 * sv / c:.1f}% |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
