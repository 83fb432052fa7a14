#!/usr/bin/env python3
"""Hostile and wrong TensorFlow files, one per diagnostic of the TF front end
(frontends/src/tf/{mod,graph,import,saved_model,bundle}.rs), in testdata/tf/diag/,
for lit-tests/frontends/tf-diagnostics.test.

    .venv/bin/pip install -r tools/frontends/requirements.txt
    .venv/bin/python tools/tf/gen_diag_cases.py

GraphDefs are built with ge's own .proto subset (frontends/proto/tensorflow,
compiled with grpcio-tools: no TensorFlow install); SavedModel cases are the
committed testdata/tf/models/h_cond_fn/saved_model with one thing changed.
Everything is deterministic (maps serialized sorted).
"""

import os
import shutil
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "testdata", "tf", "diag")
SAVED = os.path.join(ROOT, "testdata", "tf", "models", "h_cond_fn", "saved_model")


def protos():
    from grpc_tools import protoc

    out = tempfile.mkdtemp()
    proto_root = os.path.join(ROOT, "frontends", "proto")
    files = [os.path.join("tensorflow", f) for f in sorted(os.listdir(os.path.join(proto_root, "tensorflow")))]
    if protoc.main(["protoc", f"-I{proto_root}", f"--python_out={out}"] + files) != 0:
        raise SystemExit("protoc failed")
    sys.path.insert(0, out)
    from tensorflow import graph_pb2, saved_model_pb2, types_pb2  # noqa: E402

    return graph_pb2, saved_model_pb2, types_pb2


graph_pb2, saved_model_pb2, types_pb2 = protos()
F, I = ("type", types_pb2.DT_FLOAT), ("type", types_pb2.DT_INT32)


def set_attrs(n, attrs):
    for k, v in attrs.items():
        a = n.attr[k]
        if isinstance(v, bool):
            a.b = v
        elif isinstance(v, int):
            a.i = v
        elif isinstance(v, bytes):
            a.s = v
        elif isinstance(v, list):
            a.list.i.extend(v)
        elif v[0] == "type":
            a.type = v[1]
        elif v[0] == "shape":
            a.shape.SetInParent()
            for d in v[1]:
                a.shape.dim.add().size = d
        elif v[0] == "func":
            a.func.name = v[1]


def node(g, name, op, inputs=(), **attrs):
    n = g.node.add()
    n.name, n.op = name, op
    n.input.extend(inputs)
    set_attrs(n, attrs)
    return n


def fnode(fd, name, op, inputs=(), **attrs):
    n = fd.node_def.add()
    n.name, n.op = name, op
    n.input.extend(inputs)
    set_attrs(n, attrs)
    return n


def const(g, name, arr, dims=None):
    n = node(g, name, "Const", dtype=F if arr.dtype == np.float32 else I)
    t = n.attr["value"].tensor
    t.dtype = types_pb2.DT_FLOAT if arr.dtype == np.float32 else types_pb2.DT_INT32
    for d in arr.shape if dims is None else dims:
        t.tensor_shape.dim.add().size = d
    t.tensor_content = arr.tobytes()
    return t


def placeholder(g, name="x", shape=(2, 3), dtype=F):
    return node(g, name, "Placeholder", dtype=dtype, shape=("shape", list(shape)))


def function(g, name, inputs=("a",), outputs=("y",)):
    f = g.library.function.add()
    f.signature.name = name
    for a in inputs:
        arg = f.signature.input_arg.add()
        arg.name, arg.type = a, types_pb2.DT_FLOAT
    for a in outputs:
        arg = f.signature.output_arg.add()
        arg.name, arg.type = a, types_pb2.DT_FLOAT
    return f


graphs = {}


def case(name):
    g = graph_pb2.GraphDef()
    graphs[name] = g
    return g


# ---- mod.rs: constants, placeholders, outputs ------------------------------------
g = case("const_unknown_dim")
placeholder(g)
const(g, "c", np.zeros(3, np.float32), dims=(-1,))
node(g, "y", "Add", ["x", "c"], T=F)
g = case("const_too_large")
placeholder(g)
t = const(g, "c", np.zeros(0, np.float32), dims=(2**40, 2**40, 2**40))
node(g, "y", "Add", ["x", "c"], T=F)
g = case("const_wrong_bytes")
placeholder(g)
const(g, "c", np.zeros(5, np.float32), dims=(3,))
node(g, "y", "Add", ["x", "c"], T=F)
g = case("const_wrong_count")
placeholder(g)
n = node(g, "c", "Const", dtype=F)
t = n.attr["value"].tensor
t.dtype = types_pb2.DT_FLOAT
t.tensor_shape.dim.add().size = 3
t.float_val.extend([1.0, 2.0])
node(g, "y", "Add", ["x", "c"], T=F)
g = case("conv_data_format")
placeholder(g, shape=(1, 4, 4, 3))
const(g, "w", np.ones((3, 3, 3, 2), np.float32))
node(g, "y", "Conv2D", ["x", "w"], T=F, strides=[1, 1, 1, 1], padding=b"SAME", data_format=b"NCDHW")
g = case("relu_no_input")
placeholder(g)
node(g, "y", "Relu", [], T=F)
g = case("only_placeholder")
placeholder(g)
g = case("placeholder_no_dtype")
node(g, "x", "Placeholder", shape=("shape", [2]))
node(g, "y", "Relu", ["x"], T=F)

# ---- graph.rs: node names and inputs ------------------------------------------------
g = case("duplicate_node")
placeholder(g)
node(g, "x", "Relu", [], T=F)
g = case("missing_input")
placeholder(g)
node(g, "y", "Relu", ["nope"], T=F)

# Function bodies (called by a PartitionedCall `call` of x).
def call_case(name, fname="f", inputs=("x",)):
    g = case(name)
    placeholder(g)
    node(g, "call", "PartitionedCall", list(inputs), Tin=F, Tout=F, f=("func", fname))
    return g


g = call_case("fn_unnamed_node")
f = function(g, "f")
fnode(f, "", "Relu", ["a"], T=F)
f.ret["y"] = "a"
g = call_case("fn_duplicate_node")
f = function(g, "f")
fnode(f, "r", "Relu", ["a"], T=F)
fnode(f, "r", "Relu", ["a"], T=F)
f.ret["y"] = "r:y:0"
g = call_case("fn_missing_ctrl")
f = function(g, "f")
fnode(f, "r", "Relu", ["a", "^nope"], T=F)
f.ret["y"] = "r:y:0"
g = call_case("fn_missing_input")
f = function(g, "f")
fnode(f, "r", "Relu", ["nope"], T=F)
f.ret["y"] = "r:y:0"
g = call_case("fn_bad_reference")
f = function(g, "f")
fnode(f, "r", "Relu", ["a"], T=F)
f.ret["y"] = "r:y:zero"
g = call_case("fn_no_ret")
f = function(g, "f")
fnode(f, "r", "Relu", ["a"], T=F)

# ---- import.rs: calls --------------------------------------------------------------
g = call_case("fn_recursive")
f = function(g, "f")
fnode(f, "again", "PartitionedCall", ["a"], Tin=F, Tout=F, f=("func", "f"))
f.ret["y"] = "again:output:0"
g = call_case("fn_arity", inputs=("x", "x"))
f = function(g, "f")
fnode(f, "r", "Relu", ["a"], T=F)
f.ret["y"] = "r:y:0"
g = case("call_no_f")
placeholder(g)
node(g, "call", "PartitionedCall", ["x"], Tin=F, Tout=F)
g = case("while_no_body")
placeholder(g)
node(g, "w", "StatelessWhile", ["x"], T=F, cond=("func", "c"))
f = function(g, "c", outputs=("b",))
fnode(f, "t", "Const", dtype=("type", types_pb2.DT_BOOL))
f.node_def[0].attr["value"].tensor.dtype = types_pb2.DT_BOOL
f.node_def[0].attr["value"].tensor.bool_val.append(False)
f.ret["b"] = "t:output:0"
g = case("node_no_output")
placeholder(g)
node(g, "r", "Relu", ["x"], T=F)
node(g, "y", "Relu", ["r:3"], T=F)


def saved_model(name, mutate, variables=True):
    """The h_cond_fn SavedModel with `mutate(sm)` applied, in diag/NAME/."""
    sm = saved_model_pb2.SavedModel()
    sm.ParseFromString(open(os.path.join(SAVED, "saved_model.pb"), "rb").read())
    mutate(sm)
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "saved_model.pb"), "wb") as fh:
        fh.write(sm.SerializeToString(deterministic=True))
    if variables:
        shutil.copytree(os.path.join(SAVED, "variables"), os.path.join(d, "variables"))
    return d


def sig(sm):
    return sm.meta_graphs[0].signature_def["serving_default"]


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for name, g in graphs.items():
        with open(os.path.join(OUT, name + ".pb"), "wb") as fh:
            fh.write(g.SerializeToString(deterministic=True))
    open(os.path.join(OUT, "empty.pb"), "wb").close()

    def first_input(sm):
        return sorted(sig(sm).inputs)[0]

    def input_not_plain(sm):
        sig(sm).inputs[first_input(sm)].ClearField("name")

    def input_not_in_graph(sm):
        sig(sm).inputs[first_input(sm)].name = "nope:0"

    def input_not_placeholder(sm):
        out = sorted(sig(sm).outputs)[0]
        sig(sm).inputs[first_input(sm)].name = sig(sm).outputs[out].name

    def no_graph(sm):
        sm.meta_graphs[0].ClearField("graph_def")

    def no_meta(sm):
        sm.ClearField("meta_graphs")

    def no_object_graph(sm):
        sm.meta_graphs[0].ClearField("object_graph_def")

    def unnamed_node(sm):
        sm.meta_graphs[0].graph_def.node[0].name = ""

    saved_model("sm_input_not_plain", input_not_plain)
    saved_model("sm_input_not_in_graph", input_not_in_graph)
    saved_model("sm_input_not_placeholder", input_not_placeholder)
    saved_model("sm_no_graph", no_graph)
    saved_model("sm_no_meta_graph", no_meta)
    saved_model("sm_no_object_graph", no_object_graph)
    saved_model("sm_unnamed_node", unnamed_node)
    d = saved_model("sm_not_a_saved_model", lambda sm: None, variables=False)
    with open(os.path.join(d, "saved_model.pb"), "wb") as fh:
        fh.write(b"\xff\xff\xff not a protobuf")
    os.makedirs(os.path.join(OUT, "sm_no_pb"), exist_ok=True)
    open(os.path.join(OUT, "sm_no_pb", "README"), "w").write("a directory without saved_model.pb\n")

    # The variables bundle's index (a LevelDB table): cut, wrong magic, a
    # flipped byte in the first block (its checksum), no index at all.
    def index_case(name, change):
        d = saved_model(name, lambda sm: None)
        p = os.path.join(d, "variables", "variables.index")
        b = bytearray(open(p, "rb").read())
        b = change(b)
        if b is None:
            os.remove(p)
        else:
            open(p, "wb").write(bytes(b))

    index_case("idx_short", lambda b: b[:20])
    index_case("idx_magic", lambda b: b[:-1] + bytes([b[-1] ^ 0xFF]))
    index_case("idx_checksum", lambda b: b[:2] + bytes([b[2] ^ 0x01]) + b[3:])
    index_case("idx_missing", lambda b: None)
    print(f"wrote {len(graphs) + 1} graphs and the SavedModel cases to testdata/tf/diag")


if __name__ == "__main__":
    main()
