"""Summary of a suite_cost run: CPU seconds per test file (in-test Python + g++), g++ builds
by kind, and per worker its CPU seconds and the order it ran the files in."""

import collections
import glob
import json
import os
import sys

d = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
files = collections.defaultdict(collections.Counter)
workers = {}
for path in glob.glob(os.path.join(d, "stats", "gw*.json")) + glob.glob(os.path.join(d, "stats", "main.json")):
    data = json.load(open(path))
    name = os.path.basename(path)[:-5]
    workers[name] = data
    if name != "main":
        for f, v in data["files"].items():
            files[f].update(v)
gxx = collections.defaultdict(lambda: [0, 0.0])
kinds = collections.defaultdict(lambda: [0, 0.0])
for line in open(os.path.join(d, "cxx.log")):
    head, test = line.rstrip("\n").split("|", 1)
    wall, user, sys_, kind = head.split()[:4]
    f = test.split("::")[0]
    gxx[f][0] += 1
    gxx[f][1] += float(user) + float(sys_)
    kinds[kind][0] += 1
    kinds[kind][1] += float(user) + float(sys_)
rows = sorted(((files[f]["proc_cpu"] + gxx[f][1], f) for f in set(files) | set(gxx)), reverse=True)
print(f"{'file':42} {'tests':>5} {'py cpu':>7} {'nvrtc':>5} {'g++':>4} {'g++ cpu':>7} {'total':>7}")
for total, f in rows[:top]:
    a = files[f]
    print(f"{f:42} {a['n']:5d} {a['proc_cpu']:7.1f} {max(a['nvrtc'], 0):5d} {gxx[f][0]:4d} "
          f"{gxx[f][1]:7.1f} {total:7.1f}")
print(f"in-test Python CPU {sum(a['proc_cpu'] for a in files.values()):.1f} s; "
      f"g++ {sum(v[0] for v in gxx.values())} builds, {sum(v[1] for v in gxx.values()):.1f} s CPU")
for k, (n, cpu) in sorted(kinds.items()):
    print(f"  g++ {k:7} {n:4d} builds {cpu:7.1f} s CPU")
t0 = min((t for w in workers.values() for _, t in w["starts"]), default=0)
for name, w in sorted(workers.items()):
    if name == "main":
        continue
    seq = []
    for nodeid, t in w["starts"]:
        f = nodeid.split("::")[0].rsplit("/", 1)[-1]
        if not seq or seq[-1][0] != f:
            seq.append((f, t - t0))
    ru = w["rusage"]
    print(f"{name}: {ru['self'] + ru['children']:.1f} s CPU (self {ru['self']:.1f}, children "
          f"{ru['children']:.1f}); files: " + ", ".join(f"{f}@{s:.0f}s" for f, s in seq))
