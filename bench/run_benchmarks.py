"""Run the dispatch benchmarks in one go and write a Markdown report, JSON and plots.

    python bench/run_benchmarks.py --build build --stub aoti/model_aoti.i --out bench-results

Runs ``dispatch_throughput`` (P1-P4), ``batch_sweep`` per device (throughput and peak
memory vs batch size) and ``python_loop.py`` (the P5 baseline: a Python per-device loop
over the same artifacts) back to back, so the ratios come from one run on one machine.
Plots need matplotlib; without it the report says so and the rest is written.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(cmd: list[str]) -> str:
    print("+", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return done.stdout


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", type=Path, default=Path("build"))
    p.add_argument("--stub", type=Path, required=True)
    p.add_argument("--batch", type=int, default=1 << 22)
    p.add_argument("--devices", default="cpu", help="comma-separated, e.g. cpu,cuda:0")
    p.add_argument("--out", type=Path, default=Path("bench-results"))
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    bench = args.build / "bench"

    report = ["# Benchmark report", ""]
    table = run([str(bench / "dispatch_throughput"), str(args.stub), str(args.batch),
                 str(args.out / "dispatch.json")])
    report += ["## P1-P4 (`dispatch_throughput`)", "", "```", table.strip(), "```", ""]

    sweeps: dict[str, list[dict[str, str]]] = {}
    for dev in args.devices.split(","):
        csv_path = args.out / f"sweep_{dev.replace(':', '')}.csv"
        table = run([str(bench / "batch_sweep"), str(args.stub), dev, "22", str(csv_path)])
        report += [f"## Throughput vs batch size on {dev} (`batch_sweep`)", "", table.strip(), ""]
        with csv_path.open() as f:
            sweeps[dev] = list(csv.DictReader(f))

    chunk = args.batch // 16
    cpp = json.loads((args.out / "dispatch.json").read_text())
    rows = {r["what"]: r["value"] for r in cpp["rows"]}
    cpp_chunked = next(v for w, v in rows.items() if w.startswith("CPU Simple"))
    report += ["## P5: C++ dispatch vs a Python per-device loop (chunk B/16)", "",
               "| path | Mpts/s |", "|---|---:|"]
    p5 = {}
    devices = args.devices.split(",")
    cases = [("cpu", cpp_chunked, "C++ `Simple{cpu, B/16}`", ">= 1.0 single device")]
    hybrid = next((v for w, v in rows.items() if w.startswith("hybrid {")), None)
    if len(devices) > 1 and hybrid is not None:
        cases.append((args.devices, hybrid, "C++ hybrid (P4 row)", ">= 1.3 hybrid"))
    for dev, cpp_value, cpp_name, target in cases:
        try:
            py = json.loads(run([sys.executable, str(HERE / "python_loop.py"), str(args.stub),
                                 "--batch", str(args.batch), "--chunk", str(chunk),
                                 "--device", dev]))
        except subprocess.CalledProcessError as err:
            tail = (err.stderr or "").strip().splitlines()[-1:] or [f"exit status {err.returncode}"]
            report += [f"| {cpp_name} | {cpp_value:.1f} |",
                       f"| Python loop on {dev} | failed: {tail[0]} |", ""]
            continue
        p5[dev] = py
        report += [f"| {cpp_name} | {cpp_value:.1f} |",
                   f"| Python loop on {dev} | {py['mpts_per_s']:.1f} |",
                   f"| **ratio** (target {target}) | **{cpp_value / py['mpts_per_s']:.2f}** |"]
    report.append("")
    (args.out / "python_loop.json").write_text(json.dumps(p5) + "\n")

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for dev, rows in sweeps.items():
            ax.loglog([int(r["batch"]) for r in rows], [float(r["mpts_per_s"]) for r in rows],
                      "o-", label=dev)
        ax.set_xlabel("batch size (points)")
        ax.set_ylabel("throughput (Mpts/s)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.out / "throughput_vs_batch.png", dpi=120)
        report += ["![throughput vs batch](throughput_vs_batch.png)", ""]
    except ImportError:
        report += ["(matplotlib is not installed: no plot)", ""]

    (args.out / "report.md").write_text("\n".join(report))
    print(f"wrote {args.out / 'report.md'}")


if __name__ == "__main__":
    main()
