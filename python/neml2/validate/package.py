"""The checks of a graph's ``.pt2`` package made before torch opens it: the CRC-32 of
every archive member (``detail/zip.h``), the graph the archive is named after, and the
argument dtypes and sizes written into the package's generated source
(:func:`check_package`)."""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from pathlib import Path

from ..errors import ArtifactError
from .common import (
    GRAPHS,
    INTO_SUFFIX,
    MISMATCH,
    PER_POINT_SUFFIX,
    Meta,
    arg_dtype,
    arg_shape,
    shape_str,
)


def zip_damage(path: Path) -> str:
    """Why the zip archive ``path`` is damaged, or ``""`` when every member matches its CRC-32.

    torch's package reader checks no CRC: a flipped byte in the shared library inside a
    package would be loaded and crash the process at its first call (detail/zip.h).
    """
    try:
        size = path.stat().st_size
    except OSError:
        return "cannot be read"
    if size < 22:
        return f"not a zip archive ({size} bytes)"
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as err:
        if str(err) == "File is not a zip file":
            return "no end-of-central-directory record: the file is truncated or not a zip archive"
        return f"the central directory is damaged ({err})"
    except OSError:
        return "cannot be read"
    with archive:
        members = archive.infolist()
        if not members:
            return "the archive holds no files"
        for info in members:
            if info.flag_bits & 1:
                continue  # encrypted: not written by neml2-compile, left to the loader
            crc = 0
            try:
                with archive.open(info) as data:
                    while chunk := data.read(1 << 20):
                        crc = zlib.crc32(chunk, crc)
            except zipfile.BadZipFile as err:
                if str(err).startswith("Bad CRC-32"):
                    return (
                        f"entry '{info.filename}' fails its CRC-32 check "
                        f"(stored 0x{info.CRC:08x}, computed 0x{crc:08x})"
                    )
                return f"the local header of entry '{info.filename}' is damaged ({err})"
            except (EOFError, OSError, zlib.error, NotImplementedError) as err:
                return f"cannot read entry '{info.filename}' ({err})"
    return ""


def check_package(
    context: str, graph: str, path: Path, meta: Meta, variant: bool, per_point: bool = False
) -> None:
    """Refuse a package that is damaged or was compiled for another graph, device or signature.

    Reads ``path`` without loading it: the CRC-32 of every member, the archive's name
    (torch names it after the file a graph was compiled into), the device in torch's
    metadata, and the argument dtypes and sizes in the generated wrapper source, where the
    package holds it. ``variant``: the file is the graph's in-place variant; ``per_point``:
    it is (that of) the graph's per-point variant, ``graphs.<graph>.per_point``.
    """
    damage = zip_damage(path)
    if damage:
        raise ArtifactError(
            f"{context}: cannot load graph '{graph}' from '{path}': corrupted package: "
            f"{damage}: recompile the model with neml2-compile"
        )
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        roots = {name.split("/", 1)[0] for name in names}
        expected = graph + PER_POINT_SUFFIX * per_point + INTO_SUFFIX * variant
        known = {
            g + p + i for g in GRAPHS for p in ("", PER_POINT_SUFFIX) for i in ("", INTO_SUFFIX)
        }
        if len(roots) == 1 and (root := roots.pop()) != expected and root in known:
            raise ArtifactError(
                f"{context}: graph '{graph}' in '{path}' holds the package of '{root}': " + MISMATCH
            )
        for name in names:
            if name.endswith("_metadata.json"):
                device = _json_field(archive.read(name), "AOTI_DEVICE_KEY")
                if device and device != meta["device"]:
                    raise ArtifactError(
                        f"{context}: graph '{graph}' in '{path}' was compiled for device "
                        f"'{device}', model_meta.json declares '{meta['device']}': " + MISMATCH
                    )
        wrappers = [n for n in names if n.endswith(".wrapper.cpp")]
        if len(wrappers) == 1:
            source = archive.read(wrappers[0]).decode("utf-8", "replace")
            spec = meta["graphs"][graph]
            if per_point:
                spec = spec["per_point"]
            check_wrapper_signature(context, graph, path, meta, source, variant, spec)


def _json_field(data: bytes, key: str) -> str:
    try:
        value = json.loads(data)
    except ValueError:
        return ""
    field = value.get(key) if isinstance(value, dict) else None
    return field if isinstance(field, str) else ""


_CHECK_INPUT = re.compile(r"static void check_input_(\d+)\(")


_EXPECTED_DTYPE = re.compile(r"_expected_dtype = aoti_torch_dtype_(\w+)\(\)")


_FIXED_SIZE = re.compile(r"if \((\d+) != \w+_size\[(\d+)\]\)")


def wrapper_signature(source: str) -> list[tuple[str | None, dict[int, int]]] | None:
    """Per argument of a graph: the dtype and the fixed sizes (axis: size) that the wrapper
    source of an AOTInductor package checks its inputs against; None when the source has no
    such checks in the form torch 2.13 writes them (then nothing is checked)."""
    starts = list(_CHECK_INPUT.finditer(source))
    if not starts or [int(m.group(1)) for m in starts] != list(range(len(starts))):
        return None
    out: list[tuple[str | None, dict[int, int]]] = []
    for k, m in enumerate(starts):
        end = starts[k + 1].start() if k + 1 < len(starts) else source.find("\n}\n", m.end())
        block = source[m.end() : end if end > 0 else len(source)]
        dtype = _EXPECTED_DTYPE.search(block)
        sizes = {int(axis): int(n) for n, axis in _FIXED_SIZE.findall(block)}
        out.append((dtype.group(1) if dtype else None, sizes))
    return out


def check_wrapper_signature(
    context: str,
    graph: str,
    path: Path,
    meta: Meta,
    source: str,
    variant: bool = False,
    spec: Meta | None = None,
) -> None:
    """Compare the argument dtypes and sizes the package checks with model_meta.json's;
    ``variant``: an in-place variant, which takes its result buffers after the args;
    ``spec``: the graph's entry, when not ``meta["graphs"][graph]`` (a per-point variant)."""
    signature = wrapper_signature(source)
    args = (spec if spec is not None else meta["graphs"][graph])["args"]
    if signature is None:
        return
    # An in-place variant takes one buffer per per-point return after the graph's args.
    if len(signature) < len(args) or (len(signature) != len(args) and not variant):
        raise ArtifactError(
            f"{context}: graph '{graph}' in '{path}' takes {len(signature)} inputs, "
            f"model_meta.json declares {len(args)}: " + MISMATCH
        )
    for i, (slot, (took, sizes)) in enumerate(zip(args, signature, strict=False)):
        dtype = arg_dtype(meta, slot)
        declared = arg_shape(meta, slot)
        wrong_size = any(
            axis >= len(declared) or declared[axis] not in ("B", n) for axis, n in sizes.items()
        )
        if (took is not None and took != dtype) or wrong_size:
            rank = max([len(declared), *(axis + 1 for axis in sizes)])
            taken = [sizes.get(a, declared[a] if a < len(declared) else "?") for a in range(rank)]
            raise ArtifactError(
                f"{context}: graph '{graph}' in '{path}' takes argument {i} "
                f"('{slot['name']}') as {shape_str(taken)} {took or dtype}, model_meta.json "
                f"declares {shape_str(declared)} {dtype}: " + MISMATCH
            )
