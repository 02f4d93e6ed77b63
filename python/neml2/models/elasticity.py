"""Linear isotropic elasticity on Mandel 6-vectors: stress = 2 G strain + lambda tr(strain) I."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from ..hit import Section
from .base import Blocks, Model, Tensors, Variable
from .dual import Dual
from .registry import register

#: Input-file spelling of each elastic constant -> the symbol in parameter names.
COEFFICIENT_SYMBOLS = {
    "YOUNGS_MODULUS": "E",
    "POISSONS_RATIO": "nu",
    "BULK_MODULUS": "K",
    "SHEAR_MODULUS": "G",
    "LAME_LAMBDA": "lambda",
}

MANDEL = (6,)


_COUNT_WORDS = {2: "two", 3: "three"}


def coefficient_types(
    section: Section, count: int, allowed: Sequence[str] = tuple(COEFFICIENT_SYMBOLS)
) -> list[str]:
    """The symbols (E, nu, K, G, lambda) of a block's ``coefficient_types``: ``count``
    distinct elastic constants, each spelt as NEML2 spells it and one of ``allowed``."""
    types = section.strings("coefficient_types", count=count)
    words = _COUNT_WORDS.get(count, str(count))
    for item in types:
        if item not in allowed:
            raise section.error(
                "coefficient_types",
                f"parameter 'coefficient_types': unknown coefficient type '{item}'; "
                f"expected {words} of: {', '.join(allowed)}",
            )
    for index, item in enumerate(types):
        if item in types[:index]:
            raise section.error(
                "coefficient_types",
                f"parameter 'coefficient_types': '{item}' is given twice; "
                f"expected {words} different coefficient types",
            )
    return [COEFFICIENT_SYMBOLS[t] for t in types]


#: Where each pair of elastic constants gives no finite tensor (a division by zero in
#: :func:`lame_parameters`).
SINGULAR = {
    frozenset({"E", "nu"}): "nu = 0.5 or nu = -1",
    frozenset({"E", "K"}): "E = 9 K",
    frozenset({"E", "G"}): "E = 3 G",
    frozenset({"nu", "K"}): "nu = -1",
    frozenset({"nu", "G"}): "nu = 0.5",
    frozenset({"nu", "lambda"}): "nu = 0",
}

#: The physical range of the elastic constants, for messages.
PHYSICAL = "E > 0, G > 0, K > 0, -1 < nu < 0.5"


def refuse_singular(
    section: Section,
    values: Mapping[str, torch.Tensor],
    results: Sequence[torch.Tensor],
    where: str,
) -> None:
    """Refuse elastic constants (symbol -> value) whose tensor, ``results``, is not finite:
    those at a singular point ``where`` of their parametrisation, where NEML2 3.1.0
    computes inf or NaN stress (``nu = 0.5`` with E: [inf, inf, inf, nan, nan, nan]).
    Values merely outside the physical range (``nu = 0.6``, ``E < 0``) NEML2 accepts and
    computes with: so do we."""
    if all(bool(torch.isfinite(r).all()) for r in results):
        return
    given = ", ".join(
        f"{s} = {v.item():g}" if v.numel() == 1 else f"{s} = (a table)" for s, v in values.items()
    )
    raise section.error(
        "coefficients",
        f"[{section.full_name}]: coefficients {given} give an infinite or undefined "
        f"elasticity tensor (singular where {where}; the physical range is {PHYSICAL})",
    )


def lame_parameters(c: Mapping[str, Dual]) -> tuple[Dual, Dual]:
    """(lambda, G) from any two distinct elastic constants, keyed by symbol."""
    have = frozenset(c)
    if have == {"E", "nu"}:
        E, nu = c["E"], c["nu"]
        return E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    if have == {"E", "K"}:
        E, K = c["E"], c["K"]
        return 3 * K * (3 * K - E) / (9 * K - E), 3 * K * E / (9 * K - E)
    if have == {"E", "G"}:
        E, G = c["E"], c["G"]
        return G * (E - 2 * G) / (3 * G - E), G
    if have == {"E", "lambda"}:
        E, lam = c["E"], c["lambda"]
        root = (E * E + 9 * lam * lam + 2 * E * lam).sqrt()
        return lam, (E - 3 * lam + root) / 4
    if have == {"nu", "K"}:
        nu, K = c["nu"], c["K"]
        return 3 * K * nu / (1 + nu), 3 * K * (1 - 2 * nu) / (2 * (1 + nu))
    if have == {"nu", "G"}:
        nu, G = c["nu"], c["G"]
        return 2 * G * nu / (1 - 2 * nu), G
    if have == {"nu", "lambda"}:
        nu, lam = c["nu"], c["lambda"]
        return lam, lam * (1 - 2 * nu) / (2 * nu)
    if have == {"K", "G"}:
        K, G = c["K"], c["G"]
        return K - 2 * G / 3, G
    if have == {"K", "lambda"}:
        K, lam = c["K"], c["lambda"]
        return lam, 3 * (K - lam) / 2
    if have == {"G", "lambda"}:
        return c["lambda"], c["G"]
    raise ValueError(f"not a pair of distinct elastic constants: {sorted(have)}")


def _isotropic(
    strain: torch.Tensor, lam: torch.Tensor | float, G: torch.Tensor | float
) -> torch.Tensor:
    """``2 G strain + lam tr(strain) I`` for a batch of Mandel vectors (linear in lam and G).

    One pointwise expression over the six components (no slices joined by a cat), so the
    compiled kernel stores each row once, straight into the result it returns or is given.
    """
    trace = (strain[:, 0] + strain[:, 1] + strain[:, 2]).unsqueeze(-1)
    normal = torch.arange(6, device=strain.device) < 3
    return 2 * G * strain + torch.where(normal, lam * trace, 0.0)


@register
class LinearIsotropicElasticity(Model):
    """Keys: ``strain``, ``stress`` (variable names), ``coefficients``, ``coefficient_types``,
    and NEML2's ``compliance`` (strain from stress) and ``rate_form`` (both names
    suffixed with ``_rate``)."""

    type_name = "LinearIsotropicElasticity"
    options = frozenset(
        {"strain", "stress", "coefficients", "coefficient_types", "compliance", "rate_form"}
    )

    def __init__(
        self,
        name: str,
        strain: str,
        stress: str,
        coefficients: Mapping[str, float],
        compliance: bool = False,
    ) -> None:
        self.strain = strain
        self.stress = stress
        self.compliance = compliance
        #: parameter name -> symbol (E, nu, K, G, lambda), in input-file order.
        self.symbols = {f"{name}.{symbol}": symbol for symbol in coefficients}
        params = {
            f"{name}.{symbol}": torch.tensor(value, dtype=torch.float64)
            for symbol, value in coefficients.items()
        }
        #: (input, output): strain -> stress, or stress -> strain in compliance form.
        self.source, self.target = (stress, strain) if compliance else (strain, stress)
        super().__init__(
            name, [Variable(self.source, MANDEL)], [Variable(self.target, MANDEL)], params
        )

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        types = coefficient_types(section, 2)
        values = section.numbers("coefficients", count=2)
        strain = section.string("strain", "strain")
        stress = section.string("stress", "stress")
        for key, value in (("strain", strain), ("stress", stress)):
            if not value.strip() or len(value.split()) != 1:
                raise section.error(
                    key, f"parameter '{key}': expected one variable name, got '{value}'"
                )
        if strain == stress:
            raise section.error(
                "stress", f"parameter 'stress': the output must differ from the input '{strain}'"
            )
        if section.boolean("rate_form", False):
            strain, stress = f"{strain}_rate", f"{stress}_rate"
        coefficients = dict(zip(types, values, strict=True))
        compliance = section.boolean("compliance", False)
        model = cls(section.name, strain, stress, coefficients, compliance)
        b, a = model._moduli(model.parameters)
        where = SINGULAR.get(frozenset(types), "")
        if compliance:
            where = f"{where + ' or ' if where else ''}G = 0 or K = 0 (compliance form)"
        refuse_singular(
            section,
            {s: model.parameters[n] for n, s in model.symbols.items()},
            [b.value, a.value],
            where,
        )
        return model

    def _moduli(self, p: Mapping[str, torch.Tensor]) -> tuple[Dual, Dual]:
        """(b, a) of ``out = a in + b tr(in) I``: (lambda, 2G), or the compliance's."""
        names = list(self.symbols)
        seeds = Dual.seeds([p[n] for n in names])
        lam, G = lame_parameters({self.symbols[n]: d for n, d in zip(names, seeds, strict=True)})
        if not self.compliance:
            return lam, 2 * G
        K = lam + 2 * G / 3
        a = 1 / (2 * G)
        return (1 / (9 * K) - a / 3), a

    def eval_forward(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Tensors:
        b, a = self._moduli(p)
        return {self.target: _isotropic(x[self.source], b.value, a.value / 2)}

    def eval_jacobian(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Blocks:
        b, a = self._moduli(p)
        strain = x[self.source]
        eye = torch.eye(6, dtype=strain.dtype, device=strain.device)
        normal = torch.cat(
            [
                torch.ones(3, dtype=strain.dtype, device=strain.device),
                torch.zeros(3, dtype=strain.dtype, device=strain.device),
            ]
        )
        block = a.value * eye + b.value * torch.outer(normal, normal)
        return {self.target: {self.source: block}}

    def eval_param_jacobian(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> Blocks:
        b, a = self._moduli(p)
        strain = x[self.source]
        # the output is linear in (b, a), so d out/d p = out(in; d b/dp, d a/dp)
        return {
            self.target: {
                name: _isotropic(strain, db, da / 2)
                for name, db, da in zip(self.symbols, b.grad, a.grad, strict=True)
            }
        }

    def jacobian_batched(self, of: str, wrt: str) -> bool:
        return False
