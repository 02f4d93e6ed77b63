"""P5 baseline: the per-device loop a Python user writes over the same artifacts.

Loads ``<artifact_path>/<device>/forward.pt2`` with torch's AOTI loader, slices the
CPU-resident batch into chunks, runs each chunk on the device, brings the results back
and concatenates, and prints the throughput as JSON. The C++ side of the comparison is
``dispatch_throughput`` on the same stub.

With several devices (``--device cpu,cuda:0``) it is the loop a Python user writes for
CPU + GPU: each device alone first, to split the batch in proportion to the measured
throughputs, then the devices in turn, each over its share (one thread, no overlap).

    python bench/python_loop.py STUB [--batch N] [--chunk C] [--device cpu[,cuda:0]]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
from neml2.runtime import use_system_cxx_runtime


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

    devices = [torch.device(d) for d in args.device.split(",")]
    inputs: list[torch.Tensor] = []
    fns = {}
    # Without it, torch 2.11.0+cu130 crashes in the loader (doc/python.md).
    use_system_cxx_runtime()
    for dev in devices:
        folder = artifact_folder(args.stub, str(dev))
        meta = json.loads((folder / "model_meta.json").read_text())
        if meta["parameters"]:
            sys.exit("python_loop.py measures models with baked parameters only")
        fns[dev] = torch._inductor.aoti_load_package(
            str(folder / "forward.pt2"), device_index=dev.index if dev.index is not None else -1
        )
        if not inputs:
            dtype = torch.float64 if meta["dtype"] == "float64" else torch.float32
            inputs = [
                torch.rand((args.batch, *v["shape"]), dtype=dtype) * 1e-3 for v in meta["inputs"]
            ]
    chunk = args.chunk or args.batch

    def loop(dev: torch.device, begin: int, end: int) -> list[list[torch.Tensor]]:
        outs = []
        for b in range(begin, end, chunk):
            part = [x[b : min(b + chunk, end)].to(dev) for x in inputs]
            outs.append([o.to("cpu") for o in fns[dev](*part)])
        return outs

    def timed(run) -> float:
        run()
        times = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    alone = {str(d): timed(lambda d=d: loop(d, 0, args.batch)) for d in devices}
    if len(devices) == 1:
        t = alone[str(devices[0])]
    else:
        speed = [1 / alone[str(d)] for d in devices]
        ends = [round(args.batch * sum(speed[: i + 1]) / sum(speed)) for i in range(len(devices))]

        def hybrid() -> list[torch.Tensor]:
            outs = []
            for dev, begin, end in zip(devices, [0, *ends[:-1]], ends, strict=True):
                outs += loop(dev, begin, end)
            return [torch.cat(cols) for cols in zip(*outs, strict=True)]

        t = timed(hybrid)
    print(json.dumps({"batch": args.batch, "chunk": chunk, "device": args.device,
                      "seconds": t, "mpts_per_s": args.batch / t / 1e6,
                      "alone_mpts_per_s": {d: args.batch / s / 1e6 for d, s in alone.items()}}))


if __name__ == "__main__":
    main()
