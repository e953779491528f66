"""The shim between Snakemake and a rule script's ``main``, so scripts run and are tested without Snakemake.

Every script in ``workflow/scripts/`` defines ``main(inputs, outputs, params, log)`` and ends with::

    if __name__ == "__main__":
        rulescript.run(main, snakemake, ANALYSIS)

Snakemake executes the script as ``__main__`` with its ``snakemake`` object; a test imports the script
(:func:`load`) and calls :func:`call` with plain paths and values. Both go through :func:`run`: the log
file is opened (:func:`colocate.logs.to_file`), and for an analysis that may lack data (``analysis``
names it) the body runs in :func:`colocate.insufficient.run_or_reason`, so lacking data writes
status outputs instead of failing. ``main`` may also take ``threads`` (the job's cores).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import resource
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from colocate import insufficient, logs

__all__ = ["AnonymousPeak", "Files", "call", "load", "peak_rss_mb", "run"]


class Files(list):
    """Paths by position and by name, as Snakemake's ``input`` and ``output`` (``files[0]``, ``files.name``)."""

    def __init__(self, *positional: Any, **named: Any) -> None:
        super().__init__([*positional, *named.values()])
        self._names = dict(named)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_names"][name]
        except KeyError:
            raise AttributeError(name) from None

    def keys(self):
        return self._names.keys()

    def items(self):
        return self._names.items()


def run(main: Callable[..., Any], job: Any, analysis: str | None = None) -> None:
    """Call ``main(job.input, job.output, job.params, log)`` for a Snakemake job (or :func:`call`'s stand-in)."""
    # A rule script writes its figures to files: no display, even where one exists. The environment
    # variable spares the many scripts without figures matplotlib's import (0.2 s per job).
    if "matplotlib" in sys.modules:
        sys.modules["matplotlib"].use("Agg")
    else:
        os.environ["MPLBACKEND"] = "Agg"
    log = logs.to_file(job.log[0])
    if "polars" in sys.modules:  # the Snakefile's shell prefix sizes it to the job's threads
        log.info("threads %s, polars pool %d", getattr(job, "threads", "?"), sys.modules["polars"].thread_pool_size())
    extra = {"threads": job.threads} if "threads" in inspect.signature(main).parameters else {}

    def body() -> None:
        main(job.input, job.output, job.params, log, **extra)

    anon = AnonymousPeak()
    try:
        if analysis is None:
            body()
        else:
            insufficient.run_or_reason(body, job.input, job.output, analysis, log)
    finally:
        log.info("peak RSS %.0f MB (anonymous %.0f MB)", peak_rss_mb(), anon.stop())


class AnonymousPeak:
    """The largest anonymous resident set (``RssAnon``: heap and arrays, not the pages of mapped files) seen by a
    daemon thread sampling every ``interval`` seconds; the kernel keeps no high-water mark of it.

    A job that memory-maps a matrix has a peak RSS mostly of its file pages, which the kernel drops under a
    memory limit; its anonymous peak is what its ``mem_mb`` must cover (bench/memory.py)."""

    def __init__(self, interval: float = 0.05) -> None:
        import threading

        self.peak_kb = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, args=(interval,), daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("RssAnon:"):
                        self.peak_kb = max(self.peak_kb, int(line.split()[1]))
                        return
        except OSError:
            pass

    def _sample(self, interval: float) -> None:
        while not self._done.wait(interval):
            self._read()

    def stop(self) -> float:
        """Stop sampling; the peak in MB (0 where /proc is absent)."""
        self._done.set()
        self._thread.join()
        self._read()
        return self.peak_kb / 1024


def peak_rss_mb() -> float:
    """This process's peak resident set in MB: the kernel's high-water mark (``VmHWM``) of its own address space.

    Logged by every rule script: Snakemake's benchmark samples RSS at intervals and misses the peak of a job
    shorter than a sample (bench/memory.py reads this line instead). Not ``getrusage``: on Linux its
    ``ru_maxrss`` survives ``execve``, so a script forked from Snakemake would report Snakemake's own RSS.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # elsewhere: kB on Linux, the best we have


def _files(value: Mapping[str, Any] | Sequence[Any] | str) -> Files:
    if isinstance(value, Files):
        return value
    if isinstance(value, Mapping):
        return Files(**{k: str(v) if isinstance(v, Path) else v for k, v in value.items()})
    if isinstance(value, (str, Path)):
        return Files(str(value))
    return Files(*(str(v) for v in value))


def call(
    script: ModuleType,
    inputs: Mapping[str, Any] | Sequence[Any],
    outputs: Mapping[str, Any] | Sequence[Any],
    params: Mapping[str, Any] | None = None,
    log: str | Path = "script.log",
    threads: int = 1,
) -> None:
    """Run a loaded script (:func:`load`) on files, as Snakemake would, with its shim's ``ANALYSIS`` if any."""
    job = SimpleNamespace(
        input=_files(inputs), output=_files(outputs), params=SimpleNamespace(**(params or {})),
        log=[str(log)], threads=threads,
    )
    run(script.main, job, getattr(script, "ANALYSIS", None))


def load(path: str | Path) -> ModuleType:
    """Import a rule script by path (its ``__name__`` is not ``__main__``, so the shim does not run)."""
    path = Path(path)
    spec = importlib.util.spec_from_file_location(f"colocate_script_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
