#!/usr/bin/env python3
"""Per-call overhead of ge.Session.run from Python vs ge-run (issue 20).

Both run the same .om (testdata/onnx/small_cnn.onnx compiled with ge.compile, and a
one-op graph for the overhead alone) with the same input:

- ge-run: `ge-run X.om --input x=in.npy --iterations N --warmup W --json`, timed inside
  ge-run (one Session::run per iteration, the model loaded once): its p50;
- Rust in this process: `Session._time_rust` runs ge-run's own timing loop (inputs
  converted once, `Session::run_with` alone timed) inside the very extension module
  under test — the same build as the Python side, whatever the profile;
- Python: `sess.run({"x": x})` in a loop in this process, timed with
  time.perf_counter() around each call (dict in, numpy arrays out, the GIL released
  while the model runs): its p50.

Rounds alternate the two (--rounds, default 5) so drift on the machine affects both; the
table reports the median round and the range of the per-round ratios. Both sides must
come from the same cargo profile: by default this script builds `ge-run` and installs
the package (maturin develop) in --profile release.

Usage: .venv/bin/python tools/bench/python_session.py [--iterations 2000] [--warmup 200]
           [--rounds 5] [--profile release|dev] [--no-build]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def build(profile):
    flag = ["--release"] if profile == "release" else []
    log(f"building ge-run ({profile})")
    subprocess.run(["cargo", "build", "-q", "-p", "ge-driver", "--bin", "ge-run"] + flag, cwd=REPO, check=True)
    log(f"installing the ge package ({profile}) with maturin develop")
    env = dict(os.environ, VIRTUAL_ENV=sys.prefix, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    subprocess.run([os.path.join(os.path.dirname(sys.executable), "maturin"), "develop", "-q",
                    "-m", os.path.join(REPO, "python", "Cargo.toml")] + flag, cwd=REPO, check=True, env=env)


def p50(xs):
    return statistics.median(xs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--profile", choices=["release", "dev"], default="release")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    if not args.no_build:
        build(args.profile)
        # maturin develop installs the package as a .pth entry, which this
        # interpreter read at startup: start again to see it.
        os.execv(sys.executable, [sys.executable] + sys.argv + ["--no-build"])
    import numpy as np

    import ge
    from ge import es

    ge_run = os.path.join(REPO, "target", "release" if args.profile == "release" else "debug", "ge-run")
    tmp = tempfile.mkdtemp(prefix="ge-bench-py-")
    cases = {}
    om = ge.compile(os.path.join(REPO, "testdata", "onnx", "small_cnn.onnx"), op_compiler_cache_mode="disable")
    cases["small_cnn (1x3x8x8)"] = (om, np.load(os.path.join(REPO, "testdata", "onnx", "small_cnn.in0.npy")))
    g = es.Graph("main")
    x = g.input("x", shape=(1, 16))
    cases["one relu (1x16)"] = (ge.compile(g.build(g.relu(x)), op_compiler_cache_mode="disable"),
                                np.ones((1, 16), np.float32))
    rows = []
    for name, (om_bytes, x) in cases.items():
        om_path = os.path.join(tmp, "m.om")
        in_path = os.path.join(tmp, "x.npy")
        with open(om_path, "wb") as f:
            f.write(om_bytes)
        np.save(in_path, x)
        model = ge.Model(om_path)
        in_name = model.inputs[0][0]
        sess = model.session()
        rounds = []
        for r in range(args.rounds):
            out = subprocess.run([ge_run, om_path, "--input", f"{in_name}={in_path}", "--iterations",
                                  str(args.iterations), "--warmup", str(args.warmup), "--json"],
                                 capture_output=True, text=True, check=True).stdout
            rust = json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])["p50_ms"] * 1e3
            feed = {in_name: x}
            inproc = p50(sess._time_rust(feed, args.iterations, args.warmup)) * 1e6
            for _ in range(args.warmup):
                sess.run(feed)
            times = []
            for _ in range(args.iterations):
                t = time.perf_counter()
                sess.run(feed)
                times.append(time.perf_counter() - t)
            py = p50(times) * 1e6
            rounds.append((rust, inproc, py))
            log(f"{name} round {r + 1}: ge-run p50 {rust:.1f} us, in-process Rust p50 {inproc:.1f} us, "
                f"Python p50 {py:.1f} us ({py / rust:.3f}x ge-run, {py / inproc:.3f}x in-process)")
        rounds.sort(key=lambda rp: rp[2] / rp[1])
        rust, inproc, py = rounds[len(rounds) // 2]
        ratios = [p / i for _, i, p in rounds]
        rows.append((name, rust, inproc, py, py - inproc, py / rust, py / inproc, min(ratios), max(ratios)))
    print(f"profile {args.profile}, {args.iterations} iterations (+{args.warmup} warm-up) per side and round, "
          f"{args.rounds} rounds, median round:")
    print("| model | ge-run p50 µs | same loop in-process p50 µs | Session.run p50 µs | overhead µs "
          "| Python / ge-run | Python / in-process (range over rounds) |")
    print("|---|---|---|---|---|---|---|")
    for name, rust, inproc, py, over, r1, r2, lo, hi in rows:
        print(f"| {name} | {rust:.1f} | {inproc:.1f} | {py:.1f} | {over:+.1f} | {r1:.3f} | {r2:.3f} ({lo:.3f} – {hi:.3f}) |")


if __name__ == "__main__":
    main()
