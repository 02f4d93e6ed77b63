"""Draw a dispatch trace (NEML2_TRACE=trace.json) as a timeline PNG: one row per worker
track, one bar per chunk phase (copy in, compute, copy out).

    python bench/trace_timeline.py trace.json timeline.png [--call N]

The same JSON opens in Perfetto (ui.perfetto.dev) or chrome://tracing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

COLORS = {"copy in": "#4c72b0", "compute": "#55a868", "copy out": "#c44e52"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace", type=Path)
    p.add_argument("png", type=Path)
    p.add_argument("--call", type=int, default=None,
                   help="only the N-th dispatch (0-based; negative counts from the end)")
    args = p.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("trace_timeline.py needs matplotlib (pip install matplotlib)")

    events = json.loads(args.trace.read_text())["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
    spans = [e for e in events if e.get("ph") == "X"]
    if args.call is not None:
        calls = sorted((e for e in spans if e["cat"] == "dispatch"), key=lambda e: e["ts"])
        pick = calls[args.call]
        lo, hi = pick["ts"], pick["ts"] + pick["dur"]
        spans = [e for e in spans if lo <= e["ts"] <= hi]
    if not spans:
        sys.exit(f"{args.trace}: no events")
    t0 = min(e["ts"] for e in spans)
    tids = sorted({e["tid"] for e in spans})
    fig, ax = plt.subplots(figsize=(10, 1 + 0.5 * len(tids)))
    for row, tid in enumerate(tids):
        for e in (e for e in spans if e["tid"] == tid):
            color = COLORS.get(e["name"], "#8c8c8c")
            ax.broken_barh([((e["ts"] - t0) / 1e3, e["dur"] / 1e3)], (row - 0.4, 0.8),
                           facecolors=color)
    ax.set_yticks(range(len(tids)), [names.get(t, str(t)) for t in tids])
    ax.set_xlabel("time (ms)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLORS.values()]
    ax.legend(handles, list(COLORS), loc="upper right", fontsize="small")
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
