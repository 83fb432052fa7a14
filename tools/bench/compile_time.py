#!/usr/bin/env python3
"""ge-atc compile time vs onnxruntime session creation (issue 17 item 4).

For each model of the onnx package's nine light real-architecture models, one
round runs `ge-atc` (release build, compile cache disabled, output discarded)
and creates an onnxruntime session (all graph optimisations, 1 intra-op
thread) — interleaved, so drift on the machine affects both alike. Prints the
medians, their ratio and the per-round ratios, as a markdown table; then the
same for CPU time (ge-atc's user + system time as a child process; the
session's process time around its creation), which a loaded machine disturbs
less than wall time.

`--baseline BIN` runs a second ge-atc (e.g. one built from the base revision)
in the same rounds and adds its columns, for before/after comparisons.
`--phases` prints, per model, the median of each phase ge-atc's summary
reports (its `compile time` lines) over the rounds.

    cargo build --release -p ge-driver --bins
    nice -n -15 .venv/bin/python tools/bench/compile_time.py --rounds 5
    .venv/bin/python tools/bench/compile_time.py --rounds 3 --phases \\
        --baseline target/ge-atc.base
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MODELS = [
    "bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
    "shufflenet", "squeezenet", "vgg19", "zfnet512",
]
PHASE = re.compile(r"^    (\S+)\s+([0-9.]+) ms$")


def light_dir():
    import onnx  # noqa: PLC0415

    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_atc(atc, model, out):
    """Wall seconds, CPU seconds and the summary's phases (name -> ms) of one ge-atc run."""
    cpu, t = children_cpu(), time.perf_counter()
    r = subprocess.run(
        [atc, f"--model={model}", "--framework=5", f"--output={out}", "--op_compiler_cache_mode=disable"],
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu = time.perf_counter() - t, children_cpu() - cpu
    phases = {}
    for line in r.stdout.splitlines():
        m = PHASE.match(line)
        if m and m.group(1) != "total":
            phases[m.group(1)] = float(m.group(2))
    return wall, cpu, phases


def time_session(ort, model):
    cpu, t = time.process_time(), time.perf_counter()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    elapsed, cpu = time.perf_counter() - t, time.process_time() - cpu
    del s
    return elapsed, cpu


def med(xs):
    return statistics.median(xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--atc", default=os.path.join(REPO, "target", "release", "ge-atc"))
    ap.add_argument("--baseline", help="a second ge-atc binary run in the same rounds")
    ap.add_argument("--phases", action="store_true", help="print the median of each ge-atc phase")
    ap.add_argument("--models", nargs="*", default=MODELS)
    a = ap.parse_args()
    import onnxruntime as ort  # noqa: PLC0415

    for b in [a.atc] + ([a.baseline] if a.baseline else []):
        if not os.path.exists(b):
            sys.exit(f"error: {b} is not built (cargo build --release -p ge-driver --bins)")
    bins = [("ge", a.atc)] + ([("base", a.baseline)] if a.baseline else [])
    print(f"load average {os.getloadavg()[0]:.1f}; onnxruntime {ort.__version__}; {a.rounds} rounds\n")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for m in a.models:
            path = os.path.join(light_dir(), f"light_{m}.onnx")
            runs = {k: [] for k, _ in bins}
            ort_runs = []
            for _ in range(a.rounds):
                for k, b in bins:
                    runs[k].append(time_atc(b, path, os.path.join(tmp, m)))
                ort_runs.append(time_session(ort, path))
            results[m] = (runs, ort_runs)
            print(f"{m} done (load {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}\n")
    for what, i in [("wall", 0), ("CPU", 1)]:
        head = f"| model | ge-atc {what} s | onnxruntime session {what} s | ge / ort | per-round ratios |"
        if a.baseline:
            head += f" base ge-atc {what} s | base / ort | ge / base |"
        print(head)
        print("|---" * (head.count("|") - 1) + "|")
        ratios, base_ratios = [], []
        for m, (runs, ort_runs) in results.items():
            ge = [r[i] for r in runs["ge"]]
            rt = [r[i] for r in ort_runs]
            per = sorted(g / r for g, r in zip(ge, rt))
            ratio = med(ge) / med(rt)
            ratios.append(ratio)
            row = f"| {m} | {med(ge):.2f} | {med(rt):.2f} | {ratio:.2f}x | {per[0]:.2f}-{per[-1]:.2f} |"
            if a.baseline:
                base = [r[i] for r in runs["base"]]
                base_ratios.append(med(base) / med(rt))
                row += f" {med(base):.2f} | {med(base) / med(rt):.2f}x | {med(ge) / med(base):.2f} |"
            print(row)
        line = f"\ngeomean ge-atc / session creation ({what}): {statistics.geometric_mean(ratios):.2f}x"
        if a.baseline:
            line += f"; base: {statistics.geometric_mean(base_ratios):.2f}x"
        print(line + "\n")
    if a.phases:
        for k, _ in bins:
            names = []
            for runs, _ in results.values():
                for _, _, ph in runs[k]:
                    names += [n for n in ph if n not in names]
            print(f"phases of {k} (median ms over the rounds)\n")
            print("| model | " + " | ".join(names) + " |")
            print("|---" * (len(names) + 1) + "|")
            for m, (runs, _) in results.items():
                cells = [f"{med([ph.get(n, 0.0) for _, _, ph in runs[k]]):.1f}" for n in names]
                print(f"| {m} | " + " | ".join(cells) + " |")
            print()


if __name__ == "__main__":
    main()
