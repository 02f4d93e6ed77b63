#!/usr/bin/env python3
"""Benchmark P6 driver: run bench/mpi_scaling.cpp under mpiexec with 1..N ranks.

Prints a Markdown table (ranks, time, throughput, speedup and parallel efficiency
against one rank), and optionally writes the raw runs as JSON and a speedup plot
as SVG. Standard library only.

    python3 bench/mpi_scaling.py --exe build/bench/mpi_scaling \\
        --stub build/aoti/model_aoti.i --max-ranks 16 --json p6.json --svg doc/p6.svg
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path


def mpiexec_flags(mpiexec: str, ranks: int, cores: int, bind: bool) -> list[str]:
    """Open MPI needs to be told to oversubscribe and to run as root; others take none."""
    version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True)
    if "Open MPI" not in version.stdout + version.stderr and "OpenRTE" not in version.stdout:
        return []
    flags = []
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        flags.append("--allow-run-as-root")
    if ranks > cores:
        flags += ["--oversubscribe", "--bind-to", "none"]
    elif bind:
        flags += ["--bind-to", "core", "--map-by", "core"]
    else:
        flags += ["--bind-to", "none"]
    return flags


def run_once(args: argparse.Namespace, ranks: int, cores: int) -> dict:
    cmd = [args.mpiexec, "-n", str(ranks), *mpiexec_flags(args.mpiexec, ranks, cores, args.bind)]
    cmd += [args.exe, args.stub, str(args.batch), str(args.repeat), str(args.chunk)]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if args.heap:
        # Keep large tensors in glibc's heap: otherwise every output above the mmap
        # threshold (32 MiB at most) is a fresh mapping, page-faulted on each call.
        env.update(MALLOC_MMAP_THRESHOLD_=str(1 << 34), MALLOC_TRIM_THRESHOLD_=str(1 << 36))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr.strip()}")
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if not lines:
        sys.exit(f"error: no result from {' '.join(cmd)}:\n{out.stdout}")
    result = json.loads(lines[-1])
    result["command"] = " ".join(cmd)
    return result


def table(runs: list[dict]) -> str:
    t1 = runs[0]["median_s"]
    rows = [
        "| ranks | time [ms] | throughput [Mpoints/s] | speedup | efficiency | slowest rank [ms] |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        speedup = t1 / r["median_s"]
        rows.append(
            f"| {r['ranks']} | {1e3 * r['median_s']:.2f} | {1e-6 * r['points_per_s']:.1f} "
            f"| {speedup:.2f} | {speedup / r['ranks']:.2f} | {1e3 * r['slowest_rank_s']:.2f} |"
        )
    return "\n".join(rows)


def svg(runs: list[dict], title: str) -> str:
    """Speedup against ranks, with the ideal line; plain SVG, no plotting library."""
    t1 = runs[0]["median_s"]
    n = max(r["ranks"] for r in runs)
    top = max(n, *(t1 / r["median_s"] for r in runs))
    w, h, m = 420, 320, 50

    def point(ranks: float, speedup: float) -> str:
        x = m + (w - 2 * m) * (ranks - 1) / max(n - 1, 1)
        y = h - m - (h - 2 * m) * (speedup - 1) / max(top - 1, 1)
        return f"{x:.1f},{y:.1f}"

    measured = [point(r["ranks"], t1 / r["median_s"]) for r in runs]
    dots = "".join(
        f'<circle cx="{p.split(",")[0]}" cy="{p.split(",")[1]}" r="3"/>' for p in measured
    )
    ticks = "".join(
        f'<text x="{point(k, 1).split(",")[0]}" y="{h - m + 16}" text-anchor="middle">{k}</text>'
        for k in sorted({r["ranks"] for r in runs})
    )
    top_y = point(1, top).split(",")[1]
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
            'font-family="sans-serif" font-size="12">',
            f'<rect width="{w}" height="{h}" fill="white"/>',
            f'<text x="{w / 2}" y="20" text-anchor="middle">{title}</text>',
            f'<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="black"/>',
            f'<line x1="{m}" y1="{h - m}" x2="{m}" y2="{m}" stroke="black"/>',
            f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">ranks</text>',
            f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" '
            'text-anchor="middle">speedup</text>',
            f'<text x="{m - 6}" y="{h - m + 4}" text-anchor="end">1</text>',
            f'<text x="{m - 6}" y="{top_y}" text-anchor="end">{top:.1f}</text>',
            ticks,
            f'<polyline points="{point(1, 1)} {point(n, n)}" fill="none" stroke="gray" '
            'stroke-dasharray="4 3"/>',
            f'<polyline points="{" ".join(measured)}" fill="none" stroke="steelblue" '
            'stroke-width="2"/>',
            f'<g fill="steelblue">{dots}</g>',
            f'<text x="{w - m}" y="{m}" text-anchor="end" fill="gray">dashed: ideal</text>',
            "</svg>",
            "",
        ]
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--exe", required=True, help="the mpi_scaling program (build/bench/mpi_scaling)")
    p.add_argument("--stub", required=True, help="model_aoti.i written by neml2-compile")
    p.add_argument("--ranks", type=int, nargs="+", help="rank counts (default 1..--max-ranks)")
    p.add_argument("--max-ranks", type=int, default=os.cpu_count() or 1)
    p.add_argument("--batch", type=int, default=1 << 21, help="global batch (fixed)")
    p.add_argument("--repeat", type=int, default=20, help="timed calls per run (median)")
    p.add_argument("--chunk", type=int, default=0, help="batch_sizes of the scheduler (0: none)")
    p.add_argument("--trials", type=int, default=3, help="runs per rank count, interleaved")
    p.add_argument("--heap", action="store_true", help="keep large outputs in glibc's heap")
    p.add_argument("--mpiexec", default="mpiexec")
    p.add_argument("--no-bind", dest="bind", action="store_false", help="leave ranks unbound")
    p.add_argument("--json", type=Path, help="write the runs here")
    p.add_argument("--svg", type=Path, help="write a speedup plot here")
    args = p.parse_args()

    cores = os.cpu_count() or 1
    ranks = args.ranks or list(range(1, args.max_ranks + 1))
    if ranks[0] != 1:
        ranks = [1, *ranks]
    # Trials interleave the rank counts so that drift of the machine hits all alike;
    # each rank count keeps its median trial.
    trials: dict[int, list[dict]] = {n: [] for n in ranks}
    for _ in range(args.trials):
        for n in ranks:
            trials[n].append(run_once(args, n, cores))
    runs = []
    for n in ranks:
        by_time = sorted(trials[n], key=lambda r: r["median_s"])
        run = dict(by_time[len(by_time) // 2])
        run["trials_s"] = [r["median_s"] for r in trials[n]]
        runs.append(run)
    machine = f"{platform.node()}: {platform.processor() or platform.machine()}, {cores} cores"
    heap = ", large outputs kept in the heap" if args.heap else ""
    print(f"P6 strong scaling, global batch {args.batch}{heap}, {machine}\n")
    print(table(runs))
    if args.json:
        meta = {"machine": machine, "heap": args.heap, "trials": args.trials}
        args.json.write_text(json.dumps({**meta, "runs": runs}, indent=2) + "\n")
    if args.svg:
        args.svg.write_text(svg(runs, f"P6: {args.batch} points, CPU ranks, 1 thread each"))


if __name__ == "__main__":
    main()
