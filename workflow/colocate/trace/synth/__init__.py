"""A synthetic Google cluster trace 2011: a workload model calibrated to the papers.

Beaumont et al. (2015) §7 ask for "a complete generating model" of the trace;
this package is one, built from the numbers the four papers publish. It is a
pure library: :func:`generate` takes :class:`SynthParams` and a seed and
returns polars DataFrames with exactly the trace's columns
(:mod:`colocate.trace`); it never reads config files or paths.

The model, table by table (every number is a field of :class:`SynthParams`):

* **machines** (``machine_events``) — capacities in the proportions of Reiss
  et al. (SoCC'12, Table 1); independent Poisson removals (Beaumont §6),
  maintenance bursts shaped like Beaumont §6's removal histogram, the three
  outstanding mass-removal events of §6, and removal durations after Fig 7.
* **jobs** — two populations. *Large* jobs, in the priority classes of
  Beaumont §1.1, have a mean total CPU and memory drawn from the log-normal
  (mixtures) of Beaumont Table 2 and durations from Table 3; production jobs
  carry the daily/weekly/hourly/long-term patterns of Table 4 with the phase
  spread of §5.2. *Small* jobs (1–few short tasks, tiny CPU) fill the trace
  so that per 5-minute window the large jobs are about 6% of the alive jobs
  and carry about 95% of the CPU (Beaumont Table 1), and so that 95% of the
  tasks are shorter than 2 hours (Janus & Rzadca §3.1).
* **tasks** (``task_events``) — SUBMIT/SCHEDULE/FINISH with requests that
  are a multiple of usage; a share of *failing* tasks carry EVICT/FAIL/KILL/
  LOST events, some re-submitted on another machine (Janus §3.1).
* **usage** (``task_usage``) — per task a mean μ_i; the 5-minute average
  ("CPU rate", y) is μ_i·M(t)·Z(t) and the instantaneous sample ("sampled CPU
  usage", x) is y·S(t) with E[S] = 1 (Janus Fig 1: inst is unbiased), with
  per-task standard deviations on Janus §3.3's lines (Fig 3) and S drawn from
  shape families like Janus Fig 4's centroids; each task's skewness then
  follows its CV (busy tasks peaked with a tail towards idle, near-idle ones
  spiky), so that sums of N tasks turn Gaussian at Janus Table 1's rate.
  M(t) holds the production patterns and, for most tasks, short level shifts
  (Janus §3.4: the K-S test rejects time invariance for ~30% of long tasks,
  alike for windows of 12, 24 and 36 records). The tasks of a large job share
  their levels and noise draws (``job_common_fluctuation``: each task keeps its
  own law, the job's tasks move together, Beaumont §4.3). Production jobs are
  the exception: their workload (patterns times a noise of Table 4's ratio,
  ``noise_ratio_quantiles``) is spread over the tasks alive in each window,
  each task adding a small noise of its own (``patterned_task_noise_cv``), and
  their level shifts show in the 1-s samples only. 1.2% of tasks have zero
  inst usage and a handful of records have avg > 1 (Janus §3.1). Memory is
  flat, two-cluster flat or affine in CPU per job (Beaumont §4.2).

Each task's realized coefficients of variation are matched to targets on
Janus's lines by reshaping only its noise (a monotone power transform), and
the lines are solved over the long, non-failing tasks, so the statistics the
analyses compute land on the published values at any scale.

API::

    params = SynthParams.from_dict(config["synthetic"])   # ValueError names a bad key
    tables = generate(params, seed)                       # 4 trace tables (truth=True adds 2)
    shards = split_shards(tables["task_usage"], "task_usage", n, params.end_us)

Known simplifications: tasks keep running on a machine while it is removed;
job events have no EVICT; jobs' weekly lows fall on trace days 5-6 (mod 7).

The package, by job (imports inside it are absolute, so that the workflow's
``code_digest("trace.synth")`` follows them to every module):

* :mod:`~colocate.trace.synth.params` — :class:`SynthParams`, its defaults and validation;
* :mod:`~colocate.trace.synth.draws` — shared helpers: generators, inverse CDFs, per-owner statistics;
* :mod:`~colocate.trace.synth.machines` — machines and ``machine_events`` (Reiss Table 1, Beaumont §6);
* :mod:`~colocate.trace.synth.jobs` — jobs and tasks, sampled into a model (:func:`sample_model`);
* :mod:`~colocate.trace.synth.usage` — ``task_usage`` records (Janus §3.3-3.4, Beaumont §4-5);
* :mod:`~colocate.trace.synth.events` — ``job_events``, ``task_events``, :func:`generate`, :func:`split_shards`.

This module re-exports the names used outside the package (``__all__``).
Names with a leading underscore are shared between the package's modules but
are not part of its API; tests that check one import it from its module.
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
