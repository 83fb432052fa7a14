#!/usr/bin/env python3
"""Generate the small ONNX and TensorFlow test models in testdata/onnx and testdata/tf.

    python3 -m venv .venv && .venv/bin/pip install -r tools/frontends/requirements.txt
    .venv/bin/python tools/gen_test_models.py

ONNX models are built with the `onnx` package; their reference outputs come from
`onnx.reference.ReferenceEvaluator` and are saved as .npy next to them
(<model>.in<i>.npy, <model>.out<i>.npy). TensorFlow GraphDefs are written with the
`protobuf` package from ge's own .proto subset (frontends/proto/tensorflow, compiled
here with grpcio-tools — no TensorFlow install); their references are computed with
numpy. The bad files exercise the importers' error paths. Everything is seeded, so
reruns give the same bytes. Lit tests in lit-tests/frontends use these files.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ONNX_DIR = os.path.join(ROOT, "testdata", "onnx")
TF_DIR = os.path.join(ROOT, "testdata", "tf")
rng = np.random.default_rng(7)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def save_onnx(name, model, inputs=None, check=True):
    if check:
        onnx.checker.check_model(model)
    path = os.path.join(ONNX_DIR, name + ".onnx")
    onnx.save(model, path)
    if inputs is not None:
        outs = ReferenceEvaluator(model).run(None, {k: v for k, v in inputs})
        for i, (_, v) in enumerate(inputs):
            np.save(os.path.join(ONNX_DIR, f"{name}.in{i}.npy"), v)
        for i, v in enumerate(outs):
            np.save(os.path.join(ONNX_DIR, f"{name}.out{i}.npy"), np.ascontiguousarray(v))
    print("wrote", os.path.relpath(path, ROOT))


def truncate(data, cls):
    """The first half of `data`, cut inside a field so that decoding fails."""
    for cut in range(len(data) // 2, len(data)):
        try:
            cls().ParseFromString(data[:cut])
        except Exception:
            return data[:cut]
    raise SystemExit("no truncation point fails to decode")


def model(nodes, inputs, outputs, inits=(), opset=17, functions=(), value_info=(), name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits), value_info=list(value_info))
    return helper.make_model(
        g,
        opset_imports=[helper.make_opsetid("", opset)]
        + ([helper.make_opsetid("local", 1)] if functions else []),
        functions=list(functions),
        producer_name="ge tools/gen_test_models.py",
        ir_version=10,
    )


def vi(name, shape, dt=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dt, shape)


def small_cnn():
    inits = [
        numpy_helper.from_array(f32(4, 3, 3, 3, scale=0.5), "conv_w"),
        numpy_helper.from_array(f32(4, scale=0.1), "conv_b"),
        numpy_helper.from_array((1 + 0.1 * f32(4)).astype(np.float32), "bn_scale"),
        numpy_helper.from_array(f32(4, scale=0.1), "bn_bias"),
        numpy_helper.from_array(f32(4, scale=0.1), "bn_mean"),
        numpy_helper.from_array((1 + np.abs(f32(4))).astype(np.float32), "bn_var"),
        numpy_helper.from_array(f32(10, 64, scale=0.2), "fc_w"),
        numpy_helper.from_array(f32(10, scale=0.1), "fc_b"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["b"], name="bn1"),
        helper.make_node("Relu", ["b"], ["r"], name="relu1"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["g"], name="fc", transB=1),
        helper.make_node("Softmax", ["g"], ["y"], name="softmax"),
    ]
    m = model(nodes, [vi("x", [1, 3, 8, 8])], [vi("y", [1, 10])], inits)
    save_onnx("small_cnn", m, [("x", f32(1, 3, 8, 8))])
    return m


def dyn_batch():
    inits = [
        numpy_helper.from_array(f32(16, 8, scale=0.3), "w"),
        numpy_helper.from_array(f32(8, scale=0.1), "b"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
        helper.make_node("Add", ["m", "b"], ["a"], name="bias"),
        helper.make_node("Relu", ["a"], ["r"], name="relu"),
        helper.make_node("ReduceMean", ["r"], ["y"], name="mean", axes=[1], keepdims=1),
    ]
    m = model(nodes, [vi("x", ["batch_size", 16])], [vi("y", ["batch_size", 1])], inits, opset=13)
    save_onnx("dyn_batch", m, [("x", f32(3, 16))])


def external_data():
    w = f32(32, 32, scale=0.2)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
        helper.make_node("Tanh", ["m"], ["y"], name="tanh"),
    ]
    m = model(nodes, [vi("x", [2, 32])], [vi("y", [2, 32])], [numpy_helper.from_array(w, "w")])
    onnx.checker.check_model(m)
    inputs = [("x", f32(2, 32))]
    outs = ReferenceEvaluator(m).run(None, dict(inputs))
    path = os.path.join(ONNX_DIR, "external_data.onnx")
    if os.path.exists(os.path.join(ONNX_DIR, "external_data.bin")):
        os.remove(os.path.join(ONNX_DIR, "external_data.bin"))  # onnx appends to it
    onnx.save(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
              location="external_data.bin", size_threshold=0)
    np.save(os.path.join(ONNX_DIR, "external_data.in0.npy"), inputs[0][1])
    np.save(os.path.join(ONNX_DIR, "external_data.out0.npy"), outs[0])
    print("wrote", os.path.relpath(path, ROOT), "+ external_data.bin")


def huge_models():
    """Models whose sizes come from attributes and initializers: 256 GiB
    results of Expand, Tile and ConstantOfShape, and a 200 GiB external weight
    (lit-tests/frontends/onnx-memory-budget.test makes the sparse .bin file).
    ge must refuse them at compile time, naming the node. No reference run:
    it would need the memory."""
    big = [65536, 1024, 1024]  # 2^36 f32 elements = 256 GiB
    shape = numpy_helper.from_array(np.array(big, np.int64), "shape")
    nodes = [helper.make_node("Expand", ["x", "shape"], ["y"], name="expand_256g")]
    save_onnx("huge_expand", model(nodes, [vi("x", [1])], [vi("y", big)], [shape]))
    repeats = numpy_helper.from_array(np.array([65536, 1, 1], np.int64), "repeats")
    nodes = [helper.make_node("Tile", ["x", "repeats"], ["y"], name="tile_256g")]
    save_onnx("huge_tile", model(nodes, [vi("x", [1, 1024, 1024])], [vi("y", big)], [repeats]))
    value = numpy_helper.from_array(np.array([1.0], np.float32), "value")
    nodes = [
        helper.make_node("ConstantOfShape", ["shape"], ["c"], name="fill_256g", value=value),
        helper.make_node("Add", ["c", "x"], ["y"], name="add"),
    ]
    save_onnx("huge_constant_of_shape", model(nodes, [vi("x", [1])], [vi("y", big)], [shape]))
    w = TensorProto(name="w_200g", data_type=TensorProto.FLOAT, dims=[50, 1024, 1024, 1024])
    w.data_location = TensorProto.EXTERNAL
    for k, v in [("location", "huge_external.bin"), ("offset", "0"), ("length", str(200 << 30))]:
        e = w.external_data.add()
        e.key, e.value = k, v
    nodes = [helper.make_node("Mul", ["w_200g", "x"], ["y"], name="scale")]
    m = model(nodes, [vi("x", [1])], [vi("y", [50, 1024, 1024, 1024])], [w])
    save_onnx("huge_external", m, check=False)


def control_flow():
    # If: y = cond ? x * 2 : x - 1
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["t"], name="then_mul")], "then", [], [vi("t", [4])],
        [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    else_g = helper.make_graph(
        [helper.make_node("Sub", ["x", "one"], ["e"], name="else_sub")], "else", [], [vi("e", [4])],
        [numpy_helper.from_array(np.array(1.0, np.float32), "one")])
    # Loop: 3 iterations of s = s + x; scan output: s after each step.
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "x"], ["s_out"], name="body_add"),
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
            helper.make_node("Identity", ["s_out"], ["scan"], name="body_scan"),
        ],
        "body",
        [vi("i", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL), vi("s_in", [4])],
        [vi("cond_out", [], TensorProto.BOOL), vi("s_out", [4]), vi("scan", [4])],
    )
    nodes = [
        helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["trips", "go", "s0"], ["s", "scans"], name="loop", body=body),
    ]
    inits = [
        numpy_helper.from_array(np.array(3, np.int64), "trips"),
        numpy_helper.from_array(np.array(True), "go"),
        numpy_helper.from_array(np.zeros(4, np.float32), "s0"),
    ]
    m = model(nodes, [vi("c", [], TensorProto.BOOL), vi("x", [4])],
              [vi("y", [4]), vi("s", [4]), vi("scans", [3, 4])], inits, opset=16)
    save_onnx("control_flow", m, [("c", np.array(True)), ("x", f32(4))])


def local_function():
    # local.ScaledTanh(X) = Tanh(X * alpha) * alpha, alpha an attribute (default 1.5)
    fn = helper.make_function(
        "local", "ScaledTanh", ["X"], ["Y"],
        [
            helper.make_node("Constant", [], ["A"], value_float=0.0, name="alpha_const"),
            helper.make_node("Mul", ["X", "A"], ["XA"], name="scale_in"),
            helper.make_node("Tanh", ["XA"], ["T"], name="tanh"),
            helper.make_node("Mul", ["T", "A"], ["Y"], name="scale_out"),
        ],
        [helper.make_opsetid("", 17)],
        attributes=[],
    )
    # Make the Constant take its value from the caller's attribute.
    fn.node[0].attribute[0].ClearField("f")
    fn.node[0].attribute[0].ref_attr_name = "alpha"
    fn.attribute_proto.append(helper.make_attribute("alpha", 1.5))
    nodes = [
        helper.make_node("ScaledTanh", ["x"], ["h"], name="act1", domain="local", alpha=0.5),
        helper.make_node("ScaledTanh", ["h"], ["y"], name="act2", domain="local", alpha=2.0),
    ]
    m = model(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], functions=[fn])
    save_onnx("local_function", m, [("x", f32(2, 3))])


def many_ops():
    """Shape computations that fold at import (Shape → Gather → Concat → Reshape)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "i0"], ["n"], name="batch_dim", axis=0),
        helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"], name="unsq"),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], name="target_shape", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"], name="flatten"),
        helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[0, 2, 1]),
        helper.make_node("ReduceSum", ["t", "ax2"], ["rs"], name="sum", keepdims=0),
        helper.make_node("Concat", ["flat", "rs"], ["y"], name="concat", axis=1),
    ]
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "i0"),
        numpy_helper.from_array(np.array([0], np.int64), "ax0"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus1"),
        numpy_helper.from_array(np.array([2], np.int64), "ax2"),
    ]
    m = model(nodes, [vi("x", [2, 3, 4])], [vi("y", [2, 16])], inits)
    save_onnx("shape_folding", m, [("x", f32(2, 3, 4))])


def bad_files(cnn):
    with open(os.path.join(ONNX_DIR, "truncated.onnx"), "wb") as f:
        f.write(truncate(cnn.SerializeToString(), onnx.ModelProto))
    with open(os.path.join(ONNX_DIR, "not_onnx.onnx"), "w") as f:
        f.write("this is a text file, not an ONNX model\n")
    # Two unknown ops (one in a custom domain) and a known one.
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="ok_relu"),
        helper.make_node("FrobnicateV2", ["a"], ["b"], name="frob"),
        helper.make_node("Sparkle", ["b"], ["y"], name="sparkle", domain="com.example"),
    ]
    m = model(nodes, [vi("x", [2])], [vi("y", [2])])
    m.opset_import.append(helper.make_opsetid("com.example", 3))
    save_onnx("unknown_ops", m, check=False)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["y"], name="uses_missing_W")]
    save_onnx("missing_initializer", model(nodes, [vi("x", [2, 2])], [vi("y", [2, 2])]), check=False)
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Transpose", ["r"], ["y"], name="transpose", perm=[1, 0]),
    ]
    m = model(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])])
    save_onnx("inconsistent_shapes", m, check=False)
    nodes = [helper.make_node("Identity", ["x"], ["y"], name="id")]
    m = model(nodes, [vi("x", [2], TensorProto.COMPLEX64)], [vi("y", [2], TensorProto.COMPLEX64)])
    save_onnx("unsupported_dtype", m, check=False)
    # No ai.onnx opset imported at all (only a custom domain), yet ai.onnx ops used.
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    m = model(nodes, [vi("x", [2])], [vi("y", [2])])
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    save_onnx("no_opset", m, check=False)


def save_with_refs(name, m, inputs, outputs):
    """Save a model whose references are computed here (numpy), for old opsets
    that onnx's ReferenceEvaluator does not implement."""
    path = os.path.join(ONNX_DIR, name + ".onnx")
    onnx.save(m, path)
    for i, v in enumerate(inputs):
        np.save(os.path.join(ONNX_DIR, f"{name}.in{i}.npy"), v)
    for i, v in enumerate(outputs):
        np.save(os.path.join(ONNX_DIR, f"{name}.out{i}.npy"), v)
    print("wrote", os.path.relpath(path, ROOT))


def legacy_opsets():
    """Old-opset forms the importer maps as the onnx version converter does
    (lit-tests/frontends/onnx-legacy-opsets.test); references with numpy."""
    # Opset 1: Pad's `paddings`, Concat without axis (1), Tile(input, tiles,
    # axis), Split with the sizes as an input, Cast to a type name, Reshape's
    # `shape` attribute, Upsample's height_scale/width_scale.
    x = f32(1, 2, 3, 2)
    nodes = [
        helper.make_node("Pad", ["x"], ["pad"], paddings=[0, 0, 1, 0, 0, 0, 0, 1], value=2.0),
        helper.make_node("Concat", ["x", "x"], ["cat"]),
        helper.make_node("Tile", ["x", "tiles", "axis"], ["tile"]),
        helper.make_node("Split", ["x", "sizes"], ["s0", "s1"], axis=2),
        helper.make_node("Cast", ["x"], ["cast"], to="INT32"),
        helper.make_node("Reshape", ["x"], ["resh"], shape=[2, 6]),
        helper.make_node("Upsample", ["x"], ["up"], height_scale=2.0, width_scale=3.0),
    ]
    inits = [
        numpy_helper.from_array(np.array(3, np.int64), "tiles"),
        numpy_helper.from_array(np.array(3, np.int64), "axis"),
        numpy_helper.from_array(np.array([1, 2], np.int64), "sizes"),
    ]
    outs = [
        np.pad(x, [(0, 0), (0, 0), (1, 0), (0, 1)], constant_values=2.0),
        np.concatenate([x, x], axis=1),
        np.tile(x, (1, 1, 1, 3)),
        x[:, :, :1],
        x[:, :, 1:],
        x.astype(np.int32),
        x.reshape(2, 6),
        x.repeat(2, axis=2).repeat(3, axis=3),
    ]
    names = ["pad", "cat", "tile", "s0", "s1", "cast", "resh", "up"]
    m = model(
        nodes,
        [vi("x", list(x.shape))],
        [vi(n, list(o.shape), helper.np_dtype_to_tensor_dtype(o.dtype)) for n, o in zip(names, outs)],
        inits,
        opset=1,
    )
    save_with_refs("legacy_opset1", m, [x], outs)
    # Opset 6: binary ops' broadcast/axis, PRelu's per-channel slope.
    a, b, c, slope = f32(2, 3, 4, 5), f32(3, 4), f32(5), f32(3)
    nodes = [
        helper.make_node("Add", ["a", "b"], ["add"], broadcast=1, axis=1),
        helper.make_node("Mul", ["a", "c"], ["mul"], broadcast=1),
        helper.make_node("Sub", ["a", "a"], ["sub"]),
        helper.make_node("PRelu", ["a", "slope"], ["prelu"]),
    ]
    outs = [
        a + b[:, :, None],
        a * c,
        a - a,
        np.where(a < 0, a * slope[:, None, None], a),
    ]
    m = model(
        nodes,
        [vi("a", [2, 3, 4, 5]), vi("b", [3, 4]), vi("c", [5]), vi("slope", [3])],
        [vi(n, [2, 3, 4, 5]) for n in ["add", "mul", "sub", "prelu"]],
        opset=6,
    )
    save_with_refs("legacy_opset6", m, [a, b, c, slope], outs)
    # Opset 8: BatchNormalization with spatial = 0 (per-activation statistics),
    # Softmax's coercion to 2-D at `axis`.
    x = f32(2, 3, 4)
    scale, bias, mean = f32(3, 4), f32(3, 4), f32(3, 4)
    var = (np.abs(f32(3, 4)) + 0.5).astype(np.float32)
    flat = x.reshape(2, 12)
    e = np.exp(flat - flat.max(axis=1, keepdims=True))
    nodes = [
        helper.make_node(
            "BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["bn"], spatial=0, epsilon=1e-3
        ),
        helper.make_node("Softmax", ["x"], ["sm"], axis=1),
    ]
    outs = [
        ((x - mean) / np.sqrt(var + 1e-3) * scale + bias).astype(np.float32),
        (e / e.sum(axis=1, keepdims=True)).reshape(2, 3, 4).astype(np.float32),
    ]
    inits = [numpy_helper.from_array(v, k) for k, v in
             [("scale", scale), ("bias", bias), ("mean", mean), ("var", var)]]
    m = model(nodes, [vi("x", [2, 3, 4])], [vi("bn", [2, 3, 4]), vi("sm", [2, 3, 4])], inits, opset=8)
    save_with_refs("legacy_opset8", m, [x], outs)


def nd_indexing():
    """GatherND (batch_dims 0 and 1, negative indices) and ScatterND with a
    reduction, indices given as inputs (lit-tests/frontends/onnx-nd-index.test);
    nd_index.bad_in1.npy has an index past its dim that still lands inside the
    data when flattened (row 0, column 3 of 3 is element 3): it must be refused."""
    nodes = [
        helper.make_node("GatherND", ["x", "i0"], ["g0"], name="gnd0"),
        helper.make_node("GatherND", ["x", "i1"], ["g1"], name="gnd1", batch_dims=1),
        helper.make_node("ScatterND", ["x", "i2", "u"], ["s"], name="snd", reduction="add"),
    ]
    m = model(
        nodes,
        [
            vi("x", [2, 3, 4]),
            vi("i0", [2, 2], TensorProto.INT64),
            vi("i1", [2, 1, 1], TensorProto.INT64),
            vi("i2", [2, 1], TensorProto.INT64),
            vi("u", [2, 3, 4]),
        ],
        [vi("g0", [2, 4]), vi("g1", [2, 1, 4]), vi("s", [2, 3, 4])],
        opset=18,
    )
    ins = [
        ("x", f32(2, 3, 4)),
        ("i0", np.array([[1, -1], [0, 2]], np.int64)),
        ("i1", np.array([[[2]], [[-3]]], np.int64)),
        ("i2", np.array([[1], [1]], np.int64)),
        ("u", f32(2, 3, 4)),
    ]
    save_onnx("nd_index", m, ins)
    np.save(os.path.join(ONNX_DIR, "nd_index.bad_in1.npy"), np.array([[0, 3], [0, 0]], np.int64))
    # Refused at import: batch_dims as large as the data's rank; updates of the wrong shape.
    nodes = [helper.make_node("GatherND", ["x", "i"], ["y"], name="gnd", batch_dims=2)]
    m = model(nodes, [vi("x", [2, 3]), vi("i", [2, 3, 1], TensorProto.INT64)], [vi("y", [2, 3])])
    save_onnx("nd_index_bad_batch", m, check=False)
    nodes = [helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="snd")]
    ins = [vi("x", [2, 3]), vi("i", [2, 1], TensorProto.INT64), vi("u", [2, 2])]
    save_onnx("nd_index_bad_updates", model(nodes, ins, [vi("y", [2, 3])]), check=False)


def einsum():
    """Einsum forms (lit-tests/frontends/onnx-einsum.test): a batched matmul, a
    diagonal, an implicit output with an ellipsis, three operands, a sum over two
    axes (not a full sum: onnx.reference gives it shape [1], not []); one bad
    equation."""
    nodes = [
        helper.make_node("Einsum", ["a", "b"], ["mm"], name="mm", equation="bij,bjk->bik"),
        helper.make_node("Einsum", ["s"], ["diag"], name="diag", equation="ii->i"),
        helper.make_node("Einsum", ["a", "b"], ["ell"], name="ell", equation="...ij,...jk"),
        helper.make_node("Einsum", ["s", "s", "c"], ["three"], name="three", equation="ij,jk,kl->il"),
        helper.make_node("Einsum", ["a"], ["all"], name="all", equation="bij->j"),
    ]
    m = model(
        nodes,
        [vi("a", [2, 3, 4]), vi("b", [2, 4, 5]), vi("s", [3, 3]), vi("c", [3, 2])],
        [vi("mm", [2, 3, 5]), vi("diag", [3]), vi("ell", [2, 3, 5]), vi("three", [3, 2]), vi("all", [4])],
        opset=18,
    )
    save_onnx("einsum", m, [("a", f32(2, 3, 4)), ("b", f32(2, 4, 5)), ("s", f32(3, 3)), ("c", f32(3, 2))])
    nodes = [helper.make_node("Einsum", ["a"], ["y"], name="bad", equation="ij,jk->ik")]
    save_onnx("einsum_bad", model(nodes, [vi("a", [2, 3])], [vi("y", [2, 3])], opset=18), check=False)


def named_io():
    """Inputs and outputs addressed by name. The names are deliberately the
    default names of *other* positions (input #0 is called "arg1", output #0
    "out1"), so a tool that confuses a name with a position gets it wrong."""
    nodes = [
        helper.make_node("Sub", ["arg1", "arg0"], ["out1"], name="sub"),
        helper.make_node("Relu", ["arg0"], ["out0"], name="relu"),
    ]
    m = model(nodes, [vi("arg1", [2, 3]), vi("arg0", [3])], [vi("out1", [2, 3]), vi("out0", [3])])
    save_onnx("named_io", m, [("arg1", f32(2, 3)), ("arg0", f32(3))])
    # Untrusted names: the importer refuses each with one line.
    nodes = [helper.make_node("Add", ["x", "x"], ["y"], name="add")]
    m = model(nodes, [vi("x", [2]), vi("x", [2])], [vi("y", [2])])
    save_onnx("duplicate_input_names", m, check=False)
    long = "x" * 1100
    nodes = [helper.make_node("Relu", [long], ["y"], name="relu")]
    save_onnx("long_input_name", model(nodes, [vi(long, [2])], [vi("y", [2])]), check=False)
    # "x\u00e9" with its second byte broken: not UTF-8 (protobuf strings must be).
    nodes = [helper.make_node("Relu", ["x\u00e9"], ["y"], name="relu")]
    data = model(nodes, [vi("x\u00e9", [2])], [vi("y", [2])]).SerializeToString()
    with open(os.path.join(ONNX_DIR, "non_utf8_name.onnx"), "wb") as f:
        f.write(data.replace(b"x\xc3\xa9", b"x\xc3\x28"))


# ---- TensorFlow ---------------------------------------------------------------------

def tf_protos():
    """Compile frontends/proto/tensorflow with grpcio-tools into a temp dir; import it."""
    from grpc_tools import protoc

    out = tempfile.mkdtemp()
    proto_root = os.path.join(ROOT, "frontends", "proto")
    files = [os.path.join("tensorflow", f) for f in
             ("types.proto", "tensor_shape.proto", "tensor.proto", "attr_value.proto",
              "node_def.proto", "function.proto", "graph.proto")]
    rc = protoc.main(["protoc", f"-I{proto_root}", f"--python_out={out}"] + files)
    if rc != 0:
        raise SystemExit("protoc failed")
    sys.path.insert(0, out)
    from tensorflow import graph_pb2, types_pb2  # noqa: E402

    return graph_pb2, types_pb2


def tf_builders(types_pb2):
    """node(g, name, op, inputs, **attrs) and const(g, name, arr) adding GraphDef nodes
    (attrs: bool, int, float, bytes, int list, ("type", DT), ("shape", dims))."""
    DT_FLOAT, DT_INT32 = types_pb2.DT_FLOAT, types_pb2.DT_INT32

    def node(g, name, op, inputs=(), **attrs):
        n = g.node.add()
        n.name, n.op = name, op
        n.input.extend(inputs)
        for k, v in attrs.items():
            a = n.attr[k]
            if isinstance(v, bool):
                a.b = v
            elif isinstance(v, int):
                a.i = v
            elif isinstance(v, float):
                a.f = v
            elif isinstance(v, bytes):
                a.s = v
            elif isinstance(v, list):
                a.list.i.extend(v)
            elif isinstance(v, tuple) and v[0] == "type":
                a.type = v[1]
            elif isinstance(v, tuple) and v[0] == "shape":
                a.shape.SetInParent()  # set even when rank 0
                for d in v[1]:
                    a.shape.dim.add().size = d
        return n

    def const(g, name, arr):
        n = node(g, name, "Const", dtype=("type", DT_FLOAT if arr.dtype == np.float32 else DT_INT32))
        t = n.attr["value"].tensor
        t.dtype = DT_FLOAT if arr.dtype == np.float32 else DT_INT32
        for d in arr.shape:
            t.tensor_shape.dim.add().size = d
        t.tensor_content = arr.tobytes()
        return n

    return node, const


def tf_models():
    graph_pb2, types_pb2 = tf_protos()
    node, const = tf_builders(types_pb2)
    DT_FLOAT = types_pb2.DT_FLOAT

    g = graph_pb2.GraphDef()
    g.versions.producer = 1087
    node(g, "input", "Placeholder", dtype=("type", DT_FLOAT), shape=("shape", [1, 8, 8, 3]))
    w1 = f32(3, 3, 3, 4, scale=0.4)
    b1 = f32(4, scale=0.1)
    scale, offset, mean = (1 + 0.1 * f32(4)), f32(4, scale=0.1), f32(4, scale=0.1)
    var = (1 + np.abs(f32(4))).astype(np.float32)
    dw = f32(3, 3, 4, 1, scale=0.4)
    fc = f32(16, 5, scale=0.3)
    fcb = f32(5, scale=0.1)
    const(g, "conv1/w", w1)
    node(g, "conv1", "Conv2D", ["input", "conv1/w"], T=("type", DT_FLOAT), strides=[1, 1, 1, 1],
         padding=b"SAME", data_format=b"NHWC")
    const(g, "conv1/b", b1)
    node(g, "conv1/bias", "BiasAdd", ["conv1", "conv1/b"], T=("type", DT_FLOAT))
    for k, v in (("scale", scale), ("offset", offset), ("mean", mean), ("var", var)):
        const(g, f"bn/{k}", v.astype(np.float32))
    node(g, "bn", "FusedBatchNormV3", ["conv1/bias", "bn/scale", "bn/offset", "bn/mean", "bn/var"],
         T=("type", DT_FLOAT), epsilon=0.001, is_training=False, data_format=b"NHWC")
    node(g, "relu6", "Relu6", ["bn"], T=("type", DT_FLOAT))
    node(g, "pool", "MaxPool", ["relu6"], T=("type", DT_FLOAT), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
         padding=b"VALID")
    const(g, "dw/w", dw)
    node(g, "dw", "DepthwiseConv2dNative", ["pool", "dw/w"], T=("type", DT_FLOAT), strides=[1, 1, 1, 1],
         padding=b"SAME")
    node(g, "relu", "Relu", ["dw"], T=("type", DT_FLOAT))
    node(g, "avg", "AvgPool", ["relu"], T=("type", DT_FLOAT), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
         padding=b"VALID")
    const(g, "flat/shape", np.array([1, 16], np.int32))
    node(g, "flat", "Reshape", ["avg", "flat/shape"], T=("type", DT_FLOAT))
    const(g, "fc/w", fc)
    node(g, "fc", "MatMul", ["flat", "fc/w"], T=("type", DT_FLOAT))
    const(g, "fc/b", fcb)
    node(g, "fc/bias", "BiasAdd", ["fc", "fc/b"], T=("type", DT_FLOAT))
    node(g, "probs", "Softmax", ["fc/bias"], T=("type", DT_FLOAT))
    with open(os.path.join(TF_DIR, "small_cnn.pb"), "wb") as f:
        f.write(g.SerializeToString())

    # numpy reference (NHWC)
    def conv(x, w, stride=1, depthwise=False):
        n, h, wd, c = x.shape
        kh, kw = w.shape[:2]
        ph, pw = kh - 1, kw - 1
        xp = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
        out_c = c if depthwise else w.shape[3]
        y = np.zeros((n, h, wd, out_c), np.float64)
        for i in range(h):
            for j in range(wd):
                patch = xp[:, i:i + kh, j:j + kw, :]
                if depthwise:
                    y[:, i, j, :] = np.einsum("nhwc,hwc->nc", patch, w[:, :, :, 0])
                else:
                    y[:, i, j, :] = np.einsum("nhwc,hwco->no", patch, w)
        return y

    def pool(x, fn):
        n, h, w, c = x.shape
        return fn(x.reshape(n, h // 2, 2, w // 2, 2, c), axis=(2, 4))

    x = f32(1, 8, 8, 3)
    y = conv(x.astype(np.float64), w1) + b1
    y = (y - mean) / np.sqrt(var + 0.001) * scale + offset
    y = np.clip(y, 0, 6)
    y = pool(y, np.max)
    y = np.maximum(conv(y, dw, depthwise=True), 0)
    y = pool(y, np.mean).reshape(1, 16)
    y = y @ fc + fcb
    y = np.exp(y - y.max(axis=1, keepdims=True))
    y = (y / y.sum(axis=1, keepdims=True)).astype(np.float32)
    np.save(os.path.join(TF_DIR, "small_cnn.in0.npy"), x)
    np.save(os.path.join(TF_DIR, "small_cnn.out0.npy"), y)
    print("wrote testdata/tf/small_cnn.pb")

    # Symbolic batch, concat, mean, pad, transpose, squeeze.
    g = graph_pb2.GraphDef()
    node(g, "x", "Placeholder", dtype=("type", DT_FLOAT), shape=("shape", [-1, 4, 4, 2]))
    const(g, "pads", np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))
    node(g, "pad", "Pad", ["x", "pads"], T=("type", DT_FLOAT))
    const(g, "axes", np.array([1, 2], np.int32))
    node(g, "mean", "Mean", ["pad", "axes"], T=("type", DT_FLOAT), keep_dims=True)
    const(g, "perm", np.array([0, 3, 1, 2], np.int32))
    node(g, "nchw", "Transpose", ["mean", "perm"], T=("type", DT_FLOAT))
    node(g, "sq", "Squeeze", ["nchw"], T=("type", DT_FLOAT), squeeze_dims=[2, 3])
    const(g, "axis", np.array(1, np.int32))
    node(g, "cat", "ConcatV2", ["sq", "sq", "axis"], T=("type", DT_FLOAT), N=2)
    node(g, "out", "Identity", ["cat"], T=("type", DT_FLOAT))
    with open(os.path.join(TF_DIR, "shapes.pb"), "wb") as f:
        f.write(g.SerializeToString())
    x = f32(3, 4, 4, 2)
    m = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))).mean(axis=(1, 2))
    np.save(os.path.join(TF_DIR, "shapes.in0.npy"), x)
    np.save(os.path.join(TF_DIR, "shapes.out0.npy"), np.concatenate([m, m], axis=1).astype(np.float32))
    print("wrote testdata/tf/shapes.pb")

    data = open(os.path.join(TF_DIR, "small_cnn.pb"), "rb").read()
    with open(os.path.join(TF_DIR, "truncated.pb"), "wb") as f:
        f.write(truncate(data, graph_pb2.GraphDef))
    g = graph_pb2.GraphDef()
    node(g, "x", "Placeholder", dtype=("type", DT_FLOAT), shape=("shape", [2]))
    node(g, "a", "Erfinv", ["x"], T=("type", DT_FLOAT))
    node(g, "b", "Relu", ["a"], T=("type", DT_FLOAT))
    node(g, "c", "LookupTableFindV2", ["b"])
    with open(os.path.join(TF_DIR, "unknown_ops.pb"), "wb") as f:
        f.write(g.SerializeToString())
    g = graph_pb2.GraphDef()
    node(g, "x", "Placeholder", dtype=("type", DT_FLOAT))
    node(g, "y", "Relu", ["x"], T=("type", DT_FLOAT))
    with open(os.path.join(TF_DIR, "no_shape.pb"), "wb") as f:
        f.write(g.SerializeToString())
    print("wrote testdata/tf bad files")

    # A splat constant of 256 GiB (one float_val): ge keeps it a splat and
    # refuses it at compile time, naming the node (lit-tests/atc/memory-budget.test).
    g = graph_pb2.GraphDef()
    node(g, "x", "Placeholder", dtype=("type", DT_FLOAT), shape=("shape", [1]))
    n = node(g, "fill_256g", "Const", dtype=("type", DT_FLOAT))
    t = n.attr["value"].tensor
    t.dtype = DT_FLOAT
    for d in (65536, 1024, 1024):
        t.tensor_shape.dim.add().size = d
    t.float_val.append(1.0)
    node(g, "y", "Add", ["x", "fill_256g"], T=("type", DT_FLOAT))
    with open(os.path.join(TF_DIR, "huge_splat.pb"), "wb") as f:
        f.write(g.SerializeToString())
    print("wrote testdata/tf/huge_splat.pb")


def tf_list_errors():
    """One GraphDef per error path of the TensorList import (frontends/src/tf/ops/list.rs),
    in testdata/tf/lists/, for lit-tests/frontends/tf-list-errors.test: each holds one
    wrong list op (or one list TensorFlow itself would refuse) and its own diagnostic.
    Lists hold 3 elements of shape [4] unless the case is about that."""
    graph_pb2, types_pb2 = tf_protos()
    node, const = tf_builders(types_pb2)
    F, I = ("type", types_pb2.DT_FLOAT), ("type", types_pb2.DT_INT32)
    out_dir = os.path.join(TF_DIR, "lists")
    os.makedirs(out_dir, exist_ok=True)
    i32 = lambda *v: np.array(v, np.int32)  # noqa: E731

    def graph():
        g = graph_pb2.GraphDef()
        node(g, "x", "Placeholder", dtype=F, shape=("shape", [3, 4]))
        return g

    def reserve(g, shape=(4,), num=3, name="list", **attrs):
        const(g, name + "/shape", np.array(shape, np.int32))
        const(g, name + "/num", i32(num).reshape(()))
        node(g, name, "TensorListReserve", [name + "/shape", name + "/num"],
             element_dtype=attrs.pop("element_dtype", F), shape_type=I, **attrs)

    def from_x(g, name="list", src="x"):
        const(g, name + "/shape", i32(4))
        node(g, name, "TensorListFromTensor", [src, name + "/shape"], element_dtype=F, shape_type=I)

    def set_item(g, index, item="row", name="set", lst="list", **attrs):
        const(g, name + "/i", i32(index).reshape(()))
        node(g, name, "TensorListSetItem", [lst, name + "/i", item],
             element_dtype=attrs.pop("element_dtype", F), **attrs)

    def get_item(g, index, name="get", lst="list", shape=(4,), dtype=F):
        const(g, name + "/i", np.array(index, np.int32))
        const(g, name + "/shape", np.array(shape, np.int32))
        node(g, name, "TensorListGetItem", [lst, name + "/i", name + "/shape"], element_dtype=dtype)

    def stack(g, lst="list", shape=(4,), name="stack", **attrs):
        const(g, name + "/shape", np.array(shape, np.int32))
        node(g, name, "TensorListStack", [lst, name + "/shape"], element_dtype=F, **attrs)

    def row(g, shape=(4,), name="row", dtype=np.float32):
        const(g, name, np.ones(shape, dtype))

    cases = {}

    g = graph()
    node(g, "n", "Placeholder", dtype=I, shape=("shape", []))
    const(g, "list/shape", i32(4))
    node(g, "list", "TensorListReserve", ["list/shape", "n"], element_dtype=F, shape_type=I)
    cases["reserve_num_not_constant"] = g
    g = graph()
    node(g, "s", "Placeholder", dtype=I, shape=("shape", [1]))
    const(g, "list/num", i32(3).reshape(()))
    node(g, "list", "TensorListReserve", ["s", "list/num"], element_dtype=F, shape_type=I)
    cases["reserve_shape_not_constant"] = g
    g = graph()
    const(g, "list/shape", i32(4))
    const(g, "list/num", np.zeros(0, np.int32))
    node(g, "list", "TensorListReserve", ["list/shape", "list/num"], element_dtype=F, shape_type=I)
    cases["reserve_num_empty"] = g
    g = graph()
    const(g, "list/shape", i32(4))
    const(g, "list/num", i32(3).reshape(()))
    node(g, "list", "TensorListReserve", ["list/shape", "list/num"], shape_type=I)
    cases["reserve_no_dtype"] = g
    g = graph()
    reserve(g, num=-1)
    cases["reserve_negative"] = g
    # element shape [-1, 3], but the item set into it is [2, 2]
    g = graph()
    reserve(g, shape=(-1, 3))
    row(g, (2, 2))
    set_item(g, 0)
    stack(g, lst="set", shape=(-1, 3))
    cases["reserve_shape_disagrees"] = g
    # unknown element shape, never set: the shape is never learnt
    g = graph()
    reserve(g, shape=-1)
    stack(g, shape=-1)
    cases["reserve_never_set"] = g
    # unknown element shape, set with an item of dynamic shape
    g = graph()
    node(g, "d", "Placeholder", dtype=F, shape=("shape", [-1]))
    reserve(g, shape=-1)
    set_item(g, 0, item="d")
    cases["set_dynamic_item"] = g

    # element_dtype disagreeing with the list or the item
    g = graph()
    reserve(g)
    get_item(g, 0, dtype=I)
    cases["get_wrong_dtype"] = g
    g = graph()
    reserve(g)
    row(g, dtype=np.int32)
    set_item(g, 0)
    cases["set_wrong_item_dtype"] = g
    g = graph()
    reserve(g, element_dtype=I)
    row(g)
    set_item(g, 0)
    cases["set_wrong_list_dtype"] = g
    g = graph()
    node(g, "xi", "Placeholder", dtype=I, shape=("shape", [3, 4]))
    from_x(g, src="xi")
    cases["from_tensor_wrong_dtype"] = g
    g = graph()
    reserve(g)
    const(g, "stack/shape", i32(4))
    node(g, "stack", "TensorListStack", ["list", "stack/shape"], element_dtype=I)
    cases["stack_wrong_dtype"] = g

    # indices
    for name, k in (("get_index_past_end", 3), ("get_index_negative", -1)):
        g = graph()
        reserve(g)
        get_item(g, k)
        cases[name] = g
    g = graph()
    reserve(g)
    row(g)
    set_item(g, 5)
    cases["set_index_past_end"] = g
    g = graph()
    reserve(g)
    get_item(g, [0, 1])
    cases["get_index_not_scalar"] = g
    g = graph()
    node(g, "k", "Placeholder", dtype=I, shape=("shape", []))
    reserve(g)
    row(g)
    node(g, "set", "TensorListSetItem", ["list", "k", "row"], element_dtype=F,
         resize_if_index_out_of_bounds=True)
    cases["set_resize_dynamic_index"] = g

    # shapes and lengths
    g = graph()
    reserve(g)
    row(g, (5,))
    set_item(g, 0)
    cases["set_item_wrong_shape"] = g
    g = graph()
    reserve(g)
    row(g, (1,))
    set_item(g, 0)
    cases["set_item_broadcastable"] = g
    g = graph()
    reserve(g)
    stack(g, num_elements=4)
    cases["stack_wrong_length"] = g
    g = graph()
    reserve(g)
    stack(g, shape=(5,))
    cases["stack_wrong_element_shape"] = g
    g = graph()
    reserve(g)
    get_item(g, 0, shape=(4, 1))
    cases["get_wrong_element_shape"] = g
    g = graph()
    from_x(g)
    g.node[-2].attr["value"].tensor.tensor_content = i32(3).tobytes()
    cases["from_tensor_wrong_element_shape"] = g
    g = graph()
    node(g, "s", "Placeholder", dtype=F, shape=("shape", []))
    const(g, "list/shape", i32(-1).reshape(()))
    node(g, "list", "TensorListFromTensor", ["s", "list/shape"], element_dtype=F, shape_type=I)
    cases["from_tensor_scalar"] = g
    g = graph()
    node(g, "xd", "Placeholder", dtype=F, shape=("shape", [-1, 4]))
    from_x(g, src="xd")
    node(g, "len", "TensorListLength", ["list"])
    cases["length_dynamic"] = g
    g = graph()
    node(g, "xd", "Placeholder", dtype=F, shape=("shape", [-1, 4]))
    from_x(g, src="xd")
    row(g)
    set_item(g, 0)
    cases["set_dynamic_length"] = g

    g = graph()
    node(g, "s", "Placeholder", dtype=F, shape=("shape", []))
    get_item(g, 0, lst="s")
    cases["get_from_scalar"] = g

    # Valid: the element shape learnt from the item, an index in range with
    # resize_if_index_out_of_bounds, element_shape -1 (unknown rank) and the
    # list's num_elements.
    g = graph()
    reserve(g, shape=-1)
    const(g, "first", np.ones((4,), np.float32))
    set_item(g, 1, item="first", resize_if_index_out_of_bounds=True)
    get_item(g, 1, lst="set", shape=-1)
    stack(g, lst="set", shape=-1, num_elements=3)
    cases["ok"] = g

    # Indices known only at run time (placeholder `i`): get item i of x's
    # rows, set a row of ones at i and stack (tf-list-run-index.test runs it
    # with an index in range, negative and past the end).
    g = graph()
    node(g, "i", "Placeholder", dtype=I, shape=("shape", []))
    from_x(g)
    const(g, "get/shape", i32(4))
    node(g, "get", "TensorListGetItem", ["list", "i", "get/shape"], element_dtype=F)
    row(g)
    node(g, "set", "TensorListSetItem", ["list", "i", "row"], element_dtype=F)
    stack(g, lst="set")
    cases["run_index"] = g

    for name, g in cases.items():
        with open(os.path.join(out_dir, name + ".pb"), "wb") as f:
            f.write(g.SerializeToString())
    print(f"wrote {len(cases)} graphs to testdata/tf/lists")


def tf_op_errors():
    """One GraphDef per diagnostic of the TensorFlow op mappings of issue 21's ops
    (frontends/src/tf/ops/{array,math,nn}.rs), in testdata/tf/op_errors/, for
    lit-tests/frontends/tf-op-errors.test. `x` is a [2, 4, 4, 3] NHWC float image."""
    graph_pb2, types_pb2 = tf_protos()
    node, const = tf_builders(types_pb2)
    F, I, B = ("type", types_pb2.DT_FLOAT), ("type", types_pb2.DT_INT32), ("type", types_pb2.DT_BOOL)
    out_dir = os.path.join(TF_DIR, "op_errors")
    os.makedirs(out_dir, exist_ok=True)
    cases = {}

    def case(name, *consts, x=(2, 4, 4, 3)):
        """A graph with placeholder x and the given (name, array) constants."""
        g = graph_pb2.GraphDef()
        node(g, "x", "Placeholder", dtype=F, shape=("shape", list(x)))
        for cname, arr in consts:
            const(g, cname, arr)
        cases[name] = g
        return g

    i32 = lambda v: np.array(v, np.int32)  # noqa: E731
    f = lambda v: np.array(v, np.float32)  # noqa: E731

    g = case("pad_paddings", ("p", i32([[0, 0], [1, 1]])))
    node(g, "op", "Pad", ["x", "p"], T=F)
    g = case("mirror_pad_symmetric", ("p", i32([[0, 0], [5, 0], [0, 0], [0, 0]])))
    node(g, "op", "MirrorPad", ["x", "p"], T=F, mode=b"SYMMETRIC")
    g = case("mirror_pad_mode", ("p", i32([[0, 0], [1, 0], [0, 0], [0, 0]])))
    node(g, "op", "MirrorPad", ["x", "p"], T=F, mode=b"WRAP")
    g = case("slice_begin_size", ("b", i32([0, 0])), ("s", i32([1, 1])))
    node(g, "op", "Slice", ["x", "b", "s"], T=F)
    g = case("strided_slice_lengths", ("b", i32([0, 0])), ("e", i32([1])), ("s", i32([1, 1])))
    node(g, "op", "StridedSlice", ["x", "b", "e", "s"], T=F)
    g = case("strided_slice_ellipses", ("b", i32([0, 0])), ("e", i32([1, 1])), ("s", i32([1, 1])))
    node(g, "op", "StridedSlice", ["x", "b", "e", "s"], T=F, ellipsis_mask=3)
    g = case("strided_slice_too_many", ("b", i32([0] * 5)), ("e", i32([1] * 5)), ("s", i32([1] * 5)))
    node(g, "op", "StridedSlice", ["x", "b", "e", "s"], T=F)
    g = case("strided_slice_zero_stride", ("b", i32([0])), ("e", i32([1])), ("s", i32([0])))
    node(g, "op", "StridedSlice", ["x", "b", "e", "s"], T=F)
    g = case("gather_batch_dims", ("i", i32([[0, 1], [1, 0], [0, 0]])), ("a", i32(1)))
    node(g, "op", "GatherV2", ["x", "i", "a"], Tparams=F, Tindices=I, batch_dims=1)
    g = case("range_not_scalar", ("s", f([])), ("l", f(4)), ("d", f(1)))
    node(g, "op", "Range", ["s", "l", "d"], Tidx=F)
    g = case("range_zero_delta", ("s", f(0)), ("l", f(4)), ("d", f(0)))
    node(g, "op", "Range", ["s", "l", "d"], Tidx=F)
    g = case("range_too_many", ("s", f(0)), ("l", f(1e9)), ("d", f(1)))
    node(g, "op", "Range", ["s", "l", "d"], Tidx=F)
    g = case("split_num_split", ("a", i32(1)))
    node(g, "op", "Split", ["a", "x"], T=F, num_split=0)
    g = case("split_uneven", ("a", i32(1)))
    node(g, "op", "Split", ["a", "x"], T=F, num_split=3)
    # A zero dim splits into any number of parts: 2^40 of them must not be
    # allocated (issue 18; it was vec![0; 2^40], a capacity-overflow abort).
    g = case("split_zero_dim_huge", ("a", i32(1)), x=(2, 0, 4, 3))
    node(g, "op", "Split", ["a", "x"], T=F, num_split=2**40)
    # 2^20 parts fit the byte count of the check above but not the stages
    # after the import (more than 8 GB: tools/fuzz/tf_mutate.py).
    g = case("split_many", ("a", i32(1)), x=(2, 0, 4, 3))
    node(g, "op", "Split", ["a", "x"], T=F, num_split=2**20)
    g = case("unpack_huge", x=(2**40, 0))
    node(g, "op", "Unpack", ["x"], T=F, num=2**40, axis=0)
    g = case("one_hot_depth_empty", ("i", i32([0, 1])), ("d", i32([])), ("on", f(1)), ("off", f(0)))
    node(g, "op", "OneHot", ["i", "d", "on", "off"], T=F, axis=-1)
    g = case("one_hot_depth_negative", ("i", i32([0, 1])), ("d", i32(-1)), ("on", f(1)), ("off", f(0)))
    node(g, "op", "OneHot", ["i", "d", "on", "off"], T=F, axis=-1)
    g = case("one_hot_depth_huge", ("i", i32([0, 1])), ("d", i32(2**28)), ("on", f(1)), ("off", f(0)))
    node(g, "op", "OneHot", ["i", "d", "on", "off"], T=F, axis=-1)
    g = case("top_k_empty", ("k", i32([])))
    node(g, "op", "TopKV2", ["x", "k"], T=F)
    g = case("band_part_rank", ("lo", np.array(-1, np.int64).astype(np.int32)), ("hi", i32(0)), x=(4,))
    node(g, "op", "MatrixBandPart", ["x", "lo", "hi"], T=F)
    g = case("where_computed")
    node(g, "c", "Placeholder", dtype=B, shape=("shape", [4]))
    node(g, "op", "Where", ["c"], T=B)

    w = np.ones((3, 3, 3, 2), np.float32)
    g = case("conv_explicit_paddings", ("w", w))
    node(g, "op", "Conv2D", ["x", "w"], T=F, strides=[1, 1, 1, 1], padding=b"EXPLICIT",
         explicit_paddings=[1, 1])
    g = case("conv_filter_rank", ("w", np.ones((3, 3, 3), np.float32)))
    node(g, "op", "Conv2D", ["x", "w"], T=F, strides=[1, 1, 1, 1], padding=b"SAME")
    g = case("batch_norm_training", *[(k, np.ones(3, np.float32)) for k in ("sc", "of", "me", "va")])
    node(g, "op", "FusedBatchNormV3", ["x", "sc", "of", "me", "va"], T=F, U=F, is_training=True)
    g = case("deconv_sizes", ("s", i32([1, 2])), ("w", w))
    node(g, "op", "Conv2DBackpropInput", ["s", "w", "x"], T=F, strides=[1, 1, 1, 1], padding=b"SAME")
    g = case("deconv_filter_rank", ("s", i32([2, 4, 4, 2])), ("w", np.ones((3, 3, 2), np.float32)))
    node(g, "op", "Conv2DBackpropInput", ["s", "w", "x"], T=F, strides=[1, 1, 1, 1], padding=b"SAME")
    g = case("deconv_sizes_misfit", ("s", i32([2, 40, 40, 2])), ("w", np.ones((3, 3, 2, 3), np.float32)))
    node(g, "op", "Conv2DBackpropInput", ["s", "w", "x"], T=F, strides=[1, 1, 1, 1], padding=b"SAME")
    g = case("space_to_batch_disagree", ("b", i32([2, 2])), ("p", i32([[0, 0]])))
    node(g, "op", "SpaceToBatchND", ["x", "b", "p"], T=F)
    g = case("space_to_batch_multiple", ("b", i32([3, 3])), ("p", i32([[0, 0], [0, 0]])))
    node(g, "op", "SpaceToBatchND", ["x", "b", "p"], T=F)
    g = case("batch_to_space_batch", ("b", i32([3, 3])), ("c", i32([[0, 0], [0, 0]])))
    node(g, "op", "BatchToSpaceND", ["x", "b", "c"], T=F)
    g = case("depth_to_space_block")
    node(g, "op", "DepthToSpace", ["x"], T=F, block_size=0)
    g = case("depth_to_space_channels")
    node(g, "op", "DepthToSpace", ["x"], T=F, block_size=2)
    g = case("depth_to_space_huge_block")
    node(g, "op", "DepthToSpace", ["x"], T=F, block_size=2**32)
    g = case("space_to_depth_hw")
    node(g, "op", "SpaceToDepth", ["x"], T=F, block_size=3)
    g = case("space_to_depth_huge_block", x=(1, 0, 0, 3))
    node(g, "op", "SpaceToDepth", ["x"], T=F, block_size=2**32)
    g = case("resize_size", ("s", i32([0, 4])))
    node(g, "op", "ResizeBilinear", ["x", "s"], T=F)
    g = case("resize_exclusive", ("s", i32([8, 8])))
    node(g, "op", "ResizeNearestNeighbor", ["x", "s"], T=F, align_corners=True, half_pixel_centers=True)
    g = case("resize_dynamic_channels", ("s", i32([8, 8])), x=(1, 4, 4, -1))
    node(g, "op", "ResizeBilinear", ["x", "s"], T=F)
    g = case("resize_integer", ("s", i32([8, 8])))
    node(g, "xi", "Placeholder", dtype=I, shape=("shape", [1, 4, 4, 3]))
    node(g, "op", "ResizeBilinear", ["xi", "s"], T=I)
    g = case("bicubic_size", ("s", i32([8])))
    node(g, "op", "ResizeBicubic", ["x", "s"], T=F)
    g = case("bicubic_integer", ("s", i32([8, 8])))
    node(g, "xi", "Placeholder", dtype=I, shape=("shape", [1, 4, 4, 3]))
    node(g, "op", "ResizeBicubic", ["xi", "s"], T=I)
    g = case("bicubic_exclusive", ("s", i32([8, 8])))
    node(g, "op", "ResizeBicubic", ["x", "s"], T=F, align_corners=True, half_pixel_centers=True)
    for name, eq, nin in (("einsum_no_output", b"ab,bc", 2), ("einsum_three", b"ab,bc,cd->ad", 3),
                          ("einsum_labels", b"abcd->abce", 1), ("einsum_rank", b"abc->abc", 1),
                          ("einsum_diagonal", b"aabc->abc", 1), ("einsum_more_labels", b"abcde...->abcde", 1),
                          ("einsum_output_label", b"abcd,abcd->abcz", 2)):
        g = case(name)
        node(g, "op", "Einsum", ["x"] * nin, T=F, N=nin, equation=eq)

    # Nodes without their inputs or values, and what needs static shapes
    # (`x` of shape [?, ?, 4, 3] here).
    g = case("const_no_value")
    node(g, "op", "Const", dtype=F)
    g = case("concat_v2_no_inputs")
    node(g, "op", "ConcatV2", [], T=F, N=0)
    g = case("concat_no_inputs")
    node(g, "op", "Concat", [], T=F, N=0)
    g = case("concat_only_axis", ("a", i32(0)))
    node(g, "op", "ConcatV2", ["a"], T=F, N=0)
    g = case("pad_v2_computed", ("p", i32([[0, 0], [1, 1], [1, 1], [0, 0]])))
    node(g, "v", "Placeholder", dtype=F, shape=("shape", []))
    node(g, "op", "PadV2", ["x", "p", "v"], T=F)
    dyn = (-1, -1, 4, 3)
    g = case("unpack_dynamic", x=dyn)
    node(g, "op", "Unpack", ["x"], T=F, num=2, axis=0)
    g = case("split_dynamic", ("a", i32(0)), x=dyn)
    node(g, "op", "Split", ["a", "x"], T=F, num_split=2)
    g = case("split_v_dynamic", ("s", i32([1, -1])), ("a", i32(0)), x=dyn)
    node(g, "op", "SplitV", ["x", "s", "a"], T=F, num_split=2)
    g = case("cumsum_dynamic", ("a", i32(0)), x=dyn)
    node(g, "op", "Cumsum", ["x", "a"], T=F)
    g = case("band_part_dynamic", ("lo", i32(-1)), ("hi", i32(0)), x=(-1, -1))
    node(g, "op", "MatrixBandPart", ["x", "lo", "hi"], T=F)
    g = case("conv_same_dynamic", ("w", w), x=dyn)
    node(g, "op", "Conv2D", ["x", "w"], T=F, strides=[1, 1, 1, 1], padding=b"SAME")
    g = case("conv_dynamic_filter")
    node(g, "w", "Placeholder", dtype=F, shape=("shape", [-1, 3, 3, 2]))
    node(g, "op", "Conv2D", ["x", "w"], T=F, strides=[1, 1, 1, 1], padding=b"VALID")
    g = case("depthwise_dynamic_filter")
    node(g, "w", "Placeholder", dtype=F, shape=("shape", [3, 3, -1, 1]))
    node(g, "op", "DepthwiseConv2dNative", ["x", "w"], T=F, strides=[1, 1, 1, 1], padding=b"VALID")
    g = case("strided_slice_negative_dynamic", ("b", i32([-1])), ("e", i32([0])), ("s", i32([1])), x=dyn)
    node(g, "op", "StridedSlice", ["x", "b", "e", "s"], T=F, shrink_axis_mask=1)
    g = case("strided_slice_dynamic_new_axis", ("b", i32([0])), ("e", i32([1])), ("s", i32([1])), x=dyn)
    node(g, "op", "StridedSlice", ["x", "b", "e", "s"], T=F, new_axis_mask=1)
    g = case("einsum_dynamic", x=dyn)
    node(g, "op", "Einsum", ["x", "x"], T=F, N=2, equation=b"abcd,abcd->abc")
    g = case("space_to_batch_dynamic", ("b", i32([2, 2])), ("p", i32([[0, 0], [0, 0]])), x=dyn)
    node(g, "op", "SpaceToBatchND", ["x", "b", "p"], T=F)

    for name, g in cases.items():
        with open(os.path.join(out_dir, name + ".pb"), "wb") as fh:
            fh.write(g.SerializeToString())
    print(f"wrote {len(cases)} graphs to testdata/tf/op_errors")


def small_types():
    """The 8-, 4- and 2-bit element types (lit-tests/frontends/onnx-small-types.test):
    casts to float8 saturating (the default) and not, to int4 (out of range is 0),
    and packed int4 / float4 / uint2 initializers read back through casts. Fixed
    inputs (no rng), so this can run alone."""
    x = np.array([0.3, -1.7, 9.2, 500.0, -1e6, np.inf, np.nan, 70000.0], np.float32)
    T = TensorProto
    inits = [
        helper.make_tensor("w4", T.INT4, [5], [-8, -1, 0, 3, 7]),
        helper.make_tensor("f4", T.FLOAT4E2M1, [3], [0.5, -6.0, 1.5]),
        helper.make_tensor("u2", T.UINT2, [5], [0, 1, 2, 3, 1]),
    ]
    nodes = [
        helper.make_node("Cast", ["x"], ["s8"], name="sat", to=T.FLOAT8E4M3FN),
        helper.make_node("Cast", ["s8"], ["y_sat"], name="sat_back", to=T.FLOAT),
        helper.make_node("Cast", ["x"], ["n8"], name="nosat", to=T.FLOAT8E5M2, saturate=0),
        helper.make_node("Cast", ["n8"], ["y_nosat"], name="nosat_back", to=T.FLOAT),
        helper.make_node("Cast", ["x"], ["i4"], name="int4", to=T.INT4),
        helper.make_node("Cast", ["i4"], ["y_int4"], name="int4_back", to=T.INT8),
        helper.make_node("Cast", ["w4"], ["y_w4"], name="w4_back", to=T.INT8),
        helper.make_node("Cast", ["f4"], ["y_f4"], name="f4_back", to=T.FLOAT),
        helper.make_node("Cast", ["u2"], ["y_u2"], name="u2_back", to=T.UINT8),
    ]
    m = model(
        nodes,
        [vi("x", [8])],
        [vi("y_sat", [8]), vi("y_nosat", [8]), vi("y_int4", [8], T.INT8),
         vi("y_w4", [5], T.INT8), vi("y_f4", [3]), vi("y_u2", [5], T.UINT8)],
        inits,
        opset=23,
    )
    save_onnx("small_types", m, [("x", x)], check=False)


def geometry():
    """CenterCropPad (target shape an initializer: an attribute) and AffineGrid
    (size a graph input: a graph.specialize), lit-tests/frontends/onnx-geometry.test;
    geometry_bad_align has align_corners = 2, which the importer refuses."""
    nodes = [
        helper.make_node("CenterCropPad", ["x", "shape"], ["c"], name="ccp", axes=[0, -1]),
        helper.make_node("AffineGrid", ["theta", "size"], ["g"], name="ag", align_corners=1),
    ]
    shape = numpy_helper.from_array(np.array([3, 6], np.int64), "shape")
    m = model(
        nodes,
        [vi("x", [4, 3, 5]), vi("theta", [2, 2, 3]), vi("size", [4], TensorProto.INT64)],
        [vi("c", [3, 3, 6]), vi("g", [2, 3, 4, 2])],
        inits=[shape],
        opset=20,
    )
    r = np.random.default_rng(16)  # its own generator: the same bytes when run alone
    x, theta = r.standard_normal((4, 3, 5)), r.standard_normal((2, 2, 3))
    ins = [("x", x.astype(np.float32)), ("theta", theta.astype(np.float32)), ("size", np.array([2, 1, 3, 4], np.int64))]
    save_onnx("geometry", m, ins)
    nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["g"], name="ag", align_corners=2)]
    size = numpy_helper.from_array(np.array([1, 1, 2, 2], np.int64), "size")
    m = model(nodes, [vi("theta", [1, 2, 3])], [vi("g", [1, 2, 2, 2])], inits=[size], opset=20)
    save_onnx("geometry_bad_align", m, check=False)


def small_gaps():
    """Issue 16's small gaps (lit-tests/frontends/onnx-small-gaps.test): Dropout
    with the ratio a graph input (inference: identity, mask all true), Celu on
    f16, ReduceMax on bool, TfIdfVectorizer, and the ai.onnx.ml ops Binarizer,
    ArrayFeatureExtractor and TreeEnsemble; plus one model per import
    diagnostic. Its own generator (no shared rng), so this can run alone."""
    T = TensorProto
    r = np.random.default_rng(1616)
    ml = lambda op, ins, outs, **kw: helper.make_node(op, ins, outs, domain="ai.onnx.ml", **kw)
    f32 = lambda v: numpy_helper.from_array(np.array(v, np.float32))
    nodes = [
        helper.make_node("Dropout", ["x", "ratio"], ["d", "mask"], name="drop"),
        helper.make_node("Celu", ["h"], ["celu"], name="celu", alpha=2.0),
        helper.make_node("ReduceMax", ["b", "axes"], ["bmax"], name="bmax", keepdims=0),
        helper.make_node(
            "TfIdfVectorizer", ["tok"], ["tfidf"], name="tfidf", mode="TFIDF",
            min_gram_length=1, max_gram_length=2, max_skip_count=1,
            ngram_counts=[0, 4], ngram_indexes=[0, 1, 2, 3, 4, 5, 6],
            pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7],
            weights=[1.0, 0.5, 2.0, 1.0, 3.0, 1.0, 0.25],
        ),
        ml("Binarizer", ["x"], ["bin"], name="bin", threshold=0.25),
        ml("ArrayFeatureExtractor", ["x", "cols"], ["afe"], name="afe"),
        ml(
            "TreeEnsemble", ["feat"], ["trees"], name="trees", n_targets=2,
            aggregate_function=1, tree_roots=[0, 2],
            nodes_modes=numpy_helper.from_array(np.array([0, 6, 3], np.uint8)),
            nodes_featureids=[0, 1, 1],
            nodes_splits=numpy_helper.from_array(np.array([0.5, np.nan, 2.0])),
            nodes_truenodeids=[0, 1, 3], nodes_falsenodeids=[1, 2, 4],
            nodes_trueleafs=[1, 1, 1], nodes_falseleafs=[0, 1, 1],
            nodes_missing_value_tracks_true=[0, 1, 0],
            leaf_targetids=[0, 1, 0, 1, 0],
            leaf_weights=numpy_helper.from_array(np.array([2.0, 4.0, 8.0, 6.0, 10.0])),
            membership_values=numpy_helper.from_array(np.array([1.0, 3.0, np.nan])),
        ),
    ]
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    g = helper.make_graph(
        nodes, "g",
        [vi("x", [3, 4]), vi("ratio", [], T.FLOAT), vi("h", [5], T.FLOAT16), vi("b", [3, 2], T.BOOL),
         vi("tok", [2, 6], T.INT64), vi("cols", [2], T.INT64), vi("feat", [4, 2], T.DOUBLE)],
        [vi("d", [3, 4]), vi("mask", [3, 4], T.BOOL), vi("celu", [5], T.FLOAT16), vi("bmax", [3], T.BOOL),
         vi("tfidf", [2, 7]), vi("bin", [3, 4]), vi("afe", [3, 2]), vi("trees", [4, 2], T.DOUBLE)],
        [axes],
    )
    m = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)],
        producer_name="ge tools/gen_test_models.py", ir_version=10,
    )
    ins = [
        ("x", r.standard_normal((3, 4)).astype(np.float32)),
        ("ratio", np.array(0.7, np.float32)),
        ("h", np.array([-3.0, -0.5, 0.0, 0.5, 3.0], np.float16)),
        ("b", np.array([[True, False], [False, False], [True, True]])),
        ("tok", np.array([[1, 5, 6, 3, 3, 7], [8, 6, 7, 5, 6, 8]], np.int64)),
        ("cols", np.array([3, 0], np.int64)),
        ("feat", np.array([[0, 3], [1, 3], [1, np.nan], [np.nan, 0]])),
    ]
    save_onnx("small_gaps", m, ins)

    def bad(name, node, inputs, outputs, opsets=(("", 21),), inits=()):
        g = helper.make_graph([node], "g", inputs, outputs, list(inits))
        m = helper.make_model(
            g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
            producer_name="ge tools/gen_test_models.py", ir_version=10,
        )
        save_onnx(name, m, check=False)

    x, y = [vi("x", [3, 4]), vi("r", [], T.FLOAT)], [vi("y", [3, 4])]
    train = numpy_helper.from_array(np.array(True), "t")
    bad("small_gaps_dropout_training", helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop"),
        x, y, inits=[train, numpy_helper.from_array(np.array(0.3, np.float32), "r")])
    bad("small_gaps_dropout_training_ratio", helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop"),
        x, y, inits=[train])
    bad("small_gaps_tfidf_strings",
        helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf", mode="TF", min_gram_length=1,
                         max_gram_length=1, max_skip_count=0, ngram_counts=[0], ngram_indexes=[0],
                         pool_strings=["a"]),
        [vi("x", [3], T.INT64)], [vi("y", [1])])
    bad("small_gaps_tfidf_mode",
        helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf", mode="BM25", min_gram_length=1,
                         max_gram_length=1, max_skip_count=0, ngram_counts=[0], ngram_indexes=[0],
                         pool_int64s=[1]),
        [vi("x", [3], T.INT64)], [vi("y", [1])])
    tree = dict(
        n_targets=1, tree_roots=[0], nodes_modes=numpy_helper.from_array(np.array([0], np.uint8)),
        nodes_featureids=[0], nodes_splits=f32([0.5]), nodes_truenodeids=[0], nodes_falsenodeids=[0],
        nodes_trueleafs=[1], nodes_falseleafs=[1], leaf_targetids=[0], leaf_weights=f32([1.0]),
    )
    ml_io = ([vi("x", [2, 1])], [vi("y", [2, 1])], (("", 21), ("ai.onnx.ml", 5)))
    bad("small_gaps_tree_post", ml("TreeEnsemble", ["x"], ["y"], name="trees", post_transform=2, **tree), *ml_io)
    bad("small_gaps_tree_aggregate", ml("TreeEnsemble", ["x"], ["y"], name="trees", aggregate_function=7, **tree),
        *ml_io)
def col2im():
    """Col2Im (lit-tests/frontends/onnx-col2im.test): 2-D with pads, strides and
    dilations, block_shape an initializer (an attribute) and image_shape a graph
    input (a graph.specialize); col2im_int has int32 columns, which the importer
    refuses (float types only)."""
    nodes = [
        helper.make_node(
            "Col2Im", ["x", "image", "block"], ["y"], name="c2i",
            pads=[1, 0, 0, 1], strides=[2, 1], dilations=[1, 2],
        )
    ]
    block = numpy_helper.from_array(np.array([2, 3], np.int64), "block")
    # rows: (5 + 1 + 0 - 2) / 2 + 1 = 3; cols: (6 + 0 + 1 - 5) / 1 + 1 = 3
    m = model(
        nodes,
        [vi("x", [2, 12, 9]), vi("image", [2], TensorProto.INT64)],
        [vi("y", [2, 2, 5, 6])],
        inits=[block],
        opset=18,
    )
    r = np.random.default_rng(161)  # its own generator: the same bytes when run alone
    ins = [("x", r.standard_normal((2, 12, 9)).astype(np.float32)), ("image", np.array([5, 6], np.int64))]
    save_onnx("col2im", m, ins)
    image = numpy_helper.from_array(np.array([3, 3], np.int64), "image")
    nodes = [helper.make_node("Col2Im", ["x", "image", "block"], ["y"], name="c2i")]
    m = model(
        nodes, [vi("x", [1, 4, 4], TensorProto.INT32)], [vi("y", [1, 1, 3, 3], TensorProto.INT32)],
        inits=[image, numpy_helper.from_array(np.array([2, 2], np.int64), "block")], opset=18,
    )
    save_onnx("col2im_int", m, check=False)


def max_unpool():
    """MaxPool with its Indices output (1-D: through a neutral H dim;
    storage_order = 1) into MaxUnpool with a constant output_shape
    (lit-tests/frontends/onnx-max-unpool.test); max_pool_order has
    storage_order = 2, which the importer refuses; max_pool_indices_3d pools
    a 3-D input (column-major indices) and unpools it."""
    nodes = [
        helper.make_node("MaxPool", ["x"], ["y", "i"], name="mp", kernel_shape=[2], strides=[2], storage_order=1),
        helper.make_node("MaxUnpool", ["y", "i", "shape"], ["u"], name="mu", kernel_shape=[2], strides=[2]),
    ]
    shape = numpy_helper.from_array(np.array([1, 2, 7], np.int64), "shape")
    m = model(
        nodes,
        [vi("x", [1, 2, 6])],
        [vi("y", [1, 2, 3]), vi("i", [1, 2, 3], TensorProto.INT64), vi("u", [1, 2, 7])],
        inits=[shape],
        opset=22,
    )
    r = np.random.default_rng(162)  # its own generator: the same bytes when run alone
    save_onnx("max_unpool", m, [("x", r.standard_normal((1, 2, 6)).astype(np.float32))])
    nodes = [helper.make_node("MaxPool", ["x"], ["y", "i"], name="mp", kernel_shape=[2, 2], storage_order=2)]
    m = model(nodes, [vi("x", [1, 1, 3, 3])], [vi("y", [1, 1, 2, 2]), vi("i", [1, 1, 2, 2], TensorProto.INT64)], opset=22)
    save_onnx("max_pool_order", m, check=False)
    # 3-D: column-major indices with a pad and strides; row-major ones unpooled again.
    nodes = [
        helper.make_node(
            "MaxPool", ["x"], ["ya", "ia"], name="mpa", kernel_shape=[2, 2, 2], strides=[1, 2, 2],
            pads=[0, 1, 0, 0, 0, 1], storage_order=1,
        ),
        helper.make_node("MaxPool", ["x"], ["yb", "ib"], name="mpb", kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
        helper.make_node("MaxUnpool", ["yb", "ib"], ["u"], name="mu", kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
    ]
    m = model(
        nodes,
        [vi("x", [2, 2, 4, 4, 4])],
        [
            vi("ya", [2, 2, 3, 2, 2]),
            vi("ia", [2, 2, 3, 2, 2], TensorProto.INT64),
            vi("u", [2, 2, 4, 4, 4]),
        ],
        opset=22,
    )
    save_onnx("max_pool_indices_3d", m, [("x", r.standard_normal((2, 2, 4, 4, 4)).astype(np.float32))])


def vision_ops():
    """DeformConv, ConvTranspose on volumes and RoiAlign
    (lit-tests/frontends/onnx-vision-ops.test): deform_conv has a mask but no
    bias (the importer passes a zero bias), two groups and two offset groups;
    conv_transpose_3d has strides, output_padding, a bias and auto_pad
    SAME_UPPER; roi_align_10 is opset 10 (output_half_pixel, max)
    and roi_align_16 opset 16 (half_pixel, sampling_ratio 2); deform_conv_1d
    has a 1-D input, which the importer refuses."""
    r = np.random.default_rng(163)  # its own generator: the same bytes when run alone
    nodes = [
        helper.make_node(
            "DeformConv", ["x", "w", "offset", "", "mask"], ["y"], name="dc",
            kernel_shape=[2, 3], strides=[2, 1], pads=[1, 0, 0, 1], dilations=[1, 2], group=2, offset_group=2,
        )
    ]
    # rows: (5 + 1 + 0 - 2) / 2 + 1 = 3; cols: (6 + 0 + 1 - 5) / 1 + 1 = 3
    w = numpy_helper.from_array(r.standard_normal((4, 2, 2, 3)).astype(np.float32), "w")
    m = model(
        nodes,
        [vi("x", [1, 4, 5, 6]), vi("offset", [1, 24, 3, 3]), vi("mask", [1, 12, 3, 3])],
        [vi("y", [1, 4, 3, 3])],
        inits=[w],
        opset=19,
    )
    ins = [
        ("x", r.standard_normal((1, 4, 5, 6)).astype(np.float32)),
        ("offset", (2 * r.standard_normal((1, 24, 3, 3))).astype(np.float32)),
        ("mask", r.random((1, 12, 3, 3)).astype(np.float32)),
    ]
    save_onnx("deform_conv", m, ins)
    nodes = [helper.make_node("DeformConv", ["x", "w", "offset"], ["y"], name="dc")]
    m = model(
        nodes, [vi("x", [1, 1, 5]), vi("w", [1, 1, 2]), vi("offset", [1, 2, 4])], [vi("y", [1, 1, 4])], opset=19,
    )
    save_onnx("deform_conv_1d", m, check=False)
    nodes = [
        helper.make_node(
            "ConvTranspose", ["x", "w", "b"], ["y"], name="ct",
            strides=[2, 1, 2], output_padding=[1, 0, 0], auto_pad="SAME_UPPER",
        )
    ]
    # (onnx.reference's ConvTranspose splits the filter wrongly with groups:
    # the kernel test runtime/tests/suite/vision_kernels.rs covers those.)
    w = numpy_helper.from_array(r.standard_normal((4, 3, 2, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(r.standard_normal(3).astype(np.float32), "b")
    m = model(nodes, [vi("x", [2, 4, 2, 3, 4])], [vi("y", [2, 3, 4, 3, 8])], inits=[w, b], opset=17)
    save_onnx("conv_transpose_3d", m, [("x", r.standard_normal((2, 4, 2, 3, 4)).astype(np.float32))])
    rois = np.array([[0, 0, 7, 7], [1.5, 2.5, 6, 4], [-2, 3, 9, 12], [5, 5, 4, 4]], np.float32)
    idx = np.array([1, 0, 1, 0], np.int64)
    for opset, attrs in [
        (10, dict(mode="max", output_height=2, output_width=3, spatial_scale=0.5)),
        (16, dict(output_height=3, output_width=2, sampling_ratio=2)),
    ]:
        nodes = [helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], name="ra", **attrs)]
        oh, ow = attrs["output_height"], attrs["output_width"]
        m = model(
            nodes,
            [vi("x", [2, 3, 8, 8]), vi("rois", [4, 4]), vi("idx", [4], TensorProto.INT64)],
            [vi("y", [4, 3, oh, ow])],
            opset=opset,
        )
        ins = [("x", r.standard_normal((2, 3, 8, 8)).astype(np.float32)), ("rois", rois), ("idx", idx)]
        if opset == 10:
            # onnx.reference gives opset 10 the newer default (half_pixel); ONNX
            # defines opset 10 as output_half_pixel: the reference of the opset
            # 16 twin that says so.
            save_onnx(f"roi_align_{opset}", m)
            twin = helper.make_node(
                "RoiAlign", ["x", "rois", "idx"], ["y"], coordinate_transformation_mode="output_half_pixel", **attrs
            )
            m = model([twin], m.graph.input, m.graph.output, opset=16)
            save_onnx(f"roi_align_{opset}_twin", m, ins)
            for suffix in [f"in{i}.npy" for i in range(3)] + ["out0.npy"]:
                os.replace(
                    os.path.join(ONNX_DIR, f"roi_align_{opset}_twin.{suffix}"),
                    os.path.join(ONNX_DIR, f"roi_align_{opset}.{suffix}"),
                )
            os.remove(os.path.join(ONNX_DIR, f"roi_align_{opset}_twin.onnx"))
        else:
            save_onnx(f"roi_align_{opset}", m, ins)


def hard_swish():
    """HardSwish after a convolution, a depthwise convolution and a Gemm, and
    alone (lit-tests/frontends/onnx-hard-swish.test): the importer writes one
    graph.hard_swish per node and canonicalize folds the first three into
    the ops' `hard_swish` epilogue. Inputs reach the activation's corners
    (below -3, between, above 3). Its own generator (no shared rng)."""
    r = np.random.default_rng(1905)
    arr = lambda *shape, scale=1.0: (r.standard_normal(shape) * scale).astype(np.float32)
    inits = [
        numpy_helper.from_array(arr(16, 8, 3, 3, scale=0.6), "w"),
        numpy_helper.from_array(arr(16, scale=0.5), "b"),
        numpy_helper.from_array(arr(16, 1, 3, 3, scale=0.8), "dw"),
        numpy_helper.from_array(arr(16, scale=0.5), "db"),
        numpy_helper.from_array(arr(10, 16, scale=1.5), "gw"),
        numpy_helper.from_array(arr(10, scale=0.5), "gb"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("HardSwish", ["c"], ["hc"], name="hs_conv"),
        helper.make_node("Conv", ["hc", "dw", "db"], ["d"], name="dwconv", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=[2, 2], group=16),
        helper.make_node("HardSwish", ["d"], ["hd"], name="hs_dw"),
        helper.make_node("GlobalAveragePool", ["hd"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "gw", "gb"], ["g"], name="fc", transB=1),
        helper.make_node("HardSwish", ["g"], ["y"], name="hs_fc"),
        helper.make_node("HardSwish", ["z"], ["hz"], name="hs_alone"),
    ]
    m = model(nodes, [vi("x", [1, 8, 6, 6]), vi("z", [2, 7])], [vi("y", [1, 10]), vi("hz", [2, 7])],
              inits=inits, opset=14)
    z = np.array([[-5.0, -3.0, -1.5, -0.0, 0.0, 1.5, 3.0], [5.0, np.inf, -np.inf, np.nan, 2.9, -2.9, 0.25]],
                 np.float32)
    save_onnx("hard_swish", m, [("x", arr(1, 8, 6, 6, scale=2.0)), ("z", z)])


def relu_nan():
    """Relu keeps NaN (as numpy's `maximum` in onnx.reference and torch's relu)
    wherever the runtime fuses it (lit-tests/frontends/onnx-relu-nan.test): a
    convolution's epilogue, a depthwise convolution's (the lanes kernel), a
    convolution + residual add + relu, a batch norm + relu, a Gemm's
    epilogue, and a relu alone. x holds a NaN pixel, so each convolution's
    outputs around it are NaN before the relu; z holds NaN, +-inf and -0."""
    r = np.random.default_rng(2612)
    arr = lambda *shape, scale=1.0: (r.standard_normal(shape) * scale).astype(np.float32)
    inits = [
        numpy_helper.from_array(arr(16, 8, 3, 3, scale=0.5), "w"),
        numpy_helper.from_array(arr(16, scale=0.5), "b"),
        numpy_helper.from_array(arr(16, 1, 3, 3, scale=0.8), "dw"),
        numpy_helper.from_array(arr(16, scale=0.5), "db"),
        numpy_helper.from_array(arr(16, 16, 1, 1, scale=0.3), "w2"),
        numpy_helper.from_array(arr(16, scale=0.5), "b2"),
        numpy_helper.from_array(arr(4, scale=1.0), "scale"),
        numpy_helper.from_array(arr(4, scale=1.0), "shift"),
        numpy_helper.from_array(arr(4, scale=0.5), "mean"),
        numpy_helper.from_array(np.abs(arr(4)) + 0.5, "var"),
        numpy_helper.from_array(arr(5, 36, scale=0.5), "gw"),
        numpy_helper.from_array(arr(5, scale=0.5), "gb"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["rc"], name="relu_conv"),
        helper.make_node("Conv", ["rc", "dw", "db"], ["d"], name="dwconv", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         group=16),
        helper.make_node("Relu", ["d"], ["rd"], name="relu_dw"),
        helper.make_node("Conv", ["rc", "w2", "b2"], ["e"], name="conv2", kernel_shape=[1, 1]),
        helper.make_node("Add", ["e", "rc"], ["s"], name="residual"),
        helper.make_node("Relu", ["s"], ["rs"], name="relu_residual"),
        helper.make_node("BatchNormalization", ["z", "scale", "shift", "mean", "var"], ["n"], name="bn"),
        helper.make_node("Relu", ["n"], ["rn"], name="relu_bn"),
        helper.make_node("Flatten", ["z"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "gw", "gb"], ["g"], name="fc", transB=1),
        helper.make_node("Relu", ["g"], ["rg"], name="relu_fc"),
        helper.make_node("Relu", ["z"], ["rz"], name="relu_alone"),
    ]
    m = model(nodes, [vi("x", [1, 8, 6, 6]), vi("z", [2, 4, 3, 3])],
              [vi("rc", [1, 16, 6, 6]), vi("rd", [1, 16, 6, 6]), vi("rs", [1, 16, 6, 6]),
               vi("rn", [2, 4, 3, 3]), vi("rg", [2, 5]), vi("rz", [2, 4, 3, 3])],
              inits=inits, opset=17)
    x = arr(1, 8, 6, 6, scale=2.0)
    x[0, 3, 1, 4] = np.nan
    z = arr(2, 4, 3, 3, scale=2.0)
    z[0, 1, 2, 0] = np.nan
    z[1, 0, 0, 0] = -0.0
    z[1, 2, 1, 1] = np.inf
    z[1, 3, 2, 2] = -np.inf
    save_onnx("relu_nan", m, [("x", x), ("z", z)])


def topk_run_time_k():
    """TopK with K read at run time (a graph input), a detector's pattern
    (lit-tests/dynamic/topk-run-time-k.test): the boxes gathered by the
    indices plus the values (the two results share one size symbol), and
    NonMaxSuppression over the top K (its count bounded by K's bound, the
    scores' length 100). Distinct random scores: no ties in the ordering."""
    r = np.random.default_rng(733)
    nodes = [
        helper.make_node("TopK", ["s", "k"], ["v", "i"], name="topk"),
        helper.make_node("Squeeze", ["i", "ax0"], ["i1"], name="sq_i"),
        helper.make_node("Gather", ["b", "i1"], ["bk"], name="gather_boxes", axis=0),
        helper.make_node("Squeeze", ["v", "ax0"], ["v1"], name="sq_v"),
        helper.make_node("Unsqueeze", ["v1", "ax1"], ["v2"], name="unsq_v"),
        helper.make_node("Add", ["bk", "v2"], ["y"], name="boxes_plus_scores"),
        helper.make_node("Unsqueeze", ["bk", "ax0"], ["nb"], name="nms_boxes"),
        helper.make_node("Unsqueeze", ["v", "ax0"], ["ns"], name="nms_scores"),
        helper.make_node("NonMaxSuppression", ["nb", "ns", "max", "iou"], ["sel"], name="nms"),
    ]
    inits = [
        numpy_helper.from_array(np.array([0], np.int64), "ax0"),
        numpy_helper.from_array(np.array([1], np.int64), "ax1"),
        numpy_helper.from_array(np.array([6], np.int64), "max"),
        numpy_helper.from_array(np.array([0.1], np.float32), "iou"),
    ]
    m = model(nodes, [vi("s", [1, 100]), vi("b", [100, 4]), vi("k", [1], TensorProto.INT64)],
              [vi("y", ["n", 4]), vi("sel", ["m", 3], TensorProto.INT64)], inits=inits, opset=17)
    s = r.permutation(100).astype(np.float32).reshape(1, 100) / 100
    xy = r.random((100, 2)).astype(np.float32) * 4
    b = np.concatenate([xy, xy + r.random((100, 2)).astype(np.float32) * 3 + 2], axis=1)
    save_onnx("topk_run_time_k", m, [("s", s), ("b", b), ("k", np.array([12], np.int64))])
    # Other values of K for the same plan: 3, and 101 (above the axis' 100).
    for k in (3, 101):
        np.save(os.path.join(ONNX_DIR, f"topk_run_time_k.k{k}.npy"), np.array([k], np.int64))


def e8m0_and_random():
    """FLOAT8E8M0 (opset 24 Cast with round_mode; lit-tests/frontends/onnx-e8m0.test)
    and the random ops (lit-tests/frontends/onnx-random.test). cast_e8m0 casts to
    e8m0 rounding up (the default), down without saturation and to nearest, reads each
    back as f32, and reads an e8m0 initializer; random_ops draws with every random op
    (seeded, so ge's runs repeat; no reference: no other generator draws ge's numbers).
    Fixed inputs (no rng), so this can run alone."""
    T = TensorProto
    x = np.array([0.0, 0.124, 1.1, 1.5, 3.0, -2.0, 3.0e38, np.inf], np.float32)
    init = helper.make_tensor("w", T.FLOAT8E8M0, [3], [0, 127, 254], raw=False)
    nodes = [
        helper.make_node("Cast", ["x"], ["up"], name="up", to=T.FLOAT8E8M0),
        helper.make_node("Cast", ["up"], ["y_up"], name="up_back", to=T.FLOAT),
        helper.make_node("Cast", ["x"], ["down"], name="down", to=T.FLOAT8E8M0,
                         round_mode="down", saturate=0),
        helper.make_node("Cast", ["down"], ["y_down"], name="down_back", to=T.FLOAT),
        helper.make_node("Cast", ["x"], ["near"], name="near", to=T.FLOAT8E8M0,
                         round_mode="nearest", saturate=0),
        helper.make_node("Cast", ["near"], ["y_near"], name="near_back", to=T.FLOAT),
        helper.make_node("Cast", ["w"], ["y_w"], name="w_back", to=T.FLOAT),
    ]
    m = model(
        nodes,
        [vi("x", [8])],
        [vi("y_up", [8]), vi("y_down", [8]), vi("y_near", [8]), vi("y_w", [3])],
        [init],
        opset=24,
    )
    save_onnx("cast_e8m0", m, [("x", x)], check=False)
    nodes = [
        helper.make_node("RandomUniform", [], ["u"], name="u", shape=[3, 4], seed=1.0),
        helper.make_node("RandomUniformLike", ["p"], ["ul"], name="ul", low=-2.0, high=3.0,
                         seed=2.0),
        helper.make_node("RandomNormal", [], ["n"], name="n", shape=[2, 3], mean=5.0,
                         scale=0.5, seed=3.0, dtype=T.DOUBLE),
        helper.make_node("RandomNormalLike", ["p"], ["nl"], name="nl", dtype=T.FLOAT16),
        helper.make_node("Bernoulli", ["p"], ["b"], name="b", seed=4.0, dtype=T.INT32),
        helper.make_node("Multinomial", ["logits"], ["k"], name="k", sample_size=6, seed=5.0,
                         dtype=T.INT64),
    ]
    m = model(
        nodes,
        [vi("p", [2, 5]), vi("logits", [2, 3])],
        [vi("u", [3, 4]), vi("ul", [2, 5]), vi("n", [2, 3], T.DOUBLE),
         vi("nl", [2, 5], T.FLOAT16), vi("b", [2, 5], T.INT32), vi("k", [2, 6], T.INT64)],
        opset=22,
    )
    save_onnx("random_ops", m)
    p = np.array([[0.0, 0.25, 0.5, 0.75, 1.0], [0.1, 0.2, 0.3, 0.9, 1.0]], np.float32)
    logits = np.log(np.array([[0.2, 0.8, 1e-30], [1.0, 1.0, 1.0]], np.float32))
    np.save(os.path.join(ONNX_DIR, "random_ops.in0.npy"), p)
    np.save(os.path.join(ONNX_DIR, "random_ops.in1.npy"), logits)


def fuzz_findings():
    """Models that made the importer panic, each cut down from a mutant of an
    ONNX node test that tools/fuzz/onnx_mutate.py found (docs/security.md,
    "Structure-aware mutation"): each must now fail with one line
    (lit-tests/frontends/onnx-fuzz-findings.test)."""
    T = TensorProto

    def bad(name, node, inputs, outputs, opset=23):
        g = helper.make_graph([node], "g", inputs, outputs)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="ge tools/gen_test_models.py", ir_version=10)
        save_onnx(name, m, check=False)

    # Grouped-query Attention (6 query heads, 2 key heads) whose V is 3-D:
    # repeating V's heads indexed its fourth dim.
    bad("fuzz_attention_v_rank3", helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn"),
        [vi("q", [2, 6, 4, 8]), vi("k", [2, 2, 6, 8]), vi("v", [2, 3, 6])], [vi("y", [2, 6, 4, 8])])
    # Split-18 with 3 outputs and num_outputs = 2^40: the parts were made
    # before the count was checked (24 GB, then the OOM killer).
    bad("fuzz_split_num_outputs", helper.make_node("Split", ["x"], ["a", "b", "c"], name="split",
                                                   num_outputs=1 << 40),
        [vi("x", [6])], [vi("a", [2]), vi("b", [2]), vi("c", [2])], opset=18)

    # DepthToSpace with blocksize 2^40: its square wrapped to 0, and the
    # channel check divided by it.
    bad("fuzz_depth_to_space_blocksize", helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s",
                                                          blocksize=1 << 40),
        [vi("x", [1, 8, 2, 3])], [vi("y", [1, 2, 4, 6])], opset=13)

    # LRN over a window of 2^31 channels (alpha / size = 1): the importer
    # made a slice per tap. Every window holds all 3 channels.
    x = np.random.default_rng(32).standard_normal((1, 3, 2, 2)).astype(np.float32)
    lrn = helper.make_node("LRN", ["x"], ["y"], name="lrn", size=1 << 31, alpha=float(1 << 31))
    m = model([lrn], [vi("x", list(x.shape))], [vi("y", list(x.shape))], opset=13)
    y = x / (1 + (x.astype(np.float64) ** 2).sum(axis=1, keepdims=True)) ** 0.75
    save_with_refs("fuzz_lrn_huge_size", m, [x], [y.astype(np.float32)])

    # Range whose start is an empty tensor: read at index 0 (a panic).
    empty = numpy_helper.from_array(np.zeros([0], np.int64), "start")
    one, lim = (numpy_helper.from_array(np.array(v, np.int64), k) for k, v in (("delta", 1), ("limit", 4)))
    g = helper.make_graph([helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")],
                          "g", [], [vi("y", [4], T.INT64)], [empty, lim, one])
    save_onnx("fuzz_range_empty_start", helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)],
                                                         ir_version=10), check=False)

    # Causal Attention over 2100 positions (a 4.4M-element frontier: past
    # the importer's folding limit, so computed by ops, not made as a
    # constant — a mutant with 2^20 queries and keys took 24 GB). Against
    # onnx's reference.
    r = np.random.default_rng(33)
    q, k, v = (r.standard_normal((1, 1, 2100, 4)).astype(np.float32) for _ in range(3))
    att = helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn", is_causal=1)
    m = model([att], [vi(n, [1, 1, 2100, 4]) for n in "qkv"], [vi("y", [1, 1, 2100, 4])], opset=23)
    save_onnx("fuzz_attention_long_window", m, [("q", q), ("k", k), ("v", v)])

    # Convolutions with a column stride of 2^40 on a 1x1 map (a mutated TF
    # model's): the runtime split the padded input into its stride phases,
    # an 8 TB buffer. A dense one (its filter packed at load: the tap path)
    # and a depthwise one.
    r = np.random.default_rng(34)
    x = r.standard_normal((1, 2, 1, 1)).astype(np.float32)
    for name, w, group in (("fuzz_conv_huge_stride", r.standard_normal((8, 2, 1, 1)), 1),
                           ("fuzz_depthwise_huge_stride", r.standard_normal((2, 1, 3, 3)), 2)):
        w = numpy_helper.from_array(w.astype(np.float32), "w")
        pads = [0, 0, 0, 0] if group == 1 else [1, 1, 1, 1]
        conv = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", strides=[1, 1 << 40], group=group,
                                pads=pads)
        oc = w.dims[0]
        m = model([conv], [vi("x", [1, 2, 1, 1])], [vi("y", [1, oc, 1, 1])], inits=[w], opset=13)
        save_onnx(name, m, [("x", x)])

    # A u8 output of 2^27 elements (128 MiB): ge-run made a reference tensor
    # of it at 8 bytes an element without a budget check (a mutated TF Tile
    # asked for 7.5 GB and aborted).
    shape = numpy_helper.from_array(np.array([1 << 27], np.int64), "shape")
    g = helper.make_graph([helper.make_node("Expand", ["x", "shape"], ["y"], name="expand")], "g",
                          [vi("x", [1], T.UINT8)], [vi("y", [1 << 27], T.UINT8)], [shape])
    save_onnx("fuzz_u8_output_widened", helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                                                          ir_version=10), check=False)

    # Valid but absurd windows of 2^31 taps (SAME padding to match): the
    # pools walked every tap (or padded a plane to the window), a run that
    # did not end. Each output's window covers the whole input along the
    # huge axis, so the references are plain numpy reductions.
    big, r = 1 << 31, np.random.default_rng(31)
    x = r.standard_normal((1, 2, 6, 5)).astype(np.float32)
    avg = helper.make_node("AveragePool", ["x"], ["y"], name="avg", kernel_shape=[big, 2], auto_pad="SAME_LOWER")
    m = model([avg], [vi("x", list(x.shape))], [vi("y", list(x.shape))], opset=18)
    # Along W a window is columns ox-1, ox (SAME_LOWER pads the one extra
    # column at the start; padding does not count); along H every row.
    cols = [x[..., max(0, ox - 1):ox + 1] for ox in range(x.shape[3])]
    y = np.stack([c.mean(axis=(2, 3)) for c in cols], axis=-1)[:, :, None, :].repeat(x.shape[2], axis=2)
    save_with_refs("fuzz_avgpool_huge_window", m, [x], [y.astype(np.float32)])
    x = r.standard_normal((1, 2, 3, 20)).astype(np.float32)
    mx = helper.make_node("MaxPool", ["x"], ["y"], name="max", kernel_shape=[1, big], auto_pad="SAME_UPPER")
    m = model([mx], [vi("x", list(x.shape))], [vi("y", list(x.shape))], opset=18)
    y = x.max(axis=3, keepdims=True).repeat(x.shape[3], axis=3)
    save_with_refs("fuzz_maxpool_huge_window", m, [x], [y])
    x = r.standard_normal((1, 2, 2, 3, 4)).astype(np.float32)
    avg3 = helper.make_node("AveragePool", ["x"], ["y"], name="avg3", kernel_shape=[1, big, 1],
                            auto_pad="SAME_UPPER", count_include_pad=1)
    m = model([avg3], [vi("x", list(x.shape))], [vi("y", list(x.shape))], opset=18)
    # Every window holds the 3 rows and 2^31 - 3 padding cells, which count.
    y = (x.sum(axis=3, keepdims=True) / np.float32(big)).repeat(x.shape[3], axis=3)
    save_with_refs("fuzz_avgpool3d_huge_window", m, [x], [y.astype(np.float32)])


def main():
    # `gen_test_models.py NAME...` runs only the named generators (e.g. tf_list_errors).
    if sys.argv[1:]:
        for name in sys.argv[1:]:
            globals()[name]()
        return
    os.makedirs(ONNX_DIR, exist_ok=True)
    os.makedirs(TF_DIR, exist_ok=True)
    cnn = small_cnn()
    dyn_batch()
    external_data()
    control_flow()
    local_function()
    many_ops()
    bad_files(cnn)
    tf_models()
    huge_models()
    legacy_opsets()
    nd_indexing()
    einsum()
    named_io()
    small_types()
    geometry()
    small_gaps()
    col2im()
    max_unpool()
    e8m0_and_random()
    vision_ops()
    hard_swish()
    relu_nan()
    topk_run_time_k()
    tf_list_errors()
    tf_op_errors()
    fuzz_findings()


if __name__ == "__main__":
    main()
