"""Summarise a ge-run Chrome trace: tracks, slices per track, flow arrows."""
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
tracks = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
slices = {}
for e in events:
    if e["ph"] == "X":
        assert e["dur"] > 0 and e["ts"] >= 0, e
        slices[e["tid"]] = slices.get(e["tid"], 0) + 1
starts = sum(1 for e in events if e["ph"] == "s")
ends = sum(1 for e in events if e["ph"] == "f")
print(f"tracks: {len(tracks)}")
print(f"tracks named 'stream N': {sum(1 for t, n in tracks.items() if n == f'stream {t}')}")
print(f"tracks with slices: {len(slices)}")
print(f"slices on unknown tracks: {sum(1 for t in slices if t not in tracks)}")
print(f"flows: {starts} starts, {ends} ends")
