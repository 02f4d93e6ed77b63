"""P5 baseline: the per-device loop a Python user writes over the same artifacts.

Loads ``<artifact_path>/cpu/forward.pt2`` with torch's AOTI loader, slices the batch into
chunks, runs each chunk and concatenates, and prints the throughput as JSON. The C++
side of the comparison is ``dispatch_throughput`` / ``batch_sweep`` on the same stub.

    python bench/python_loop.py STUB [--batch N] [--chunk C] [--device cpu]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch


def artifact_folder(stub: Path, device: str) -> Path:
    """``<stub folder>/<artifact_path>/<device type>`` read from the stub's text."""
    for line in stub.read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "artifact_path":
            return stub.parent / value.strip().strip("'\"") / torch.device(device).type
    sys.exit(f"{stub}: no artifact_path")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("stub", type=Path)
    p.add_argument("--batch", type=int, default=1 << 20)
    p.add_argument("--chunk", type=int, default=0, help="0: no chunking")
    p.add_argument("--device", default="cpu")
    p.add_argument("--reps", type=int, default=7)
    args = p.parse_args()

    folder = artifact_folder(args.stub, args.device)
    meta = json.loads((folder / "model_meta.json").read_text())
    if meta["parameters"]:
        sys.exit("python_loop.py measures models with baked parameters only")
    fn = torch._inductor.aoti_load_package(str(folder / "forward.pt2"))
    dev = torch.device(args.device)
    dtype = torch.float64 if meta["dtype"] == "float64" else torch.float32
    inputs = [
        torch.rand((args.batch, *v["shape"]), dtype=dtype) * 1e-3 for v in meta["inputs"]
    ]
    chunk = args.chunk or args.batch

    def run() -> list[torch.Tensor]:
        outs: list[list[torch.Tensor]] = []
        for b in range(0, args.batch, chunk):
            part = [x[b : b + chunk].to(dev) for x in inputs]
            outs.append([o.to("cpu") for o in fn(*part)])
        return [torch.cat(cols) for cols in zip(*outs)]

    run()
    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    t = statistics.median(times)
    print(json.dumps({"batch": args.batch, "chunk": chunk, "device": args.device,
                      "seconds": t, "mpts_per_s": args.batch / t / 1e6}))


if __name__ == "__main__":
    main()
