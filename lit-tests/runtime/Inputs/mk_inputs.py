"""Write the .npy inputs of Inputs/block.air (and wrong ones) under a prefix."""
import sys

import numpy as np

p = sys.argv[1]
x = (np.arange(12, dtype=np.float32).reshape(3, 4) - 6.0) / 4.0
np.save(p + ".x.npy", x)
np.save(p + ".scale.npy", np.array([1.0, -2.0, 0.5, 3.0], np.float32))
np.save(p + ".x9.npy", np.zeros((9, 4), np.float32))  # B = 9 > 8
np.save(p + ".x5.npy", np.zeros((3, 5), np.float32))  # dim 1 must be 4
np.save(p + ".xi.npy", np.zeros((3, 4), np.int32))  # wrong dtype
np.save(p + ".x3d.npy", np.zeros((1, 3, 4), np.float32))  # wrong rank
np.save(p + ".ones.npy", np.ones((3, 4), np.float32))  # not the answer
