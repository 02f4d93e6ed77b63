"""Fingerprints: what each device folder was compiled from, so that an unchanged folder
is skipped, and one whose only change is its --rename-* names gets a new model_meta.json
without compiling."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import torch

from .. import artifact, renames
from ..hit import Section
from .export import EXAMPLE_BATCH, build_meta, inductor_configs
from .output import build_folder, install_folder
from .request import Prepared

#: Written last into each device folder: what the artifact was compiled from (JSON).
FINGERPRINT_FILE = ".neml2-fingerprint"
#: Bump when the fingerprint's contents change meaning.
FINGERPRINT_FORMAT = 2
#: How a changed fingerprint entry is named in the "recompiling" line.
FINGERPRINT_LABELS = {
    "format": "fingerprint format",
    "blocks": "input blocks",
    "parameter_values": "parameter values",
    "meta": "flags, dtype or variables",
    "renames": "names (--rename-*)",
    "inductor_configs": "inductor settings",
    "example_batch": "example batch",
    "neml2_version": "neml2 version",
    "neml2_source": "neml2 sources",
    "torch_version": "torch version",
}


def dependency_sections(section: Section) -> list[Section]:
    """The model's block, the blocks it composes (``models``) and the solvers it names."""
    root = section
    while root.parent is not None:
        root = root.parent
    solvers = root.child("Solvers")
    seen: dict[str, Section] = {}
    todo = [section]
    while todo:
        block = todo.pop()
        if block.full_name in seen:
            continue
        seen[block.full_name] = block
        todo += block.children.values()
        if "models" in block.params and block.parent is not None:
            names = block.params["models"].text.split()
            todo += [sub for name in names if (sub := block.parent.child(name)) is not None]
        if "solver" in block.params and solvers is not None:
            solver = solvers.child(block.params["solver"].text.strip())
            if solver is not None:
                todo.append(solver)
    return [seen[name] for name in sorted(seen)]


def canonical_blocks(section: Section) -> dict[str, dict[str, str]]:
    """The dependency blocks' parameters, substituted and with whitespace normalized."""
    return {
        block.full_name: {key: " ".join(value.text.split()) for key, value in block.params.items()}
        for block in dependency_sections(section)
    }


@functools.cache
def package_digest() -> str:
    """SHA-256 of the neml2 package's Python sources (this subpackage's among them): a
    changed model kernel changes the graphs."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def fingerprint_inputs(prep: Prepared, device: torch.device) -> dict[str, Any]:
    """Everything that determines one device folder's contents."""
    from .. import __version__

    return {
        "format": FINGERPRINT_FORMAT,
        "blocks": canonical_blocks(prep.section),
        "parameter_values": {
            name: value.detach().cpu().reshape(-1).tolist()
            for name, value in prep.model.parameters.items()
        },
        "meta": build_meta(prep.model, device, prep.sel, prep.dtype),
        "renames": prep.names.as_dict(),
        "inductor_configs": inductor_configs(device),
        "example_batch": EXAMPLE_BATCH,
        "neml2_version": __version__,
        "neml2_source": package_digest(),
        "torch_version": torch.__version__,
    }


def written_meta(inputs: dict[str, Any]) -> artifact.Meta:
    """The model_meta.json of a device folder: the fingerprint's meta (the graphs' own
    names) with the --rename-* names."""
    return renames.apply(inputs["meta"], inputs.get("renames", {}))


def fingerprint(inputs: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def stale_reason(folder: Path, inputs: dict[str, Any]) -> str | None:
    """Why ``folder`` must be compiled again, or None when it is up to date.

    Up to date: the fingerprint file matches ``inputs``, model_meta.json holds exactly
    the meta that would be written, and every graph file has the size and the SHA-256
    recorded when it was compiled (a file with flipped bytes is not up to date).
    """
    path = folder / FINGERPRINT_FILE
    if not path.is_file():
        return "not compiled before" if not folder.is_dir() else f"no {FINGERPRINT_FILE}"
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return f"{FINGERPRINT_FILE} is unreadable"
    if not isinstance(record, dict):
        return f"{FINGERPRINT_FILE} is unreadable"
    if record.get("fingerprint") != fingerprint(inputs):
        old = record.get("inputs")
        changed = [
            FINGERPRINT_LABELS.get(key, key)
            for key in inputs
            if not isinstance(old, dict) or old.get(key) != inputs[key]
        ]
        return "changed: " + (", ".join(changed) or "fingerprint")
    try:
        meta = json.loads((folder / artifact.META_FILE).read_text())
    except (OSError, ValueError):
        return f"{artifact.META_FILE} is missing or unreadable"
    if meta != written_meta(inputs):
        return f"{artifact.META_FILE} was edited"
    sizes, hashes = record.get("sizes"), record.get("sha256")
    for name in graph_files(inputs["meta"]):
        file = folder / name
        if not file.is_file():
            return f"{name} is missing"
        if not isinstance(sizes, dict) or file.stat().st_size != sizes.get(name):
            return f"{name} changed size"
        if not isinstance(hashes, dict) or file_digest(file) != hashes.get(name):
            return f"{name} changed since it was compiled (SHA-256 differs)"
    return None


def only_names_changed(folder: Path, inputs: dict[str, Any]) -> bool:
    """Whether ``folder``'s graphs are what ``inputs`` would compile and only the --rename-*
    names differ: every fingerprint input but ``renames`` is the same and every graph file
    has its recorded size and SHA-256. The graphs are positional, so a rename needs only a
    new model_meta.json."""
    try:
        record = json.loads((folder / FINGERPRINT_FILE).read_text())
    except (OSError, ValueError):
        return False
    old = record.get("inputs") if isinstance(record, dict) else None
    if not isinstance(old, dict) or old.get("renames", {}) == inputs["renames"]:
        return False
    if {k: v for k, v in old.items() if k != "renames"} != {
        k: v for k, v in inputs.items() if k != "renames"
    }:
        return False
    sizes, hashes = record.get("sizes"), record.get("sha256")
    for name in graph_files(inputs["meta"]):
        file = folder / name
        if not file.is_file() or not isinstance(sizes, dict) or not isinstance(hashes, dict):
            return False
        if file.stat().st_size != sizes.get(name) or file_digest(file) != hashes.get(name):
            return False
    return True


def rewrite_names(folder: Path, inputs: dict[str, Any]) -> None:
    """Give ``folder`` the model_meta.json and fingerprint of ``inputs`` without compiling:
    the graph files are linked (or copied) into a fresh build folder beside it, which then
    takes the folder's place as a compiled one does (:func:`install_folder`)."""
    build = build_folder(folder)
    try:
        for name in graph_files(inputs["meta"]):
            try:
                os.link(folder / name, build / name)
            except OSError:
                shutil.copy2(folder / name, build / name)
        artifact.write_meta(build, written_meta(inputs))
        write_fingerprint(build, inputs)
        install_folder(build, folder)
    finally:
        shutil.rmtree(build, ignore_errors=True)


def file_digest(path: Path) -> str:
    """SHA-256 of a file's contents."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def graph_files(meta: artifact.Meta) -> list[str]:
    """The .pt2 files a device folder's meta names: each graph's and its in-place variant's,
    then those of the graphs' per-point variants (--per-point)."""
    graphs = list(meta["graphs"].values())
    variants = [g["per_point"] for g in graphs if "per_point" in g]
    files: list[str] = []
    for group in (graphs, variants):
        files += [g["file"] for g in group] + [g["into"] for g in group if "into" in g]
    return files


def write_fingerprint(folder: Path, inputs: dict[str, Any]) -> None:
    """Record what ``folder`` was compiled from, and each graph file's size and SHA-256."""
    names = graph_files(inputs["meta"])
    record = {
        "fingerprint": fingerprint(inputs),
        "sizes": {name: (folder / name).stat().st_size for name in names},
        "sha256": {name: file_digest(folder / name) for name in names},
        "inputs": inputs,
    }
    (folder / FINGERPRINT_FILE).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
