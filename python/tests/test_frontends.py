"""ge.import_onnx / ge.import_tf: paths, bytes, protobuf messages, errors."""

import numpy as np
import onnx
import pytest

import ge


def test_import_onnx_path_bytes_and_modelproto(testdata):
    p = testdata / "onnx" / "small_cnn.onnx"
    a = ge.import_onnx(str(p))
    b = ge.import_onnx(p.read_bytes())
    c = ge.import_onnx(onnx.load(str(p)))
    assert a.print() == b.print() == c.print()
    x = np.load(testdata / "onnx" / "small_cnn.in0.npy")
    want = np.load(testdata / "onnx" / "small_cnn.out0.npy")
    (got,) = a.interpret([x]).values()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_import_onnx_options(testdata):
    path = testdata / "onnx" / "dyn_batch.onnx"
    proto = onnx.load(str(path))
    name = proto.graph.input[0].name
    dyn = ge.import_onnx(str(path), func_name="net")
    assert dyn.functions() == ["net"]
    assert "BATCH" in dyn.walk("graph.func")[0].attributes["function_type"]
    fixed = ge.import_onnx(str(path), input_shapes={name: [3] + [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim[1:]]})
    assert "BATCH" not in fixed.walk("graph.func")[0].attributes["function_type"]
    with pytest.raises(ge.Error):
        ge.import_onnx(str(path), input_shapes={name: [1.5]})
    out_node = proto.graph.node[0].name or proto.graph.node[0].output[0]
    part = ge.import_onnx(str(path), outputs=[(out_node, 0)])
    assert part.functions() == ["main"]


def test_import_onnx_external_data_next_to_the_model(testdata):
    m = ge.import_onnx(str(testdata / "onnx" / "external_data.onnx"))
    x = np.load(testdata / "onnx" / "external_data.in0.npy")
    want = np.load(testdata / "onnx" / "external_data.out0.npy")
    (got,) = m.interpret([x]).values()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name,msg", [
    ("not_onnx.onnx", "not an ONNX model"),
    ("truncated.onnx", "truncated"),
    ("unknown_ops.onnx", "unsupported|unknown"),
    ("missing_initializer.onnx", "missing initializer"),
])
def test_import_onnx_errors(testdata, name, msg):
    with pytest.raises(ge.Error, match=msg):
        ge.import_onnx(str(testdata / "onnx" / name))


def test_import_onnx_bad_arguments(tmp_path):
    with pytest.raises(ge.Error, match="cannot read"):
        ge.import_onnx(str(tmp_path / "nope.onnx"))
    with pytest.raises(ge.Error, match="empty"):
        ge.import_onnx(b"")
    with pytest.raises(ge.Error, match="a model is"):
        ge.import_onnx(42)


def test_import_tf(testdata):
    p = testdata / "tf" / "shapes.pb"
    a = ge.import_tf(str(p), input_shapes={"x": ["B", 4, 4, 2]}, outputs=["out"])
    b = ge.import_tf(p.read_bytes(), input_shapes={"x": ["B", 4, 4, 2]}, outputs=["out"])
    assert a.print() == b.print()
    assert "B" in a.walk("graph.func")[0].attributes["function_type"]
    x = np.load(testdata / "tf" / "shapes.in0.npy")
    want = np.load(testdata / "tf" / "shapes.out0.npy")
    (got,) = ge.import_tf(str(p)).interpret([x]).values()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_import_tf_errors(testdata):
    with pytest.raises(ge.Error, match="truncated|not a TensorFlow"):
        ge.import_tf(str(testdata / "tf" / "truncated.pb"))
    with pytest.raises(ge.Error, match="not in the graph"):
        ge.import_tf(str(testdata / "tf" / "shapes.pb"), outputs=["no_such_node"])
