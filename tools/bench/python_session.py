#!/usr/bin/env python3
"""Per-call overhead of ge.Session.run from Python vs ge-run (issue 20).

All run the same .om (compiled with ge.compile) with the same input:

- ge-run: `ge-run X.om --input x=in.npy --iterations N --warmup W --json`, timed inside
  ge-run (one Session::run per iteration, the model loaded once): its p50;
- Rust in this process: `Session._time_rust` runs ge-run's own timing loop (inputs
  converted once, `Session::run_with` alone timed) inside the very extension module
  under test — the same build as the Python side, whatever the profile;
- Python, four ways, each timed with time.perf_counter() around each call
  (its p50): `sess.run({"x": x})` (dict in, a new dict of new arrays out, which
  the run writes in place; the GIL by the rule of docs/python.md: held for a
  run under 20 µs); `r.run(x)` with `r = sess.runner()` (the input positional,
  the output arrays made once and written in place by every run, the GIL by
  the rule); `sess.runner(release_gil=False)` (the same, the GIL always held)
  and `sess.runner(release_gil=True)` (always released);
- the floor of the Python timing itself: an empty call (`lambda: None`) timed the
  same way — the part of each Python column no binding can remove;
- timed in batches (the second table): one clock read around --batch calls, the
  mean per call, as Python's `timeit` times a statement — the Rust loop
  (`_time_rust(..., batch=B)`, ge-run's loop otherwise) and `sess.run(feed)` /
  `runner.run(x)` written out in a plain `for` loop over local variables, as a
  user's loop calls them. The per-call clock reads of the first table are part of
  both sides' numbers there (about 25 ns in Rust, 50 ns in Python, plus the
  lambda's call); here neither side has one per call. Median over the samples.

The models: testdata/onnx/small_cnn.onnx (the issue's small model), one relu
(the overhead alone), and two held-out shapes the call path was not tuned on (a
tiny MLP and a mid-size CNN, built with ge.es).

Rounds alternate the sides (--rounds, default 5) so drift on the machine affects both; the
table reports the median round and the range of the per-round ratios. Both sides must
come from the same cargo profile: by default this script builds `ge-run` and installs
the package (maturin develop) in --profile release.

Usage: .venv/bin/python tools/bench/python_session.py [--iterations 2000] [--warmup 200]
           [--rounds 5] [--batch 100] [--profile release|dev] [--no-build] [--only TEXT]
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
    ap.add_argument("--batch", type=int, default=100, help="calls per sample of the batch-timed table")
    ap.add_argument("--profile", choices=["release", "dev"], default="release")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--only", help="run only the models whose name contains this text")
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
    rows = []
    batch_rows = []
    floors = []
    for name, (om_bytes, x) in cases(ge, es, np).items():
        if args.only and args.only not in name:
            continue
        om_path = os.path.join(tmp, "m.om")
        in_path = os.path.join(tmp, "x.npy")
        with open(om_path, "wb") as f:
            f.write(om_bytes)
        np.save(in_path, x)
        model = ge.Model(om_path)
        in_name = model.inputs[0][0]
        sess = model.session()
        feed = {in_name: x}
        runner = sess.runner()
        held = sess.runner(release_gil=False)
        released = sess.runner(release_gil=True)
        # What each Python column times, one call each.
        calls = {"run": lambda: sess.run(feed), "runner": lambda: runner.run(x), "held": lambda: held.run(x),
                 "released": lambda: released.run(x)}
        rounds = []
        batch_rounds = []
        for r in range(args.rounds):
            out = subprocess.run([ge_run, om_path, "--input", f"{in_name}={in_path}", "--iterations",
                                  str(args.iterations), "--warmup", str(args.warmup), "--json"],
                                 capture_output=True, text=True, check=True).stdout
            rust = json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])["p50_ms"] * 1e3
            inproc = p50(sess._time_rust(feed, args.iterations, args.warmup)) * 1e6
            py = {k: time_calls(f, args.iterations, args.warmup) for k, f in calls.items()}
            floors.append(time_calls(lambda: None, args.iterations, args.warmup))
            samples = max(5, args.iterations // args.batch)
            rust_b = p50(sess._time_rust(feed, samples, args.warmup, batch=args.batch)) * 1e6
            run_b = batched(sess.run, feed, samples, args.batch, args.warmup)
            runner_b = batched(runner.run, x, samples, args.batch, args.warmup)
            batch_rounds.append((rust_b, run_b, runner_b))
            rounds.append((rust, inproc, py))
            log(f"{name} round {r + 1}: ge-run p50 {rust:.2f} us, in-process Rust {inproc:.2f} us, "
                + ", ".join(f"{k} {v:.2f} us ({v / rust:.3f}x ge-run)" for k, v in py.items()))
        # The median round by the runner's ratio to ge-run (the number).
        rounds.sort(key=lambda rp: rp[2]["runner"] / rp[0])
        rust, inproc, py = rounds[len(rounds) // 2]
        ratios = [p["runner"] / g for g, _, p in rounds]
        rows.append((name, rust, inproc, py, min(ratios), max(ratios)))
        batch_rounds.sort(key=lambda b: b[2] / b[0])
        b_ratios = [b[2] / b[0] for b in batch_rounds]
        batch_rows.append((name, *batch_rounds[len(batch_rounds) // 2], min(b_ratios), max(b_ratios)))
    print(f"profile {args.profile}, {args.iterations} iterations (+{args.warmup} warm-up) per side and round, "
          f"{args.rounds} rounds, median round (by runner / ge-run); 1-min load average {os.getloadavg()[0]:.2f}; "
          f"an empty Python call timed the same way: p50 {p50(floors):.2f} µs (median over rounds):")
    print("| model | ge-run p50 µs | same loop in-process p50 µs | `Session.run(dict)` p50 µs (/ ge-run) "
          "| `runner.run(x)` p50 µs (/ ge-run) | `runner(release_gil=False).run(x)` p50 µs (/ ge-run) "
          "| `runner(release_gil=True).run(x)` p50 µs (/ ge-run) | runner / ge-run, range over rounds |")
    print("|---|---|---|---|---|---|---|---|")
    for name, rust, inproc, py, lo, hi in rows:
        cols = " | ".join(f"{py[k]:.2f} ({py[k] / rust:.3f})" for k in ("run", "runner", "held", "released"))
        print(f"| {name} | {rust:.2f} | {inproc:.2f} | {cols} | {lo:.3f} – {hi:.3f} |")
    print()
    print(f"Timed in batches of {args.batch} calls (one clock read around each batch, the mean per call; "
          "median over the samples), median round by runner / Rust loop:")
    print("| model | Rust loop µs | `Session.run(dict)` µs (/ Rust) | `runner.run(x)` µs (/ Rust) "
          "| runner / Rust, range over rounds |")
    print("|---|---|---|---|---|")
    for name, rust, run, runner, lo, hi in batch_rows:
        print(f"| {name} | {rust:.3f} | {run:.3f} ({run / rust:.3f}) | {runner:.3f} ({runner / rust:.3f}) "
              f"| {lo:.3f} – {hi:.3f} |")


def time_calls(f, iterations, warmup):
    """p50 in µs of `f()`, timed with time.perf_counter() around each call."""
    for _ in range(warmup):
        f()
    times = []
    for _ in range(iterations):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return p50(times) * 1e6


def batched(call, arg, samples, batch, warmup):
    """Median over `samples` of the mean µs of `call(arg)` over `batch` calls
    timed together (`call` a bound method: `sess.run` or `runner.run`, called
    as a user's loop calls it, from local variables)."""
    clock = time.perf_counter
    for _ in range(warmup):
        call(arg)
    means = []
    for _ in range(samples):
        t = clock()
        for _ in range(batch):
            call(arg)
        means.append((clock() - t) / batch)
    return p50(means) * 1e6


def cases(ge, es, np):
    """{name: (.om bytes, input array)}: the small CNN the issue names, one relu
    (the overhead alone), and two held-out shapes the call path was not tuned
    on — a tiny MLP and a mid-size CNN (built with ge.es, seeded weights)."""
    rng = np.random.default_rng(20)
    opts = dict(op_compiler_cache_mode="disable")
    out = {}
    om = ge.compile(os.path.join(REPO, "testdata", "onnx", "small_cnn.onnx"), **opts)
    out["small_cnn (1x3x8x8)"] = (om, np.load(os.path.join(REPO, "testdata", "onnx", "small_cnn.in0.npy")))
    g = es.Graph("main")
    x = g.input("x", shape=(1, 16))
    out["one relu (1x16)"] = (ge.compile(g.build(g.relu(x)), **opts), np.ones((1, 16), np.float32))

    def w(*shape):
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    # Held out: an MLP 32 -> 64 -> 64 -> 10 on a batch of 4.
    g = es.Graph("main")
    h = g.input("x", shape=(4, 32))
    for i, (k, n) in enumerate([(32, 64), (64, 64), (64, 10)]):
        h = g.matmul(h, g.weight(f"w{i}", w(k, n))) + g.weight(f"b{i}", w(n))
        h = g.relu(h) if n != 10 else h
    out["held out: MLP 4x32-64-64-10"] = (ge.compile(g.build(h), **opts), w(4, 32) * 10)
    # Held out: a mid-size CNN, two 3x3 convs (16 and 32 channels) on 1x8x32x32.
    g = es.Graph("main")
    h = g.input("x", shape=(1, 8, 32, 32))
    for i, (ci, co) in enumerate([(8, 16), (16, 32)]):
        h = g.relu(g.conv2d(h, g.weight(f"k{i}", w(co, ci, 3, 3)), g.weight(f"c{i}", w(co)), pads=[1, 1, 1, 1]))
    out["held out: CNN 1x8x32x32, 3x3 convs 16, 32 ch"] = (ge.compile(g.build(h), **opts), w(1, 8, 32, 32) * 10)
    return out


if __name__ == "__main__":
    main()
