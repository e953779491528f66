"""The Azure Public Dataset VM traces (V1 2017, V2 2019) as sources: a download, the shipped sample, and a local
copy in the dataset's layout (``vm_cpu_readings/`` and ``vmtable/``). Their files are read and mapped by
:mod:`colocate.trace.azure` and ``workflow/rules/azure.smk``. A VM is the contract's entity, its deployment its
group; the traces record no priorities, jobs, machines or memory usage, and only each VM's 5-minute maximum, not an
instantaneous sample."""

from __future__ import annotations

import re
from pathlib import Path

from colocate.registry import ConfigError
from colocate.sources import SOURCES, SourceBase, register_local
from colocate.trace import azure as _azure

__all__ = ["Azure", "Download", "Sample", "Local"]


class Azure(SourceBase):
    """What the three Azure sources share."""

    family = "azure"
    tables = _azure.AZURE_TABLES
    gives = {"vm_cpu_readings": ("usage_series",), "vmtable": ("entities", "arrivals")}
    never_why = {
        "machine_events": "the Azure VM traces record VMs, not the hosts they run on: there are no machine events",
        "priorities": "a VM belongs to no job and has no priority (vmcategory, Interactive or Delay-insensitive, is "
                      "its only class)",
        "group_events": "a VM's deployment has no events of its own: the vmtable gives each VM's creation and deletion",
        "memory_usage": "the traces give each VM's CPU readings only; its memory is the size it was given, not what "
                        "it used",
        "placements": "the traces do not say which host a VM runs on",
        "inst_usage": "Azure records each VM's 5-minute minimum, mean and maximum, no instantaneous sample",
    }
    entity, group, usage = "VM", "deployment", "max"
    #: Unuvar §IV-F offers tasks that come and go: a VM lives for weeks, so the controller is offered the trace's own
    #: VMs at their creation (as Google's tasks are when enough run), never a stream of realizations of month-long
    #: VMs (30,000 arrivals of 8,640 windows each: 13 GB measured, for no more than the trace gives).
    config_defaults = {"packing": {"admission": {"source": "trace"}}}
    units = "CPU in cores (a reading's % / 100 × the VM's cores); memory requests in GB"

    @property
    def config(self) -> dict:
        return self.trace["azure"]

    @property
    def span_windows(self) -> int:
        return 30 * 288  # both versions cover 30 days; the vmtable gives the exact span

    def readings_total(self) -> int | None:
        return _azure.READINGS_FILES[self.config["version"]]

    def total(self, table: str) -> int | None:
        return 1 if table == "vmtable" else self.readings_total()


@SOURCES.register
class Download(Azure):
    """The dataset over HTTPS, each file's SHA-256 pinned in a lock file on its first download."""

    name = "azure"

    @property
    def label(self) -> str:
        return f"Azure {self.config['version'].upper()}"

    @property
    def root(self) -> str:
        return f"resources/trace/azure-{self.config['version']}"

    @property
    def run(self) -> str:
        return f"azure-{self.config['version']}-{self.scale}"

    @property
    def url(self) -> str:
        return self.config["url"] or _azure.BASE_URLS[self.config["version"]]

    def _stems(self, table: str) -> list[str]:
        if table == "vmtable":
            return ["vmtable"]
        return _azure.select_readings(self.config["files"], self.readings_total())


@SOURCES.register
class Sample(Azure):
    """The real Azure files shipped with the project: 20 VMs of V2 (``workflow/data/azure-vm-sample``)."""

    name = "azure-sample"
    label = "the shipped Azure V2 sample (20 VMs)"
    #: Its layout is not the dataset's: one file per table, of 20 VMs.
    files = {"vm_cpu_readings": {"vm_cpu_readings-20vms": "v2/vm_cpu_readings-20vms.csv.gz"},
             "vmtable": {"vmtable-20vms": "v2/vmtable-20vms.csv.gz"}}

    @property
    def root(self) -> str:
        return str(self.setting.basedir / "workflow" / "data" / "azure-vm-sample")

    def _stems(self, table: str) -> list[str]:
        return list(self.files[table])

    def file(self, table: str, stem: str) -> str:
        return f"{self.root}/{self.files[table][stem]}"

    def total(self, table: str) -> int | None:
        return None  # 20 VMs drawn from V2's files, not whole files of it


@register_local
class Local(Azure):
    """A local directory in the dataset's layout: ``vm_cpu_readings/vm_cpu_readings-file-N-of-M.csv.gz`` and
    ``vmtable/vmtable.csv.gz``; ``trace.azure.files`` selects readings files by their index N."""

    name = "local"

    @property
    def label(self) -> str:
        return f"the Azure trace under {self.root}"

    @property
    def root(self) -> str:
        return self.trace["path"]

    @property
    def run(self) -> str:
        return f"local-{Path(self.root).resolve().name}"

    @classmethod
    def recognises(cls, path: Path) -> bool:
        return (path / "vm_cpu_readings").is_dir()

    def total(self, table: str) -> int | None:
        if table == "vmtable":
            return 1
        found = self.found(table, f"{table}*.csv.gz")
        m = re.search(r"-of-(\d+)$", found[0]) if found else None
        return int(m.group(1)) if m else None

    def _stems(self, table: str) -> list[str]:
        found = self.found(table, f"{table}*.csv.gz")
        if table == "vmtable" or self.config["files"] == "all":
            return found
        index = {int(m.group(1)): s for s in found if (m := re.search(r"-file-(\d+)-of-", s))}
        sel = self.config["files"]
        wanted = sorted(range(1, sel + 1) if isinstance(sel, int) else sel)
        missing = [i for i in wanted if i not in index]
        if missing:
            raise ConfigError(f"config key trace.azure.files: readings file(s) {missing} not found under "
                              f"{self.root}/{table} (it holds {sorted(index) or 'none'})")
        return [index[i] for i in wanted]

    def check(self) -> None:
        if not (self.stems("vm_cpu_readings") and self.stems("vmtable")):
            raise ConfigError(
                f"config key trace.path: {self.root!r} is laid out like the Azure dataset but lacks "
                "vm_cpu_readings/vm_cpu_readings-file-N-of-M.csv.gz or vmtable/vmtable.csv.gz"
            )
