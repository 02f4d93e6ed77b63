"""The on-disk artifact contract of doc/artifacts.md: stub file, folder layout, model_meta.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from . import validate
from .errors import ArtifactError, InputError, Neml2Error
from .hit import Section

SCHEMA = 1
META_FILE = "model_meta.json"
STUB_TYPE = "AOTIModel"
#: Every graph a compiled model may have, in the order they are compiled.
GRAPHS = ("forward", "jvp", "jacobian", "param_jacobian", "param_vjp")
DTYPES = {"float64": torch.float64, "float32": torch.float32}

Meta = dict[str, Any]


def stub_path(out: Path, model: str) -> Path:
    return out / f"{model}_aoti.i"


def stub_text(model: str) -> str:
    """The stub ``.i`` that points a loader at ``<model>/<device>/`` next to it."""
    return f"""[Models]
  [{model}]
    type = {STUB_TYPE}
    artifact_path = '{model}'
  []
[]
"""


def device_dir(folder: Path, device_type: str) -> Path:
    """The sub-folder of the artifact folder ``folder`` (``OUT/<model>/``, a stub's
    ``artifact_path``) that holds the meta and graphs compiled for ``device_type``."""
    return folder / device_type


def device_folder(stub: Path, section: Section, device_type: str) -> Path:
    """``<artifact_path>/<device_type>/``, with ``artifact_path`` relative to the stub's folder."""
    folder = device_dir(stub.parent / section.string("artifact_path"), device_type)
    if not folder.is_dir():
        raise section.error(
            "artifact_path",
            f"[{section.full_name}]: no artifact for device '{device_type}': "
            f"'{folder}' is not a folder (compile with --device {device_type})",
        )
    return folder


def torch_major_minor(version: str) -> tuple[int, int]:
    parts = version.split("+")[0].split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise Neml2Error(f"cannot read torch version '{version}'") from None


def read_meta(folder: Path, device_type: str) -> Meta:
    """Load and check ``model_meta.json``: schema, device, dtype, torch version, and every
    field and graph file as the C++ reader checks them (:func:`neml2.validate.check_meta`)."""
    path = folder / META_FILE
    try:
        meta = json.loads(path.read_text())
    except OSError as err:
        raise Neml2Error(f"cannot read '{path}': {err.strerror}") from None
    except UnicodeDecodeError:
        raise ArtifactError(f"{path}: not valid JSON: not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise InputError(path, err.lineno, f"not valid JSON: {err.msg}") from None
    if not isinstance(meta, dict):
        raise ArtifactError(f"{path}: expected a JSON object at the top level")
    if meta.get("schema") != SCHEMA or isinstance(meta.get("schema"), bool):
        raise ArtifactError(
            f"{path}: schema {meta.get('schema')!r} is not supported (expected {SCHEMA})"
        )
    for key in ("model", "device", "dtype", "torch_version"):
        if key not in meta:
            raise ArtifactError(f"{path}: missing field '{key}'")
        if not isinstance(meta[key], str):
            raise ArtifactError(
                f"{path}: field '{key}' must be a string, found {validate.kind_name(meta[key])}"
            )
    if meta["device"] != device_type:
        raise ArtifactError(
            f"{path}: compiled for device '{meta['device']}', expected '{device_type}'"
        )
    if meta["dtype"] not in DTYPES:
        raise ArtifactError(
            f"{path}: unsupported dtype '{meta['dtype']}' (expected float64 or float32)"
        )
    built, running = meta["torch_version"], torch.__version__
    if torch_major_minor(built) != torch_major_minor(running):
        raise ArtifactError(
            f"{path}: compiled with torch {built}, which this torch {running} cannot load; "
            "recompile with neml2-compile"
        )
    validate.check_meta(path, meta)
    return meta


def write_meta(folder: Path, meta: Meta) -> None:
    (folder / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")
