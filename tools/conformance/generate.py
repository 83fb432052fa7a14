#!/usr/bin/env python3
"""Write the ONNX backend node tests of the pinned `onnx` wheel as files.

Each case becomes CASES/<name>/model.onnx plus test_data_set_<k>/input_<i>.pb
and output_<i>.pb (serialized TensorProto, the layout of onnx's own test
data), and meta.json with the case's tolerances. Run by tools/conformance/run.sh.
"""

import argparse
import json
import os
import shutil
import sys
import warnings


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out", help="output folder (replaced)")
    ap.add_argument("--filter", default="", help="only cases whose name contains this")
    args = ap.parse_args()

    warnings.filterwarnings("ignore")
    import numpy as np  # noqa: F401  (onnx needs it)
    import onnx
    from onnx import TensorProto, numpy_helper
    from onnx.backend.test.case.node import collect_testcases

    cases = [c for c in collect_testcases(None) if c.kind == "node"]
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    written = 0
    for case in cases:
        if args.filter and args.filter not in case.name:
            continue
        d = os.path.join(args.out, case.name)
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
    print(f"wrote {written} ONNX node test cases (onnx {onnx.__version__}) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
