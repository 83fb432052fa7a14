"""ge.es: the graph builder generated from the op declarations."""

import inspect
import pathlib
import subprocess

import numpy as np
import pytest

import ge
from ge import es


def list_ops_of(ge_opt: str, dialects=("graph", "data")):
    out = subprocess.run([ge_opt, "--list-ops"], capture_output=True, text=True, check=True).stdout
    ops, dialect = set(), None
    for ln in out.splitlines():
        if ln and not ln.startswith(" ") and " — " in ln:
            dialect = ln.split(" — ")[0]
        elif ln.startswith("  ") and dialect in dialects:
            ops.add(ln.split()[0])
    return ops


def test_es_covers_exactly_the_ops_ge_opt_lists(ge_opt):
    listed = list_ops_of(ge_opt)
    methods = set(es.ops())
    excluded = set(es.EXCLUDED)
    assert not methods & excluded
    # Every graph/data op ge-opt lists has a method or a reason not to; no
    # method is for an op ge-opt does not list.
    assert methods | excluded == listed, (sorted(listed - methods - excluded), sorted(methods - listed))
    assert all(es.EXCLUDED.values())
    for name, op in es.OPS.items():
        assert callable(getattr(es.Graph, name)), op


def test_methods_have_typed_signatures_defaults_and_docs():
    sig = inspect.signature(es.Graph.conv2d)
    params = sig.parameters
    assert list(params)[:4] == ["self", "input", "filter", "bias"]
    assert params["bias"].default is None
    assert params["strides"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["strides"].default == [1, 1]
    doc = es.Graph.conv2d.__doc__
    assert "graph.conv2d" in doc and "strides" in doc and "Returns:" in doc
    # Required attributes are parameters without defaults.
    rm = inspect.signature(es.Graph.reduce_mean).parameters
    assert rm["axes"].default is inspect.Parameter.empty


def test_build_infer_and_run_with_the_interpreter():
    g = es.Graph("main")
    g.symbol_bound("B", 8)
    x = g.input("x", "tensor<Bx3x4x4xf32>")
    w = g.weight("conv.w", np.ones((2, 3, 3, 3), np.float32))
    y = g.conv2d(x, w, pads=[1, 1, 1, 1])
    assert y.type == "tensor<Bx2x4x4xf32>" and y.shape == ("B", 2, 4, 4) and y.dtype == "f32"
    z = g.relu(y * 0.5 - 1.0)
    top = g.topk(z, 2)
    assert top.values.shape == ("B", 2, 4, 2) and top.indices.dtype == "i64"
    cat = g.concat([z, z], axis=1)
    assert cat.shape == ("B", 4, 4, 4)
    m = g.build(z, cat)
    assert "ge.symbol_bounds" in m.print()
    xs = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    out = m.interpret([xs])
    assert out["out0"].shape == (2, 2, 4, 4)


def test_input_by_shape_and_operators():
    g = es.Graph()
    a = g.input("a", shape=("N", 4))
    b = g.input("b", shape=(None, 4), dtype="f16")
    assert a.type == "tensor<Nx4xf32>" and b.type == "tensor<?x4xf16>"
    c = -(2.0 * a + a / 3.0) % 5.0
    assert c.type == "tensor<Nx4xf32>"
    assert "graph.mod" in g.build(c).print()


def test_errors_are_ge_errors_naming_the_op():
    g = es.Graph()
    x = g.input("x", "tensor<2x3xf32>")
    w = g.input("w", "tensor<5x7xf32>")
    with pytest.raises(ge.Error, match=r"matmul.*graph.matmul.*tensor<2x3xf32>"):
        g.matmul(x, w)
    with pytest.raises(ge.Error, match="strides"):
        g.max_pool2d(x, kernel_shape=[2, 2], strides="wide")
    with pytest.raises(ge.Error, match="unexpected keyword|got an unexpected"):
        g.relu(x, no_such=1)
    with pytest.raises(ge.Error, match="Tensor"):
        g.relu(np.ones(3))
    other = es.Graph().input("o", "tensor<2x3xf32>")
    with pytest.raises(ge.Error, match="another graph"):
        g.add(x, other)
    with pytest.raises(ge.Error, match="invalid type"):
        g.input("bad", "tensor<2xf7>")
    with pytest.raises(ge.Error, match="no outputs"):
        es.Graph().finish()
    g.output(g.relu(x))
    g.finish()
    with pytest.raises(ge.Error, match="finished"):
        g.relu(x)


def test_enum_and_type_attributes():
    g = es.Graph()
    x = g.input("x", "tensor<2x3xf32>")
    assert g.cast(x, "f16").dtype == "f16"
    assert g.cast(x, np.int32).dtype == "i32"
    with pytest.raises(ge.Error):
        g.cast(x, "not-a-type")


def test_external_weights():
    g = es.Graph()
    g.set_weight_storage("external", "w.bin")
    x = g.input("x", "tensor<4xf32>")
    w = g.weight("w", np.arange(4, dtype=np.float32))
    g.output(x + w)
    m, weights = g.finish_with_weights()
    assert "#ge.external" in m.print()
    assert np.frombuffer(weights[:16], np.float32).tolist() == [0, 1, 2, 3]
    with pytest.raises(ge.Error):
        es.Graph().set_weight_storage("external")


def test_stubs_are_current():
    from ge._stubs import stub_text

    pyi = pathlib.Path(es.__file__).with_name("es.pyi")
    if not pyi.exists():
        # An installed wheel without its sources: compare with the repository's.
        pyi = pathlib.Path(__file__).resolve().parents[1] / "ge" / "es.pyi"
    assert pyi.read_text() == stub_text(), "run python/tools/gen_stubs.py"
    compile(pyi.read_text(), str(pyi), "exec")
