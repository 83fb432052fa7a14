#!/usr/bin/env python3
"""Run every conformance case (tools/conformance/generate.py's folder) on
onnxruntime's CPU provider and write each case's status, so that
docs/conformance.md can show onnxruntime's result beside ge's on the same
cases. Compared as ge-conformance compares: element type and shape exactly,
integers and bools exactly, floats within the case's rtol/atol (NaN matches
NaN only).

Statuses: pass; unsupported (session creation or the run refused the model:
no kernel for an op or a type, an opset it does not implement); fail (wrong
values or any other error). The output is the checked-in
tools/conformance/onnxruntime.tsv, rewritten by tools/conformance/run.sh in
its report mode (onnxruntime is installed into ./.venv only then).
"""

import argparse
import glob
import json
import os
import sys
import warnings

HEADER = """\
# onnxruntime's result on the conformance cases (the CPU provider), written by
# tools/conformance/onnxruntime_status.py; docs/conformance.md shows it beside ge's.
# onnxruntime {version}, onnx {onnx_version}
# case\tstatus\treason
"""


def one_line(s: str) -> str:
    s = " ".join(x.strip() for x in str(s).splitlines() if x.strip())
    s = s.replace("\t", " ")
    return s[:200] + ("…" if len(s) > 200 else "")


def read_value(path, decl):
    import onnx
    from onnx import numpy_helper

    data = open(path, "rb").read()
    tp = decl.type if decl is not None else None
    if tp is not None and tp.HasField("sequence_type"):
        p = onnx.SequenceProto()
        p.ParseFromString(data)
        return p.name, numpy_helper.to_list(p)
    if tp is not None and tp.HasField("optional_type"):
        p = onnx.OptionalProto()
        p.ParseFromString(data)
        return p.name, numpy_helper.to_optional(p)
    p = onnx.TensorProto()
    p.ParseFromString(data)
    return p.name, numpy_helper.to_array(p)


def mismatch(got, want, rtol, atol):
    import numpy as np

    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return "sequence length differs"
        for g, w in zip(got, want):
            m = mismatch(g, w, rtol, atol)
            if m:
                return m
        return None
    if want is None:
        return None if got is None else "expected no value"
    if got is None:
        return "no value"
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype:
        return f"element type {got.dtype} but expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {list(got.shape)} but expected {list(want.shape)}"
    if want.dtype.kind in "OSU":
        return None if (got == want).all() else "strings differ"
    if want.dtype.kind in "iub":
        return None if np.array_equal(got, want) else "integers differ"
    g, w = got.astype(np.float64), want.astype(np.float64)
    ok = (np.isnan(g) & np.isnan(w)) | (g == w) | (np.abs(g - w) <= atol + rtol * np.abs(w))
    if ok.all():
        return None
    k = int(np.argmin(ok.reshape(-1)))
    return f"element {k} is {g.reshape(-1)[k]} but expected {w.reshape(-1)[k]}"


UNSUPPORTED_MARKS = (
    "NOT_IMPLEMENTED",
    "Could not find an implementation",
    "is not a registered function/op",
    "No opset import for domain",
    "not supported",
    "Unsupported",
    "opset",
)


def raw_type(elem_type):
    """ONNX element types onnxruntime's Python binding has no numpy type for."""
    import onnx

    return elem_type == onnx.TensorProto.BFLOAT16 or elem_type >= onnx.TensorProto.FLOAT8E4M3FN


def to_ortvalue(ort, v, elem_type):
    """A tensor input as an OrtValue; the types numpy cannot hand to
    onnxruntime (float8, float4, int4, int2: ml_dtypes arrays) are copied in
    as their packed ONNX bytes."""
    import ctypes

    import numpy as np
    import onnx
    from onnx import numpy_helper

    if not raw_type(elem_type):
        return ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(v))
    raw = numpy_helper.from_array(v).raw_data
    ov = ort.OrtValue.ortvalue_from_shape_and_type(list(v.shape), elem_type)
    if ov.tensor_size_in_bytes() != len(raw):
        raise ValueError(f"cannot pass a {v.dtype} tensor to onnxruntime")
    ctypes.memmove(ov.data_ptr(), raw, len(raw))
    return ov


def from_ortvalue(ov, elem_type):
    """An output OrtValue as numpy; types without a numpy type in onnxruntime
    are read as their packed ONNX bytes and decoded by onnx."""
    import ctypes

    import onnx
    from onnx import numpy_helper

    if not raw_type(elem_type):
        return ov.numpy()
    t = onnx.TensorProto()
    t.data_type = elem_type
    t.dims.extend(ov.shape())
    t.raw_data = ctypes.string_at(ov.data_ptr(), ov.tensor_size_in_bytes())
    return numpy_helper.to_array(t)


def run_case(d, ort):
    import onnx

    meta = json.load(open(os.path.join(d, "meta.json")))
    rtol, atol = meta.get("rtol", 1e-3), meta.get("atol", 1e-7)
    model = onnx.load(os.path.join(d, "model.onnx"))
    ins = {i.name: i for i in model.graph.input}
    outs = list(model.graph.output)
    try:
        so = ort.SessionOptions()
        so.log_severity_level = 4
        sess = ort.InferenceSession(os.path.join(d, "model.onnx"), so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        msg = one_line(e)
        st = "unsupported" if any(m in msg for m in UNSUPPORTED_MARKS) else "fail"
        return st, f"session: {msg}"
    feeds = [i.name for i in sess.get_inputs()]
    for ds in sorted(glob.glob(os.path.join(d, "test_data_set_*"))):
        inputs = {}
        for p in sorted(glob.glob(os.path.join(ds, "input_*.pb"))):
            i = int(os.path.basename(p)[len("input_") : -len(".pb")])
            name, v = read_value(p, ins.get(feeds[i]) if i < len(feeds) else None)
            inputs[name or (feeds[i] if i < len(feeds) else str(i))] = v
        want = []
        for p in sorted(glob.glob(os.path.join(ds, "output_*.pb")), key=lambda p: int(p.rsplit("_", 1)[1][:-3])):
            i = int(os.path.basename(p)[len("output_") : -len(".pb")])
            want.append(read_value(p, outs[i] if i < len(outs) else None)[1])
        try:
            tensors_only = all(
                not isinstance(v, list) and v is not None and v.dtype.kind not in "OSU"
                for v in inputs.values()
            ) and all(o.type.HasField("tensor_type") for o in outs)
            if tensors_only:
                elem = {n: ins[n].type.tensor_type.elem_type for n in inputs if n in ins}
                ovs = {n: to_ortvalue(ort, v, elem.get(n, 0)) for n, v in inputs.items()}
                res = sess.run_with_ort_values(None, ovs)
                got = [from_ortvalue(r, o.type.tensor_type.elem_type) for r, o in zip(res, outs)]
            else:
                got = sess.run(None, inputs)
        except Exception as e:  # noqa: BLE001
            msg = one_line(e)
            st = "unsupported" if any(m in msg for m in UNSUPPORTED_MARKS) else "fail"
            return st, f"run: {msg}"
        if len(got) != len(want):
            return "fail", f"{len(got)} outputs but ONNX gives {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            m = mismatch(g, w, rtol, atol)
            if m:
                return "fail", f"output #{i}: {one_line(m)}"
    return "pass", ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("cases", help="the folder tools/conformance/generate.py wrote")
    ap.add_argument("out", help="the status file to write")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    import onnx
    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    dirs = []
    for e in sorted(os.listdir(args.cases)):
        p = os.path.join(args.cases, e)
        if os.path.exists(os.path.join(p, "model.onnx")):
            dirs.append((e, p))
        elif os.path.isdir(p):
            for c in sorted(os.listdir(p)):
                q = os.path.join(p, c)
                if os.path.exists(os.path.join(q, "model.onnx")):
                    dirs.append((f"{e}/{c}", q))
    rows = []
    counts = {}
    for name, d in dirs:
        try:
            st, why = run_case(d, ort)
        except Exception as e:  # noqa: BLE001
            st, why = "fail", f"runner: {one_line(e)}"
        counts[st] = counts.get(st, 0) + 1
        rows.append(f"{name}\t{st}\t{why}\n")
    text = HEADER.format(version=ort.__version__, onnx_version=onnx.__version__) + "".join(rows)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, args.out)
    print(f"onnxruntime {ort.__version__}: {counts} of {len(rows)} cases -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
