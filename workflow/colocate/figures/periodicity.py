"""Figures of Beaumont et al. §5.2 (Fourier periodicity, Table 4) and §8.2 (packing periodic jobs).

The paper prints no figure for either section; these show what its text
states: the spectra and ratios behind Table 4, the synchronised weekly
pattern, the spread of daily peaks, and the machines and overload of the
three packing policies.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import seaborn as sns
from matplotlib.figure import Figure
from scipy import stats

from colocate.figures import style

COMPONENT_LABEL = {"hourly": "hourly", "daily": "daily", "weekly": "weekly", "long_term": "long term", "noise": "noise"}
POLICY_COLOUR = {"peak": "C3", "phasor": "C0", "mean": "C2"}
#: The paper's phase shares (§5.2): half within 60°, 90% within 120°.
PAPER_PHASE = {60.0: 0.5, 120.0: 0.9}


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="0.4", fontsize=9, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def fourier_spectra(
    spectra: pl.DataFrame,
    comps: pl.DataFrame,
    weekly: pl.DataFrame,
    phases: pl.DataFrame,
    significance_ratio: float,
    phase_limits_deg: Sequence[float] = (60.0, 120.0),
) -> Figure:
    """Beaumont §5.2: (a) amplitude spectra of a few jobs, (b) Table 4's ratios, (c) weekly shape, (d, e) daily phases."""
    style()
    fig = plt.figure(figsize=(15, 8.8))
    gs = fig.add_gridspec(2, 3, width_ratios=[1.25, 1.0, 1.0])
    ax_s = fig.add_subplot(gs[0, :2])
    ax_t = fig.add_subplot(gs[0, 2])
    ax_w = fig.add_subplot(gs[1, 0])
    ax_p = fig.add_subplot(gs[1, 1], projection="polar")
    ax_e = fig.add_subplot(gs[1, 2])
    _spectra_panel(ax_s, spectra, significance_ratio)
    _ratios_panel(ax_t, comps, significance_ratio)
    _weekly_panel(ax_w, weekly)
    _phase_circle_panel(ax_p, phases, phase_limits_deg)
    _phase_deviation_panel(ax_e, phases, phase_limits_deg)
    fig.suptitle("Beaumont et al. §5.2: Fourier components of long-running production jobs (Table 4)", fontsize=12)
    fig.tight_layout()
    return fig


def _spectra_panel(ax, spectra: pl.DataFrame, significance_ratio: float) -> None:
    """(a) The amplitude spectra of a few jobs on log axes, with the 1 h, 1 day and 1 week periods marked."""
    if spectra.height:
        frame = spectra.with_columns(
            (pl.col("job_id").cast(pl.String) + pl.lit(" (daily ") + pl.col("daily_ratio").round(2).cast(pl.String) + ")").alias("job")
        ).to_pandas()
        sns.lineplot(frame, x="period_h", y="ratio", hue="job", ax=ax, lw=0.8, estimator=None)
        for period, label in ((1, "1 h"), (24, "1 day"), (168, "1 week")):
            ax.axvline(period, color="0.5", ls=":", lw=0.8)
            ax.text(period, 1.0, label, transform=ax.get_xaxis_transform(), ha="center", va="bottom", fontsize=8)
        ax.axhline(significance_ratio, color="C3", ls="--", lw=0.8, label=f"significance {significance_ratio:g}")
        ax.set(xscale="log", yscale="log", xlabel="period (hours)", ylabel="amplitude / mean")
        ratio = spectra["ratio"].drop_nulls().to_numpy()
        if (ratio > 0).any():  # a log axis down to the noise floor, not to a stray near-zero bin
            ax.set_ylim(bottom=max(float(ratio[ratio > 0].min()), 1e-5))
        ax.legend(fontsize=7, loc="lower right", title="job (daily ratio)", title_fontsize=7)
    else:
        _empty(ax, "no long-running jobs")
    ax.set_title("(a) amplitude spectra (DFT of the whole trace)", fontsize=10, pad=14)


def _ratios_panel(ax, comps: pl.DataFrame, significance_ratio: float) -> None:
    """(b) Table 4's ratios per component: boxes with the jobs as dots, and the significance line."""
    cols = [c for c in COMPONENT_LABEL if comps.height and comps[f"{c}_ratio"].drop_nulls().len()]
    if cols:
        long = pl.concat(
            [comps.select(pl.lit(COMPONENT_LABEL[c]).alias("component"), pl.col(f"{c}_ratio").alias("ratio")) for c in cols]
        ).drop_nulls().filter(pl.col("ratio") > 0)
        order = [COMPONENT_LABEL[c] for c in cols]
        sns.boxplot(long.to_pandas(), x="component", y="ratio", order=order, ax=ax, color="#cfe0f0", showfliers=False)
        first = len(ax.collections)
        sns.stripplot(long.to_pandas(), x="component", y="ratio", order=order, ax=ax, size=3, color="0.25", jitter=False)
        _jitter_strips(ax.collections[first:], 0.2)
        ax.axhline(significance_ratio, color="C3", ls="--", lw=0.8)
        ax.set(yscale="log", xlabel="", ylabel="amplitude / mean")
    else:
        _empty(ax, "no ratios")
    ax.set_title(f"(b) Table 4 ratios of {comps.height} jobs\n(dashed: significance {significance_ratio:g})", fontsize=10)


def _jitter_strips(strips, half_width: float, seed: int = 0) -> None:
    """Spread each strip's dots along the category axis by a seeded uniform draw in ±``half_width``.

    seaborn's own ``jitter`` draws from numpy's global generator, so two renderings would differ.
    """
    rng = np.random.default_rng(seed)
    for points in strips:
        xy = points.get_offsets()
        if len(xy) > 1:  # seaborn leaves a single dot on its category too
            xy[:, 0] += rng.uniform(-half_width, half_width, len(xy))
            points.set_offsets(xy)


def _weekly_panel(ax, weekly: pl.DataFrame) -> None:
    """(c) Each job's mean CPU per day of the week over its mean, coloured by whether its weekly pattern is significant."""
    if weekly.height:
        days = [f"day_{d}" for d in range(7)]
        w = weekly.unpivot(index=["job_id", "weekly_significant"], on=days, variable_name="day", value_name="level").with_columns(
            pl.col("day").str.slice(4).cast(pl.Int32),
            pl.when(pl.col("weekly_significant")).then(pl.lit("significant")).otherwise(pl.lit("not significant")).alias("weekly"),
        )
        sns.lineplot(w.to_pandas(), x="day", y="level", units="job_id", estimator=None, hue="weekly",
                     hue_order=["significant", "not significant"], palette=["C0", "0.7"], lw=0.9, ax=ax)
        ax.axhline(1.0, color="0.4", lw=0.6)
        ax.set(xlabel="day since the trace start (mod 7)", ylabel="mean CPU / job mean", xticks=range(7))
        ax.legend(fontsize=7, title="weekly pattern", title_fontsize=7)
    else:
        _empty(ax, "the trace holds no whole week")
    ax.set_title("(c) weekly shape: 5 high days, 2 low", fontsize=10)


def _phase_circle_panel(ax, phases: pl.DataFrame, phase_limits_deg: Sequence[float]) -> None:
    """(d) Daily peak phases on the day's circle (radius: daily ratio), with the circular mean and the limits around it."""
    if phases.height:
        theta = np.radians(phases["daily_phase_deg"].to_numpy())
        sns.scatterplot(x=theta, y=phases["daily_ratio"].to_numpy(), ax=ax, s=18, color="C0")
        centre = stats.circmean(theta)  # the reference of the deviations (colocate.analysis.periodicity.daily_phases)
        ax.plot([centre, centre], [0, float(phases["daily_ratio"].max())], color="C3", lw=1.2)
        for lim in phase_limits_deg:
            for s in (-1, 1):
                ax.plot([centre + s * np.radians(lim)] * 2, [0, float(phases["daily_ratio"].max())], color="C3", lw=0.6, ls=":")
        ax.set_xticks(np.radians(np.arange(0, 360, 45)), [f"{h:g} h" for h in np.arange(0, 24, 3)])
        ax.tick_params(labelsize=7)
    else:
        _empty(ax, "no job with a daily pattern")
    ax.set_title("(d) daily peak phase (angle, hours since the trace start)\nand daily ratio (radius); red: circular mean",
                 fontsize=10, pad=12)


def _phase_deviation_panel(ax, phases: pl.DataFrame, phase_limits_deg: Sequence[float]) -> None:
    """(e) ECDF of the daily phase deviations, with the paper's shares within 60° and 120°."""
    if phases.height:
        sns.ecdfplot(phases.to_pandas(), x="deviation_deg", ax=ax, color="C0", label="ours")
        for lim in phase_limits_deg:
            ax.axvline(lim, color="0.5", ls=":", lw=0.8)
            if float(lim) in PAPER_PHASE:
                ax.plot([lim], [PAPER_PHASE[float(lim)]], "o", color="C3", label="paper" if lim == phase_limits_deg[0] else None)
        ax.set(xlim=(0, 180), xticks=range(0, 181, 30), xlabel="|phase − circular mean| (degrees)", ylabel="share of jobs")
        ax.legend(fontsize=8, loc="lower right")
    else:
        _empty(ax, "no job with a daily pattern")
    ax.set_title(f"(e) daily phase deviation, {phases.height} jobs\n(paper: 0.5 within 60°, 0.9 within 120°)", fontsize=10)


def periodic_packing(table: pl.DataFrame, loads: pl.DataFrame, capacity_unit: str = "normalised CPU") -> Figure:
    """Beaumont §8.2: machines used and overload of First Fit under the peak, phasor and mean constraints, for machine
    capacities in ``capacity_unit``."""
    style()
    caps = sorted(set(table["capacity"].to_list())) if table.height else []
    n_bottom = max(len(caps), 1)
    fig = plt.figure(figsize=(max(11, 3.8 * n_bottom), 7.6))
    gs = fig.add_gridspec(2, 2 * n_bottom)
    ax_m = fig.add_subplot(gs[0, :n_bottom])
    ax_o = fig.add_subplot(gs[0, n_bottom:])
    order = ["peak", "phasor", "mean"]
    palette = [POLICY_COLOUR[p] for p in order]
    if table.height:
        t = table.with_columns(pl.col("capacity").cast(pl.String)).to_pandas()
        sns.barplot(t, x="capacity", y="machines", hue="policy", hue_order=order, palette=palette, ax=ax_m)
        lb = table.group_by("capacity", maintain_order=True).agg(pl.col("lower_bound").first()).sort("capacity")
        for i, r in enumerate(lb.iter_rows(named=True)):
            ax_m.hlines(r["lower_bound"], i - 0.4, i + 0.4, color="0.2", ls="--", lw=1, label="⌈Σc/C⌉" if i == 0 else None)
        ax_m.legend(fontsize=8)
        ax_m.set(xlabel=f"machine capacity C ({capacity_unit})", ylabel="machines used")
        sns.barplot(t, x="capacity", y="overload_share", hue="policy", hue_order=order, palette=palette, ax=ax_o)
        ax_o.set(xlabel=f"machine capacity C ({capacity_unit})", ylabel="share of machine-windows above C")
    else:
        _empty(ax_m, "no long-running jobs to pack")
        _empty(ax_o, "no long-running jobs to pack")
    ax_m.set_title("(a) machines used by First Fit Decreasing", fontsize=10)
    ax_o.set_title("(b) overload on the actual 5-minute CPU series", fontsize=10)
    for i, cap in enumerate(caps or [None]):
        ax = fig.add_subplot(gs[1, 2 * i : 2 * i + 2])
        sub = loads.filter(pl.col("capacity") == cap) if cap is not None and loads.height else loads.clear()
        if sub.height:
            sns.ecdfplot(sub.to_pandas(), x="load_ratio", hue="policy", hue_order=order, palette=palette, ax=ax)
            ax.axvline(1.0, color="0.2", ls="--", lw=0.8)
            ax.set(xlabel="machine load / C (5-minute windows)", ylabel="share of machine-windows")
        else:
            _empty(ax, "no machine loads")
        ax.set_title(f"({chr(ord('c') + i)}) load distribution, C = {cap:g}" if cap is not None else "(c) load distribution",
                     fontsize=10)
    fig.suptitle("Beaumont et al. §8.2: packing periodic jobs — exact phasor constraint Σc + ‖Σv‖ ≤ C vs peak and mean",
                 fontsize=12)
    fig.tight_layout()
    return fig
