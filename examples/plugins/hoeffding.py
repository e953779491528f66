"""A plug-in fit test for colocate's stochastic packing: Hoeffding's inequality.

Named in config as ``hoeffding:Hoeffding`` (this directory on PYTHONPATH); see docs/extending.md, "Plug-ins".

For independent task usages X_i in [0, b_i], Hoeffding's inequality bounds the chance that a
machine's total exceeds its expectation by t: P(Σ X_i − Σ μ_i ≥ t) ≤ exp(−2 t² / Σ b_i²). A task
fits when the bound at t = c − Σ μ_i is at most ε, that is when Σ μ_i + sqrt(ln(1/ε) · Σ b_i² / 2) ≤ c.
Unlike GPA (Janus & Rzadca §4) it assumes no distribution, only the range b_i, read as the
task's ``range_percentile`` of its observed usage (100: its maximum).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np


@dataclass(frozen=True)
class Hoeffding:
    """Fit iff Σμ + sqrt(ln(1/ε) Σb² / 2) ≤ c, with b the task's ``range_percentile`` of usage."""

    eps: float
    range_percentile: float = 100.0
    estimator: ClassVar[str] = "Hoeffding"

    def __post_init__(self) -> None:
        if not 0 < self.eps < 1:
            raise ValueError(f"Hoeffding eps must be in (0, 1), got {self.eps}")
        if not 0 < self.range_percentile <= 100:
            raise ValueError(f"Hoeffding range_percentile must be in (0, 100], got {self.range_percentile}")

    @property
    def parameter(self) -> float:
        return self.eps

    @property
    def label(self) -> str:
        return f"Hoeffding {self.eps:g}"

    def percentiles_needed(self) -> tuple[float, ...]:
        return (self.range_percentile,)

    def columns(self, stats) -> np.ndarray:
        b = stats.percentile(self.range_percentile)
        return np.column_stack([stats.mean, b * b])

    def slack(self, sums: np.ndarray, capacity: float) -> np.ndarray:
        return capacity - (sums[:, 0] + np.sqrt(math.log(1 / self.eps) * sums[:, 1] / 2))
