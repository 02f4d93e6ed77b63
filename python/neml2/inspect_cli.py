"""neml2-inspect: what a compiled artifact holds, and (``--check``) whether it is intact.

For each compiled model of a stub it prints, per device folder: the dtype, the torch that
exported the graphs, the fingerprint of the compile, the inputs and outputs with their
per-point shapes, the promoted parameters with shapes, the run-time solver settings of an
implicit model with their compiled values, and the graphs. ``--check`` also
makes every check the loaders make before a call (doc/artifacts.md, "Checks at load") on
every device folder and graph: the meta's fields, the CRC-32 of every package member, the
graph each package was compiled for, its device and argument signature, and (where the
device is present) the call spec of the loaded package. It runs no graph.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from . import __version__, artifact, hit, validate
from .cli import run_main
from .errors import ArtifactError, Neml2Error
from .models import model_section

#: The device folders a compiled model may have.
DEVICE_TYPES = ("cpu", "cuda")


def make_parser() -> argparse.ArgumentParser:
    """The command line of neml2-inspect."""
    parser = argparse.ArgumentParser(
        prog="neml2-inspect",
        description="Print what a compiled model's artifact folders hold; --check validates "
        "them without running a graph.",
        allow_abbrev=False,
    )
    parser.add_argument("stub", metavar="STUB", help="the stub neml2-compile wrote (*_aoti.i)")
    parser.add_argument(
        "--model", help="the model block of [Models] (default: every compiled model of STUB)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="validate every device folder and graph; exit status 2 with one line when "
        "something is damaged or inconsistent",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def compiled_sections(stub: Path, name: str | None) -> list[hit.Section]:
    """The ``type = AOTIModel`` blocks of ``stub``: the one called ``name``, or all of them."""
    root = hit.load(stub)
    if name is not None:
        section = model_section(root, name)
        kind = section.string("type", "")
        if kind != artifact.STUB_TYPE:
            raise section.error(
                "type",
                f"model '{name}' has type '{kind}', expected '{artifact.STUB_TYPE}': "
                "compile it first with neml2-compile",
            )
        return [section]
    models = root.child("Models")
    sections = [
        s
        for s in (models.children.values() if models is not None else ())
        if s.string("type", "") == artifact.STUB_TYPE
    ]
    if not sections:
        raise Neml2Error(f"{stub}: no compiled model (type = {artifact.STUB_TYPE}) in [Models]")
    return sections


def device_folders(stub: Path, section: hit.Section) -> dict[str, Path]:
    """The device folders the model's ``artifact_path`` holds, by device type."""
    base = stub.parent / section.string("artifact_path")
    found = {d: folder for d in DEVICE_TYPES if (folder := artifact.device_dir(base, d)).is_dir()}
    if not found:
        raise section.error(
            "artifact_path",
            f"[{section.full_name}]: no device folder ({', '.join(DEVICE_TYPES)}) in '{base}': "
            "compile the model with neml2-compile",
        )
    return found


def fingerprint(folder: Path) -> str:
    """The SHA-256 fingerprint neml2-compile recorded for ``folder``, or ``none``."""
    try:
        record = json.loads((folder / ".neml2-fingerprint").read_text())
    except (OSError, ValueError):
        return "none"
    value = record.get("fingerprint") if isinstance(record, dict) else None
    return value if isinstance(value, str) else "none"


def variable_lines(variables: Sequence[dict[str, Any]], values: bool = False) -> list[str]:
    """One line per variable: its name and per-point shape (sub-batch axes and, for small
    parameters, the value too; the input file's name of one that neml2-compile renamed)."""
    if not variables:
        return ["      (none)"]
    width = max(len(v["name"]) for v in variables)
    lines = []
    for v in variables:
        line = f"      {v['name']:<{width}}  {list(v['shape'])}"
        if v.get("sub_batch"):
            line += f", sub-batch axes {list(v['sub_batch'])}"
        if values and len(v["value"]) <= 6:
            line += " = " + ", ".join(f"{x:g}" for x in v["value"])
        if "renamed_from" in v:
            line += f"  (renamed from {v['renamed_from']})"
        lines.append(line)
    return lines


def setting_lines(settings: Sequence[dict[str, Any]]) -> list[str]:
    """One line per run-time solver setting: its name, dtype and compiled value."""
    if not settings:
        return []
    width = max(len(s["name"]) for s in settings)
    lines = ["    solver settings (run-time; compiled values)"]
    for s in settings:
        lines.append(f"      {s['name']:<{width}}  {s['dtype']} = {s['value']:g}")
    return lines


def describe(folder: Path, meta: artifact.Meta) -> list[str]:
    """What one device folder holds, as indented lines."""
    graphs = []
    for graph in artifact.GRAPHS:
        spec = meta["graphs"].get(graph)
        if spec is not None:
            notes = [f"in place: {spec['into']}"] if "into" in spec else []
            if "per_point" in spec:
                variant = spec["per_point"]
                into = f", in place: {variant['into']}" if "into" in variant else ""
                notes.append(f"per point: {variant['file']}{into}")
            graphs.append(graph + (f" ({'; '.join(notes)})" if notes else ""))
    per_point = meta.get("per_point", [])
    return [
        f"  {meta['device']}: {folder}",
        f"    dtype        {meta['dtype']}",
        f"    torch        {meta['torch_version']}",
        f"    fingerprint  {fingerprint(folder)}",
        "    inputs",
        *variable_lines(meta["inputs"]),
        "    outputs",
        *variable_lines(meta["outputs"]),
        "    parameters",
        *variable_lines(meta["parameters"], values=True),
        *([f"    per point    {', '.join(per_point)}"] if per_point else []),
        *setting_lines(meta.get("settings", [])),
        f"    graphs       {', '.join(graphs)}",
    ]


def check_folder(name: str, folder: Path, meta: artifact.Meta) -> int:
    """Check every package of one device folder; the number of files checked.

    The packages are read, never called: their CRCs, the graph and device each was
    compiled for and its argument signature. Where the device is present here, each is
    loaded as well and its call spec compared with the meta.
    """
    from .shim import _load_package  # the shim loads torch's package loader lazily

    device = torch.device(meta["device"])
    loadable = device.type == "cpu" or torch.cuda.is_available()
    context = f"model '{name}' on {device}"
    checked = 0
    for graph in artifact.GRAPHS:
        spec = meta["graphs"].get(graph)
        if spec is None:
            continue
        entries = [(spec, False)]
        if "per_point" in spec:  # the graph's per-point variant (--per-point)
            entries.append((spec["per_point"], True))
        for entry, per_point in entries:
            label = graph + validate.PER_POINT_SUFFIX * per_point
            for key, variant in (("file", False), ("into", True)):
                if key not in entry:
                    continue
                path = folder / entry[key]
                validate.check_package(context, graph, path, meta, variant, per_point)
                if loadable and not variant:
                    try:
                        loaded = _load_package(path, device)
                    except (RuntimeError, OSError) as err:
                        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
                        raise ArtifactError(
                            f"{context}: cannot load graph '{label}' from '{path}': {first}"
                        ) from None
                    validate.check_call_spec(context, label, path, loaded, entry)
                checked += 1
    return checked


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``neml2-inspect``."""
    args = make_parser().parse_args(argv)

    def body() -> int:
        stub = Path(args.stub)
        lines: list[str] = []  # printed once everything is read (and checked)
        checked = 0
        for section in compiled_sections(stub, args.model):
            folders = device_folders(stub, section)
            metas = {d: artifact.read_meta(f, d) for d, f in folders.items()}
            kind = next(iter(metas.values()))["type"]
            lines.append(f"model '{section.name}' ({kind}) in {stub}")
            for device, folder in folders.items():
                lines += describe(folder, metas[device])
                if args.check:
                    checked += check_folder(section.name, folder, metas[device])
        if args.check:
            lines.append(f"check: ok ({checked} graph files; no graph was run)")
        print("\n".join(lines))
        return 0

    return run_main("neml2-inspect", body)


if __name__ == "__main__":
    sys.exit(main())
