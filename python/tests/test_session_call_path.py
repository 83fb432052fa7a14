"""Session.run's per-call path (issue 20): the names resolved by the interned keys
made once, each output's array made from the dtype object cached per output and
lent to the run, the arrays of a call held in the session's scratch only while the
call runs. What must not change with it: any key order and key objects that are
equal but not the interned ones, the same errors for missing and extra keys after
good calls, a new array per output and call (never the previous call's), inputs of
another dtype or shape between calls, threads calling one session at once."""

import sys
import threading

import numpy as np
import pytest

import ge
from ge import es


def compile_graph(g, *outs):
    return ge.Model(ge.compile(g.build(*outs), op_compiler_cache_mode="disable"))


@pytest.fixture(scope="module")
def two_in_two_out():
    """y = x * s + 1 of shape (B, 4), t = s * 2 (f32); B up to 8."""
    g = es.Graph("main")
    g.symbol_bound("B", 8)
    x = g.input("x", shape=("B", 4))
    s = g.input("scale", shape=(4,))
    return compile_graph(g, x * s + 1.0, s * 2.0)


def want(x, s):
    return x * s + 1, s * 2


def test_keys_in_any_order_and_equal_but_not_interned(two_in_two_out):
    sess = two_in_two_out.session()
    x, s = np.arange(8, dtype=np.float32).reshape(2, 4), np.full(4, 3.0, np.float32)
    # Keys equal to the names but not the same objects: built at run time,
    # or of a str subclass.
    class Key(str):
        pass

    ks = "".join(["sc", "ale"])
    feeds = [{"x": x, "scale": s}, {"scale": s, "x": x}, {"x": x, ks: s}, {ks: s, "x": x}]
    feeds += [{Key("x"): x, Key("scale"): s}, {Key("scale"): s, Key("x"): x}]
    for feed in feeds:
        y, t = sess.run(feed).values()
        np.testing.assert_array_equal(y, want(x, s)[0])
        np.testing.assert_array_equal(t, want(x, s)[1])
    assert list(sess.run({"scale": s, "x": x})) == [n for n, _ in two_in_two_out.outputs]


def test_missing_and_extra_keys_after_good_calls(two_in_two_out):
    sess = two_in_two_out.session()
    x, s = np.ones((2, 4), np.float32), np.ones(4, np.float32)
    for _ in range(3):
        sess.run({"x": x, "scale": s})
        with pytest.raises(ge.Error, match="missing input 'scale'"):
            sess.run({"x": x})
        with pytest.raises(ge.Error, match="no input 'nope'"):
            sess.run({"x": x, "scale": s, "nope": s})
        with pytest.raises(ge.Error, match="no input 'nope'"):
            sess.run({"x": x, "nope": s})
        with pytest.raises(ge.Error, match="takes 2 inputs"):
            sess.run([x])
    # A failed call leaves nothing behind: the next good one is right.
    y, _ = sess.run({"x": x + 1, "scale": s}).values()
    np.testing.assert_array_equal(y, (x + 1) * s + 1)


def test_a_new_array_per_output_and_call(two_in_two_out):
    sess = two_in_two_out.session()
    s = np.ones(4, np.float32)
    got = []
    for i in range(6):
        x = np.full((3, 4), float(i), np.float32)
        got.append((x, sess.run({"x": x, "scale": s})))
    arrays = [a for _, d in got for a in d.values()]
    assert len({id(a) for a in arrays}) == len(arrays)
    for i, a in enumerate(arrays):
        for b in arrays[i + 1 :]:
            assert not np.shares_memory(a, b)
    # No later call wrote into an array an earlier call returned.
    for x, d in got:
        np.testing.assert_array_equal(list(d.values())[0], want(x, s)[0])
    a = list(got[0][1].values())[0]
    assert a.flags.owndata and a.flags.writeable and a.flags.c_contiguous and a.base is None


def test_input_dtype_and_shape_change_between_calls(two_in_two_out):
    sess = two_in_two_out.session()
    s = np.full(4, 2.0, np.float32)
    for b, dt in [(2, np.float32), (2, np.float64), (5, np.float32), (1, np.int64), (5, np.float32), (2, np.float32)]:
        x = (np.arange(b * 4) - 3).reshape(b, 4).astype(dt)
        y, t = sess.run({"scale": s, "x": x}).values()
        assert y.dtype == np.float32 and y.shape == (b, 4)
        np.testing.assert_array_equal(y, want(x.astype(np.float32), s)[0])
        np.testing.assert_array_equal(t, s * 2)


@pytest.mark.parametrize("release_gil", [None, True])
def test_threads_call_one_session_with_dicts(two_in_two_out, release_gil):
    # With the GIL released during runs, a thread's call finds the session's
    # scratch taken by another thread's run and starts afresh (slot.rs).
    sess = two_in_two_out.session(release_gil=release_gil)
    errors = []

    def work(i):
        try:
            s = np.full(4, float(i), np.float32)
            x = np.full((1 + i % 8, 4), float(i), np.float32)
            for _ in range(30):
                d = sess.run({"scale": s, "x": x} if i % 2 else {"x": x, "scale": s})
                y, t = d.values()
                np.testing.assert_array_equal(y, want(x, s)[0])
                np.testing.assert_array_equal(t, want(x, s)[1])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_names_of_inputs_and_outputs_are_the_interned_keys(two_in_two_out):
    # Model.inputs / outputs give the interned name objects, which a feed
    # built from them shares with the session's keys (no lookup per call).
    import sys

    for name, _ in two_in_two_out.inputs + two_in_two_out.outputs:
        assert name is sys.intern(name)
    sess = two_in_two_out.session()
    (xn, _), (sn, _) = two_in_two_out.inputs
    x, s = np.ones((3, 4), np.float32), np.full(4, 2.0, np.float32)
    out = sess.run({xn: x, sn: s})
    assert list(out) == [n for n, _ in two_in_two_out.outputs]
    np.testing.assert_array_equal(out[two_in_two_out.outputs[0][0]], want(x, s)[0])
