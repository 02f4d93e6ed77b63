"""Isotropic linear thermal expansion: eigenstrain = CTE (T - T0) I, as a Mandel 6-vector."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..hit import Section
from .base import Blocks, Model, Tensors, Variable, spelling, variable_name
from .registry import register

MANDEL = (6,)


def _normal(like: torch.Tensor) -> torch.Tensor:
    """The identity tensor as a Mandel vector, [1, 1, 1, 0, 0, 0], from factory ops (a
    ``torch.tensor`` would be a graph constant, which a ``while_loop`` body refuses)."""
    ones = torch.ones(3, dtype=like.dtype, device=like.device)
    return torch.cat([ones, torch.zeros_like(ones)])


@register
class ThermalEigenstrain(Model):
    """NEML2's keys: ``CTE`` (parameter), ``reference_temperature`` (a constant, as NEML2
    does not promote it), ``temperature`` and ``eigenstrain`` (variable names, default
    ``temperature`` and ``eigenstrain``). The earlier spellings ``alpha`` and ``T0``
    (both parameters) remain, and a block written with them keeps the default output
    name ``thermal_strain``."""

    type_name = "ThermalEigenstrain"
    options = frozenset(
        {"CTE", "reference_temperature", "alpha", "T0", "temperature", "eigenstrain"}
    )

    def __init__(
        self,
        name: str,
        alpha: float,
        T0: float,
        temperature: str,
        eigenstrain: str,
        symbols: tuple[str, str] = ("alpha", "T0"),
        promote_T0: bool = True,
    ) -> None:
        self.temperature = temperature
        self.eigenstrain = eigenstrain
        self.alpha = f"{name}.{symbols[0]}"
        self.T0 = f"{name}.{symbols[1]}"
        #: The reference temperature where it is a constant of the model (NEML2's spelling).
        self.T0_value = None if promote_T0 else float(T0)
        params = {self.alpha: torch.tensor(alpha, dtype=torch.float64)}
        if promote_T0:
            params[self.T0] = torch.tensor(T0, dtype=torch.float64)
        super().__init__(name, [Variable(temperature, ())], [Variable(eigenstrain, MANDEL)], params)

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        spelling(section, "CTE", "alpha")
        spelling(section, "reference_temperature", "T0")
        given = section.params
        old = [k for k in ("alpha", "T0") if k in given]
        neml2 = "CTE" in given or "reference_temperature" in given or not old
        cte, ref = ("CTE", "reference_temperature") if neml2 else ("alpha", "T0")
        if neml2 and old:
            raise section.error(
                old[0],
                "parameters: NEML2's spelling (CTE, reference_temperature) and the earlier "
                "one (alpha, T0) are mixed; use one of them",
            )
        temperature = variable_name(section, "temperature", "temperature")
        eigenstrain = variable_name(
            section, "eigenstrain", "eigenstrain" if neml2 else "thermal_strain"
        )
        if temperature == eigenstrain:
            raise section.error(
                "eigenstrain",
                f"parameter 'eigenstrain': the output must differ from the input '{temperature}'",
            )
        return cls(
            section.name,
            section.number(cte),
            section.number(ref),
            temperature,
            eigenstrain,
            (cte, ref),
            promote_T0=not neml2,
        )

    def _T0(self, p: Mapping[str, torch.Tensor]) -> torch.Tensor | float:
        return p[self.T0] if self.T0_value is None else self.T0_value

    def eval_forward(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Tensors:
        T = x[self.temperature]
        return {self.eigenstrain: (p[self.alpha] * (T - self._T0(p))).unsqueeze(-1) * _normal(T)}

    def eval_jacobian(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Blocks:
        T = x[self.temperature]
        return {self.eigenstrain: {self.temperature: p[self.alpha] * _normal(T)}}

    def eval_param_jacobian(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> Blocks:
        T = x[self.temperature]
        normal = _normal(T)
        blocks = {self.alpha: (T - self._T0(p)).unsqueeze(-1) * normal}
        if self.T0_value is None:
            blocks[self.T0] = -p[self.alpha] * normal
        return {self.eigenstrain: blocks}

    def jacobian_batched(self, of: str, wrt: str) -> bool:
        return False

    def param_jacobian_batched(self, of: str, param: str) -> bool:
        return param == self.alpha
