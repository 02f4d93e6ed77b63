"""A model that evaluates another one differently: under its name, with its parameters and
its solvers."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .model import Model
from .values import Variable


class Wrapper(Model):
    """The base of the models that evaluate ``inner`` another way, such as point by point
    (:class:`~neml2.models.points.PointWise`) or over sub-batch axes
    (:class:`~neml2.models.sub_batch.SubBatched`).

    The wrapper takes ``inner``'s name and type name, and shares its parameter dictionary,
    so that a change made through either is seen by both; its Newton solves are
    ``inner``'s, and moving the wrapper moves ``inner``. A subclass gives its own inputs
    and outputs, and its ``evaluate``.
    """

    def __init__(self, inner: Model, inputs: Sequence[Variable], outputs: Sequence[Variable]):
        self.inner = inner
        super().__init__(inner.name, inputs, outputs, {})
        self.parameters = inner.parameters  # one dict: a change through either is seen by both
        self._parameter_shapes = inner.parameter_shapes
        self.type_name = inner.type_name  # type: ignore[misc]

    @property
    def implicit(self) -> bool:
        return self.inner.implicit

    def solver_users(self) -> list[Model]:
        return self.inner.solver_users()

    def to(self, device: torch.device | str) -> Model:
        self.inner.to(device)
        self.parameters = self.inner.parameters
        self._device = torch.device(device)
        return self
