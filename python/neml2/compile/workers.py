"""Compiling the graphs: one job per graph and device, run in this process or, with -j,
in spawned worker processes that each rebuild the model from the input file."""

from __future__ import annotations

import multiprocessing
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .. import artifact
from ..errors import Neml2Error
from .export import Graph, compile_graph
from .fingerprints import fingerprint, fingerprint_inputs, write_fingerprint, written_meta
from .output import install_folder, interrupts_blocked
from .request import Prepared, Request, prepare


@dataclass(frozen=True)
class Job:
    """One graph for one device, written to ``path`` in the device's build folder."""

    device: torch.device
    graph: str
    path: Path


@dataclass
class DeviceWork:
    """A device folder being compiled: its fingerprint inputs, the graphs still running and
    the hidden build folder beside it that they are written into (see :func:`build_folder`)."""

    folder: Path
    inputs: dict[str, Any]
    remaining: set[str]
    build: Path
    start: float = 0.0


def compile_one(prep: Prepared, job: Job, verbose: bool) -> float:
    """Compile one graph (the model already on ``job.device``); the seconds it took."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            if not verbose:
                warnings.simplefilter("ignore")
            module = Graph(prep.model, job.graph, prep.sel, prep.dtype).to(job.device)
            compile_graph(module, job.device, job.path)
    except Exception as err:
        if verbose:
            raise
        raise Neml2Error(failure_message(job, err)) from None
    return time.perf_counter() - start


def failure_message(job: Job, err: BaseException) -> str:
    first = (str(err).strip().splitlines() or [""])[0]
    return (
        f"compiling {job.graph} for {job.device.type} failed: {type(err).__name__}: {first} "
        "(rerun with --verbose for the full traceback)"
    )


def init_worker() -> None:
    """A worker compiles one graph at a time; the -j processes are the parallelism.

    A worker ignores Ctrl-C (it starts with SIGINT blocked, see :func:`interrupts_blocked`):
    the parent, interrupted, ends the workers and removes the build folders.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    config = torch._inductor.config
    if hasattr(config, "compile_threads"):
        config.compile_threads = 1


def compile_in_worker(
    req: Request, device: str, graph: str, path: str, expected: str
) -> tuple[float, str | None, str | None]:
    """Worker-process entry: (seconds, one-line error or None, traceback text or None).

    Errors come back as text rather than as exceptions, so that each one reaches the
    parent whole (an exception that cannot be pickled would not) and prints as in
    serial mode.
    """
    job = Job(torch.device(device), graph, Path(path))
    try:
        prep = prepare(req)
        if fingerprint(fingerprint_inputs(prep, job.device)) != expected:
            return 0.0, f"{req.file} changed while it was being compiled; run again", None
        prep.model.to(job.device)
        return compile_one(prep, job, req.verbose), None, None
    except Neml2Error as err:
        return 0.0, str(err), None
    except Exception as err:
        return 0.0, failure_message(job, err), traceback.format_exc()


#: Seconds the workers are given to end after SIGTERM before they are sent SIGKILL.
TERMINATE_GRACE = 5.0


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Drop the queued jobs and end the running ones now rather than after their compile.

    Every worker is ended and reaped before this returns: one still alive after SIGTERM
    (it ignores SIGTERM or is stuck) is killed, since the pool's own thread and
    multiprocessing's exit handler would otherwise wait for it without a limit when the
    interpreter exits.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + TERMINATE_GRACE
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.kill()
            process.join(timeout=TERMINATE_GRACE)


class Compiler:
    """Runs the jobs of every stale device folder, serially or in ``jobs`` processes."""

    def __init__(self, req: Request, prep: Prepared, work: dict[str, DeviceWork]) -> None:
        self.req = req
        self.prep = prep
        self.work = work
        self.total = sum(len(w.remaining) for w in work.values())
        self.started = 0
        self.compiled = 0

    def announce(self, job: Job) -> None:
        self.started += 1
        work = self.work[job.device.type]
        if not work.start:
            work.start = time.perf_counter()
        print(
            f"[{self.started}/{self.total}] compiling {job.graph} for {job.device.type} ...",
            flush=True,
        )

    def finished(self, job: Job, seconds: float) -> None:
        self.compiled += 1
        work = self.work[job.device.type]
        print(f"{work.folder / job.path.name}: compiled in {seconds:.1f} s", flush=True)
        work.remaining.discard(job.graph)
        if not work.remaining:
            artifact.write_meta(work.build, written_meta(work.inputs))
            write_fingerprint(work.build, work.inputs)
            install_folder(work.build, work.folder)
            elapsed = time.perf_counter() - work.start
            print(f"{work.folder}: done in {elapsed:.1f} s", flush=True)

    def run(self, jobs: Sequence[Job], processes: int) -> None:
        if processes <= 1 or len(jobs) <= 1:
            self.run_serial(jobs)
        else:
            self.run_parallel(jobs, min(processes, len(jobs)))

    def run_serial(self, jobs: Sequence[Job]) -> None:
        for job in jobs:
            self.announce(job)
            self.prep.model.to(job.device)
            self.finished(job, compile_one(self.prep, job, self.req.verbose))

    def run_parallel(self, jobs: Sequence[Job], processes: int) -> None:
        queue = iter(jobs)
        running: dict[Future[tuple[float, str | None, str | None]], Job] = {}
        pool = ProcessPoolExecutor(
            max_workers=processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=init_worker,
        )

        def submit_next() -> None:
            job = next(queue, None)
            if job is None:
                return
            self.announce(job)
            expected = fingerprint(self.work[job.device.type].inputs)
            with interrupts_blocked():
                future = pool.submit(
                    compile_in_worker, self.req, str(job.device), job.graph, str(job.path), expected
                )
            running[future] = job

        clean = False
        try:
            for _ in range(processes):
                submit_next()
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    job = running.pop(future)
                    try:
                        seconds, error, trace = future.result()
                    except BrokenProcessPool:
                        raise Neml2Error(
                            f"compiling {job.graph} for {job.device.type} failed: its worker "
                            "process died (out of memory?); rerun with fewer jobs (-j)"
                        ) from None
                    if error is not None:
                        if trace and self.req.verbose:
                            print(trace, file=sys.stderr, end="", flush=True)
                        raise Neml2Error(error)
                    self.finished(job, seconds)
                    submit_next()
            clean = True
        finally:
            if clean:
                pool.shutdown(wait=True)
            else:
                stop_workers(pool)
