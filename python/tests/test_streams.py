"""ge.Model(streams=): a model's streams take turns on the running thread
("serial", the default) or run on a thread each ("workers"), as ge-run's
--streams; the outputs are the same either way."""

import numpy as np
import pytest

import ge
from ge import es


def two_branches():
    # Two independent branches: the compiler puts them on two streams.
    g = es.Graph("main")
    x = g.input("x", shape=(4, 8))
    w = g.constant(np.full((8, 8), 0.5, np.float32))
    a = g.matmul(x, w)
    b = g.matmul(g.relu(x), w)
    return g.build(a + b, g.relu(x))


@pytest.fixture(scope="module")
def om():
    return ge.compile(two_branches(), op_compiler_cache_mode="disable")


def test_serial_and_worker_streams_agree(om):
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    for threads in (1, 2):
        serial = ge.Model(om, threads=threads).session().run({"x": x})
        workers = ge.Model(om, threads=threads, streams="workers").session().run({"x": x})
        assert serial.keys() == workers.keys()
        for k in serial:
            np.testing.assert_array_equal(serial[k], workers[k])


def test_an_unknown_mode_is_an_error(om):
    with pytest.raises(ge.Error, match="unknown stream execution 'threads' \\(serial or workers\\)"):
        ge.Model(om, streams="threads")
