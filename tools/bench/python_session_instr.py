#!/usr/bin/env python3
"""Per-call instructions of ge.Session.run from Python vs the Rust loop ge-run times
(issue 20), counted by valgrind's callgrind: what wall time cannot show on a loaded
machine.

For each model (the cases of tools/bench/python_session.py, compiled once outside
valgrind) and each way to call it, a child Python process loads the .om, makes one
call, then runs the call N times; it is run under `valgrind --tool=callgrind` with
N = --base and N = --base + --calls, and the difference of the two instruction totals
divided by --calls is the instructions of one call (start-up, loading and the first
call cancel out). The ways:

- rust: `Session._time_rust(feed, N)` — ge-run's own timing loop (`Session::run_with`
  on inputs converted once, an Instant read around each run) inside the extension;
  rust-reusing: the same loop on `Session::run_reusing` into the last run's outputs
  (what a runner's run calls);
- run: `sess.run({"x": x})` (the GIL by the rule, which sees valgrind's slow runs and
  releases it); run-held: the same on `model.session(release_gil=False)` (what the rule
  does for a short run outside valgrind: compare it with held); run-held-keep: the same,
  each result kept until the next call has returned (so the session cannot recycle it:
  a new dict of new arrays every call, as before python/src/recycle.rs);
  held: `r.run(x)` with `r = sess.runner(release_gil=False)`
  (what the GIL rule does for a short run — the rule itself would see valgrind's slow
  runs and release it); released: `sess.runner(release_gil=True)`;
- empty: a Python loop calling `lambda: None` (the floor of a call from Python).

Each Python way also pays its loop (`for _ in range(N): f()`), which the timing
script pays too. Prints a table of instructions per call and their ratio to rust.

Each valgrind run takes a minute or more (Python's start-up); the differences are only
meaningful for many calls (a few thousand instructions of noise per 1000 calls).

`--functions N` also prints, per model and way, the N functions whose exclusive
instructions per call grew most between the two runs (`callgrind_annotate`, the same
difference divided by --calls): where a call's instructions go; and, for each way after
the first, the N functions whose per-call counts differ most from the first way's (with
`--ways rust-reusing,held`: what a runner's call costs that ge-run's loop does not).

Usage: .venv/bin/python tools/bench/python_session_instr.py [--calls 20000] [--base 2000]
           [--only TEXT] [--ways rust,rust-reusing,run,run-held,run-held-keep,held,released,empty]
           [--functions N]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

CHILD = r"""
import sys, numpy as np, ge
om, inp, way, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
model = ge.Model(om)
x = np.load(inp)
sess = model.session()
# The name interned, as a string literal in the caller's code is ({"x": x}).
feed = {sys.intern(model.inputs[0][0]): x}
if way in ("rust", "rust-reusing"):
    kw = {"reusing": True} if way == "rust-reusing" else {}
    sess._time_rust(feed, 1, **kw)
    sess._time_rust(feed, n, **kw)
else:
    if way == "run":
        f = lambda: sess.run(feed)
    elif way == "run-held":
        s2 = model.session(release_gil=False)
        f = lambda: s2.run(feed)
    elif way == "run-held-keep":
        s2 = model.session(release_gil=False)
        keep = [None]
        f = lambda: keep.__setitem__(0, s2.run(feed))
    elif way == "held":
        r = sess.runner(release_gil=False)
        f = lambda: r.run(x)
    elif way == "released":
        r = sess.runner(release_gil=True)
        f = lambda: r.run(x)
    else:
        f = lambda: None
    for _ in range(8):
        f()
    for _ in range(n):
        f()
"""


def instructions(tmp, om, inp, way, n, functions=False):
    out = os.path.join(tmp, f"cg.{way}.{n}.out")
    # A fixed hash seed: the two runs of a way differ only by the calls; one
    # OpenBLAS thread (numpy's idle BLAS threads spin for a varying number of
    # instructions: ~1 M per run, noise of ~150 instructions per call at 5000).
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", CHILD,
                    om, inp, way, str(n)], check=True, capture_output=True, env=env)
    with open(out) as f:
        text = f.read()
    m = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
    if not m:
        raise SystemExit(f"no instruction total in {out}")
    if not functions:
        return int(m.group(1))
    return int(m.group(1)), per_function(out)


def per_function(out):
    """{function: exclusive instructions} of a callgrind output file."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", "--show-percs=no", out],
                          check=True, capture_output=True, text=True).stdout
    counts = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+(\S.*?)\s*$", line)
        if m and ":" in m.group(2):
            fn = m.group(2)
            counts[fn] = counts.get(fn, 0) + int(m.group(1).replace(",", ""))
    return counts


def top_functions(lo, hi, calls, n):
    """The n functions whose exclusive instructions per call grew most from lo to hi."""
    diff = {f: (hi.get(f, 0) - lo.get(f, 0)) / calls for f in set(lo) | set(hi)}
    return sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--base", type=int, default=2000)
    ap.add_argument("--only", help="run only the models whose name contains this text")
    ap.add_argument("--ways", default="rust,run,run-held,held,released,empty")
    ap.add_argument("--functions", type=int, default=0,
                    help="also print the N functions with the most exclusive instructions per call")
    args = ap.parse_args()
    import numpy as np

    import ge
    from ge import es
    from python_session import cases

    ways = args.ways.split(",")
    tmp = tempfile.mkdtemp(prefix="ge-bench-instr-")
    rows = []
    for i, (name, (om_bytes, x)) in enumerate(cases(ge, es, np).items()):
        if args.only and args.only not in name:
            continue
        om, inp = os.path.join(tmp, f"m{i}.om"), os.path.join(tmp, f"x{i}.npy")
        with open(om, "wb") as f:
            f.write(om_bytes)
        np.save(inp, x)
        per, fn_per_call = {}, {}
        for way in ways:
            fns = args.functions > 0
            lo = instructions(tmp, om, inp, way, args.base, fns)
            hi = instructions(tmp, om, inp, way, args.base + args.calls, fns)
            if fns:
                (lo, lo_f), (hi, hi_f) = lo, hi
            per[way] = (hi - lo) / args.calls
            print(f"{name}: {way} {per[way]:.0f} instructions per call", file=sys.stderr, flush=True)
            if fns:
                for f, c in top_functions(lo_f, hi_f, args.calls, args.functions):
                    print(f"    {c:9.1f}  {f}", file=sys.stderr, flush=True)
                fn_per_call[way] = {f: (hi_f.get(f, 0) - lo_f.get(f, 0)) / args.calls for f in set(lo_f) | set(hi_f)}
        # Where a way's call differs from the first way's (e.g. a runner's
        # from ge-run's own loop): the functions whose per-call counts differ most.
        first = ways[0]
        for way in ways[1:]:
            if first in fn_per_call and way in fn_per_call:
                a, b = fn_per_call[first], fn_per_call[way]
                print(f"{name}: {way} - {first}, per call, by function:", file=sys.stderr, flush=True)
                for f, c in top_functions(a, b, 1, args.functions):
                    print(f"    {c:9.1f}  {f}", file=sys.stderr, flush=True)
        rows.append((name, per))
    print(f"callgrind instructions per call ({args.calls} calls, the difference of runs of "
          f"{args.base} and {args.base + args.calls}); in brackets the ratio to rust:")
    print("| model | " + " | ".join(ways) + " |")
    print("|---|" + "---|" * len(ways))
    for name, per in rows:
        rust = per.get("rust")
        cells = [f"{per[w]:.0f}" + (f" ({per[w] / rust:.3f})" if rust and w != "rust" else "") for w in ways]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
