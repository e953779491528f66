"""The Google cluster trace 2011 (clusterdata-2011-2, schema v2.1) as sources: the synthetic model, the shipped
sample, a local copy and the public bucket. All four hold the same csv.gz shards (``{table}/part-NNNNN-of-MMMMM``),
mapped to the contract's tables by ``workflow/rules/google2011.smk`` (and read by the stages that need its job and
machine events); the 2011
schema's event codes and clock are the contract's own, and its priorities 0-11 map to the papers' classes by
:data:`colocate.trace.PRIORITY_CLASSES`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from colocate import trace as _trace
from colocate.registry import ConfigError
from colocate.sources import SOURCES, LocalCopy, SourceBase, register_local

__all__ = ["Google2011", "Synthetic", "Sample", "Local", "Bucket"]


class Google2011(SourceBase):
    """What the four 2011 sources share: the tables, what each gives, the classes, the span."""

    family = "google2011"
    paper_trace = True
    tables = tuple(_trace.TABLES)
    priority_classes = _trace.PRIORITY_CLASSES
    gives = {
        "task_events": ("entities", "priorities", "placements", "arrivals"),
        "task_usage": ("usage_series", "inst_usage", "memory_usage"),
        "job_events": ("group_events",),
        "machine_events": ("machine_events",),
    }
    maps = {
        "task_events": ("entity_pieces", "placement_events"),
        "task_usage": ("usage_records", "group_windows", "sampled_windows"),
        "job_events": ("group_events",),
        "machine_events": ("machine_events",),
    }
    units = "CPU and memory as shares of the largest machine (the trace's normalisation)"
    file_word = "shards"
    #: requests drawn among the tasks submitted, their lifetimes from their usage where the task table has them,
    #: onto the machines of machine_events
    placement_needs = ("arrivals", "usage_series", "machine_events")
    #: The tables a local copy is checked against its SHA256SUM for (what the analyses read).
    verified_tables = ("task_events", "task_usage", "job_events", "machine_events")

    @property
    def span_windows(self) -> int:
        return _trace.TRACE_WINDOWS

    def total(self, table: str) -> int | None:
        stems = self.stems(table)
        return int(stems[0].rsplit("-", 1)[1]) if stems else None

    def _stems(self, table: str) -> list[str]:
        found = self.found(table, "part-*.csv.gz")
        sel = self.trace["shards"]
        if table in _trace.SINGLE_FILE_TABLES or sel == "all":
            return found
        if isinstance(sel, int):
            return found[:sel]
        return [s for s in found if int(s.split("-")[1]) in set(sel)]

    def check_found(self, key: str = "trace.path") -> None:
        if not any(self.stems(t) for t in _trace.TABLES):
            raise ConfigError(f"config key {key}: no trace table found under {self.root!r}: looked for "
                              + ", ".join(f"{t}/part-NNNNN-of-MMMMM.csv.gz" for t in _trace.TABLES))


@SOURCES.register
class Synthetic(Google2011):
    """The calibrated synthetic model (``colocate.trace.synth``), written as the 2011 trace's shards."""

    name = "synthetic"
    label = "the synthetic 2011 trace"
    is_model = True

    @property
    def model(self) -> dict:
        """The model's parameters (config's ``synthetic`` section without the shard counts)."""
        return {k: v for k, v in self.setting.synthetic.items() if k != "shards"}

    @property
    def root(self) -> str:
        # runs with the same model share one cached copy
        blob = json.dumps({"model": dict(self.setting.synthetic), "seed": self.trace["seed"]}, sort_keys=True)
        return f"resources/trace/synthetic-{hashlib.sha256(blob.encode()).hexdigest()[:12]}"

    def synthesis_mem_mb(self, scale: str) -> int:
        """The synthesis holds the whole model and the rendered records: 1.6 GB at the default scale; at the paper
        scale (the full-size model) 2.5 GB plus 0.68 GB per task_usage shard of real size rendered, fitted to the
        3.8 / 7.9 GB peaks of the 2- / 8-shard slices (bench/paper_scale.py), × 1.25."""
        if scale == "paper":
            return int(1.25 * (2473 + 682 * self.setting.synthetic["shards"]["task_usage"]))
        return 6000

    def shard_counts(self) -> dict[str, int]:
        counts = dict(self.setting.synthetic["shards"])
        counts["machine_events"] = 1
        return counts

    def _stems(self, table: str) -> list[str]:
        n = self.shard_counts().get(table)
        return [_trace.shard_name(i, n).removesuffix(".csv.gz") for i in range(n)] if n else []

    @property
    def span_windows(self) -> int:
        return max(1, round(self.setting.synthetic["days"] * 288))

    @property
    def rendered_windows(self) -> int:
        days = self.setting.synthetic.get("slice_days") or self.setting.synthetic["days"]
        return min(self.span_windows, max(1, round(days * 288)))

    def check(self) -> None:
        if "shards" not in self.setting.synthetic:
            raise ConfigError(
                f"config key trace.source: the {self.scale!r} scale sizes the real trace and has no synthetic model; "
                "set trace.source to google, local or sample (e.g. --config scale=paper trace='{\"source\": \"google\"}')"
            )
        from colocate.trace.synth import SynthParams  # the model's own checks (shares summing to 1, …) before any job

        SynthParams.from_dict(self.model)


@SOURCES.register
class Sample(Google2011):
    """The real 2011 files shipped with the project (``workflow/data/google-2011-sample``)."""

    name = "sample"
    label = "the Google 2011 sample"
    verify = True

    @property
    def root(self) -> str:
        return str(self.setting.basedir / "workflow" / "data" / "google-2011-sample")

    def check(self) -> None:
        self.check_found("trace.source")


@register_local
class Local(LocalCopy, Google2011):
    """A local directory laid out like the bucket (``{table}/part-NNNNN-of-MMMMM.csv.gz``)."""

    verify = True
    local_default = True

    @property
    def label(self) -> str:
        return f"the Google 2011 trace under {Path(self.root).resolve().name}"

    def check(self) -> None:
        self.check_found()


@SOURCES.register
class Bucket(Google2011):
    """The public bucket, downloaded over HTTPS and checked against its SHA256SUM (``trace.source: google``)."""

    name = "google"
    label = "Google 2011"
    root = "resources/trace/google"

    def total(self, table: str) -> int | None:
        from colocate.trace.download import SHARDS_PER_TABLE

        return 1 if table in _trace.SINGLE_FILE_TABLES else SHARDS_PER_TABLE

    def missing_why(self, table: str) -> str:
        if table not in self.trace["tables"]:
            return f"config key trace.tables leaves out {table}"
        return super().missing_why(table)

    def _stems(self, table: str) -> list[str]:
        from colocate.trace.download import SHARDS_PER_TABLE, select_shards

        if table not in self.trace["tables"]:
            return []
        return [Path(r).name.removesuffix(".csv.gz") for r in select_shards(table, self.trace["shards"], SHARDS_PER_TABLE)]
