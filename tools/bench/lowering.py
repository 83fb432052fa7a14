#!/usr/bin/env python3
"""Lowering benchmarks (issue 6): memory plans, stream schedules, atc compile time.

For every model it runs the `atc` stages with their reports on (one ge-opt process) and
prints, per model:

- memory: planned workspace bytes / LOAD lower bound (the most bytes live at one program
  position; no plan can be smaller) and / no-reuse bytes (every buffer its own bytes), for
  the stream-aware plan on the chain-cover streams and for a one-stream plan;
- streams: streams and events used vs the chain-cover minimum (|E(G')| - |M|
  synchronisations, Nimble), simulated makespan on the Ascend910B cost model / critical
  path (the longest path: no schedule is faster), and the speedup over one stream;
- compile time: wall time of `ge-opt --pass-pipeline=atc` (median of --runs), next to the
  time of parsing and printing the same file (`ge-opt FILE`) as the peer measured in the
  same run.

Models: the model zoo's tiny configurations in testdata/models/*.air when present (same
graph structure as the published models, small channels) and two graphs this script
generates — `inception_like` (Inception-v3-style modules: 4 parallel branches joined by a
channel concat) and `nasnet_like` (NasNet-A-style cells: 5 blocks of two ops on earlier
states, summed, cells concatenated) — so the benchmark runs even without the zoo.
Weights stored as `dense_resource` blobs are inlined as `dense` literals first, because a
pass cannot see a module's resource blobs (constant folding and weight format conversion
would otherwise leave run-time weight preprocessing in the graph).

Usage: python3 tools/bench/lowering.py [--runs 3] [--no-build] [--models a,b] [--json out.json]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(REPO, "target", "bench", "lowering")

STAGES = (
    "builtin.module(graph.func(canonicalize, cse), fuse-kernels, partition-engines, "
    "select-formats, assign-streams{%s report}, plan-memory{report}, verify-memory, "
    "emit-tasks, verify-memory)"
)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def build(no_build):
    exe = os.path.join(REPO, "target", "release", "ge-opt")
    if not no_build:
        log("building: cargo build --release -p ge-driver")
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "ge-driver"], cwd=REPO, check=True)
    if not os.path.exists(exe):
        sys.exit(f"error: {exe} does not exist (build it or drop --no-build)")
    return exe


def inline_resources(text):
    """Replace `dense_resource<name>` by `dense<"0xHEX">` from the file's resource trailer
    (an MLIR blob is a 4-byte little-endian alignment followed by the bytes)."""
    m = re.search(r"\{-#\s*dialect_resources:\s*\{\s*builtin:\s*\{(.*?)\}\s*\}\s*#-\}", text, re.S)
    if not m:
        return text
    blobs = dict(re.findall(r'([\w.$-]+)\s*:\s*"0x([0-9A-Fa-f]*)"', m.group(1)))

    def rep(mm):
        return 'dense<"0x%s">' % blobs[mm.group(1)][8:]

    return re.sub(r"dense_resource<([\w.$-]+)>", rep, text[: m.start()])


# ---- generated graphs ----------------------------------------------------------------


class Gen:
    """A tiny .air writer with deterministic weights (splat constants keep files small)."""

    def __init__(self, dtype="f16"):
        self.dt = dtype
        self.lines = []
        self.n = 0

    def v(self, text):
        self.n += 1
        name = f"%v{self.n}"
        self.lines.append(f"    {name} = {text}")
        return name

    def t(self, c, h, w):
        return f"tensor<1x{c}x{h}x{w}x{self.dt}>"

    def conv(self, x, cin, cout, h, w, k=1, stride=1):
        wt = f"tensor<{cout}x{cin}x{k}x{k}x{self.dt}>"
        wv = self.v(f"data.constant dense<0.01> : {wt}")
        p = k // 2
        ho, wo = (h + 2 * p - k) // stride + 1, (w + 2 * p - k) // stride + 1
        c = self.v(
            f"graph.conv2d {x}, {wv} {{pads = [{p}, {p}, {p}, {p}], strides = [{stride}, {stride}]}} : "
            f"({self.t(cin, h, w)}, {wt}) -> {self.t(cout, ho, wo)}"
        )
        bt = f"tensor<1x{cout}x1x1x{self.dt}>"
        b = self.v(f"data.constant dense<0.1> : {bt}")
        a = self.v(f"graph.add {c}, {b} : ({self.t(cout, ho, wo)}, {bt}) -> {self.t(cout, ho, wo)}")
        return self.v(f"graph.relu {a} : ({self.t(cout, ho, wo)}) -> {self.t(cout, ho, wo)}"), ho, wo

    def pool(self, x, c, h, w, kind="max", k=3, stride=1):
        p = k // 2
        ho, wo = (h + 2 * p - k) // stride + 1, (w + 2 * p - k) // stride + 1
        return self.v(
            f"graph.{kind}_pool2d {x} {{kernel_shape = [{k}, {k}], pads = [{p}, {p}, {p}, {p}], "
            f"strides = [{stride}, {stride}]}} : ({self.t(c, h, w)}) -> {self.t(c, ho, wo)}"
        ), ho, wo

    def concat(self, xs, cs, h, w):
        ts = ", ".join(self.t(c, h, w) for c in cs)
        return self.v(f"data.concat {', '.join(xs)} {{axis = 1}} : ({ts}) -> {self.t(sum(cs), h, w)}")

    def module(self, cin, h, w, out, cout, ho, wo):
        body = "\n".join(self.lines)
        return (
            "module {\n"
            f"  graph.func @main(%x: {self.t(cin, h, w)}) -> {self.t(cout, ho, wo)} {{\n{body}\n"
            f"    graph.return {out} : {self.t(cout, ho, wo)}\n  }}\n}}\n"
        )


def inception_like(modules=9, c=64, size=35):
    """Inception-v3-style: stem, then modules of 4 branches (1x1; 1x1→3x3; 1x1→3x3→3x3;
    pool→1x1) concatenated on channels."""
    g = Gen()
    x, h, w = g.conv("%x", 3, c, size, size, k=3)
    ch = c
    for _ in range(modules):
        b1, _, _ = g.conv(x, ch, c // 2, h, w)
        b2, _, _ = g.conv(x, ch, c // 4, h, w)
        b2, _, _ = g.conv(b2, c // 4, c // 2, h, w, k=3)
        b3, _, _ = g.conv(x, ch, c // 4, h, w)
        b3, _, _ = g.conv(b3, c // 4, c // 2, h, w, k=3)
        b3, _, _ = g.conv(b3, c // 2, c // 2, h, w, k=3)
        p, _, _ = g.pool(x, ch, h, w, kind="avg")
        b4, _, _ = g.conv(p, ch, c // 2, h, w)
        x = g.concat([b1, b2, b3, b4], [c // 2] * 4, h, w)
        ch = 2 * c
    return g.module(3, size, size, x, ch, h, w)


def nasnet_like(cells=6, c=32, size=28):
    """NasNet-A-style normal cells: 5 blocks, each the sum of two ops (separable-like
    conv / pool / identity) on two earlier states; the unused block outputs are
    concatenated."""
    g = Gen()
    x, h, w = g.conv("%x", 3, c, size, size, k=3)
    prev, cur = x, x
    ch_prev = ch_cur = c
    for _ in range(cells):
        p0, _, _ = g.conv(prev, ch_prev, c, h, w)
        p1, _, _ = g.conv(cur, ch_cur, c, h, w)
        states = [p0, p1]
        outs = []
        for i in range(5):
            a = states[(i * 7 + 1) % len(states)]
            b = states[(i * 3) % len(states)]
            if i % 3 == 0:
                l, _, _ = g.conv(a, c, c, h, w, k=3)
                r, _, _ = g.conv(b, c, c, h, w, k=5)
            elif i % 3 == 1:
                l, _, _ = g.pool(a, c, h, w, kind="avg")
                r = b
            else:
                l, _, _ = g.pool(a, c, h, w, kind="max")
                r, _, _ = g.conv(b, c, c, h, w, k=3)
            s = g.v(f"graph.add {l}, {r} : ({g.t(c, h, w)}, {g.t(c, h, w)}) -> {g.t(c, h, w)}")
            states.append(s)
            outs.append(s)
        nxt = g.concat(outs, [c] * 5, h, w)
        prev, cur = cur, nxt
        ch_prev, ch_cur = ch_cur, 5 * c
    return g.module(3, size, size, cur, ch_cur, h, w)


# ---- measuring -----------------------------------------------------------------------


def parse_report(text):
    out = {}
    for line in text.splitlines():
        m = re.match(r"(assign-streams|plan-memory) @(\S+): (.*)", line)
        if m:
            out[m.group(1)] = {k: v for k, v in re.findall(r"([\w-]+)=(\S+)", m.group(3))}
    return out


def run_stages(exe, path, streams_opt, cwd):
    r = subprocess.run(
        [exe, path, "--pass-pipeline=" + STAGES % streams_opt, "-o", "/dev/null"],
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[0] if r.stderr.strip() else "failed")
    return parse_report(r.stderr)


def timed(cmd, runs, cwd):
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
        ts.append(time.perf_counter() - t)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip().splitlines()[0] if r.stderr.strip() else "failed")
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--models", default="")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    exe = build(args.no_build)
    os.makedirs(OUT, exist_ok=True)
    models = {}
    zoo = os.path.join(REPO, "testdata", "models")
    if os.path.isdir(zoo):
        for f in sorted(os.listdir(zoo)):
            if f.endswith(".air") and f != "demo_block.air":
                models[f[:-4]] = open(os.path.join(zoo, f)).read()
    models["inception_like"] = inception_like()
    models["nasnet_like"] = nasnet_like()
    # Full-size zoo models (`ge-zoo --full`): weights in an external file next to them.
    full = os.path.join(REPO, "target", "zoo")
    full_models = {}
    if os.path.isdir(full):
        for f in sorted(os.listdir(full)):
            if f.endswith(".air"):
                full_models[f[:-4] + " (full)"] = os.path.join(full, f)
    if args.models:
        keep = set(args.models.split(","))
        models = {k: v for k, v in models.items() if k in keep}
        full_models = {k: v for k, v in full_models.items() if k.split(" ")[0] in keep}
    jobs = []
    for name, text in models.items():
        path = os.path.join(OUT, name + ".air")
        with open(path, "w") as f:
            f.write(inline_resources(text))
        jobs.append((name, path, OUT))
    for name, path in full_models.items():
        jobs.append((name, path, full))
    rows = []
    for name, path, cwd in jobs:
        log(f"{name}: stages")
        try:
            multi = run_stages(exe, path, "", cwd)
            single = run_stages(exe, path, "single-stream", cwd)
            t_atc = timed([exe, path, "--pass-pipeline=atc", "-o", "/dev/null"], args.runs, cwd)
            t_parse = timed([exe, path, "-o", "/dev/null"], args.runs, cwd)
        except RuntimeError as e:
            log(f"{name}: {e}")
            rows.append({"model": name, "error": str(e)})
            continue
        pm, ps, s1 = multi["plan-memory"], single["plan-memory"], multi["assign-streams"]
        ss = single["assign-streams"]
        rows.append(
            {
                "model": name,
                "tasks": int(s1["tasks"]),
                "ws": int(pm["workspace"]),
                "load": int(pm["lower_bound"]),
                "noreuse": int(pm["no_reuse"]),
                "ws1": int(ps["workspace"]),
                "load1": int(ps["lower_bound"]),
                "noreuse1": int(ps["no_reuse"]),
                "strategy1": ps["strategy"],
                "streams": int(s1["streams"]),
                "events": int(s1["events"]),
                "syncs": int(s1["syncs"]),
                "min_syncs": int(s1["min_syncs"]),
                "makespan": float(s1["makespan_us"]),
                "cp": float(s1["critical_path_us"]),
                "serial": float(ss["makespan_us"]),
                "t_atc": t_atc,
                "t_parse": t_parse,
            }
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    ok = [r for r in rows if "error" not in r]

    def ratio(a, b):
        return a / b if b else 1.0

    def kib(n):
        return f"{n / 1024:.0f} KiB" if n < 1 << 24 else f"{n / (1 << 20):.0f} MiB"

    print(
        "| model | tasks | one stream: workspace / LOAD | / no reuse | streams: workspace / bound "
        "| / no reuse | streams / one stream |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in ok:
        print(
            f"| {r['model']} | {r['tasks']} | {ratio(r['ws1'], r['load1']):.3f} ({kib(r['ws1'])}) "
            f"| {ratio(r['ws1'], r['noreuse1']):.3f} | {ratio(r['ws'], r['load']):.3f} ({kib(r['ws'])}) "
            f"| {ratio(r['ws'], r['noreuse']):.3f} | {ratio(r['ws'], r['ws1']):.2f} |"
        )
    if ok:
        g1 = statistics.mean(ratio(r["ws1"], r["load1"]) for r in ok)
        g = statistics.mean(ratio(r["ws"], r["load"]) for r in ok)
        print(f"| **mean** | | **{g1:.3f}** | | **{g:.3f}** | | |")
    print()
    print("| model | streams | events (ids) | syncs | chain-cover min syncs | makespan / critical path | speedup over one stream |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in ok:
        print(
            f"| {r['model']} | {r['streams']} | {r['events']} | {r['syncs']} | {r['min_syncs']} "
            f"| {ratio(r['makespan'], r['cp']):.3f} | {ratio(r['serial'], r['makespan']):.2f}× |"
        )
    print()
    print("| model | atc s | parse+print s | atc / parse+print |")
    print("|---|---:|---:|---:|")
    for r in ok:
        print(f"| {r['model']} | {r['t_atc']:.3f} | {r['t_parse']:.3f} | {ratio(r['t_atc'], r['t_parse']):.1f}× |")
    for r in rows:
        if "error" in r:
            print(f"\n{r['model']}: failed: {r['error']}")


if __name__ == "__main__":
    main()
