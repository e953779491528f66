"""A synthetic Google cluster trace 2011: a workload model calibrated to the papers.

Beaumont et al. (2015) §7 ask for "a complete generating model" of the trace; this package is one, built from the
numbers the four papers publish. It is a pure library: :func:`generate` takes :class:`SynthParams` and a seed and
returns polars DataFrames with exactly the trace's columns (:mod:`colocate.trace`); it never reads config files or
paths.

API::

    params = SynthParams.from_dict(config["synthetic"])   # ValueError names a bad key
    tables = generate(params, seed)                       # 4 trace tables (truth=True adds 2)
    shards = split_shards(tables["task_usage"], "task_usage", n, params.end_us)

Method (the model table by table, its calibration, its known simplifications, the package's modules):
docs/methods.md#synthetic-trace. Imports inside the package are absolute, so that the workflow's
``code_digest("trace.synth")`` follows them to every module. This module re-exports the names used outside the
package (``__all__``). Names with a leading underscore are shared between the package's modules but are not part
of its API; tests that check one import it from its module.
"""

from colocate.trace.synth.draws import inverse_cdf, stratified
from colocate.trace.synth.events import generate, split_shards
from colocate.trace.synth.jobs import sample_model
from colocate.trace.synth.machines import machine_events, sample_machines
from colocate.trace.synth.params import SynthParams

__all__ = [
    "SynthParams",
    "generate",
    "inverse_cdf",
    "machine_events",
    "sample_machines",
    "sample_model",
    "split_shards",
    "stratified",
]
