#!/usr/bin/env python3
"""Compare ge with onnxruntime on the PyTorch exports of tools/models/gen_torch_gauntlet.py.

For each DIR/<model>/<exporter>/ (model.onnx, inN.npy, outN.npy, meta.json) the
model is compiled with `ge-atc --framework=5` and run with `ge-run`, every
input bound by its graph input NAME (`--input input_ids=in0.npy`; nothing is
bound to a constant) and every output checked by name against onnxruntime's
(`--expect last_hidden_state=out0.npy`) at the conformance tolerances
(rtol 1e-3, atol 1e-7: the ONNX backend tests' defaults, as ge-conformance).

    tools/models/run_torch_gauntlet.py                          # target/torch-gauntlet
    tools/models/run_torch_gauntlet.py --dir testdata/onnx/torch   # the CI set
    tools/models/run_torch_gauntlet.py --only bert,swin_t --markdown
    tools/models/run_torch_gauntlet.py --dir target/torch-gauntlet-dynamic   # dynamic axes
    tools/models/run_torch_gauntlet.py --dir target/torch-gauntlet-decode    # KV-cache decoding

Dynamic-axes exports (`gen_torch_gauntlet.py --dynamic`; meta.json lists
"sizes") are compiled once, with no shape flag, and run at every size
(<size>.inN.npy / <size>.outN.npy); a pass is a pass at every size.
Decoding exports (`--decode`: a causal LM with past_key_values; the sizes are
past lengths) also decode greedily from greedy.prompt.npy, one ge-run per
token with the .om compiled once, feeding each present back as the next past:
a pass also needs onnxruntime's token ids (meta.json "greedy"). That needs numpy
(tools/models/greedy_decode.py); the rest only Python 3.

Results: pass; compile-fail / run-fail (ge refused or failed; the first error
line); mismatch (ran, outputs differ); export-refused (torch itself could not
export; not a ge result). Needs only Python 3 and the ge binaries (target/debug,
or --bin-dir). Exit status 1 when a result is not a pass, unless marked with
`--expect-fail NAME[:EXPORTER]` (then a pass of it fails the run).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The TF model runner's helpers: a command with a timeout, its first error line.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import first_error, run  # noqa: E402
RTOL, ATOL = "1e-3", "1e-7"
EXPORTERS = ("dynamo", "torchscript")


def commands(bins, d, meta, om):
    """The ge-atc command and one ge-run command per size (one for a fixed-shape export)."""
    atc = [os.path.join(bins, "ge-atc"), "--framework=5", "--model=" + os.path.join(d, "model.onnx"),
           f"--output={om}", "--op_compiler_cache_mode=disable"]
    runs = []
    for size in meta.get("sizes", [None]):
        prefix = f"{size}." if size else ""
        rn = [os.path.join(bins, "ge-run"), om + ".om", "--info", "--rtol", RTOL, "--atol", ATOL]
        for i, n in enumerate(meta["inputs"]):
            rn += ["--input", f"{n}={os.path.join(d, f'{prefix}in{i}.npy')}"]
        for i, n in enumerate(meta["outputs"]):
            rn += ["--expect", f"{n}={os.path.join(d, f'{prefix}out{i}.npy')}"]
        runs.append(rn)
    return atc, runs


def greedy_ge(bins, om, d, meta, work, timeout):
    """ge-run's greedy decoding (one ge-run per step, the .om compiled once):
    (token ids, None), or (None, the first error)."""
    import numpy as np
    from greedy_decode import greedy

    step_dir = os.path.join(work, f"{meta['name']}_{meta['exporter']}_greedy")
    os.makedirs(step_dir, exist_ok=True)
    names = dict(zip(["input_ids", "attention_mask", "position_ids"] +
                     [f"past_key_values.{n // 2}.{('key', 'value')[n % 2]}" for n in range(2 * meta["layers"])],
                     range(3 + 2 * meta["layers"])))
    failure = []

    def step(feeds):
        cmd = [os.path.join(bins, "ge-run"), om]
        for n in meta["inputs"]:
            f = os.path.join(step_dir, f"{n}.npy")
            np.save(f, feeds[names[n]])
            cmd += ["--input", f"{n}={f}"]
        for i, n in enumerate(meta["outputs"]):
            cmd += ["--output", f"{n}={os.path.join(step_dir, f'out{i}.npy')}"]
        rc, out = run(cmd, timeout)
        if rc != 0:
            failure.append(first_error(out))
            raise RuntimeError(failure[-1])
        return [np.load(os.path.join(step_dir, f"out{i}.npy")) for i in range(len(meta["outputs"]))]

    prompt = np.load(os.path.join(d, "greedy.prompt.npy"))
    try:
        tokens, _ = greedy(step, meta["layers"], meta["kv"], prompt, meta["greedy"]["steps"])
    except RuntimeError:
        return None, failure[-1]
    return [t[0] for t in tokens], None


def check(bins, d, meta, work, timeout):
    """Compile and run one export; returns (status, detail)."""
    if "export_error" in meta:
        return "export-refused", meta["export_error"]
    om = os.path.join(work, f"{meta['name']}_{meta['exporter']}")
    atc, runs = commands(bins, d, meta, om)
    rc, out = run(atc, timeout)
    if rc != 0:
        return "compile-fail", first_error(out)
    for size, rn in zip(meta.get("sizes", [None]), runs):
        rc, out = run(rn, timeout)
        if rc != 0:
            at = f"at {size}: " if size else ""
            return ("mismatch" if "mismatch" in out.lower() or "differ" in out.lower() else "run-fail"), \
                at + first_error(out)
    # `--info`: "... N kernels native, M on the interpreter" -- a pass with
    # interpreter fallbacks is said, not hidden.
    m = re.search(r"(\d+) on the interpreter", out)
    interp = int(m.group(1)) if m else 0
    detail = [f"at {' '.join(meta['sizes'])}"] if "sizes" in meta else []
    if "greedy" in meta:
        tokens, err = greedy_ge(bins, om + ".om", d, meta, work, timeout)
        if err:
            return "run-fail", f"greedy: {err}"
        if tokens != meta["greedy"]["tokens"]:
            return "mismatch", f"greedy tokens {tokens}, onnxruntime's {meta['greedy']['tokens']}"
        detail.append(f"greedy {len(tokens)} tokens")
    if interp:
        detail.append(f"{interp} kernel(s) on the interpreter")
    return "pass", "; ".join(detail)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=os.path.join(ROOT, "target", "torch-gauntlet"))
    ap.add_argument("--bin-dir", default=os.environ.get("GE_BIN_DIR", os.path.join(ROOT, "target", "debug")))
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--exporters", default=",".join(EXPORTERS))
    ap.add_argument("--keep", help="directory for the .om files (default: a temporary one)")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--markdown", action="store_true", help="print a table for docs/conformance.md")
    ap.add_argument("--commands", action="store_true", help="print the ge-atc / ge-run command of each export")
    ap.add_argument("--expect-fail", action="append", default=[], metavar="NAME[:EXPORTER]")
    a = ap.parse_args()
    if not os.path.isdir(a.dir):
        sys.exit(f"error: no directory {a.dir} (make it with tools/models/gen_torch_gauntlet.py)")
    names = sorted(n for n in os.listdir(a.dir) if os.path.isdir(os.path.join(a.dir, n)))
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    exporters = a.exporters.split(",")
    work = a.keep or tempfile.mkdtemp(prefix="ge-torch-")
    os.makedirs(work, exist_ok=True)
    rows, bad = [], 0
    for n in names:
        res, meta = {}, None
        for e in exporters:
            d = os.path.join(a.dir, n, e)
            if not os.path.exists(os.path.join(d, "meta.json")):
                continue
            meta = json.load(open(os.path.join(d, "meta.json")))
            st, detail = check(a.bin_dir, d, meta, work, a.timeout)
            expected_fail = n in a.expect_fail or f"{n}:{e}" in a.expect_fail
            if st != "pass" and not expected_fail:
                bad += 1
            if st == "pass" and expected_fail:
                detail = (detail + "; " if detail else "") + "passes but was expected to fail"
                bad += 1
            res[e] = (st, detail)
            print(f"{n:20} {meta['set']:8} {e:12} {st:14} {detail}", flush=True)
            if a.commands and st != "export-refused":
                atc, runs = commands(a.bin_dir, d, meta, os.path.join(work, f"{n}_{e}"))
                for c in [atc, *runs]:
                    print("    " + " ".join(c))
        if meta:
            rows.append((meta, res))
    if not rows:
        sys.exit(f"error: no exports in {a.dir}")
    if a.markdown:
        print()
        print("| model | set | dynamo exporter | TorchScript exporter | note |")
        print("|---|---|---|---|---|")
        for meta, res in sorted(rows, key=lambda r: (r[0]["set"] != "tuned", r[0]["name"])):
            def cell(e):
                if e not in res:
                    return "—"
                st, detail = res[e]
                detail = detail.removeprefix("error: ").replace("|", "\\|")
                return st if not detail else f"{st}: {detail}"
            print(f"| {meta['name']} | {meta['set']} | {cell('dynamo')} | {cell('torchscript')} | {meta['note']} |")
        print()
    for kind in ("tuned", "heldout"):
        for e in exporters:
            sts = [r[e][0] for m, r in rows if m["set"] == kind and e in r]
            if sts:
                print(f"{kind:8} {e:12} {sts.count('pass')} of {len(sts)} pass")
    total = sum(len(r) for _, r in rows)
    passed = sum(1 for _, r in rows for st, _ in r.values() if st == "pass")
    print(f"{passed} passed, {total - passed} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
