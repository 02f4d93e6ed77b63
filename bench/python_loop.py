"""P5 baseline: the per-device loop a Python user writes over the same artifacts.

Loads ``<artifact_path>/<device>/forward.pt2`` with torch's AOTI loader, slices the
CPU-resident batch into chunks, runs each chunk on the device and copies its results into
their rows of one CPU tensor per graph return, as the C++ dispatcher stitches them, and
prints the throughput as JSON. Each call allocates its results, as the C++ entry points
that return them do; with ``--reuse`` every call writes into the same preallocated
results, the baseline of the C++ calls into caller-owned buffers. The C++ side of the
comparison is ``dispatch_throughput`` on the same stub.

With several devices (``--device cpu,cuda:0``) it is the loop a Python user writes for
CPU + GPU: each device alone first, to split the batch in proportion to the measured
throughputs, then the devices in turn, each over its share (one thread, no overlap).

    python bench/python_loop.py STUB [--batch N] [--chunk C] [--device cpu[,cuda:0]] [--reuse]
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
    p.add_argument("--reuse", action="store_true", help="write every call into one result")
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
    # One row through the first device: the dtype and per-point shape of each return.
    probe = fns[devices[0]](*[x[:1].to(devices[0]) for x in inputs])

    def results() -> list[torch.Tensor]:
        """One CPU tensor of the whole batch per graph return."""
        return [torch.empty((args.batch, *r.shape[1:]), dtype=r.dtype) for r in probe]

    reused = results() if args.reuse else None

    def loop(dev: torch.device, begin: int, end: int, outs: list[torch.Tensor]) -> None:
        for b in range(begin, end, chunk):
            e = min(b + chunk, end)
            part = [x[b:e].to(dev) for x in inputs]
            for out, r in zip(outs, fns[dev](*part), strict=True):
                out[b:e].copy_(r)

    def call(ranges: list[tuple[torch.device, int, int]]) -> list[torch.Tensor]:
        outs = reused if reused is not None else results()
        for dev, begin, end in ranges:
            loop(dev, begin, end, outs)
        return outs

    def timed(run) -> float:
        run()
        times = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    alone = {str(d): timed(lambda d=d: call([(d, 0, args.batch)])) for d in devices}
    if len(devices) == 1:
        t = alone[str(devices[0])]
    else:
        speed = [1 / alone[str(d)] for d in devices]
        ends = [round(args.batch * sum(speed[: i + 1]) / sum(speed)) for i in range(len(devices))]
        shares = list(zip(devices, [0, *ends[:-1]], ends, strict=True))
        t = timed(lambda: call(shares))
    print(json.dumps({"batch": args.batch, "chunk": chunk, "device": args.device,
                      "reuse": args.reuse, "seconds": t, "mpts_per_s": args.batch / t / 1e6,
                      "alone_mpts_per_s": {d: args.batch / s / 1e6 for d, s in alone.items()}}))


if __name__ == "__main__":
    main()
