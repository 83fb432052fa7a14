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
g = call_case("fn_missing")
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

# Functional control flow: StatelessWhile(x) with cond `c` and body `b`, and
# StatelessIf(p, x) on a bool placeholder p with branches `t` and `e`.
def bool_const(fd, name, value):
    n = fnode(fd, name, "Const", dtype=("type", types_pb2.DT_BOOL))
    n.attr["value"].tensor.dtype = types_pb2.DT_BOOL
    n.attr["value"].tensor.bool_val.append(value)


def while_case(name, cond_inputs=("a",), cond_outputs=("ok",), body_outputs=("y",)):
    g = case(name)
    placeholder(g)
    node(g, "w", "StatelessWhile", ["x"], T=[types_pb2.DT_FLOAT], cond=("func", "c"), body=("func", "b"))
    c = function(g, "c", inputs=cond_inputs, outputs=cond_outputs)
    bool_const(c, "t", True)
    for o in cond_outputs:
        c.ret[o] = "t:output:0"
    b = function(g, "b", outputs=body_outputs)
    return g, b


g, b = while_case("while_cond_arity", cond_inputs=("a", "a2"))
fnode(b, "r", "Relu", ["a"], T=F)
b.ret["y"] = "r:y:0"
g, b = while_case("while_cond_nothing", cond_outputs=())
fnode(b, "r", "Relu", ["a"], T=F)
b.ret["y"] = "r:y:0"
g, b = while_case("while_body_count", body_outputs=("y", "z"))
fnode(b, "r", "Relu", ["a"], T=F)
b.ret["y"] = "r:y:0"
b.ret["z"] = "r:y:0"
g, b = while_case("while_type_change")
fnode(b, "r", "Cast", ["a"], SrcT=F, DstT=I)
b.ret["y"] = "r:y:0"


def if_case(name, else_outputs=("y",), else_op=("Relu", {"T": F})):
    g = case(name)
    placeholder(g)
    placeholder(g, "p", shape=(), dtype=("type", types_pb2.DT_BOOL))
    node(g, "if", "StatelessIf", ["p", "x"], Tcond=("type", types_pb2.DT_BOOL),
         then_branch=("func", "t"), else_branch=("func", "e"))
    t = function(g, "t")
    fnode(t, "r", "Relu", ["a"], T=F)
    t.ret["y"] = "r:y:0"
    e = function(g, "e", outputs=else_outputs)
    fnode(e, "r", else_op[0], ["a"], **else_op[1])
    for o in else_outputs:
        e.ret[o] = "r:y:0"
    return g


if_case("if_branch_count", else_outputs=("y", "z"))
if_case("if_branch_types", else_op=("Cast", {"SrcT": F, "DstT": I}))

# v1 Switch on a constant predicate: the untaken output is dead.
g = case("switch_dead_output")
placeholder(g)
n = node(g, "p", "Const", dtype=("type", types_pb2.DT_BOOL))
n.attr["value"].tensor.dtype = types_pb2.DT_BOOL
n.attr["value"].tensor.bool_val.append(True)
node(g, "sw", "Switch", ["x", "p"], T=F)
node(g, "y", "Relu", ["sw:0"], T=F)

# v1 control flow nodes outside the structures they belong to.
g = case("exit_outside_loop")
placeholder(g)
node(g, "y", "Exit", ["x"], T=F)
g = case("next_iteration_alone")
placeholder(g)
node(g, "y", "NextIteration", ["x"], T=F)
g = case("merge_without_switch")
placeholder(g)
node(g, "y", "Merge", ["x", "x"], T=F, N=2)
g = case("cycle")
placeholder(g)
node(g, "a", "Add", ["x", "b"], T=F)
node(g, "b", "Relu", ["a"], T=F)

# v1 while loops (TensorFlow 1's Enter/Merge/Switch/LoopCond/NextIteration/Exit)
# and conditionals that a converter could write but ge does not accept: each
# breaks one thing in an otherwise recognised structure.
B = ("type", types_pb2.DT_BOOL)


def bool_placeholder(g, name="p"):
    return placeholder(g, name, shape=(), dtype=B)


def v1_loop(g, frame, inits, body, cond=None, exits=True, true_src=None):
    """A v1 while loop named `frame` over the loop variables `inits` (input
    references). `body(ids)` gets the body's reference per variable (an
    Identity of the Switch's true output) and returns the NextIteration inputs;
    `cond(merges)` returns the reference LoopCond reads (default: the constant
    True, entered as a loop invariant; `true_src` names it when the loop is
    nested, so that it comes from the enclosing frame). Returns the Exit names."""
    for k, x in enumerate(inits):
        node(g, f"{frame}/enter{k}", "Enter", [x], T=F, frame_name=frame.encode())
        node(g, f"{frame}/merge{k}", "Merge", [f"{frame}/enter{k}", f"{frame}/next{k}"], T=F, N=2)
    merges = [f"{frame}/merge{k}" for k in range(len(inits))]
    if cond is None:
        if true_src is None:
            n = node(g, f"{frame}/true", "Const", dtype=B)
            n.attr["value"].tensor.dtype = types_pb2.DT_BOOL
            n.attr["value"].tensor.bool_val.append(True)
            true_src = f"{frame}/true"
        node(g, f"{frame}/true_in", "Enter", [true_src], T=B, frame_name=frame.encode(),
             is_constant=True)
        c = f"{frame}/true_in"
    else:
        c = cond(merges)
    node(g, f"{frame}/cond", "LoopCond", [c])
    ids = []
    for k in range(len(inits)):
        node(g, f"{frame}/switch{k}", "Switch", [f"{frame}/merge{k}", f"{frame}/cond"], T=F)
        node(g, f"{frame}/id{k}", "Identity", [f"{frame}/switch{k}:1"], T=F)
        ids.append(f"{frame}/id{k}")
    for k, nx in enumerate(body(ids)):
        node(g, f"{frame}/next{k}", "NextIteration", [nx], T=F)
    if exits:
        for k in range(len(inits)):
            node(g, f"{frame}/exit{k}", "Exit", [f"{frame}/switch{k}"], T=F)
    return [f"{frame}/exit{k}" for k in range(len(inits))]


def relu(g, name, x):
    node(g, name, "Relu", [x], T=F)
    return name


# The body computes with the loop's exit value (the Switch's false output,
# dead while the loop runs).
g = case("v1_body_reads_exit")
placeholder(g)
v1_loop(g, "lp", ["x"], lambda ids: [relu(g, "lp/r", "lp/switch0:0")])
# The body hands the exit value itself to NextIteration.
g = case("v1_next_is_exit")
placeholder(g)
v1_loop(g, "lp", ["x"], lambda ids: ["lp/switch0:0"])
# A loop nested in the body of another whose variable and condition come from
# the outer loop's exit value (dead inside the outer body).
g = case("v1_inner_init_dead")
placeholder(g)
v1_loop(g, "outer", ["x"], lambda ids: v1_loop(g, "outer/inner", ["outer/switch0:0"], lambda i: i,
                                                true_src="outer/true_in"))
g = case("v1_inner_cond_dead")
placeholder(g)


def inner_cond_dead(ids):
    node(g, "outer/inner/dead", "Enter", ["outer/switch0:0"], T=F, frame_name=b"outer/inner",
         is_constant=True)
    return v1_loop(g, "outer/inner", [ids[0]], lambda i: i,
                   cond=lambda m: "outer/inner/dead")


v1_loop(g, "outer", ["x"], inner_cond_dead)
# An Enter without input; an Enter reading an output its producer lacks.
g = case("v1_enter_no_input")
placeholder(g)
v1_loop(g, "lp", ["x"], lambda ids: ids)
del g.node[1].input[:]
g = case("v1_enter_bad_port")
placeholder(g)
const(g, "c", np.ones((2, 3), np.float32))
v1_loop(g, "lp", ["c:5"], lambda ids: ids)
# A loop variable of rank 5 whose every iteration makes one more dim unknown
# (Concat on axis 0, then a rotation): the carried type settles only after a
# fifth round, and ge builds a loop at most four times.
g = case("v1_types_unsettled")
placeholder(g, shape=(1, 1, 1, 1, 1))
const(g, "axis", np.array(0, np.int32))
const(g, "perm", np.array([1, 2, 3, 4, 0], np.int32))


def grow_and_rotate(ids):
    node(g, "lp/cat", "ConcatV2", [ids[0], ids[0], "lp/axis"], T=F, N=2, Tidx=I)
    node(g, "lp/axis", "Enter", ["axis"], T=I, frame_name=b"lp", is_constant=True)
    node(g, "lp/perm", "Enter", ["perm"], T=I, frame_name=b"lp", is_constant=True)
    node(g, "lp/rot", "Transpose", ["lp/cat", "lp/perm"], T=F, Tperm=I)
    return ["lp/rot"]


v1_loop(g, "lp", ["x"], grow_and_rotate)
# A conditional inside a loop body whose true branch yields the loop's exit
# value (through an IdentityN that also reads the branch's Switch, so the
# branch is still recognised).
g = case("v1_branch_dead")
placeholder(g)
bool_placeholder(g)


def cond_in_body(ids):
    node(g, "lp/p", "Enter", ["p"], T=B, frame_name=b"lp", is_constant=True)
    node(g, "lp/sw", "Switch", [ids[0], "lp/p"], T=F)
    node(g, "lp/idn", "IdentityN", ["lp/sw:1", "lp/switch0:0"], T=[types_pb2.DT_FLOAT] * 2)
    node(g, "lp/m", "Merge", ["lp/idn:1", "lp/sw:0"], T=F, N=2)
    return ["lp/m"]


v1_loop(g, "lp", ["x"], cond_in_body)
# A conditional inside a loop body on the loop's exit value (dead there).
g = case("v1_branch_pred_dead")
placeholder(g)


def cond_on_exit(ids):
    node(g, "lp/sw", "Switch", [ids[0], "lp/switch0:0"], T=F)
    node(g, "lp/t", "Relu", ["lp/sw:1"], T=F)
    node(g, "lp/m", "Merge", ["lp/t", "lp/sw:0"], T=F, N=2)
    return ["lp/m"]


v1_loop(g, "lp", ["x"], cond_on_exit)
# A conditional whose predicate or data input names an output its producer
# lacks.
for name, pred, data in [("v1_cond_pred_bad_port", "p:3", "x"), ("v1_cond_data_bad_port", "p", "c:4")]:
    g = case(name)
    placeholder(g)
    bool_placeholder(g)
    const(g, "c", np.ones((2, 3), np.float32))
    n = node(g, "p", "Const", dtype=B) if name == "v1_cond_pred_bad_port" else None
    if n is not None:
        del g.node[1]
        n.attr["value"].tensor.dtype = types_pb2.DT_BOOL
        n.attr["value"].tensor.bool_val.append(True)
    node(g, "sw", "Switch", [data, pred], T=F)
    node(g, "t", "Relu", ["sw:1"], T=F)
    node(g, "y", "Merge", ["t", "sw:0"], T=F, N=2)

# A variable in a frozen GraphDef (no checkpoint to read it from).
g = case("variable_no_value")
node(g, "v", "VarHandleOp", dtype=F, shape=("shape", [2]), shared_name=b"weights")
node(g, "y", "ReadVariableOp", ["v"], dtype=F)

# Op attributes out of their domain.
g = case("split_axis_range")
placeholder(g)
const(g, "a", np.array(9, np.int32))
node(g, "op", "Split", ["a", "x"], T=F, num_split=1)
g = case("deconv_padding")
placeholder(g, shape=(1, 4, 4, 2))
const(g, "s", np.array([1, 4, 4, 3], np.int32))
const(g, "w", np.ones((3, 3, 3, 2), np.float32))
node(g, "op", "Conv2DBackpropInput", ["s", "w", "x"], T=F, strides=[1, 1, 1, 1], padding=b"FULL")


# ---- The checkpoint index: a LevelDB table (frontends/src/tf/bundle.rs) -----------
def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_varint(b, pos):
    v, shift = 0, 0
    while True:
        x = b[pos]
        pos += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            return v, pos


def block_entries(block):
    """(key, value) of an uncompressed block (prefix-shared keys)."""
    n = int.from_bytes(block[-4:], "little")
    end = len(block) - 4 - 4 * n
    pos, key, out = 0, b"", []
    while pos < end:
        shared, pos = read_varint(block, pos)
        unshared, pos = read_varint(block, pos)
        vlen, pos = read_varint(block, pos)
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        out.append((key, block[pos:pos + vlen]))
        pos += vlen
    return out


def read_index(data):
    """The entries of a table with one level of index (as TensorFlow writes)."""
    footer = data[-48:]
    pos = 0
    _, pos = read_varint(footer, pos)
    _, pos = read_varint(footer, pos)
    off, pos = read_varint(footer, pos)
    size, pos = read_varint(footer, pos)
    out = []
    for _, handle in block_entries(data[off:off + size]):
        o, p = read_varint(handle, 0)
        n, _ = read_varint(handle, p)
        out.extend(block_entries(data[o:o + n]))
    return out


def block(entries):
    body = bytearray()
    for k, v in entries:
        body += varint(0) + varint(len(k)) + varint(len(v)) + k + v
    body += (0).to_bytes(4, "little") + (1).to_bytes(4, "little")
    return bytes(body)


def write_index(entries):
    """A table of one data block holding `entries` (sorted), LevelDB's layout."""
    out = bytearray()

    def put(b):
        off = len(out)
        out.extend(b + b"\x00" + masked_crc(b + b"\x00").to_bytes(4, "little"))
        return varint(off) + varint(len(b))

    data = put(block(entries))
    meta = put(block([]))
    index = put(block([(entries[-1][0] + b"\xff", data)]))
    footer = meta + index
    footer += b"\x00" * (40 - len(footer))
    out += footer + (0xDB4775248B80FB57).to_bytes(8, "little")
    return bytes(out)


def raw_table(data_block, kind=0, handle=None, footer=None):
    """A table whose data block is `data_block` as given (compression byte
    `kind`), its index entry pointing at `handle` (default: that block), and
    `footer`'s 40 handle bytes (default: the real ones); checksums correct."""
    out = bytearray()

    def put(b, k=0):
        off = len(out)
        out.extend(b + bytes([k]) + masked_crc(b + bytes([k])).to_bytes(4, "little"))
        return varint(off) + varint(len(b))

    data = put(data_block, kind)
    meta = put(block([]))
    index = put(block([(b"\xff", data if handle is None else handle)]))
    f = meta + index if footer is None else footer
    out += f + b"\x00" * (40 - len(f)) + (0xDB4775248B80FB57).to_bytes(8, "little")
    return bytes(out)


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

    def captures(change):
        def mutate(sm):
            for cf in sm.meta_graphs[0].object_graph_def.concrete_functions.values():
                if len(cf.bound_inputs):
                    change(cf.bound_inputs)
        return mutate

    # The signature's call captures more handles than it has inputs; a
    # captured object id that is no checkpoint object.
    saved_model("sm_too_many_captures", captures(lambda b: b.extend([0] * 64)))
    saved_model("sm_capture_not_in_checkpoint", captures(lambda b: b.__setitem__(0, 9999)))
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

    # Well-formed tables with one entry changed (the header under the empty
    # key, or the variable's BundleEntryProto).
    from tensorflow import tensor_bundle_pb2

    def entries_case(name, change):
        p = os.path.join(SAVED, "variables", "variables.index")
        entries = read_index(open(p, "rb").read())
        entries = change(entries)
        d = saved_model(name, lambda sm: None)
        with open(os.path.join(d, "variables", "variables.index"), "wb") as fh:
            fh.write(write_index(sorted(entries)))

    def header(**fields):
        def change(entries):
            h = tensor_bundle_pb2.BundleHeaderProto()
            h.ParseFromString(entries[0][1])
            for k, v in fields.items():
                setattr(h, k, v)
            return [(b"", h.SerializeToString())] + entries[1:]
        return change

    def variable(edit):
        """Edit the BundleEntryProto of the variable's value (not the object graph's)."""
        def change(entries):
            out = []
            for k, v in entries:
                if k and not k.startswith(b"_CHECKPOINTABLE"):
                    e = tensor_bundle_pb2.BundleEntryProto()
                    e.ParseFromString(v)
                    edit(e)
                    v = e.SerializeToString()
                out.append((k, v))
            return out
        return change

    # Tables broken inside: blocks, entries, handles, footer.
    def table_case(name, table):
        d = saved_model(name, lambda sm: None)
        with open(os.path.join(d, "variables", "variables.index"), "wb") as fh:
            fh.write(table)

    no_restarts = (0).to_bytes(4, "little")
    table_case("tbl_block_outside", raw_table(block([]), handle=varint(100000) + varint(10)))
    table_case("tbl_compression", raw_table(block([]), kind=2))
    table_case("tbl_snappy", raw_table(b"\xff" * 6, kind=1))
    table_case("tbl_short_block", raw_table(b"\x00\x01"))
    table_case("tbl_restarts", raw_table((1000).to_bytes(4, "little")))
    table_case("tbl_truncated_entry", raw_table(b"\x80" * 12 + no_restarts))
    table_case("tbl_shared", raw_table(varint(5) + varint(1) + varint(0) + b"k" + no_restarts))
    table_case("tbl_key_past", raw_table(varint(0) + varint(100) + varint(0) + b"k" + no_restarts))
    table_case("tbl_value_past", raw_table(varint(0) + varint(1) + varint(100) + b"k" + no_restarts))
    table_case("tbl_footer", raw_table(block([]), footer=b"\xff" * 40))
    table_case("tbl_handle", raw_table(block([]), handle=b"\xff" * 11))

    # The object graph (a string scalar in the data shard) is not a
    # TrackableObjectGraph: its bytes appended to the shard, well-formed as a
    # string tensor (varint length, masked CRC of the lengths, the bytes) and
    # with the entry's checksum right, so only the decode fails.
    d = saved_model("idx_object_graph_garbage", lambda sm: None)
    shard = os.path.join(d, "variables", "variables.data-00000-of-00001")
    junk = b"\xff\xff\xff"
    lens = varint(len(junk))
    stored = masked_crc(len(junk).to_bytes(4, "little")).to_bytes(4, "little")
    blob = lens + stored + junk
    off = os.path.getsize(shard)
    with open(shard, "ab") as fh:
        fh.write(blob)
    entry_crc = masked_crc(len(junk).to_bytes(4, "little") + stored + junk)

    def garbage(entries):
        out = []
        for k, v in entries:
            if k.startswith(b"_CHECKPOINTABLE"):
                e = tensor_bundle_pb2.BundleEntryProto()
                e.ParseFromString(v)
                e.offset, e.size, e.crc32c = off, len(blob), entry_crc
                v = e.SerializeToString()
            out.append((k, v))
        return out

    p = os.path.join(SAVED, "variables", "variables.index")
    with open(os.path.join(d, "variables", "variables.index"), "wb") as fh:
        fh.write(write_index(sorted(garbage(read_index(open(p, "rb").read())))))

    entries_case("idx_roundtrip", lambda e: e)
    entries_case("idx_no_header", lambda e: e[1:])
    entries_case("idx_big_endian", header(endianness=1))
    entries_case("idx_shards", header(num_shards=0))
    entries_case("idx_bad_header", lambda e: [(b"", b"\xff\xff")] + e[1:])
    entries_case("idx_bad_entry", lambda e: e[:1] + [(k, b"\xff\xff") for k, _ in e[1:]])
    entries_case("idx_key_not_utf8", lambda e: e + [(b"\xff\xfe", e[1][1])])
    entries_case("idx_partitioned", variable(lambda e: e.slices.append(b"0,1")))
    entries_case("idx_negative_dim", variable(lambda e: e.shape.dim[0].__setattr__("size", -2)))
    entries_case("idx_wrong_size", variable(lambda e: setattr(e, "size", e.size + 4)))
    entries_case("idx_past_data", variable(lambda e: setattr(e, "offset", e.offset + 4096)))
    entries_case("idx_no_variable", lambda e: [x for x in e if not x[0] or x[0].startswith(b"_CHECKPOINTABLE")])
    entries_case("idx_no_object_graph", lambda e: [x for x in e if not x[0].startswith(b"_CHECKPOINTABLE")])
    entries_case("idx_object_graph_not_string",
                 lambda e: [(k, v) for k, v in e if not k.startswith(b"_CHECKPOINTABLE")]
                 + [(k, [v2 for k2, v2 in e if k2 and not k2.startswith(b"_CHECKPOINTABLE")][0])
                    for k, v in e if k.startswith(b"_CHECKPOINTABLE")])
    print(f"wrote {len(graphs) + 1} graphs and the SavedModel cases to testdata/tf/diag")


if __name__ == "__main__":
    main()
