"""Write .npy files whose headers are untrusted (lit-tests/runtime/input-budget.test):

    python mk_huge_npy.py PREFIX

PREFIX.huge.npy declares 2^40 f32 elements but holds 16 bytes;
PREFIX.overflow.npy declares a shape whose byte size overflows 64 bits;
PREFIX.mb.npy is a real 1 MiB f32 array (for a budget below it).
"""
import sys

import numpy as np

prefix = sys.argv[1]


def raw(path, shape, payload):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % (shape,)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        f.write(payload)


raw(prefix + ".huge.npy", (1 << 40,), b"\0" * 16)
raw(prefix + ".overflow.npy", (1 << 40, 1 << 40), b"\0" * 16)
np.save(prefix + ".mb.npy", np.zeros((256, 1024), np.float32))
