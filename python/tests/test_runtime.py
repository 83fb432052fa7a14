"""ge.compile, ge.Model and ge.Session."""

import json
import threading

import numpy as np
import pytest

import ge
from ge import es


def small_graph(batch="B"):
    g = es.Graph("main")
    g.symbol_bound("B", 8)
    x = g.input("x", shape=(batch, 4))
    s = g.input("scale", shape=(4,))
    y = g.relu(x * s + 1.0)
    return g.build(y)


@pytest.fixture(scope="module")
def om_bytes():
    return ge.compile(small_graph(), op_compiler_cache_mode="disable")


def test_compile_module_and_run(om_bytes):
    assert isinstance(om_bytes, bytes) and len(om_bytes) > 0
    m = ge.Model(om_bytes)
    assert [n for n, _ in m.inputs] == ["arg0", "arg1"] or [n for n, _ in m.inputs] == ["x", "scale"]
    names = [n for n, _ in m.inputs]
    x = np.array([[1, -2, 3, -4], [0.5, 0.5, 0.5, 0.5]], np.float32)
    s = np.array([1, 2, 3, 4], np.float32)
    out = m.session().run({names[1]: s, names[0]: x})
    (y,) = out.values()
    np.testing.assert_allclose(y, np.maximum(x * s + 1, 0), rtol=1e-6)
    # By position, too; and Model.run is a one-shot session.
    (y2,) = m.run([x, s]).values()
    np.testing.assert_array_equal(y, y2)


def test_dynamic_shapes(om_bytes):
    m = ge.Model(om_bytes)
    sess = ge.Session(m)
    s = np.ones(4, np.float32)
    for b in (1, 3, 8):
        x = np.full((b, 4), 2.0, np.float32)
        (y,) = sess.run([x, s]).values()
        assert y.shape == (b, 4) and (y == 3).all()
    assert sess.plans_built >= 1
    with pytest.raises(ge.Error, match="bound|exceed"):
        sess.run([np.ones((9, 4), np.float32), s])


def test_input_errors(om_bytes):
    m = ge.Model(om_bytes)
    names = [n for n, _ in m.inputs]
    x, s = np.ones((2, 4), np.float32), np.ones(4, np.float32)
    with pytest.raises(ge.Error, match="missing input"):
        m.run({names[0]: x})
    with pytest.raises(ge.Error, match="no input 'nope'"):
        m.run({names[0]: x, names[1]: s, "nope": s})
    with pytest.raises(ge.Error, match="takes 2 inputs"):
        m.run([x])
    with pytest.raises(ge.Error, match="has no ge element type"):
        m.run([np.full((2, 4), "a"), s])
    with pytest.raises(ge.Error):
        m.run([np.ones((2, 5), np.float32), s])
    with pytest.raises(ge.Error, match="dtype"):
        m.run([np.ones((2, 4), np.complex64), s])
    with pytest.raises(ge.Error, match="dict"):
        m.run(42)


def test_non_contiguous_and_byteswapped_inputs(om_bytes):
    m = ge.Model(om_bytes)
    base = np.arange(32, dtype=np.float32).reshape(4, 8)
    x = base[:, ::2]  # a strided view
    s = np.ones(4, dtype=">f4")  # big-endian
    (y,) = m.run([x, s]).values()
    np.testing.assert_array_equal(y, np.maximum(np.ascontiguousarray(x) + 1, 0))


def test_contiguous_inputs_are_read_in_place(om_bytes):
    m = ge.Model(om_bytes)
    # The model's plan binds both input arenas to the caller's tensors.
    assert m.zero_copy_inputs == [True, True]
    x = np.array([[1, -2, 3, -4], [0.5, 0.5, 0.5, 0.5]], np.float32)
    s = np.array([1, 2, 3, 4], np.float32)
    want = np.maximum(x * s + 1, 0)
    names = [n for n, _ in m.inputs]
    before = ge._native._input_copies()
    for _ in range(3):
        (y,) = m.run({names[0]: x, names[1]: s}).values()
        np.testing.assert_allclose(y, want, rtol=1e-6)
    # Neither array was copied on the way in; and neither was written.
    assert ge._native._input_copies() == before
    np.testing.assert_array_equal(x, [[1, -2, 3, -4], [0.5, 0.5, 0.5, 0.5]])


def _misaligned_f32(values):
    """A C-contiguous, numpy-aligned float32 array whose data is not 8-byte aligned."""
    buf = np.zeros(values.nbytes + 8, np.uint8)
    off = next(o for o in (0, 4) if (buf.ctypes.data + o) % 8 == 4)
    a = buf[off:off + values.nbytes].view(np.float32).reshape(values.shape)
    a[...] = values
    assert a.flags.c_contiguous and a.flags.aligned and a.ctypes.data % 8 == 4
    return a


def test_inputs_that_cannot_be_read_in_place_are_copied_once(om_bytes):
    m = ge.Model(om_bytes)
    s = np.ones(4, np.float32)
    x = np.arange(8, dtype=np.float32).reshape(2, 4) - 3
    want = np.maximum(x + 1, 0)
    cases = {
        "strided": np.stack([x, x], axis=2)[:, :, 0],
        "byte-swapped": x.astype(">f4"),
        "misaligned": _misaligned_f32(x),
        "list": x.tolist(),
        # Another dtype that casts to the model's with numpy's same_kind rule.
        "float64": x.astype(np.float64),
        "int64": x.astype(np.int64),
        "float64 strided": np.stack([x, x], axis=2).astype(np.float64)[:, :, 0],
    }
    assert not cases["strided"].flags.c_contiguous
    for name, xi in cases.items():
        before = ge._native._input_copies()
        (y,) = m.run([xi, s]).values()
        assert ge._native._input_copies() == before + 1, name
        np.testing.assert_array_equal(y, want, err_msg=name)
    # A dtype that does not cast (complex to float) is refused, not converted.
    with pytest.raises(ge.Error, match="complex64"):
        m.run([x.astype(np.complex64), s])


def test_bad_models(tmp_path):
    with pytest.raises(ge.Error):
        ge.Model(b"not an om")
    with pytest.raises(ge.Error, match="cannot read"):
        ge.Model(str(tmp_path / "missing.om"))
    with pytest.raises(ge.Error, match="path of an .om or its bytes"):
        ge.Model(3.5)


def test_model_from_file_and_trace(om_bytes, tmp_path):
    p = tmp_path / "m.om"
    p.write_bytes(om_bytes)
    m = ge.Model(str(p), threads=2)
    assert m.soc == "Ascend910B" and "ge.Model" in repr(m)
    t = tmp_path / "trace.json"
    m.session().run([np.ones((2, 4), np.float32), np.ones(4, np.float32)], trace=str(t))
    events = json.loads(t.read_text())
    assert events  # Perfetto/Chrome trace events


def test_threads_share_a_model(om_bytes):
    m = ge.Model(om_bytes, threads=1)
    sess = m.session()
    s = np.ones(4, np.float32)
    results, errors = {}, []

    def work(i):
        try:
            x = np.full((1 + i % 8, 4), float(i), np.float32)
            for _ in range(20):
                (y,) = sess.run([x, s]).values()
                np.testing.assert_array_equal(y, x + 1)
            results[i] = True
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 8


def test_compile_with_atc_options(testdata, tmp_path):
    onnx_path = testdata / "onnx" / "small_cnn.onnx"
    out = tmp_path / "cnn"
    om = ge.compile(str(onnx_path), soc="Ascend310P", output=str(out), disable_reuse_memory=True,
                    enable_single_stream=True, precision_mode="must_keep_origin_dtype")
    assert (tmp_path / "cnn.om").read_bytes() == om
    m = ge.Model(om)
    assert m.soc == "Ascend310P"
    x = np.load(testdata / "onnx" / "small_cnn.in0.npy")
    want = np.load(testdata / "onnx" / "small_cnn.out0.npy")
    (got,) = m.run([x]).values()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_unbounded_symbol_compiles_and_runs_at_any_size():
    # No bound on N and no flag: the memory plan is made per concrete shape
    # at run time (issue 15), so sizes far apart run from one .om.
    g = es.Graph()
    x = g.input("x", shape=("N", 4))
    model = ge.Model(ge.compile(g.build(g.relu(x)), op_compiler_cache_mode="disable"))
    for n in (1, 70):
        a = np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)
        (out,) = model.run({"x": a}).values()
        np.testing.assert_array_equal(out, np.maximum(a, 0))

def test_compile_errors(testdata, tmp_path):
    mod = small_graph()
    with pytest.raises(ge.Error, match="no_such_flag"):
        ge.compile(mod, no_such_flag=1)
    with pytest.raises(ge.Error, match="precision_mode|possible values|invalid value"):
        ge.compile(mod, precision_mode="fastest")
    with pytest.raises(ge.Error, match="Ascend999"):
        ge.compile(mod, soc="Ascend999")
    with pytest.raises(ge.Error, match="not an option here"):
        ge.compile(mod, model="x.onnx")
    with pytest.raises(ge.Error, match="ge.Module or a path"):
        ge.compile(42)
    with pytest.raises(ge.Error):
        ge.compile(str(testdata / "onnx" / "not_onnx.onnx"))
