"""Benchmark: stochastic packing (colocate.scheduling.packing) at the paper's instance size.

References measured in the same run:

* q evaluation of one packing on an instance (N = 1,000 tasks × R = 10,000 realizations, float32)
  against one ``numpy.sum`` pass over the same matrix (target: ≤ 2×);
* one GPA Best Fit packing of the 1,000 tasks (no rebalancing) against a straightforward pure-Python
  Best Fit with the same fit test (``math.erfc``, lists of per-machine sums); both must give the
  same machines;
* peak memory: the process's maximum RSS, and the peak of Python/numpy allocations during one
  evaluation (tracemalloc);
* a projection of the full grid (workflow/schemas/packing.schema.yaml defaults: §5.2–5.6 plus our
  fit tests) at the paper scale (50 instances × 1,000 tasks, R = 10,000) from per-cell times
  measured on one instance, scheduled as the workflow runs it (one job per setting) on ``--cores``.

The synthetic instance has skewed (gamma) per-task usage with means around 0.015 of a machine, so
that av 1 packs 1,000 tasks on about 25–30 machines as in Janus §5.2.

    python bench/packing.py [--tasks 1000] [--realizations 10000] [--instances 50] [--cores 2]
"""

from __future__ import annotations

import argparse
import heapq
import math
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import yaml
from threadpoolctl import threadpool_limits

from colocate.scheduling import fit_tests as ft
from colocate.scheduling import packing as pk
from colocate.scheduling import packing_grid as pg
from timing import best_of, parse_args

REPO = Path(__file__).resolve().parents[1]


def make_instance(n: int, r: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    mean = np.exp(rng.normal(np.log(0.015), 0.9, n)).clip(1e-4, 0.5)
    shape = rng.uniform(0.3, 4.0, n)
    inst = np.empty((n, r), dtype=np.float32)
    avg = np.empty((n, r), dtype=np.float32)
    for i in range(n):  # row by row keeps the float64 temporaries small
        inst[i] = rng.gamma(shape[i], mean[i] / shape[i], r)
        avg[i] = rng.gamma(4 * shape[i], mean[i] / (4 * shape[i]), r)  # 5-min averages vary less
    return inst, avg


def reference_gpa_best_fit(mu: list[float], var: list[float], rho: float, capacity: float) -> list[list[int]]:
    """Janus Algorithm 1 FitBin with Best Fit, in plain Python."""
    bins: list[list[int]] = []
    mus: list[float] = []
    vars_: list[float] = []
    for i, (m_i, v_i) in enumerate(zip(mu, var)):
        best, best_slack = -1, math.inf
        for j in range(len(bins)):
            m = mus[j] + m_i
            s = math.sqrt(vars_[j] + v_i)
            exceed = 0.5 * math.erfc((capacity - m) / (s * math.sqrt(2))) if s > 0 else float(m > capacity)
            slack = rho - exceed
            if 0 <= slack < best_slack:
                best, best_slack = j, slack
        if best < 0:
            bins.append([i])
            mus.append(m_i)
            vars_.append(v_i)
        else:
            bins[best].append(i)
            mus[best] += m_i
            vars_[best] += v_i
    return bins


def default_grid():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "packing.schema.yaml").read_text())["properties"]
    return pg.expand_grid(schema["estimators"]["default"], schema["sections"]["default"]), schema


def lpt_makespan(jobs: list[float], cores: int) -> float:
    """Longest-processing-time-first schedule of independent jobs on ``cores``: its makespan."""
    loads = [0.0] * cores
    for t in sorted(jobs, reverse=True):
        heapq.heapreplace(loads, loads[0] + t)
    return max(loads)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--realizations", type=int, default=10_000)
    ap.add_argument("--instances", type=int, default=50)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--startup", type=float, default=2.0, help="seconds of start-up per job (interpreter, imports)")
    args = parse_args(ap)
    n, r = args.tasks, args.realizations

    t = time.perf_counter()
    inst, avg = make_instance(n, r)
    print(f"instance {n} tasks × {r} realizations, float32 ({inst.nbytes / 2**20:.0f} MiB); made in {time.perf_counter() - t:.1f} s")

    # --- q evaluation vs one numpy.sum pass
    stats = pk.observe(inst)
    packing = pk.pack(ft.GPA(0.01), stats, 1.0, "BF")
    m_norm = pk.lower_bound(stats.mean, 1.0)
    ev = pk.evaluate(packing, inst, 1.0, m_norm)
    with threadpool_limits(1):  # BLAS on one thread, like numpy.sum
        t_sum = best_of(lambda: np.sum(inst), args.repeat)
        t_q = best_of(lambda: pk.evaluate(packing, inst, 1.0, m_norm), args.repeat)
        t_sparse = best_of(lambda: pk.machine_totals(packing.assignment, inst, packing.n_bins, "sparse"), args.repeat)
    print(f"numpy.sum pass            {t_sum * 1e3:7.2f} ms  (reference)")
    print(f"q evaluation ({ev.m_abs} machines) {t_q * 1e3:7.2f} ms  = {t_q / t_sum:.2f}× numpy.sum (target ≤ 2×); q = {ev.q:.4f}")
    print(f"  (machine totals by one sparse product alone: {t_sparse * 1e3:.2f} ms = {t_sparse / t_sum:.2f}×)")

    # --- GPA Best Fit vs pure Python
    mu, var = stats.mean.tolist(), stats.var.tolist()
    for c in (1.0, 0.2):
        t_ref = best_of(lambda: reference_gpa_best_fit(mu, var, 0.01, c), max(3, args.repeat // 4))
        t_bf = best_of(lambda: pk.pack(ft.GPA(0.01), stats, c, "BF", rebalancing=False), args.repeat)
        ours = pk.pack(ft.GPA(0.01), stats, c, "BF", rebalancing=False)
        same = ours.bins == reference_gpa_best_fit(mu, var, 0.01, c)
        print(f"GPA Best Fit c={c:<3g} ({ours.n_bins:3d} machines), pure Python {t_ref * 1e3:7.2f} ms (reference); "
              f"colocate {t_bf * 1e3:7.2f} ms = {t_ref / t_bf:.2f}× the reference's speed; same machines: {same}")

    # --- peak memory
    tracemalloc.start()
    pk.evaluate(packing, inst, 1.0, m_norm)
    _, peak_eval = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"peak allocation of one q evaluation {peak_eval / 2**20:.2f} MiB; process max RSS {rss:.0f} MiB "
          f"(two {inst.nbytes / 2**20:.0f} MiB matrices)")

    # --- grid projection
    cells, schema = default_grid()
    options = {key: schema[key]["default"] for key in ft.FIT_OPTIONS}  # each fit test takes what it declares
    with tempfile.TemporaryDirectory() as tmp:
        big = 5 * n
        path = Path(tmp) / "inst.npy"
        out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(big, r))
        for k in range(5):
            out[k * n : (k + 1) * n] = inst
        out.flush()
        del out
        rows = np.random.default_rng(0).choice(big, n, replace=False)
        t_load = best_of(lambda: pg.load_rows(np.load(path, mmap_mode="r"), rows), 5)
    job_times = []
    cell_times = []
    for setting in pg.settings(cells).iter_rows(named=True):
        group = cells.filter(
            (cells["data"] == setting["data"])
            & (cells["clairvoyance"] == setting["clairvoyance"])
            & (cells["capacity"] == setting["capacity"])
        )
        fits = [
            pg.fit_test(e, p, **options)
            for e, p in zip(group["estimator"], group["parameter"])
        ]
        observed = inst if setting["data"] == "inst" else avg
        t0 = time.perf_counter()
        s = pk.observe(observed, setting["clairvoyance"], ft.required_percentiles(fits))
        t_stats = time.perf_counter() - t0
        t0 = time.perf_counter()
        for fit, row in zip(fits, group.iter_rows(named=True)):
            c0 = time.perf_counter()
            pk.run(inst, fit, setting["capacity"], stats=s, clairvoyance=setting["clairvoyance"],
                   algorithm=row["algorithm"], rebalancing=row["rebalance"], m_norm=m_norm)
            cell_times.append(time.perf_counter() - c0)
        t_cells = time.perf_counter() - t0
        per_instance = 2 * t_load + t_stats + t_cells
        job_times.append(args.startup + args.instances * per_instance)
        print(f"  setting data={setting['data']:4s} clairvoyance={setting['clairvoyance']:<5g} c={setting['capacity']:<3g}: "
              f"{group.height:3d} cells, stats {t_stats * 1e3:6.0f} ms, cells {t_cells * 1e3:6.0f} ms per instance")
    total = sum(job_times)
    makespan = lpt_makespan(job_times, args.cores)
    print(f"per cell (pack + q): median {statistics.median(cell_times) * 1e3:.1f} ms, max {max(cell_times) * 1e3:.1f} ms; "
          f"instance load {t_load * 1e3:.0f} ms per matrix (page cache warm)")
    print(f"grid: {cells.height} cells × {args.instances} instances = {cells.height * args.instances} packings in "
          f"{len(job_times)} jobs; {total:.0f} core-seconds")
    print(f"projected wall time on {args.cores} cores: {makespan / 60:.1f} min (target ≤ 15 min)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
