#!/usr/bin/env python3
"""Plot throughput vs batch size per device from bench/tune_hybrid's CSV.

    python3 bench/plot_tuning.py tune_hybrid.csv [-o tuning.png] [--title TEXT]

The recommended batch size of each device (the smallest within the tolerance of
its best throughput, as tune_hybrid prints it) is marked when tune_hybrid's JSON
sits next to the CSV or is given with --json. Without matplotlib the plot is
skipped with a message and a text summary is printed instead.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path


def read_sweep(path: Path) -> dict[str, list[tuple[int, float]]]:
    """Device -> [(batch size, points per second)], sorted by batch size."""
    curves: dict[str, list[tuple[int, float]]] = defaultdict(list)
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        missing = {"device", "batch_size", "throughput"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
        for row in reader:
            curves[row["device"]].append((int(row["batch_size"]), float(row["throughput"])))
    if not curves:
        raise ValueError(f"{path}: no measurements")
    return {d: sorted(points) for d, points in curves.items()}


def read_recommended(path: Path | None) -> dict[str, int]:
    """Device -> recommended batch size, from tune_hybrid's JSON (empty if none)."""
    if path is None or not path.exists():
        return {}
    data = json.loads(path.read_text())
    return {d["device"]: int(d["batch_size"]) for d in data.get("devices", [])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", type=Path, help="CSV written by bench/tune_hybrid")
    parser.add_argument("-o", "--output", type=Path, default=None, help="image to write")
    parser.add_argument("--json", type=Path, default=None, help="tune_hybrid's JSON")
    parser.add_argument("--title", default=None, help="plot title")
    args = parser.parse_args(argv)

    try:
        curves = read_sweep(args.csv)
        recommended = read_recommended(args.json or args.csv.with_suffix(".json"))
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as e:
        print(f"plot_tuning: {e}", file=sys.stderr)
        return 1

    for device, points in curves.items():
        best = max(t for _, t in points)
        mark = recommended.get(device)
        note = f", recommended batch size {mark}" if mark else ""
        print(f"{device}: best {best:.4g} points/s{note}")

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_tuning: matplotlib is not installed; no plot written (pip install matplotlib)")
        return 0

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for device, points in curves.items():
        xs = [b for b, _ in points]
        ys = [t for _, t in points]
        (line,) = ax.plot(xs, ys, marker="o", label=device)
        mark = recommended.get(device)
        if mark in xs:
            ax.plot([mark], [ys[xs.index(mark)]], marker="*", markersize=14, color=line.get_color())
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch size (points per chunk)")
    ax.set_ylabel("throughput (points/s)")
    ax.set_title(args.title or f"throughput vs batch size: {args.csv.name}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(title="device (* recommended)")
    output = args.output or args.csv.with_suffix(".png")
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
