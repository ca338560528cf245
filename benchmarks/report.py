"""Turn a pytest-benchmark JSON file into the Markdown ratio table.

    python benchmarks/report.py RESULTS.json [-o RESULTS.md]

Per group, one row per case: each impl's median time per call (from ``extra_info``:
``calls`` per round), then ratios, all from the one run the file holds:

* ``numba/ours``, ``cupy/ours``: the peer's time over ours (above 1: ours is faster);
* ``vs copy``: our achieved GB/s over the device-to-device copy GB/s measured in the same
  run at the same dtype and size (throughput, reduce);
* ``above floor``: our per-call time minus the empty-kernel launch floor (dispatch);
* ``vs pinned``: the time the same bytes take at the measured pinned rates over ours
  (host-roundtrip).

The compile group uses ``first_call_ms`` (in-process first call, fresh process).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import OrderedDict

IMPLS = ["ours", "numba-cuda", "cupy", "reference"]


def _t(b):
    """Seconds per call (compile: the child's first-call time)."""
    e = b.get("extra_info", {})
    if "first_call_s" in e:
        return e["first_call_s"]
    return b["stats"]["median"] / e.get("calls", 1)


def _fmt_time(s):
    if s is None:
        return "—"
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.3f} s"


def _ratio(a, b):
    return "—" if a is None or b is None or b == 0 else f"{a / b:.2f}×"


def _pct(a, b):
    return "—" if a is None or b is None or b == 0 else f"{100 * a / b:.0f}%"


def build(data) -> str:
    mi = data.get("machine_info", {})
    env = mi.get("numbacuda_ufunc", {})
    benches = data["benchmarks"]
    by_group: dict = OrderedDict()
    for b in benches:
        by_group.setdefault(b["group"] or "other", []).append(b)

    emulated = env.get("backend", "").startswith("host")
    lines = []
    title = env.get("gpu", "unknown device")
    lines.append(f"# numbacuda_ufunc benchmarks: {title}")
    lines.append("")
    if emulated:
        lines.append("**CPU / host-backend emulation (NUMBACUDA_UFUNC_ENABLE_CUDASIM=1): "
                     "these are NOT GPU numbers.** Only the groups that run without a GPU "
                     "are here; the GPU groups were skipped.")
        lines.append("")
    lines.append(f"Run {data.get('datetime', '?')}; " + ", ".join(
        f"{k} {v}" for k, v in env.items() if v is not None and k != "gpu") +
        f"; CPU {mi.get('cpu', {}).get('brand_raw', '?')}.")
    lines.append("")
    lines.append("Times are medians per call; `peer/ours` above 1× means ours is faster. "
                 "All numbers of a table come from the same run.")

    # references measured in the same run
    copy_gbps = {}
    for b in by_group.get("copy-bandwidth", []):
        e = b["extra_info"]
        key = (e.get("dtype"), e.get("log2"))
        copy_gbps[key] = max(copy_gbps.get(key, 0), e.get("GBps", 0))
    pinned = {}
    for b in by_group.get("host-roundtrip", []):
        e = b["extra_info"]
        if "direction" in e:
            pinned[(e["direction"], e["log2"])] = e["GBps"]
    floor = None
    for b in by_group.get("dispatch", []):
        if b["extra_info"].get("floor") == "cuLaunchKernel-ctypes":
            floor = _t(b)

    for group, items in by_group.items():
        rows: dict = OrderedDict()
        for b in items:
            e = b.get("extra_info", {})
            rows.setdefault(e.get("case", b["name"]), {})[e.get("impl", "?")] = b
        present = [i for i in IMPLS if any(i in r for r in rows.values())]
        extra_cols = []
        if group.startswith("throughput") or group == "reduce":
            extra_cols = ["ours GB/s", "ours vs copy"]
        elif group == "dispatch" and floor is not None:
            extra_cols = ["ours above floor"]
        elif group == "host-roundtrip" and pinned:
            extra_cols = ["ours GB/s", "ours vs pinned"]
        elif group in ("gufunc", "copy-bandwidth", "staging-copy"):
            extra_cols = ["GB/s (ours or ref)"]
        peers = [p for p in ("numba-cuda", "cupy") if p in present and "ours" in present]
        head = ["case"] + present + extra_cols + [f"{p}/ours" for p in peers]
        lines += ["", f"## {group}", "", "| " + " | ".join(head) + " |",
                  "|" + "---|" * len(head)]
        if group == "dispatch" and floor is not None:
            lines.insert(len(lines) - 2, f"Empty-kernel launch floor (cuLaunchKernel via "
                                         f"ctypes, same run): {_fmt_time(floor)} per launch.\n")
        if group == "copy-bandwidth":
            lines.insert(len(lines) - 2, "Device-to-device copy, bytes read + written.\n")
        for case, impls in rows.items():
            t = {i: _t(b) for i, b in impls.items()}
            cells = [case] + [_fmt_time(t.get(i)) for i in present]
            ours = impls.get("ours")
            e = ours["extra_info"] if ours else {}
            if group.startswith("throughput") or group == "reduce":
                ref = copy_gbps.get((e.get("dtype", "float32"), e.get("log2", 28)))
                if group == "reduce" and ref is None:
                    ref = copy_gbps.get(("float32", 28))
                cells += [f"{e['GBps']:.0f}" if "GBps" in e else "—", _pct(e.get("GBps"), ref)]
            elif group == "dispatch" and floor is not None:
                cells.append(_fmt_time(t["ours"] - floor) if "ours" in t else "—")
            elif group == "host-roundtrip" and pinned:
                if "ours" in t and "h2d_bytes" in e:
                    h2d, d2h = pinned.get(("h2d", e["log2"])), pinned.get(("d2h", e["log2"]))
                    tref = (e["h2d_bytes"] / h2d + e["d2h_bytes"] / d2h) / 1e9 \
                        if h2d and d2h else None
                    cells += [f"{e['GBps']:.1f}", _pct(tref, t["ours"])]
                else:
                    cells += ["—", "—"]
            elif group in ("gufunc", "copy-bandwidth", "staging-copy"):
                src = ours or next(iter(impls.values()))
                g = src["extra_info"].get("GBps")
                digits = 1 if group == "staging-copy" else 0  # a CPU copy: a few GB/s
                cells.append(f"{g:.{digits}f}" if g is not None else "—")
            cells += [_ratio(t.get(p), t.get("ours")) for p in peers]
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("-o", "--output")
    args = ap.parse_args(argv)
    with open(args.json) as f:
        text = build(json.load(f))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
