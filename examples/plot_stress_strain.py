"""Plot the stress-strain curves that examples/time_stepping writes.

    python3 examples/plot_stress_strain.py stress_strain.csv [stress_strain.png]

One curve per sampled material point (axial stress against axial strain), with the
accepted steps marked. Needs matplotlib; without it, says so and exits 0, so that a
machine without it still runs the example.
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print("usage: plot_stress_strain.py CSV [PNG]", file=sys.stderr)
        return 2
    source = Path(argv[1])
    target = Path(argv[2]) if len(argv) == 3 else source.with_suffix(".png")
    curves: dict[int, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    try:
        with source.open(newline="") as f:
            for row in csv.DictReader(f):
                strain, stress = curves[int(row["point"])]
                strain.append(float(row["strain_11"]))
                stress.append(float(row["stress_11"]))
    except (OSError, KeyError, ValueError) as e:
        print(f"plot_stress_strain.py: cannot read {source}: {e}", file=sys.stderr)
        return 1
    if not curves:
        print(f"plot_stress_strain.py: {source} has no rows", file=sys.stderr)
        return 1

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(
            "plot_stress_strain.py: matplotlib is not installed; skipping the plot "
            "(pip install matplotlib)"
        )
        return 0

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for point, (strain, stress) in sorted(curves.items()):
        ax.plot(strain, stress, marker=".", markersize=3, label=f"point {point}")
    ax.set_xlabel("axial strain")
    ax.set_ylabel("axial stress")
    ax.set_title("J2 viscoplasticity, cyclic isochoric tension-compression")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=120)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
