"""Rate-dependent J2 viscoplasticity with Voce isotropic hardening, backward Euler in time.

Small strain, Mandel 6-vectors. With ``G``, ``lambda`` from ``E``, ``nu``, the trial state is

    e_tr = dev(strain - old_plastic_strain),  q_tr = sqrt(3/2) |2 G e_tr|,
    f_tr = q_tr - sy - R(p_old),              R(p) = Q (1 - exp(-b p)).

Where ``f_tr <= 0`` the step is elastic. Elsewhere the equivalent plastic strain increment
``dp`` follows the Perzyna flow rule ``dp / dt = (f / eta)^n`` at the end of the step,
with the flow direction ``N = sqrt(3/2) e_tr / |e_tr|`` fixed by the radial return:

    q_tr - 3 G dp - sy - R(p_old + dp) = eta (dp / dt)^(1/n).

It is solved for ``z = (dp / dt)^(1/n)`` (the overstress over ``eta``), in which the
residual is smooth at ``z = 0``:

    r(z) = q_tr - sy - R(p_old + dt z^n) - 3 G dt z^n - eta z.

``r(0) = f_tr > 0`` and ``r`` is negative at ``z_max = min(U / eta, (U / (3 G dt))^(1/n))``
with ``U = f_tr + max(R(p_old) - Q, 0)``, so ``[0, z_max]`` brackets the root. Newton starts
from the elastic predictor ``z = 0``; a step leaving the bracket is replaced by bisection,
so every point converges in finitely many iterations, and the count it needs grows with
the size of the step. A point is converged when ``|r| <= abs_tol`` or
``|r| <= rel_tol * f_tr``; it then keeps its value while the others iterate, for at most
``max_its`` updates (see :mod:`neml2.solvers`; in a compiled graph the three are
arguments, which the caller may change). Then

    plastic_strain = old_plastic_strain + dp N,   equivalent_plastic_strain = p_old + dp,
    stress = 2 G (strain - plastic_strain) + lambda tr(strain - old_plastic_strain) I.

Derivatives hold at the converged ``z`` by the implicit function theorem:
``dz = -(dr/dz)^-1 (partial r)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from ..hit import Section
from ..solvers import Newton, limits, newton_loop, solver_for
from .base import Blocks, Evaluation, Model, Status, Variable
from .dual import Dual
from .elasticity import lame_parameters
from .registry import register

SQRT32 = math.sqrt(1.5)
SQRT6 = math.sqrt(6.0)
MANDEL = (6,)
SCALAR: tuple[int, ...] = ()

#: The parameters, in order, with their input-file keys (the same spelling).
PARAMETERS = ("E", "nu", "sy", "Q", "b", "eta", "n")
#: Parameters that may be left out, and their values then (no hardening).
OPTIONAL = {"Q": 0.0, "b": 0.0}
#: Input-file keys naming the variables -> default names, inputs first.
INPUT_KEYS = ("strain", "old_plastic_strain", "old_equivalent_plastic_strain", "time_step")
OUTPUT_KEYS = ("stress", "plastic_strain", "equivalent_plastic_strain")


def _check_range(section: Section, key: str, value: float) -> None:
    """The admissible range of each parameter, checked where it is set."""
    checks = {
        "E": (value > 0, "> 0"),
        "nu": (-1 < value < 0.5, "in (-1, 0.5)"),
        "sy": (value >= 0, ">= 0"),
        "b": (value >= 0, ">= 0"),
        "eta": (value > 0, "> 0"),
        "n": (value >= 1, ">= 1"),
    }
    ok, expected = checks.get(key, (True, ""))
    if not ok:
        raise section.error(key, f"parameter '{key}': expected a value {expected}, got {value:g}")


@register
class J2Viscoplasticity(Model):
    """Keys: ``E nu sy Q b eta n`` (parameters), ``solver``, and one per variable name."""

    type_name = "J2Viscoplasticity"
    options = frozenset({*PARAMETERS, "solver", *INPUT_KEYS, *OUTPUT_KEYS})
    #: Every parameter is a scalar, so one per point is a ``(B,)`` tensor, which the kernel
    #: broadcasts against the ``(B,)`` per-point scalars as it does a shared one (and
    #: widens where it scales a tensor: :func:`_per_point`).
    takes_per_point = True

    def __init__(
        self,
        name: str,
        values: Mapping[str, float],
        solver: Newton,
        names: Mapping[str, str] | None = None,
    ) -> None:
        names = dict(names or {})
        #: role (an input-file key) -> variable name
        self.names = {key: names.get(key, key) for key in (*INPUT_KEYS, *OUTPUT_KEYS)}
        self.solver = solver
        shapes = {
            "strain": MANDEL,
            "old_plastic_strain": MANDEL,
            "old_equivalent_plastic_strain": SCALAR,
            "time_step": SCALAR,
            "stress": MANDEL,
            "plastic_strain": MANDEL,
            "equivalent_plastic_strain": SCALAR,
        }
        params = {
            f"{name}.{key}": torch.tensor(float(values[key]), dtype=torch.float64)
            for key in PARAMETERS
        }
        super().__init__(
            name,
            [Variable(self.names[k], shapes[k]) for k in INPUT_KEYS],
            [Variable(self.names[k], shapes[k]) for k in OUTPUT_KEYS],
            params,
        )

    @property
    def implicit(self) -> bool:
        return True

    def solver_users(self) -> list[Model]:
        return [self]

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        values: dict[str, float] = {}
        for key in PARAMETERS:
            value = section.number(key, OPTIONAL[key]) if key in OPTIONAL else section.number(key)
            _check_range(section, key, value)
            values[key] = value
        names: dict[str, str] = {}
        for key in (*INPUT_KEYS, *OUTPUT_KEYS):
            name = section.string(key, key)
            if not name.strip() or len(name.split()) != 1:
                raise section.error(
                    key, f"parameter '{key}': expected one variable name, got '{name}'"
                )
            if name in names.values():
                other = next(k for k, v in names.items() if v == name)
                raise section.error(
                    key, f"parameter '{key}': variable name '{name}' is already used for '{other}'"
                )
            names[key] = name
        return cls(section.name, values, solver_for(section), names)

    def _p(self, p: Mapping[str, torch.Tensor], key: str) -> torch.Tensor:
        return p[f"{self.name}.{key}"]

    def evaluate(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        jacobian: bool = False,
        param_jacobian: bool = False,
    ) -> Evaluation:
        nm = self.names
        strain = x[nm["strain"]]
        ep_old = x[nm["old_plastic_strain"]]
        p_old = x[nm["old_equivalent_plastic_strain"]]
        dt = x[nm["time_step"]]
        sy, Q, b, eta, n = (self._p(p, k) for k in ("sy", "Q", "b", "eta", "n"))
        lam_d, G_d = lame_parameters(
            dict(zip(("E", "nu"), Dual.seeds([self._p(p, "E"), self._p(p, "nu")]), strict=True))
        )
        lam, G = lam_d.value, G_d.value
        G3 = 3 * G
        G_sr2, G_ssr4 = _per_point(G, 1), _per_point(G, 2)
        normal = torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], dtype=strain.dtype).to(strain.device)

        # trial state
        elastic_strain = strain - ep_old
        trace = elastic_strain[:, 0] + elastic_strain[:, 1] + elastic_strain[:, 2]
        dev = elastic_strain - (trace / 3).unsqueeze(-1) * normal
        dev_norm = dev.square().sum(-1).sqrt()
        q_tr = SQRT6 * G * dev_norm
        R_old = Q * (1 - torch.exp(-b * p_old))
        f_tr = q_tr - sy - R_old
        plastic = f_tr > 0
        norm_safe = torch.where(plastic, dev_norm, torch.ones_like(dev_norm))
        direction = SQRT32 * dev / norm_safe.unsqueeze(-1)

        # the bracketed Newton solve for z
        upper = torch.where(plastic, f_tr + torch.relu(R_old - Q), torch.ones_like(f_tr))
        z_max = torch.minimum(upper / eta, (upper / (G3 * dt)) ** (1 / n))
        zero = torch.zeros_like(f_tr)
        scale = torch.where(plastic, f_tr, zero)
        settings = limits(self.solver)  # numbers, or a traced graph's setting arguments
        atol, rtol = settings.abs_tol, settings.rel_tol

        def step(
            z: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor
        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
            """One Newton update of the points not yet converged, bisecting where it
            would leave the bracket; converged (and elastic) points keep their value."""
            r, dr = _residual(z, q_tr, sy, Q, b, eta, n, G3, p_old, dt)
            done = ~plastic | (r.abs() <= atol) | (r.abs() <= rtol * scale)
            lo = torch.where(r > 0, z, lo)
            hi = torch.where(r < 0, z, hi)
            newton = z - r / dr
            inside = (newton > lo) & (newton < hi)
            z = torch.where(done, z, torch.where(inside, newton, (lo + hi) / 2))
            return z, lo, hi, done

        # distinct tensors: a while_loop must not carry one tensor twice
        start = (torch.zeros_like(f_tr), torch.zeros_like(f_tr), torch.where(plastic, z_max, zero))
        z = newton_loop(step, *start, ~plastic, settings.max_its)
        r, dr = _residual(z, q_tr, sy, Q, b, eta, n, G3, p_old, dt)
        residual = torch.where(plastic, r.abs(), zero)
        converged = ~plastic | (residual <= atol) | (residual <= rtol * scale)
        status = Status(converged, residual)

        z_n1 = z ** (n - 1)
        z_n = z * z_n1
        dp = dt * z_n
        plastic_strain = ep_old + dp.unsqueeze(-1) * direction
        stress = 2 * G_sr2 * (strain - plastic_strain) + (lam * trace).unsqueeze(-1) * normal
        outputs = {
            nm["stress"]: stress,
            nm["plastic_strain"]: plastic_strain,
            nm["equivalent_plastic_strain"]: p_old + dp,
        }
        if not (jacobian or param_jacobian):
            return Evaluation(outputs, status=status)

        # implicit function theorem: d(dp) = g * (partial r) + (explicit partial of dt z^n)
        p_new = p_old + dp
        decay = torch.exp(-b * p_new)
        dR = Q * b * decay
        g = torch.where(plastic, -(n * dt * z_n1) / dr, zero)
        log_z = torch.log(torch.where(z > 0, z, torch.ones_like(z)))
        ev = Evaluation(outputs, status=status)

        def rows(d_dp: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            """(d plastic_strain, d stress) for a scalar-valued d(dp) per point."""
            d_ep = direction * d_dp.unsqueeze(-1)
            return d_ep, -2 * G_sr2 * d_ep

        if jacobian:
            eye = torch.eye(6, dtype=strain.dtype).to(strain.device)
            stiffness = 2 * G_ssr4 * eye + _per_point(lam, 2) * normal.unsqueeze(-1) * normal
            projector = eye - normal.unsqueeze(-1) * normal / 3
            unit = dev / norm_safe.unsqueeze(-1)
            # d(dp N)/d(strain) = N (x) d(dp)/d(strain) + dp dN/d(strain)
            dp_strain = (2 * G * g).unsqueeze(-1) * direction
            dN_scaled = (dp * SQRT32 / norm_safe).reshape(-1, 1, 1) * (
                projector - unit.unsqueeze(-1) * unit.unsqueeze(-2)
            )
            dflow = direction.unsqueeze(-1) * dp_strain.unsqueeze(-2) + dN_scaled
            dp_pold = -g * dR
            dp_dt = z_n - g * (G3 + dR) * z_n
            ep_pold, s_pold = rows(dp_pold)
            ep_dt, s_dt = rows(dp_dt)
            S, EP, P = nm["stress"], nm["plastic_strain"], nm["equivalent_plastic_strain"]
            e, eo, po, t = (nm[k] for k in INPUT_KEYS)
            ev.jacobian = {
                S: {
                    e: stiffness - 2 * G_ssr4 * dflow,
                    eo: 2 * G_ssr4 * dflow - stiffness,
                    po: s_pold,
                    t: s_dt,
                },
                EP: {e: dflow, eo: eye - dflow, po: ep_pold, t: ep_dt},
                P: {e: dp_strain, eo: -dp_strain, po: 1 + dp_pold, t: dp_dt},
            }
        if param_jacobian:
            d_dp = {
                "sy": -g,
                "Q": -g * (1 - decay),
                "b": -g * Q * p_new * decay,
                "eta": -g * z,
                "n": dp * log_z * (1 - g * (G3 + dR)),
            }
            dp_dG = g * (SQRT6 * dev_norm - 3 * dp)
            elastic_part = strain - plastic_strain
            blocks: Blocks = {v.name: {} for v in self.outputs}
            for index, key in enumerate(("E", "nu")):
                dG, dlam = G_d.grad[index], lam_d.grad[index]
                d_ep, d_s = rows(dp_dG * dG)
                blocks[nm["stress"]][f"{self.name}.{key}"] = (
                    d_s
                    + 2 * _per_point(dG, 1) * elastic_part
                    + (dlam * trace).unsqueeze(-1) * normal
                )
                blocks[nm["plastic_strain"]][f"{self.name}.{key}"] = d_ep
                blocks[nm["equivalent_plastic_strain"]][f"{self.name}.{key}"] = dp_dG * dG
            for key, value in d_dp.items():
                d_ep, d_s = rows(value)
                blocks[nm["stress"]][f"{self.name}.{key}"] = d_s
                blocks[nm["plastic_strain"]][f"{self.name}.{key}"] = d_ep
                blocks[nm["equivalent_plastic_strain"]][f"{self.name}.{key}"] = value
            ev.param_jacobian = {
                out: {f"{self.name}.{k}": row[f"{self.name}.{k}"] for k in PARAMETERS}
                for out, row in blocks.items()
            }
        return ev


def _per_point(value: torch.Tensor | float, axes: int) -> torch.Tensor | float:
    """A scalar that scales a tensor with ``axes`` base axes: a shared one as it is, one per
    point, ``(B,)``, with ``axes`` trailing axes of size 1."""
    if isinstance(value, torch.Tensor) and value.dim() == 1:
        return value.reshape(-1, *(1,) * axes)
    return value


def _residual(
    z: torch.Tensor,
    q_tr: torch.Tensor,
    sy: torch.Tensor,
    Q: torch.Tensor,
    b: torch.Tensor,
    eta: torch.Tensor,
    n: torch.Tensor,
    G3: torch.Tensor | float,
    p_old: torch.Tensor,
    dt: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``r(z)`` and ``dr/dz`` (always <= -eta < 0 when Q b >= 0)."""
    z_n1 = z ** (n - 1)
    dp = dt * z * z_n1
    decay = torch.exp(-b * (p_old + dp))
    r = q_tr - sy - Q * (1 - decay) - G3 * dp - eta * z
    dr = -(G3 + Q * b * decay) * n * dt * z_n1 - eta
    return r, dr
