#!/usr/bin/env python3
"""Write the ONNX backend test cases of the pinned `onnx` wheel as files.

Suites:
- node: the node tests (generated from onnx's test case collection), written
  to CASES/<name>;
- pytorch-converted, pytorch-operator, simple: the model tests that ship as
  files in the wheel's backend test data, copied to CASES/<suite>/<name>.

Each case becomes model.onnx plus test_data_set_<k>/input_<i>.pb and
output_<i>.pb (serialized TensorProto, the layout of onnx's own test data)
and meta.json with the case's tolerances. Inputs saved without a name (the
pytorch suites) are named after the graph input they feed (graph inputs that
are not initializers, in order), so every case is fed by name. Run by
tools/conformance/run.sh.
"""

import argparse
import glob
import json
import os
import shutil
import sys
import warnings

# The model suites shipped as files next to the node tests, and their tolerances
# (onnx's runner uses rtol 1e-3, atol 1e-7 for them).
FILE_SUITES = ("pytorch-converted", "pytorch-operator", "simple")


def write_node_cases(out: str, flt: str) -> int:
    import onnx
    from onnx import TensorProto, numpy_helper
    from onnx.backend.test.case.node import collect_testcases

    cases = [c for c in collect_testcases(None) if c.kind == "node"]
    written = 0
    for case in cases:
        if flt and flt not in case.name:
            continue
        d = os.path.join(out, case.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        for k, (inputs, outputs) in enumerate(case.data_sets or []):
            ds = os.path.join(d, f"test_data_set_{k}")
            os.makedirs(ds)
            for kind, values, decls in (("input", inputs, graph.input), ("output", outputs, graph.output)):
                for i, v in enumerate(values):
                    decl = decls[i]
                    if decl.type.HasField("sequence_type"):
                        proto = numpy_helper.from_list(v, decl.name)
                    elif decl.type.HasField("optional_type"):
                        proto = numpy_helper.from_optional(v, decl.name)
                    elif isinstance(v, TensorProto):
                        proto = v
                    else:
                        proto = numpy_helper.from_array(v, decl.name)
                    with open(os.path.join(ds, f"{kind}_{i}.pb"), "wb") as f:
                        f.write(proto.SerializeToString())
        meta = {"rtol": case.rtol, "atol": case.atol, "onnx": onnx.__version__}
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f)
        written += 1
    return written


def write_file_suite(suite: str, out: str, flt: str) -> int:
    import onnx

    src_root = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", suite)
    written = 0
    for src in sorted(glob.glob(os.path.join(src_root, "*"))):
        name = os.path.basename(src)
        if flt and flt not in f"{suite}/{name}":
            continue
        model_path = os.path.join(src, "model.onnx")
        if not os.path.exists(model_path):
            continue
        d = os.path.join(out, suite, name)
        os.makedirs(d)
        shutil.copy(model_path, os.path.join(d, "model.onnx"))
        graph = onnx.load(model_path, load_external_data=False).graph
        inits = {t.name for t in graph.initializer}
        feeds = [i.name for i in graph.input if i.name not in inits]
        for ds_src in sorted(glob.glob(os.path.join(src, "test_data_set_*"))):
            ds = os.path.join(d, os.path.basename(ds_src))
            os.makedirs(ds)
            for pb in sorted(os.listdir(ds_src)):
                with open(os.path.join(ds_src, pb), "rb") as f:
                    data = f.read()
                if pb.startswith("input_") and pb.endswith(".pb"):
                    i = int(pb[len("input_") : -len(".pb")])
                    t = onnx.TensorProto()
                    try:
                        t.ParseFromString(data)
                    except Exception:  # a sequence or another proto: copy as is
                        t = None
                    if t is not None and not t.name and i < len(feeds):
                        t.name = feeds[i]
                        data = t.SerializeToString()
                with open(os.path.join(ds, pb), "wb") as f:
                    f.write(data)
        meta = {"rtol": 1e-3, "atol": 1e-7, "onnx": onnx.__version__, "suite": suite}
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f)
        written += 1
    return written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out", help="output folder (replaced)")
    ap.add_argument("--filter", default="", help="only cases whose name contains this")
    args = ap.parse_args()

    warnings.filterwarnings("ignore")
    import numpy as np  # noqa: F401  (onnx needs it)
    import onnx

    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    counts = {"node": write_node_cases(args.out, args.filter)}
    for suite in FILE_SUITES:
        counts[suite] = write_file_suite(suite, args.out, args.filter)
    total = ", ".join(f"{n} {s}" for s, n in counts.items())
    print(f"wrote ONNX backend test cases (onnx {onnx.__version__}) to {args.out}: {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
