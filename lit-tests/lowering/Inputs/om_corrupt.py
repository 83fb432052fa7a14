"""Write corrupted variants of an .om file: om_corrupt.py IN.om OUTDIR."""
import os
import struct
import sys
import zlib

src, out = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
os.makedirs(out, exist_ok=True)


def save(name, b):
    open(os.path.join(out, name), "wb").write(b)


def refresh_header(b):
    """Recompute the header checksum (bytes 28..32) after editing the header."""
    b = bytearray(b)
    b[28:32] = b"\0\0\0\0"
    b[28:32] = struct.pack("<I", zlib.crc32(bytes(b[:256])))
    return bytes(b)


def refresh_body(b):
    b = bytearray(b)
    b[24:28] = struct.pack("<I", zlib.crc32(bytes(b[256:])))
    return refresh_header(bytes(b))


save("empty.om", b"")
save("text.om", b"module {\n}\n" * 30)
save("truncated.om", data[: len(data) // 2])
save("short.om", data[:100])
flipped = bytearray(data)
flipped[len(data) - 10] ^= 0x10
save("bitflip.om", bytes(flipped))
v = bytearray(data)
v[8:12] = struct.pack("<I", 7)
save("version.om", refresh_header(bytes(v)))
t = bytearray(data)
t += b"\0" * 8
save("trailing.om", bytes(t))
# A partition table entry pointing past the end (checksums refreshed, so the
# reader gets as far as the table).
p = bytearray(data)
p[256 + 8 : 256 + 16] = struct.pack("<Q", len(data) * 4)
save("partition.om", refresh_body(bytes(p)))
# Valid container, bad contents: the task program's JSON is damaged.
off, length = struct.unpack("<QQ", data[256 + 2 * 32 + 8 : 256 + 2 * 32 + 24])
j = bytearray(data)
j[off] = ord("[")
j[256 + 2 * 32 + 24 : 256 + 2 * 32 + 28] = struct.pack("<I", zlib.crc32(bytes(j[off : off + length])))
save("json.om", refresh_body(bytes(j)))
