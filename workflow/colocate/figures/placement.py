"""Figures of Tantawi & Steinder, "Autonomic cloud placement of mixed workload" (Figs 1–4), and beyond.

Each function takes simulator logs (see :func:`colocate.scheduling.placement.simulate`) and returns a Figure.
The x axis of the time plots is the pod (request) number, as the paper's phases are counted in pods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.figure import Figure

from colocate.figures import style

RESOURCE_COLOURS = {"cpu": "C0", "memory": "C2", "gpu": "C3"}
PHASE_NAMES = ("I", "II", "III", "IV", "V", "VI")


def _colour(resource: str, i: int) -> str:
    return RESOURCE_COLOURS.get(resource, f"C{i + 4}")


def _label(resource: str) -> str:
    return {"cpu": "CPU", "gpu": "GPU", "memory": "Memory"}.get(resource, resource)


def _phases(ax, requests: pl.DataFrame) -> None:
    """Dashed lines at the phase boundaries and the phase numerals on top."""
    bounds = requests.group_by("phase", maintain_order=True).agg(pl.col("request").min().alias("a"), pl.col("request").max().alias("b"))
    for i, (a, b) in enumerate(zip(bounds["a"], bounds["b"])):
        if i:
            ax.axvline(a + 1, color="0.4", ls="--", lw=0.8)
        ax.text((a + b) / 2 + 1, 1.0, PHASE_NAMES[i] if i < len(PHASE_NAMES) else str(i + 1),
                transform=ax.get_xaxis_transform(), ha="center", va="bottom", fontsize=9)


def fig1_load_trajectory(requests: pl.DataFrame, resources: Sequence[str], offered: np.ndarray | None = None) -> Figure:
    """Fig. 1 "Load trajectory": average utilisation of each resource over the pods, phases marked.

    ``offered`` (phases × R) draws the offered load of each phase as thin steps.
    """
    style()
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    pod = requests["request"].to_numpy() + 1
    for i, r in enumerate(resources):
        ax.plot(pod, requests[f"mu_{r}"].to_numpy(), color=_colour(r, i), lw=1.2, label=_label(r))
    if offered is not None:
        offered = np.asarray(offered)
        ph = requests["phase"].to_numpy()
        for i, r in enumerate(resources):
            ax.plot(pod, offered[ph - 1, i], color=_colour(r, i), lw=0.8, ls=":", alpha=0.9)
        ax.plot([], [], color="0.3", ls=":", lw=0.8, label="offered load")
    _phases(ax, requests)
    ax.set(xlabel="pod", ylabel="average utilization", ylim=(0, 1), xlim=(0, pod.max() + 1))
    ax.set_title("Load trajectory", pad=16)
    ax.legend(loc="upper left", ncols=2, frameon=True)
    return fig


def fig2_stdev(requests: pl.DataFrame, resources: Sequence[str], policies: Sequence[str]) -> Figure:
    """Fig. 2 "Standard deviation of cluster utilization": σ across nodes per resource, one panel per policy."""
    style()
    n = len(policies)
    cols = 2 if n > 1 else 1
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.0 * rows), sharex=True, sharey=True, squeeze=False)
    top = max(float(requests.select(pl.max_horizontal(*(pl.col(f"sd_{r}").max() for r in resources))).item()), 0.05)
    for ax, policy in zip(axes.flat, policies):
        g = requests.filter(pl.col("policy") == policy)
        pod = g["request"].to_numpy() + 1
        for i, r in enumerate(resources):
            ax.plot(pod, g[f"sd_{r}"].to_numpy(), color=_colour(r, i), lw=1.0, label=_label(r))
        _phases(ax, g)
        ax.set_title(policy, pad=14)
        ax.set_ylim(0, top * 1.05)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("pod")
    for ax in axes[:, 0]:
        ax.set_ylabel("StDev of utilization")
    # one legend below the panels: inside a panel it covers the curves (PACK's rise to 0.5 at the top left)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.suptitle("Standard deviation of cluster utilization")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncols=len(resources), frameon=False)
    return fig


def fig3_snapshot(snapshots: Mapping[str, np.ndarray], resources: Sequence[str], pod: int) -> Figure:
    """Fig. 3 "Snapshot at 0.70 GPU utilization": node utilisations, nodes sorted by GPU, CPU, memory.

    ``snapshots`` maps policy → N × R utilisation already sorted (see ``placement_analysis.sort_snapshot``).
    """
    style()
    n = len(snapshots)
    cols = 2 if n > 1 else 1
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.6 * cols, 2.9 * rows), sharey=True, squeeze=False)
    width = 0.8 / len(resources)
    for ax, (policy, util) in zip(axes.flat, snapshots.items()):
        x = np.arange(util.shape[0])
        for i, r in enumerate(resources):
            ax.bar(x + (i - (len(resources) - 1) / 2) * width, util[:, i], width, color=_colour(r, i), label=_label(r))
        title = f"{policy} (GPU {util[:, list(resources).index('gpu')].mean():.2f})" if "gpu" in resources else policy
        ax.set(title=title, ylim=(0, 1.02), xlim=(-0.6, util.shape[0] - 0.4))
        ax.set_xticks(x[:: max(1, util.shape[0] // 8)])
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("node (sorted by " + ", ".join(_label(r) for r in ("gpu", "cpu", "memory") if r in resources) + ")")
    for ax in axes[:, 0]:
        ax.set_ylabel("utilization")
    axes.flat[0].legend(loc="upper left", ncols=len(resources), fontsize=8)
    gpu = [float(u[:, list(resources).index("gpu")].mean()) for u in snapshots.values()] if "gpu" in resources else []
    level = f" {np.median(gpu):.2f} GPU utilization" if gpu else ""  # the paper's title names its level (0.70)
    fig.suptitle(f"Snapshot at{level} (placement of pod {pod})")
    fig.tight_layout()
    return fig


def fig4_error(requests: pl.DataFrame, resource: str = "gpu", warmup: int = 0) -> Figure:
    """Fig. 4 "Error measure" for ABP: (a) γ^dem, γ^sys and the GPU utilisation over the pods;
    (b) |γ^dem − γ^sys| against the GPU utilisation. From the end of the warm-up (γ^sys of a nearly
    empty cluster is large and meaningless)."""
    style()
    requests = requests.filter(pl.col("request") >= warmup)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.9), gridspec_kw={"width_ratios": [1.5, 1]})
    pod = requests["request"].to_numpy() + 1
    gd, gs = requests["gamma_dem"].to_numpy(), requests["gamma_sys"].to_numpy()
    util = requests[f"mu_{resource}"].to_numpy()
    a.plot(pod, gd, color="C1", lw=1.1, label=r"$\gamma^{dem}(t)$")
    a.plot(pod, gs, color="C0", lw=1.0, label=r"$\gamma^{sys}(n)$")
    a.plot(pod, util, color=_colour(resource, 0), lw=1.0, ls="--", label=f"{_label(resource)} utilization")
    _phases(a, requests)
    a.set(xlabel="pod", ylabel="value", xlim=(0, pod.max() + 1))
    a.set_title("(a) Deviation in coefficient of variation", pad=16)
    a.legend(loc="upper left", fontsize=8)
    phase = requests["phase"].to_numpy()
    for p in np.unique(phase):
        m = phase == p
        b.scatter(util[m], np.abs(gd[m] - gs[m]), s=5, alpha=0.5, label=f"phase {PHASE_NAMES[p - 1] if p <= len(PHASE_NAMES) else p}")
    b.set(xlabel=f"{_label(resource)} utilization", ylabel=r"$|\gamma^{dem}(t) - \gamma^{sys}(n)|$")
    b.set_title("(b) Deviation as a function of utilization")
    b.legend(loc="upper left", fontsize=8, markerscale=3)
    fig.suptitle("Error measure (ABP)")
    fig.tight_layout()
    return fig


def fig_replicates(metrics: pl.DataFrame, ci: pl.DataFrame, policies: Sequence[str], paper: Mapping[str, float] | None = None) -> Figure:
    """Beyond the paper: % reject per replicate (dots), mean and 95% CI (bars), the paper's single run (×)."""
    style()
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    m = metrics.filter(pl.col("metric") == "reject_pct")
    c = ci.filter(pl.col("metric") == "reject_pct")
    rng = np.random.default_rng(0)  # horizontal jitter of the dots only
    for i, p in enumerate(policies):
        v = m.filter(pl.col("policy") == p)["value"].to_numpy()
        ax.scatter(i + rng.uniform(-0.15, 0.15, v.size), v, s=12, color="0.55", zorder=2)
        row = c.filter(pl.col("policy") == p)
        if row.height:
            mean, lo, hi = row["mean"][0], row["ci_low"][0], row["ci_high"][0]
            ax.errorbar(i + 0.3, mean, yerr=[[mean - lo], [hi - mean]], fmt="o", color=f"C{i}", capsize=4, zorder=3,
                        label="mean, 95% CI" if i == 0 else None)
        if paper and p in paper:
            ax.scatter(i + 0.3, paper[p], marker="x", s=50, color="k", zorder=4, label="paper (one run)" if i == 0 else None)
    ax.set_xticks(range(len(policies)), policies)
    ax.set(ylabel="% rejected", ylim=(0, None))
    ax.set_title(f"Rejections over {m['replicate'].n_unique()} replicates")
    ax.legend(loc="upper left")
    return fig


def fig_trace(requests: pl.DataFrame, policies: Sequence[str], resources: Sequence[str] = ("cpu", "memory"), warmup: int = 0) -> Figure:
    """Beyond the paper: the trace-driven run — average utilisation and its StDev across nodes over the
    requests per policy, and the rejection percentage."""
    style()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), gridspec_kw={"width_ratios": [1.4, 1.4, 0.8]})
    post = requests.filter(pl.col("request") >= warmup)
    for k, (col, title) in enumerate((("mu", "Average utilization"), ("sd", "StDev of utilization"))):
        ax = axes[k]
        for i, p in enumerate(policies):
            g = post.filter(pl.col("policy") == p)
            for j, r in enumerate(resources):
                ax.plot(g["request"].to_numpy() + 1, g[f"{col}_{r}"].to_numpy(), color=f"C{i}", lw=0.9,
                        ls="-" if j == 0 else "--", label=f"{p} {_label(r)}")
        ax.set(xlabel="request", title=title, ylim=(0, None))
    axes[1].legend(fontsize=7, ncols=2, loc="upper right")
    rej = post.group_by("policy").agg((100 * (~pl.col("accepted")).mean()).alias("pct"))
    pct = [float(rej.filter(pl.col("policy") == p)["pct"][0]) for p in policies]
    axes[2].bar(range(len(policies)), pct, color=[f"C{i}" for i in range(len(policies))])
    axes[2].set_xticks(range(len(policies)), policies, rotation=30)
    axes[2].set(ylabel="% rejected", title="Rejections")
    fig.suptitle("Trace-driven placement (CPU, memory)")
    fig.tight_layout()
    return fig
