"""Isotropic linear thermal expansion: thermal_strain = alpha (T - T0) I, as a Mandel 6-vector."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..hit import Section
from .base import Blocks, Model, Tensors, Variable, register

MANDEL = (6,)


def _normal(like: torch.Tensor) -> torch.Tensor:
    """The identity tensor as a Mandel vector, [1, 1, 1, 0, 0, 0]."""
    return torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], dtype=like.dtype).to(like.device)


@register
class ThermalEigenstrain(Model):
    """Keys: ``alpha``, ``T0`` (parameters), ``temperature``, ``eigenstrain`` (variable names)."""

    type_name = "ThermalEigenstrain"
    options = frozenset({"alpha", "T0", "temperature", "eigenstrain"})

    def __init__(
        self, name: str, alpha: float, T0: float, temperature: str, eigenstrain: str
    ) -> None:
        self.temperature = temperature
        self.eigenstrain = eigenstrain
        self.alpha = f"{name}.alpha"
        self.T0 = f"{name}.T0"
        params = {
            self.alpha: torch.tensor(alpha, dtype=torch.float64),
            self.T0: torch.tensor(T0, dtype=torch.float64),
        }
        super().__init__(name, [Variable(temperature, ())], [Variable(eigenstrain, MANDEL)], params)

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        temperature = section.string("temperature", "temperature")
        eigenstrain = section.string("eigenstrain", "thermal_strain")
        for key, value in (("temperature", temperature), ("eigenstrain", eigenstrain)):
            if not value.strip() or len(value.split()) != 1:
                raise section.error(
                    key, f"parameter '{key}': expected one variable name, got '{value}'"
                )
        if temperature == eigenstrain:
            raise section.error(
                "eigenstrain",
                f"parameter 'eigenstrain': the output must differ from the input '{temperature}'",
            )
        return cls(
            section.name, section.number("alpha"), section.number("T0"), temperature, eigenstrain
        )

    def eval_forward(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Tensors:
        T = x[self.temperature]
        return {self.eigenstrain: (p[self.alpha] * (T - p[self.T0])).unsqueeze(-1) * _normal(T)}

    def eval_jacobian(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Blocks:
        T = x[self.temperature]
        return {self.eigenstrain: {self.temperature: p[self.alpha] * _normal(T)}}

    def eval_param_jacobian(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> Blocks:
        T = x[self.temperature]
        normal = _normal(T)
        return {
            self.eigenstrain: {
                self.alpha: (T - p[self.T0]).unsqueeze(-1) * normal,
                self.T0: -p[self.alpha] * normal,
            }
        }

    def jacobian_batched(self, of: str, wrt: str) -> bool:
        return False

    def param_jacobian_batched(self, of: str, param: str) -> bool:
        return param == self.alpha
