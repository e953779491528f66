"""A reproduced number against the paper's: the paper's printed value parsed, one unit, a tolerance with its reason.

Each summary row (:func:`colocate.report.summary.rows`) may carry a :class:`Compare`: the paper item it
reproduces (``"Table II"``), the unit both sides are shown in, the factor that brings ours into that
unit (100 for a fraction shown as %), the :class:`Tolerance` within which ours agrees (a factor, or an
absolute band, each with its reason: statistical noise at this scale, or a model factor), whether the
quantity grows with the trace (counts: not compared), and the measured cause of a known deviation.
Without one, a row is compared within :data:`DEFAULT_TOLERANCE` when both sides parse as numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

__all__ = ["Compare", "PaperValue", "Tolerance", "DEFAULT_TOLERANCE", "absolute", "cause_if_outside", "compare", "factor",
           "parse_number", "replicate_tolerance", "widest"]


@dataclass(frozen=True)
class Tolerance:
    """Ours agrees with the paper's value p when within ``value`` of it: a factor (p/f ≤ ours ≤ p·f) or ± an amount."""

    kind: str  # "factor" | "absolute"
    value: float
    reason: str

    def __post_init__(self) -> None:
        if self.kind not in ("factor", "absolute"):
            raise ValueError(f"tolerance kind must be factor or absolute, got {self.kind!r}")
        if not (self.value > 0 and math.isfinite(self.value)) or (self.kind == "factor" and self.value < 1):
            raise ValueError(f"a {self.kind} tolerance must be finite and positive (a factor ≥ 1), got {self.value}")

    def __str__(self) -> str:
        return f"×{self.value:.3g}" if self.kind == "factor" else f"±{self.value:.3g}"

    def band(self, paper: float) -> tuple[float, float]:
        """The interval of values that agree with ``paper``."""
        if self.kind == "absolute":
            return paper - self.value, paper + self.value
        lo, hi = sorted((paper / self.value, paper * self.value))
        return lo, hi


def factor(value: float, reason: str) -> Tolerance:
    return Tolerance("factor", value, reason)


def absolute(value: float, reason: str) -> Tolerance:
    return Tolerance("absolute", value, reason)


#: The tolerance of a row that names none: the synthetic trace is a model, so agreement within 1.5×.
DEFAULT_TOLERANCE = factor(1.5, "default: within a factor of 1.5 of the paper")


def widest(paper: float, ours: float, *tolerances: Tolerance) -> Tolerance:
    """Of ``tolerances``, the one whose band around ``paper`` reaches furthest towards ``ours`` (the first on a
    tie): ours agrees iff it agrees within any of them, e.g. a row's own noise or a factor, whichever is wider."""
    if not tolerances:
        raise ValueError("widest: no tolerance given")

    def reach(t: Tolerance) -> float:
        lo, hi = t.band(paper)
        return hi - paper if ours >= paper else paper - lo

    return max(tolerances, key=reach)


@dataclass(frozen=True)
class Compare:
    """How one summary row compares with the paper; see the module docstring."""

    item: str = ""
    unit: str = ""
    scale: float = 1.0
    tolerance: Tolerance = DEFAULT_TOLERANCE
    scale_dependent: bool = False
    cause: str = ""
    #: the claim's relation (colocate.report.claims.RELATIONS), its id, and whether its value reads the trace (None:
    #: a row not judged from the claims tables)
    relation: str = "≈"
    claim: str = ""
    reads_trace: bool | None = None
    #: the values of the run the claim's braces name, as the measurement gave them (JSON; colocate.measure)
    values: str = ""


@dataclass(frozen=True)
class PaperValue:
    """A number as the paper prints it: its relation (=, ≈, <, >), value and unit ("%" or "")."""

    relation: str
    value: float
    unit: str


_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:e[-+]?\d+)?"
_LEADING = re.compile(rf"^\s*(≈|~|about|<|>|≤|≥)?\s*({_NUMBER})\s*(%)?", re.IGNORECASE)
_RELATIONS = {"≈": "≈", "~": "≈", "about": "≈", "<": "<", "≤": "<", ">": ">", "≥": ">"}


def parse_number(text: object) -> PaperValue | None:
    """The leading number of a printed value (``"8,351"``, ``"≈540 (…)"``, ``"< 2e-3"``, ``"10.83%"``).

    None when there is none, or when the text lists several values (``"0.46 / 0.43"``, ``"12 / 3.4"``).
    """
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return PaperValue("=", float(text), "")
    m = _LEADING.match(str(text))
    if not m or not re.search(r"\d", m.group(2)):
        return None
    rest = str(text)[m.end():]
    if re.match(r"\s*/\s*[-+]?\d", rest):
        return None
    relation = _RELATIONS.get((m.group(1) or "").lower(), "=")
    return PaperValue(relation, float(m.group(2).replace(",", "")), m.group(3) or "")


def compare(paper: object, ours: object, spec: Compare | None = None) -> dict:
    """The machine-readable comparison of one row: both values in one unit, the tolerance, and whether ours agrees.

    ``within`` is None when the row cannot be compared: either side is not one number, or the quantity is
    scale-dependent (a count that grows with the trace).
    """
    spec = spec or Compare()
    p, o = parse_number(paper), parse_number(ours)
    unit = spec.unit or (p.unit if p else "") or (o.unit if o else "")
    ours_value = None
    if o is not None:
        # a value printed with its unit (a string "60.6%") is already in it; a raw number is scaled
        ours_value = o.value if (isinstance(ours, str) and o.unit) else o.value * spec.scale
    paper_value = p.value if p else None
    within = None
    judged = p is not None and ours_value is not None and not spec.scale_dependent and math.isfinite(ours_value)
    if spec.relation == "same":
        within = _words(paper) == _words(ours) if paper is not None and ours is not None else None
    elif spec.relation in ("none", "reference"):
        within = None
    elif spec.relation in ("≤", "≥") and judged:
        within = ours_value <= p.value if spec.relation == "≤" else ours_value >= p.value
    elif judged:
        lo, hi = spec.tolerance.band(p.value)
        if p.relation == "<":
            within = ours_value <= hi
        elif p.relation == ">":
            within = ours_value >= lo
        elif spec.tolerance.kind == "factor" and (p.value == 0 or (p.value > 0) != (ours_value > 0)):
            within = ours_value == p.value  # a factor cannot bridge a sign or a zero
        else:
            within = lo <= ours_value <= hi
    within = None if within is None else bool(within)  # a numpy bool would fail `is False`
    return {
        "item": spec.item,
        "paper_value": paper_value,
        "relation": p.relation if p else None,
        "ours_value": ours_value,
        "unit": unit,
        # a relation judged without a tolerance names itself; one not judged (none, reference) has none
        "tolerance": {"same": "same", "≤": "≤", "≥": "≥", "none": None, "reference": None}.get(spec.relation, str(spec.tolerance)),
        "tolerance_reason": {"same": "the paper's statement", "≤": "the paper's bound", "≥": "the paper's bound",
                             "none": None, "reference": None}.get(spec.relation, spec.tolerance.reason),
        "within": within,
        "scale_dependent": spec.scale_dependent,
        "cause": spec.cause,
    }


def _words(text: object) -> str:
    """A statement compared word for word: case, spacing and a final full stop aside."""
    return " ".join(str(text).lower().rstrip(".").split())


def cause_if_outside(paper: object, ours: object, spec: Compare, cause: str | None) -> Compare:
    """``spec`` naming ``cause`` if the row is outside its tolerance, else ``spec`` as it is.

    A measured cause explains a deviation; on a run where the row agrees, it is left out.
    """
    return replace(spec, cause=cause) if cause and compare(paper, ours, spec)["within"] is False else spec


def _noisy(r: Mapping | None) -> bool:
    """Do single runs (our replicates) vary by more than the default factor around their mean?"""
    if r is None or r.get("min") is None or r.get("max") is None:
        return False
    lo, hi = DEFAULT_TOLERANCE.band(r["mean"])
    return r["min"] < lo or r["max"] > hi


def replicate_tolerance(r: Mapping | None, paper: str | None, ours: float, what: str) -> Tolerance:
    """The paper's one run compared with the spread of ours, where a run varies more than the default factor.

    ``r`` holds the replicates' ``n``, ``mean``, ``min`` and ``max``. Within iff the paper's value lies in
    their [min, max] (for n replicates an (n − 1)/(n + 1) prediction interval of one more run: 90% for 20): the band ±v around the paper's value reaches ``ours`` exactly then.
    """
    p = parse_number(paper)
    if p is None or not _noisy(r):
        return DEFAULT_TOLERANCE
    lo, hi = float(r["min"]), float(r["max"])
    v = ours - lo if p.value <= ours else hi - ours
    v = max(v, 1e-9 * max(abs(lo), abs(hi), 1.0))  # ours at the range's end: a band of (almost) zero
    return absolute(v, f"the paper's one run within the range of our {r['n']} replicates' runs ({lo:.3g}–{hi:.3g}); "
                       f"a run's {what} varies by more than the default ×{DEFAULT_TOLERANCE.value:g}")
