"""Crystal plasticity, the kinematics: the elastic strain rate and the orientation rate
of the large-deformation update, fixing an orientation to its MRP shadow, and the strain
predictor of the update's solve. The family's overview is in :mod:`.crystal`."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..hit import Section
from ..tensors import full_to_sr2, full_to_wr2, sr2_to_full, wr2_to_full
from .base import Blocks, Tensors, variable_name
from .block import SCALAR, Block
from .crystal import MRP, SR2, WR2, _columns, _sr2_basis, _wr2_basis
from .registry import register


@register
class ElasticStrainRate(Block):
    """``elastic_strain_rate = deformation_rate - plastic_deformation_rate + sym(w e - e w)``
    (``e`` the elastic strain, ``w`` the vorticity)."""

    type_name = "ElasticStrainRate"
    inputs_spec = (
        ("elastic_strain", "elastic_strain", SR2),
        ("deformation_rate", "deformation_rate", SR2),
        ("vorticity", "vorticity", WR2),
        ("plastic_deformation_rate", "plastic_deformation_rate", SR2),
    )
    outputs_spec = (("elastic_strain_rate", "elastic_strain_rate", SR2),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        e, d, w, dp = (
            x["elastic_strain"],
            x["deformation_rate"],
            x["vorticity"],
            x["plastic_deformation_rate"],
        )
        E, W = sr2_to_full(e), wr2_to_full(w)
        out = {"elastic_strain_rate": d - dp + full_to_sr2(W @ E - E @ W)}
        if not derivatives:
            return out, {}, {}
        n = e.shape[0]
        eye = torch.eye(6, dtype=e.dtype).to(e.device).expand(n, 6, 6)
        dE = _sr2_basis(e).unsqueeze(0)  # (1, 6, 3, 3)
        dW = _wr2_basis(e).unsqueeze(0)  # (1, 3, 3, 3)
        Eb, Wb = E.unsqueeze(1), W.unsqueeze(1)
        row = {
            "deformation_rate": eye.clone(),
            "plastic_deformation_rate": -eye,
            "elastic_strain": _columns(full_to_sr2(Wb @ dE - dE @ Wb)),
            "vorticity": _columns(full_to_sr2(dW @ Eb - Eb @ dW)),
        }
        return out, {"elastic_strain_rate": row}, {}


@register
class OrientationRate(Block):
    """``orientation_rate = vorticity - plastic_vorticity + skew(d^p e - e d^p)`` (WR2;
    ``e`` the elastic strain, ``d^p`` the plastic deformation rate)."""

    type_name = "OrientationRate"
    inputs_spec = (
        ("elastic_strain", "elastic_strain", SR2),
        ("vorticity", "vorticity", WR2),
        ("plastic_deformation_rate", "plastic_deformation_rate", SR2),
        ("plastic_vorticity", "plastic_vorticity", WR2),
    )
    outputs_spec = (("orientation_rate", "orientation_rate", WR2),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        e, w, dp, wp = (
            x["elastic_strain"],
            x["vorticity"],
            x["plastic_deformation_rate"],
            x["plastic_vorticity"],
        )
        E, D = sr2_to_full(e), sr2_to_full(dp)
        out = {"orientation_rate": w - wp + full_to_wr2(D @ E - E @ D)}
        if not derivatives:
            return out, {}, {}
        n = e.shape[0]
        eye = torch.eye(3, dtype=e.dtype).to(e.device).expand(n, 3, 3)
        basis = _sr2_basis(e).unsqueeze(0)
        Eb, Db = E.unsqueeze(1), D.unsqueeze(1)
        row = {
            "vorticity": eye.clone(),
            "plastic_vorticity": -eye,
            "elastic_strain": _columns(full_to_wr2(Db @ basis - basis @ Db)),
            "plastic_deformation_rate": _columns(full_to_wr2(basis @ Eb - Eb @ basis)),
        }
        return out, {"orientation_rate": row}, {}


@register
class FixOrientation(Block):
    """``output = input`` (MRP) where ``|input|^2 < threshold`` (default 1, a constant),
    else its shadow set ``-input / |input|^2``: the same rotation."""

    type_name = "FixOrientation"
    inputs_spec = (("input", "input", MRP),)
    outputs_spec = (("output", "output", MRP),)
    extra_options = frozenset({"threshold"})

    def configure(self, section: Section | None) -> None:
        self.threshold = section.number("threshold", 1.0) if section is not None else 1.0

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        r = x["input"]
        ns = (r * r).sum(-1, keepdim=True)
        keep = ns < self.threshold
        out = {"output": torch.where(keep, r, -r / ns)}
        if not derivatives:
            return out, {}, {}
        eye = torch.eye(3, dtype=r.dtype).to(r.device).expand(r.shape[0], 3, 3)
        nsb = ns.unsqueeze(-1)
        shadow = 2 * r.unsqueeze(-1) * r.unsqueeze(-2) / (nsb * nsb) - eye / nsb
        return out, {"output": {"input": torch.where(keep.unsqueeze(-1), eye, shadow)}}, {}


@register
class CrystalPlasticityStrainPredictor(Block):
    """The initial guess of the elastic strain of a crystal-plasticity update:
    ``elastic_strain = e~1 + scale (t - t~1) deformation_rate`` where ``|e~1| < threshold``
    (a crystal at rest, whose first step would otherwise start from zero stress), else
    ``e~1`` (``|.|`` the Frobenius norm of the Mandel vector). ``scale`` (default 1) and
    ``threshold`` (default 1e-3) are parameters; the derivatives are those of the
    branch taken."""

    type_name = "CrystalPlasticityStrainPredictor"
    inputs_spec = (
        ("deformation_rate", "deformation_rate", SR2),
        ("time", "t", SCALAR),
        ("time_old", "", SCALAR),
        ("elastic_strain_old", "", SR2),
    )
    outputs_spec = (("elastic_strain", "elastic_strain", SR2),)
    params_spec = (("scale", 1.0), ("threshold", 1e-3))
    options = frozenset({"deformation_rate", "time", "elastic_strain", "scale", "threshold"})

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        time = variable_name(section, "time", "t")
        strain = variable_name(section, "elastic_strain", "elastic_strain")
        return {
            "deformation_rate": variable_name(section, "deformation_rate", "deformation_rate"),
            "time": time,
            "time_old": f"{time}~1",
            "elastic_strain_old": f"{strain}~1",
            "elastic_strain": strain,
        }

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        d, old = x["deformation_rate"], x["elastic_strain_old"]
        dt = (x["time"] - x["time_old"]).unsqueeze(-1)
        scale, threshold = p["scale"], p["threshold"]
        rest = (old.square().sum(-1).sqrt() < threshold).unsqueeze(-1)  # (B, 1)
        out = {"elastic_strain": torch.where(rest, old + scale * dt * d, old)}
        if not derivatives:
            return out, {}, {}
        on = rest.to(d.dtype)
        eye = torch.eye(6, dtype=d.dtype).to(d.device).expand(d.shape[0], 6, 6)
        jac = {
            "elastic_strain": {
                "deformation_rate": (on * scale * dt).unsqueeze(-1) * eye,
                "time": on * scale * d,
                "time_old": -on * scale * d,
                "elastic_strain_old": eye.clone(),
            }
        }
        pjac = {"elastic_strain": {"scale": on * dt * d, "threshold": torch.zeros_like(d)}}
        return out, jac, pjac
