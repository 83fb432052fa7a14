#!/usr/bin/env python3
"""Write hostile .om models: each attack class of issue 18 as a file whose
checksums are valid, so only the reader's and the runtime's validation stand
between it and the runtime's unsafe code.

    tools/hostile_om.py SRC.om OUTDIR      # SRC: a compiled model (see below)
    tools/hostile_om.py --list              # the attack names

SRC must be lit-tests/runtime/Inputs/block.air compiled with the atc
pipeline (`ge-opt block.air --pass-pipeline=atc --emit-om=SRC.om`): the
attacks edit its JSON partitions (model def, task program, I/O description)
and its kernels text, then re-pack the container (header, partition table,
CRC-32s) as ge-om writes it. OUTDIR/<attack>.om is written for every attack;
lit-tests/runtime/hostile-om.test runs ge-run on each and checks the one-line
reason. Nothing is committed: the files are generated per test run.
"""
import json
import os
import struct
import sys
import zlib

MAGIC = b"\x89GEOM\r\n\x1a"
HEADER = 256
ENTRY = 32
ALIGN = 64
MODEL_DEF, WEIGHTS, TASKS, KERNELS, IO = 1, 2, 3, 4, 5


def read(path):
    b = open(path, "rb").read()
    assert b[:8] == MAGIC, "not an .om"
    count, table = struct.unpack_from("<I", b, 32)[0], struct.unpack_from("<Q", b, 40)[0]
    parts = {}
    for i in range(count):
        kind, _flags, off, length = struct.unpack_from("<IIQQ", b, table + i * ENTRY)
        parts[kind] = b[off : off + length]
    return b[:HEADER], parts


def pack(header, parts):
    """The container as ge_om::format::to_bytes_unchecked lays it out."""
    kinds = [MODEL_DEF, WEIGHTS, TASKS, KERNELS, IO]
    up = lambda x: (x + ALIGN - 1) // ALIGN * ALIGN
    out = bytearray(up(HEADER + ENTRY * len(kinds)))
    entries = []
    for k in kinds:
        data = parts[k]
        off = up(len(out))
        out.extend(b"\0" * (off - len(out)))
        out.extend(data)
        entries.append((k, off, len(data), zlib.crc32(data)))
    out[:HEADER] = header
    for i, (k, off, n, crc) in enumerate(entries):
        struct.pack_into("<IIQQII", out, HEADER + i * ENTRY, k, 0, off, n, crc, 0)
    struct.pack_into("<Q", out, 16, len(out))
    struct.pack_into("<I", out, 32, len(kinds))
    struct.pack_into("<Q", out, 40, HEADER)
    struct.pack_into("<I", out, 24, zlib.crc32(bytes(out[HEADER:])))
    struct.pack_into("<I", out, 28, 0)
    struct.pack_into("<I", out, 28, zlib.crc32(bytes(out[:HEADER])))
    return bytes(out)


def launches(m):
    return [t for t in m["tasks"]["tasks"] if t["op"] == "launch"]


def workspace(m):
    return next(i for i, a in enumerate(m["def"]["arenas"]) if a["role"] == "workspace")


def before_end(m, *tasks):
    ts = m["tasks"]["tasks"]
    end = next(i for i, t in enumerate(ts) if t["op"] == "end")
    ts[end:end] = list(tasks)


def buf(arena, offset, ty, nbytes, id=999):
    return {"arena": arena, "offset": offset, "type": ty, "bytes": nbytes, "id": id}


# ---- the attacks: each edits the decoded model in place ----------------------
# The comment says what it did before the loader's proof (issue 18).


def few_operands(m):
    """A launch passing fewer operands than its kernel takes (null pointers)."""
    launches(m)[0]["ins"].pop()


def extra_result(m):
    """A launch naming more out buffers than its kernel returns."""
    l = launches(m)[0]
    l["outs"].append(dict(l["outs"][0]))


def small_weight(m):
    """A weight smaller than the kernel argument it is bound to (read past the file)."""
    w = m["tasks"]["weights"][0]
    w["type"], w["bytes"] = "tensor<1xf32>", 4


def small_buffer(m):
    """A buffer operand smaller than its kernel argument."""
    for l in launches(m):
        for o in l["ins"]:
            if "buffer" in o:
                o["buffer"]["type"], o["buffer"]["bytes"] = "tensor<1xf32>", 4
                return
    raise SystemExit("small_buffer: no buffer operand")


def zero_copy_overrun(m):
    """A memcpy sized by the declared output arena into the caller's smaller
    zero-copy output tensor (before: a 16 KiB overrun of a 48-byte buffer, exit 0)."""
    out = m["io"]["outputs"][0]["buffer"]["arena"]
    ws = workspace(m)
    arenas = m["def"]["arenas"]
    arenas[out]["size"] = 16384
    arenas[ws]["size"] = max(arenas[ws]["size"], 16384)
    ty = "tensor<4096xf32>"
    before_end(
        m,
        {"op": "memcpy", "stream": 0, "src": buf(ws, 0, ty, 16384), "dst": buf(out, 0, ty, 16384)},
    )


def misaligned_buffer(m):
    """An f32 result at an odd offset of the workspace (typed f32 accesses
    through a misaligned pointer: undefined behaviour, found by the
    hostile-model proptest)."""
    ws = workspace(m)
    m["def"]["arenas"][ws]["size"] += 64
    for l in launches(m):
        for o in l["outs"]:
            if o["arena"] == ws:
                o["offset"] += 1
                return
    raise SystemExit("misaligned_buffer: no result in the workspace")


def misaligned_memcpy(m):
    """A memcpy of f32 elements from an offset that is not a multiple of 4
    (refused by the .om validator at load, whatever the shape)."""
    ws = workspace(m)
    arenas = m["def"]["arenas"]
    arenas[ws]["size"] = max(arenas[ws]["size"], 64)
    ty = "tensor<4xf32>"
    before_end(
        m,
        {"op": "memcpy", "stream": 0, "src": buf(ws, 2, ty, 16), "dst": buf(ws, 32, ty, 16)},
    )


def switch_empty_value(m):
    """A switch reading 8 bytes of a 0-byte value."""
    ws = workspace(m)
    before_end(
        m,
        {"op": "label", "label": 77, "stream": 0},
        {"op": "switch", "stream": 0, "value": buf(ws, 0, "tensor<0xi64>", 0), "targets": [77]},
    )


def huge_arena(m):
    """A workspace arena of 2^63 bytes (capacity-overflow panic)."""
    m["def"]["arenas"][workspace(m)]["size"] = 1 << 63


def arena_1e15(m):
    """A workspace arena of 10^15 bytes (allocation abort)."""
    m["def"]["arenas"][workspace(m)]["size"] = 10**15


def many_streams(m):
    """num_streams = 4e9 (allocation abort)."""
    m["def"]["num_streams"] = 4_000_000_000


def many_events(m):
    m["def"]["num_events"] = 4_000_000_000


def offset_overflow(m):
    """An out buffer whose offset + size wraps around 2^64."""
    launches(m)[0]["outs"][0]["offset"] = (1 << 64) - 16


def wait_in_loop(m):
    """A wait inside a goto loop whose record is outside it (hung forever)."""
    m["def"]["num_events"] = max(m["def"]["num_events"], 1)
    before_end(
        m,
        {"op": "record", "event": 0, "stream": 0},
        {"op": "label", "label": 78, "stream": 0},
        {"op": "wait", "event": 0, "stream": 0},
        {"op": "goto", "label": 78, "stream": 0},
    )


def endless_loop(m):
    """A goto loop that never exits (ends at the step budget / deadline)."""
    before_end(
        m,
        {"op": "label", "label": 79, "stream": 0},
        {"op": "goto", "label": 79, "stream": 0},
    )


def huge_kernel_constant(m):
    """A kernel constant of 4 TB from a few bytes of text (a splat)."""
    k = m["kernels"]
    body = k.index("{\n", k.index("graph.func")) + 1
    m["kernels"] = (
        k[:body]
        + "\n    %huge = data.constant dense<1.0> : tensor<1099511627776xf32>\n"
        + k[body:]
    )


def _in_kernel(m, text):
    k = m["kernels"]
    body = k.index("{\n", k.index("graph.func")) + 1
    m["kernels"] = k[:body] + text + k[body:]


def specialize_unknown_op(m):
    """A graph.specialize (hybrid execution) naming an op that does not exist."""
    _in_kernel(
        m,
        "\n    %hx = data.constant dense<1.0> : tensor<2xf32>"
        "\n    %ha = data.constant dense<0> : tensor<1xi64>"
        '\n    %hs = graph.specialize %hx, %ha {op = "graph.nope", static_attrs = {}, '
        'from_values = ["axes:ints"]} : (tensor<2xf32>, tensor<1xi64>) -> tensor<2xf32>\n',
    )


def specialize_huge_values(m):
    """A graph.specialize whose value operand is far larger than a shape."""
    _in_kernel(
        m,
        "\n    %hx = data.constant dense<1.0> : tensor<2xf32>"
        "\n    %ha = data.constant dense<0> : tensor<1000000xi64>"
        '\n    %hs = graph.specialize %hx, %ha {op = "graph.reduce_sum", static_attrs = {}, '
        'from_values = ["axes:ints"]} : (tensor<2xf32>, tensor<1000000xi64>) -> tensor<f32>\n',
    )


def specialize_undecided_symbol(m):
    """A graph.specialize whose result dim is a symbol (a value symbol) that no
    input decides and whose value is computed in the kernel by more ops than
    the runtime's host prefix evaluates at run start (65 > 64): known only
    after those ops ran, which the runtime cannot bind at run start."""
    chain = "".join(
        f"\n    %ha{k + 1} = graph.abs %ha{k} : (tensor<2xi64>) -> tensor<2xi64>" for k in range(65)
    )
    _in_kernel(
        m,
        "\n    %hx = data.constant dense<1.0> : tensor<4xf32>"
        "\n    %ha0 = data.constant dense<2> : tensor<2xi64>" + chain +
        '\n    %hs = graph.specialize %hx, %ha65 {op = "data.reshape", static_attrs = {}, '
        'from_values = ["shape:ints"]} : (tensor<4xf32>, tensor<2xi64>) -> tensor<HVxHWxf32>\n',
    )


def size_unbounded_symbol(m):
    """A data.nonzero (a data-dependent size) whose size symbol has no upper
    bound in the model: memory could not be planned for it."""
    _in_kernel(
        m,
        "\n    %zx = data.constant dense<1.0> : tensor<4xf32>"
        '\n    %zi, %zn = data.nonzero %zx {count = "NZ"} : (tensor<4xf32>) -> (tensor<1xNZxi64>, tensor<i64>)\n',
    )


def size_symbol_used_in_kernel(m):
    """A data.nonzero whose size symbol another op of the same kernel uses:
    that op would run at the bound, not at the count."""
    m["def"].setdefault("symbol_bounds", {})["NZ"] = 4
    _in_kernel(
        m,
        "\n    %zx = data.constant dense<1.0> : tensor<4xf32>"
        '\n    %zi, %zn = data.nonzero %zx {count = "NZ"} : (tensor<4xf32>) -> (tensor<1xNZxi64>, tensor<i64>)'
        "\n    %zt = data.transpose %zi {perm = [1, 0]} : (tensor<1xNZxi64>) -> tensor<NZx1xi64>\n",
    )


def size_unique_over_bound(m):
    """A data.unique whose size symbol's bound in the model def (1) is below
    the 3 distinct values it finds: its buffers are planned at the bound, so
    the kernel must refuse to write past it."""
    m["def"].setdefault("symbol_bounds", {})["NU"] = 1
    _in_kernel(
        m,
        "\n    %ux = data.constant dense<[1.0, 2.0, 3.0, 1.0]> : tensor<4xf32>"
        '\n    %uy, %ui, %uv, %uc, %un = data.unique %ux {count = "NU"} : (tensor<4xf32>) -> '
        "(tensor<NUxf32>, tensor<NUxi64>, tensor<4xi64>, tensor<NUxi64>, tensor<i64>)\n",
    )


def size_symbol_decided_twice(m):
    """A data.non_max_suppression whose size symbol is the input's batch
    symbol B: bound by the input's shape at run start and again by the op."""
    _in_kernel(
        m,
        "\n    %nb = data.constant dense<0.0> : tensor<1x2x4xf32>"
        "\n    %ns = data.constant dense<1.0> : tensor<1x1x2xf32>"
        "\n    %nm = data.constant dense<2> : tensor<i64>"
        "\n    %nt = data.constant dense<0.5> : tensor<f32>"
        '\n    %nr, %nn = data.non_max_suppression %nb, %ns, %nm, %nt, %nt {count = "B"} : '
        "(tensor<1x2x4xf32>, tensor<1x1x2xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> "
        "(tensor<Bx3xi64>, tensor<i64>)\n",
    )


ATTACKS = {
    f.__name__.replace("_", "-"): f
    for f in [
        few_operands,
        extra_result,
        small_weight,
        small_buffer,
        zero_copy_overrun,
        misaligned_buffer,
        misaligned_memcpy,
        switch_empty_value,
        huge_arena,
        arena_1e15,
        many_streams,
        many_events,
        offset_overflow,
        wait_in_loop,
        endless_loop,
        huge_kernel_constant,
        specialize_unknown_op,
        specialize_huge_values,
        specialize_undecided_symbol,
        size_unbounded_symbol,
        size_symbol_used_in_kernel,
        size_unique_over_bound,
        size_symbol_decided_twice,
    ]
}


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(ATTACKS))
        return
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    header, parts = read(sys.argv[1])
    os.makedirs(sys.argv[2], exist_ok=True)
    for name, attack in ATTACKS.items():
        m = {
            "def": json.loads(parts[MODEL_DEF]),
            "tasks": json.loads(parts[TASKS]),
            "io": json.loads(parts[IO]),
            "kernels": parts[KERNELS].decode(),
        }
        attack(m)
        new = dict(parts)
        new[MODEL_DEF] = json.dumps(m["def"], indent=2).encode()
        new[TASKS] = json.dumps(m["tasks"], indent=2).encode()
        new[IO] = json.dumps(m["io"], indent=2).encode()
        new[KERNELS] = m["kernels"].encode()
        with open(os.path.join(sys.argv[2], name + ".om"), "wb") as f:
            f.write(pack(header, new))


if __name__ == "__main__":
    main()
