"""Session.runner(): positional inputs, output arrays made once and reused
(or the caller's, outputs=), the GIL kept with release_gil=False (issue 20)."""

import threading

import numpy as np
import pytest

import ge
from ge import es


def two_in_two_out():
    g = es.Graph("main")
    g.symbol_bound("B", 8)
    x = g.input("x", shape=("B", 4))
    s = g.input("scale", shape=(4,))
    return g.build(g.relu(x * s + 1.0), s * 2.0)


@pytest.fixture(scope="module")
def model():
    return ge.Model(ge.compile(two_in_two_out(), op_compiler_cache_mode="disable"))


def inputs(b=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((b, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)


def test_results_equal_session_run(model):
    sess = model.session()
    r = sess.runner()
    assert r.input_names == [n for n, _ in model.inputs]
    assert r.output_names == [n for n, _ in model.outputs]
    assert r.outputs is None and "ge.Runner" in repr(r)
    for seed in range(3):
        x, s = inputs(seed=seed)
        want = list(sess.run([x, s]).values())
        got = r.run(x, s)
        assert isinstance(got, tuple) and len(got) == 2
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_allclose(got[0], np.maximum(x * s + 1, 0), rtol=1e-6)


def test_output_arrays_are_made_once_and_reused(model):
    r = model.session().runner()
    x, s = inputs(seed=1)
    first = r.run(x, s)
    kept = [a.copy() for a in first]
    x2, s2 = inputs(seed=2)
    second = r.run(x2, s2)
    # The same tuple and the same arrays, overwritten with the new results.
    assert second is first and r.outputs is first
    assert all(a is b for a, b in zip(first, second))
    np.testing.assert_allclose(second[0], np.maximum(x2 * s2 + 1, 0), rtol=1e-6)
    assert not np.array_equal(second[0], kept[0])


def test_a_new_shape_gets_new_arrays_and_leaves_the_old_ones(model):
    r = model.session().runner()
    x, s = inputs(b=2)
    (y2, _) = r.run(x, s)
    kept = y2.copy()
    x5, _ = inputs(b=5, seed=3)
    (y5, _) = r.run(x5, s)
    assert y5.shape == (5, 4) and y5 is not y2
    np.testing.assert_array_equal(y2, kept)  # the earlier array is untouched
    np.testing.assert_allclose(y5, np.maximum(x5 * s + 1, 0), rtol=1e-6)
    # A runner's own array the caller made read-only is replaced, not written.
    y5.flags.writeable = False
    (y5b, _) = r.run(x5, s)
    assert y5b is not y5


def test_outputs_into_the_callers_arrays(model):
    x, s = inputs(b=3)
    y, t = np.empty((3, 4), np.float32), np.empty(4, np.float32)
    r = model.session().runner(outputs=[y, t])
    got = r.run(x, s)
    assert got[0] is y and got[1] is t and r.outputs == (y, t)
    np.testing.assert_allclose(y, np.maximum(x * s + 1, 0), rtol=1e-6)
    np.testing.assert_allclose(t, s * 2, rtol=1e-6)
    # By name, too.
    names = [n for n, _ in model.outputs]
    y2, t2 = np.empty_like(y), np.empty_like(t)
    (a, b) = model.session().runner(outputs={names[1]: t2, names[0]: y2}).run(x, s)
    assert a is y2 and b is t2
    np.testing.assert_array_equal(y2, y)


def test_callers_arrays_that_do_not_fit_are_clear_errors(model):
    sess = model.session()
    names = [n for n, _ in model.outputs]
    y, t = np.empty((3, 4), np.float32), np.empty(4, np.float32)
    x, s = inputs(b=3)
    # A shape that is not the run's: the call fails naming the output and both shapes.
    r = sess.runner(outputs=[np.empty((2, 4), np.float32), t])
    with pytest.raises(ge.Error, match=rf"output '{names[0]}': the run gives shape \[3, 4\], the array has \[2, 4\]"):
        r.run(x, s)
    # Checked when the runner is made: element type, layout, writability, count, names.
    with pytest.raises(ge.Error, match=rf"output '{names[0]}': the model gives f32 elements, the array is float64"):
        sess.runner(outputs=[np.empty((3, 4), np.float64), t])
    with pytest.raises(ge.Error, match="not C-contiguous"):
        sess.runner(outputs=[np.empty((4, 3), np.float32).T, t])
    ro = np.empty((3, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ge.Error, match="writable"):
        sess.runner(outputs=[ro, t])
    with pytest.raises(ge.Error, match="has 2 outputs .* gives 1 arrays"):
        sess.runner(outputs=[y])
    with pytest.raises(ge.Error, match="no output 'nope'"):
        sess.runner(outputs={names[0]: y, "nope": t})
    with pytest.raises(ge.Error, match=f"no array for output '{names[1]}'"):
        sess.runner(outputs={names[0]: y})
    with pytest.raises(ge.Error, match="not a numpy array"):
        sess.runner(outputs=[y, [0.0] * 4])
    with pytest.raises(ge.Error, match="list of arrays"):
        sess.runner(outputs=y)
    # Nothing was written into an array refused above.
    assert r.outputs[1] is t


def test_input_errors(model):
    r = model.session().runner()
    x, s = inputs()
    with pytest.raises(ge.Error, match="takes 2 inputs"):
        r.run(x)
    with pytest.raises(ge.Error, match="takes 2 inputs .*, 0 given"):
        r.run()
    with pytest.raises(ge.Error, match="takes 2 inputs .*, 3 given"):
        r.run(x, s, s)
    with pytest.raises(ge.Error, match="input 0 is None"):
        r.run(None, s)
    with pytest.raises(ge.Error, match="dim 1 must be 4"):
        r.run(np.ones((2, 5), np.float32), s)
    with pytest.raises(ge.Error, match="complex64"):
        r.run(x.astype(np.complex64), s)
    # A failed call leaves the runner usable.
    np.testing.assert_allclose(r.run(x, s)[0], np.maximum(x * s + 1, 0), rtol=1e-6)


def test_inputs_are_read_in_place(model):
    r = model.session().runner()
    x, s = inputs()
    r.run(x, s)
    before = ge._native._input_copies()
    for _ in range(3):
        r.run(x, s)
    assert ge._native._input_copies() == before
    # Another dtype is converted as Session.run converts it (one copy).
    np.testing.assert_allclose(r.run(x.astype(np.float64), s)[0], np.maximum(x * s + 1, 0), rtol=1e-6)
    assert ge._native._input_copies() == before + 1


class Tagged(np.ndarray):
    """An ndarray subclass: another Python type with the same memory."""


def test_an_array_of_another_type_takes_the_whole_path(model):
    # The runner remembers the type of the array it read in place; an
    # array of another type (a subclass, a plain array again) or an object
    # that is no array at all is checked from scratch.
    r = model.session().runner()
    x, s = inputs()
    want = np.maximum(x * s + 1, 0)
    np.testing.assert_allclose(r.run(x, s)[0], want, rtol=1e-6)
    np.testing.assert_allclose(r.run(x.view(Tagged), s.view(Tagged))[0], want, rtol=1e-6)
    np.testing.assert_allclose(r.run(x.tolist(), s)[0], want, rtol=1e-6)
    np.testing.assert_allclose(r.run(x, s)[0], want, rtol=1e-6)
    with pytest.raises(ge.Error):
        r.run("not an array", s)


def test_holding_the_gil_gives_the_same_results(model):
    x, s = inputs(seed=4)
    a = model.session().runner(release_gil=False).run(x, s)
    b = model.session().runner().run(x, s)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def test_bool_outputs_hold_0_or_1():
    g = es.Graph("main")
    x = g.input("x", shape=(6,))
    m = ge.Model(ge.compile(g.build(g.greater(x, g.constant(np.zeros(6, np.float32)))),
                            op_compiler_cache_mode="disable"))
    out = np.empty(6, np.bool_)
    v = np.array([-1, 2, 0, 3, -4, 5], np.float32)
    (got,) = m.session().runner(outputs=[out]).run(v)
    assert got is out and got.tolist() == [False, True, False, True, False, True]
    assert got.view(np.uint8).max() == 1


def in_threads(work, n):
    """Run work(i) on n threads at once; re-raise the first failure."""
    errors = []

    def guarded(i):
        try:
            work(i)
        except Exception as e:  # noqa: BLE001 - re-raised below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_threads_with_a_runner_each(model):
    sess = model.session()

    def work(i):
        r = sess.runner(release_gil=i % 2 == 0)
        x = np.full((1 + i % 8, 4), float(i), np.float32)
        s = np.ones(4, np.float32)
        for _ in range(20):
            (y, _) = r.run(x, s)
            np.testing.assert_array_equal(y, x + 1)

    in_threads(work, 6)


def test_threads_sharing_a_runner_do_not_corrupt_it(model):
    # One runner's arrays are shared: each call's result is whole when it
    # returns. While one thread calls it, runs write the arrays in place;
    # from a second thread's first call on, runs go to the runtime's memory
    # and are copied into the arrays with the GIL held (counted).
    r = model.session().runner()
    s = np.ones(4, np.float32)

    def work(i):
        x = np.full((2, 4), float(i), np.float32)
        for _ in range(50):
            (y, _) = r.run(x, s)
            v = y.copy()
            assert (v == v.flat[0]).all() and v.flat[0] >= 1

    work(0)
    before = ge._native._output_copies()
    work(0)
    assert ge._native._output_copies() == before
    in_threads(lambda i: work(i + 1), 4)
    assert ge._native._output_copies() > before


def test_recycled_outputs_follow_the_shape_of_each_run(model):
    # The runtime's output tensors of one call are reused by the next
    # (Session::run_reusing): growing and shrinking the batch gives each
    # run's own results, and arrays of a shape seen before are not reused
    # once another shape replaced them.
    r = model.session().runner()
    s = np.ones(4, np.float32)
    for b in [2, 7, 1, 7, 3, 3]:
        x = np.arange(b * 4, dtype=np.float32).reshape(b, 4) - 5
        (y, t) = r.run(x, s)
        assert y.shape == (b, 4)
        np.testing.assert_array_equal(y, np.maximum(x + 1, 0))
        np.testing.assert_array_equal(t, s * 2)


def test_non_contiguous_and_other_dtype_inputs_through_a_runner(model):
    r = model.session().runner()
    x, s = inputs(b=3, seed=5)
    want = np.maximum(x * s + 1, 0)
    wide = np.zeros((3, 8), np.float32)
    wide[:, ::2] = x
    before = ge._native._input_copies()
    np.testing.assert_allclose(r.run(wide[:, ::2], s)[0], want, rtol=1e-6)  # strided: one copy
    np.testing.assert_allclose(r.run(np.asfortranarray(x), s)[0], want, rtol=1e-6)  # Fortran order
    np.testing.assert_allclose(r.run(x.astype(">f4"), s)[0], want, rtol=1e-6)  # byte-swapped
    assert ge._native._input_copies() == before + 3
    np.testing.assert_allclose(r.run(x, s)[0], want, rtol=1e-6)  # in place again
    assert ge._native._input_copies() == before + 3
    with pytest.raises(ge.Error, match="input 'scale'.*complex128"):  # no same_kind cast to f32
        r.run(x, s.astype(np.complex128))
    with pytest.raises(ge.Error, match="rank"):
        r.run(x[0], s)
    np.testing.assert_allclose(r.run(x, s)[0], want, rtol=1e-6)


# A size symbol (data.nonzero's count K): the output shapes are known only
# after the run; each call through a runner gets arrays of its own count.
NONZERO = """
module attributes {ge.symbol_bounds = {K = 12 : i64}} {
  graph.func @main(%x: tensor<3x4xf32>) -> (tensor<2xKxi64>, tensor<3x4xf32>) {
    %a = graph.relu %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %i:2 = data.nonzero %a {count = "K"} : (tensor<3x4xf32>) -> (tensor<2xKxi64>, tensor<i64>)
    %s = graph.sigmoid %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
    graph.return %i#0, %s : tensor<2xKxi64>, tensor<3x4xf32>
  }
}
"""


def test_size_symbol_outputs_have_each_runs_count():
    m = ge.Model(ge.compile(ge.parse(NONZERO, name="nonzero"), op_compiler_cache_mode="disable"))
    r = m.session().runner()
    rng = np.random.default_rng(7)
    for on in [5, 12, 0, 5, 1, 12, 5]:
        x = -np.ones(12, np.float32)
        x[rng.permutation(12)[:on]] = 2.0
        x = x.reshape(3, 4)
        (idx, sig) = r.run(x)
        assert idx.shape == (2, on)
        np.testing.assert_array_equal(idx, np.stack(np.nonzero(x > 0)))
        np.testing.assert_allclose(sig, 1 / (1 + np.exp(-x)), rtol=1e-5)
        # Session.run agrees.
        np.testing.assert_array_equal(list(m.session().run([x]).values())[0], idx)


def test_a_layout_that_changes_between_calls_is_checked_again(model):
    # A runner (and a session) remembers the dtype object of the last array
    # it read in place and skips re-deriving it; shape, flags and address are
    # read at every call. Each change below must take the whole check again
    # (a copy or an error), never the remembered one.
    sess = model.session()
    r = sess.runner()
    x, s = inputs(b=3, seed=6)
    want = np.maximum(x * s + 1, 0)
    np.testing.assert_allclose(r.run(x, s)[0], want, rtol=1e-6)  # remembered now
    before = ge._native._input_copies()
    np.testing.assert_allclose(r.run(x.astype(np.float64), s)[0], want, rtol=1e-6)  # another dtype
    np.testing.assert_allclose(r.run(x.astype(">f4"), s)[0], want, rtol=1e-6)  # byte-swapped
    wide = np.zeros((3, 8), np.float32)
    wide[:, ::2] = x
    np.testing.assert_allclose(r.run(wide[:, ::2], s)[0], want, rtol=1e-6)  # same dtype, strided
    raw = np.zeros(3 * 4 + 1, np.float32)
    odd = raw[1:].reshape(3, 4)  # 4-byte aligned for numpy, not 8 for the runtime
    odd[:] = x
    assert odd.flags.aligned and odd.ctypes.data % 8 != 0
    np.testing.assert_allclose(r.run(odd, s)[0], want, rtol=1e-6)
    assert ge._native._input_copies() == before + 4
    # The same array object changed in place: its dtype (same item size)...
    y = x.copy()
    r.run(y, s)
    y.dtype = np.int32
    np.testing.assert_allclose(r.run(y, s)[0], np.maximum(y.astype(np.float32) * s + 1, 0), rtol=1e-6)
    assert ge._native._input_copies() == before + 5
    # ... and its shape: a wrong one is refused, a new batch runs at its size.
    z = np.arange(12, dtype=np.float32)
    r.run(z.reshape(3, 4), s)
    z.shape = (2, 6)
    with pytest.raises(ge.Error, match="dim 1 must be 4"):
        r.run(z, s)
    z.shape = (12,)
    with pytest.raises(ge.Error, match="rank"):
        r.run(z, s)
    z.shape = (6, 2)
    with pytest.raises(ge.Error, match="dim 1 must be 4"):
        r.run(z, s)
    z.shape = (3, 4)
    np.testing.assert_allclose(r.run(z, s)[0], np.maximum(z * s + 1, 0), rtol=1e-6)
    big = np.tile(z, (2, 1))
    (y6, _) = r.run(big, s)
    assert y6.shape == (6, 4)
    np.testing.assert_allclose(y6, np.maximum(big * s + 1, 0), rtol=1e-6)
    # A zero-size batch is not read in place (nothing to read) and still runs.
    (y0, _) = r.run(np.zeros((0, 4), np.float32), s)
    assert y0.shape == (0, 4)
    # Session.run by name remembers the same way and agrees.
    names = [n for n, _ in model.inputs]
    for a in [x, x.astype(np.float64), wide[:, ::2], x, odd, x]:
        got = list(sess.run({names[0]: a, names[1]: s}).values())[0]
        np.testing.assert_allclose(got, want, rtol=1e-6)
    # In place again, with no copy.
    before = ge._native._input_copies()
    r.run(x, s)
    sess.run({names[0]: x, names[1]: s})
    assert ge._native._input_copies() == before


def test_inputs_of_a_dict_replaced_by_another_thread_stay_alive(model):
    # Session.run holds each input array for the whole run: a thread that
    # replaces the dict's arrays meanwhile (dropping the last reference to the
    # one being read) does not free memory the run reads — every result is
    # the old array's or the new one's, whole.
    sess = model.session()
    names = [n for n, _ in model.inputs]
    s = np.ones(4, np.float32)
    feed = {names[0]: np.full((8, 4), 3.0, np.float32), names[1]: s}
    stop = threading.Event()

    def work(i):
        if i == 0:
            try:
                for _ in range(300):
                    y = list(sess.run(feed).values())[0]
                    assert (y == y.flat[0]).all() and y.flat[0] in (4.0, 6.0), y
            finally:
                stop.set()
        else:
            v = 3.0
            while not stop.is_set():
                v = 8.0 - v  # 3 and 5, alternately
                feed[names[0]] = np.full((8, 4), v, np.float32)

    in_threads(work, 2)
