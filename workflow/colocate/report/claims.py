"""The papers' claims as data, and the analyses' measurements judged against them (issue 44).

Each paper's claims are one table, ``workflow/papers/<paper>.tsv`` (:data:`CLAIM_COLUMNS`), one row per number or
statement of the paper that the summary shows. An analysis writes only what it measured
(:func:`colocate.measure.measurement`); :func:`judge` joins the two into the summary's rows
(:mod:`colocate.report.summary`), so no paper value or cause lives in the science modules, and editing one reruns
the summary alone.

The columns, the relations (:data:`RELATIONS`) and ``reads_trace``: docs/methods.md#claims.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl

from colocate.measure import MEASUREMENT_COLUMNS
from colocate.report.compare import (DEFAULT_TOLERANCE, Compare, Tolerance, absolute, cause_if_outside, factor, parse_number,
                                     replicate_tolerance, widest)

__all__ = ["DEFAULT_TOLERANCE", "CLAIM_COLUMNS", "MEASUREMENT_COLUMNS", "RELATIONS", "ClaimError", "read_claims", "read_causes", "judge", "tolerance",
           "read_measurements", "partial_reads", "printed", "summary_frames"]

#: A paper's table of claims: every column a string as written (the loader checks them).
CLAIM_COLUMNS = ("id", "section", "item", "quantity", "paper", "unit", "scale", "relation", "tolerance",
                 "tolerance_reason", "cause", "note", "depends_on", "reads_trace")

#: The relations a claim may state, and what each means.
RELATIONS = {
    "≈": "ours within the tolerance of the paper's value (a printed < or > is a bound)",
    "≤": "ours at most the paper's number",
    "≥": "ours at least the paper's number",
    "same": "ours states what the paper states (a verdict, a sign, an ordering), in the paper's words",
    "count": "a count that grows with the trace: shown, not judged",
    "none": "the paper gives no value: shown, not counted",
    "reference": "this project's own measurement on the real trace: shown, not judged",
}


class ClaimError(ValueError):
    """A claims table or a measurement that cannot be read: names the file and line, or the claim's id."""


_PER_ROOT_N = re.compile(r"^±(?P<k>[0-9.eE+-]+)/√n$")
_BINOMIAL = re.compile(r"^±2√\(p\(1−p\)/n\), p = (?P<p>[0-9.]+(?:/[0-9]+)?)$")


def _two_digits(x: float) -> float:
    """``x`` to 2 significant digits (a tolerance's precision)."""
    return float(f"{x:.2g}")


def tolerance(text: str, reason: str, where: str, values: Mapping[str, Any] | None = None,
              paper: object = None, ours: object = None, scale: float = 1.0) -> Tolerance:
    """The tolerance a claim states: empty (the default factor), ``×F``, ``±A``, ``±K/√n``,
    ``±2√(p(1−p)/n), p = P``, ``replicates``, ``A or B``, ``±2 SE``, ``±zero of n``, ``ci`` or ``A + B``;
    each form in full: docs/methods.md#tolerances. Braces in the reason name the measurement's values
    (``over {n} jobs``). Without ``values`` (when a table is read) only the form is checked.
    """
    if not text:
        return DEFAULT_TOLERANCE
    if not reason:
        raise ClaimError(f"{where}: tolerance {text} without its reason (tolerance_reason)")
    said = reason.format(**values) if values else reason
    if " or " in text:
        options = [tolerance(t, reason, where, values, paper, ours, scale) for t in text.split(" or ")]
        p, o = parse_number(paper), parse_number(ours)
        return widest(p.value, o.value, *options) if p is not None and o is not None else options[0]
    if " + " in text or text == "ci":
        widths = [_width(t, reason, where, values, scale) for t in text.split(" + ")]
        if values is None or None in widths or sum(widths) <= 0:
            return DEFAULT_TOLERANCE
        return absolute(sum(widths), said)
    if text == "replicates":
        if values is None or ours is None or parse_number(ours) is None:
            return DEFAULT_TOLERANCE
        return replicate_tolerance(values, paper, parse_number(ours).value, said)
    if text == "±2 SE":
        se = (values or {}).get("se")
        if values is None or not se or not math.isfinite(se) or se <= 0:
            return DEFAULT_TOLERANCE
        return absolute(_two_digits(2 * se), said)
    if text == "±zero of n":
        n, o = (values or {}).get("n"), parse_number(ours)
        if values is None or not n or n < 1 or o is None or o.value != 0:
            return DEFAULT_TOLERANCE
        return absolute(_two_digits(1 - 0.025 ** (1 / n)), said)
    per_root, binomial = _PER_ROOT_N.match(text), _BINOMIAL.match(text)
    if per_root or binomial:
        try:
            k = float(per_root.group("k")) if per_root else 0.0
            p = 0.0 if per_root else float(Fraction(binomial.group("p")))
        except (ValueError, ZeroDivisionError):
            raise ClaimError(f"{where}: tolerance {text!r} does not parse") from None
        n = (values or {}).get("n")
        if values is None or not n or n < 1:
            return DEFAULT_TOLERANCE
        width = _two_digits(k / math.sqrt(n) if per_root else 2 * math.sqrt(p * (1 - p) / n) * scale)
        return absolute(width, said) if width > 0 else DEFAULT_TOLERANCE
    try:
        amount = float(text[1:])
    except ValueError:
        amount = math.nan
    if text[0] not in "×±" or not math.isfinite(amount):
        raise ClaimError(f"{where}: tolerance {text!r} is not ×FACTOR, ±AMOUNT, ±K/√n, ±2√(p(1−p)/n), p = P, ±2 SE, "
                         "±zero of n, ci, replicates, a sum A + B or a choice A or B")
    return (factor if text[0] == "×" else absolute)(amount, said)


def _width(text: str, reason: str, where: str, values: Mapping[str, Any] | None, scale: float) -> float | None:
    """The half-width of one term of a sum of absolute tolerances (``±A``, ``ci``, or one of the measured n), or
    None where the measurement lacks what it needs."""
    if text == "ci":
        lo, hi = (values or {}).get("ci_lo"), (values or {}).get("ci_hi")
        return None if lo is None or hi is None else scale * (hi - lo) / 2
    t = tolerance(text, reason, where, values)
    if values is not None and t == DEFAULT_TOLERANCE:  # a term of n without its n
        return None
    if t.kind != "absolute" and t != DEFAULT_TOLERANCE:
        raise ClaimError(f"{where}: tolerance {text!r}: only absolute tolerances (±…) add up")
    return t.value if t.kind == "absolute" else 0.0


def read_claims(paths: Iterable[str | Path]) -> pl.DataFrame:
    """Every paper's claims, checked: the columns, ids unique across the papers, a known relation, a tolerance
    that parses, with its reason. An error names the file and the line (the header is line 1)."""
    frames, seen = [], {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            header = f.readline().rstrip("\n").split("\t")
            if tuple(header) != CLAIM_COLUMNS:
                raise ClaimError(f"{path}: columns {header}, expected {list(CLAIM_COLUMNS)}")
            for line, text in enumerate(f, start=2):
                if text.strip() and text.count("\t") != len(CLAIM_COLUMNS) - 1:
                    raise ClaimError(f"{path}:{line}: {text.count(chr(9)) + 1} tab-separated fields, expected "
                                     f"{len(CLAIM_COLUMNS)} ({', '.join(CLAIM_COLUMNS)})")
        frame = pl.read_csv(path, separator="\t", infer_schema=False, quote_char=None).fill_null("")
        if tuple(frame.columns) != CLAIM_COLUMNS:
            raise ClaimError(f"{path}: columns {frame.columns}, expected {list(CLAIM_COLUMNS)}")
        for line, row in enumerate(frame.iter_rows(named=True), start=2):
            where = f"{path}:{line}"
            if not row["id"]:
                raise ClaimError(f"{where}: a claim without an id")
            if row["id"] in seen:
                raise ClaimError(f"{where}: id {row['id']!r} is also at {seen[row['id']]}")
            seen[row["id"]] = where
            if row["relation"] not in RELATIONS:
                raise ClaimError(f"{where}: relation {row['relation']!r} is not one of {', '.join(RELATIONS)}")
            if row["relation"] == "none" and row["paper"]:
                raise ClaimError(f"{where}: relation none, but the paper's value {row['paper']!r} is given")
            if row["relation"] in ("≤", "≥", "same", "count", "none", "reference") and row["tolerance"]:
                raise ClaimError(f"{where}: relation {row['relation']} takes no tolerance (given {row['tolerance']!r})")
            if row["relation"] in ("≤", "≥", "same", "reference") and not row["paper"]:
                raise ClaimError(f"{where}: relation {row['relation']} without the paper's value")
            if row["relation"] in ("≤", "≥") and parse_number(row["paper"]) is None:
                raise ClaimError(f"{where}: relation {row['relation']}: the paper's value {row['paper']!r} is not a number")
            if row["reads_trace"] not in ("yes", "no"):
                raise ClaimError(f"{where}: reads_trace {row['reads_trace']!r} is not yes or no")
            tolerance(row["tolerance"], row["tolerance_reason"], where)
            try:
                float(row["scale"] or 1)
            except ValueError:
                raise ClaimError(f"{where}: scale {row['scale']!r} is not a number") from None
        frames.append(frame.with_columns(pl.lit(str(path)).alias("file")))
    out = pl.concat(frames) if frames else pl.DataFrame(schema={c: pl.String for c in (*CLAIM_COLUMNS, "file")})
    for row in out.filter(pl.col("depends_on").str.contains(".", literal=True)).iter_rows(named=True):
        if row["depends_on"] not in seen:
            raise ClaimError(f"{seen[row['id']]}: depends_on {row['depends_on']!r} is no claim's id (nor a contract table)")
    return out


def printed(paths: Iterable[str | Path]) -> dict[str, str]:
    """Each claim's value as the paper prints it (empty where it gives none), by id: what a figure, a notebook, a
    benchmark or a study shows beside ours."""
    table = read_claims(paths)
    return dict(zip(table["id"], table["paper"]))


def read_measurements(path: str | Path) -> pl.DataFrame:
    """A summary part an analysis wrote: its measurements (:mod:`colocate.measure`). A file of other columns is
    refused, naming it."""
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split(",")
    if header != list(MEASUREMENT_COLUMNS):
        raise ClaimError(f"{path}: columns {header}, not a part of measurements {list(MEASUREMENT_COLUMNS)} "
                         "(an analysis writes colocate.measure.measurements)")
    return pl.read_csv(path, schema=MEASUREMENT_COLUMNS)


def read_causes(paths: Iterable[str | Path]) -> dict[str, str]:
    """The measured causes by id (a file ``<id>.md`` each): the text, one paragraph, without its final newline."""
    return {Path(p).stem: " ".join(Path(p).read_text().split()) for p in paths}


def judge(measured: pl.DataFrame, claims: pl.DataFrame, causes: Mapping[str, str],
          partial: Mapping[str, str] | None = None) -> list[tuple[str, pl.DataFrame]]:
    """The summary's rows of ``measured`` (one part's measurements), section by section in the order measured:
    ``[(section, rows of colocate.report.summary.COLUMNS)]``, each row its claim's value, unit, relation and
    tolerance beside ours. A measurement of an unknown claim, or a claim naming an unknown cause, is an error.

    ``partial`` names the contract's tables this run read only in part, each with what was read (:func:`partial_reads`):
    a claim whose value depends on how much of one was read (its ``depends_on``) says so in its note."""
    from colocate.report import summary

    by_id = {r["id"]: r for r in claims.iter_rows(named=True)}
    sections: dict[str, list] = {}
    status: dict[str, list[tuple[str, str]]] = {}
    for m in measured.iter_rows(named=True):
        claim = by_id.get(m["id"])
        if claim is None:
            raise ClaimError(f"measurement {m['id']!r}: no claim of that id in the papers' tables")
        if claim["cause"] and claim["cause"] not in causes:
            raise ClaimError(f"{claim['file']}: claim {m['id']!r} names cause {claim['cause']!r}, which has no "
                             f"workflow/papers/causes/{claim['cause']}.md")
        values = json.loads(m["values"]) if m["values"] else {}
        quantity, note = _fill(claim, "quantity", claim["quantity"], values), _fill(claim, "note", claim["note"], values)
        ours = m["value"] if m["value"] is not None else m["text"]
        scale = float(claim["scale"] or 1)
        scaled = ours * scale if isinstance(ours, float) else ours
        spec = Compare(item=claim["item"], unit=claim["unit"], scale=scale,
                       tolerance=tolerance(claim["tolerance"], claim["tolerance_reason"], claim["file"], values,
                                           claim["paper"] or None, scaled, scale),
                       scale_dependent=claim["relation"] == "count", relation=claim["relation"], claim=claim["id"],
                       reads_trace=claim["reads_trace"] == "yes", values=m["values"])
        # a measured cause explains a deviation: named only where the row is outside its tolerance; braces in it
        # name the measurement's values, as in the quantity (this run's numbers behind the cause)
        cause = _fill(claim, f"cause {claim['cause']!r}", causes.get(claim["cause"], ""), values)
        spec = cause_if_outside(claim["paper"] or None, ours, spec, cause)
        read = (partial or {}).get(claim["depends_on"])
        depends = f"depends on how much of the trace was read: {read}" if read else ""
        notes = "; ".join(n for n in (m["note"], note, depends) if n)
        sections.setdefault(claim["section"], []).append((quantity, claim["paper"] or None, ours, notes, spec))
        if m["status"]:
            status.setdefault(claim["section"], []).append((claim["id"], m["status"]))
    out = []
    for section, items in sections.items():
        rows = summary.rows(section, items)
        for claim_id, reason in status.get(section, []):
            rows = summary.too_little_data(rows, reason, pl.col("claim") == claim_id)
        out.append((section, rows))
    return _preconditions(out, by_id)


def _fill(claim: Mapping[str, str], what: str, text: str, values: Mapping[str, Any]) -> str:
    """``text`` (a claim's quantity, note or cause) with its braces filled from the measurement's values; a value
    the measurement does not give is a ClaimError naming the claim."""
    try:
        return text.format(**values)
    except (KeyError, IndexError, ValueError) as e:
        raise ClaimError(f"{claim['file']}: claim {claim['id']!r}: {what} names {e}, which the measurement does not "
                         "give") from None


def _preconditions(parts: list[tuple[str, pl.DataFrame]], by_id: Mapping[str, Mapping]) -> list[tuple[str, pl.DataFrame]]:
    """A claim whose ``depends_on`` names another claim (a precondition: the experiment as the paper ran it, e.g.
    its stream of 3,940 requests) is judged only where that claim's row is within; otherwise, or where it was not
    measured, the row is too little data, saying why."""
    from colocate.report import summary

    judged = {r["claim"]: r for _, rows in parts for r in rows.iter_rows(named=True)}
    out = []
    for section, rows in parts:
        for claim_id in dict.fromkeys(rows["claim"].to_list()):
            pre = by_id[claim_id]["depends_on"] if claim_id in by_id else ""
            if "." not in pre:
                continue
            r = judged.get(pre)
            if r is None:
                rows = summary.too_little_data(rows, f"{pre} was not measured", pl.col("claim") == claim_id)
            elif not r["within"]:
                rows = summary.too_little_data(rows, f"{r['quantity']}: ours {r['ours'] or 'unknown'}, the paper's "
                                                     f"{r['paper']}", pl.col("claim") == claim_id)
        out.append((section, rows))
    return out


def partial_reads(record: Mapping[str, Any]) -> dict[str, str]:
    """The contract's tables a run read only in part, from its capabilities record (``trace/capabilities.json``):
    table → what was read of the trace's table mapped to it ("3 of 500 task_events files")."""
    out = {}
    for c in record.get("coverage", []):
        if c["read"] and not c["whole"]:
            of = f" of {c['of']:,}" if c.get("of") is not None else ""
            files = "file" if (c.get("of") or c["read"]) == 1 else "files"
            read = f"{c['read']:,}{of} {c['table']} {files}"
            if "usage_records" in c.get("maps_to", []) and not record.get("files_in_time_order", True):
                read += f", each with rows from across the trace, so {series_holes(record)}"
            for table in c.get("maps_to", []):
                out[table] = read
    return out


def series_holes(record: Mapping[str, Any]) -> str:
    """What a partial read of files that are not in time order left of the series, from the capabilities record
    and its ``series`` coverage (:func:`colocate.prep.tasks.coverage_summary`)."""
    entity, s = record.get("entity", "task"), record.get("series") or {}
    if not s.get("tasks"):
        return f"an {entity}'s series may have holes" if entity[0] in "aeiou" else f"a {entity}'s series may have holes"
    return (f"the series have holes: the long {entity}s' series hold {s['share_pooled']:.1%} of their windows (median "
            f"{s['share_median']:.1%}; {s['complete']:.0%} whole)")


def summary_frames(paths: Iterable[str | Path], papers: pl.DataFrame, causes: Mapping[str, str],
                   partial: Mapping[str, str] | None = None) -> list[pl.DataFrame]:
    """The summary's rows of each part in ``paths``, in order: an analysis's measurements judged against ``papers``."""
    return [rows for path in paths for _, rows in judge(read_measurements(path), papers, causes, partial)]
