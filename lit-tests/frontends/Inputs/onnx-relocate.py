"""Copy an ONNX model whose external data location is `external_data.bin`,
naming another location of the same length (so no protobuf length changes):

    python3 onnx-relocate.py SRC.onnx DST.onnx NEW_LOCATION
"""
import sys

src, dst, loc = sys.argv[1], sys.argv[2], sys.argv[3].encode()
old = b"external_data.bin"
data = open(src, "rb").read()
if data.count(old) != 1 or len(loc) != len(old):
    sys.exit(f"need one '{old.decode()}' in {src} and a {len(old)}-byte location")
open(dst, "wb").write(data.replace(old, loc))
