"""Evaluate the [Tensors] and [Data] blocks of an input file with NEML2 3.1.0.

Run by python/tests/test_tensor_blocks.py with the Python of the NEML2 environment, from
this folder (not beside this project's own package ``neml2``):
``python tensors_oracle.py RESULT.pt FILE [FILE ...]``. RESULT gets, per file,
``{"tensors": {name: {"type", "data", "sub_batch_ndim"} or {"error"}}, "data": {name:
{attribute: tensor}}}``. torch's default dtype is float64 here, so NEML2's constructors
that follow the default give the values this project computes in float64.
"""

from __future__ import annotations

import sys

import neml2
import torch

torch.set_default_dtype(torch.float64)

GEOMETRY = (
    "sym_ops_data",
    "lattice_vectors",
    "reciprocal_lattice_vectors",
    "cartesian_slip_directions",
    "cartesian_slip_planes",
    "burgers",
    "A_data",
    "M_data",
    "W_data",
)


def tensor_entry(value: object) -> dict:
    """A [Tensors] value as plain data."""
    data = getattr(value, "data", value)
    assert isinstance(data, torch.Tensor)
    return {
        "type": type(value).__name__,
        "data": data.detach().to(torch.float64).clone(),
        "sub_batch_ndim": getattr(value, "sub_batch_ndim", 0),
    }


def one_file(path: str) -> dict:
    """Every [Tensors] and [Data] block of one input file, as NEML2 builds them."""
    factory = neml2.load_input(path)
    root = factory._root  # the parsed file: list its blocks
    out: dict = {"tensors": {}, "data": {}}
    for top in root.children():
        for node in top.children():
            name = node.path().rsplit("/", 1)[-1]
            if top.path() == "Tensors":
                try:
                    out["tensors"][name] = tensor_entry(factory.get_tensor(name))
                except Exception as err:  # noqa: BLE001 (a refusal is an answer too)
                    out["tensors"][name] = {"error": f"{type(err).__name__}: {err}"}
            elif top.path() == "Data":
                geometry = factory.get_data(name)
                entry = {k: getattr(geometry, k).detach().clone() for k in GEOMETRY}
                entry["slip_offsets"] = list(geometry.slip_offsets)
                out["data"][name] = entry
    return out


def main() -> None:
    result, files = sys.argv[1], sys.argv[2:]
    torch.save({f: one_file(f) for f in files}, result)


if __name__ == "__main__":
    main()
