"""Copy an .om with another SoC name in its header (header checksum redone)."""
import sys
import zlib

src, dst, soc = sys.argv[1], sys.argv[2], sys.argv[3]
b = bytearray(open(src, "rb").read())
b[48:80] = soc.encode().ljust(32, b"\0")
b[28:32] = b"\0\0\0\0"
b[28:32] = zlib.crc32(bytes(b[:256])).to_bytes(4, "little")
open(dst, "wb").write(bytes(b))
