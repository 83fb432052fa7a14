#!/usr/bin/env python3
"""Compare ge with TensorFlow on the models of tools/models/tf/gen_tf_models.py.

For each model directory (frozen.pb, frozen_fn.pb, saved_model/, inN.npy,
outN.npy, meta.json) every available form is compiled with
`ge-atc --framework=3` and run with `ge-run --expect` against TensorFlow's
outputs:

    frozen      frozen.pb (v1 control flow), outputs picked by their node:port names
    frozen_fn   frozen_fn.pb (functional While/If with a function library)
    saved       saved_model/ with the serving_default signature

    tools/models/tf/run.py                        # testdata/tf/models (the CI set)
    tools/models/tf/run.py --dir target/tf-models --markdown
    tools/models/tf/run.py --only t_lstm --keep /tmp/om   # keep the .om files

Needs only Python 3 and the ge binaries (target/debug, or --bin-dir). Exit
status 1 when a form that is expected to pass fails; `--expect-fail NAME[:FORM]`
(repeatable) marks known failures, which are reported but do not fail the run.
"""

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# fp32 rounding: TensorFlow and ge sum in different orders (and TF uses
# oneDNN/Eigen kernels), so results agree to a few ulps of the largest terms.
RTOL, ATOL = "1e-4", "1e-4"


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout} s"
    return p.returncode, (p.stdout + p.stderr)


def first_error(text):
    lines = [l for l in text.splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower() or "mismatch" in l.lower():
            return l.strip()
    return lines[-1].strip() if lines else "failed"


def check(bins, d, meta, form, work, timeout):
    """Compile and run one form; returns (status, detail)."""
    om = os.path.join(work, f"{meta['name']}_{form}")
    cmd = [os.path.join(bins, "ge-atc"), "--framework=3", f"--output={om}", "--op_compiler_cache_mode=disable"]
    if form == "saved":
        cmd.append("--model=" + os.path.join(d, "saved_model"))
    else:
        cmd.append("--model=" + os.path.join(d, "frozen.pb" if form == "frozen" else "frozen_fn.pb"))
        cmd.append("--out_nodes=" + ";".join(meta["frozen_outputs"]))
    rc, out = run(cmd, timeout)
    if rc != 0:
        return "compile-fail", first_error(out)
    n_in = len(meta["inputs"])
    n_out = len(meta["signature_outputs"])
    cmd = [os.path.join(bins, "ge-run"), om + ".om", "--rtol", RTOL, "--atol", ATOL]
    order = list(range(n_in))
    if form == "saved":
        # A SavedModel's arguments are its signature keys in sorted order
        # (TensorFlow's order of keyword arguments); frozen graphs keep the
        # placeholders' graph order.
        order.sort(key=lambda i: meta["inputs"][i])
    for i in order:
        f = os.path.join(d, f"in{i}.npy")
        # A frozen graph's placeholders are in graph order, which TensorFlow
        # does not keep equal to the signature's: bind by name when known.
        names = meta.get("frozen_inputs") if form != "saved" else None
        cmd += ["--input", f"{names[i]}={f}" if names else f]
    for i in range(n_out):
        cmd += ["--expect", os.path.join(d, f"out{i}.npy")]
    rc, out = run(cmd, timeout)
    if rc != 0:
        return "run-fail", first_error(out)
    interp = "interpreter" in out and "fallback" in out
    return "pass", ("some ops on the interpreter" if interp else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=os.path.join(ROOT, "testdata", "tf", "models"))
    ap.add_argument("--bin-dir", default=os.environ.get("GE_BIN_DIR", os.path.join(ROOT, "target", "debug")))
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--forms", default="frozen,frozen_fn,saved")
    ap.add_argument("--keep", help="directory for the .om files (default: a temporary one)")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--markdown", action="store_true", help="print a table for docs/conformance.md")
    ap.add_argument("--expect-fail", action="append", default=[], metavar="NAME[:FORM]")
    a = ap.parse_args()
    names = sorted(n for n in os.listdir(a.dir) if os.path.exists(os.path.join(a.dir, n, "meta.json")))
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    if not names:
        sys.exit(f"no models in {a.dir}")
    forms = a.forms.split(",")
    work = a.keep or tempfile.mkdtemp(prefix="ge-tf-")
    os.makedirs(work, exist_ok=True)
    if not a.keep:
        # The .om files of a full-size run take gigabytes: never leave them behind.
        atexit.register(shutil.rmtree, work, True)
    rows, bad = [], 0
    for n in names:
        d = os.path.join(a.dir, n)
        meta = json.load(open(os.path.join(d, "meta.json")))
        res = {}
        for form in forms:
            if form == "frozen_fn" and not meta.get("functional"):
                continue
            if form == "saved" and not os.path.isdir(os.path.join(d, "saved_model")):
                continue
            st, detail = check(a.bin_dir, d, meta, form, work, a.timeout)
            expected_fail = n in a.expect_fail or f"{n}:{form}" in a.expect_fail
            if st != "pass" and not expected_fail:
                bad += 1
            if st == "pass" and expected_fail:
                detail = (detail + "; " if detail else "") + "passes but was expected to fail"
                bad += 1
            res[form] = (st, detail)
            print(f"{n:24} {form:10} {st:13} {detail}", flush=True)
        rows.append((meta, res))
    if a.markdown:
        print()
        print("| model | set | frozen GraphDef | functional GraphDef | SavedModel | note |")
        print("|---|---|---|---|---|---|")
        for meta, res in rows:
            def cell(f):
                if f not in res:
                    return "—"
                st, detail = res[f]
                # The innermost node of a nested call chain says what failed.
                if "node '" in detail:
                    detail = detail[detail.rfind("node '"):]
                detail = detail.removeprefix("error: ")
                return st if not detail else f"{st}: {detail}"
            print(f"| {meta['name']} | {meta['kind']} | {cell('frozen')} | {cell('frozen_fn')} | "
                  f"{cell('saved')} | {meta['note']} |")
    for kind in ("tuned", "heldout"):
        forms_ = [st for m, r in rows if m["kind"] == kind for st, _ in r.values()]
        models = [r for m, r in rows if m["kind"] == kind]
        if forms_:
            whole = sum(1 for r in models if all(st == "pass" for st, _ in r.values()))
            print(f"{kind}: {forms_.count('pass')} of {len(forms_)} forms pass; "
                  f"{whole} of {len(models)} models pass in every form")
    total = sum(len(r) for _, r in rows)
    passed = sum(1 for _, r in rows for st, _ in r.values() if st == "pass")
    print(f"{passed} passed, {total - passed} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
