"""Too little data is a result, not a crash.

An analysis that cannot run on the trace it was given (no long tasks, fewer tasks than k, a single
arrival instant, too short a span for a daily period…) raises :class:`InsufficientData` with the reason
and what it would need. Its rule script names the analysis (``ANALYSIS``), and the shim
(:func:`colocate.rulescript.run`) runs its ``main`` in :func:`run_or_reason`, which then writes every
output as a *status output* that states the reason:

- a table (``.csv``) or an intermediate (``.parquet``) holds one row ``status, analysis, reason, needs``
  (the Parquet file also carries the status in its key-value metadata);
- a figure (``.png``) shows the reason where its plot would be (and carries the status in a text chunk);
- an array (``.npy``) is empty.

A script whose input is such a status output writes its own outputs the same way, naming the upstream
reason, so the whole DAG completes and ``summary.md`` lists every skipped analysis with its reason.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

STATUS = "insufficient data"
#: The status of an analysis whose subject the trace does not record (machine failures on a trace without machines).
NOT_APPLICABLE = "not applicable to this trace"
COLUMNS = ("status", "analysis", "origin", "reason", "needs")
_META_KEY = b"colocate.status"
_PNG_KEY = "colocate.status"


class InsufficientData(ValueError):
    """The data given cannot support the analysis; ``reason`` says why, ``needs`` what would.

    A ValueError, so that callers outside the pipeline see an ordinary bad-argument error.
    """

    def __init__(self, reason: str, needs: str, analysis: str = "") -> None:
        super().__init__(reason)
        self.reason, self.needs, self.analysis = reason, needs, analysis


def require(condition: bool, reason: str, needs: str) -> None:
    """Raise :class:`InsufficientData` unless ``condition`` holds."""
    if not condition:
        raise InsufficientData(reason, needs)


@dataclass(frozen=True)
class Status:
    """Why ``analysis`` has no result: ``reason`` and ``needs`` come from ``origin``, the analysis that
    found the data lacking (itself, or one upstream of it)."""

    analysis: str
    reason: str
    needs: str
    origin: str = ""
    status: str = STATUS

    def __post_init__(self) -> None:
        if not self.origin:
            object.__setattr__(self, "origin", self.analysis)

    @classmethod
    def of(cls, exc: InsufficientData, analysis: str) -> "Status":
        """The status of ``analysis`` when ``exc`` stopped it (``exc.analysis``, if set, found the data lacking)."""
        return cls(analysis, exc.reason, exc.needs, exc.analysis or analysis)

    def downstream(self, analysis: str) -> "Status":
        """The status of ``analysis``, which reads this status output."""
        return Status(analysis, self.reason, self.needs, self.origin, self.status)

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame({"status": [self.status], **{k: [getattr(self, k)] for k in COLUMNS[1:]}})


def write_status(paths: Iterable[str | os.PathLike], status: Status) -> None:
    """Write every path in ``paths`` as a status output stating ``status`` (see the module docstring)."""
    for path in map(Path, paths):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        try:
            suffix = path.suffix
            if suffix == ".csv":
                status.frame().write_csv(tmp)
            elif suffix == ".parquet":
                table = status.frame().to_arrow()
                meta = {**(table.schema.metadata or {}), _META_KEY: json.dumps(status.__dict__).encode()}
                pq.write_table(table.replace_schema_metadata(meta), tmp)
            elif suffix == ".png":
                from colocate.figures import insufficient_data_figure, plt

                fig = insufficient_data_figure(status.analysis, _explained(status), status.needs)
                fig.savefig(tmp, dpi=110, format="png", metadata={_PNG_KEY: json.dumps(status.__dict__)})
                plt.close(fig)
            elif suffix == ".npy":
                with open(tmp, "wb") as fh:
                    np.save(fh, np.zeros((0, 0), dtype=np.float32))
            else:
                raise ValueError(f"{path}: no status output for {suffix!r} files")
            os.replace(tmp, path)
        except BaseException:  # no half-written status behind
            tmp.unlink(missing_ok=True)
            raise


def read_status(path: str | os.PathLike) -> Status | None:
    """The status stated by ``path`` if it is a status output, else None (a normal result)."""
    path = Path(path)
    if not path.is_file():
        return None
    if path.suffix == ".parquet":
        meta = pq.read_schema(path).metadata or {}
        if _META_KEY in meta:
            return Status(**json.loads(meta[_META_KEY]))
    elif path.suffix == ".csv":
        with open(path, encoding="utf-8") as fh:
            if fh.readline().strip() == ",".join(COLUMNS):
                row = pl.read_csv(path).row(0, named=True)
                if row["status"] in (STATUS, NOT_APPLICABLE):
                    return Status(**{k: row[k] for k in COLUMNS})
    elif path.suffix == ".png":
        from PIL import Image

        with Image.open(path) as image:
            text = getattr(image, "text", {}).get(_PNG_KEY)
        if text:
            return Status(**json.loads(text))
    return None


def _explained(status: Status) -> str:
    """The reason, naming the analysis that found the data lacking when it is another one."""
    return status.reason if status.origin == status.analysis else f"{status.origin}: {status.reason}"


def upstream_status(paths: Iterable[str | os.PathLike]) -> Status | None:
    """The first status output among ``paths`` (the inputs of a job), or None when all are results."""
    for p in paths:
        found = read_status(p)
        if found is not None:
            return found
    return None


def run_or_reason(body: Callable[[], None], inputs: Iterable, outputs: Iterable, analysis: str,
                  log: logging.Logger) -> None:
    """Run a rule script's body; when data is lacking, write its outputs as status outputs instead.

    An input that is itself a status output skips the body and passes the upstream reason on; an
    :class:`InsufficientData` raised by the body is caught and its reason written. Any other error
    propagates: bad input is still an error. (:func:`colocate.rulescript.run` calls this.)
    """
    outputs = [str(o) for o in outputs]
    upstream = upstream_status(str(i) for i in _flatten(inputs))
    if upstream is not None:
        _give_up(outputs, upstream.downstream(analysis), log)
        return
    try:
        body()
    except InsufficientData as exc:
        _give_up(outputs, Status.of(exc, analysis), log)


def _give_up(outputs: list[str], status: Status, log: logging.Logger) -> None:
    log.warning("%s: %s: %s; it needs %s", status.analysis, status.status, _explained(status), status.needs)
    write_status(outputs, status)


def _flatten(items: Iterable) -> Iterator:
    if isinstance(items, Mapping):
        items = items.values()
    for item in items:
        if isinstance(item, (str, os.PathLike)):
            yield item
        elif isinstance(item, Mapping):
            yield from _flatten(item.values())
        else:
            yield from _flatten(item)


def stop_notebook_if_lacking(inputs: Iterable, outputs: Iterable, analysis: str) -> None:
    """In a notebook run by the ``notebook:`` directive: when an input is a status output, write this
    notebook's outputs as status outputs, show the reason, and end the notebook (SystemExit(0), which
    papermill treats as a clean stop). Otherwise do nothing."""
    upstream = upstream_status(str(i) for i in _flatten(inputs))
    if upstream is None:
        return
    status = upstream.downstream(analysis)
    write_status([str(o) for o in outputs], status)
    try:
        from IPython.display import Markdown, display

        display(Markdown(f"**{status.status}.** {_explained(status)}\n\nIt needs: {status.needs}\n\nThe notebook stops here."))
    except ImportError:  # pragma: no cover - notebooks always have IPython
        print(status)
    # IPython warns "To exit: use 'exit', …" on a SystemExit in a cell: this stop is meant (the kept copy drops
    # the exit's own output too, colocate.report.notebooks)
    warnings.filterwarnings("ignore", message="To exit: use", category=UserWarning)
    raise SystemExit(0)
