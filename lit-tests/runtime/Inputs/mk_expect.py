"""Inputs of Inputs/expect.air, its right answers and wrong references, under a prefix."""
import sys

import numpy as np

p = sys.argv[1]
x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
n = np.array([2**60, -3, 5, 7], np.int64)
np.save(p + ".x.npy", x)
np.save(p + ".n.npy", n)
np.save(p + ".neg.npy", -x)  # right
np.save(p + ".twice.npy", n + n)  # right
np.save(p + ".relu.npy", np.maximum(x, 0))  # wrong values (float)
off = n + n
off[0] += 2  # 2^61 + 2: the same f64 as 2^61
np.save(p + ".off.npy", off)  # wrong values (integer)
np.save(p + ".neg64.npy", (-x).astype(np.float64))  # right values, wrong dtype
np.save(p + ".neg32.npy", -x.reshape(3, 2))  # right values, wrong shape
np.save(p + ".small.npy", np.array([0, -6, 10, 14], np.int32))  # wrong dtype (int)
