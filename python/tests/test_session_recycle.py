"""Session.run's last result recycled (issue 20, python/src/recycle.rs): the dict a call
returned and the arrays in it are taken again by the next call only when no one else
holds any of them — no reference, no view, no weak reference, no memoryview — so no
caller can tell them from new ones. Whatever the caller keeps is never written again,
and every call's values are right: after recycling, with dtype and shape changes,
with a changed dict, with threads, and the same errors for missing and extra keys."""

import gc
import threading
import weakref

import numpy as np
import pytest

import ge
from ge import es


def compile_graph(g, *outs):
    return ge.Model(ge.compile(g.build(*outs), op_compiler_cache_mode="disable"))


@pytest.fixture(scope="module")
def model():
    """y = x * s + 1 of shape (B, 4), t = s * 2 (f32); B up to 8."""
    g = es.Graph("main")
    g.symbol_bound("B", 8)
    x = g.input("x", shape=("B", 4))
    s = g.input("scale", shape=(4,))
    return compile_graph(g, x * s + 1.0, s * 2.0)


def feed(b=2, v=1.0, s=2.0):
    return {"x": np.full((b, 4), v, np.float32), "scale": np.full(4, s, np.float32)}


def check(d, f):
    """d holds the right outputs for the feed f (by value, in output order)."""
    y, t = d.values()
    np.testing.assert_array_equal(y, f["x"] * f["scale"] + 1)
    np.testing.assert_array_equal(t, f["scale"] * 2)
    assert y.flags.writeable and y.flags.owndata and y.base is None


def names(model):
    return [n for n, _ in model.outputs]


def test_a_dropped_result_is_recycled_and_right(model):
    sess = model.session()
    assert sess._recycled == (0, 0)
    for i in range(5):
        f = feed(v=float(i))
        check(sess.run(f), f)
    # The first call has nothing to recycle; every later one takes both arrays.
    assert sess._recycled == (4, 8)


def test_a_held_dict_is_never_written_again(model):
    sess = model.session()
    f0 = feed(v=1.0)
    kept = sess.run(f0)
    arrays = list(kept.values())
    for i in range(3):
        f = feed(v=10.0 + i)
        d = sess.run(f)
        assert d is not kept and all(a is not b for a, b in zip(d.values(), arrays))
        check(d, f)
        del d
    check(kept, f0)
    assert [a is b for a, b in zip(kept.values(), arrays)] == [True, True]


@pytest.mark.parametrize("hold", ["array", "view", "weakref", "memoryview", "dict-view", "iterator"])
def test_what_the_caller_holds_is_not_recycled(model, hold):
    sess = model.session()
    first = names(model)[0]
    f0 = feed(v=3.0)
    sess.run(feed())  # something to recycle from the start
    d = sess.run(f0)
    want = d[first].copy()
    held = {
        "array": lambda: d[first],
        "view": lambda: d[first][1:],
        "weakref": lambda: weakref.ref(d[first]),
        "memoryview": lambda: memoryview(d[first]),
        "dict-view": lambda: d.values(),
        "iterator": lambda: iter(d.items()),
    }[hold]()
    old_id = id(d)
    del d
    f = feed(v=7.0)
    d2 = sess.run(f)
    check(d2, f)
    if hold == "weakref":
        # The array was not written again: it went when its dict let go of it.
        assert held() is None or held() is not d2[first]
        if held() is not None:
            np.testing.assert_array_equal(held(), want)
    elif hold == "view":
        np.testing.assert_array_equal(held, want[1:])
        assert not np.shares_memory(held, d2[first])
    elif hold == "memoryview":
        np.testing.assert_array_equal(np.asarray(held), want)
    elif hold == "array":
        np.testing.assert_array_equal(held, want)
        assert held is not d2[first]
    else:
        # The dict itself is held: a new one.
        assert id(d2) != old_id
        vals = list(held) if hold == "dict-view" else [a for _, a in held]
        np.testing.assert_array_equal(vals[0], want)


def test_a_changed_dict_is_not_recycled(model):
    sess = model.session()
    y, t = names(model)
    for change in ["extra", "replace", "delete", "reorder"]:
        d = sess.run(feed())
        mine = np.zeros((2, 4), np.float32)
        if change == "extra":
            d["extra"] = 1
        elif change == "replace":
            d[y] = mine
        elif change == "delete":
            del d[t]
        else:
            d[y] = d.pop(y)
        del d
        f = feed(v=5.0)
        d2 = sess.run(f)
        assert list(d2) == [y, t]
        check(d2, f)
        np.testing.assert_array_equal(mine, 0)


def test_a_changed_array_is_not_written_in_place(model):
    sess = model.session()
    y, _ = names(model)
    for change in ["readonly", "reshape", "dtype"]:
        d = sess.run(feed())
        a = d[y]
        if change == "readonly":
            a.flags.writeable = False
        elif change == "reshape":
            a.shape = (4, 2)
        else:
            a.dtype = np.int32
        del a, d
        f = feed(v=4.0)
        check(sess.run(f), f)


def test_shape_and_dtype_changes_between_calls(model):
    sess = model.session()
    for b, dt in [(2, np.float32), (2, np.float32), (5, np.float32), (5, np.float64), (1, np.int64), (1, np.float32)]:
        x = (np.arange(b * 4) - 3).reshape(b, 4).astype(dt)
        s = np.full(4, 2.0, np.float32)
        y, t = sess.run({"x": x, "scale": s}).values()
        assert y.shape == (b, 4) and y.dtype == np.float32
        np.testing.assert_array_equal(y, x.astype(np.float32) * s + 1)
        np.testing.assert_array_equal(t, s * 2)
        del y, t
    assert sess._recycled[0] == 5


def test_errors_are_the_same_after_recycling(model):
    sess = model.session()
    x, s = np.ones((2, 4), np.float32), np.ones(4, np.float32)
    for _ in range(3):
        sess.run({"x": x, "scale": s})
        with pytest.raises(ge.Error, match="missing input 'scale'"):
            sess.run({"x": x})
        with pytest.raises(ge.Error, match="no input 'nope'"):
            sess.run({"x": x, "scale": s, "nope": s})
        with pytest.raises(ge.Error, match="takes 2 inputs"):
            sess.run([x])
    f = feed(v=9.0)
    check(sess.run(f), f)


def test_the_kept_result_is_invisible_to_the_gc(model):
    sess = model.session()
    sess.run(feed())
    y, t = names(model)
    found = [o for o in gc.get_objects() if isinstance(o, dict) and list(o) == [y, t]]
    assert not found


def test_trace_runs_and_large_outputs_are_not_recycled(model, tmp_path):
    sess = model.session()
    sess.run(feed())
    f = feed(v=2.0)
    # A traced run takes nothing of the last result (its outputs are its own).
    check(sess.run(f, trace=str(tmp_path / "t.json")), f)
    assert sess._recycled == (0, 0)
    check(sess.run(f), f)
    # Over 1 MiB of outputs: not kept.
    g = es.Graph("main")
    x = g.input("x", shape=(512, 1024))
    big = compile_graph(g, g.relu(x)).session()
    v = np.ones((512, 1024), np.float32)
    for _ in range(3):
        (out,) = big.run({"x": v}).values()
        np.testing.assert_array_equal(out, v)
        del out
    assert big._recycled == (0, 0)


def test_threads_dropping_and_holding_results(model):
    sess = model.session()
    errors, kept = [], []

    def work(i):
        try:
            f = feed(b=1 + i % 8, v=float(i), s=float(i % 3 + 1))
            for k in range(40):
                d = sess.run(f)
                check(d, f)
                if k % 7 == 0:
                    kept.append((f, d))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    for f, d in kept:
        check(d, f)
