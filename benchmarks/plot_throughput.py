"""Plot elementwise throughput against size from a benchmark JSON file.

    python benchmarks/plot_throughput.py RESULTS.json [-o RESULTS.png]

One panel per dtype: achieved GB/s of contiguous ``a + b`` (group ``throughput-add2``)
against the element count, one line per implementation (ours, CuPy, numba-cuda), with
the device-to-device copy bandwidth measured in the same run (group ``copy-bandwidth``,
its best size) drawn as the bound. Needs matplotlib (present on the GPU machines; not a
dependency of the package).
"""

from __future__ import annotations

import argparse
import json

STYLE = {"ours": ("tab:green", "o"), "cupy": ("tab:blue", "s"),
         "numba-cuda": ("tab:orange", "^")}


def curves(data):
    """{dtype: {impl: [(elements, GB/s), ...]}} and {dtype: copy GB/s} from the JSON."""
    lines: dict = {}
    bound: dict = {}
    for b in data["benchmarks"]:
        e = b.get("extra_info", {})
        if b.get("group") == "throughput-add2" and e.get("layout") == "contiguous" \
                and "GBps" in e:
            lines.setdefault(e["dtype"], {}).setdefault(e["impl"], []).append(
                (2 ** e["log2"], e["GBps"]))
        elif b.get("group") == "copy-bandwidth" and "GBps" in e:
            bound[e["dtype"]] = max(bound.get(e["dtype"], 0.0), e["GBps"])
    return lines, bound


def plot(data, path: str) -> bool:
    """Write the plot to ``path``; False (and no file) when the run has no throughput data."""
    lines, bound = curves(data)
    if not lines:
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dtypes = sorted(lines)
    fig, axes = plt.subplots(1, len(dtypes), figsize=(6 * len(dtypes), 4.5), squeeze=False)
    env = data.get("machine_info", {}).get("numbacuda_ufunc", {})
    for ax, dt in zip(axes[0], dtypes):
        for impl, pts in sorted(lines[dt].items()):
            pts.sort()
            color, marker = STYLE.get(impl, ("gray", "x"))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color,
                    label=impl)
        if dt in bound:
            ax.axhline(bound[dt], color="black", linestyle="--",
                       label=f"device copy {bound[dt]:.0f} GB/s")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("elements")
        ax.set_ylabel("GB/s (bytes read + written)")
        ax.set_title(f"a + b, {dt}, contiguous")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best")
    fig.suptitle(f"{env.get('gpu', 'unknown GPU')}: elementwise throughput against size")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("-o", "--output", default=None)
    args = ap.parse_args(argv)
    with open(args.json) as f:
        data = json.load(f)
    path = args.output or args.json.rsplit(".", 1)[0] + ".png"
    print(f"wrote {path}" if plot(data, path) else
          "no contiguous throughput-add2 results in this run: no plot")


if __name__ == "__main__":
    main()
