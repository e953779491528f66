"""The task_usage table of the synthetic trace: one record per task and 5-minute window it runs in.

Per task a mean μ_i; the 5-minute average ("CPU rate", y) is μ_i·M(t)·Z(t)
and the instantaneous sample ("sampled CPU usage", x) is y·S(t) with E[S] = 1
(Janus & Rzadca Fig 1: inst is unbiased), with per-task standard deviations
on Janus §3.3's lines (Fig 3) and S drawn from shape families like Janus
Fig 4's centroids; each task's skewness then follows its CV, so that sums of
N tasks turn Gaussian at Janus Table 1's rate. M(t) holds the production
patterns of Beaumont et al. §5.2 (Table 4) and, for most tasks, short level
shifts (Janus §3.4). The tasks of a large job share their levels and noise
draws (Beaumont §4.3); production jobs spread their workload over their alive
tasks. 1.2% of tasks have zero inst usage and a handful of records have
avg > 1 (Janus §3.1). Memory is flat, two-cluster flat or affine in CPU per
job (Beaumont §4.2).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import polars as pl
from scipy.special import gammaincinv, ndtr, ndtri

from colocate.trace import TRACE_START_US, WINDOW_US
from colocate.trace.synth.draws import _cast, _group_mean, _group_var, _segments
from colocate.trace.synth.jobs import Jobs, Model, Tasks, _std_target, bound_small_cv
from colocate.trace.synth.params import _DAY_US, _HOUR_US, SHAPES, SynthParams


class Records(NamedTuple):
    """The record grid: one row per task and 5-minute window its lifetime touches, in task order."""

    owner: np.ndarray  # task of each row (index into the Tasks columns)
    pos: np.ndarray  # the row's position within its task (0: the task's first window)
    k: np.ndarray  # the row's window since the trace start
    keep: np.ndarray  # the record exists: a terminal failure ends its task in the failure window
    n: int  # number of tasks


class _TaskSets(NamedTuple):
    """Which tasks the per-task statistics are solved over and reshaped (counted on kept records)."""

    n_kept: np.ndarray  # kept records of each task
    fit: np.ndarray  # Janus §3.3's lines are solved over these: long (>= 24 records), not failing, not all-zero
    match: np.ndarray  # CV and skewness are matched for these: >= 12 records, not all-zero
    patterned: np.ndarray  # production tasks, all-zero ones too (zero inst): their job's patterns and noise, off Janus's lines


def usage_records(p: SynthParams, m: Model, rng: np.random.Generator) -> pl.DataFrame:
    """The task_usage table: one record per task and 5-minute window it runs in.

    avg y(t) = μ_i·M_i(t)·Z(t) and inst x(t) = min(y(t)·L2(t)·S'(t), 1) with
    E[Z] = E[S'] = 1 and L2 normalised so that E[x] = E[y] per task (Janus
    Fig 1: inst samples are unbiased). M_i holds the
    production patterns and level shifts; Z's and S's variances put the task's
    stds on its targets (Janus §3.3); S's shape family follows Janus Fig 4.
    Each task's realized coefficients of variation are then matched to its
    targets by a monotone power transform (ranks and zeros are kept), so that
    the per-task sample statistics the analyses compute fall on the lines, and
    its skewness is brought down to a target set by its CV (``inst_skew_by_cv``,
    ``avg_skew_by_cv``) by a monotone reshaping that keeps mean and std.
    Failing tasks' records stop at a terminal failure or move to another
    machine after a re-schedule.

    Steps: the record grid, the modulation M (:func:`_modulation`), the noise
    Z (:func:`_avg_noise`), the avg y (:func:`_avg_values`), the inst x
    (:func:`_inst_values`), then the anomalies of Janus §3.1 and the other
    columns (:func:`_records_frame`). Sets ``avg_std_target`` and
    ``inst_std_target`` of ``m.tasks`` to the realized targets.
    """
    T = m.tasks
    rec = _record_grid(T)
    sets = _task_sets(T, rec)
    cv_y2 = (T["avg_std_target"] / np.maximum(T["mu"], 1e-9)) ** 2
    u = _regime_draws(p, T, rec.owner, rec.pos, rng)
    M = _modulation(p, m.jobs, T, rec, sets, u, cv_y2, m.info.get("trace_span_us"))
    z = _avg_noise(p, m.jobs, T, rec, sets, M, cv_y2, rng)
    y, sy = _avg_values(p, T, rec, sets, T["mu"][rec.owner] * M, z)
    x, sx = _inst_values(p, T, rec, sets, y, u, rng)
    T["avg_std_target"], T["inst_std_target"] = sy, sx
    owner, n, keep = rec.owner, rec.n, rec.keep
    x = np.where(T["all_zero"][owner], 0.0, _quantize(x))
    y = _quantize(y)
    x = _ensure_nonzero(x, y, owner, ~T["all_zero"], n, keep)
    y = _avg_above_one(p, y, owner, T, rng, keep)
    return _records_frame(p, m, owner, rec.k, x, y, keep, rng)


def _record_grid(T: Tasks) -> Records:
    """One row per task and window its lifetime touches, and which rows are records (:func:`_kept_rows`)."""
    n = T["mu"].size
    nrec = (T["k1"] - T["k0"] + 1).astype(np.int64)
    owner, pos = _segments(nrec)
    k = T["k0"][owner] + pos
    return Records(owner=owner, pos=pos, k=k, keep=_kept_rows(T, owner, k), n=n)


def _task_sets(T: Tasks, rec: Records) -> _TaskSets:
    """The tasks the lines are solved over, those reshaped, and the production tasks (Janus §3.1's filters)."""
    n_kept = np.bincount(rec.owner[rec.keep], minlength=rec.n)
    return _TaskSets(
        n_kept=n_kept,
        fit=(n_kept >= 24) & ~T["failing"] & ~T["all_zero"],
        match=(n_kept >= 12) & ~T["all_zero"],
        # an all-zero task of a production job (zero inst) still follows its job in avg, or its Janus-law
        # spikes become the job's noise: a tenth of a 10-task job's total (Beaumont Table 4)
        patterned=T["patterned"],
    )


def _modulation(p: SynthParams, J: Jobs, T: Tasks, rec: Records, sets: _TaskSets, u, cv_y2,
                span_us: int | None = None) -> np.ndarray:
    """Modulation M of each record's avg: production patterns (Beaumont §5.2) times level shifts (Janus §3.4).

    The level shifts exp(σ_L u) take ``level_shift_budget`` of the task's avg
    variance and M has mean 1 per task, except on production tasks: their
    levels show in the inst only, and their job's workload is spread over its
    tasks alive in each window (Beaumont §4.3, :func:`_job_workload_split`).
    Small tasks follow the large jobs' load (:func:`_small_load_factor`).
    """
    owner, k, keep, n = rec.owner, rec.k, rec.keep, rec.n
    prow = sets.patterned[owner]
    M = _job_pattern(p, J, T["job"][owner], k, span_us)
    # a production task's levels show in its 1-s samples only (inst, via L2): its 5-minute average is its job's
    M *= np.exp(np.sqrt(np.log1p(np.minimum(p.level_shift_budget * cv_y2, 8.0)))[owner] * np.where(prow, 0.0, u))
    M /= np.where(prow, 1.0, np.maximum(_group_mean(owner, M, n), 1e-12)[owner])
    M[prow] *= _job_workload_split(T, owner[prow], k[prow], keep[prow])
    M *= _small_load_factor(p, T, owner, k, keep, M)
    return M


def _avg_noise(p: SynthParams, J: Jobs, T: Tasks, rec: Records, sets: _TaskSets, M, cv_y2, rng) -> np.ndarray:
    """Mean-1 noise Z of each record's avg, whose variance tops M's up to the task's avg std target (Janus §3.3).

    The draws of a large job's tasks share a factor per window
    (:func:`_job_uniforms`). Production tasks get their job's patterns times
    its Table 4 noise instead (:func:`_patterned_noise`), kept as drawn (off
    Janus's lines).
    """
    owner, k, n = rec.owner, rec.k, rec.n
    prow = sets.patterned[owner]
    vm = _group_var(owner, M, n)
    cz2 = np.maximum((1 + cv_y2) / (1 + vm) - 1, 0.0)
    z = _mean1_noise(rng, cz2[owner], _job_uniforms(p, T, owner, k, rng))
    # production tasks: their job's patterns times its Table 4 noise, kept as drawn (off Janus's lines)
    z[prow] = _patterned_noise(p, J, T, owner[prow], k[prow], M[prow], rng)
    return z


def _avg_values(p: SynthParams, T: Tasks, rec: Records, sets: _TaskSets, base_y, z) -> tuple[np.ndarray, np.ndarray]:
    """The avg y (CPU rate) of each record from ``base_y`` = μ·M and the noise Z; and each task's avg std target.

    Z is reshaped so that each task's std lands on Janus §3.3's avg line
    against its realized mean (:func:`_match_cv`), then its skewness on a
    target set by its CV (:func:`_reshape_skew`); a running large task's avg
    keeps a floor of ``avg_floor_share`` of its mean.
    """
    owner, keep, n = rec.owner, rec.keep, rec.n
    ok = owner[keep]
    # final std targets on the lines, against each task's realized means (what the analyses regress on);
    # only the noises Z and S' are reshaped, so patterns and levels keep their amplitudes
    my = np.maximum(_group_mean(ok, (base_y * z)[keep], n), 1e-9)
    floor_y = np.sqrt(_group_var(ok, base_y[keep], n))  # patterns and levels alone
    fixed = np.where(sets.patterned, np.sqrt(_group_var(ok, (base_y * z)[keep], n)), np.nan)
    sy = _std_target(p, my, T["eta_avg"], sets.fit, "avg", floor=floor_y, n_records=sets.n_kept, fixed=fixed)
    sy = bound_small_cv(p, T["large"], sy, my)
    free = sets.match & ~sets.patterned
    y = np.minimum(base_y * _match_cv(base_y, z, owner, n, sy / my, free, keep), 1.0)
    # each task's skewness after its CV (busy: peaked, near-idle: spiky), by a monotone per-task reshaping
    y_skew = _skew_target(p.avg_skew_by_cv, sy / my, p.skew_margin)
    y = np.minimum(_reshape_skew(y, owner, n, free, keep, y_skew), 1.0)
    # a running large task's 5-minute average is rarely exactly 0 (2.7% of records in the real sample window): the
    # reshaping's clipped low tail goes to a floor of avg_floor_share of the task's mean instead
    my = np.maximum(_group_mean(ok, y[keep], n), 1e-9)
    y = np.where(T["large"][owner] & ~T["all_zero"][owner], np.maximum(y, p.avg_floor_share * my[owner]), y)
    return y, sy


def _inst_values(p: SynthParams, T: Tasks, rec: Records, sets: _TaskSets, y, u, rng) -> tuple[np.ndarray, np.ndarray]:
    """The inst x (sampled CPU usage) of each record, y·L2·S'; and each task's inst std target.

    L2 follows the task's levels u with ``level_shift_inst_share`` of the
    inst-only variance (:func:`_inst_levels`), S' is per record in the task's
    shape family (Janus Fig 4, :func:`_inst_noise`); S' is then reshaped so
    that the task's std lands on Janus §3.3's inst line, at least 1.02 times
    the avg's CV (Janus Fig 2), and its skewness on a target set by its CV.
    """
    owner, keep, n = rec.owner, rec.keep, rec.n
    ok = owner[keep]
    fit, match, n_kept = sets.fit, sets.match, sets.n_kept
    # inst = y·L2·S': L2 follows the task's levels with a share of the inst-only variance, S' is per record
    my = np.maximum(_group_mean(ok, y[keep], n), 1e-9)
    cvy2 = _group_var(ok, y[keep], n) / my**2
    sx0 = _std_target(p, my, T["eta_inst"], fit, "inst", floor=1.02 * np.sqrt(cvy2) * my, n_records=n_kept)
    cvx2 = (sx0 / my) ** 2
    L2 = _inst_levels(p, y, u, owner, n, keep, cvy2 + p.level_shift_inst_share * np.maximum(cvx2 - cvy2, 0))
    base_x = y * L2
    cvb2 = _group_var(ok, base_x[keep], n) / np.maximum(_group_mean(ok, base_x[keep], n), 1e-9) ** 2
    v_rest = np.maximum((1 + cvx2) / (1 + cvb2) - 1, 0.005)
    s_noise = _inst_noise(rng, v_rest[owner], T["shape"][owner], T["bimodal_low_share"][owner])
    mx = np.maximum(_group_mean(ok, (base_x * s_noise)[keep], n), 1e-9)
    # inst at least as variable as avg: CV_x >= 1.02 CV_y (Janus Fig 2)
    floor_x = np.maximum(1.02 * np.sqrt(cvy2) * mx, np.sqrt(_group_var(ok, base_x[keep], n)))
    sx = _std_target(p, mx, T["eta_inst"], fit, "inst", floor=floor_x, n_records=n_kept)
    x = np.minimum(base_x * _match_cv(base_x, s_noise, owner, n, sx / mx, match, keep), 1.0)
    x = np.minimum(_reshape_skew(x, owner, n, match, keep, _skew_target(p.inst_skew_by_cv, sx / mx, p.skew_margin)), 1.0)
    return x, sx


def _small_load_factor(p: SynthParams, T: Tasks, owner, k, keep, M) -> np.ndarray:
    """Per-record factor on small tasks' usage: the large jobs' load in that window over its mean, 1 on large tasks.

    With few large jobs alive per window (reduced scales), their total CPU
    swings widely; small jobs that follow it keep the large jobs' CPU share
    near ``dominant_cpu_share`` in every window, as Beaumont Table 1 reports
    (min 0.905, std 0.009).
    """
    large = T["large"][owner]
    sel = large & keep
    load = np.bincount(k[sel], weights=(T["mu"][owner] * M)[sel], minlength=p.windows).astype(float)
    mean = load.mean()
    if mean <= 0:
        return np.ones(owner.size)
    r = load / mean
    return np.where(large, 1.0, np.maximum(r[np.minimum(k, p.windows - 1)], 0.05))


def _inst_levels(p: SynthParams, y, u, owner, n, keep, target_cv2) -> np.ndarray:
    """Inst-only level factor L2 = exp(σ₂·u) of non-stationary tasks, normalised so that E[y·L2] = E[y].

    σ₂ starts from ``level_shift_inst_share`` of the inst-only variance and is
    shrunk (three fixed-point steps) so that CV(y·L2)² stays near
    ``target_cv2``: u also drives y's levels, so the two add up more than
    independent factors would.
    """
    ok = owner[keep]
    cvy2 = _group_var(ok, y[keep], n) / np.maximum(_group_mean(ok, y[keep], n), 1e-12) ** 2
    sig = np.sqrt(np.log1p(np.maximum(target_cv2 - cvy2, 0)))
    for _ in range(3):
        L2 = np.exp(sig[owner] * u)
        b = y * L2
        cvb2 = _group_var(ok, b[keep], n) / np.maximum(_group_mean(ok, b[keep], n), 1e-12) ** 2
        excess = cvb2 - cvy2
        want = np.maximum(target_cv2 - cvy2, 0)
        sig = sig * np.sqrt(np.divide(want, excess, out=np.ones(n), where=excess > 1e-12).clip(0, 4))
    L2 = np.exp(sig[owner] * u)
    return L2 * np.divide(_group_mean(ok, y[keep], n), _group_mean(ok, (y * L2)[keep], n), out=np.ones(n),
                          where=_group_mean(ok, (y * L2)[keep], n) > 0)[owner]


def _kept_rows(T: Tasks, owner: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Records that exist: a terminal failure ends the task in its failure window."""
    f = T["failing"][owner] & T["fail_terminal"][owner]
    return ~(f & (k > T["fail_k"][owner]))


def _match_cv(base, v, owner, n, target, select, keep, iters: int = 24) -> np.ndarray:
    """Reshape a noise v (c·v^p per task) so that base·v has coefficient of variation ``target`` over the kept records.

    Only tasks in ``select`` change; c keeps the mean of base·v. p is found by
    bisection on log p in [-4, 3] (p from 0.02 to 20), vectorised over tasks.
    Ranks and zeros of v are kept; targets below what ``base`` alone gives
    end at p ≈ 0.02 (v ≈ constant).
    """
    rows = np.flatnonzero(select[owner] & keep)
    if rows.size == 0:
        return v
    o = owner[rows]
    b = base[rows]
    x = v[rows]
    pos = x > 0
    logx = np.where(pos, np.log(np.where(pos, x, 1.0)), 0.0)
    # normalise by the task's largest value for numerical safety
    mx = np.full(n, -np.inf)
    np.maximum.at(mx, o[pos], logx[pos])
    mx = np.where(np.isfinite(mx), mx, 0.0)
    logx = logx - mx[o]
    cnt = np.maximum(np.bincount(o, minlength=n).astype(float), 1)

    def moments(logp):
        w = np.where(pos, np.exp(np.exp(logp)[o] * logx), 0.0)
        y = b * w
        m1 = np.bincount(o, weights=y, minlength=n) / cnt
        m2 = np.bincount(o, weights=y * y, minlength=n) / cnt
        return np.sqrt(np.maximum(m2 - m1 * m1, 0)) / np.maximum(m1, 1e-300), m1, w

    lo = np.full(n, -4.0)
    hi = np.full(n, 3.0)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        c, _, _ = moments(mid)
        up = c < target
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    _, m1, w = moments(0.5 * (lo + hi))
    old_mean = np.bincount(o, weights=b * x, minlength=n) / cnt
    scale = np.divide(old_mean, m1, out=np.ones(n), where=m1 > 0)
    out = v.copy()
    out[rows] = w * scale[o]
    return out


def _skew_target(table: list, cv: np.ndarray, margin: float) -> np.ndarray:
    """Skewness target of each task: ``table`` [[CV, skewness], ...] interpolated at its CV, at least CV − 1/CV + ``margin``.

    CV − 1/CV is the least skewness a non-negative variable with that CV can
    have (an on/off, two-point distribution).
    """
    c = np.array([r[0] for r in table], dtype=float)
    s = np.array([r[1] for r in table], dtype=float)
    return np.maximum(np.interp(cv, c, s), cv - 1.0 / np.maximum(cv, 1e-9) + margin)


def _reshape_skew(v, owner, n, select, keep, target, iters: int = 14) -> np.ndarray:
    """Lower each selected task's skewness to ``target`` by a monotone (Box-Cox) transform of its positive values.

    The positive values u = v / max_i v go to ((u + 10⁻³)^λ − 1)/λ, with λ in
    [−4, 1] found by bisection (vectorised over tasks; λ ≤ 0 makes a
    left-skewed, peaked shape), then affinely back to the positive part's
    mean and variance and clipped at 0; zeros stay zero. A few affine steps
    then restore the task's mean and std after the clipping. Ranks, time
    order and zeros are kept, so window K-S tests are unchanged. Tasks
    already at or below their target are left alone.
    """
    rows = np.flatnonzero(select[owner] & keep)
    if rows.size == 0:
        return v
    o = owner[rows]
    x = v[rows]
    pos = x > 0
    cnt = np.maximum(np.bincount(o, minlength=n).astype(float), 1.0)
    npos = np.bincount(o, weights=pos, minlength=n)
    mx = np.zeros(n)
    np.maximum.at(mx, o, x)
    logu = np.log(np.where(pos, x / np.maximum(mx[o], 1e-300), 1.0) + 1e-3)
    kp = np.maximum(npos, 1.0)
    mean_p = np.bincount(o, weights=x, minlength=n) / kp
    var_p = np.maximum(np.bincount(o, weights=np.where(pos, x * x, 0.0), minlength=n) / kp - mean_p**2, 0.0)

    def reshaped(lam):
        lt = lam[o]
        safe = np.where(np.abs(lt) < 1e-9, 1e-9, lt)
        g = np.where(pos, np.expm1(safe * logu) / safe, 0.0)  # Box-Cox: increasing in u for every λ
        gm = np.bincount(o, weights=g, minlength=n) / kp
        gv = np.maximum(np.bincount(o, weights=g * g, minlength=n) / kp - gm**2, 1e-300)
        b = np.sqrt(var_p / gv)
        h = np.where(pos, np.maximum(mean_p[o] + b[o] * (g - gm[o]), 0.0), 0.0)
        m1 = np.bincount(o, weights=h, minlength=n) / cnt
        d = h - m1[o]
        m2 = np.bincount(o, weights=d * d, minlength=n) / cnt
        m3 = np.bincount(o, weights=d * d * d, minlength=n) / cnt
        return h, np.divide(m3, m2**1.5, out=np.zeros(n), where=m2 > 1e-30)

    _, skew1 = reshaped(np.ones(n))
    act = (skew1 > target) & (npos >= 3) & (var_p > 0)
    # only the tasks that change take part in the bisection
    sub = act[o]
    rows, x, o, pos, logu = rows[sub], x[sub], o[sub], pos[sub], logu[sub]
    lo = np.full(n, -4.0)
    hi = np.ones(n)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        _, sk = reshaped(mid)
        high = sk > target
        hi = np.where(high, mid, hi)
        lo = np.where(high, lo, mid)
    h, _ = reshaped(np.where(act, 0.5 * (lo + hi), 1.0))
    # clipping at 0 raised the mean and lowered the std: restore both (a few affine fixed-point steps)
    m0 = np.bincount(o, weights=x, minlength=n) / cnt
    s0 = np.sqrt(np.maximum(np.bincount(o, weights=x * x, minlength=n) / cnt - m0**2, 0.0))
    for _ in range(4):
        m1 = np.bincount(o, weights=h, minlength=n) / cnt
        s1 = np.sqrt(np.maximum(np.bincount(o, weights=h * h, minlength=n) / cnt - m1**2, 1e-300))
        b = s0 / s1
        h = np.where(pos, np.maximum(m0[o] + b[o] * (h - m1[o]), 0.0), 0.0)
    out = v.copy()
    out[rows] = h
    return out


def _job_pattern(p: SynthParams, J: Jobs, job: np.ndarray, k: np.ndarray, span_us: int | None = None) -> np.ndarray:
    """Production patterns at the middle of window k (Beaumont §5.2): daily, weekly (5 high, 2 low days), hourly, long term.

    The long-term cosine has the whole trace's period (``span_us``; a slice keeps the 29-day one).
    """
    t = (k.astype(np.float64) + 0.5) * WINDOW_US  # since trace start
    pat = J["patterned"][job]
    if not pat.any():
        return np.ones(k.size)
    out = np.ones(k.size)
    idx = np.flatnonzero(pat)
    jj = job[idx]
    tt = t[idx]
    day = 2 * np.pi * tt / _DAY_US
    val = 1.0 + J["daily_amp"][jj] * np.cos(day - np.radians(J["daily_phase_deg"][jj]))
    # weekly: square wave, 5 high days and 2 low, scaled so its weekly Fourier amplitude is the ratio
    frac_low = len(p.weekend_days) / 7.0
    fundamental = 2 * math.sin(math.pi * frac_low) / math.pi
    weekday = np.floor(tt / _DAY_US).astype(np.int64) % 7
    low = np.isin(weekday, p.weekend_days)
    val += -(J["weekly_amp"][jj] / fundamental) * (low.astype(float) - frac_low)
    val += J["hourly_amp"][jj] * np.cos(2 * np.pi * tt / _HOUR_US + J["hourly_phase"][jj])
    span = span_us or p.windows * WINDOW_US
    val += J["long_term_amp"][jj] * np.cos(2 * np.pi * tt / span + J["long_term_phase"][jj])
    out[idx] = np.maximum(val, 0.02)
    return out


def _regime_draws(p: SynthParams, T: Tasks, owner, pos, rng) -> np.ndarray:
    """Load regimes of non-stationary tasks (Janus §3.4): a standardised level per record, 0 elsewhere.

    A non-stationary task's load level is piecewise constant, with a new
    level after a geometric number of records (mean ``level_shift_records``).
    Each level is a draw u, uniform with mean 0 and variance 1; the avg is
    multiplied by exp(σ_L u) with σ_L taking ``level_shift_budget`` of the
    task's avg variance (so the shifts stay within its std target, Janus
    §3.3), and the inst by a further exp(σ_S u) taking
    ``level_shift_inst_share`` of its inst-only variance.
    """
    ns = T["nonstationary"] & ~T["all_zero"]
    out = np.zeros(owner.size)
    rows = np.flatnonzero(ns[owner])
    if rows.size == 0:
        return out
    first = pos[rows] == 0
    change = (rng.random(rows.size) < 1.0 / p.level_shift_records) | first
    regime = np.cumsum(change) - 1
    out[rows] = rng.uniform(-math.sqrt(3), math.sqrt(3), int(change.sum()))[regime]
    rho = p.job_common_fluctuation
    if rho > 0:
        # the same regime process for every task of a large job, indexed by absolute window: a task's own
        # law is unchanged (geometric regimes, uniform levels), its job's tasks move together (Beaumont §4.3)
        shared = _job_regimes(p, T, owner[rows], (T["k0"][owner] + pos)[rows], rng)
        large = (T["large"] & ~T["patterned"])[owner[rows]]
        out[rows] = np.where(large, math.sqrt(rho) * shared + math.sqrt(1 - rho) * out[rows], out[rows])
    return out


def _job_workload_split(T: Tasks, task: np.ndarray, k: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Per-record factor W̄/W(t) that spreads a job's workload over its tasks alive in window t (Beaumont §4.3, §8).

    W(t) is the sum of the means μ of the job's tasks alive (and kept) in window t and W̄ its mean over
    the job's windows, so the job's total stays μ-weighted at W̄ while tasks end, fail and are replaced.
    """
    out = np.ones(task.size)
    rows = np.flatnonzero(keep)
    if rows.size == 0:
        return out
    slot, _, total = _job_windows(T, task[rows], k[rows])
    W = np.bincount(slot, weights=T["mu"][task[rows]], minlength=total)
    slot_job = np.zeros(total, dtype=np.int64)
    slot_job[slot] = T["job"][task[rows]]
    busy = W > 0
    nj = int(T["job"].max()) + 1
    wbar = np.bincount(slot_job[busy], weights=W[busy], minlength=nj) / np.maximum(
        np.bincount(slot_job[busy], minlength=nj), 1
    )
    out[rows] = wbar[T["job"][task[rows]]] / W[slot]
    return out


def _patterned_noise(p: SynthParams, J: Jobs, T: Tasks, task: np.ndarray, k: np.ndarray, pattern: np.ndarray, rng) -> np.ndarray:
    """Mean-1 noise of production tasks' records: a factor common to the job in each window times the task's own.

    A job with noise ratio ν (Beaumont Table 4, ``noise_ratio_quantiles``) and
    n tasks alive on average gets an own-noise CV d = min(``patterned_task_noise_cv``,
    ν'·√(n/2)) per task and a common CV c = √(ν'² − d²/n), so that its 5-minute
    CPU is its ``pattern`` times a noise of CV ν' (c² + d²/n = ν'²) whatever n,
    while its tasks stay balanced (Beaumont §4.3). ν' = ν / RMS(pattern): the
    residual of pattern × noise has sd ν'·RMS·mean, so Table 4's ratio is ν.
    """
    if task.size == 0:
        return np.ones(0)
    job = T["job"][task]
    slot, _, total = _job_windows(T, task, k)
    _, span = _job_spans(T, task, k)
    nj = span.size
    alive = np.bincount(job, minlength=nj) / np.maximum(span, 1)
    rms = np.sqrt(np.bincount(job, weights=pattern**2, minlength=nj) / np.maximum(np.bincount(job, minlength=nj), 1))
    nu = J["noise_ratio"] / np.maximum(rms, 1e-9)
    d = np.minimum(p.patterned_task_noise_cv, nu * np.sqrt(np.maximum(alive, 1.0) / 2))
    c2 = np.maximum(nu**2 - d**2 / np.maximum(alive, 1.0), 0.0)
    common = _mean1_noise(rng, c2[job], ndtr(rng.standard_normal(total))[slot])
    return common * _mean1_noise(rng, (d**2)[job])


def _job_spans(T: Tasks, task: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per job (indexed by job), the first window of its given records and the number of windows they span (0: none)."""
    job = T["job"][task]
    nj = int(T["job"].max()) + 1 if T["job"].size else 0
    lo = np.full(nj, np.iinfo(np.int64).max)
    hi = np.full(nj, -1)
    np.minimum.at(lo, job, k)
    np.maximum.at(hi, job, k)
    return lo, np.where(hi >= lo, hi - lo + 1, 0)


def _job_windows(T: Tasks, task: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """A flat index of (job, window) over the windows each job's given records span, and each job's first slot."""
    job = T["job"][task]
    lo, span = _job_spans(T, task, k)
    offset = np.concatenate([[0], np.cumsum(span)[:-1]]).astype(np.int64)
    return offset[job] + (k - lo[job]), offset[span > 0], int(span.sum())


def _job_regimes(p: SynthParams, T: Tasks, task: np.ndarray, k: np.ndarray, rng) -> np.ndarray:
    """One regime process per job over the windows its tasks span: levels uniform (mean 0, variance 1), new after
    a geometric number of windows (mean ``level_shift_records``). Returns the level at (task's job, window k)."""
    slot, starts, total = _job_windows(T, task, k)
    start = np.zeros(total, dtype=bool)
    start[starts] = True
    change = (rng.random(total) < 1.0 / p.level_shift_records) | start
    levels = rng.uniform(-math.sqrt(3), math.sqrt(3), int(change.sum()))
    return levels[(np.cumsum(change) - 1)[slot]]


def _job_uniforms(p: SynthParams, T: Tasks, owner: np.ndarray, k: np.ndarray, rng) -> np.ndarray | None:
    """Per-record uniforms for the noise Z: a Gaussian copula with a factor common to the job's tasks in each window
    (weight ``job_common_fluctuation``) on large tasks, independent elsewhere. None when nothing is shared."""
    rho = p.job_common_fluctuation
    if rho <= 0:
        return None
    g = rng.standard_normal(owner.size)
    rows = np.flatnonzero(T["large"][owner])
    slot, _, total = _job_windows(T, owner[rows], k[rows])
    common = rng.standard_normal(total)[slot]
    g[rows] = math.sqrt(rho) * common + math.sqrt(1 - rho) * g[rows]
    return ndtr(g)


def _mean1_noise(rng: np.random.Generator, v: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
    """Positive noise with mean 1 and variance v per draw: gamma (v ≤ 1) or log-normal (v > 1); 1 where v = 0.

    With ``u`` (uniforms, one per draw) the draws are the inverse CDFs at u, so that draws sharing a u move together.
    """
    out = np.ones(v.size)
    g = (v > 1e-8) & (v <= 1.0)
    ln = v > 1.0
    s = np.sqrt(np.log1p(v[ln]))
    if u is None:
        out[g] = rng.gamma(1.0 / v[g], v[g])
        out[ln] = np.exp(s * rng.standard_normal(int(ln.sum())) - 0.5 * s * s)
    else:
        uu = np.clip(u, 1e-12, 1 - 1e-12)
        out[g] = gammaincinv(1.0 / v[g], uu[g]) * v[g]
        out[ln] = np.exp(s * ndtri(uu[ln]) - 0.5 * s * s)
    return out


def _inst_noise(rng: np.random.Generator, v: np.ndarray, shape: np.ndarray, low_share: np.ndarray) -> np.ndarray:
    """Within-window noise S of the inst sample: E[S] = 1, Var[S] = v, in the shape families of Janus Fig 4.

    gamma: exponential-like (v ≈ 1) or peaked (v < 1); zero_inflated: zero with
    probability 1 - π, else gamma — "almost always zero"; bimodal: two levels
    with jitter — "mixed". Infeasible combinations fall back to the nearest family.
    """
    n = v.size
    G, ZI, BI = (SHAPES.index(s) for s in SHAPES)
    shape = shape.copy()
    jitter_v = 1.0 / 16
    two_point_v = (1 + v) / (1 + jitter_v) - 1
    max_two_point = low_share / (1 - low_share)
    shape = np.where((shape == BI) & ((two_point_v <= 0.01) | (two_point_v > max_two_point)), ZI, shape)
    shape = np.where((shape == G) & (v > 2.0), ZI, shape)
    shape = np.where((shape == ZI) & (v <= 0.5), G, shape)
    out = np.empty(n)
    g = shape == G
    out[g] = rng.gamma(1.0 / v[g], v[g])
    zi = shape == ZI
    pi = np.minimum(1.0, 1.5 / (1 + v[zi]))
    inv_k = np.maximum((1 + v[zi]) * pi - 1, 1e-6)
    on = rng.random(int(zi.sum())) < pi
    out[zi] = np.where(on, rng.gamma(1.0 / inv_k, inv_k) / pi, 0.0)
    bi = shape == BI
    pl_ = low_share[bi]
    tp = two_point_v[bi]
    lo = 1 - np.sqrt(tp * (1 - pl_) / pl_)
    hi = 1 + np.sqrt(tp * pl_ / (1 - pl_))
    level = np.where(rng.random(int(bi.sum())) < pl_, lo, hi)
    out[bi] = level * rng.gamma(16.0, 1.0 / 16, int(bi.sum()))
    return out


#: Resolution of the trace's usage values: they are multiples of 2**-20 (9.537e-07).
RESOLUTION = 2.0**-20


def _quantize(v: np.ndarray) -> np.ndarray:
    """Round to the trace's resolution (multiples of 2**-20); NaN stays NaN."""
    return np.rint(v / RESOLUTION) * RESOLUTION


def _ensure_nonzero(x, y, owner, should, n, keep):
    """A task that is not an all-zero task gets at least one non-zero inst sample among its records."""
    mx = np.zeros(n)
    np.maximum.at(mx, owner[keep], x[keep])
    fix = should & (mx <= 0)
    if not fix.any():
        return x
    first = np.cumsum(np.bincount(owner, minlength=n)) - np.bincount(owner, minlength=n)
    rows = first[fix]
    x = x.copy()
    x[rows] = np.where(y[rows] > 0, np.minimum(y[rows], 1.0), RESOLUTION)
    return x


def _avg_above_one(p: SynthParams, y: np.ndarray, owner: np.ndarray, T: Tasks, rng, keep) -> np.ndarray:
    """A few records with avg > 1 (Janus §3.1: measurement errors), on non-failing, non-zero tasks."""
    k = p.avg_above_one_records
    if k == 0:
        return y
    ok = np.flatnonzero((~T["failing"] & ~T["all_zero"])[owner] & keep)
    if ok.size == 0:
        ok = np.arange(y.size)
    rows = rng.choice(ok, size=min(k, ok.size), replace=False)
    y = y.copy()
    y[rows] = rng.uniform(1.0005, 1.25, rows.size)
    return y


def _records_frame(p: SynthParams, m: Model, owner, k, x, y, keep, rng) -> pl.DataFrame:
    """Assemble task_usage rows in window order: times, machines (switching after a re-schedule), memory, other columns."""
    T, J = m.tasks, m.jobs
    n = T["mu"].size
    sel = np.flatnonzero(keep)
    order = sel[np.argsort(k[sel] * n + owner[sel], kind="stable")]
    owner, k, x, y = owner[order], k[order], x[order], y[order]
    ws = TRACE_START_US + k * WINDOW_US
    f = T["failing"][owner]
    fk = T["fail_k"][owner]
    resched = f & ~T["fail_terminal"][owner]
    start = np.where(resched & (k == fk + 1), T["resched_time"][owner], np.maximum(T["a"][owner], ws))
    end = np.where(f & (k == fk), T["fail_time"][owner], np.minimum(T["b"][owner], ws + WINDOW_US))
    mid = np.where(resched & (k > fk), T["machine2"][owner], T["machine"][owner])
    # memory (Beaumont §4.2): intercept + slope * avg CPU, with small noise
    mem = T["mem_intercept"][owner] + T["mem_slope"][owner] * np.minimum(y, 1.0)
    mem = _quantize(np.clip(mem * (1 + T["mem_noise"][owner] * rng.standard_normal(owner.size)), 0.0, 1.0))
    df = pl.DataFrame(
        {
            "start_time": start,
            "end_time": end,
            "job_id": J["job_id"][T["job"]][owner],
            "task_index": T["task_index"][owner],
            "machine_id": m.machines["machine_id"].to_numpy()[mid],
            "cpu_rate": y,
            "canonical_memory_usage": mem,
            **_aux_columns(rng, owner, n, x, y, mem),
            "sampled_cpu_usage": x,
        }
    )
    nullable = ("cycles_per_instruction", "memory_accesses_per_instruction", "maximum_disk_io_time")
    return _cast(df.with_columns([pl.col(c).fill_nan(None) for c in nullable]), "task_usage")


def _aux_columns(rng, owner, n, x, y, mem) -> dict[str, np.ndarray]:
    """The other task_usage columns, with magnitudes of the real trace's first window (task_usage part 0).

    assigned memory ≥ canonical, page caches, disk I/O, maximum CPU rate ≥
    both CPU values, CPI ~1-5 (median 2.6), MAI, sample portion 0, aggregation
    type 0/1 (73% 1), and a few missing CPI/MAI/max disk I/O values. Per-task
    levels are log-normal; per-record noise shares two normal draws.
    """
    R = owner.size
    e1 = rng.standard_normal(R)
    e2 = rng.standard_normal(R)
    u = rng.random(R)

    def per_task(median, sigma):
        return (median * np.exp(sigma * rng.standard_normal(n)))[owner]

    assigned = mem * rng.uniform(1.05, 1.6, n)[owner]
    unmapped = mem * per_task(0.2, 1.0) * np.exp(0.3 * e1)
    total_pc = unmapped + mem * per_task(0.25, 1.0) * np.exp(0.3 * e2)
    max_mem = mem * (1 + 0.03 * np.abs(e2))
    disk_io = per_task(8e-4, 1.5) * np.exp(0.5 * e2)
    local_disk = per_task(4e-5, 1.0) * np.exp(0.05 * e1)
    max_cpu = np.maximum(np.maximum(x, y), np.minimum(y * (1 + per_task(4.0, 0.4) * np.exp(0.4 * e1)), 1.0))
    max_disk = np.where(u < 0.026, np.nan, disk_io * (1 + per_task(20.0, 1.0) * np.exp(0.5 * e1)))
    no_counters = (rng.random(n) < 0.05)[owner]
    cpi = np.where(no_counters, np.nan, per_task(2.6, 0.35) * np.exp(0.12 * e1))
    mai = np.where(no_counters, np.nan, per_task(0.0064, 0.8) * np.exp(0.2 * e2))
    q = _quantize
    return {
        "assigned_memory_usage": q(assigned),
        "unmapped_page_cache": q(unmapped),
        "total_page_cache": q(total_pc),
        "maximum_memory_usage": q(max_mem),
        "disk_io_time": q(disk_io),
        "local_disk_space_usage": q(local_disk),
        "maximum_cpu_rate": q(max_cpu),
        "maximum_disk_io_time": q(max_disk),
        "cycles_per_instruction": cpi,
        "memory_accesses_per_instruction": mai,
        "sample_portion": np.zeros(R),
        "aggregation_type": (rng.random(n) < 0.73).astype(np.int8)[owner],
    }
