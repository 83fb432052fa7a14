#!/usr/bin/env python3
"""Generate a large benchmark module in two equivalent forms: our `graph` dialect (.air)
and MLIR's `func` + `arith` (+ `math`) dialects (.mlir), each in custom and generic form.

    python3 tools/bench/gen_module.py                       # 1,000 x 1,000 = 1,000,000 ops
    python3 tools/bench/gen_module.py -F 100 -N 1000 -o target/bench
    python3 tools/bench/gen_module.py --redundant           # + the canonicalize/cse variant
    python3 tools/bench/gen_module.py --check-with-tools    # compare generic forms with
                                                            # ge-opt / mlir-opt-22 output

Files written to the output dir (FxN is the size, e.g. 1000x1000):

    ge-FxN.air              graph.func / graph.add ... in custom form
    ge-FxN.generic.air      the same, in the form `ge-opt --print-op-generic` prints
    unreg-FxN.generic.mlir  the same with ops of an unregistered dialect (`u.func`, `u.add`,
                            ...) in generic form, as both tools print it; both read it with
                            --allow-unregistered-dialect (nothing is known to be isolated
                            from above, so ge cannot rely on its functions being independent)
    mlir-FxN.mlir           func.func / arith.addf ... in custom form
    mlir-FxN.generic.mlir   the same, in the form `mlir-opt --mlir-print-op-generic` prints
    ge-FxN-redundant.air, mlir-FxN-redundant.mlir   (with --redundant; see below)

Every function has two `tensor<16xf32>` arguments and N elementwise ops; op i takes the
previous result as its first operand (a chain, so the return value depends on every op's
predecessor) and, for binary ops, a value picked at random from the last few values or the
arguments. The op mix is identical in both dialects (one op maps to exactly one op):

    graph.add/sub/mul/div  <->  arith.addf/subf/mulf/divf
    graph.neg              <->  arith.negf
    graph.exp              <->  math.exp

(graph.relu has no one-op arith equivalent - arith.maximumf plus a zero constant - so it is
left out of the mix.) The output is deterministic for a given --seed, F and N.

The --redundant variant (for issue 4: canonicalize + cse) has the same F x N body ops, a
fraction (--redundancy, default 0.3) of which are redundant and used by later ops:
  * a recomputation of a recent op with the same operands, for add/mul sometimes with
    the operands swapped (cse, with commutative ordering); the op after it combines it
    with the chain so that nothing becomes dead,
  * x * 1, 1 * x, x / 1, x - 0, x + (-0.0) (canonicalize; note +0.0 is NOT an identity for
    x + c under IEEE signed zeros, and MLIR does not fold it, so -0.0 is used),
  * neg(neg(x)) (canonicalize).
The constants 1, 0 and -0 are materialised once at the top of each function, as
`arith.constant` in MLIR and `data.constant dense<..>` in ours.
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

T = "tensor<16xf32>"
BIN_T = f"({T}, {T}) -> {T}"
UN_T = f"({T}) -> {T}"
FN_T = f"({T}, {T}) -> {T}"
ARGS = f"%arg0: {T}, %arg1: {T}"
FASTMATH = "<{fastmath = #arith.fastmath<none>}>"

# name, arity, weight; same order/weights for both dialects.
MIX = [
    ("add", 2, 25),
    ("mul", 2, 25),
    ("sub", 2, 15),
    ("div", 2, 10),
    ("neg", 1, 15),
    ("exp", 1, 10),
]
MLIR_NAME = {
    "add": "arith.addf",
    "sub": "arith.subf",
    "mul": "arith.mulf",
    "div": "arith.divf",
    "neg": "arith.negf",
    "exp": "math.exp",
}
WINDOW = 8  # second operands come from the last WINDOW values (or the arguments)

# Constants of the redundant variant: (ssa suffix, dense literal as MLIR prints it).
CONSTS = [("one", "1.000000e+00"), ("zero", "0.000000e+00"), ("negzero", "-0.000000e+00")]


def gen_function(rng, n, redundancy):
    """Return the op list of one function: (result, opname, operands) with SSA names
    as indices (-1 = %arg0, -2 = %arg1, 'one'/'zero'/'negzero' = constants)."""
    ops = []
    names = [m[0] for m in MIX]
    weights = [m[2] for m in MIX]
    arity = {m[0]: m[1] for m in MIX}
    join = False  # the next op must also use the value before the previous one

    def pick_other(i):
        lo = max(0, i - WINDOW)
        cands = list(range(lo, i)) + [-1, -2]
        return rng.choice(cands)

    def emit(op, operands):
        ops.append((len(ops), op, operands))

    while len(ops) < n:
        i = len(ops)
        prev = i - 1 if i > 0 else -1
        if join:
            # after a recomputation: combine it with the chain so neither side is dead
            join = False
            emit(rng.choice(["add", "mul", "sub"]), (prev, i - 2))
            continue
        if redundancy > 0 and i >= 2 and rng.random() < redundancy:
            kind = rng.randrange(4)
            recent = ops[max(0, i - WINDOW) : i]
            if kind == 0:
                # recompute a recent op, verbatim or (add/mul) with swapped operands (CSE)
                src = rng.choice(recent)
                xs = src[2]
                if src[1] in ("add", "mul") and rng.random() < 0.5:
                    xs = (xs[1], xs[0])
                emit(src[1], xs)
                join = True
            elif kind in (1, 2):
                # identities (canonicalize)
                op, c = rng.choice(
                    [("mul", "one"), ("div", "one"), ("sub", "zero"), ("add", "negzero")]
                )
                emit(op, (prev, c) if op != "mul" or rng.random() < 0.5 else (c, prev))
            elif i + 1 < n:
                # neg(neg(x)) (canonicalize)
                emit("neg", (prev,))
                emit("neg", (i,))
            else:
                emit("mul", (prev, "one"))
            continue
        op = rng.choices(names, weights)[0]
        emit(op, (prev, pick_other(i)) if arity[op] == 2 else (prev,))
    return ops


def v(x, offset=0, arg_offset=0):
    """SSA name of operand x. The offsets shift the numbering: mlir-opt's generic printer
    numbers values in one scope for the whole module (see emit_mlir_generic)."""
    if x == -1:
        return f"%arg{arg_offset}"
    if x == -2:
        return f"%arg{arg_offset + 1}"
    if isinstance(x, str):
        return "%" + x
    return f"%{x + offset}"


class Writer:
    def __init__(self, path):
        self.f = open(path, "w", encoding="utf-8", newline="\n")
        self.buf = []
        self.n = 0

    def w(self, s):
        self.buf.append(s)
        self.n += 1
        if self.n >= 20000:
            self.flush()

    def flush(self):
        self.f.write("".join(self.buf))
        self.buf.clear()
        self.n = 0

    def close(self):
        self.flush()
        self.f.close()


def emit_ge(w, fi, ops, with_consts):
    w.w(f"  graph.func @f{fi}({ARGS}) -> {T} {{\n")
    if with_consts:
        for name, lit in CONSTS:
            w.w(f"    %{name} = data.constant dense<{lit}> : {T}\n")
    for r, op, xs in ops:
        if len(xs) == 2:
            w.w(f"    %{r} = graph.{op} {v(xs[0])}, {v(xs[1])} : {BIN_T}\n")
        else:
            w.w(f"    %{r} = graph.{op} {v(xs[0])} : {UN_T}\n")
    w.w(f"    graph.return {v(ops[-1][0])} : {T}\n  }}\n")


def emit_ge_generic(w, fi, F, ops):
    # Numbered as mlir-opt numbers the generic form (see emit_mlir_generic).
    off = (F - 1 - fi) * len(ops)
    aoff = (F - 1 - fi) * 2
    w.w(f'  "graph.func"() <{{function_type = {FN_T}, sym_name = "f{fi}"}}> ({{\n')
    w.w(f"  ^bb0(%arg{aoff}: {T}, %arg{aoff + 1}: {T}):\n")
    for r, op, xs in ops:
        ty = BIN_T if len(xs) == 2 else UN_T
        operands = ", ".join(v(x, off, aoff) for x in xs)
        w.w(f'    %{r + off} = "graph.{op}"({operands}) : {ty}\n')
    w.w(f'    "graph.return"({v(ops[-1][0], off, aoff)}) : ({T}) -> ()\n')
    w.w("  }) : () -> ()\n")


def emit_unreg_generic(w, fi, F, ops):
    # The generic-form workload of issue 18: the same computation in an unregistered
    # dialect, numbered as both tools number the generic form (see emit_mlir_generic).
    off = (F - 1 - fi) * len(ops)
    aoff = (F - 1 - fi) * 2
    w.w('  "u.func"() ({\n')
    w.w(f"  ^bb0(%arg{aoff}: {T}, %arg{aoff + 1}: {T}):\n")
    for r, op, xs in ops:
        ty = BIN_T if len(xs) == 2 else UN_T
        operands = ", ".join(v(x, off, aoff) for x in xs)
        w.w(f'    %{r + off} = "u.{op}"({operands}) : {ty}\n')
    w.w(f'    "u.return"({v(ops[-1][0], off, aoff)}) : ({T}) -> ()\n')
    w.w(f'  }}) {{function_type = {FN_T}, sym_name = "f{fi}"}} : () -> ()\n')


def emit_mlir(w, fi, ops, with_consts):
    w.w(f"  func.func @f{fi}({ARGS}) -> {T} {{\n")
    if with_consts:
        for name, lit in CONSTS:
            w.w(f"    %{name} = arith.constant dense<{lit}> : {T}\n")
    for r, op, xs in ops:
        w.w(f"    %{r} = {MLIR_NAME[op]} {', '.join(v(x) for x in xs)} : {T}\n")
    w.w(f"    return {v(ops[-1][0])} : {T}\n  }}\n")


def emit_mlir_generic(w, fi, F, ops):
    # mlir-opt --mlir-print-op-generic names values in one module-wide scope and numbers
    # the functions last-to-first: f{F-1} gets %arg0, %arg1, %0.., f0 the highest numbers.
    off = (F - 1 - fi) * len(ops)
    aoff = (F - 1 - fi) * 2
    w.w(f'  "func.func"() <{{function_type = {FN_T}, sym_name = "f{fi}"}}> ({{\n')
    w.w(f"  ^bb0(%arg{aoff}: {T}, %arg{aoff + 1}: {T}):\n")
    for r, op, xs in ops:
        ty = BIN_T if len(xs) == 2 else UN_T
        operands = ", ".join(v(x, off, aoff) for x in xs)
        w.w(f'    %{r + off} = "{MLIR_NAME[op]}"({operands}) {FASTMATH} : {ty}\n')
    w.w(f'    "func.return"({v(ops[-1][0], off, aoff)}) : ({T}) -> ()\n  }}) : () -> ()\n')


def generate(out_dir, F, N, seed, redundant, redundancy, quiet=False):
    os.makedirs(out_dir, exist_ok=True)
    tag = f"{F}x{N}"
    paths = {
        "ge": os.path.join(out_dir, f"ge-{tag}.air"),
        "ge-generic": os.path.join(out_dir, f"ge-{tag}.generic.air"),
        "mlir": os.path.join(out_dir, f"mlir-{tag}.mlir"),
        "mlir-generic": os.path.join(out_dir, f"mlir-{tag}.generic.mlir"),
        "unreg": os.path.join(out_dir, f"unreg-{tag}.generic.mlir"),
    }
    ws = {k: Writer(p + ".part") for k, p in paths.items()}
    ws["ge"].w("module {\n")
    ws["ge-generic"].w('"builtin.module"() ({\n')
    ws["mlir"].w("module {\n")
    ws["mlir-generic"].w('"builtin.module"() ({\n')
    ws["unreg"].w('"builtin.module"() ({\n')
    rng = random.Random(seed)
    for fi in range(F):
        ops = gen_function(rng, N, 0.0)
        emit_ge(ws["ge"], fi, ops, False)
        emit_ge_generic(ws["ge-generic"], fi, F, ops)
        emit_mlir(ws["mlir"], fi, ops, False)
        emit_mlir_generic(ws["mlir-generic"], fi, F, ops)
        emit_unreg_generic(ws["unreg"], fi, F, ops)
    ws["ge"].w("}\n")
    ws["ge-generic"].w("}) : () -> ()\n")
    ws["mlir"].w("}\n")
    ws["mlir-generic"].w("}) : () -> ()\n")
    ws["unreg"].w("}) : () -> ()\n")
    for k, w in ws.items():
        w.close()
        os.replace(paths[k] + ".part", paths[k])
    if redundant:
        rpaths = {
            "ge-redundant": os.path.join(out_dir, f"ge-{tag}-redundant.air"),
            "mlir-redundant": os.path.join(out_dir, f"mlir-{tag}-redundant.mlir"),
        }
        wg = Writer(rpaths["ge-redundant"] + ".part")
        wm = Writer(rpaths["mlir-redundant"] + ".part")
        wg.w("module {\n")
        wm.w("module {\n")
        rng = random.Random(seed + 1)
        for fi in range(F):
            ops = gen_function(rng, N, redundancy)
            emit_ge(wg, fi, ops, True)
            emit_mlir(wm, fi, ops, True)
        wg.w("}\n")
        wm.w("}\n")
        wg.close()
        wm.close()
        for k, p in rpaths.items():
            os.replace(p + ".part", p)
        paths.update(rpaths)
    if not quiet:
        for k, p in paths.items():
            print(f"{k:16} {p}  ({os.path.getsize(p) / 1e6:.1f} MB)")
    return paths


def find_ge_opt():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    for p in ("target/release/ge-opt", "target/debug/ge-opt"):
        cand = os.path.join(repo, p)
        if os.path.exists(cand):
            return cand
    return shutil.which("ge-opt")


def check_with_tools(seed):
    """Generate a small module and check that the generic files are byte-identical to what
    the tools print for the custom files, and that the custom files print back unchanged
    (modulo value renaming, which the generator already matches)."""
    ge_opt = find_ge_opt()
    mlir_opt = shutil.which("mlir-opt-22") or shutil.which("mlir-opt")
    ok = True
    sys.stdout.reconfigure(line_buffering=True)
    with tempfile.TemporaryDirectory() as d:
        p = generate(d, 3, 50, seed, True, 0.3, quiet=True)

        def run(cmd):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL: {' '.join(cmd)}\n{r.stderr}", file=sys.stderr)
                return None
            return r.stdout

        def same(label, got, path):
            nonlocal ok
            want = open(path, encoding="utf-8").read()
            # mlir-opt ends its output with an extra blank line
            if got is None or got.rstrip("\n") != want.rstrip("\n"):
                ok = False
                print(f"MISMATCH: {label} vs {os.path.basename(path)}", file=sys.stderr)
                if got is not None:
                    a, b = got.splitlines(), want.splitlines()
                    for i, (x, y) in enumerate(zip(a, b)):
                        if x != y:
                            print(f"  line {i + 1}:\n    tool: {x}\n    file: {y}", file=sys.stderr)
                            break
            else:
                print(f"ok: {label} == {os.path.basename(path)}", flush=True)

        if ge_opt:
            same("ge-opt", run([ge_opt, p["ge"]]), p["ge"])
            same("ge-opt --print-op-generic", run([ge_opt, "--print-op-generic", p["ge"]]),
                 p["ge-generic"])
            same("ge-opt (generic input)", run([ge_opt, p["ge-generic"]]), p["ge"])
            same("ge-opt --print-op-generic (unregistered)",
                 run([ge_opt, "--allow-unregistered-dialect", "--print-op-generic", p["unreg"]]),
                 p["unreg"])
            r = run([ge_opt, p["ge-redundant"]])
            print("ok: ge-opt accepts the redundant variant" if r is not None
                  else "FAIL: redundant variant")
            ok = ok and r is not None
        else:
            print("skip: ge-opt not built (cargo build --release -p ge-driver)")
        if mlir_opt:
            same("mlir-opt --mlir-print-op-generic",
                 run([mlir_opt, "--mlir-print-op-generic", p["mlir"]]), p["mlir-generic"])
            same("mlir-opt --mlir-print-op-generic (unregistered)",
                 run([mlir_opt, "--allow-unregistered-dialect", "--mlir-print-op-generic",
                      p["unreg"]]), p["unreg"])
            r = run([mlir_opt, p["mlir-generic"]])
            # the generic file must parse and mean the same as the custom one
            r2 = run([mlir_opt, p["mlir"]])
            if r is None or r != r2:
                ok = False
                print("MISMATCH: mlir-opt(generic) != mlir-opt(custom)", file=sys.stderr)
            else:
                print("ok: mlir-opt(generic) == mlir-opt(custom)")
            r = run([mlir_opt, p["mlir-redundant"]])
            print("ok: mlir-opt accepts the redundant variant" if r is not None
                  else "FAIL: redundant variant")
            ok = ok and r is not None
        else:
            print("skip: mlir-opt-22 not installed")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-F", "--functions", type=int, default=1000, help="functions (1000)")
    ap.add_argument("-N", "--ops", type=int, default=1000, help="ops per function (1000)")
    ap.add_argument("-o", "--out-dir", default="target/bench", help="output dir (target/bench)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--redundant", action="store_true",
                    help="also write the canonicalize/cse variant (issue 4)")
    ap.add_argument("--redundancy", type=float, default=0.3,
                    help="fraction of redundant ops in the --redundant variant (0.3)")
    ap.add_argument("--check-with-tools", action="store_true",
                    help="check the generator against ge-opt / mlir-opt-22 on a small module")
    a = ap.parse_args()
    if a.check_with_tools:
        sys.exit(0 if check_with_tools(a.seed) else 1)
    if a.functions < 1 or a.ops < 1:
        ap.error("F and N must be >= 1")
    generate(a.out_dir, a.functions, a.ops, a.seed, a.redundant, a.redundancy)


if __name__ == "__main__":
    main()
