"""What tools/fuzz/onnx_mutate.py and tools/fuzz/tf_mutate.py share: the
command line, and the campaign that compiles each mutant with ge-atc, runs it
with ge-run and keeps the findings."""

import argparse
import hashlib
import os
import random
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Values a hostile file puts where sizes and counts go.
INTS = [0, -1, 1, 2, 3, -2, 7, 100, 1 << 20, 1 << 31, -(1 << 31), 1 << 40]
FLOATS = [0.0, -1.0, 0.5, 1e-30, 1e30, float("nan"), float("inf")]


def arguments(doc, default_out):
    """The options both tools take (each adds where its seeds are)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=5000, help="mutants to try")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release"), help="where ge-atc and ge-run are")
    ap.add_argument("--out", default=os.path.join(ROOT, default_out), help="where findings go")
    ap.add_argument("--timeout", type=float, default=60, help="seconds before a tool counts as hung")
    ap.add_argument("--memory-gib", type=float, default=8,
                    help="address space per tool run (each tool's --max-memory budget is a quarter of it)")
    return ap


def run(cmd, timeout, memory):
    """Exit code (or "hang") and the end of stderr of `cmd` in `memory` bytes of address space."""
    def limit():
        # An allocation past the budget fails (Rust aborts: a finding)
        # instead of the machine's OOM killer picking a victim.
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    try:
        r = subprocess.run(cmd, capture_output=True, timeout=timeout, preexec_fn=limit)
        return r.returncode, r.stderr[-2000:].decode(errors="replace")
    except subprocess.TimeoutExpired:
        return "hang", ""


def campaign(a, seeds, mutant, ext, framework):
    """`a.n` mutants of `seeds` (`mutant(rng, path)`: the mutant's bytes, or
    None when it cannot be made), each compiled by `ge-atc --framework
    framework` and, if that succeeds, run by `ge-run --random-inputs`. An
    exit other than 0, 1 and 2, or a hang, is a finding: the mutant (`ext`)
    and the tool's stderr go to `a.out`. Exits 1 when there was one."""
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    scratch = os.path.join(a.out, f"current_{a.seed}")
    budget = str(int(a.memory_gib * 2**28))
    counts, findings = {}, 0
    for i in range(a.n):
        seed = rng.choice(seeds)
        data = mutant(rng, seed)
        if data is None:
            continue
        with open(scratch + ext, "wb") as f:
            f.write(data)
        steps = [("atc", [os.path.join(a.bin, "ge-atc"), "--model", scratch + ext, "--framework", framework,
                          "--output", scratch, "--max-memory", budget]),
                 ("run", [os.path.join(a.bin, "ge-run"), scratch + ".om", "--random-inputs",
                          "--timeout", "10", "--max-memory", budget])]
        for what, cmd in steps:
            rc, err = run(cmd, a.timeout, int(a.memory_gib * 2**30))
            key = f"{what} {rc if rc in (0, 1, 2) else 'FINDING'}"
            counts[key] = counts.get(key, 0) + 1
            if rc not in (0, 1, 2):
                findings += 1
                kept = os.path.join(a.out, f"{what}_{rc}_{hashlib.sha1(data).hexdigest()[:10]}")
                with open(kept + ext, "wb") as f:
                    f.write(data)
                with open(kept + ".txt", "w") as f:
                    f.write(f"seed model: {seed}\ncommand: {' '.join(cmd)}\n\n{err}")
                print(f"finding: {what} exit {rc} from a mutant of {os.path.relpath(seed, ROOT)}: {kept}{ext}",
                      flush=True)
            if rc != 0:
                break
        if (i + 1) % 1000 == 0:
            print(f"{i + 1} mutants: {counts}", flush=True)
    print(f"{a.n} mutants: {counts}; {findings} findings", flush=True)
    sys.exit(1 if findings else 0)
