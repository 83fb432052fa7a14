#!/usr/bin/env python3
"""Print ops whose attributes are floats of every type, from random bit
patterns (all classes: normal, subnormal, zero, inf, NaN with payloads) and
random decimal literals, for comparing ge-opt's float spelling with
mlir-opt's. Deterministic for a seed: random_floats.py SEED [COUNT]."""
import random
import sys

rng = random.Random(int(sys.argv[1]))
count = int(sys.argv[2]) if len(sys.argv) > 2 else 300
for i in range(count):
    bits = (f"0x{rng.getrandbits(64):016X} : f64", f"0x{rng.getrandbits(32):08X} : f32",
            f"0x{rng.getrandbits(16):04X} : f16", f"0x{rng.getrandbits(16):04X} : bf16")
    digits = rng.choice([3, 6, 7, 9, 17])
    d = f"{rng.uniform(-1, 1) * 10.0 ** rng.randint(-45, 40):.{digits}e}"
    decimal = (f"{d} : f64", f"{d} : f32", f"{d} : f16", f"{d} : bf16")
    attrs = ", ".join(f"{chr(97 + k)} = {v}" for k, v in enumerate(bits + decimal))
    print(f'"x.f{i}"() {{{attrs}}} : () -> ()')
