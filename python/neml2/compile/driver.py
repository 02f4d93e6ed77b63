"""compile_model: compile every stale device folder of a model, then write its stub."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from .. import artifact
from .fingerprints import fingerprint_inputs, only_names_changed, rewrite_names, stale_reason
from .output import build_folder, missing_folders, write_stub
from .request import Prepared, Request
from .workers import Compiler, DeviceWork, Job


def compile_model(
    req: Request,
    prep: Prepared,
    devices: Sequence[torch.device],
    out: Path,
    processes: int = 1,
    force: bool = False,
) -> None:
    """Compile each stale device folder of ``prep``'s model under ``out``, then the stub.

    Each folder is compiled into a hidden build folder beside it and renamed into place
    when complete, so that a failure or Ctrl-C leaves the previous folder as it was; the
    stub is written (atomically) only once every folder it points to is in place.
    """
    start = time.perf_counter()
    work: dict[str, DeviceWork] = {}
    jobs: list[Job] = []
    up_to_date = renamed = 0
    model_folder = out / prep.model.name
    created = missing_folders(model_folder)
    done = False
    try:
        for device in devices:
            folder = artifact.device_dir(model_folder, device.type)
            inputs = fingerprint_inputs(prep, device)
            reason = "--force" if force else stale_reason(folder, inputs)
            if reason is None:
                print(f"{folder}: up to date, skipped", flush=True)
                up_to_date += 1
                continue
            if not force and only_names_changed(folder, inputs):
                rewrite_names(folder, inputs)
                print(
                    f"{folder}: only the names changed (--rename-*): {artifact.META_FILE} "
                    "rewritten, no graph compiled",
                    flush=True,
                )
                renamed += 1
                continue
            graphs = prep.sel.jobs(device)
            count = f"{len(graphs)} graph{'s' if len(graphs) != 1 else ''}"
            print(f"{folder}: {count} to compile ({', '.join(graphs)}); {reason}", flush=True)
            build = build_folder(folder)
            work[device.type] = DeviceWork(folder, inputs, set(graphs), build)
            jobs += [Job(device, graph, build / f"{graph}.pt2") for graph in graphs]
        compiler = Compiler(req, prep, work)
        compiler.run(jobs, processes)
        stub = artifact.stub_path(out, prep.model.name)
        text = artifact.stub_text(prep.model.name)
        if not stub.is_file() or stub.read_text() != text:
            write_stub(stub, text)
            print(f"{stub}: written")
        done = True
    finally:
        for device_work in work.values():
            shutil.rmtree(device_work.build, ignore_errors=True)
        if not done:
            for folder in created:  # deepest first; only those still empty
                with contextlib.suppress(OSError):
                    folder.rmdir()
    total = f"done in {time.perf_counter() - start:.1f} s: {compiler.compiled} graph"
    total += "s" if compiler.compiled != 1 else ""
    total += " compiled"
    if up_to_date:
        total += f", {up_to_date} device folder{'s' if up_to_date != 1 else ''} up to date"
    if renamed:
        total += f", {renamed} device folder{'s' if renamed != 1 else ''} renamed"
    print(total, flush=True)
